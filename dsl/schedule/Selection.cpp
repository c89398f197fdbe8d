//===- Selection.cpp - read a selection file and parse its conditions -----===//
//
// yaml-cpp throws: every exception is caught here (YamlRead.h's readYaml)
// and becomes a diagnostic at the YAML line and column.
//
//===----------------------------------------------------------------------===//
#include "dsl/schedule/Selection.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "dsl/schedule/YamlRead.h"

#include <cctype>
#include <cstring>
#include <set>

using namespace kiln;

namespace {

using namespace kiln::yamlread;

struct ConditionError {
  size_t at;
  std::string message;
};

/// A recursive-descent parser of `expr cmp expr`, writing postfix tokens.
class ConditionParser {
public:
  ConditionParser(const std::string &text, SelectionCondition &out) : s(text), out(out) {}

  void parse() {
    expression();
    skipSpace();
    size_t at = i;
    std::string op = comparison();
    if (op.empty())
      fail(at, "expected a comparison (==, !=, <, <=, >, >=) after the expression");
    expression();
    skipSpace();
    if (i != s.size())
      fail(i, "unexpected '" + s.substr(i) + "' after the condition");
    out.rpn.push_back(op);
  }

private:
  const std::string &s;
  SelectionCondition &out;
  size_t i = 0;

