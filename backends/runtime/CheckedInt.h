//===- CheckedInt.h - 64-bit arithmetic that refuses to wrap ---*- C++ -*-===//
//
// The runtimes evaluate integer expressions over a call's dims: selection
// conditions (Selection.cpp) and grid extents (Manifest.cpp). Signed
// overflow is undefined in C++, and their Python twins (python/kiln) never
// wrap, so a value past 64 bits is an error in both, never a wrapped value.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_RUNTIME_CHECKEDINT_H
#define KILN_BACKENDS_RUNTIME_CHECKEDINT_H

#include <climits>
#include <cstdint>

namespace kiln {

/// `a op b` (op one of + - * /; b nonzero for /, truncating as C++ does)
/// into `out`; false where the result does not fit in 64 bits.
inline bool checkedInt64(char op, int64_t a, int64_t b, int64_t &out) {
  switch (op) {
  case '+':
    return !__builtin_add_overflow(a, b, &out);
  case '-':
    return !__builtin_sub_overflow(a, b, &out);
  case '*':
    return !__builtin_mul_overflow(a, b, &out);
  default:
    if (a == INT64_MIN && b == -1)
      return false;
    out = a / b;
    return true;
  }
}

} // namespace kiln

#endif
