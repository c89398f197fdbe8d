//===- Target.cpp - target descriptions -----------------------------------===//
#include "dsl/schedule/Target.h"

using namespace kiln;

static const std::vector<TargetDesc> &targets() {
  static const std::vector<TargetDesc> all = [] {
    std::vector<TargetDesc> t;
    TargetDesc cpu;
    cpu.name = "cpu";
    cpu.mmaKinds = {{"none"}, {"simt"}};
    cpu.copyKinds = {"ld"};
    cpu.maxWarps = 32;
    t.push_back(cpu);

    TargetDesc hopper;
    hopper.name = "sm_90a";
    hopper.isGpu = true;
    hopper.ptxChip = "sm_90a";
    hopper.ptxFeatures = "+ptx86"; // CUDA 13's ptxas reads PTX ISA up to 9.0
    hopper.hasTma = true;
    hopper.hasSetMaxNReg = true;
    hopper.mmaKinds = {{"none"}, {"simt"}, {"mma_sync"}, {"wgmma", 4, true, 4}};
    // cp.async (Ampere's copies) is not lowered: a TMA ring does its job
    // on these targets, so a schedule asking for it is rejected.
    // `shared`: a ring whose stages a computing role fills with plain
    // shared-memory stores for other roles to read (no copy engine).
    hopper.copyKinds = {"ld", "tma", "bulk", "shared"};
    hopper.smemBytes = 232448; // 227 KB opt-in
    hopper.regsPerThread = 255;
    hopper.regsPerSM = 65536;
    hopper.schedulersPerSM = 4;
    hopper.maxWarps = 32;
    hopper.bandwidthBytesPerS = 3.35e12;
    hopper.bf16FlopsPerS = 989e12;
    t.push_back(hopper);

    TargetDesc blackwell = hopper;
    blackwell.name = "sm_100a";
    blackwell.ptxChip = "sm_100a";
    blackwell.mmaKinds = {{"none"}, {"simt"}, {"mma_sync"}, {"tcgen05", 4, true, 1}};
    blackwell.tmemColumns = 512;
    blackwell.bandwidthBytesPerS = 8e12;
    blackwell.bf16FlopsPerS = 2.25e15;
    t.push_back(blackwell);
    return t;
  }();
  return all;
}

const TargetDesc *kiln::lookupTarget(const std::string &name) {
  for (const TargetDesc &t : targets())
    if (t.name == name)
      return &t;
  return nullptr;
}

std::string kiln::targetNames() {
  std::string s;
  for (const TargetDesc &t : targets())
    s += (s.empty() ? "" : ", ") + t.name;
  return s;
}
