//===- Diagnostics.h - file:line:col messages with a caret ------*- C++ -*-===//
//
// Every user-facing error in Kiln (language, schedule, command line, kernel
// arguments) goes through here so they all look the same:
//
//   ops/gdn/decode.tile:12:9: error: unknown name 'BVV'
//     let x = BVV * 2;
//             ^
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DSL_DIAGNOSTICS_H
#define KILN_DSL_DIAGNOSTICS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {

/// A position in a named text: 1-based line and column; 0 means unknown.
struct SrcPos {
  unsigned line = 0, col = 0;
};

/// Formats one diagnostic. `source` is the whole file text, used to quote the
/// offending line; `kind` is "error", "warning" or "note".
std::string formatDiagnostic(llvm::StringRef path, llvm::StringRef source, SrcPos pos,
                             llvm::StringRef kind, llvm::StringRef message);

/// Reads a whole file; on failure returns false and sets `error`.
bool readFile(llvm::StringRef path, std::string &text, std::string &error);

} // namespace kiln

#endif
