// GDN decode from a C++ program, through the CUDA source and launcher Kiln
// generates (no Kiln library): one step for B requests, checked against a
// float64 step of the recurrence (ops/gdn/decode.tile's spec, shared/spec/gdn.md).
//
//   kiln compile ops/gdn/decode.tile -s ops/gdn/schedules/decode_sm_90a_tma.yaml \
//     --emit cuda -o gen/gdn_decode.cu          # writes gen/gdn_decode.{cu,h,json}
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Igen main.cu \
//     gen/gdn_decode.cu -lcuda -o gdn_decode
#include "gdn_decode.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                                 \
      return 2;                                                                                    \
    }                                                                                              \
  } while (0)

template <class T> T *upload(const std::vector<T> &host) {
  T *device = nullptr;
  cudaMalloc(&device, host.size() * sizeof(T));
  cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return device;
}

int main() {
  const int64_t B = 7, H = 4, HV = 8, K = 128, V = 128, N = B;
  std::mt19937 gen(7);
  std::normal_distribution<float> normal;
  auto bf16s = [&](size_t n) {
    std::vector<__nv_bfloat16> x(n);
    for (auto &e : x)
      e = __float2bfloat16(normal(gen));
    return x;
  };
  auto q = bf16s(B * H * K), k = bf16s(B * H * K), v = bf16s(B * HV * V), a = bf16s(B * HV),
       b = bf16s(B * HV);
  std::vector<float> A_log(HV), dt_bias(HV), state(N * HV * V * K);
  for (auto &x : A_log)
    x = 0.5f * normal(gen);
  for (auto &x : dt_bias)
    x = 0.5f * normal(gen);
  for (auto &x : state)
    x = normal(gen);
  std::vector<int32_t> slots(B);
  for (int64_t n = 0; n < B; ++n)
    slots[n] = (int32_t)(B - 1 - n); // request n updates pool row B-1-n
  const float scale = 1.0f / std::sqrt((float)K);

  __nv_bfloat16 *o = nullptr;
  CHECK(cudaMalloc(&o, B * HV * V * sizeof(__nv_bfloat16)));
  float *dState = upload(state);
  kiln::gdn_decode::Dims dims;
  dims.B = B, dims.H = H, dims.HV = HV, dims.N = N;
  CHECK(kiln::gdn_decode::launch(upload(q), upload(k), upload(v), upload(a), upload(b),
                                 upload(A_log), upload(dt_bias), upload(slots), dState, o, scale,
                                 dims, /*stream=*/0));
  CHECK(cudaDeviceSynchronize());
  std::vector<__nv_bfloat16> gotO(B * HV * V);
  std::vector<float> gotState(state.size());
  CHECK(cudaMemcpy(gotO.data(), o, gotO.size() * 2, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(gotState.data(), dState, gotState.size() * 4, cudaMemcpyDeviceToHost));

  // The float64 step: L2-normalised q and k, alpha = exp(-exp(A_log) softplus(a + dt_bias)),
  // beta = sigmoid(b), S = alpha S + beta (v - alpha S k) k^T, o = scale S q.
  double errO = 0, normO = 0, errS = 0, normS = 0;
  for (int64_t n = 0; n < B; ++n)
    for (int64_t hv = 0; hv < HV; ++hv) {
      const int64_t h = hv / (HV / H);
      std::vector<double> qn(K), kn(K);
      double sq = 0, sk = 0;
      for (int64_t i = 0; i < K; ++i) {
        qn[i] = __bfloat162float(q[(n * H + h) * K + i]);
        kn[i] = __bfloat162float(k[(n * H + h) * K + i]);
        sq += qn[i] * qn[i], sk += kn[i] * kn[i];
      }
      for (int64_t i = 0; i < K; ++i)
        qn[i] /= std::sqrt(sq + 1e-6), kn[i] /= std::sqrt(sk + 1e-6);
      const double x = __bfloat162float(a[n * HV + hv]) + dt_bias[hv];
      const double alpha = std::exp(-std::exp((double)A_log[hv]) * (x > 20 ? x : std::log1p(std::exp(x))));
      const double beta = 1 / (1 + std::exp(-(double)__bfloat162float(b[n * HV + hv])));
      const float *S0 = &state[(slots[n] * HV + hv) * V * K];
      const float *S1 = &gotState[(slots[n] * HV + hv) * V * K];
      for (int64_t r = 0; r < V; ++r) {
        double kS = 0;
        for (int64_t c = 0; c < K; ++c)
          kS += alpha * S0[r * K + c] * kn[c];
        const double d = beta * (__bfloat162float(v[(n * HV + hv) * V + r]) - kS);
        double out = 0;
        for (int64_t c = 0; c < K; ++c) {
          const double s = alpha * S0[r * K + c] + d * kn[c];
          out += s * qn[c];
          errS += (S1[r * K + c] - s) * (S1[r * K + c] - s), normS += s * s;
        }
        const double got = __bfloat162float(gotO[(n * HV + hv) * V + r]);
        errO += (got - scale * out) * (got - scale * out), normO += scale * out * scale * out;
      }
    }
  const double relO = std::sqrt(errO / normO), relS = std::sqrt(errS / normS);
  const bool pass = relO < 1e-2 && relS < 1e-4 && std::isfinite(relO) && std::isfinite(relS);
  std::printf("gdn_decode B=%lld H=%lld HV=%lld: o rel_err %.2e (tol 1e-2), state rel_err %.2e "
              "(tol 1e-4): %s\n",
              (long long)B, (long long)H, (long long)HV, relO, relS, pass ? "PASS" : "FAIL");
  return pass ? 0 : 1;
}
