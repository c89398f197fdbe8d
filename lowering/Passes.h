//===- Passes.h - Kiln's lowering passes ------------------------*- C++ -*-===//
#ifndef KILN_LOWERING_PASSES_H
#define KILN_LOWERING_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace kiln {

#define GEN_PASS_DECL
#include "lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/Passes.h.inc"

/// Registers Kiln's passes and the named pipeline `kiln-cpu-to-llvm`.
void registerAllKilnPasses();

/// The CPU path from scheduled tile IR to the LLVM dialect.
void buildCpuToLLVMPipeline(mlir::OpPassManager &pm);

/// The GPU path's shared half: scheduled tile IR to structured GPU kernels,
/// llvm.func kernels whose bodies are scf control flow over arith, llvm
/// memory ops and nvvm instructions. Every plan (roles, rings, layouts,
/// tensor-core tiling) is decided here; both emitters start from its output.
void buildGpuKernelPipeline(mlir::OpPassManager &pm);

/// The PTX emitter's half: structured GPU kernels to the LLVM dialect +
/// NVVM intrinsics, ready for translation to LLVM IR and the NVPTX backend.
void buildGpuKernelToLLVMPipeline(mlir::OpPassManager &pm);

/// The CUDA C++ emitter's half: structured GPU kernels with index arithmetic
/// computed in 32 bits wherever integer range analysis bounds it (a thread's
/// lane and warp coordinates, a block index along y or z), widened where it
/// meets 64-bit offsets. LLVM narrows such arithmetic itself on the PTX path;
/// nvcc's front end does not, and left it as 64-bit shifts, multiplies and
/// carries.
void buildCudaSourcePipeline(mlir::OpPassManager &pm);

/// Both halves: scheduled tile IR to LLVM dialect + NVVM.
void buildNvvmPipeline(mlir::OpPassManager &pm);

} // namespace kiln

#endif
