//===- Target.h - what each target can do and how much it has ---*- C++ -*-===//
//
// Passes and the schedule validator ask these descriptions; nothing else in
// Kiln branches on a target's name.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_SCHEDULE_TARGET_H
#define KILN_DSL_SCHEDULE_TARGET_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// A matrix instruction family a target offers.
struct MmaKind {
  std::string name; // none, simt, mma_sync, wgmma, tcgen05
  /// Warps that issue one instruction together: a tile's product runs on
  /// whole groups of them (wgmma: a warpgroup of 4; tcgen05: one thread
  /// issues, but a warpgroup reads the result from tensor memory).
  int64_t warps = 1;
  /// Multiplies on tensor cores from operands staged in shared memory.
  bool tensorCores = false;
  /// Warps a role that only issues the products (`issues: mma`) must have:
  /// wgmma is issued by a whole warpgroup (its first warp a multiple of 4),
  /// which also holds the accumulators; tcgen05 by one thread, so one warp.
  int64_t issuerWarps = 1;
};

struct TargetDesc {
  std::string name;
  bool isGpu = false;
  std::string ptxChip;           // NVPTX -mcpu and ptxas -arch (GPU targets)
  std::string ptxFeatures;       // NVPTX features: the PTX ISA version
  bool hasTma = false;           // cp.async.bulk.tensor + mbarrier transactions
  bool hasSetMaxNReg = false;    // per-warpgroup register reallocation
  std::vector<MmaKind> mmaKinds; // matrix instructions: simt, wgmma, tcgen05
  /// The kind called `name`, or null when the target has none.
  const MmaKind *mma(const std::string &name) const {
    for (const MmaKind &k : mmaKinds)
      if (k.name == name)
        return &k;
    return nullptr;
  }
  /// The target's tensor-core instruction family, or null.
  const MmaKind *tensorCoreMma() const {
    for (const MmaKind &k : mmaKinds)
      if (k.tensorCores)
        return &k;
    return nullptr;
  }
  std::vector<std::string> copyKinds; // ld, tma, bulk (stores)
  int64_t smemBytes = 0;              // dynamic shared memory per CTA
  int64_t tmemColumns = 0;            // tensor-memory columns per CTA (0: none)
  int64_t regsPerThread = 0;          // architectural maximum
  int64_t regsPerSM = 0;              // register file, 32-bit registers
  /// Warp schedulers per SM: a CTA's warps are dealt to them in turn and
  /// each holds a quarter of the register file, so the busiest one (with
  /// ceil(warps / schedulers) warps) bounds the registers per thread.
  int64_t schedulersPerSM = 1;
  int64_t maxWarps = 0;          // per CTA
  double bandwidthBytesPerS = 0; // nominal DRAM bandwidth, for estimates
  double bf16FlopsPerS = 0;      // nominal dense bf16 tensor rate
};

/// Registers per thread a CTA launches with, given its roles as (regs,
/// warps): the common budget when all roles agree; otherwise roles trade
/// registers with setmaxnreg, which only hands out what others gave back,
/// so the CTA starts with the average, rounded up to setmaxnreg's unit of 8.
inline int64_t launchRegisters(const std::vector<std::pair<int64_t, int64_t>> &roleRegsAndWarps,
                               int64_t warps) {
  int64_t most = 0, total = 0;
  bool same = true;
  for (auto [regs, n] : roleRegsAndWarps) {
    same &= most == 0 || regs == most;
    most = std::max(most, regs);
    total += regs * n;
  }
  if (same || warps == 0)
    return most;
  int64_t avg = (total + warps - 1) / warps;
  return (avg + 7) / 8 * 8;
}

/// Whether two warp ranges [first, first + count) touch a common warpgroup
/// (4 warps from a multiple of 4), the unit setmaxnreg works on.
inline bool shareWarpgroup(int64_t firstA, int64_t countA, int64_t firstB, int64_t countB) {
  return firstA / 4 <= (firstB + countB - 1) / 4 && firstB / 4 <= (firstA + countA - 1) / 4;
}

/// The description of `name`, or null for an unknown target.
const TargetDesc *lookupTarget(const std::string &name);
/// Names of all targets, for messages.
std::string targetNames();

} // namespace kiln

#endif
