//===- Compile.h - from Kiln source to the tile dialect ---------*- C++ -*-===//
#ifndef KILN_DSL_LANG_COMPILE_H
#define KILN_DSL_LANG_COMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::lang {

/// A value given to the compiler from outside the source, with where it came
/// from (a YAML line or a command-line argument) for error messages.
struct ExternalValue {
  int64_t value = 0;
  std::string symbol; // set instead of value: the name of a `const` of the source
  std::string origin; // e.g. "ops/gdn/schedules/decode_cpu.yaml:4:7" or "command line -D K=64"
};

struct CompileOptions {
  /// Overrides of `const` declarations (`-D K=64`).
  std::map<std::string, ExternalValue> constants;
  /// Values of the source's `param` declarations, from the schedule.
  std::map<std::string, ExternalValue> scheduleParams;
  /// Every float type (f32, bf16, f16: of tensors, scalars, tiles, casts and
  /// products) becomes f64: the op's float64 reference. A cast to a narrower
  /// float then rounds nothing (docs/language.md, "Checking an op").
  bool promoteFloats = false;
};

/// What a source declares, for tools and schedule validation.
struct Declarations {
  std::vector<std::string> consts, scheduleParams, kernels, ops;
  /// `check M = 37, N = 1000;` lines: the shapes `kiln check` runs.
  std::vector<std::map<std::string, int64_t>> checkShapes;
};

/// Parses `text` (the contents of `path`) and builds one tile.kernel per
/// kernel of the source, specialised to the constants and schedule params.
/// On failure prints diagnostics with file:line:col and a caret to `errs`
/// and returns null.
mlir::OwningOpRef<mlir::ModuleOp> compileSource(mlir::MLIRContext &context, const std::string &path,
                                                const std::string &text,
                                                const CompileOptions &options,
                                                llvm::raw_ostream &errs);

/// Parses only; fills `decls`. Prints a syntax error and returns false on failure.
bool scanDeclarations(const std::string &path, const std::string &text, Declarations &decls,
                      llvm::raw_ostream &errs);

} // namespace kiln::lang

#endif
