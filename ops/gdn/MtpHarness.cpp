//===- MtpHarness.cpp - random inputs and golden check for MTP decode -----===//
//
// Requests n = 0..B-1 each bring T tokens. Request n reads its state from
// pool slot read_slots[n] and writes the state after its last token to
// write_slots[n]: the same slot for some requests, an unread slot for
// others, nowhere (-1) for the rest. Some requests are padding (read slot
// -1): their outputs are zeros and they write nothing. gdn_decode_mtp_states
// also stores the state after each token of every request that is not
// padding; gdn_decode_mtp_scatter stores it to the token's own pool slot
// (token_slots[n, t], some -1: nowhere).
//
//===----------------------------------------------------------------------===//
#include "ops/Harness.h"
#include "ops/gdn/Golden.h"
#include "ops/gdn/Inputs.h"
#include "ops/gdn/State.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace kiln;

namespace {

/// What a kernel keeps of the states after each token: nothing, all of them
/// in a buffer of their own (inter), or each in its token's pool slot.
enum class Keep { None, States, Slots };

bool runMtp(const RunConfig &cfg, Keep keep, const Launcher &launch,
            std::vector<CheckResult> &checks, std::string &error) {
  const bool keepStates = keep == Keep::States, keepSlots = keep == Keep::Slots;
  const int64_t B = cfg.dims.at("B"), T = cfg.dims.at("T"), H = cfg.dims.at("H"),
                HV = cfg.dims.at("HV");
  const int64_t K = cfg.constants.at("K"), V = cfg.constants.at("V");
  const bool l2 = cfg.constants.count("USE_QK_L2NORM") ? cfg.constants.at("USE_QK_L2NORM") : true;
  if (HV % H) {
    error = "HV (" + std::to_string(HV) + ") must be a multiple of H (" + std::to_string(H) + ")";
    return false;
  }
  // Room for a read slot and a separate write slot per request, and for a
  // slot per token where they are kept so.
  const int64_t slotsNeeded = 2 * B + (keepSlots ? B * T : 0);
  const int64_t N = cfg.dims.count("N") ? cfg.dims.at("N") : slotsNeeded + 2;
  if (N < slotsNeeded) {
    error = "the pool needs N >= " + std::string(keepSlots ? "2 B + B T" : "2 B") +
            " slots (N = " + std::to_string(N) + ")";
    return false;
  }
  // The pool, its copy and the golden's f64 states, every token's state
  // when kept; the tokens are smaller.
  if (!fitsHostMemory(32.0 * N * HV * V * K + (keepStates ? 16.0 * B * T * HV * V * K : 0.0) +
                          24.0 * B * T * (H * K + HV * V),
                      "the run at " + describeShape(cfg), error))
    return false;
  std::mt19937_64 rng(cfg.seed);
  gdn::Inputs in = gdn::randomInputs(rng, B * T, H, HV, K, V, l2, cfg); // [B, T, ...]
  std::vector<int32_t> rows(N);
  std::iota(rows.begin(), rows.end(), 0);
  std::shuffle(rows.begin(), rows.end(), rng);
  std::vector<int32_t> readSlots(B), writeSlots(B), tokenSlots(keepSlots ? B * T : 0);
  for (int64_t n = 0; n < B; ++n) {
    readSlots[n] = rows[n];
    writeSlots[n] = n % 3 == 0 ? rows[n] : n % 3 == 1 ? rows[B + n] : -1;
  }
  for (int64_t i = 0; i < (int64_t)tokenSlots.size(); ++i)
    tokenSlots[i] = i % 5 == 4 ? -1 : rows[2 * B + i];
  int64_t skips = std::llround(cfg.skipFraction * B);
  for (int64_t n = 0; n < skips; ++n)
    readSlots[(n * 7 + 3) % B] = -1;

  gdn::StateTensor state, inter;
  if (!gdn::StateTensor::forConfig(cfg, state, error) ||
      !gdn::StateTensor::forConfig(cfg, inter, error))
    return false;
  const int64_t row = HV * V * K; // one pool slot
  state.resize(N * row);
  state.fillNormal(rng, 0, N * row);
  const gdn::StateTensor stateBefore = state;
  inter.resize(keepStates ? B * T * row : 0); // poisoned: NaN until written
  std::vector<uint16_t> o(B * T * HV * V, 0x7fc0);
  const double scale = 1.0 / std::sqrt((double)K);

  std::vector<ArgValue> args = {ArgValue::tensor(in.q.data(), {B, T, H, K}, DType::BF16),
                                ArgValue::tensor(in.k.data(), {B, T, H, K}, DType::BF16),
                                ArgValue::tensor(in.v.data(), {B, T, HV, V}, DType::BF16),
                                ArgValue::tensor(in.a.data(), {B, T, HV}, DType::BF16),
                                ArgValue::tensor(in.b.data(), {B, T, HV}, DType::BF16),
                                ArgValue::tensor(in.A_log.data(), {HV}, DType::F32),
                                ArgValue::tensor(in.dt_bias.data(), {HV}, DType::F32),
                                ArgValue::tensor(readSlots.data(), {B}, DType::I32),
                                ArgValue::tensor(writeSlots.data(), {B}, DType::I32)};
  if (keepSlots)
    args.push_back(ArgValue::tensor(tokenSlots.data(), {B, T}, DType::I32));
  args.push_back(ArgValue::tensor(state.data(), {N, HV, V, K}, state.dtype()));
  if (keepStates)
    args.push_back(ArgValue::tensor(inter.data(), {B, T, HV, V, K}, inter.dtype()));
  args.push_back(ArgValue::tensor(o.data(), {B, T, HV, V}, DType::BF16));
  args.push_back(ArgValue::number(scale));
  if (!launch(args, error))
    return false;

  // Golden: each request's tokens one step at a time from its slot's state,
  // in float64; what is stored is rounded once, as the kernel rounds it.
  gdn::Problem p;
  p.H = H, p.HV = HV, p.K = K, p.V = V, p.l2norm = l2, p.scale = scale;
  p.cuSeqlens = {0, 1};
  std::vector<double> gotO(B * T * HV * V), wantO(B * T * HV * V, 0.0);
  for (int64_t i = 0; i < B * T * HV * V; ++i)
    gotO[i] = fromBf16(o[i]);
  std::vector<double> gotS, wantS, gotI, wantI, gotT, wantT;
  std::vector<bool> written(N, false);
  for (int64_t n = 0; n < B; ++n) {
    if (readSlots[n] < 0)
      continue;
    std::vector<double> S = stateBefore.values(readSlots[n] * row, (readSlots[n] + 1) * row), out;
    for (int64_t t = 0; t < T; ++t) {
      const int64_t tok = n * T + t;
      gdn::recurrence(p, &in.q[tok * H * K], &in.k[tok * H * K], &in.v[tok * HV * V],
                      &in.a[tok * HV], &in.b[tok * HV], in.A_log.data(), in.dt_bias.data(), S, out);
      std::copy(out.begin(), out.end(), wantO.begin() + tok * HV * V);
      if (keepStates) {
        std::vector<double> got = inter.values(tok * row, (tok + 1) * row);
        gotI.insert(gotI.end(), got.begin(), got.end());
        for (double x : S)
          wantI.push_back(inter.round(x));
      }
      if (keepSlots && tokenSlots[tok] >= 0) {
        const int64_t ts = tokenSlots[tok];
        written[ts] = true;
        std::vector<double> got = state.values(ts * row, (ts + 1) * row);
        gotT.insert(gotT.end(), got.begin(), got.end());
        for (double x : S)
          wantT.push_back(state.round(x));
      }
    }
    if (writeSlots[n] >= 0) {
      written[writeSlots[n]] = true;
      std::vector<double> got = state.values(writeSlots[n] * row, (writeSlots[n] + 1) * row);
      gotS.insert(gotS.end(), got.begin(), got.end());
      for (double x : S)
        wantS.push_back(state.round(x));
    }
  }
  checks.push_back(compare("o", gotO, wantO, 1e-2));
  // The spec's looser state tolerance where tensor cores multiply 16-bit
  // operands (gdn_decode_mtp_chunked's products).
  const double stateTol = cfg.roundedOperands ? 2e-3 : 1e-4;
  checks.push_back(compare("state", gotS, wantS, state.tolerance(stateTol)));
  if (keepStates)
    checks.push_back(compare("inter", gotI, wantI, inter.tolerance(stateTol)));
  if (keepSlots)
    checks.push_back(compare("token slots", gotT, wantT, state.tolerance(stateTol)));
  // Slots no request writes must be bit-identical to before.
  checks.push_back(state.untouchedRows("untouched slots", stateBefore, row, written));
  return true;
}

} // namespace

