//===- Golden.cpp - float64 reference of Gated Delta Net ------------------===//
#include "ops/gdn/Golden.h"
#include "ops/Harness.h"

#include <cmath>

using namespace kiln;

static double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

void gdn::recurrence(const Problem &p, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                     const uint16_t *a, const uint16_t *b, const float *A_log, const float *dt_bias,
                     std::vector<double> &state, std::vector<double> &o) {
  const int64_t H = p.H, HV = p.HV, K = p.K, V = p.V;
  const int64_t N = p.cuSeqlens.size() - 1, T = p.cuSeqlens.back();
  const double scale = p.scale ? p.scale : 1.0 / std::sqrt((double)K);
  o.assign(T * HV * V, 0.0);
  std::vector<double> qv(K), kv(K), kS(V);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t hv = 0; hv < HV; ++hv) {
      const int64_t h = hv / (HV / H);
      double *S = &state[(n * HV + hv) * V * K];
      for (int64_t t = p.cuSeqlens[n]; t < p.cuSeqlens[n + 1]; ++t) {
        for (int64_t i = 0; i < K; ++i) {
          qv[i] = fromBf16(q[(t * H + h) * K + i]);
          kv[i] = fromBf16(k[(t * H + h) * K + i]);
        }
        if (p.l2norm) {
          for (std::vector<double> *x : {&qv, &kv}) {
            double ss = 0;
            for (double e : *x)
              ss += e * e;
            double inv = 1.0 / std::sqrt(ss + 1e-6);
            for (double &e : *x)
              e *= inv;
          }
        }
        const double g =
            -std::exp((double)A_log[hv]) * softplus(fromBf16(a[t * HV + hv]) + (double)dt_bias[hv]);
        const double alpha = std::exp(g);
        const double beta = 1.0 / (1.0 + std::exp(-(double)fromBf16(b[t * HV + hv])));
        for (int64_t r = 0; r < V; ++r) {
          double acc = 0;
          for (int64_t c = 0; c < K; ++c) {
            S[r * K + c] *= alpha;
            acc += S[r * K + c] * kv[c];
          }
          kS[r] = acc;
        }
        for (int64_t r = 0; r < V; ++r) {
          const double d = beta * (fromBf16(v[(t * HV + hv) * V + r]) - kS[r]);
          double out = 0;
          for (int64_t c = 0; c < K; ++c) {
            S[r * K + c] += d * kv[c];
            out += S[r * K + c] * qv[c];
          }
          o[(t * HV + hv) * V + r] = scale * out;
        }
      }
    }
  }
}
