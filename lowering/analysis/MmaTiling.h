//===- MmaTiling.h - how a tile.dot runs on tensor cores --------*- C++ -*-===//
//
// A dot under `mma: wgmma` or `mma: tcgen05` stages both operands in shared
// memory, K-major in layouts the tensor cores read through descriptors (the
// same layouts for both: only the descriptors' encodings differ). An operand whose threads hold
// runs along K is swizzled: K splits into blocks of S bytes (128, 64 or 32:
// the largest that divides a row of K), and within a block each row's S
// bytes sit at a pitch of S, their 16-byte pieces permuted by the row (the
// hardware's XOR of address bits [4, 7) with [7, 10)). A warp writing 16
// bytes of each of 8 rows, or 8 pieces of one row, then hits 8 different
// bank groups; the plain core-matrix layout (16 bytes of a row per block)
// put a row's pieces in one bank group, 8-way conflicts whenever lanes run
// along K. The dot splits the result into items of instrM rows x nChunk
// columns. Under wgmma (instrM 64) the role's warpgroups take them
// round-robin and each item's accumulator fragment comes back in registers;
// under tcgen05 (instrM 64 or 128) one thread issues every item into its own
// tensor-memory columns and the warps read them back with tcgen05.ld. Either
// way the result goes through a padded row-major f32 area so it can take
// any register layout, unless (wgmma) its layout is the fragment's own. The
// plan (sizes, offsets, strides) lives here so that the shared-memory budget
// in KernelPlan and the instructions in convert-tile-to-nvvm agree.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LOWERING_ANALYSIS_MMATILING_H
#define KILN_LOWERING_ANALYSIS_MMATILING_H

#include "dsl/TileDialect.h"
#include "lowering/analysis/WarpMma.h"

#include <optional>
#include <string>

namespace kiln {

/// Whether a transpose is folded into the wgmma dots it feeds: each stages
/// its input K-major directly, so the transpose itself moves nothing.
bool foldsIntoDots(tile::TransposeOp tr);
/// Whether every user of `op`'s result is a dot (and it has one).
bool feedsOnlyDots(mlir::Operation *op);

/// What a wgmma operand stages, and whether transposed: a transpose folded
/// into its dots is staged from its input, so two such transposes of one
/// tile are one operand.
std::pair<mlir::Value, bool> stagedTile(mlir::Value operand);

/// The next dot of `first`'s block (after `after`, when given: the last of
/// a group already run with `first`) where everything it reads exists
/// where `first` runs (a transpose folded into it: its input), so that
/// both can run there together; none otherwise.
std::optional<tile::DotOp> nextDotRunnableWith(tile::DotOp first, tile::DotOp after = {});

/// Two dots that run as one tensor-core product. The second is the next dot of the
/// first's block; it shares one operand with the first (the same tile, or
/// transposes of the same tile) and uses nothing computed after the first.
/// Its other operand is stacked after the first's: rows of A (result rows)
/// when they share B, rows of B (result columns) when they share A. Two
/// products of a small chunk then fill one 64-row instruction instead of two
/// padded ones, and pay one fence, barrier and wait.
struct DotPair {
  tile::DotOp first, second;
  bool sharesRhs = true;
  /// Where the second's rows (sharesRhs) or columns start in the result.
  int64_t offset() const;
  /// The dot pairing with `first` on tensor cores, if any.
  static std::optional<DotPair> of(tile::DotOp first);
};

struct MmaTiling {
  /// The instruction family: warpgroup MMAs with register accumulators
  /// (sm_90a), or single-thread MMAs into tensor memory (sm_100a).
  enum class Kind { Wgmma, Tcgen05 } kind = Kind::Wgmma;
  /// The kind a schedule's `mma` names, if it runs on tensor cores.
  static std::optional<Kind> kindOf(llvm::StringRef mma);
  /// The operand type the tensor cores read: bf16 (or f16) when both
  /// operands are, tf32 otherwise (f32 operands round to tf32). An f32 A
  /// times a bf16 B is split instead (`splitA`).
  enum class Operands { BF16, F16, TF32 } operands = Operands::TF32;
  /// An f32 A with a bf16 B runs as two bf16 products accumulated in one:
  /// A's high part (its top 16 bits, A cut to bf16) and its residual (A
  /// minus that, exact in f32, rounded), so A keeps about 16 bits where
  /// tf32 keeps 11, and B is read as it is stored. Tensor-core time equals
  /// one tf32 product's (twice the K steps at twice the rate). Staged, A's
  /// residual part lies aPartBytes() after its high part; from registers,
  /// neither is staged.
  bool splitA = false;
  int64_t aParts() const { return splitA ? 2 : 1; }
  /// Bytes of one staged part of A.
  int64_t aPartBytes() const { return rowsA * K * elemBytes; }
  /// Instructions along K of one part of A.
  int64_t kSteps() const { return K / kStep; }
  int64_t M = 0, N = 0, K = 0;
  int64_t instrM = 64;          // rows of one instruction: 64, or 128 (tcgen05)
  int64_t rowsA = 0, rowsB = 0; // staged rows: M padded to instrM, N to 8 (16)
  int64_t elemBytes = 0;        // of a staged operand element
  int64_t kStep = 0;            // K of one instruction: 32 bytes of a row
  int64_t mTiles = 0;           // instrM-row tiles of the result
  int64_t nParts = 0;           // column parts per row tile
  int64_t nChunk = 0;           // columns per part: the instruction's N
  int64_t warpgroups = 0;
  int64_t aOffset = 0, bOffset = 0, dOffset = 0, bytes = 0; // in the staging area
  /// Lays out the staging area: A's parts, then B, then the result rows,
  /// leaving out an operand the product reads where a TMA ring put it (so
  /// a kernel whose rings feed its products needs less shared memory).
  /// get() stages both.
  void placeStagingAreas(bool stageA, bool stageB);
  int64_t dStride = 0; // f32 elements per row of the result area (padded)
  /// tcgen05: tensor-memory columns of the accumulators (item i at
  /// i * nChunk), and columns per tcgen05.ld when reading them back.
  int64_t tmemColumns = 0, loadColumns = 0;

