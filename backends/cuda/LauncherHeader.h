//===- LauncherHeader.h - a host launcher for generated CUDA ----*- C++ -*-===//
//
// `kiln compile --emit cuda -o NAME.cu` also writes NAME.h: a C++ launcher
// per op that needs no Kiln library. It takes typed device pointers, the
// runtime dims and a stream; checks the dims; computes the grid (persistent
// CTAs included); encodes the TMA descriptors with cuTensorMapEncodeTiled;
// opts into large shared memory; and launches the op's kernels in order,
// an `overlap` launch beside the one before it on a second stream where the
// caller gives one. It allocates nothing: an op's scratch is the caller's
// (scratch_bytes says how much). Everything it does comes from the same
// manifest the runtime reads.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_CUDA_LAUNCHERHEADER_H
#define KILN_BACKENDS_CUDA_LAUNCHERHEADER_H

#include "backends/cuda/CudaEmitter.h"
#include "backends/runtime/Manifest.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// `name` as a C++ identifier: a derived dim like `N+1` reads `N_plus_1`.
std::string cIdentifier(const std::string &name);

/// The CUDA source's parameters of kernel `k`, one per argument of its
/// entry in the order the runtime passes them: runtime dims, the kernel's
/// parameters, invariant divisors, tensor maps.
CudaKernelParams cudaKernelParams(const KernelManifest &k);

/// Prints NAME.h for manifest `m` (a kernel or an op), whose kernels NAME.cu
/// (`cudaFile`) defines.
void printLauncherHeader(const KernelManifest &m, const std::string &cudaFile,
                         const std::vector<std::string> &banner, llvm::raw_ostream &os);

} // namespace kiln

#endif
