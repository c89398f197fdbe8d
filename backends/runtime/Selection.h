//===- Selection.h - pick the schedule a shape runs -------------*- C++ -*-===//
//
// `kiln compile --select SEL.yaml --emit cubin -o DIR/NAME.json` builds every
// schedule a selection file names (dsl/schedule/Selection.h) beside NAME.json
// and writes NAME.json as a selection manifest: per rule, in order, the
// schedule's manifest and its conditions, each a postfix list of tokens
// (dim names, `sms`, integers, + - * / and comparisons). A runner binds the
// dims from the arguments as for any kernel (every rule's op has the same
// signature), and runs the first rule whose conditions all hold on them and
// on the device's multiprocessor count. Python's twin: python/kiln/selection.py.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_RUNTIME_SELECTION_H
#define KILN_BACKENDS_RUNTIME_SELECTION_H

#include "backends/runtime/Json.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln {

struct SelectionManifest {
  struct Condition {
    std::string text;             // as the selection file writes it
    std::vector<std::string> rpn; // postfix tokens
  };
  struct Rule {
    std::string schedule; // the schedule's name
    std::string manifest; // its manifest, relative to this one
    std::string op;       // the op its schedule builds (rules may build
                          // different ops of one signature)
    std::vector<Condition> when;
  };
  std::string op; // the first rule's op
  std::string target, source;
  std::vector<Rule> rules;

  json::Value toJson() const;
  static bool fromJson(const json::Value &v, SelectionManifest &out, std::string &error);
  /// Whether the JSON document is a selection manifest (it has `rules`).
  static bool isSelection(const json::Value &v) { return v.get("rules") != nullptr; }
};

/// The value of a postfix condition: nonzero holds. Names are looked up in
/// `dims`, then `sms`; a division by zero or an unknown name is an error
/// (the name then also in `*unknown`, where given).
bool evalSelectionCondition(const std::vector<std::string> &rpn,
                            const std::map<std::string, int64_t> &dims, int64_t sms, int64_t &out,
                            std::string &error, std::string *unknown = nullptr);

/// The index of the first rule whose conditions all hold (the last rule has
/// none, so one always does unless a condition cannot be evaluated; where
/// that is for a name `dims` lacks, the name is in `*unknown`).
bool chooseSelectionRule(const SelectionManifest &s, const std::map<std::string, int64_t> &dims,
                         int64_t sms, size_t &rule, std::string &error,
                         std::string *unknown = nullptr);

} // namespace kiln

#endif
