//===- CpuKernel.h - run scheduled tile IR on the CPU -----------*- C++ -*-===//
#ifndef KILN_BACKENDS_CPU_CPUKERNEL_H
#define KILN_BACKENDS_CPU_CPUKERNEL_H

#include "backends/cpu/KernelSignature.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <memory>

namespace mlir {
class ExecutionEngine;
}

namespace kiln {

/// A kernel lowered through the CPU pipeline and JIT-compiled.
class CpuKernel {
public:
  ~CpuKernel();
  /// Lowers `module` (one scheduled tile.kernel) in place and JIT-compiles
  /// it. `afterPass`, when set, sees the IR after every pass.
  static std::unique_ptr<CpuKernel>
  compile(mlir::ModuleOp module, std::string &error,
          std::function<void(llvm::StringRef pass, mlir::Operation *)> afterPass = nullptr);

  const KernelSignature &signature() const { return sig; }
  /// Checks the arguments and runs the whole grid.
  bool launch(const std::vector<ArgValue> &args, std::string &error);

private:
  KernelSignature sig;
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

} // namespace kiln

#endif
