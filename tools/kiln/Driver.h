//===- Driver.h - source + schedule to a scheduled module -------*- C++ -*-===//
#ifndef KILN_TOOLS_KILN_DRIVER_H
#define KILN_TOOLS_KILN_DRIVER_H

#include "backends/ptx/PtxBackend.h"
#include "backends/runtime/Manifest.h"
#include "backends/runtime/Selection.h"
#include "dsl/lang/Compile.h"
#include "dsl/schedule/Schedule.h"
#include "dsl/schedule/Selection.h"
#include "ops/Harness.h"
#include "tools/kiln/Reference.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <map>

namespace kiln {

struct Compiled {
  /// One tile.kernel with its #tile.schedule, or a tile.op and the kernels it
  /// launches, each with the schedule of its section.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  Schedule schedule;
  std::map<std::string, int64_t> constants; // every const of the op, as compiled
  std::map<std::string, std::string> types; // its dtype consts and params (STATE: bf16)
  std::string sourcePath;                   // the .tile file
};

/// Reads `tilePath` and `schedulePath`, compiles the kernel or op the schedule
/// names with `constants` overriding the source's consts, validates and
/// attaches the schedule. Errors go to `errs` with file:line:col. With
/// `retarget`, the schedule's twin for that target (Schedule::retarget).
/// With `float64Reference`, the op's float64 reference: every float type
/// promoted to f64, on the CPU with the schedule's tiling
/// (Schedule::cpuReference).
bool compileOp(mlir::MLIRContext &context, const std::string &tilePath,
               const std::string &schedulePath,
               const std::map<std::string, lang::ExternalValue> &constants, Compiled &out,
               llvm::raw_ostream &errs, const TargetDesc *retarget = nullptr,
               bool float64Reference = false);

/// A context with every dialect Kiln's pipelines use.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Which emitter a GPU build goes through: PTX (LLVM's NVPTX backend, then
/// ptxas) or CUDA C++ (then nvcc). Both start from the same planned kernels.
enum class GpuEmitter { Ptx, Cuda };

/// A GPU kernel: its PTX or CUDA source, the cubin when ptxas or nvcc ran,
/// and its manifest.
struct GpuBuild {
  std::string ptx, cuda, cubin;
  /// A CUDA build's first comment line: what it was generated from (the
  /// launcher header starts with it too).
  std::string origin;
  PtxasReport report;
  KernelManifest manifest;
  /// Per kernel entry: the layout conversions its lowering placed.
  std::map<std::string, int64_t> layoutConversions;
};

/// Lowers a compiled op to planned GPU kernels, then through `emitter`: to
/// PTX (with `assemble`, ptxas makes the cubin) or to CUDA C++ (with
/// `assemble`, nvcc makes it). Errors go to `errs`. With `printIrAfterAll`,
/// the IR after every pass goes to stderr. With `lineInfo`, the PTX carries
/// each instruction's .tile line (`.loc`), or the CUDA source each line's
/// (`#line`), and the cubin keeps it, so a profiler attributes samples to
/// the .tile source.
bool buildForGpu(Compiled &compiled, bool assemble, GpuBuild &out, llvm::raw_ostream &errs,
                 bool printIrAfterAll = false, GpuEmitter emitter = GpuEmitter::Ptx,
                 bool lineInfo = false);

/// Makes `pm` print the IR to stderr after every pass (`--print-ir-after-all`).
void printIrAfterEveryPass(mlir::PassManager &pm);

/// Compiles for the CPU and runs the op's harness, or, for an op without
/// one or with `data` given, checks it against its float64 reference
/// (runAgainstReference). Fills `checks`.
bool runOnCpu(const std::string &tilePath, const std::string &schedulePath,
              const std::map<std::string, lang::ExternalValue> &constants, RunConfig config,
              std::vector<CheckResult> &checks, llvm::raw_ostream &errs,
              double *compileMs = nullptr, double *runMs = nullptr, const DataOptions &data = {});

/// Checks a loaded selection against its source (dsl/schedule/Selection.h):
/// every rule's schedule compiles for the selection's target, all of them
/// build ops taking the same parameters and dims (one call fits every
/// rule), and each condition names only those dims or `sms`. Errors name
/// the selection's line.
bool checkSelection(const Selection &sel,
                    const std::map<std::string, lang::ExternalValue> &constants,
                    llvm::raw_ostream &errs);

/// The selection manifest of `sel` as `kiln compile --select` writes it:
/// each rule's schedule, its manifest's file (SCHEDULE.json, beside the
/// selection manifest) and its conditions in postfix form; `op` is left to
/// the builder, which knows the op its schedules build.
SelectionManifest selectionManifest(const Selection &sel);

/// Whether a run of `kernelName` goes through its golden harness (it has
/// one and no --inputs, --save, --expect or --range asks for data of the
/// float64 reference path).
const OpHarness *harnessFor(const std::string &kernelName, const DataOptions &data);

} // namespace kiln

#endif
