//===- GdnNumerics.h - shared pieces of the GDN numerics tests --*- C++ -*-===//
//
// The decode and prefill numerics tests both run every bundled schedule of
// their op on the CPU backend with the op's consts overridden, and require
// every check of the run to pass.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_UNIT_GDNNUMERICS_H
#define KILN_TESTS_UNIT_GDNNUMERICS_H

#include "dsl/schedule/Schedule.h"
#include "tools/kiln/Driver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

namespace kiln::test {

/// The bundled GDN schedules whose file names start with `prefix`, sorted.
inline std::vector<std::string> gdnSchedules(const std::string &prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  std::string dir = std::string(KILN_SOURCE_DIR) + "/ops/gdn/schedules";
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::sys::path::filename(it->path()).starts_with(prefix))
      out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

/// The GDN ops' consts as a test sets them.
inline std::map<std::string, lang::ExternalValue> gdnConsts(int64_t K, int64_t V, bool l2) {
  return {{"K", {K, "", "test"}}, {"V", {V, "", "test"}}, {"USE_QK_L2NORM", {l2, "", "test"}}};
}

/// Whether `schedule`'s state rows a program (BV) divide V: a schedule of
/// 64 rows cannot split V = 32 (the source's `require` rejects it at
/// compile time); a symbol (`BV: V`) always does.
inline bool splitsV(const std::string &schedule, int64_t V) {
  Schedule s;
  REQUIRE(loadSchedule(schedule, s, llvm::errs()));
  auto bv = s.params.find("BV");
  return bv == s.params.end() || !bv->second.symbol.empty() || V % bv->second.value == 0;
}

/// Requires `count` checks, none with NaN or Inf, each within tolerance.
inline void requireAllPass(const std::vector<CheckResult> &checks, size_t count) {
  REQUIRE(checks.size() == count);
  for (const CheckResult &c : checks) {
    INFO(c.what << " rel_err " << c.relError);
    CHECK_FALSE(c.nan);
    CHECK(c.relError < c.tolerance);
  }
}

} // namespace kiln::test

#endif
