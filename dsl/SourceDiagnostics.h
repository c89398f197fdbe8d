//===- SourceDiagnostics.h - MLIR diagnostics as file:line:col + caret ----===//
#ifndef KILN_DSL_SOURCEDIAGNOSTICS_H
#define KILN_DSL_SOURCEDIAGNOSTICS_H

#include "dsl/Diagnostics.h"

#include "mlir/IR/Diagnostics.h"

#include <map>

namespace kiln {

/// While alive, prints every MLIR diagnostic of `context` in Kiln's format,
/// quoting the line of any source file it knows (the .tile and .yaml files).
class SourceDiagnostics {
public:
  SourceDiagnostics(mlir::MLIRContext &context, llvm::raw_ostream &os);
  ~SourceDiagnostics();
  void addSource(const std::string &path, const std::string &text) { sources[path] = text; }
  unsigned numErrors() const { return errors; }

private:
  mlir::MLIRContext &context;
  llvm::raw_ostream &os;
  std::map<std::string, std::string> sources;
  mlir::DiagnosticEngine::HandlerID id;
  unsigned errors = 0;
};

} // namespace kiln

#endif
