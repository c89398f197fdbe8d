//===- Json.cpp - the little JSON the runtime reads and writes ------------===//
#include "backends/runtime/Json.h"

#include <fstream>
#include <sstream>

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace kiln::json;

const Value *Value::get(const std::string &key) const {
  for (auto &[k, v] : object)
    if (k == key)
      return &v;
  return nullptr;
}

Value &Value::set(const std::string &key, Value v) {
  for (auto &[k, old] : object)
    if (k == key)
      return old = std::move(v);
  object.emplace_back(key, std::move(v));
  return object.back().second;
}

namespace {
struct Parser {
  explicit Parser(const std::string &s) : s(s) {}
  const std::string &s;
  size_t i = 0;
  std::string error;

  bool fail(const std::string &what) {
    int line = 1, col = 1;
    for (size_t k = 0; k < i && k < s.size(); ++k, ++col)
      if (s[k] == '\n')
        ++line, col = 0;
    error = "line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what;
    return false;
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
      ++i;
  }
  bool lit(const char *w) {
    size_t n = std::char_traits<char>::length(w);
    if (s.compare(i, n, w) != 0)
      return false;
    i += n;
    return true;
  }
  bool str(std::string &out) {
    if (s[i] != '"')
      return fail("expected a string");
    for (++i; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] == '\\') {
        if (++i >= s.size())
          break;
        char c = s[i];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
      } else {
        out += s[i];
      }
    }
    if (i >= s.size())
      return fail("unterminated string");
    ++i;
    return true;
  }
  bool value(Value &v) {
    ws();
    if (i >= s.size())
      return fail("unexpected end of input");
    char c = s[i];
    if (c == '{') {
      v = Value::obj();
      ++i;
      ws();
      if (s[i] == '}')
        return ++i, true;
      while (true) {
        ws();
        std::string key;
        if (!str(key))
          return false;
        ws();
        if (s[i] != ':')
          return fail("expected ':'");
        ++i;
        Value member;
        if (!value(member))
          return false;
        v.object.emplace_back(key, std::move(member));
        ws();
        if (s[i] == ',') {
          ++i;
          continue;
        }
        if (s[i] == '}') {
          ++i;
          return true;
        }
        return fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v = Value::arr();
      ++i;
      ws();
      if (s[i] == ']')
        return ++i, true;
      while (true) {
        Value e;
        if (!value(e))
          return false;
        v.array.push_back(std::move(e));
        ws();
        if (s[i] == ',') {
          ++i;
          continue;
        }
        if (s[i] == ']') {
          ++i;
          return true;
        }
        return fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.kind = Value::String;
      return str(v.string);
    }
    if (lit("true")) {
      v.kind = Value::Bool;
      v.boolean = true;
      return true;
    }
    if (lit("false")) {
      v.kind = Value::Bool;
      return true;
    }
    if (lit("null")) {
      v.kind = Value::Null;
      return true;
    }
    char *end = nullptr;
    double d = std::strtod(s.c_str() + i, &end);
    if (end == s.c_str() + i)
      return fail("unexpected character '" + std::string(1, c) + "'");
    i = end - s.c_str();
    v = Value::num(d);
    return true;
  }
};

void printTo(const Value &v, std::string &out, int indent) {
  std::string pad(indent + 2, ' ');
  switch (v.kind) {
  case Value::Null:
    out += "null";
    break;
  case Value::Bool:
    out += v.boolean ? "true" : "false";
    break;
  case Value::Number: {
    char buf[32];
    if (v.number == std::floor(v.number) && std::fabs(v.number) < 1e15)
      std::snprintf(buf, sizeof buf, "%lld", (long long)v.number);
    else
      std::snprintf(buf, sizeof buf, "%.17g", v.number);
    out += buf;
    break;
  }
  case Value::String:
    out += '"';
    for (char c : v.string)
      out += c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
    out += '"';
    break;
  case Value::Array: {
    // Arrays of scalars stay on one line.
    bool flat = true;
    for (auto &e : v.array)
      flat &= e.kind != Value::Array && e.kind != Value::Object;
    out += '[';
    for (size_t k = 0; k < v.array.size(); ++k) {
      out += k ? (flat ? ", " : ",\n" + pad) : (flat ? "" : "\n" + pad);
      printTo(v.array[k], out, indent + 2);
    }
    out += flat || v.array.empty() ? "]" : "\n" + std::string(indent, ' ') + "]";
    break;
  }
  case Value::Object:
    out += '{';
    for (size_t k = 0; k < v.object.size(); ++k) {
      out += (k ? ",\n" : "\n") + pad + "\"" + v.object[k].first + "\": ";
      printTo(v.object[k].second, out, indent + 2);
    }
    out += v.object.empty() ? "}" : "\n" + std::string(indent, ' ') + "}";
    break;
  }
}
} // namespace

bool kiln::json::parse(const std::string &text, Value &out, std::string &error) {
  Parser p(text);
  if (!p.value(out)) {
    error = p.error;
    return false;
  }
  p.ws();
  if (p.i != text.size()) {
    p.fail("trailing characters after the JSON value");
    error = p.error;
    return false;
  }
  return true;
}

std::string kiln::json::print(const Value &v) {
  std::string out;
  printTo(v, out, 0);
  return out + "\n";
}

bool kiln::json::parseFile(const std::string &path, Value &out, std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read manifest '" + path + "'";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (!parse(ss.str(), out, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}
