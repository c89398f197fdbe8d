//===- Reference.h - any op checked against its float64 promotion -*- C++ -*-===//
//
// An op with no golden harness of its own (ops/Harness.h) is checked against
// itself promoted to float64: the same source and tiling compiled with every
// float type f64 (lang::CompileOptions::promoteFloats) and run on the CPU.
// Its inputs come from the signature (floats normal, integers from a range),
// from .npy files, or both; its outputs are poisoned before each run.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_REFERENCE_H
#define KILN_TOOLS_KILN_REFERENCE_H

#include "dsl/lang/Compile.h"
#include "ops/Harness.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace kiln {

/// Where a run's data comes from and goes: `kiln run`'s --inputs, --save,
/// --expect and --range.
struct DataOptions {
  std::string inputsDir, saveDir, expectDir;
  /// --range NAME=LO:HI: integers drawn from [LO, HI), over the source's `range`.
  std::map<std::string, std::pair<int64_t, int64_t>> ranges;
  bool any() const {
    return !inputsDir.empty() || !saveDir.empty() || !expectDir.empty() || !ranges.empty();
  }
};

/// One argument's host data, in its parameter's element type.
struct HostArg {
  ParamInfo param;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // a tensor's elements
  double scalar = 0;
  int64_t numel() const;
  /// The elements as doubles.
  std::vector<double> values() const;
};

/// The arguments of a run of `sig`: each parameter from `data.inputsDir`
/// (NAME.npy; an inout's NAME.in.npy first) or drawn with `seed`; outputs
/// poisoned (floats NaN). `dims` gives runtime dims, files fix others, and
/// `fallback` (the source's `check` line) those neither fixes. On bad input
/// returns false with a one-line `error` naming the file, parameter or dim.
bool makeArguments(const KernelSignature &sig, std::map<std::string, int64_t> dims,
                   const std::map<std::string, int64_t> &fallback, const DataOptions &data,
                   uint64_t seed, std::vector<HostArg> &out, std::string &error);

/// The launch arguments pointing at `args`' data.
std::vector<ArgValue> argValues(std::vector<HostArg> &args);

/// The default relative error an output of `t` may have against the float64
/// reference: about 4 units in the last place of its element type, and 1e-2
/// for floats where the kernel's matrix products round their operands (tf32,
/// bf16). Integers must match exactly (0).
double defaultTolerance(DType t, bool roundedOperands);

/// Runs the schedule's build through `launch` on arguments made from `data`
/// (dims: the config's, the files', then the source's first `check` line),
/// then the op's float64 reference on the same inputs, and checks; with
/// `data.expectDir` also against the user's arrays, with `data.saveDir`
/// writes inputs, outputs and the reference's outputs. The signature is the
/// build's; `roundedOperands` whether its products round operands.
bool runAgainstReference(const std::string &tilePath, const std::string &schedulePath,
                         const std::map<std::string, lang::ExternalValue> &constants,
                         const KernelSignature &sig, bool roundedOperands, const RunConfig &cfg,
                         const DataOptions &data, const Launcher &launch,
                         std::vector<CheckResult> &checks, llvm::raw_ostream &errs);

/// The `check` lines of the source at `tilePath` (`kiln check`'s shapes);
/// empty when it has none or cannot be read.
std::vector<std::map<std::string, int64_t>> checkShapesOf(const std::string &tilePath);

} // namespace kiln

#endif
