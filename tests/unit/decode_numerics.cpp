//===- decode_numerics.cpp - every decode schedule vs the golden reference ===//
//
// Each case compiles the op with one schedule for the CPU backend, runs it on
// fresh random inputs with the output poisoned (NaN), and compares with the
// float64 recurrence. GPU schedules run here with their own tiling: a
// schedule never changes the result.
//
//===----------------------------------------------------------------------===//
#include "tests/unit/GdnNumerics.h"

using namespace kiln;
using namespace kiln::test;

static std::vector<std::string> decodeSchedules() { return gdnSchedules("decode_"); }
static std::vector<std::string> mtpSchedules() { return gdnSchedules("mtp_"); }

static void checkDecode(const std::string &schedule, int64_t B, int64_t H, int64_t HV, int64_t K,
                        int64_t V, bool l2, bool saturate, double skip, uint64_t seed,
                        int64_t T = 0, const std::string &state = "") {
  std::map<std::string, lang::ExternalValue> consts = gdnConsts(K, V, l2);
  if (!state.empty()) // a STATE dtype the schedule leaves open
    consts["STATE"] = {0, state, "test -D STATE=" + state};
  RunConfig cfg;
  cfg.dims = {{"B", B}, {"H", H}, {"HV", HV}};
  if (T) // multi-token decode (decode_mtp.tile)
    cfg.dims["T"] = T;
  cfg.seed = seed;
  cfg.saturateGates = saturate;
  cfg.skipFraction = skip;
  std::vector<CheckResult> checks;
  std::string errors;
  llvm::raw_string_ostream os(errors);
  std::string tile = T ? "/ops/gdn/decode_mtp.tile" : "/ops/gdn/decode.tile";
  bool ran = runOnCpu(std::string(KILN_SOURCE_DIR) + tile, schedule, consts, cfg, checks, os);
  INFO(schedule << " B=" << B << " T=" << T << " H=" << H << " HV=" << HV << " K=" << K
                << " V=" << V << " l2=" << l2 << " saturate=" << saturate << "\n"
                << errors);
  REQUIRE(ran);
  // Multi-token decode keeping every token's state checks it too.
  bool keeps = schedule.find("mtp_states") != std::string::npos ||
               schedule.find("mtp_scatter") != std::string::npos;
  requireAllPass(checks, keeps ? 4 : 3);
}

TEST_CASE("decode matches the golden reference for every schedule and shape", "[decode]") {
  uint64_t seed = 1;
  for (const std::string &schedule : decodeSchedules()) {
    for (auto [K, V] : {std::pair<int64_t, int64_t>{128, 128}, {64, 32}})
      for (auto [H, HV] : {std::pair<int64_t, int64_t>{4, 8}, {16, 32}, {2, 2}})
        for (int64_t B : {1, 3, 7})
          for (bool l2 : {true, false})
            checkDecode(schedule, B, H, HV, K, V, l2, false, B > 1 ? 0.3 : 0.0, seed++);
  }
}

TEST_CASE("decode survives saturated gates and padding slots", "[decode]") {
  for (const std::string &schedule : decodeSchedules()) {
    checkDecode(schedule, 7, 4, 8, 128, 128, true, true, 0.3, 99);
    checkDecode(schedule, 3, 2, 2, 64, 32, false, true, 0.34, 100);
  }
}

TEST_CASE("multi-token decode matches the golden reference for every schedule", "[decode]") {
  uint64_t seed = 1;
  for (const std::string &schedule : mtpSchedules()) {
    for (auto [K, V] : {std::pair<int64_t, int64_t>{128, 128}, {64, 32}}) {
      // A schedule of 64 state rows a program (the chunked form's) cannot
      // split V = 32; the others cover it.
      if (!splitsV(schedule, V))
        continue;
      for (auto [H, HV] : {std::pair<int64_t, int64_t>{4, 8}, {2, 2}})
        for (auto [B, T] : {std::pair<int64_t, int64_t>{1, 1}, {5, 3}})
          for (bool l2 : {true, false})
            checkDecode(schedule, B, H, HV, K, V, l2, false, B > 1 ? 0.3 : 0.0, seed++, T);
    }
    checkDecode(schedule, 4, 4, 8, 128, 128, true, true, 0.3, 99, 8); // saturated gates
  }
}

TEST_CASE("multi-token decode keeps an f8e4m3 state", "[decode]") {
  // The bundled f8e4m3 schedules (mtp_*_f8) run above with the rest; these
  // take the state type from -D STATE, on layouts written for f32 (their
  // intermediate states too).
  uint64_t seed = 500;
  for (const char *name :
       {"mtp_cpu.yaml", "mtp_sm_90a.yaml", "mtp_states_sm_90a.yaml", "mtp_scatter_sm_90a.yaml"}) {
    std::string schedule = std::string(KILN_SOURCE_DIR) + "/ops/gdn/schedules/" + name;
    checkDecode(schedule, 5, 4, 8, 128, 128, true, false, 0.3, seed++, 4, "f8e4m3");
    checkDecode(schedule, 1, 2, 2, 64, 32, false, true, 0.0, seed++, 3, "f8e4m3");
  }
}

TEST_CASE("a schedule whose tile does not divide V is rejected", "[decode]") {
  // sm_90a_tma uses BV = 32: V = 24 is not a multiple.
  std::map<std::string, lang::ExternalValue> consts = {{"V", {24, "", "test -D V=24"}}};
  std::string errors;
  llvm::raw_string_ostream os(errors);
  auto ctx = makeContext();
  Compiled c;
  REQUIRE_FALSE(compileOp(
      *ctx, std::string(KILN_SOURCE_DIR) + "/ops/gdn/decode.tile",
      std::string(KILN_SOURCE_DIR) + "/ops/gdn/schedules/decode_sm_90a_tma.yaml", consts, c, os));
  CHECK_THAT(errors, Catch::Contains("requirement failed: BV must divide V"));
  CHECK_THAT(errors, Catch::Contains("sm_90a_tma.yaml:10:7: note: BV = 32 is set here"));
}
