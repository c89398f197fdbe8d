//===- Inputs.cpp - random GDN inputs for the harnesses -------------------===//
#include "ops/gdn/Inputs.h"
#include "ops/Harness.h"

#include <cmath>

using namespace kiln;

gdn::Inputs gdn::randomInputs(std::mt19937_64 &rng, int64_t T, int64_t H, int64_t HV, int64_t K,
                              int64_t V, bool l2norm, const RunConfig &cfg) {
  const double gateSd = cfg.saturateGates ? 30.0 : 1.0, gateMean = cfg.slowGates ? -8.0 : 0.0;
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  auto bf16s = [&](int64_t n, double sd) {
    std::vector<uint16_t> x(n);
    for (auto &e : x)
      e = toBf16(sd * normal(rng));
    return x;
  };
  Inputs in;
  in.q = bf16s(T * H * K, 1.0);
  in.k = bf16s(T * H * K, 1.0);
  in.v = bf16s(T * HV * V, 1.0);
  if (!l2norm)
    for (int64_t t = 0; t < T * H; ++t) {
      double ss = 0;
      for (int64_t i = 0; i < K; ++i)
        ss += std::pow(fromBf16(in.k[t * K + i]), 2);
      for (int64_t i = 0; i < K; ++i)
        in.k[t * K + i] = toBf16(fromBf16(in.k[t * K + i]) / std::sqrt(ss + 1e-6));
    }
  in.a = bf16s(T * HV, gateSd);
  for (auto &e : in.a)
    e = toBf16(fromBf16(e) + gateMean);
  in.b = bf16s(T * HV, gateSd);
  in.A_log.resize(HV);
  in.dt_bias.resize(HV);
  for (int64_t i = 0; i < HV; ++i) {
    in.A_log[i] = uniform(rng);
    in.dt_bias[i] = 0.5 * normal(rng);
  }
  return in;
}
