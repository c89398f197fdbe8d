//===- Layout.cpp - register arithmetic of #tile.layout -------------------===//
#include "lowering/analysis/Layout.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <map>

using namespace mlir;
using namespace kiln;

TileLayout TileLayout::get(tile::LayoutAttr attr, ArrayRef<int64_t> shape) {
  TileLayout l;
  l.size.assign(attr.getSize().begin(), attr.getSize().end());
  l.lanes.assign(attr.getLanes().begin(), attr.getLanes().end());
  l.warps.assign(attr.getWarps().begin(), attr.getWarps().end());
  l.dims.assign(attr.getDims().begin(), attr.getDims().end());
  l.lanesFirst.assign(attr.getLanesFirst().begin(), attr.getLanesFirst().end());
  l.shape.assign(shape.begin(), shape.end());
  return l;
}

std::optional<TileLayout> kiln::assignedLayout(Value v) {
  auto shape = cast<tile::TileType>(v.getType()).getShape();
  if (Operation *def = v.getDefiningOp())
    if (auto attr = def->getAttrOfType<tile::LayoutAttr>(tile::kLayoutAttr))
      return TileLayout::get(attr, shape);
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
      return assignedLayout(forOp.getInitArgs()[arg.getArgNumber() - 1]);
  if (auto res = dyn_cast<OpResult>(v))
    if (auto forOp = dyn_cast<scf::ForOp>(res.getOwner()))
      return assignedLayout(forOp.getInitArgs()[res.getResultNumber()]);
  return std::nullopt;
}

TileLayout kiln::layoutOfValue(Value v) {
  std::optional<TileLayout> l = assignedLayout(v);
  if (!l)
    llvm::report_fatal_error("tile without a layout: run tile-assign-layouts first");
  return *l;
}

bool kiln::staysInWarps(const TileLayout &from, const TileLayout &to, int64_t warps,
                        ArrayRef<int64_t> perm) {
  int64_t elements = 1;
  for (int64_t extent : from.shape)
    elements *= extent;
  // Elements numbered row-major in `from`'s shape; `fromDim` maps a dim of
  // `l` to from's (the identity for `from` itself).
  auto linear = [&](const TileLayout &l, ArrayRef<int64_t> fromDim, int64_t r, int64_t lane,
                    int64_t warp) {
    SmallVector<int64_t, 2> index = l.regIndex(r), coords(l.shape.size());
    for (unsigned d = 0; d < l.shape.size(); ++d)
      coords[fromDim.empty() ? d : fromDim[d]] = l.coordinate(d, index[d], lane, warp);
    int64_t at = 0;
    for (unsigned d = 0; d < from.shape.size(); ++d)
      at = at * from.shape[d] + coords[d];
    return at;
  };
  // The warp writing each element: the lowering's owner of each group of
  // threads holding copies (lane and warp coordinate 0 along replicated
  // dims, threads past the layout's lanes and warps idle).
  SmallVector<int64_t> writer(elements, -1);
  SmallVector<unsigned, 2> replicated = from.replicatedParentDims();
  for (int64_t warp = 0; warp < std::min(warps, from.warpCount()); ++warp)
    for (int64_t lane = 0; lane < from.laneCount(); ++lane) {
      bool owns = llvm::all_of(replicated, [&](unsigned p) {
        return lane / from.laneStride(p) % from.lanes[p] == 0 &&
               warp / from.warpStride(p) % from.warps[p] == 0;
      });
      if (owns)
        for (int64_t r = 0; r < from.numRegs(); ++r)
          writer[linear(from, {}, r, lane, warp)] = warp;
    }
  for (int64_t warp = 0; warp < warps; ++warp)
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t r = 0; r < to.numRegs(); ++r)
        if (writer[linear(to, perm, r, lane, warp)] != warp)
          return false;
  return true;
}

bool kiln::permutesRegisters(const TileLayout &from, const TileLayout &to, ArrayRef<int64_t> perm) {
  if (from.size != to.size || from.lanes != to.lanes || from.warps != to.warps ||
      from.lanesFirst != to.lanesFirst)
    return false;
  for (auto [d, p] : llvm::enumerate(perm))
    if (to.dims[d] != from.dims[p])
      return false;
  return true;
}

