//===- WarpMma.cpp - how a tile.dot runs as warp-level mma.sync -----------===//
#include "lowering/analysis/WarpMma.h"

#include "lowering/analysis/MmaTiling.h"

#include <tuple>

using namespace mlir;
using namespace kiln;

tile::LayoutAttr WarpMmaTiling::fragmentLayout(MLIRContext *ctx, int64_t wm, int64_t wn) {
  return tile::LayoutAttr::get(ctx, {2, 2}, {8, 4}, {wm, wn}, {0, 1}, {1, 0});
}

std::optional<std::pair<int64_t, int64_t>> WarpMmaTiling::fragmentGrid(tile::LayoutAttr layout) {
  if (!layout || layout.getWarps().size() != 2)
    return std::nullopt;
  int64_t wm = layout.getWarps()[0], wn = layout.getWarps()[1];
  if (layout != fragmentLayout(layout.getContext(), wm, wn))
    return std::nullopt;
  return std::make_pair(wm, wn);
}

const WarpMmaStaging::Tile &WarpMmaStaging::place(Value operand) {
  Value tile = stagedTile(operand).first;
  for (const Tile &t : tiles)
    if (t.tile == tile)
      return t;
  // 16 bytes more than the row, so that 8 rows' 16-byte pieces at one
  // column lie in 8 different bank groups (the row's bytes are a multiple
  // of 32).
  auto type = cast<tile::TileType>(tile.getType());
  int64_t pitch = type.getShape()[1] * 2 + 16;
  tiles.push_back({tile, bytes, pitch});
  bytes += type.getShape()[0] * pitch;
  return tiles.back();
}

FailureOr<WarpMmaTiling> WarpMmaTiling::get(tile::DotOp dot, int64_t warps, WarpMmaStaging &staging,
                                            std::string &why) {
  WarpMmaTiling t;
  auto lhs = dot.getLhs().getType(), rhs = dot.getRhs().getType();
  t.M = lhs.getShape()[0];
  t.K = lhs.getShape()[1];
  t.N = rhs.getShape()[1];
  Type a = lhs.getElementType(), b = rhs.getElementType();
  if (a != b || !(a.isBF16() || a.isF16())) {
    why = "multiplies f16 or bf16 operands, both of one type (mma.sync.m16n8k16); cast them "
          "with `as f16` or `as bf16`";
    return failure();
  }
  t.bf16 = a.isBF16();
  if (t.M % 16 || t.N % 8 || t.K % 16) {
    why = "needs M a multiple of 16, N of 8 and K of 16 (m16n8k16 blocks); this product is " +
          std::to_string(t.M) + " x " + std::to_string(t.N) + " x " + std::to_string(t.K);
    return failure();
  }
  // The warp grid: the result's layout's where tile-assign-layouts gave it
  // one of the fragments' (the default's, or one a schedule picked).
  // Otherwise, of the splits using the most warps, the one reading the
  // fewest fragment registers a k step (mBlocks A's 4 and nBlocks B's 2),
  // on a tie the one of whole rows (an A a product made then comes from
  // its registers, aInRegisters). Warps past the grid hold copies.
  auto assigned = dot->getAttrOfType<tile::LayoutAttr>(tile::kLayoutAttr);
  if (std::optional<std::pair<int64_t, int64_t>> grid = fragmentGrid(assigned)) {
    std::tie(t.wm, t.wn) = *grid;
    if (t.M / 16 % t.wm || t.N / 8 % t.wn || t.wm * t.wn > warps) {
      why = "cannot deal the " + std::to_string(t.M / 16) + " x " + std::to_string(t.N / 8) +
            " m16 x n8 blocks of its result to the " + std::to_string(t.wm) + " x " +
            std::to_string(t.wn) + " warps its layout names (of " + std::to_string(warps) + ")";
      return failure();
    }
    t.keepsResult = true;
  } else {
    int64_t best = -1;
    for (int64_t wm = 1; wm <= warps; wm *= 2)
      for (int64_t wn = 1; wm * wn <= warps; wn *= 2) {
        if (t.M / 16 % wm || t.N / 8 % wn)
          continue;
        int64_t reads = t.M / 16 / wm * 4 + t.N / 8 / wn * 2;
        int64_t score = wm * wn * 1000000 - reads;
        if (score > best || (score == best && wn < t.wn)) {
          best = score;
          t.wm = wm;
          t.wn = wn;
        }
      }
  }
  t.aTransposed = stagedTile(dot.getLhs()).second;
  t.bTransposed = stagedTile(dot.getRhs()).second;
  Operation *aDef = dot.getLhs().getDefiningOp();
  auto aLayout = aDef ? aDef->getAttrOfType<tile::LayoutAttr>(tile::kLayoutAttr) : nullptr;
  t.aInRegisters = t.wn == 1 && !t.aTransposed && aLayout &&
                   aLayout == fragmentLayout(dot.getContext(), t.wm, 1);
  if (!t.aInRegisters) {
    const WarpMmaStaging::Tile &at = staging.place(dot.getLhs());
    t.aOffset = at.offset;
    t.aPitch = at.pitch;
  }
  Operation *bDef = dot.getRhs().getDefiningOp();
  auto bLayout = bDef ? bDef->getAttrOfType<tile::LayoutAttr>(tile::kLayoutAttr) : nullptr;
  t.bInRegisters =
      t.wn == 1 && !t.bTransposed && bLayout && bLayout == fragmentLayout(dot.getContext(), 1, 1);
  if (!t.bInRegisters) {
    const WarpMmaStaging::Tile &bt = staging.place(dot.getRhs());
    t.bOffset = bt.offset;
    t.bPitch = bt.pitch;
  }
  if (!t.keepsResult) {
    t.dOffset = (staging.bytes + 15) / 16 * 16;
    t.dStride = t.N + 4;
    staging.bytes = t.dOffset + t.M * t.dStride * 4;
  }
  return t;
}

int64_t WarpMmaTiling::stagingBytes(tile::DotOp dot, int64_t warps) {
  std::string why;
  WarpMmaStaging staging;
  FailureOr<WarpMmaTiling> first = get(dot, warps, staging, why);
  if (failed(first))
    return 0;
  SmallVector<tile::DotOp, 4> dots{dot};
  SmallVector<WarpMmaTiling, 4> plans{*first};
  growGroup(dot, warps, staging, dots, plans, [](tile::DotOp) { return true; });
  return staging.bytes;
}

void WarpMmaTiling::growGroup(tile::DotOp first, int64_t warps, WarpMmaStaging &staging,
                              SmallVectorImpl<tile::DotOp> &dots,
                              SmallVectorImpl<WarpMmaTiling> &plans,
                              function_ref<bool(tile::DotOp)> joins) {
  while (std::optional<tile::DotOp> next = nextDotRunnableWith(first, dots.back())) {
    WarpMmaStaging grown = staging;
    std::string why;
    FailureOr<WarpMmaTiling> t;
    if (!joins(*next) || failed(t = get(*next, warps, grown, why)))
      return;
    staging = grown;
    dots.push_back(*next);
    plans.push_back(*t);
  }
}
