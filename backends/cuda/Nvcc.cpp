//===- Nvcc.cpp - CUDA source to cubin with nvcc --------------------------===//
#include "backends/cuda/Nvcc.h"

std::string kiln::findNvcc() { return findCudaTool("nvcc", "KILN_NVCC"); }

bool kiln::compileCudaSource(const std::string &source, const TargetDesc &target,
                             std::string &cubin, PtxasReport &report, std::string &error,
                             bool lineInfo) {
  std::string nvcc = findNvcc();
  if (nvcc.empty()) {
    error = "nvcc not found (set KILN_NVCC or install the CUDA toolkit)";
    return false;
  }
  std::vector<std::string> options = {"-arch=" + target.ptxChip,
                                      "-cubin",
                                      "-O3",
                                      "-std=c++17",
                                      "-Xptxas",
                                      "-v",
                                      "-Werror",
                                      "all-warnings"};
  if (lineInfo)
    options.push_back("-lineinfo");
  if (!runCudaTool(nvcc, "cu", source, options, cubin, report.log, error))
    return false;
  parsePtxasLog(report);
  return true;
}
