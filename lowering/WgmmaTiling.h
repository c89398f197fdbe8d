//===- WgmmaTiling.h - how a tile.dot runs as warpgroup MMAs ----*- C++ -*-===//
//
// A dot under `mma: wgmma` stages both operands in shared memory, K-major in
// the no-swizzle core-matrix layout wgmma reads through descriptors (8 rows
// x 16 bytes per core matrix). Core matrices down the rows are adjacent, so
// a 16-byte column of K is one plain array of rows and an element's address
// is linear in its row: a thread's stores are one base plus constants. The
// dot splits the
// result into items of 64 rows x nChunk columns that the role's warpgroups
// take round-robin. Each item's accumulator fragment goes through a padded
// row-major f32 area so the result can take any register layout. The plan
// (sizes, offsets, strides) lives here so that the shared-memory budget in
// KernelPlan and the instructions in convert-tile-to-nvvm agree.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LOWERING_WGMMATILING_H
#define KILN_LOWERING_WGMMATILING_H

#include "dsl/TileDialect.h"

#include <string>

namespace kiln {

struct WgmmaTiling {
  /// The operand type the tensor cores read: bf16 (or f16) when both
  /// operands are, tf32 otherwise (f32 operands round to tf32).
  enum class Operands { BF16, F16, TF32 } operands = Operands::TF32;
  int64_t M = 0, N = 0, K = 0;
  int64_t rowsA = 0, rowsB = 0; // staged rows: M padded to 64, N to 8
  int64_t elemBytes = 0;        // of a staged operand element
  int64_t kStep = 0;            // K of one instruction: 32 bytes of a row
  int64_t mTiles = 0;           // 64-row tiles of the result
  int64_t nParts = 0;           // column parts per 64-row tile
  int64_t nChunk = 0;           // columns per part: the instruction's N
  int64_t warpgroups = 0;
  int64_t aOffset = 0, bOffset = 0, dOffset = 0, bytes = 0; // in the staging area
  int64_t dStride = 0; // f32 elements per row of the result area (padded)

  int64_t items() const { return mTiles * nParts; }
  /// Items each warpgroup runs (the last round may leave some idle).
  int64_t rounds() const { return (items() + warpgroups - 1) / warpgroups; }
  /// Elements of K in one 16-byte core-matrix row.
  int64_t perCore() const { return 16 / elemBytes; }
  /// Bytes between 8-row groups (the descriptor's stride byte offset).
  static constexpr int64_t kRowGroupBytes = 128;
  /// Bytes between core matrices along K (the leading byte offset) of an
  /// operand with `rows` staged rows.
  static int64_t kGroupBytes(int64_t rows) { return rows * 16; }
  /// Byte offset of element (row, k) of an operand with `rows` staged rows.
  int64_t operandOffset(int64_t row, int64_t k, int64_t rows) const {
    return k / perCore() * kGroupBytes(rows) + row * 16 + k % perCore() * elemBytes;
  }

  /// Plans `dot` for `warps` warps; on failure `why` says what does not fit.
  static mlir::FailureOr<WgmmaTiling> get(tile::DotOp dot, int64_t warps, std::string &why);
  /// Plans an M x K by K x N product of `lhs` and `rhs` elements.
  static mlir::FailureOr<WgmmaTiling> get(int64_t M, int64_t N, int64_t K, mlir::Type lhs,
                                          mlir::Type rhs, int64_t warps, std::string &why);
};

} // namespace kiln

#endif