std::optional<SmallVector<int64_t>>
kiln::windowRegisters(const TileLayout &from, const TileLayout &to, ArrayRef<int64_t> offsets) {
  if (from.size != to.size || from.lanes != to.lanes || from.warps != to.warps ||
      from.lanesFirst != to.lanesFirst || from.dims != to.dims || from.mismatch() || to.mismatch())
    return std::nullopt;
  for (unsigned d = 0; d < to.shape.size(); ++d) {
    // A dim of one element is held whole by every thread; a window of one
    // row of a longer dim is not where that row's holders keep it.
    if (from.isUnit(d) || to.isUnit(d)) {
      if (!from.isUnit(d) || !to.isUnit(d) || offsets[d])
        return std::nullopt;
      continue;
    }
    if (offsets[d] % from.span(from.dims[d]))
      return std::nullopt;
  }
  // A whole span further along dim d is `size` registers further.
  SmallVector<int64_t> picked;
  for (int64_t r = 0; r < to.numRegs(); ++r) {
    SmallVector<int64_t, 2> index = to.regIndex(r);
    for (unsigned d = 0; d < index.size(); ++d)
      if (!to.isUnit(d)) {
        unsigned p = from.dims[d];
        index[d] += offsets[d] / from.span(p) * from.size[p];
      }
    picked.push_back(from.regNumber(index));
  }
  return picked;
}

tile::LayoutAttr TileLayout::attr(MLIRContext *ctx) const {
  return tile::LayoutAttr::get(ctx, size, lanes, warps, dims, lanesFirst);
}

int64_t TileLayout::contiguous(unsigned d) const {
  if (isUnit(d) || lanesFirstAlong(dims[d]))
    return 1;
  return size[dims[d]];
}

int64_t TileLayout::regsAlong(unsigned d) const {
  if (isUnit(d))
    return 1;
  unsigned p = dims[d];
  return shape[d] / span(p) * size[p];
}

int64_t TileLayout::numRegs() const {
  int64_t n = 1;
  for (unsigned d = 0; d < shape.size(); ++d)
    n *= regsAlong(d);
  return n;
}

SmallVector<int64_t, 2> TileLayout::regIndex(int64_t r) const {
  SmallVector<int64_t, 2> idx(shape.size());
  for (int d = shape.size() - 1; d >= 0; --d) {
    idx[d] = r % regsAlong(d);
    r /= regsAlong(d);
  }
  return idx;
}

int64_t TileLayout::regNumber(ArrayRef<int64_t> index) const {
  int64_t r = 0;
  for (unsigned d = 0; d < shape.size(); ++d)
    r = r * regsAlong(d) + index[d];
  return r;
}

int64_t TileLayout::constOffset(unsigned d, int64_t i) const {
  if (isUnit(d))
    return 0;
  unsigned p = dims[d];
  int64_t inner = i % size[p] * (lanesFirstAlong(p) ? lanes[p] : 1);
  return (i / size[p]) * span(p) + inner;
}

int64_t TileLayout::coordinate(unsigned d, int64_t i, int64_t lane, int64_t warp) const {
  if (isUnit(d))
    return 0;
  unsigned p = dims[d];
  int64_t laneCoord = lane / laneStride(p) % lanes[p], warpCoord = warp / warpStride(p) % warps[p];
  return laneCoord * laneStep(p) + warpCoord * size[p] * lanes[p] + constOffset(d, i);
}

int64_t TileLayout::laneStride(unsigned p) const {
  int64_t s = 1;
  for (unsigned q = p + 1; q < parentRank(); ++q)
    s *= lanes[q];
  return s;
}

int64_t TileLayout::warpStride(unsigned p) const {
  int64_t s = 1;
  for (unsigned q = p + 1; q < parentRank(); ++q)
    s *= warps[q];
  return s;
}

int64_t TileLayout::laneCount() const { return laneStride(0) * lanes[0]; }
int64_t TileLayout::warpCount() const { return warpStride(0) * warps[0]; }

SmallVector<unsigned, 2> TileLayout::replicatedParentDims() const {
  SmallVector<unsigned, 2> out;
  for (unsigned p = 0; p < parentRank(); ++p) {
    auto it = llvm::find(dims, (int64_t)p);
    if (it == dims.end() || isUnit(it - dims.begin()))
      out.push_back(p);
  }
  return out;
}

std::optional<std::string> TileLayout::mismatch() const {
  if (dims.size() != shape.size())
    return "layout has " + std::to_string(dims.size()) + " dims for a tile of rank " +
           std::to_string(shape.size());
  for (unsigned d = 0; d < shape.size(); ++d) {
    if (isUnit(d))
      continue;
    unsigned p = dims[d];
    if (shape[d] % span(p) != 0)
      return "tile extent " + std::to_string(shape[d]) + " along dim " + std::to_string(d) +
             " is not a multiple of the layout's span " + std::to_string(span(p)) +
             " (size x lanes x warps)";
  }
  return std::nullopt;
}

