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

using namespace kiln;
using namespace kiln::test;

// Every schedule of gdn_prefill, gdn_prefill_checkpoints and the split ops.
static std::vector<std::string> prefillSchedules() { return gdnSchedules("prefill_"); }

struct PrefillCase {
  std::vector<int64_t> lens;
  int64_t H = 4, HV = 8, K = 128, V = 128;
  bool initialState = true, l2 = true, saturate = false, slow = false;
  std::string state; // a STATE dtype the schedule leaves open (-D STATE=...)
};

static void checkPrefill(const std::string &schedule, const PrefillCase &c, uint64_t seed) {
  std::map<std::string, lang::ExternalValue> consts = gdnConsts(c.K, c.V, c.l2);
  if (!c.state.empty())
    consts["STATE"] = {0, c.state, "test -D STATE=" + c.state};
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
                << " state=" << (c.state.empty() ? "default" : c.state)
                << " saturate=" << c.saturate << " slow=" << c.slow << "\n"
                << errors);
  REQUIRE(ran);
  // o, the state rows written, the rows not written (and the checkpoints).
  const bool checkpoints = schedule.find("/prefill_checkpoints_") != std::string::npos;
  requireAllPass(checks, checkpoints ? 4 : 3);
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
    // A schedule of 64 state rows a program cannot split V = 32; the
    // others cover it.
    if (splitsV(schedule, small.V))
      checkPrefill(schedule, small, seed++);
    PrefillCase saturated{{70, 3}, 2, 2};
    saturated.saturate = true;
    checkPrefill(schedule, saturated, seed++);
  }
}

TEST_CASE("prefill reads and writes an f8e4m3 state", "[prefill]") {
  // The initial state in f8e4m3 (read exactly), the final state rounded
  // once: the split ops, the cut one (whose segment states stay f32/bf16
  // inside) and the checkpoints.
  uint64_t seed = 700;
  for (const char *name : {"prefill_cpu.yaml", "prefill_split_cpu.yaml",
                           "prefill_split_fold_cpu.yaml", "prefill_split_cp_cpu.yaml",
                           "prefill_checkpoints_cpu.yaml", "prefill_split_sm_90a_cp.yaml"}) {
    std::string schedule = std::string(KILN_SOURCE_DIR) + "/ops/gdn/schedules/" + name;
    PrefillCase c{{1, 64, 200, 7}};
    c.state = "f8e4m3";
    checkPrefill(schedule, c, seed++);
    PrefillCase saturated{{70, 3}, 2, 2};
    saturated.saturate = true;
    saturated.state = "f8e4m3";
    checkPrefill(schedule, saturated, seed++);
  }
}

TEST_CASE("prefill keeps the share of a token whose beta underflows", "[prefill]") {
  // At saturated gates beta can be 1e-39: the split ops' U of 16-bit floats
  // once held v beta, which flushed to zero (the state's error 0.76 and 8e-3
  // on these two runs). The seeds are the ones that found it.
  for (const std::string &schedule : prefillSchedules()) {
    PrefillCase twoSeqs{{70, 3}, 2, 2}, oneSeq{{70}, 2, 2};
    twoSeqs.saturate = oneSeq.saturate = true;
    checkPrefill(schedule, twoSeqs, 166);
    checkPrefill(schedule, oneSeq, 121);
  }
}