  int64_t items() const { return mTiles * nParts; }
  /// Items each warpgroup runs (the last round may leave some idle).
  int64_t rounds() const { return (items() + warpgroups - 1) / warpgroups; }
  /// tcgen05: blocks of loadColumns columns the warpgroups read back, and
  /// how many rounds of them each takes.
  int64_t loadBlocks() const { return items() * (nChunk / loadColumns); }
  int64_t loadRounds() const { return (loadBlocks() + warpgroups - 1) / warpgroups; }
  /// Elements of K in one 16-byte piece of a row.
  int64_t perCore() const { return 16 / elemBytes; }
  /// Bytes of K per swizzled row (S): 128, 64 or 32, the largest that
  /// divides a row of K.
  int64_t swizzleBytes = 0;
  /// wgmma reads a 16-bit B N-major too (its transpose bit). Such a B is
  /// staged in the K-major form with the roles of its dims swapped: its
  /// rows are K's (t.K of them) and N runs along them, in blocks of this
  /// many bytes when swizzled (128, 64 or 32, the largest that divides an
  /// instruction's N; 0 when none does). Every helper below that takes
  /// `nMajor` reads (row, k) as (k, n) then.
  int64_t nMajorSwizzleBytes = 0;
  /// Whether this product can read its B N-major.
  bool readsBNMajor() const { return kind == Kind::Wgmma && operands != Operands::TF32; }
  /// Where a region of swizzled rows starts must be this aligned: the
  /// hardware swizzles absolute addresses in atoms of 8 rows.
  static constexpr int64_t kAtomAlignment = 1024;
  /// An operand's layout is K blocks of `block` bytes of every row, rows at
  /// a pitch of `block`: `swizzleBytes` when swizzled, 16 in the plain
  /// core-matrix layout (which the swizzle leaves alone). Threads holding
  /// one element of K each gain nothing from the swizzle, so those operands
  /// stay plain, where a thread's addresses are one base plus constants.
  int64_t blockBytes(bool swizzled, bool nMajor = false) const {
    return !swizzled ? 16 : nMajor ? nMajorSwizzleBytes : swizzleBytes;
  }
  /// The hardware's permutation of 16-byte pieces within a row.
  static int64_t swizzle(int64_t offset, int64_t block) {
    return offset ^ (((offset >> 7) & (block / 16 - 1)) << 4);
  }
  /// Byte offset, before the swizzle, of element (row, k) of an operand with
  /// `rows` staged rows.
  int64_t linearOffset(int64_t row, int64_t k, int64_t rows, bool swizzled,
                       bool nMajor = false) const {
    int64_t kByte = k * elemBytes, block = blockBytes(swizzled, nMajor);
    return kByte / block * rows * block + row * block + kByte % block;
  }
  /// Staged rows of an operand: A's (M padded), B's (N padded), or, for a B
  /// staged N-major, K.
  int64_t stagedRows(bool isLhs, bool nMajor = false) const {
    return nMajor ? K : isLhs ? rowsA : rowsB;
  }
  /// Bytes from B's area to column part p's first byte, over p: K-major, a
  /// part is nChunk rows on; N-major, nChunk columns of every K row on
  /// (whole N blocks).
  int64_t bPartStride(bool swizzled, bool nMajor = false) const {
    return nMajor ? nChunk * elemBytes * K : nChunk * blockBytes(swizzled);
  }
  /// Bytes from a row tile's (or column part's) start to K step `s`: kStep
  /// elements along the rows, or, N-major, kStep rows down.
  int64_t kStepOffset(int64_t s, bool isLhs, bool swizzled, bool nMajor = false) const {
    return nMajor ? linearOffset(s * kStep, 0, K, swizzled, true)
                  : linearOffset(0, s * kStep, stagedRows(isLhs), swizzled);
  }
  /// Byte offset of element (row, k).
  int64_t operandOffset(int64_t row, int64_t k, int64_t rows, bool swizzled,
                        bool nMajor = false) const {
    return swizzle(linearOffset(row, k, rows, swizzled, nMajor), blockBytes(swizzled, nMajor));
  }
  /// The descriptor's fixed bits: the stride between 8-row groups (bits
  /// 32-45) and between K blocks (bits 16-29, unused when swizzled), in
  /// 16-byte units, and the layout. wgmma codes the layout in bits 62-63 (0
  /// plain, 1 for a 128-byte swizzle, 2 for 64, 3 for 32); tcgen05 in bits
  /// 61-63 (0 plain, 2, 4, 6) and wants 1 in bits 46-48 (its version).
  /// N-major (rows of K, N blocks along them), the hardware names the
  /// strides the other way round where the layout is plain: 8-row groups in
  /// bits 16-29, N blocks in 32-45; swizzled, N blocks take bits 16-29.
  int64_t descriptorBits(int64_t rows, bool swizzled, bool nMajor = false) const {
    int64_t version = kind == Kind::Tcgen05 ? int64_t(1) << 46 : 0;
    if (!swizzled && nMajor)
      return version | int64_t(128 >> 4) << 16 | (rows * 16 >> 4) << 32;
    if (!swizzled)
      return version | int64_t(128 >> 4) << 32 | (rows * 16 >> 4) << 16;
    int64_t block = blockBytes(swizzled, nMajor);
    int64_t mode = block == 128 ? 1 : block == 64 ? 2 : 3;
    int64_t layout = kind == Kind::Tcgen05 ? (2 * mode) << 61 : mode << 62;
    int64_t blockStride = nMajor ? rows * block >> 4 : 1;
    return layout | version | (8 * block >> 4) << 32 | blockStride << 16;
  }
  /// tcgen05's instruction descriptor: f32 accumulators (bits 4-5), the
  /// operand formats (bits 7-9 and 10-12: f16 0, bf16 1, tf32 2), both
  /// K-major (bits 15, 16 clear), N / 8 (bits 17-22) and M / 16 (24-28).
  int64_t instructionDescriptor() const {
    int64_t format = operands == Operands::F16 ? 0 : operands == Operands::BF16 ? 1 : 2;
    return 1 << 4 | format << 7 | format << 10 | (nChunk >> 3) << 17 | (instrM >> 4) << 24;
  }

