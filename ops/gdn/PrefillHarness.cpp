//===- PrefillHarness.cpp - random inputs and golden check for prefill ----===//
//
// A packed batch of sequences with the configured lengths (cu_seqlens), their
// states in a pool of rows picked by state_indices (random initial states
// updated in place, or none: then the kernel gets a NaN pool it must not
// read), outputs poisoned with NaN. gdn_prefill_checkpoints also writes the
// state every CKPT_EVERY tokens of each sequence: each checkpoint is checked
// against the float64 recurrence run over that prefix of its sequence.
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

bool runPrefill(const RunConfig &cfg, const Launcher &launch, std::vector<CheckResult> &checks,
                std::string &error, bool withCheckpoints) {
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
  // Two pools with the golden's f64 states, and each token's inputs, output
  // and golden output.
  if (!fitsHostMemory(64.0 * (N + 2) * HV * V * K + 32.0 * T * (H * K + HV * V),
                      "the run at " + describeShape(cfg), error))
    return false;

  std::mt19937_64 rng(cfg.seed);
  gdn::Inputs in = gdn::randomInputs(rng, T, H, HV, K, V, l2, cfg);
  // The states live in a pool of P rows; sequence n reads and writes row
  // sidx[n] (distinct rows in shuffled order, one sequence of several with
  // -1: it starts from zeros and writes no state). With an initial state the
  // pool is updated in place (initial and final state are one buffer, as an
  // engine passes them); without one the kernel gets a NaN pool it must not
  // read and a separate NaN pool to write.
  const int64_t P = N + 2, row = HV * V * K;
  std::vector<int32_t> rows(P), sidx(N);
  std::iota(rows.begin(), rows.end(), 0);
  std::shuffle(rows.begin(), rows.end(), rng);
  for (int64_t n = 0; n < N; ++n)
    sidx[n] = n == N / 2 && N > 1 ? -1 : rows[n];
  gdn::StateTensor pool, fresh;
  if (!gdn::StateTensor::forConfig(cfg, pool, error) ||
      !gdn::StateTensor::forConfig(cfg, fresh, error))
    return false;
  pool.resize(P * row);
  if (cfg.initialState)
    pool.fillNormal(rng, 0, P * row);
  else
    fresh.resize(P * row);
  gdn::StateTensor &finalPool = cfg.initialState ? pool : fresh;
  // The pool written, as it was: with an initial state also the states read.
  const gdn::StateTensor before = finalPool;
  std::vector<uint16_t> o(std::max<int64_t>(T, 1) * HV * V, 0x7fc0);
  const double scale = 1.0 / std::sqrt((double)K);
  // Checkpoints: sequence n's j-th (the state after j * every of its
  // tokens) at row starts[n] + j - 1.
  const int64_t every = withCheckpoints ? cfg.constants.at("CKPT_EVERY") : 0;
  std::vector<int64_t> starts(N + 1, 0);
  for (int64_t n = 0; withCheckpoints && n < N; ++n)
    starts[n + 1] = starts[n] + lens[n] / every;
  // Dims are positive: with no checkpoint at all (no sequence reaches one)
  // the buffer has one row, which must stay as poisoned.
  const int64_t NC = starts.back(), ckptRows = std::max<int64_t>(NC, 1);
  gdn::StateTensor ckpt;
  if (withCheckpoints) {
    if (!gdn::StateTensor::forConfig(cfg, ckpt, error))
      return false;
    ckpt.resize(ckptRows * row);
  }

  std::vector<ArgValue> args = {
      ArgValue::tensor(in.q.data(), {T, H, K}, DType::BF16),
      ArgValue::tensor(in.k.data(), {T, H, K}, DType::BF16),
      ArgValue::tensor(in.v.data(), {T, HV, V}, DType::BF16),
      ArgValue::tensor(in.a.data(), {T, HV}, DType::BF16),
      ArgValue::tensor(in.b.data(), {T, HV}, DType::BF16),
      ArgValue::tensor(in.A_log.data(), {HV}, DType::F32),
      ArgValue::tensor(in.dt_bias.data(), {HV}, DType::F32),
      ArgValue::tensor(cu.data(), {N + 1}, DType::I64),
      ArgValue::tensor(sidx.data(), {N}, DType::I32),
      ArgValue::tensor(pool.data(), {P, HV, V, K}, pool.dtype()),
      ArgValue::tensor(finalPool.data(), {P, HV, V, K}, finalPool.dtype()),
      ArgValue::tensor(o.data(), {T, HV, V}, DType::BF16)};
  if (withCheckpoints) {
    args.push_back(ArgValue::tensor(starts.data(), {N + 1}, DType::I64));
    args.push_back(ArgValue::tensor(ckpt.data(), {ckptRows, HV, V, K}, ckpt.dtype()));
  }
  args.push_back(ArgValue::number(scale));
  args.push_back(ArgValue::number(cfg.initialState ? 1 : 0));
  if (!launch(args, error))
    return false;

  gdn::Problem p;
  p.H = H, p.HV = HV, p.K = K, p.V = V, p.l2norm = l2, p.scale = scale;
  p.cuSeqlens = cu;
  std::vector<double> refState(N * row, 0.0), refO;
  for (int64_t n = 0; n < N; ++n)
    if (cfg.initialState && sidx[n] >= 0) {
      std::vector<double> s = before.values(sidx[n] * row, (sidx[n] + 1) * row);
      std::copy(s.begin(), s.end(), refState.begin() + n * row);
    }
  gdn::recurrence(p, in.q.data(), in.k.data(), in.v.data(), in.a.data(), in.b.data(),
                  in.A_log.data(), in.dt_bias.data(), refState, refO);

  std::vector<double> gotO(T * HV * V);
  for (int64_t i = 0; i < T * HV * V; ++i)
    gotO[i] = fromBf16(o[i]);
  checks.push_back(compare("o", gotO, refO, 1e-2));
  // The kernel rounds the final state once, as it stores it: so does the golden.
  std::vector<double> gotS, wantS;
  std::vector<bool> written(P, false);
  for (int64_t n = 0; n < N; ++n) {
    if (sidx[n] < 0)
      continue;
    written[sidx[n]] = true;
    std::vector<double> s = finalPool.values(sidx[n] * row, (sidx[n] + 1) * row);
    gotS.insert(gotS.end(), s.begin(), s.end());
    for (int64_t i = n * row; i < (n + 1) * row; ++i)
      wantS.push_back(finalPool.round(refState[i]));
  }
  checks.push_back(
      compare("state", gotS, wantS, finalPool.tolerance(cfg.roundedOperands ? 2e-3 : 1e-4)));
  // Pool rows no sequence writes must be bit-identical to before.
  checks.push_back(finalPool.untouchedRows("untouched rows", before, row, written));
  if (!withCheckpoints)
    return true;
  // Each checkpoint: the recurrence over its sequence's first j * every
  // tokens, from the sequence's initial state, rounded once as stored.
  std::vector<double> gotC, wantC;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t j = 1; j <= lens[n] / every; ++j) {
      gdn::Problem prefix = p;
      prefix.cuSeqlens = {0, j * every};
      std::vector<double> s(row, 0.0), unusedO;
      if (cfg.initialState && sidx[n] >= 0)
        s = before.values(sidx[n] * row, (sidx[n] + 1) * row);
      const int64_t t = cu[n];
      gdn::recurrence(prefix, &in.q[t * H * K], &in.k[t * H * K], &in.v[t * HV * V], &in.a[t * HV],
                      &in.b[t * HV], in.A_log.data(), in.dt_bias.data(), s, unusedO);
      const int64_t at = (starts[n] + j - 1) * row;
      std::vector<double> got = ckpt.values(at, at + row);
      gotC.insert(gotC.end(), got.begin(), got.end());
      for (double x : s)
        wantC.push_back(ckpt.round(x));
    }
  CheckResult c =
      compare("checkpoints", gotC, wantC, ckpt.tolerance(cfg.roundedOperands ? 2e-3 : 1e-4));
  if (NC == 0)
    for (double x : ckpt.values(0, row))
      if (!std::isnan(x)) {
        c.relError = 1; // a row written where no checkpoint is due
        break;
      }
  checks.push_back(c);
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
  h.run = [](const RunConfig &cfg, const Launcher &launch, std::vector<CheckResult> &checks,
             std::string &error) { return runPrefill(cfg, launch, checks, error, false); };
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
  // The same cut, each segment's transition first, then every segment from
  // its true start.
  h.kernel = "gdn_prefill_split_tr";
  registerHarness(h);
  // One kernel whose chunk work a schedule may hand to a role of its own.
  h.kernel = "gdn_prefill_fused";
  registerHarness(h);
  // The state every CKPT_EVERY tokens as well: sequences ending on a
  // checkpoint, between two, and before the first.
  h.kernel = "gdn_prefill_checkpoints";
  RunConfig ends = varlen;
  ends.seqLens = {256, 1, 300, 128, 0, 127};
  h.checkConfigs = {ends, fresh};
  h.run = [](const RunConfig &cfg, const Launcher &launch, std::vector<CheckResult> &checks,
             std::string &error) { return runPrefill(cfg, launch, checks, error, true); };
  registerHarness(h);
}
