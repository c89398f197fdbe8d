// The launcher header of an op whose kernels start early (programmatic
// dependent launch; tests/lit/schedule/Inputs/early.tile), run on a GPU: its
// four launches (the last three started early, the fourth overwriting what
// the second reads) give the host's results, bit for bit, call after call,
// outputs poisoned before each, on a stream of its own and on the default
// stream. The first kernel dawdles (`reps`), so that the second, started
// early, would read its scratch before the first wrote it if it did not
// wait (built from the CUDA source with the waits taken out, this fails).
//
//   kiln compile tests/lit/schedule/Inputs/early.tile \
//     -s tests/lit/schedule/Inputs/early_sm_90a.yaml --emit cuda -o gen/early.cu
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Werror all-warnings -Igen \
//     tests/gpu/early_chain.cu gen/early.cu -lcuda -o early_chain && ./early_chain
#include "early.h"

#include <cstdio>
#include <cstring>
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

int main() {
  std::mt19937 gen(5);
  std::normal_distribution<float> normal;
  int failures = 0;
  cudaStream_t own;
  CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
  for (int64_t T : {1, 37, 4096, 1 << 20, 1 << 23}) {
    const size_t n = T * 8;
    std::vector<float> x(n), y(n), z(n);
    for (float &e : x)
      e = normal(gen);
    float *dx, *dy, *dz;
    void *scratch;
    const kiln::chain::Dims dims{T};
    CHECK(cudaMalloc(&dx, n * 4));
    CHECK(cudaMalloc(&dy, n * 4));
    CHECK(cudaMalloc(&dz, n * 4));
    CHECK(cudaMalloc(&scratch, kiln::chain::scratch_bytes(dims)));
    CHECK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
    int wrong = 0;
    const int reps = T <= 4096 ? 20000 : 0;
    for (int call = 0; call < 20; ++call) {
      cudaStream_t stream = call % 2 ? own : nullptr;
      CHECK(cudaMemset(dy, 0xff, n * 4)); // NaN: an element no kernel wrote fails
      CHECK(cudaMemset(dz, 0xff, n * 4));
      CHECK(cudaMemset(scratch, 0, kiln::chain::scratch_bytes(dims)));
      CHECK(cudaDeviceSynchronize());
      CHECK(kiln::chain::launch(dx, dy, dz, reps, dims, stream, scratch));
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaMemcpy(y.data(), dy, n * 4, cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(z.data(), dz, n * 4, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < n; ++i) {
        float wantY = x[i] * (x[i] * 2.0f), wantZ = x[i] + 1.0f;
        bool bad = std::memcmp(&y[i], &wantY, 4) != 0 || std::memcmp(&z[i], &wantZ, 4) != 0;
        if (bad && !wrong)
          std::printf("  T=%lld call %d element %zu: y %g (want %g), z %g (want %g)\n",
                      (long long)T, call, i, y[i], wantY, z[i], wantZ);
        wrong += bad;
      }
    }
    std::printf("%s T=%lld: %d wrong elements in 20 calls\n", wrong ? "FAIL" : "PASS", (long long)T,
                wrong);
    failures += wrong != 0;
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dz);
    cudaFree(scratch);
  }
  cudaStreamDestroy(own);
  return failures ? 1 : 0;
}
