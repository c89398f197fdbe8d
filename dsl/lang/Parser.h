//===- Parser.h - lexer and parser of the Kiln language ---------*- C++ -*-===//
#ifndef KILN_DSL_LANG_PARSER_H
#define KILN_DSL_LANG_PARSER_H

#include "dsl/lang/Ast.h"

#include <optional>

namespace kiln::lang {

/// A diagnostic at a position of the source being compiled.
struct Error {
  SrcPos pos;
  std::string message;
};

/// Parses a whole `.tile` source; returns the first syntax error on failure.
std::optional<Program> parseProgram(const std::string &text, Error &error);

} // namespace kiln::lang

#endif
