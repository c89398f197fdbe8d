//===- Nvcc.h - CUDA source to cubin with nvcc ------------------*- C++ -*-===//
#ifndef KILN_BACKENDS_CUDA_NVCC_H
#define KILN_BACKENDS_CUDA_NVCC_H

#include "backends/ptx/PtxBackend.h"
#include "dsl/schedule/Target.h"

#include <string>

namespace kiln {

/// Path of nvcc (findCudaTool with $KILN_NVCC).
std::string findNvcc();

/// Compiles CUDA `source` for `target` into `cubin` with nvcc, fills
/// `report` from ptxas's resource lines as assemblePtx does. Any warning is
/// an error: generated source compiles clean or not at all. Multiplies and
/// adds may fuse (nvcc's default), as the NVVM path's plain mul.f32 /
/// add.f32 let ptxas fuse them. With `lineInfo`, the cubin keeps the
/// source's line table (nvcc -lineinfo).
bool compileCudaSource(const std::string &source, const TargetDesc &target, std::string &cubin,
                       PtxasReport &report, std::string &error, bool lineInfo = false);

} // namespace kiln

#endif