void registerGdnMtpHarness() {
  OpHarness h;
  h.kernel = "gdn_decode_mtp";
  h.dims = {"B", "T", "H", "HV", "N"};
  h.defaultDims = {{"B", 3}, {"T", 4}, {"H", 4}, {"HV", 8}};
  RunConfig one, many;
  one.dims = {{"B", 2}, {"T", 1}, {"H", 4}, {"HV", 8}};
  many.dims = {{"B", 7}, {"T", 4}, {"H", 2}, {"HV", 8}};
  many.skipFraction = 0.3;
  h.checkConfigs = {one, many};
  h.run = [](const RunConfig &cfg, const Launcher &launch, std::vector<CheckResult> &checks,
             std::string &error) { return runMtp(cfg, Keep::None, launch, checks, error); };
  registerHarness(h);
  h.kernel = "gdn_decode_mtp_states";
  h.run = [](const RunConfig &cfg, const Launcher &launch, std::vector<CheckResult> &checks,
             std::string &error) { return runMtp(cfg, Keep::States, launch, checks, error); };
  registerHarness(h);
  h.kernel = "gdn_decode_mtp_scatter";
  h.run = [](const RunConfig &cfg, const Launcher &launch, std::vector<CheckResult> &checks,
             std::string &error) { return runMtp(cfg, Keep::Slots, launch, checks, error); };
  registerHarness(h);
  // The chunked kernel also over more tokens than one chunk holds.
  RunConfig chunks;
  chunks.dims = {{"B", 3}, {"T", 19}, {"H", 2}, {"HV", 4}};
  h.kernel = "gdn_decode_mtp_chunked";
  h.checkConfigs = {one, many, chunks};
  h.run = [](const RunConfig &cfg, const Launcher &launch, std::vector<CheckResult> &checks,
             std::string &error) { return runMtp(cfg, Keep::None, launch, checks, error); };
  registerHarness(h);
}
