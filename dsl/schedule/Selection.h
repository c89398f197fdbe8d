//===- Selection.h - which schedule serves a shape: YAML rules --*- C++ -*-===//
//
// One op, several schedules, each fastest on some shapes: a selection file
// lists them as rules, the first whose conditions all hold serving a call.
//
//   source: ../prefill.tile                # the op's source, from this file
//   target: sm_90a
//   rules:
//     - schedule: prefill_split_sm_90a_overlap     # <source dir>/schedules/NAME.yaml
//       when: [N == 1, HV >= 32]
//     - schedule: prefill_split_sm_90a_cp          # no `when`: every shape
//
// A condition compares two integer expressions of the op's runtime dims,
// `sms` (the GPU's multiprocessors), integers, + - * / (integer division,
// toward zero) and parentheses, with == != < <= > >=. The last rule has no
// `when`, so every shape has a schedule. Conditions are parsed here, with
// the YAML line and column of anything wrong, into postfix token lists that
// the runtimes evaluate (backends/runtime/Selection.h, python/kiln).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_SCHEDULE_SELECTION_H
#define KILN_DSL_SCHEDULE_SELECTION_H

#include "dsl/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln {

struct SelectionCondition {
  std::string text;               // as written
  SrcPos pos;                     // its first character
  std::vector<std::string> rpn;   // postfix: names, integers, operators
  std::vector<std::string> names; // the names it reads (dims, sms)
  std::vector<SrcPos> namePos;
};

struct SelectionRule {
  std::string schedule;     // a schedule's name
  std::string schedulePath; // <source dir>/schedules/<schedule>.yaml
  SrcPos pos;
  std::vector<SelectionCondition> when;
};

struct Selection {
  std::string path, text;
  std::string sourcePath; // the .tile file, resolved from this file's folder
  std::string target;
  SrcPos targetPos;
  std::vector<SelectionRule> rules;

  std::string diag(SrcPos pos, const std::string &message) const {
    return formatDiagnostic(path, text, pos, "error", message);
  }
};

/// Reads and validates a selection file (schema, conditions, the schedules'
/// files exist, the last rule has no condition). Errors go to `errs` with
/// the file, line and column. Never throws.
bool loadSelection(const std::string &path, Selection &out, llvm::raw_ostream &errs) noexcept;

/// Parses one condition (`N * HV >= 32`) into postfix tokens; on error,
/// `errorColumn` is the 0-based offset in `text` of what is wrong.
bool parseSelectionCondition(const std::string &text, SelectionCondition &out, std::string &error,
                             size_t &errorColumn);

} // namespace kiln

#endif
