//===- Diagnostics.cpp - file:line:col messages with a caret --------------===//
#include "dsl/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

std::string kiln::formatDiagnostic(StringRef path, StringRef source, SrcPos pos, StringRef kind,
                                   StringRef message) {
  std::string out;
  raw_string_ostream os(out);
  os << path;
  if (pos.line)
    os << ":" << pos.line << ":" << pos.col;
  os << ": " << kind << ": " << message << "\n";
  if (!pos.line)
    return out;
  SmallVector<StringRef> lines;
  source.split(lines, '\n');
  if (pos.line > lines.size())
    return out;
  StringRef line = lines[pos.line - 1].rtrim("\r");
  os << "  " << line << "\n  ";
  for (unsigned i = 1; i < pos.col && i <= line.size(); ++i)
    os << (line[i - 1] == '\t' ? '\t' : ' ');
  os << "^\n";
  return out;
}

bool kiln::readFile(StringRef path, std::string &text, std::string &error) {
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    error = "cannot read '" + path.str() + "': " + buffer.getError().message();
    return false;
  }
  text = (*buffer)->getBuffer().str();
  return true;
}
