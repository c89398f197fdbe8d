//===- PrefillHarness.cpp - random inputs and golden check for prefill ----===//
//
// A packed batch of sequences with the configured lengths (cu_seqlens), an
// initial state per sequence (random, or none: then the kernel gets a NaN
// tensor it must not read), outputs and final state poisoned with NaN.
//
//===----------------------------------------------------------------------===//
#include "ops/Harness.h"
#include "ops/gdn/Golden.h"
#include "ops/gdn/Inputs.h"
#include "ops/gdn/State.h"

#include <cmath>
#include <numeric>
#include <random>

using namespace kiln;

namespace {

bool runPrefill(const RunConfig &cfg, const Launcher &launch, std::vector<CheckResult> &checks,
                std::string &error) {
  const int64_t H = cfg.dims.at("H"), HV = cfg.dims.at("HV");
  const int64_t K = cfg.constants.at("K"), V = cfg.constants.at("V");
  const bool l2 = cfg.constants.count("USE_QK_L2NORM") ? cfg.constants.at("USE_QK_L2NORM") : true;
  if (HV % H) {
    error = "HV (" + std::to_string(HV) + ") must be a multiple of H (" + std::to_string(H) + ")";
    return false;
  }
  std::vector<int64_t> lens = cfg.seqLens;
  if (lens.empty())
    lens = {1, 64, 70, 7};
  for (int64_t len : lens)
    if (len < 0) {
      error = "sequence lengths must be >= 0";
      return false;
    }
  const int64_t N = lens.size();
  std::vector<int64_t> cu(N + 1, 0);
  std::partial_sum(lens.begin(), lens.end(), cu.begin() + 1);
  const int64_t T = cu.back();

  std::mt19937_64 rng(cfg.seed);
  gdn::Inputs in = gdn::randomInputs(rng, T, H, HV, K, V, l2, cfg);
  // Without an initial state the kernel gets NaN it must not read.
  gdn::StateTensor h0, finalState;
  if (!gdn::StateTensor::forConfig(cfg, h0, error) ||
      !gdn::StateTensor::forConfig(cfg, finalState, error))
    return false;
  const int64_t states = N * HV * V * K;
  h0.resize(states);
  if (cfg.initialState)
    h0.fillNormal(rng, 0, states);
  finalState.resize(states); // poisoned
  std::vector<uint16_t> o(std::max<int64_t>(T, 1) * HV * V, 0x7fc0);
  const double scale = 1.0 / std::sqrt((double)K);

  std::vector<ArgValue> args = {
      ArgValue::tensor(in.q.data(), {T, H, K}, DType::BF16),
      ArgValue::tensor(in.k.data(), {T, H, K}, DType::BF16),
      ArgValue::tensor(in.v.data(), {T, HV, V}, DType::BF16),
      ArgValue::tensor(in.a.data(), {T, HV}, DType::BF16),
      ArgValue::tensor(in.b.data(), {T, HV}, DType::BF16),
      ArgValue::tensor(in.A_log.data(), {HV}, DType::F32),
      ArgValue::tensor(in.dt_bias.data(), {HV}, DType::F32),
      ArgValue::tensor(cu.data(), {N + 1}, DType::I64),
      ArgValue::tensor(h0.data(), {N, HV, V, K}, h0.dtype()),
      ArgValue::tensor(finalState.data(), {N, HV, V, K}, finalState.dtype()),
      ArgValue::tensor(o.data(), {T, HV, V}, DType::BF16),
      ArgValue::number(scale),
      ArgValue::number(cfg.initialState ? 1 : 0)};
  if (!launch(args, error))
    return false;

  gdn::Problem p;
  p.H = H, p.HV = HV, p.K = K, p.V = V, p.l2norm = l2, p.scale = scale;
  p.cuSeqlens = cu;
  std::vector<double> refState(states, 0.0), refO;
  if (cfg.initialState)
    refState = h0.values(0, states);
  gdn::recurrence(p, in.q.data(), in.k.data(), in.v.data(), in.a.data(), in.b.data(),
                  in.A_log.data(), in.dt_bias.data(), refState, refO);

  std::vector<double> gotO(T * HV * V);
  for (int64_t i = 0; i < T * HV * V; ++i)
    gotO[i] = fromBf16(o[i]);
  checks.push_back(compare("o", gotO, refO, 1e-2));
  // The kernel rounds the final state once, as it stores it: so does the golden.
  for (double &x : refState)
    x = finalState.round(x);
  checks.push_back(compare("state", finalState.values(0, states), refState,
                           finalState.tolerance(cfg.roundedOperands ? 2e-3 : 1e-4)));
  return true;
}

} // namespace

void registerGdnPrefillHarness() {
  OpHarness h;
  h.kernel = "gdn_prefill";
  h.dims = {"H", "HV"};
  h.defaultDims = {{"H", 4}, {"HV", 8}};
  RunConfig varlen, fresh;
  varlen.dims = {{"H", 4}, {"HV", 8}};
  varlen.seqLens = {1, 64, 70, 7};
  fresh.dims = {{"H", 2}, {"HV", 2}};
  fresh.seqLens = {130};
  fresh.initialState = false;
  h.checkConfigs = {varlen, fresh};
  h.run = runPrefill;
  registerHarness(h);
  // The same computation as an op of several kernels (prefill.tile).
  h.kernel = "gdn_prefill_split";
  registerHarness(h);
  // Split with the product of P and Vnew in the scan (prefill.tile).
  h.kernel = "gdn_prefill_split_pv";
  registerHarness(h);
  // Split with long sequences cut into segments scanned side by side.
  h.kernel = "gdn_prefill_split_cp";
  registerHarness(h);
}
