//===- DecodeHarness.cpp - random inputs and golden check for decode ------===//
//
// Requests n = 0..B-1 each bring one token; request n's state is row
// slots[n] of a pool of N slots. A negative slot is padding: its output is
// zeros and no state row changes.
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

bool runDecode(const RunConfig &cfg, const Launcher &launch, std::vector<CheckResult> &checks,
               std::string &error) {
  const int64_t B = cfg.dims.at("B"), H = cfg.dims.at("H"), HV = cfg.dims.at("HV");
  const int64_t K = cfg.constants.at("K"), V = cfg.constants.at("V");
  const bool l2 = cfg.constants.count("USE_QK_L2NORM") ? cfg.constants.at("USE_QK_L2NORM") : true;
  if (HV % H) {
    error = "HV (" + std::to_string(HV) + ") must be a multiple of H (" + std::to_string(H) + ")";
    return false;
  }
  const int64_t N = cfg.dims.count("N") ? cfg.dims.at("N") : B + 2; // pool larger than the batch
  // The pool, its copy and the golden's f64 states; the tokens are smaller.
  if (!fitsHostMemory(32.0 * N * HV * V * K + 24.0 * B * (H * K + HV * V),
                      "the run at " + describeShape(cfg), error))
    return false;
  std::mt19937_64 rng(cfg.seed);
  gdn::Inputs in = gdn::randomInputs(rng, B, H, HV, K, V, l2, cfg);
  std::vector<uint16_t> &q = in.q, &k = in.k, &v = in.v, &a = in.a, &b = in.b;
  std::vector<float> &A_log = in.A_log, &dt_bias = in.dt_bias;
  // Slots: a permutation of distinct pool rows, some requests padded with -1.
  std::vector<int32_t> slots(B);
  std::vector<int32_t> rows(N);
  std::iota(rows.begin(), rows.end(), 0);
  std::shuffle(rows.begin(), rows.end(), rng);
  for (int64_t n = 0; n < B; ++n)
    slots[n] = rows[n % N];
  int64_t skips = std::llround(cfg.skipFraction * B);
  for (int64_t n = 0; n < skips; ++n)
    slots[(n * 7 + 3) % B] = -1;
  gdn::StateTensor state;
  if (!gdn::StateTensor::forConfig(cfg, state, error))
    return false;
  const int64_t row = HV * V * K; // one pool slot
  state.resize(N * row);
  state.fillNormal(rng, 0, N * row);
  const gdn::StateTensor stateBefore = state;
  std::vector<uint16_t> o(B * HV * V, 0x7fc0); // poisoned: NaN until written
  const double scale = 1.0 / std::sqrt((double)K);

  std::vector<ArgValue> args = {ArgValue::tensor(q.data(), {B, 1, H, K}, DType::BF16),
                                ArgValue::tensor(k.data(), {B, 1, H, K}, DType::BF16),
                                ArgValue::tensor(v.data(), {B, 1, HV, V}, DType::BF16),
                                ArgValue::tensor(a.data(), {B, 1, HV}, DType::BF16),
                                ArgValue::tensor(b.data(), {B, 1, HV}, DType::BF16),
                                ArgValue::tensor(A_log.data(), {HV}, DType::F32),
                                ArgValue::tensor(dt_bias.data(), {HV}, DType::F32),
                                ArgValue::tensor(slots.data(), {B}, DType::I32),
                                ArgValue::tensor(state.data(), {N, HV, V, K}, state.dtype()),
                                ArgValue::tensor(o.data(), {B, 1, HV, V}, DType::BF16),
                                ArgValue::number(scale)};
  if (!launch(args, error))
    return false;

  // Golden: every active request is a sequence of length 1 with its slot's state.
  std::vector<int64_t> active;
  for (int64_t n = 0; n < B; ++n)
    if (slots[n] >= 0)
      active.push_back(n);
  gdn::Problem p;
  p.H = H, p.HV = HV, p.K = K, p.V = V, p.l2norm = l2, p.scale = scale;
  p.cuSeqlens.resize(active.size() + 1);
  std::iota(p.cuSeqlens.begin(), p.cuSeqlens.end(), 0);
  auto gather = [&](const std::vector<uint16_t> &x, int64_t row) {
    std::vector<uint16_t> out;
    for (int64_t n : active)
      out.insert(out.end(), x.begin() + n * row, x.begin() + (n + 1) * row);
    return out;
  };
  std::vector<double> refState, refO;
  for (int64_t n : active) {
    std::vector<double> s = stateBefore.values(slots[n] * row, (slots[n] + 1) * row);
    refState.insert(refState.end(), s.begin(), s.end());
  }
  std::vector<uint16_t> gq = gather(q, H * K), gk = gather(k, H * K), gv = gather(v, HV * V),
                        ga = gather(a, HV), gb = gather(b, HV);
  gdn::recurrence(p, gq.data(), gk.data(), gv.data(), ga.data(), gb.data(), A_log.data(),
                  dt_bias.data(), refState, refO);

  std::vector<double> gotO(B * HV * V), wantO(B * HV * V, 0.0);
  for (int64_t i = 0; i < B * HV * V; ++i)
    gotO[i] = fromBf16(o[i]);
  for (size_t j = 0; j < active.size(); ++j)
    std::copy(refO.begin() + j * HV * V, refO.begin() + (j + 1) * HV * V,
              wantO.begin() + active[j] * HV * V);
  checks.push_back(compare("o", gotO, wantO, 1e-2));

  std::vector<double> gotS, wantS;
  for (size_t j = 0; j < active.size(); ++j) {
    int64_t slot = slots[active[j]];
    std::vector<double> s = state.values(slot * row, (slot + 1) * row);
    gotS.insert(gotS.end(), s.begin(), s.end());
  }
  // The kernel rounds the state once, as it stores it: so does the golden.
  for (double x : refState)
    wantS.push_back(state.round(x));
  checks.push_back(compare("state", gotS, wantS, state.tolerance(1e-4)));

  // Rows no active request owns must be bit-identical to before.
  std::vector<bool> owned(N, false);
  for (int64_t n : active)
    owned[slots[n]] = true;
  checks.push_back(state.untouchedRows("untouched slots", stateBefore, row, owned));
  return true;
}

} // namespace

void registerGdnDecodeHarness() {
  OpHarness h;
  h.kernel = "gdn_decode";
  h.dims = {"B", "H", "HV", "N"};
  h.defaultDims = {{"B", 3}, {"H", 4}, {"HV", 8}};
  RunConfig one, many;
  one.dims = {{"B", 1}, {"H", 4}, {"HV", 8}};
  many.dims = {{"B", 7}, {"H", 16}, {"HV", 32}};
  many.skipFraction = 0.3;
  h.checkConfigs = {one, many};
  h.run = runDecode;
  registerHarness(h);
}
