//===- Npy.h - numpy .npy files in and out ----------------------*- C++ -*-===//
//
// Plain C++ (no MLIR), so every runner can read a user's arrays. Version 1
// to 3 headers, little-endian, C order. bf16 is read from `<u2` (its 16
// bits, as numpy holds it) or `<V2` (what numpy writes for
// ml_dtypes.bfloat16) and written as `<u2`.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_RUNTIME_NPY_H
#define KILN_BACKENDS_RUNTIME_NPY_H

#include "backends/runtime/Signature.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

struct NpyArray {
  std::string descr; // as written in the file: "<f4", "<u2", "<V2", ...
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  int64_t numel() const;
};

/// Reads `path`. On a file that is not a well-formed little-endian C-order
/// .npy (or is cut short) returns false with `error` saying what is wrong.
bool readNpy(const std::string &path, NpyArray &out, std::string &error);

/// Whether an array with `descr` holds elements of `t` (bf16: `<u2` or `<V2`).
bool npyHolds(const std::string &descr, DType t);

/// The descr Kiln writes for `t`.
const char *npyDescr(DType t);

/// Writes `shape` elements of `t` from `data`. False with `error` when the
/// file cannot be written.
bool writeNpy(const std::string &path, DType t, const std::vector<int64_t> &shape, const void *data,
              std::string &error);

} // namespace kiln

#endif
