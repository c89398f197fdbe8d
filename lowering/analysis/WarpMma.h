//===- WarpMma.h - how a tile.dot runs as warp-level mma.sync ---*- C++ -*-===//
//
// Under `mma: mma_sync` a dot runs on the tensor cores one warp at a time
// (`mma.sync.aligned.m16n8k16`, sm_80 and later), each warp multiplying
// from and into its own registers: no async proxy, no fence, no wait on a
// group, nothing padded to a 64-row instruction. Both 16-bit operands are
// staged row-major in shared memory as their tiles are stored (a transpose
// feeding only dots is staged from its input), rows padded by 16 bytes so
// that the 8 row addresses of an `ldmatrix` fall in 8 different bank
// groups; each warp then reads its A and B fragments with `ldmatrix`
// (`.trans` where the staged rows run along the fragment's other dim). The
// result's m16 x n8 blocks are dealt to a grid of wm x wn warps, and it
// stays in the accumulator fragments: its layout is fragmentLayout(), which
// tile-assign-layouts gives every such dot's result; a result laid out
// otherwise goes through a row-major f32 area. On a grid of whole rows
// (wn 1) an A laid out as such a result (a product's, cast) is taken from
// its registers, unstaged. Two dots in a row whose
// operands all exist before the first run together (stage, one barrier,
// both products): `T P` and `P P` of one step of the triangular inverse,
// `k k^T` and `q k^T`. A tile staged for several operands (k, P) is staged
// once. The plan lives here so that the shared-memory budget in KernelPlan
// and the instructions in convert-tile-to-nvvm agree.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LOWERING_ANALYSIS_WARPMMA_H
#define KILN_LOWERING_ANALYSIS_WARPMMA_H

#include "dsl/TileDialect.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>

namespace kiln {

/// Where the operand tiles of one or two products lie in the staging area:
/// each tile once, row-major, a row's bytes plus 16 apart.
struct WarpMmaStaging {
  struct Tile {
    mlir::Value tile; // the staged tile (a folded transpose's input)
    int64_t offset = 0, pitch = 0;
  };
  llvm::SmallVector<Tile, 4> tiles;
  int64_t bytes = 0;
  /// The entry of `operand`'s staged tile, placed after the others if new.
  const Tile &place(mlir::Value operand);
};

struct WarpMmaTiling {
  /// Whether a schedule's `mma` names the warp-level product.
  static bool named(llvm::StringRef mma) { return mma == "mma_sync"; }

  int64_t M = 0, N = 0, K = 0;
  bool bf16 = false; // operands bf16 (else f16)
  /// The result's m16 x n8 blocks over a grid of wm x wn warps; warps past
  /// wm * wn hold copies (the layout's warps wrap around).
  int64_t wm = 1, wn = 1;
  /// A is staged from a transpose's input ([K, M] rows), B from one's
  /// ([N, K] rows).
  bool aTransposed = false, bTransposed = false;
  /// A is not staged: its registers already are its fragments. Its layout
  /// is the fragments' of a grid of whole rows (wn 1) with this product's
  /// wm, as a product's result kept in the accumulators is (T of T P and P
  /// of P P in the triangular inverse), cast to f16 or bf16: an m16 x n8
  /// accumulator pair is the A fragment of a k16 step.
  bool aInRegisters = false;
  /// B is not staged: it is laid out as the fragments of a [K, N] result
  /// on a grid of one warp (each warp holds all of it, a product of a
  /// one-warp role's, cast), and each 8 x 8 block of its accumulator pairs
  /// becomes a B fragment word through `movmatrix.trans`: P of T P and
  /// P P in a one-warp chunk kernel's triangular inverse.
  bool bInRegisters = false;
  /// Where each operand's staged tile starts and its row pitch, in bytes.
  int64_t aOffset = 0, aPitch = 0, bOffset = 0, bPitch = 0;
  /// Where the result area starts (a result not kept in the fragments)
  /// and its f32 elements a row.
  int64_t dOffset = 0, dStride = 0;
  /// Whether the result stays in the fragments: tile-assign-layouts gave it
  /// a fragment layout, whose grid is then the product's (before it runs,
  /// the result area is counted).
  bool keepsResult = false;

