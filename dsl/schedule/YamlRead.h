//===- YamlRead.h - what every YAML reader of Kiln shares -------*- C++ -*-===//
//
// yaml-cpp throws, and reports positions as 0-based marks: the readers of
// schedules and selections throw a Reject at a 1-based position instead and
// catch both at their top, so every error names the file, line and column.
// Only for files compiled with exceptions (ScheduleYaml.cpp, Selection.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_SCHEDULE_YAMLREAD_H
#define KILN_DSL_SCHEDULE_YAMLREAD_H

#include "dsl/Diagnostics.h"

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>

namespace kiln::yamlread {

struct Reject {
  SrcPos pos;
  std::string message;
};

SrcPos posOf(const YAML::Node &n);
std::string scalar(const YAML::Node &n, const std::string &what);
/// Rejects a key of `map` not in `allowed`, listing those.
void onlyKeys(const YAML::Node &map, const std::set<std::string> &allowed,
              const std::string &where);
/// yaml-cpp keeps every entry of a mapping but looks keys up by the first:
/// a key written twice would drop the second without a word.
void rejectRepeatedKeys(const YAML::Node &n);

/// Loads `text` and runs `parse(root)`, turning a Reject or a yaml-cpp
/// exception into one diagnostic of `diag` (a function of position and
/// message) on `errs`. `what` names the document ("schedule").
template <typename Parse, typename Diag>
bool readYaml(const std::string &text, const std::string &what, Parse parse, Diag diag,
              llvm::raw_ostream &errs) noexcept {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root || root.IsNull()) {
      errs << diag(SrcPos{1, 1}, "the " + what + " is empty");
      return false;
    }
    rejectRepeatedKeys(root);
    parse(root);
    return true;
  } catch (const Reject &r) {
    errs << diag(r.pos, r.message);
  } catch (const YAML::Exception &e) {
    errs << diag(SrcPos{(unsigned)e.mark.line + 1, (unsigned)e.mark.column + 1},
                 "malformed YAML: " + e.msg);
  } catch (const std::exception &e) {
    errs << diag(SrcPos{}, "cannot read the " + what + ": " + e.what());
  }
  return false;
}

} // namespace kiln::yamlread

#endif
