//===- Json.h - the little JSON the runtime reads and writes ---*- C++ -*-===//
//
// Manifests are JSON so that Python (bench/) reads them with its standard
// library. The runtime is built where no LLVM exists, so it carries this
// small reader and writer instead of llvm::json.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_RUNTIME_JSON_H
#define KILN_BACKENDS_RUNTIME_JSON_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln::json {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object; // keeps key order

  static Value num(double v) {
    Value x;
    x.kind = Number;
    x.number = v;
    return x;
  }
  static Value flag(bool v) {
    Value x;
    x.kind = Bool;
    x.boolean = v;
    return x;
  }
  static Value str(std::string s) {
    Value x;
    x.kind = String;
    x.string = std::move(s);
    return x;
  }
  static Value arr(std::vector<Value> a = {}) {
    Value x;
    x.kind = Array;
    x.array = std::move(a);
    return x;
  }
  /// An array of integers (a shape, a box, launch arguments).
  static Value nums(const std::vector<int64_t> &v) {
    Value x = arr();
    for (int64_t n : v)
      x.array.push_back(num((double)n));
    return x;
  }
  static Value obj() {
    Value x;
    x.kind = Object;
    return x;
  }

  /// Member `key` of an object, or null.
  const Value *get(const std::string &key) const;
  Value &set(const std::string &key, Value v);
  int64_t asInt() const { return (int64_t)number; }
};

/// Parses `text`; on error returns false with "line L, column C: what".
bool parse(const std::string &text, Value &out, std::string &error);
/// Reads and parses manifest file `path`; errors name it ("cannot read
/// manifest 'P'", "P: line L, column C: what").
bool parseFile(const std::string &path, Value &out, std::string &error);
/// Pretty-prints with two-space indents and a trailing newline.
std::string print(const Value &v);

} // namespace kiln::json

#endif