  /// The accumulator fragments of a wgmma product as a tile layout, where
  /// they are one: the warpgroups take whole 64-row tiles of the result in
  /// turn, as many each, with no column parts and no padding rows or
  /// columns. Row r of a 64-row tile is held by warp r / 16 of its
  /// warpgroup, in the lanes 4 (r % 8) to 4 (r % 8) + 3, register (r / 8) %
  /// 2; column c by lane (c / 2) % 4 of those, register c % 2, then the next
  /// 8 columns. Null otherwise.
  tile::LayoutAttr fragmentLayout(mlir::MLIRContext *ctx) const;
  /// The register of fragmentLayout() holding accumulator `reg` of the
  /// item a warpgroup runs in round `round`.
  int64_t fragmentRegister(int64_t round, int64_t reg) const {
    return fragmentRegister(N, round, reg);
  }
  /// The same for any tile of `columns` columns in fragmentLayout(): the
  /// register holding what accumulator `reg` of round `round` would.
  static int64_t fragmentRegister(int64_t columns, int64_t round, int64_t reg) {
    int64_t i = reg / 4, h = reg / 2 % 2, c = reg % 2;
    return (2 * round + h) * (columns / 4) + 2 * i + c;
  }
  /// Of the registers `all` of a result in fragmentLayout() (all N
  /// columns), those holding columns [from, from + n), in the order
  /// fragmentLayout() gives an n-column tile: the two results of a pair
  /// sharing A, each its own tile in the same layout. `from` and `n` are
  /// multiples of 8.
  template <typename T>
  llvm::SmallVector<T> fragmentColumns(llvm::ArrayRef<T> all, int64_t from, int64_t n) const {
    llvm::SmallVector<T> out;
    for (int64_t group = 0; group * (N / 4) < (int64_t)all.size(); ++group)
      llvm::append_range(out, all.slice(group * (N / 4) + from / 4, n / 4));
    return out;
  }

