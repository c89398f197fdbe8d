//===- CudaEmitter.h - structured GPU kernels to CUDA C++ -------*- C++ -*-===//
//
// The second emitter of the GPU path. buildGpuKernelPipeline plans and
// lowers a scheduled op to structured GPU kernels (llvm.func kernels whose
// bodies are scf control flow over arith, llvm memory ops and nvvm
// instructions); the PTX backend lowers those further to LLVM IR, this one
// prints them as CUDA C++ that nvcc compiles. Both read the same IR, so the
// CUDA source keeps every decision the plan made (roles as branches over the
// warp index, ring stages and mbarriers at the plan's offsets, each
// thread's registers of a tile's layout) and derives none of its own.
//
// Instructions CUDA C++ has no intrinsic for (wgmma, tcgen05, TMA copies,
// mbarrier waits, setmaxnreg, proxy fences) become small `asm volatile`
// helpers, each defined once at the top of the file; everything else is
// plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_CUDA_CUDAEMITTER_H
#define KILN_BACKENDS_CUDA_CUDAEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace kiln {

/// A kernel's parameters as the CUDA source declares them, one per argument
/// of its llvm.func: a C++ name and type (`const float *__restrict__`,
/// `int64_t`, `const __grid_constant__ CUtensorMap`).
struct CudaKernelParams {
  std::vector<std::string> names, types;
};

struct CudaSourceInfo {
  /// Comment lines at the top of the file (what it was generated from).
  std::vector<std::string> banner;
  /// Per kernel entry; a kernel without one gets `argN` of the IR's types.
  std::map<std::string, CudaKernelParams> params;
  /// `#line` before every line of a kernel's body: its op's .tile line.
  bool lineDirectives = false;
};

/// Prints every kernel of `module` (buildGpuKernelPipeline's output) as one
/// CUDA C++ translation unit. Fails with `error` naming the construct and
/// the source line where the IR holds something the emitter cannot express.
/// The same module gives byte-identical text.
bool emitCudaSource(mlir::ModuleOp module, const CudaSourceInfo &info, llvm::raw_ostream &os,
                    std::string &error);

} // namespace kiln

#endif
