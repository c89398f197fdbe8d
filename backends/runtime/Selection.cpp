//===- Selection.cpp - pick the schedule a shape runs ---------------------===//
#include "backends/runtime/Selection.h"
#include "backends/runtime/CheckedInt.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

using namespace kiln;
using json::Value;

Value SelectionManifest::toJson() const {
  Value v = Value::obj();
  v.set("op", Value::str(op));
  v.set("target", Value::str(target));
  v.set("source", Value::str(source));
  Value rs = Value::arr();
  for (const Rule &r : rules) {
    Value rv = Value::obj();
    rv.set("schedule", Value::str(r.schedule));
    rv.set("manifest", Value::str(r.manifest));
    if (!r.op.empty())
      rv.set("op", Value::str(r.op));
    Value when = Value::arr();
    for (const Condition &c : r.when) {
      Value cv = Value::obj();
      cv.set("text", Value::str(c.text));
      Value rpn = Value::arr();
      for (const std::string &t : c.rpn)
        rpn.array.push_back(Value::str(t));
      cv.set("rpn", rpn);
      when.array.push_back(cv);
    }
    rv.set("when", when);
    rs.array.push_back(rv);
  }
  v.set("rules", rs);
  return v;
}

static bool stringField(const Value &v, const char *key, std::string &out, std::string &error,
                        const std::string &where) {
  const Value *f = v.get(key);
  if (!f || f->kind != Value::String) {
    error = where + " needs a string '" + key + "'";
    return false;
  }
  out = f->string;
  return true;
}

bool SelectionManifest::fromJson(const Value &v, SelectionManifest &out, std::string &error) {
  if (v.kind != Value::Object)
    return error = "a selection manifest is an object", false;
  if (!stringField(v, "op", out.op, error, "the selection") ||
      !stringField(v, "target", out.target, error, "the selection") ||
      !stringField(v, "source", out.source, error, "the selection"))
    return false;
  const Value *rules = v.get("rules");
  if (!rules || rules->kind != Value::Array || rules->array.empty())
    return error = "'rules' must be a non-empty array", false;
  for (size_t i = 0; i < rules->array.size(); ++i) {
    const Value &rv = rules->array[i];
    std::string where = "rule " + std::to_string(i + 1);
    Rule r;
    if (rv.kind != Value::Object || !stringField(rv, "schedule", r.schedule, error, where) ||
        !stringField(rv, "manifest", r.manifest, error, where))
      return error.empty() ? (error = where + " must be an object", false) : false;
    r.op = out.op; // manifests written before rules named their ops
    if (rv.get("op") && !stringField(rv, "op", r.op, error, where))
      return false;
    const Value *when = rv.get("when");
    if (!when || when->kind != Value::Array)
      return error = where + " needs an array 'when'", false;
    for (const Value &cv : when->array) {
      Condition c;
      const Value *rpn = cv.get("rpn");
      if (cv.kind != Value::Object || !stringField(cv, "text", c.text, error, where) || !rpn ||
          rpn->kind != Value::Array)
        return error.empty() ? (error = where + ": a condition needs 'text' and 'rpn'", false)
                             : false;
      for (const Value &t : rpn->array) {
        if (t.kind != Value::String)
          return error = where + ": condition '" + c.text + "' has a token that is no string",
                 false;
        c.rpn.push_back(t.string);
      }
      r.when.push_back(std::move(c));
    }
    out.rules.push_back(std::move(r));
  }
  return true;
}

bool kiln::evalSelectionCondition(const std::vector<std::string> &rpn,
                                  const std::map<std::string, int64_t> &dims, int64_t sms,
                                  int64_t &out, std::string &error, std::string *unknown) {
  std::vector<int64_t> stack;
  for (const std::string &t : rpn) {
    if (t.empty())
      return error = "an empty token", false;
    if (std::isdigit((unsigned char)t[0])) {
      errno = 0;
      int64_t v = std::strtoll(t.c_str(), nullptr, 10);
      if (errno == ERANGE)
        return error = "the number " + t + " does not fit in 64 bits", false;
      stack.push_back(v);
      continue;
    }
    if (std::isalpha((unsigned char)t[0]) || t[0] == '_') {
      auto it = dims.find(t);
      if (it != dims.end())
        stack.push_back(it->second);
      else if (t == "sms")
        stack.push_back(sms);
      else {
        if (unknown)
          *unknown = t;
        return error = "unknown name '" + t + "'", false;
      }
      continue;
    }
    if (stack.size() < 2)
      return error = "operator '" + t + "' lacks operands", false;
    int64_t b = stack.back();
    stack.pop_back();
    int64_t a = stack.back();
    // Checked (CheckedInt.h): both runtimes pick the same rule or give the
    // same error.
    int64_t r;
    bool wraps = false;
    if (t == "/" && b == 0)
      return error = "division by zero", false;
    if (t == "+" || t == "-" || t == "*" || t == "/")
      wraps = !checkedInt64(t[0], a, b, r);
    else if (t == "==")
      r = a == b;
    else if (t == "!=")
      r = a != b;
    else if (t == "<")
      r = a < b;
    else if (t == "<=")
      r = a <= b;
    else if (t == ">")
      r = a > b;
    else if (t == ">=")
      r = a >= b;
    else
      return error = "unknown operator '" + t + "'", false;
    if (wraps)
      return error =
                 std::to_string(a) + " " + t + " " + std::to_string(b) + " does not fit in 64 bits",
             false;
    stack.back() = r;
  }
  if (stack.size() != 1)
    return error = "a condition leaves " + std::to_string(stack.size()) + " values", false;
  out = stack.back();
  return true;
}

bool kiln::chooseSelectionRule(const SelectionManifest &s,
                               const std::map<std::string, int64_t> &dims, int64_t sms,
                               size_t &rule, std::string &error, std::string *unknown) {
  for (size_t i = 0; i < s.rules.size(); ++i) {
    bool holds = true;
    for (const SelectionManifest::Condition &c : s.rules[i].when) {
      int64_t v = 0;
      if (!evalSelectionCondition(c.rpn, dims, sms, v, error, unknown)) {
        error = "rule " + std::to_string(i + 1) + " (" + s.rules[i].schedule + "), condition '" +
                c.text + "': " + error;
        return false;
      }
      if (!v) {
        holds = false;
        break;
      }
    }
    if (holds) {
      rule = i;
      return true;
    }
  }
  error = "no rule of the selection holds (its last rule should have no conditions)";
  return false;
}