  /// Plans `dot` for `warps` warps; on failure `why` says what does not fit.
  static mlir::FailureOr<MmaTiling> get(Kind kind, tile::DotOp dot, int64_t warps,
                                        std::string &why);
  /// Plans both products of `pair` as one.
  static mlir::FailureOr<MmaTiling> get(Kind kind, const DotPair &pair, int64_t warps,
                                        std::string &why);
  /// Plans an M x K by K x N product of `lhs` and `rhs` elements.
  static mlir::FailureOr<MmaTiling> get(Kind kind, int64_t M, int64_t N, int64_t K, mlir::Type lhs,
                                        mlir::Type rhs, int64_t warps, std::string &why);
};

/// The pair `first` runs as in a role of `warps` warps that lowers the ops
/// `runs` accepts: DotPair::of, when the role runs the second too and both
/// fit one tiling; otherwise `first` runs alone.
std::optional<DotPair> pairRunning(MmaTiling::Kind kind, tile::DotOp first, int64_t warps,
                                   llvm::function_ref<bool(mlir::Operation *)> runs);
/// The pair `dot` runs in, as first or second, taking the dots of its block
/// that the role runs in order, as the lowering does (a second pairs with
/// nothing else).
std::optional<DotPair> pairContaining(MmaTiling::Kind kind, tile::DotOp dot, int64_t warps,
                                      llvm::function_ref<bool(mlir::Operation *)> runs);

/// Whether dots under a schedule's `mma` stage their operands for the
/// tensor cores (wgmma, tcgen05, mma_sync), where a transpose feeding them
/// moves nothing.
inline bool stagesDotOperands(llvm::StringRef mma) {
  return MmaTiling::kindOf(mma) || WarpMmaTiling::named(mma);
}

/// A transpose whose only users are dots on tensor cores: the dots stage
/// its input directly (a K-major operand is the transposed one's rows).
inline bool foldedIntoTensorCoreDots(tile::TransposeOp tr, tile::ScheduleAttr schedule) {
  return stagesDotOperands(schedule.getMma()) && foldsIntoDots(tr);
}

} // namespace kiln

#endif