std::optional<MatrixReads> kiln::matrixReads(const TileLayout &l) {
  if (l.shape.size() != 2 || l.numRegs() % 2 || l.numRegs() == 0)
    return std::nullopt;
  auto at = [&](int64_t r, int64_t lane, int64_t warp) {
    SmallVector<int64_t, 2> i = l.regIndex(r);
    return std::array<int64_t, 2>{l.coordinate(0, i[0], lane, warp),
                                  l.coordinate(1, i[1], lane, warp)};
  };
  // Where lane `lane` holds element `e` of the 8 x 8 matrix at `base`.
  auto expected = [](bool transposed, std::array<int64_t, 2> base, int64_t lane, int64_t e) {
    int64_t pair = 2 * (lane % 4) + e, row = lane / 4;
    return transposed ? std::array<int64_t, 2>{base[0] + pair, base[1] + row}
                      : std::array<int64_t, 2>{base[0] + row, base[1] + pair};
  };
  // Whether registers (first, second) are one matrix's pairs in every warp.
  auto isMatrix = [&](bool transposed, int64_t first, int64_t second) {
    for (int64_t warp = 0; warp < l.warpCount(); ++warp) {
      std::array<int64_t, 2> base = at(first, 0, warp);
      if (base[0] % 8 || base[1] % 8 || base[0] + 8 > l.shape[0] || base[1] + 8 > l.shape[1])
        return false;
      for (int64_t lane = 0; lane < 32; ++lane)
        if (at(first, lane, warp) != expected(transposed, base, lane, 0) ||
            at(second, lane, warp) != expected(transposed, base, lane, 1))
          return false;
    }
    return true;
  };
  MatrixReads reads;
  SmallVector<bool> taken(l.numRegs(), false);
  // The register holding each element of warp 0's lane 0.
  std::map<std::array<int64_t, 2>, int64_t> ofElement;
  for (int64_t r = 0; r < l.numRegs(); ++r)
    ofElement.emplace(at(r, 0, 0), r);
  std::optional<bool> kind;
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    if (taken[r])
      continue;
    std::optional<std::pair<int64_t, int64_t>> found;
    for (bool transposed : {true, false}) {
      if (kind && *kind != transposed)
        continue;
      auto s = ofElement.find(expected(transposed, at(r, 0, 0), 0, 1));
      if (s != ofElement.end() && !taken[s->second] && s->second != r &&
          isMatrix(transposed, r, s->second)) {
        found = {r, s->second};
        kind = transposed;
        break;
      }
    }
    if (!found)
      return std::nullopt;
    taken[found->first] = taken[found->second] = true;
    reads.pairs.push_back(*found);
  }
  reads.transposed = *kind; // set: the tile has registers (above)
  return reads;
}

tile::LayoutAttr kiln::defaultLayout(MLIRContext *ctx, ArrayRef<int64_t> shape, unsigned elemBytes,
                                     int64_t numWarps, LayoutChoice fixed) {
  unsigned rank = shape.size();
  SmallVector<int64_t, 2> size(rank, 1), lanes(rank, 1), warps(rank, 1), dims;
  for (unsigned d = 0; d < rank; ++d)
    dims.push_back(d);
  auto pow2Floor = [](int64_t x) {
    return x <= 1 ? int64_t(1) : int64_t(llvm::bit_floor(uint64_t(x)));
  };
  // Largest power of two dividing x (the tile covers it evenly).
  auto pow2Divisor = [](int64_t x) { return x & -x; };
  int64_t last = shape[rank - 1];
  if (!fixed.size.empty())
    size.assign(fixed.size.begin(), fixed.size.end());
  else
    size[rank - 1] = std::min<int64_t>(pow2Floor(16 / std::max(1u, elemBytes)), pow2Divisor(last));
  if (!fixed.lanes.empty()) {
    lanes.assign(fixed.lanes.begin(), fixed.lanes.end());
  } else {
    int64_t laneBudget = 32;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t room = pow2Divisor(shape[d]) / size[d];
      lanes[d] = std::min(laneBudget, std::max<int64_t>(room, 1));
      laneBudget /= lanes[d];
    }
  }
  if (!fixed.warps.empty()) {
    warps.assign(fixed.warps.begin(), fixed.warps.end());
  } else {
    int64_t warpBudget = pow2Floor(numWarps);
    for (unsigned d = 0; d < rank; ++d) {
      int64_t room = pow2Divisor(shape[d]) / (size[d] * lanes[d]);
      warps[d] = std::min(warpBudget, std::max<int64_t>(room, 1));
      warpBudget /= warps[d];
    }
  }
  return tile::LayoutAttr::get(ctx, size, lanes, warps, dims);
}