  /// m16 blocks and n8 blocks of the result each warp computes.
  int64_t mBlocks() const { return M / 16 / wm; }
  int64_t nBlocks() const { return N / 8 / wn; }
  int64_t kSteps() const { return K / 16; }

  /// The accumulators as a tile layout: row r of an m16 block in lanes
  /// 4 (r % 8) .. 4 (r % 8) + 3, register (r / 8) % 2, column c in lane
  /// (c / 2) % 4 of those, register c % 2; warp (i, j) of the grid takes
  /// m16 blocks i, i + wm, ... and n8 blocks j, j + wn, ....
  tile::LayoutAttr fragmentLayout(mlir::MLIRContext *ctx) const {
    return fragmentLayout(ctx, wm, wn);
  }
  static tile::LayoutAttr fragmentLayout(mlir::MLIRContext *ctx, int64_t wm, int64_t wn);
  /// The warp grid of `layout` where it is the fragments' on some grid (a
  /// schedule's `layouts:` may pick one for a product: lanes [8, 4], its
  /// warps the grid).
  static std::optional<std::pair<int64_t, int64_t>> fragmentGrid(tile::LayoutAttr layout);
  /// The register of fragmentLayout() holding accumulator `reg` (0-3) of
  /// the warp's m16 block `mb` and n8 block `nb`.
  int64_t fragmentRegister(int64_t mb, int64_t nb, int64_t reg) const {
    return (2 * mb + reg / 2) * (2 * nBlocks()) + 2 * nb + reg % 2;
  }
  /// With aInRegisters: the register of A (laid out as the fragments of a
  /// [M, K] result on wm x 1 warps) holding element `e` (0-7) of the A
  /// fragment of the warp's m16 block `mb` at k step `ks`: accumulators
  /// 0-3 of A's n8 block 2 ks, then of 2 ks + 1, in the ISA's order a0 a1
  /// (row g), a2 a3 (g + 8), a4 a5 (row g, k + 8), a6 a7.
  int64_t aRegister(int64_t mb, int64_t ks, int64_t e) const {
    int64_t nb = 2 * ks + e / 4, reg = e % 4;
    return (2 * mb + reg / 2) * (2 * (K / 8)) + 2 * nb + reg % 2;
  }

  /// With bInRegisters: the register of B (laid out as the fragments of a
  /// [K, N] result on one warp) holding accumulator `reg` (0-3) of its
  /// m16 block `ks` (a k step's rows) and n8 block `nb`. Registers 0, 1
  /// (rows 0-7) transposed are word 0 of the B fragment of (ks, nb), 2, 3
  /// (rows 8-15) word 1.
  int64_t bRegister(int64_t ks, int64_t nb, int64_t reg) const {
    return (2 * ks + reg / 2) * (2 * (N / 8)) + 2 * nb + reg % 2;
  }

  /// Plans `dot` for `warps` warps, its operands placed in `staging`; on
  /// failure `why` says what does not fit.
  static mlir::FailureOr<WarpMmaTiling> get(tile::DotOp dot, int64_t warps, WarpMmaStaging &staging,
                                            std::string &why);
  /// The dots that run after `first`'s plan (the group's first entry in
  /// `dots` and `plans`, placed in `staging`) behind its barrier: each
  /// next dot whose operands exist where `first` runs
  /// (nextDotRunnableWith), while `joins` lets it and it plans. An operand
  /// two of them read is staged once.
  static void growGroup(tile::DotOp first, int64_t warps, WarpMmaStaging &staging,
                        llvm::SmallVectorImpl<tile::DotOp> &dots,
                        llvm::SmallVectorImpl<WarpMmaTiling> &plans,
                        llvm::function_ref<bool(tile::DotOp)> joins);
  /// The staging bytes of `dot` with the dots that run with it behind one
  /// barrier (growGroup); 0 where `dot` cannot be planned.
  static int64_t stagingBytes(tile::DotOp dot, int64_t warps);
};

} // namespace kiln

#endif
