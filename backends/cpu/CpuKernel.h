//===- CpuKernel.h - run scheduled tile IR on the CPU -----------*- C++ -*-===//
#ifndef KILN_BACKENDS_CPU_CPUKERNEL_H
#define KILN_BACKENDS_CPU_CPUKERNEL_H

#include "backends/cpu/KernelSignature.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>

namespace mlir {
class ExecutionEngine;
}

namespace kiln {

/// A kernel, or an op of several kernels, lowered through the CPU pipeline
/// and JIT-compiled.
class CpuKernel {
public:
  ~CpuKernel();
  /// Lowers `module` in place and JIT-compiles it: one scheduled tile.kernel,
  /// or a tile.op with the kernels it launches (the op becomes a launch plan).
  static std::unique_ptr<CpuKernel> compile(mlir::ModuleOp module, std::string &error);

  /// The kernel's signature, or the op's.
  const KernelSignature &signature() const { return plan.empty() ? kernels.at(0) : plan.signature; }
  /// Checks the arguments and runs the whole grid (an op: allocates its
  /// scratch, filled with 0xff bytes so that unwritten reads show as NaN,
  /// and runs its kernels in order).
  bool launch(const std::vector<ArgValue> &args, std::string &error);

private:
  bool launchKernel(const KernelSignature &sig, const std::vector<ArgValue> &args,
                    std::string &error);
  std::vector<KernelSignature> kernels;
  OpPlan plan;
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

} // namespace kiln

#endif