  [[noreturn]] void fail(size_t at, const std::string &message) {
    throw ConditionError{at, message};
  }
  void skipSpace() {
    while (i < s.size() && std::isspace((unsigned char)s[i]))
      ++i;
  }
  std::string comparison() {
    for (const char *op : {"==", "!=", "<=", ">=", "<", ">"})
      if (s.compare(i, std::strlen(op), op) == 0) {
        i += std::strlen(op);
        return op;
      }
    return "";
  }
  void expression() { // term (('+' | '-') term)*
    term();
    for (skipSpace(); i < s.size() && (s[i] == '+' || s[i] == '-'); skipSpace()) {
      std::string op(1, s[i++]);
      term();
      out.rpn.push_back(op);
    }
  }
  void term() { // atom (('*' | '/') atom)*
    atom();
    for (skipSpace(); i < s.size() && (s[i] == '*' || s[i] == '/'); skipSpace()) {
      std::string op(1, s[i++]);
      atom();
      out.rpn.push_back(op);
    }
  }
  void atom() {
    skipSpace();
    if (i == s.size())
      fail(i, "expected a dim, `sms`, an integer or '(' at the end of the condition");
    size_t start = i;
    if (s[i] == '(') {
      ++i;
      expression();
      skipSpace();
      if (i == s.size() || s[i] != ')')
        fail(start, "'(' without its ')'");
      ++i;
      return;
    }
    if (std::isdigit((unsigned char)s[i])) {
      while (i < s.size() && std::isdigit((unsigned char)s[i]))
        ++i;
      if (i - start > 15)
        fail(start, "integer too large");
      out.rpn.push_back(s.substr(start, i - start));
      return;
    }
    if (std::isalpha((unsigned char)s[i]) || s[i] == '_') {
      while (i < s.size() && (std::isalnum((unsigned char)s[i]) || s[i] == '_'))
        ++i;
      std::string name = s.substr(start, i - start);
      out.rpn.push_back(name);
      out.names.push_back(name);
      out.namePos.push_back({0, (unsigned)start}); // column offset; made absolute by the caller
      return;
    }
    fail(start, "expected a dim, `sms`, an integer or '(', got '" + std::string(1, s[i]) + "'");
  }
};

SelectionCondition condition(const YAML::Node &n) {
  SelectionCondition c;
  c.pos = posOf(n);
  c.text = scalar(n, "a condition");
  std::string error;
  size_t column = 0;
  if (!parseSelectionCondition(c.text, c, error, column))
    throw Reject{{c.pos.line, c.pos.col + (unsigned)column}, error};
  for (SrcPos &p : c.namePos)
    p = {c.pos.line, c.pos.col + p.col};
  return c;
}

void parse(const YAML::Node &root, Selection &sel) {
  onlyKeys(root, {"source", "target", "rules"}, "a selection");
  for (const char *key : {"source", "target", "rules"})
    if (!root[key])
      throw Reject{posOf(root), std::string("a selection needs '") + key + "'"};
  llvm::SmallString<256> dir(sel.path);
  llvm::sys::path::remove_filename(dir);
  llvm::SmallString<256> source(dir);
  llvm::sys::path::append(source, scalar(root["source"], "source"));
  llvm::sys::path::remove_dots(source, /*remove_dot_dot=*/true);
  sel.sourcePath = std::string(source);
  if (!llvm::sys::fs::exists(sel.sourcePath))
    throw Reject{posOf(root["source"]), "no source '" + sel.sourcePath + "'"};
  sel.target = scalar(root["target"], "target");
  sel.targetPos = posOf(root["target"]);
  const YAML::Node rules = root["rules"];
  if (!rules.IsSequence() || rules.size() == 0)
    throw Reject{posOf(rules), "rules must be a list of {schedule, when}"};
  llvm::SmallString<256> schedules(sel.sourcePath);
  llvm::sys::path::remove_filename(schedules);
  llvm::sys::path::append(schedules, "schedules");
  for (const YAML::Node &r : rules) {
    onlyKeys(r, {"schedule", "when"}, "a rule");
    if (!r["schedule"])
      throw Reject{posOf(r), "a rule needs 'schedule'"};
    SelectionRule rule;
    rule.pos = posOf(r["schedule"]);
    rule.schedule = scalar(r["schedule"], "schedule");
    if (rule.schedule.find_first_of("/\\") != std::string::npos ||
        llvm::StringRef(rule.schedule).ends_with(".yaml"))
      throw Reject{rule.pos, "a rule's schedule is a name: NAME for " + std::string(schedules) +
                                 "/NAME.yaml, not '" + rule.schedule + "'"};
    llvm::SmallString<256> path(schedules);
    llvm::sys::path::append(path, rule.schedule + ".yaml");
    rule.schedulePath = std::string(path);
    if (!llvm::sys::fs::exists(rule.schedulePath))
      throw Reject{rule.pos, "no schedule '" + rule.schedulePath + "'"};
    if (const YAML::Node when = r["when"]) {
      if (!when.IsSequence() || when.size() == 0)
        throw Reject{posOf(when), "when must be a list of conditions like [N == 1, HV >= 32]"};
      for (const YAML::Node &c : when)
        rule.when.push_back(condition(c));
    }
    sel.rules.push_back(std::move(rule));
  }
  for (size_t k = 0; k + 1 < sel.rules.size(); ++k)
    if (sel.rules[k].when.empty())
      throw Reject{sel.rules[k].pos, "rule of '" + sel.rules[k].schedule +
                                         "' has no condition, so the rules after it never "
                                         "serve a shape; give it a `when` or put it last"};
  if (!sel.rules.back().when.empty())
    throw Reject{sel.rules.back().when.front().pos,
                 "the last rule has conditions, so some shapes would have no schedule; end "
                 "with a rule without `when`"};
}

} // namespace

bool kiln::parseSelectionCondition(const std::string &text, SelectionCondition &out,
                                   std::string &error, size_t &errorColumn) {
  ConditionParser p(text, out);
  try {
    p.parse();
    return true;
  } catch (const ConditionError &failed) {
    error = failed.message;
    errorColumn = failed.at;
    return false;
  }
}

bool kiln::loadSelection(const std::string &path, Selection &out,
                         llvm::raw_ostream &errs) noexcept {
  out.path = path;
  std::string error;
  if (!readFile(path, out.text, error)) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  return yamlread::readYaml(
      out.text, "selection", [&](const YAML::Node &root) { parse(root, out); },
      [&](SrcPos pos, const std::string &message) { return out.diag(pos, message); }, errs);
}
