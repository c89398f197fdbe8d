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

/// A kernel lowered through the CPU pipeline and JIT-compiled.
class CpuKernel {
public:
  ~CpuKernel();
  /// Lowers `module` (one scheduled tile.kernel) in place and JIT-compiles it.
  static std::unique_ptr<CpuKernel> compile(mlir::ModuleOp module, std::string &error);

  const KernelSignature &signature() const { return sig; }
  /// Checks the arguments and runs the whole grid.
  bool launch(const std::vector<ArgValue> &args, std::string &error);

private:
  KernelSignature sig;
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

} // namespace kiln

#endif
