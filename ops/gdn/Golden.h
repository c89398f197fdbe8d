//===- Golden.h - float64 reference of Gated Delta Net ----------*- C++ -*-===//
//
// Plain C++, token by token, exactly ../shared/spec/gdn.md; it shares no code
// with the compiler. Inputs are bf16 bits (as the kernels read them), the
// state is float64.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_OPS_GDN_GOLDEN_H
#define KILN_OPS_GDN_GOLDEN_H

#include <cstdint>
#include <vector>

namespace kiln::gdn {

struct Problem {
  int64_t H = 4, HV = 8, K = 128, V = 128;
  std::vector<int64_t> cuSeqlens; // N + 1 offsets into the packed tokens
  bool l2norm = true;
  double scale = 0; // 0: 1/sqrt(K)
};

/// Packed varlen recurrence. q, k: [T, H, K]; v: [T, HV, V]; a, b: [T, HV]
/// (bf16 bits); A_log, dt_bias: [HV]. `state`: [N, HV, V, K], the initial
/// state on entry (zeros if the caller wants none) and the final on return.
/// `o`: [T, HV, V].
void recurrence(const Problem &p, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                const uint16_t *a, const uint16_t *b, const float *A_log, const float *dt_bias,
                std::vector<double> &state, std::vector<double> &o);

} // namespace kiln::gdn

#endif
