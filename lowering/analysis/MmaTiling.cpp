//===- MmaTiling.cpp - how a tile.dot runs on tensor cores ----------------===//
#include "lowering/analysis/MmaTiling.h"

#include "mlir/IR/Dominance.h"

using namespace mlir;
using namespace kiln;

static int64_t alignTo(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

std::optional<MmaTiling::Kind> MmaTiling::kindOf(StringRef mma) {
  if (mma == "wgmma")
    return Kind::Wgmma;
  if (mma == "tcgen05")
    return Kind::Tcgen05;
  return std::nullopt;
}

FailureOr<MmaTiling> MmaTiling::get(Kind kind, tile::DotOp dot, int64_t warps, std::string &why) {
  auto lhs = dot.getLhs().getType(), rhs = dot.getRhs().getType();
  return get(kind, lhs.getShape()[0], rhs.getShape()[1], lhs.getShape()[1], lhs.getElementType(),
             rhs.getElementType(), warps, why);
}

bool kiln::feedsOnlyDots(Operation *op) {
  return !op->use_empty() &&
         llvm::all_of(op->getUsers(), [](Operation *u) { return isa<tile::DotOp>(u); });
}

bool kiln::foldsIntoDots(tile::TransposeOp tr) { return feedsOnlyDots(tr); }

std::pair<Value, bool> kiln::stagedTile(Value operand) {
  if (auto tr = operand.getDefiningOp<tile::TransposeOp>(); tr && foldsIntoDots(tr))
    return {tr.getInput(), true};
  return {operand, false};
}

int64_t DotPair::offset() const {
  tile::DotOp dot = first; // accessors are not const
  return sharesRhs ? dot.getLhs().getType().getShape()[0] : dot.getRhs().getType().getShape()[1];
}

std::optional<tile::DotOp> kiln::nextDotRunnableWith(tile::DotOp first, tile::DotOp after) {
  tile::DotOp second;
  Operation *from = after ? after.getOperation() : first.getOperation();
  for (Operation *op = from->getNextNode(); op && !second; op = op->getNextNode())
    second = dyn_cast<tile::DotOp>(op);
  if (!second)
    return std::nullopt;
  DominanceInfo dominance(first->getParentOfType<tile::KernelOp>());
  for (Value v : second->getOperands())
    if (!dominance.properlyDominates(stagedTile(v).first, first))
      return std::nullopt;
  return second;
}

std::optional<DotPair> DotPair::of(tile::DotOp first) {
  std::optional<tile::DotOp> next = nextDotRunnableWith(first);
  if (!next)
    return std::nullopt;
  tile::DotOp second = *next;
  auto lhs = first.getLhs().getType(), rhs = first.getRhs().getType();
  auto lhs2 = second.getLhs().getType(), rhs2 = second.getRhs().getType();
  if (lhs.getShape()[1] != lhs2.getShape()[1] || lhs.getElementType() != lhs2.getElementType() ||
      rhs.getElementType() != rhs2.getElementType())
    return std::nullopt;
  DotPair pair{first, second, true};
  if (stagedTile(first.getRhs()) == stagedTile(second.getRhs()))
    pair.sharesRhs = true;
  else if (stagedTile(first.getLhs()) == stagedTile(second.getLhs()))
    pair.sharesRhs = false;
  else
    return std::nullopt;
  // The stacked operand starts on a whole 8-row group (core matrices, and
  // the swizzle's atoms, are 8 rows).
  if (pair.offset() % 8)
    return std::nullopt;
  return pair;
}

std::optional<DotPair> kiln::pairRunning(MmaTiling::Kind kind, tile::DotOp first, int64_t warps,
                                         function_ref<bool(Operation *)> runs) {
  std::optional<DotPair> pair = DotPair::of(first);
  std::string why;
  if (pair && (!runs(pair->second) || failed(MmaTiling::get(kind, *pair, warps, why))))
    return std::nullopt;
  return pair;
}

std::optional<DotPair> kiln::pairContaining(MmaTiling::Kind kind, tile::DotOp dot, int64_t warps,
                                            function_ref<bool(Operation *)> runs) {
  Operation *taken = nullptr; // the second of the last pair
  for (Operation &op : *dot->getBlock()) {
    auto first = dyn_cast<tile::DotOp>(op);
    if (!first || &op == taken || !runs(first))
      continue;
    std::optional<DotPair> pair = pairRunning(kind, first, warps, runs);
    if (first == dot || (pair && pair->second == dot))
      return pair;
    if (pair)
      taken = pair->second;
  }
  return std::nullopt;
}

FailureOr<MmaTiling> MmaTiling::get(Kind kind, const DotPair &pair, int64_t warps,
                                    std::string &why) {
  tile::DotOp first = pair.first, second = pair.second;
  auto lhs = first.getLhs().getType(), rhs = first.getRhs().getType();
  int64_t M = lhs.getShape()[0], N = rhs.getShape()[1];
  if (pair.sharesRhs)
    M += second.getLhs().getType().getShape()[0];
  else
    N += second.getRhs().getType().getShape()[1];
  return get(kind, M, N, lhs.getShape()[1], lhs.getElementType(), rhs.getElementType(), warps, why);
}

FailureOr<MmaTiling> MmaTiling::get(Kind kind, int64_t M, int64_t N, int64_t K, Type a, Type b,
                                    int64_t warps, std::string &why) {
  MmaTiling t;
  t.kind = kind;
  t.M = M;
  t.N = N;
  t.K = K;
  if (a.isBF16() && b.isBF16())
    t.operands = Operands::BF16;
  else if (a.isF16() && b.isF16())
    t.operands = Operands::F16;
  else if (a.isF32() && b.isBF16()) // f16 parts would lose A's range: tf32
    t.operands = Operands::BF16, t.splitA = true;
  else
    t.operands = Operands::TF32;
  t.elemBytes = t.operands == Operands::TF32 ? 4 : 2;
  t.kStep = 32 / t.elemBytes;
  bool tcgen05 = kind == Kind::Tcgen05;
  const char *name = tcgen05 ? "tcgen05" : "wgmma";
  if (warps % 4) {
    why = tcgen05
              ? "reads its result from tensor memory on whole warpgroups (each warp of one "
                "reaches a quarter of the lanes), but the role has " +
                    std::to_string(warps) + " warps"
              : "runs on whole warpgroups, but the role has " + std::to_string(warps) + " warps";
    return failure();
  }
  if (t.K % t.kStep) {
    why = "has an inner dim of " + std::to_string(t.K) + "; " + name + " on " +
          (t.operands == Operands::TF32 ? "tf32" : "16-bit") + " operands needs a multiple of " +
          std::to_string(t.kStep);
    return failure();
  }
  t.warpgroups = warps / 4;
  // tcgen05 runs 128 rows at once where there are more than 64; its N steps
  // by 16 at 128 rows.
  t.instrM = tcgen05 && M > 64 ? 128 : 64;
  int64_t nStep = t.instrM == 128 ? 16 : 8;
  t.mTiles = alignTo(t.M, t.instrM) / t.instrM;
  int64_t nPad = alignTo(t.N, nStep);
  // wgmma: split columns while warpgroups would idle and the halves stay
  // whole instructions (one thread issues every tcgen05 item: no gain);
  // then until a part fits one instruction (N <= 256).
  t.nParts = 1;
  while (!tcgen05 && t.mTiles * t.nParts * 2 <= t.warpgroups && nPad % (16 * t.nParts) == 0)
    t.nParts *= 2;
  while (nPad / t.nParts > 256 || nPad % (nStep * t.nParts))
    ++t.nParts;
  t.nChunk = nPad / t.nParts;
  // Rows past M and columns past N are staged as whatever is there: they only
  // reach result elements nobody reads. K is exact.
  t.rowsA = t.mTiles * t.instrM;
  t.rowsB = nPad;
  int64_t rowBytes = t.K * t.elemBytes; // a multiple of 32 (kStep)
  t.swizzleBytes = rowBytes % 128 == 0 ? 128 : rowBytes % 64 == 0 ? 64 : 32;
  int64_t chunkBytes = t.nChunk * t.elemBytes;
  t.nMajorSwizzleBytes = chunkBytes % 128 == 0  ? 128
                         : chunkBytes % 64 == 0 ? 64
                         : chunkBytes % 32 == 0 ? 32
                                                : 0;
  if (tcgen05) {
    t.tmemColumns = t.items() * t.nChunk;
    // 8 registers a load: a load's registers are all live from the load to
    // the wait, and wider loads spilled in the 128-register chunk kernel.
    t.loadColumns = 8;
    // A lane (one row) stores 16 bytes at a time; a row pitch of 16 bytes
    // past a multiple of 128 puts 8 rows in 8 bank groups.
    t.dStride = alignTo(t.N, 32) + 4;
  } else {
    // Two f32 per lane per store; 8 extra columns keep a half-warp's rows in
    // distinct banks.
    t.dStride = t.N + 8;
  }
  t.placeStagingAreas(/*stageA=*/true, /*stageB=*/true);
  return t;
}

void MmaTiling::placeStagingAreas(bool stageA, bool stageB) {
  aOffset = 0;
  bOffset = stageA ? alignTo(aParts() * aPartBytes(), kAtomAlignment) : 0;
  dOffset = alignTo(bOffset + (stageB ? rowsB * K * elemBytes : 0), 128);
  bytes = dOffset + M * dStride * 4;
}

tile::LayoutAttr MmaTiling::fragmentLayout(MLIRContext *ctx) const {
  // nChunk == N: one column part, and N needs no padding to a multiple of 8.
  if (kind != Kind::Wgmma || nChunk != N || M != mTiles * 64 || mTiles % warpgroups)
    return {};
  return tile::LayoutAttr::get(ctx, {2, 2}, {8, 4}, {4 * warpgroups, 1}, {0, 1}, {1, 0});
}
