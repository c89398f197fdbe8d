//===- Layout.h - register arithmetic of #tile.layout -----------*- C++ -*-===//
//
// Which elements of a tile a thread holds under a #tile.layout, in what order
// its registers keep them, and the default layout for a tile shape. Shared by
// tile-assign-layouts (which chooses) and convert-tile-to-nvvm (which obeys).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LOWERING_ANALYSIS_LAYOUT_H
#define KILN_LOWERING_ANALYSIS_LAYOUT_H

#include "dsl/TileDialect.h"

#include <optional>
#include <string>

namespace kiln {

/// A #tile.layout applied to one tile shape.
struct TileLayout {
  llvm::SmallVector<int64_t, 2> size, lanes, warps; // per parent dim
  llvm::SmallVector<int64_t, 2> lanesFirst;         // per parent dim, or empty
  llvm::SmallVector<int64_t, 2> dims;               // parent dim of each tile dim
  llvm::SmallVector<int64_t, 2> shape;              // the tile's shape

  static TileLayout get(tile::LayoutAttr attr, llvm::ArrayRef<int64_t> shape);
  tile::LayoutAttr attr(mlir::MLIRContext *ctx) const;

  unsigned parentRank() const { return size.size(); }
  /// Elements one CTA covers along parent dim p before repeating.
  int64_t span(unsigned p) const { return size[p] * lanes[p] * warps[p]; }
  /// Whether parent dim p puts its lanes before a thread's `size` elements.
  bool lanesFirstAlong(unsigned p) const { return !lanesFirst.empty() && lanesFirst[p]; }
  /// Elements a thread holds next to each other along tile dim d (1 where
  /// the extent is 1): the longest vector one access of its registers moves.
  int64_t contiguous(unsigned d) const;
  /// Registers per thread along tile dim d (1 where the extent is 1).
  int64_t regsAlong(unsigned d) const;
  int64_t numRegs() const;
  /// Register `r`'s index along each tile dim (row-major over tile dims).
  llvm::SmallVector<int64_t, 2> regIndex(int64_t r) const;
  int64_t regNumber(llvm::ArrayRef<int64_t> index) const;
  /// The constant part of register index `i`'s element coordinate along tile
  /// dim d; the thread's part is laneCoord * size + warpCoord * size * lanes
  /// (laneCoord + warpCoord * size * lanes where the lanes come first).
  int64_t constOffset(unsigned d, int64_t i) const;
  /// How far apart the first elements of neighbouring lanes along parent
  /// dim p lie: a thread's run of `size`, or 1 where the lanes come first.
  int64_t laneStep(unsigned p) const { return lanesFirstAlong(p) ? 1 : size[p]; }
  /// The coordinate along tile dim d of register index `i` of the thread at
  /// (lane, warp): what the lowering computes at run time, for host checks.
  int64_t coordinate(unsigned d, int64_t i, int64_t lane, int64_t warp) const;
  /// Lane (warp) id stride of parent dim p in the row-major split.
  int64_t laneStride(unsigned p) const;
  int64_t warpStride(unsigned p) const;
  int64_t laneCount() const;
  int64_t warpCount() const;
  /// Whether tile dim d is replicated (extent 1) or a real distributed dim.
  bool isUnit(unsigned d) const { return shape[d] == 1; }
  /// Parent dims along which every thread holds copies of the same values.
  llvm::SmallVector<unsigned, 2> replicatedParentDims() const;

  /// Why this layout cannot hold `shape`, or nothing when it can.
  std::optional<std::string> mismatch() const;
};

/// The layout of a tile value: its op's, or for a value a loop carries,
/// that of the value initialising it; none before tile-assign-layouts.
std::optional<TileLayout> assignedLayout(mlir::Value v);
/// assignedLayout where tile-assign-layouts ran (a fatal error otherwise).
TileLayout layoutOfValue(mlir::Value v);

/// Whether moving a tile from layout `from` to `to` through shared memory,
/// on a role of `warps` warps, moves no element between warps: each warp
/// reads back only elements its own threads write (each element is written
/// once, by its first holder). Such a conversion needs only warp
/// synchronisation. With `perm`, `to` lays out the transpose: its dim d is
/// `from`'s dim perm[d].
bool staysInWarps(const TileLayout &from, const TileLayout &to, int64_t warps,
                  llvm::ArrayRef<int64_t> perm = {});

/// Whether `to`, the layout of `from`'s tile transposed by `perm` (its dim
/// d is from's dim perm[d]), holds every element in the register that held
/// it: the two differ only in the order of their dims.
bool permutesRegisters(const TileLayout &from, const TileLayout &to, llvm::ArrayRef<int64_t> perm);

/// Where `to`, the layout of the window of `from`'s tile at `offsets`, holds
/// every element in a register of the thread that held it: both spread the
/// threads alike and each offset is a multiple of its dim's span. Per
/// register of `to`, the register of `from` it is; nothing otherwise.
std::optional<llvm::SmallVector<int64_t>>
windowRegisters(const TileLayout &from, const TileLayout &to, llvm::ArrayRef<int64_t> offsets);

/// How a warp's registers of a rank-2 tile of 16-bit elements come from a
/// row-major shared-memory tile by `ldmatrix`: each 8 x 8 matrix (8 rows of
/// 16 bytes) gives every lane two neighbours of one row (`ldmatrix`) or,
/// `transposed`, of one column (`ldmatrix.trans`). The wgmma accumulator
/// fragment read from a tile in either orientation is such a layout.
struct MatrixReads {
  bool transposed = false;
  /// Per matrix, the registers holding a thread's first and second element.
  llvm::SmallVector<std::pair<int64_t, int64_t>> pairs;
};

/// The matrices `l` reads as, or nothing where some register of some lane of
/// some warp falls outside the pattern (one kind for the whole tile).
std::optional<MatrixReads> matrixReads(const TileLayout &l);

/// Per tile dim, what a schedule's `layouts:` fixed; an empty list is chosen
/// as for the default layout.
struct LayoutChoice {
  llvm::ArrayRef<int64_t> size, lanes, warps;
};

/// The layout Kiln uses for a tile nothing else constrains: 16-byte vectors
/// along the last dim, a warp's lanes along it next, then lanes and warps
/// down the leading dim. Powers of two only; a tile too small for all warps
/// leaves the rest replicated. What `fixed` gives is taken as given.
tile::LayoutAttr defaultLayout(mlir::MLIRContext *ctx, llvm::ArrayRef<int64_t> shape,
                               unsigned elemBytes, int64_t numWarps, LayoutChoice fixed = {});

} // namespace kiln

#endif
