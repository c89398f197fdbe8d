//===- PtxBackend.h - NVVM kernels to PTX and cubins ------------*- C++ -*-===//
//
// LLVM dialect + NVVM -> LLVM IR -> NVPTX (in process) -> PTX text, then
// ptxas (when the CUDA toolkit is present) -> cubin with its resource report.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_PTX_PTXBACKEND_H
#define KILN_BACKENDS_PTX_PTXBACKEND_H

#include "dsl/schedule/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// Translates a module the NVVM pipeline produced into PTX for `target`
/// (its chip and PTX ISA version come from the target description), after
/// LLVM's O3 pipeline. Returns nothing and sets `error` on failure.
std::optional<std::string> emitPtx(mlir::ModuleOp module, const TargetDesc &target,
                                   std::string &error);

/// What ptxas reports for one kernel.
struct PtxasReport {
  std::string kernel;
  int registers = 0;
  int64_t sharedBytes = 0; // static shared memory
  int64_t stackBytes = 0;
  int64_t spillStores = 0, spillLoads = 0;
  /// Waits for the tensor cores that ptxas added where the PTX has none
  /// (advisory C7517: registers a wgmma defines, used before a wait ptxas
  /// can see): every product in flight waits there, so work meant to run
  /// beside a product runs after it.
  int injectedWaits = 0;
  /// Why ptxas serialized every wgmma of the kernel (advisory C7512, "due
  /// to insufficient register resources", say), empty when it did not:
  /// each product then waits for the one before, so none runs beside
  /// another or beside the work after it.
  std::string wgmmaSerialized;
  std::string log; // everything ptxas printed
  /// Per entry function, when the image has several (an op's kernels);
  /// the fields above are then the largest (spills: the sum) of them.
  std::vector<PtxasReport> entries;
};

/// Path of CUDA toolkit program `name`: $`envVar`, then $CUDA_HOME/bin,
/// then /usr/local/cuda/bin, then PATH. Empty when none is found.
std::string findCudaTool(const std::string &name, const char *envVar);

/// Path of ptxas (findCudaTool with $KILN_PTXAS).
std::string findPtxas();

/// Runs `tool OPTIONS... IN -o OUT` on `input` written to a temporary file
/// IN ending in `.inputExt`; fills `output` with OUT's bytes and `log` with
/// what the tool printed. Fails with `error` naming the tool and its log.
bool runCudaTool(const std::string &tool, const std::string &inputExt, const std::string &input,
                 const std::vector<std::string> &options, std::string &output, std::string &log,
                 std::string &error);

/// Assembles `ptx` for `target` with ptxas into `cubin` (bytes). Fails with a
/// message when ptxas is missing or rejects the PTX. With `lineInfo`, the
/// cubin keeps the PTX's `.loc` lines (ptxas -lineinfo) for profilers.
bool assemblePtx(const std::string &ptx, const TargetDesc &target, std::string &cubin,
                 PtxasReport &report, std::string &error, bool lineInfo = false);

/// Fills `report` (its entries, the worst of them, the injected waits) from
/// what ptxas -v printed, `report.log`.
void parsePtxasLog(PtxasReport &report);

} // namespace kiln

#endif
