//===- SourceDiagnostics.cpp - MLIR diagnostics in Kiln's format ----------===//
#include "dsl/SourceDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;

kiln::SourceDiagnostics::SourceDiagnostics(MLIRContext &context, llvm::raw_ostream &os)
    : context(context), os(os) {
  id = context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
    auto print = [&](Location loc, StringRef kind, const std::string &msg) {
      if (auto flc = dyn_cast<FileLineColLoc>(loc)) {
        std::string file = flc.getFilename().str();
        auto it = sources.find(file);
        this->os << formatDiagnostic(file, it == sources.end() ? "" : it->second,
                                     {flc.getLine(), flc.getColumn()}, kind, msg);
      } else {
        this->os << "kiln: " << kind << ": " << msg << "\n";
      }
    };
    StringRef kind = diag.getSeverity() == DiagnosticSeverity::Error     ? "error"
                     : diag.getSeverity() == DiagnosticSeverity::Warning ? "warning"
                                                                         : "note";
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    print(diag.getLocation(), kind, diag.str());
    for (Diagnostic &note : diag.getNotes())
      print(note.getLocation(), "note", note.str());
    return success();
  });
}

kiln::SourceDiagnostics::~SourceDiagnostics() { context.getDiagEngine().eraseHandler(id); }
