//===- Inputs.h - random GDN inputs for the harnesses -----------*- C++ -*-===//
//
// The distributions of ../shared/spec/gdn.md ("Tolerances"), shared by the
// decode and prefill harnesses so both ops see the same kind of data.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_OPS_GDN_INPUTS_H
#define KILN_OPS_GDN_INPUTS_H

#include "ops/Harness.h"

#include <cstdint>
#include <random>
#include <vector>

namespace kiln::gdn {

struct Inputs {
  std::vector<uint16_t> q, k, v, a, b; // bf16 bits; [T, H, K], [T, HV, V], [T, HV]
  std::vector<float> A_log, dt_bias;   // [HV]
};

/// T tokens. Without the in-kernel L2 norm, keys are unit vectors already
/// (unnormalised keys make the recurrence grow without bound). The raw
/// gates a, b follow the spec's N(0, 1) unless `cfg` asks for saturated
/// (standard deviation 30) or slow ones (a around -8).
Inputs randomInputs(std::mt19937_64 &rng, int64_t T, int64_t H, int64_t HV, int64_t K, int64_t V,
                    bool l2norm, const RunConfig &cfg);

} // namespace kiln::gdn

#endif
