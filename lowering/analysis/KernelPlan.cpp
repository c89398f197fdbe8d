//===- KernelPlan.cpp - warp roles and copy pipelines of a kernel ---------===//
#include "lowering/analysis/KernelPlan.h"
#include "dsl/schedule/Schedule.h"
#include "dsl/schedule/Target.h"
#include "lowering/analysis/KernelWalk.h"
#include "lowering/analysis/Layout.h"
#include "lowering/analysis/MmaTiling.h"
#include "lowering/analysis/WarpMma.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cstdio>
#include <map>
#include <set>

using namespace mlir;
using namespace kiln;
using namespace kiln::tile;

namespace {

int64_t alignTo(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

int64_t tileBytes(Value v) {
  auto t = cast<TileType>(v.getType());
  return t.getNumElements() * std::max<int64_t>(1, t.getElementType().getIntOrFloatBitWidth() / 8);
}

/// The op with the largest measure over all roles so far.
struct Widest {
  Operation *op = nullptr;
  int64_t value = 0;
};

/// The largest `measure` of an op `role` runs; raises `widest` past it.
int64_t mostOf(KernelOp kernel, const RolePlan &role, Widest &widest,
               function_ref<int64_t(Operation *)> measure) {
  int64_t most = 0;
  kernel.walk([&](Operation *op) {
    if (!role.runs.contains(op))
      return;
    int64_t value = measure(op);
    most = std::max(most, value);
    if (value > widest.value)
      widest = {op, value};
  });
  return most;
}

std::string formatDouble(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

/// A dot operand a ring's tile can be where the tensor cores read it: K its
/// last dim (an lhs, or an rhs through a transpose folded into the dot), or
/// an rhs as it lies, N its last dim (`nMajor`: only where the product reads
/// B N-major).
struct MmaOperandUse {
  DotOp dot;
  bool isLhs;
  bool nMajor = false;
};

/// Every use of a ring's tile, when each is such an operand and all read it
/// the same way (the same side of their dots, transposed or not): the tile's
/// one use, or several products in one block reading one stage in place
/// (the last of them in the block frees it: RingPlan::lastReader). None
/// otherwise.
SmallVector<MmaOperandUse> mmaOperandUses(LoadOp load) {
  SmallVector<MmaOperandUse> uses;
  auto add = [&](Operation *user, Value v, bool transposed) {
    auto dot = dyn_cast<DotOp>(user);
    if (!dot || (dot.getLhs() == v) == (dot.getRhs() == v))
      return false; // not a dot, or both of its operands
    bool isLhs = dot.getLhs() == v;
    if (isLhs && transposed)
      return false;
    MmaOperandUse use{dot, isLhs, !isLhs && !transposed};
    if (!uses.empty() && (uses.front().isLhs != use.isLhs || uses.front().nMajor != use.nMajor ||
                          uses.front().dot->getBlock() != dot->getBlock()))
      return false;
    uses.push_back(use);
    return true;
  };
  Value tile = load.getResult();
  for (Operation *user : tile.getUsers()) {
    auto tr = dyn_cast<TransposeOp>(user);
    if (!tr) {
      if (!add(user, tile, false))
        return {};
      continue;
    }
    if (!foldsIntoDots(tr) || tr.getResult().use_empty())
      return {};
    for (Operation *dotUser : tr.getResult().getUsers())
      if (!add(dotUser, tr.getResult(), true))
        return {};
  }
  return uses;
}

/// Where a ring's stages lie: its own, or (the second operand of a stacked
/// pair) inside those of ring `owner`, `rowBytes` into each K block.
struct StagePlacement {
  unsigned owner;
  int64_t rowBytes = 0;
};

/// Whether a TMA copy of `load` may stop short of its window inside the
/// tensor along the tile's first dim (a limit there that is not the view's
/// own end); nullopt where it may along another dim, kept or dropped, which
/// an operand read in place cannot take (its readers only zero whole rows).
std::optional<bool> cutsFirstDim(LoadOp load) {
  if (!load.getMasked() || load.getLimits().empty())
    return false;
  auto view = cast<ViewType>(load.getView().getType());
  auto kernel = load->getParentOfType<KernelOp>();
  bool first = false;
  for (unsigned vd = 0; vd < view.getRank(); ++vd) {
    if (isViewEnd(load.getLimits()[vd], view, vd, kernel))
      continue; // the copy zero-fills past the tensor's end
    if (vd != load.getKeep().front())
      return std::nullopt;
    first = true;
  }
  return first;
}

/// Which TMA rings feed a tensor-core product directly (RingPlan::mmaOperand)
/// and how their stages are laid out, with each ring's placement.
/// A ring qualifies when its tile is the sole operand use of a dot in the
/// one role reading it, has the tensor cores' element type, runs along the
/// view's contiguous dim, needs no masking past the view's end (the copy
/// zero-fills outside the tensor) but along its first dim (the readers
/// zero those rows: RingPlan::cutsRows), and, as one half of a stacked
/// pair, the other half qualifies too (neither cut).
SmallVector<StagePlacement> planMmaOperandRings(KernelPlan &plan) {
  SmallVector<StagePlacement> placement;
  for (unsigned i = 0; i < plan.rings.size(); ++i)
    placement.push_back({i});
  struct Candidate {
    DotOp pairFirst;                 // the product's first dot
    Operation *lastReader = nullptr; // of several unpaired readers
    bool stacked = false;            // one half of a stacked pair
    bool second = false;             // of the pair: the second dot's operand
    bool nMajor = false;             // a B read N-major
    bool cuts = false;               // rows past a limit zeroed by the reader
    int64_t rows = 0, rowStart = 0, swizzle = 0, kBytes = 0, elemBytes = 0;
  };
  DenseMap<unsigned, Candidate> candidates;
  for (auto [i, ring] : llvm::enumerate(plan.rings)) {
    SmallVector<MmaOperandUse> uses = mmaOperandUses(ring.load);
    std::optional<bool> cuts = cutsFirstDim(ring.load);
    if (uses.empty() || !cuts || llvm::count(ring.consumedBy, true) != 1)
      continue;
    unsigned readerIndex = ring.firstReader();
    const RolePlan &reader = plan.roles[readerIndex];
    // The reader's products read the stage: their instruction lays it out.
    std::optional<MmaTiling::Kind> kind = MmaTiling::kindOf(reader.mma());
    if (!kind)
      continue;
    int64_t warps = plan.productWarps(readerIndex, *kind == MmaTiling::Kind::Wgmma);
    auto runs = [&](Operation *op) { return reader.runs.contains(op); };
    // Each reader's tiling; several readers each run alone and read the
    // stage alike (the same rows, swizzle and layout).
    std::optional<DotPair> pair;
    std::optional<MmaTiling> t;
    bool alike = true;
    for (const MmaOperandUse &u : uses) {
      std::optional<DotPair> p = pairContaining(*kind, u.dot, warps, runs);
      std::string why;
      FailureOr<MmaTiling> ut =
          p ? MmaTiling::get(*kind, *p, warps, why) : MmaTiling::get(*kind, u.dot, warps, why);
      alike = reader.runs.contains(u.dot) && succeeded(ut) && !(p && uses.size() > 1) &&
              (!t || (ut->rowsA == t->rowsA && ut->rowsB == t->rowsB && ut->K == t->K &&
                      ut->N == t->N && ut->elemBytes == t->elemBytes));
      if (!alike)
        break;
      if (!t) {
        pair = p;
        t = *ut;
      }
    }
    if (!alike || !t)
      continue;
    const MmaOperandUse *use = &uses.front();
    TileType tile = ring.load.getResult().getType();
    int64_t elemBytes = tile.getElementType().getIntOrFloatBitWidth() / 8;
    auto view = cast<ViewType>(ring.load.getView().getType());
    if (t->elemBytes != elemBytes || tile.getRank() != 2 ||
        ring.load.getKeep().back() != view.getRank() - 1)
      continue;
    Candidate c;
    c.pairFirst = pair ? pair->first : use->dot;
    c.stacked = pair && pair->sharesRhs == use->isLhs;
    c.second = pair && use->dot == pair->second;
    // N-major, the rows are K's and the swizzle's blocks run along N; a B
    // stacked beside another, or padded past N, stays K-major (staged).
    if (use->nMajor) {
      if (!t->readsBNMajor() || !t->nMajorSwizzleBytes || c.stacked || t->rowsB != t->N)
        continue;
      c.nMajor = true;
      c.rows = t->K;
      c.swizzle = t->nMajorSwizzleBytes;
    } else {
      c.rows = use->isLhs ? t->rowsA : t->rowsB;
      c.swizzle = t->swizzleBytes;
    }
    c.cuts = *cuts;
    if (c.cuts && c.stacked)
      continue; // the rows of a stacked stage are two tiles'
    c.rowStart = c.stacked && c.second ? pair->offset() : 0;
    if (uses.size() > 1)
      for (const MmaOperandUse &u : uses)
        if (!c.lastReader || c.lastReader->isBeforeInBlock(u.dot))
          c.lastReader = u.dot;
    c.kBytes = tile.getShape()[1] * elemBytes;
    c.elemBytes = elemBytes;
    candidates[i] = c;
  }
  // A stacked pair's halves go together or not at all.
  auto partnerOf = [&](unsigned i) -> int {
    for (auto &[j, c] : candidates)
      if (j != i && c.pairFirst == candidates[i].pairFirst && c.stacked)
        return j;
    return -1;
  };
  SmallVector<unsigned> chosen;
  for (auto &[i, c] : candidates) {
    if (!c.stacked) {
      chosen.push_back(i);
      continue;
    }
    int j = partnerOf(i);
    if (j >= 0 && plan.rings[i].depth == plan.rings[j].depth)
      chosen.push_back(i);
  }
  llvm::sort(chosen);
  for (unsigned i : chosen) {
    const Candidate &c = candidates[i];
    RingPlan &ring = plan.rings[i];
    ring.swizzleBytes = c.swizzle;
    ring.nMajor = c.nMajor;
    ring.cutsRows = c.cuts;
    ring.lastReader = c.lastReader;
    ring.kBlocks = c.kBytes / c.swizzle;
    ring.kBlockStride = c.rows * c.swizzle;
    ring.box.back() = c.swizzle / c.elemBytes;
    ring.stageStride = alignTo(c.rows * c.kBytes, MmaTiling::kAtomAlignment);
    if (c.second)
      placement[i] = {(unsigned)partnerOf(i), c.rowStart * c.swizzle};
  }
  return placement;
}

} // namespace

void kiln::noteScheduleLine(InFlightDiagnostic &diag, ScheduleAttr schedule,
                            ArrayRef<StringRef> keys) {
  DictionaryAttr sources = schedule.getSources();
  for (StringRef key : keys)
    if (auto at = dyn_cast_or_null<LocationAttr>(sources ? sources.get(key) : Attribute())) {
      diag.attachNote(Location(at)) << "the schedule sets it here";
      return;
    }
}

int64_t kiln::sharedReadWavefronts(const TileLayout &l, int64_t elemBytes, int64_t vec,
                                   llvm::function_ref<int64_t(int64_t, int64_t)> byteOf) {
  unsigned last = l.shape.size() - 1;
  int64_t accessBytes = vec * elemBytes;
  int64_t phaseLanes = accessBytes <= 4 ? 32 : 128 / accessBytes;
  int64_t total = 0;
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<int64_t, 2> ri = l.regIndex(r);
    if (ri[last] % vec)
      continue; // inside a vector started earlier
    for (int64_t first = 0; first < 32; first += phaseLanes) {
      std::map<int64_t, std::set<int64_t>> wordsOfBank;
      for (int64_t lane = first; lane < first + phaseLanes; ++lane) {
        int64_t row = 0;
        for (unsigned d = 0; d < last; ++d)
          row = row * l.shape[d] + l.coordinate(d, ri[d], lane, 0);
        int64_t at = byteOf(row, l.coordinate(last, ri[last], lane, 0));
        for (int64_t word = at / 4; word < (at + accessBytes + 3) / 4; ++word)
          wordsOfBank[word % 32].insert(word);
      }
      int64_t most = 1;
      for (auto &[bank, words] : wordsOfBank)
        most = std::max<int64_t>(most, words.size());
      total += most;
    }
  }
  return total;
}

int64_t kiln::stageReadVector(const TileLayout &l, int64_t elemBytes) {
  unsigned last = l.shape.size() - 1;
  int64_t vec = std::min<int64_t>(l.contiguous(last), 16 / elemBytes);
  while (vec > 1 && l.shape[last] % vec)
    vec /= 2;
  return vec;
}

namespace {

/// Swizzles the stages of rings that threads read (not tensor-core operands
/// read in place) where TMA's 128-byte swizzle lets the readers' layout
/// take fewer shared-memory wavefronts than the dense tile: a warp reading
/// one element of many rows at the same column hits one bank per 128-byte
/// row in the dense tile, and a different bank per row % 8 swizzled. Needs
/// the layouts (tile-assign-layouts); before them nothing is swizzled.
void planSwizzledReads(KernelPlan &plan) {
  constexpr int64_t kSwizzle = 128;
  for (RingPlan &ring : plan.rings) {
    if (ring.mmaOperand() || !ring.load.getLimits().empty())
      continue;
    TileType tile = ring.load.getResult().getType();
    auto view = cast<ViewType>(ring.load.getView().getType());
    std::optional<TileLayout> l = assignedLayout(ring.load.getResult());
    if (!l || tile.getRank() < 2 || ring.load.getKeep().back() != view.getRank() - 1)
      continue;
    int64_t elemBytes = tile.getElementType().getIntOrFloatBitWidth() / 8;
    int64_t rowElems = tile.getShape().back(), rowBytes = rowElems * elemBytes;
    int64_t rows = tile.getNumElements() / rowElems;
    if (rowBytes % kSwizzle || rows % 8)
      continue;
    int64_t vec = stageReadVector(*l, elemBytes);
    RingPlan swizzled = ring;
    swizzled.swizzleBytes = kSwizzle;
    swizzled.threadSwizzled = true;
    swizzled.kBlocks = rowBytes / kSwizzle;
    swizzled.kBlockStride = rows * kSwizzle;
    int64_t dense = sharedReadWavefronts(*l, elemBytes, vec, [&](int64_t row, int64_t col) {
      return (row * rowElems + col) * elemBytes;
    });
    int64_t fewer = sharedReadWavefronts(*l, elemBytes, vec, [&](int64_t row, int64_t col) {
      return swizzled.threadByte(row, col, elemBytes);
    });
    if (fewer >= dense)
      continue;
    swizzled.box.back() = kSwizzle / elemBytes;
    swizzled.stageStride = alignTo(ring.stageBytes, MmaTiling::kAtomAlignment);
    ring = swizzled;
  }
}

/// The ops `role` must lower so that its own ops can run: operands, the
/// loops and conditions around them, and of a loop's carried values only
/// those the role reads (inside or after the loop), each with its initial
/// and next value. A ring load read by a role that does not issue it needs
/// nothing of its indices (its tile arrives through shared memory) unless
/// it has limits to apply again.
void closeOver(KernelPlan &plan, unsigned role, ArrayRef<Operation *> seeds) {
  RolePlan &rp = plan.roles[role];
  SmallVector<Operation *> work(seeds.begin(), seeds.end());
  SmallVector<std::pair<scf::ForOp, unsigned>> carriedWork;
  auto pushValue = [&](Value v) {
    if (auto res = dyn_cast<OpResult>(v)) {
      work.push_back(res.getOwner());
      if (auto loop = dyn_cast<scf::ForOp>(res.getOwner()))
        carriedWork.push_back({loop, res.getResultNumber()});
      return;
    }
    auto arg = cast<BlockArgument>(v);
    Operation *owner = arg.getOwner()->getParentOp();
    if (!owner || isa<KernelOp>(owner))
      return;
    work.push_back(owner);
    if (auto loop = dyn_cast<scf::ForOp>(owner); loop && arg.getArgNumber() > 0)
      carriedWork.push_back({loop, arg.getArgNumber() - 1});
  };
  while (!work.empty() || !carriedWork.empty()) {
    if (!carriedWork.empty()) {
      auto [loop, i] = carriedWork.pop_back_val();
      SmallVector<bool> &carried = rp.carried[loop.getOperation()];
      carried.resize(loop.getNumRegionIterArgs(), false);
      if (carried[i])
        continue;
      carried[i] = true;
      pushValue(loop.getInitArgs()[i]);
      pushValue(loop.getBody()->getTerminator()->getOperand(i));
      continue;
    }
    Operation *op = work.pop_back_val();
    if (isa<KernelOp>(op) || !rp.runs.insert(op).second)
      continue;
    if (Operation *parent = op->getParentOp(); parent && !isa<KernelOp>(parent))
      work.push_back(parent);
    // An issuer needs of a product only the ring stages it may read in
    // place; the served role stages everything else.
    if (auto dot = dyn_cast<DotOp>(op); dot && rp.issuesMma) {
      for (Value operand : {dot.getLhs(), dot.getRhs()})
        if (Operation *def = stagedTile(operand).first.getDefiningOp(); def && plan.ringOf(def))
          work.push_back(def);
      continue;
    }
    // A handed-over store: its writer needs the tile, its copier where it
    // goes.
    if (const StoreRingPlan *out = plan.storeRingOf(op)) {
      auto store = cast<StoreOp>(op);
      if (out->issuer != role) {
        pushValue(store.getValue());
        continue;
      }
      for (OpOperand &operand : op->getOpOperands())
        if (operand.get() != store.getValue())
          pushValue(operand.get());
      continue;
    }
    // A shared ring's reader loads the tile from a stage: it makes none of
    // it.
    if (const SharedRingPlan *shared = plan.sharedRingOf(op); shared && shared->writer != role)
      continue;
    const RingPlan *ring = plan.ringOf(op);
    if (ring && ring->issuer != role) {
      // The readers re-apply limits (tokens past a sequence's end) to what
      // the copy brought: they need the window's start and its limits.
      auto load = cast<LoadOp>(op);
      if (load.getMasked() && !load.getLimits().empty()) {
        for (Value v : load.getIndices())
          pushValue(v);
        for (Value v : load.getLimits())
          pushValue(v);
      }
      continue;
    }
    // A loop needs its bounds; its carried values come in as they are read.
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      for (Value v : {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
        pushValue(v);
      continue;
    }
    for (Value v : op->getOperands())
      pushValue(v);
  }
}

/// The products issuing role `r` issues: every tensor-core dot of the one
/// computing role that runs any; links the two roles.
LogicalResult planIssuer(KernelOp kernel, KernelPlan &plan, unsigned r,
                         SmallVector<Operation *> &dots) {
  RolePlan &issuer = plan.roles[r];
  int served = -1;
  for (auto [i, role] : llvm::enumerate(plan.roles)) {
    if (role.issuesMma)
      continue;
    bool multiplies = false;
    kernel.walk([&](DotOp dot) { multiplies |= role.runs.contains(dot); });
    if (!multiplies)
      continue;
    if (served >= 0)
      return kernel.emitOpError("has products in roles '")
                 << plan.roles[served].name << "' and '" << role.name << "'; role '" << issuer.name
                 << "' issues the products of one role",
             failure();
    served = i;
  }
  if (served < 0)
    return kernel.emitOpError("has no tensor-core product for role '")
               << issuer.name << "' to issue; drop the role from this kernel's schedule",
           failure();
  issuer.serves = served;
  plan.roles[served].issuer = r;
  kernel.walk([&](DotOp dot) {
    if (plan.roles[served].runs.contains(dot))
      dots.push_back(dot);
  });
  return success();
}

/// The var `name` of `tensor_memory:` or `registers:`, whose first value is
/// `init`: checks that the loop carrying it only scales it, accumulates one
/// tensor-core product onto it and casts it for products' operands read
/// K-major, each copy's products before the update.
FailureOr<ResidentPlan> planResident(StringRef name, Operation *init, ScheduleAttr schedule) {
  ResidentPlan res;
  res.name = name.str();
  res.inRegisters = MmaTiling::kindOf(schedule.getMma()) == MmaTiling::Kind::Wgmma;
  std::string where = res.inRegisters ? "registers" : "tensor memory";
  std::tie(res.loop, res.index) = loopCarrying(init);
  auto loop = cast<scf::ForOp>(res.loop);
  auto fail = [&](Operation *at, const Twine &why) {
    InFlightDiagnostic diag = at->emitOpError() << why;
    noteScheduleLine(diag, schedule, {"tensor_memory", "registers"});
    return failure();
  };
  Value carried = loop.getRegionIterArgs()[res.index];
  auto type = cast<TileType>(carried.getType());
  if (type.getRank() != 2 || !type.getElementType().isF32())
    return fail(loop, "carries '" + name + "' in " + where + ", which hold" +
                          (res.inRegisters ? "" : "s") + " f32 tiles of rank 2");
  std::string form = "`" + name.str() + " * s + dot(a, b)`";
  Value next = loop.getBody()->getTerminator()->getOperand(res.index);
  auto sum = next.getDefiningOp<AddOp>();
  if (!sum || sum->getBlock() != loop.getBody())
    return fail(next.getDefiningOp() ? next.getDefiningOp() : loop.getOperation(),
                "gives '" + name + "' its next value, which " + where + " take" +
                    (res.inRegisters ? "" : "s") + " only as " + form + " or `" + name +
                    " + dot(a, b)`");
  res.sum = sum;
  Value other;
  // The product, or (in registers) the product times a scalar: the dot, and
  // the mul and the scalar it multiplies by (null for a plain product).
  struct ScaledProduct {
    DotOp dot;
    MulOp mul;
    Value factor;
  };
  auto scaledProduct = [&](Value x) -> ScaledProduct {
    if (auto dot = x.getDefiningOp<DotOp>())
      return {dot, MulOp(), Value()};
    auto mul = x.getDefiningOp<MulOp>();
    if (!mul || !mul->hasOneUse())
      return {};
    for (auto [p, q] : {std::pair{mul.getLhs(), mul.getRhs()}, {mul.getRhs(), mul.getLhs()}}) {
      auto dot = p.getDefiningOp<DotOp>();
      auto bc = q.getDefiningOp<BroadcastOp>();
      if (dot && bc && bc.getInput().getType().getShape().empty())
        return {dot, mul, bc.getInput()};
    }
    return {};
  };
  for (auto [x, y] : {std::pair{sum.getLhs(), sum.getRhs()}, {sum.getRhs(), sum.getLhs()}})
    if (ScaledProduct p = scaledProduct(x); p.dot && !res.update) {
      if (p.mul && !res.inRegisters)
        return fail(p.mul, "scales the product it adds onto '" + name +
                               "' in tensor memory, which takes it only as " + form + " or `" +
                               name + " + dot(a, b)`; in registers it may be `" + name +
                               " * s + dot(a, b) * t`, t a scalar");
      res.update = p.dot;
      res.productScale = p.mul;
      res.productFactor = p.factor;
      other = y;
    }
  if (res.update && other != carried) {
    auto scale = other.getDefiningOp<MulOp>();
    Value factor;
    // A scalar, or (in registers, where each thread holds whole rows'
    // pairs) one factor a row broadcast along the columns.
    if (scale)
      for (auto [x, y] :
           {std::pair{scale.getLhs(), scale.getRhs()}, {scale.getRhs(), scale.getLhs()}}) {
        auto bc = y.getDefiningOp<BroadcastOp>();
        if (x != carried || !bc)
          continue;
        ArrayRef<int64_t> from = bc.getInput().getType().getShape();
        if (from.empty())
          factor = bc.getInput();
        else if (res.inRegisters && from.size() == 2 && from[0] == type.getShape()[0] &&
                 from[1] == 1) {
          factor = bc.getResult();
          res.rowFactor = true;
        }
      }
    if (!factor || !scale->hasOneUse())
      res.update = nullptr;
    else {
      res.scale = scale;
      res.factor = factor;
    }
  }
  if (!res.update)
    return fail(sum, "gives '" + name + "' its next value, which " + where + " take" +
                         (res.inRegisters ? "" : "s") + " only as " + form + " with s a scalar" +
                         (res.inRegisters ? " or one factor a row (`r[:, None]`), `" + name +
                                                " * s + dot(a, b) * t` with t a scalar"
                                          : "") +
                         ", or `" + name + " + dot(a, b)`");
  DotOp update = res.update;
  if (update.getAcc() || !update->hasOneUse() || update.getType() != type || !sum->hasOneUse())
    return fail(update, "accumulates onto '" + name + "' in " + where +
                            ", so its result must have the var's shape and "
                            "no other use");
  if (DotPair::of(update))
    return fail(update, "accumulates onto '" + name + "' in " + where +
                            " and must run alone, but it shares an operand "
                            "with the next product");
  // The scale must be known, and every copy read, before the update runs.
  Block *body = loop.getBody();
  auto before = [&](Value v) {
    Operation *def = v.getDefiningOp();
    Operation *at = def ? body->findAncestorOpInBlock(*def) : nullptr;
    return !at || at->isBeforeInBlock(update);
  };
  if (res.factor && !before(res.factor))
    return fail(update, "accumulates onto '" + name + "' in " + where +
                            ", which is scaled first: compute the scale "
                            "before the product");
  bool copiesReadBeforeScale = true;
  for (OpOperand &use : carried.getUses()) {
    Operation *user = use.getOwner();
    if (user == res.scale || user == sum)
      continue;
    auto copy = dyn_cast<CastOp>(user);
    std::string why = ("reads '" + name + "', which the schedule keeps in " + where +
                       ": the loop may only scale it, accumulate a product onto it, and cast it "
                       "for products' operands")
                          .str();
    if (!copy || copy->getBlock() != body)
      return fail(user, why);
    for (OpOperand &copyUse : copy->getUses()) {
      Operation *reader = copyUse.getOwner();
      bool transposed = false;
      Value operand = copy.getResult();
      SmallVector<std::pair<Operation *, Value>> dots;
      if (auto tr = dyn_cast<TransposeOp>(reader)) {
        if (!foldsIntoDots(tr))
          return fail(reader, why);
        transposed = true;
        for (Operation *d : tr->getUsers())
          dots.push_back({d, tr.getResult()});
      } else {
        dots.push_back({reader, operand});
      }
      for (auto [d, v] : dots) {
        auto dot = dyn_cast<DotOp>(d);
        if (!dot || (dot.getLhs() != v && dot.getRhs() != v))
          return fail(d, why);
        if ((dot.getLhs() == v) == transposed)
          return fail(
              dot,
              "reads '" + name + "' from " + where + " with its rows along the product's K; " +
                  (res.inRegisters ? "a thread holds pairs along a row" : "a lane holds a row") +
                  ", so the var's columns must be K");
        if (!dot->isBeforeInBlock(update))
          return fail(dot, "reads '" + name + "' after the product that accumulates onto it; " +
                               where + " hold" + (res.inRegisters ? "" : "s") +
                               " one value of the var");
        copiesReadBeforeScale =
            copiesReadBeforeScale && res.scale && dot->isBeforeInBlock(res.scale);
      }
    }
  }
  // A copy is made from the fragments when its product issues (wgmma reads
  // it from registers of its own), so the scale may come any time after.
  res.scalesAtMul = res.inRegisters && res.scale && copiesReadBeforeScale;
  return res;
}

/// A `copy: tma` pipeline's buffer `id`: a load whose tiles a TMA engine
/// copies into a ring of its own stages; `first` is the pipeline's first
/// ring (planPipelineGroups makes one of them its group's leader).
LogicalResult planLoadRing(KernelOp kernel, KernelPlan &plan, PipelineAttr p, StringRef id,
                           unsigned first, const llvm::StringMap<Operation *> &byId,
                           function_ref<int(StringRef)> roleOwning) {
  auto load = dyn_cast_or_null<LoadOp>(byId.lookup(id));
  if (!load)
    return kernel.emitOpError("pipeline buffer '") << id << "' is not a load", failure();
  // A TMA copy fills what lies outside the tensor with zeros; what lies
  // past a limit inside it the readers mask again from shared memory.
  if (load.getMasked() && load.getOther() && !load.getOther()->isZero())
    return load.emitOpError("is masked with other = ")
               << formatDouble(load.getOther()->convertToDouble())
               << "; a TMA copy fills what lies outside the tensor with zeros: load it with "
                  "`copy: ld`, or let masked-off elements read 0",
           failure();
  if (!load.getFloors().empty())
    return load.emitOpError("may start before its sub-view; the readers of a TMA ring cut "
                            "a stage at the sub-view's end only: load it with `copy: ld`, or "
                            "index the whole tensor"),
           failure();
  auto viewArg = dyn_cast<BlockArgument>(load.getView());
  if (!viewArg)
    return load.emitOpError("reads a view that is not a kernel argument"), failure();
  ViewType view = cast<ViewType>(viewArg.getType());
  TileType tile = load.getResult().getType();
  if (view.getRank() > 5)
    return load.emitOpError("reads a rank-")
               << view.getRank() << " view; a TMA copy takes at most 5 dims",
           failure();
  RingPlan ring;
  ring.load = load;
  ring.pipeline = p.getName().str();
  ring.leader = first;
  ring.depth = p.getDepth();
  ring.viewArg = viewArg.getArgNumber();
  ArrayRef<int64_t> keep = load.getKeep();
  for (int64_t d = 0; d < view.getRank(); ++d) {
    auto pos = llvm::find(keep, d);
    ring.box.push_back(pos == keep.end() ? 1 : tile.getShape()[pos - keep.begin()]);
    if (ring.box.back() > 256)
      return load.emitOpError("needs a TMA box of ")
                 << ring.box.back() << " along view dim " << d << "; a box dim is at most 256",
             failure();
  }
  int64_t elemBytes = tile.getElementType().getIntOrFloatBitWidth() / 8;
  if (ring.box.back() * elemBytes % 16)
    return load.emitOpError("copies rows of ")
               << ring.box.back() * elemBytes
               << " bytes; a TMA box row must be a multiple of 16 bytes",
           failure();
  ring.stageBytes = tile.getNumElements() * elemBytes;
  ring.stageStride = alignTo(ring.stageBytes, kRingAlignment);
  int owner = roleOwning(id);
  if (owner < 0)
    return load.emitOpError("is in pipeline '")
               << ring.pipeline << "' but in no role: list it under the role that issues it",
           failure();
  ring.issuer = owner;
  plan.rings.push_back(ring);
  return success();
}

/// The rings of one pipeline share the full barriers of the load that
/// comes first: every load of the group in one block (one copy of each a
/// stage), issued by one role; each reading role waits at the first of
/// them it reads.
LogicalResult planPipelineGroups(KernelPlan &plan, ScheduleAttr schedule) {
  for (unsigned g = 0; g < plan.rings.size(); ++g) {
    SmallVector<unsigned> members;
    for (auto [i, ring] : llvm::enumerate(plan.rings))
      if (ring.leader == g)
        members.push_back(i);
    if (members.empty())
      continue;
    RingPlan &first = plan.rings[members.front()];
    Block *block = first.load->getBlock();
    unsigned leader = members.front();
    int64_t bytes = 0;
    for (unsigned m : members) {
      const RingPlan &ring = plan.rings[m];
      auto fail = [&](const Twine &why) {
        InFlightDiagnostic diag = ring.load->emitOpError("is in pipeline '")
                                  << ring.pipeline << "' with '"
                                  << first.load->getAttrOfType<StringAttr>("tile.id").getValue()
                                  << "', " << why;
        noteScheduleLine(diag, schedule, {"pipelines"});
        return failure();
      };
      if (ring.load->getBlock() != block)
        return fail("but not in the same block: a pipeline's buffers are copied a stage at a "
                    "time, one of each, so give each its own pipeline");
      if (ring.issuer != first.issuer)
        return fail("but another role issues it: one role copies a pipeline's stages");
      if (ring.load->isBeforeInBlock(plan.rings[leader].load))
        leader = m;
      bytes += ring.stageBytes;
    }
    for (unsigned m : members) {
      RingPlan &ring = plan.rings[m];
      ring.leader = leader;
      ring.groupBytes = m == leader ? bytes : 0;
      ring.waitsFull.assign(plan.roles.size(), false);
    }
    // Each reading role waits at the first of the group's loads it reads
    // (an issuer reads its served role's operands in place: it waits too).
    for (unsigned r = 0; r < plan.roles.size(); ++r) {
      std::optional<unsigned> at;
      for (unsigned m : members) {
        const RingPlan &ring = plan.rings[m];
        if (plan.readsRing(ring, r) && (!at || ring.load->isBeforeInBlock(plan.rings[*at].load)))
          at = m;
      }
      if (at)
        plan.rings[*at].waitsFull[r] = true;
    }
    // The role that copies the stages issues each copy where its load
    // stands. If it also reads them, it waits there for all of the stage's
    // bytes: a copy it would issue after that wait never goes out, and the
    // wait never ends.
    unsigned issuer = first.issuer;
    std::optional<unsigned> waitAt;
    for (unsigned m : members)
      if (plan.rings[m].waitsFull[issuer])
        waitAt = m;
    if (!waitAt)
      continue;
    for (unsigned m : members) {
      const RingPlan &late = plan.rings[m];
      if (!plan.rings[*waitAt].load->isBeforeInBlock(late.load))
        continue;
      std::string who = plan.multiRole() ? "role '" + plan.roles[issuer].name + "'"
                                         : std::string("the kernel's one role");
      InFlightDiagnostic diag =
          late.load->emitOpError("is in pipeline '")
          << late.pipeline << "', which " << who
          << " both copies and reads: it waits for the stage at '"
          << plan.rings[*waitAt].load->getAttrOfType<StringAttr>("tile.id").getValue()
          << "', before it issues this copy, and would wait forever; give the copies a role "
             "of their own (a loader), or this load its own pipeline";
      noteScheduleLine(diag, schedule, {"pipelines"});
      return failure();
    }
  }
  return success();
}

/// A `copy: bulk` pipeline of one buffer: the store it carries leaves through a ring of
/// shared-memory stages that the role owning the store copies out.
LogicalResult planStoreRing(KernelOp kernel, KernelPlan &plan, PipelineAttr p,
                            const llvm::StringMap<Operation *> &byId,
                            function_ref<int(StringRef)> roleOwning) {
  StringRef id = cast<StringAttr>(p.getBuffers()[0]).getValue();
  auto store = dyn_cast_or_null<StoreOp>(byId.lookup(id));
  if (!store)
    return kernel.emitOpError("pipeline '")
               << p.getName().getValue() << "' copies '" << id
               << "' with `copy: bulk`, which carries stores; a load travels by `copy: tma`",
           failure();
  if (!isa<BlockArgument>(store.getView()))
    return store.emitOpError("writes a view that is not a kernel argument"), failure();
  auto view = cast<ViewType>(store.getView().getType());
  TileType tile = store.getValue().getType();
  int64_t elemBytes = std::max<int64_t>(1, tile.getElementType().getIntOrFloatBitWidth() / 8);
  // Each row of the tile is one copy of contiguous bytes.
  if (tile.getRank() == 0 || store.getKeep().back() != view.getRank() - 1)
    return store.emitOpError("is in pipeline '")
               << p.getName().getValue()
               << "', but its tile has no dim along the view's contiguous dim; a bulk copy "
                  "moves whole rows: store it with plain stores (no pipeline)",
           failure();
  int64_t rowBytes = tile.getShape().back() * elemBytes;
  if (rowBytes % 16)
    return store.emitOpError("copies rows of ")
               << rowBytes << " bytes; a bulk copy moves a multiple of 16 bytes",
           failure();
  int owner = roleOwning(id);
  if (owner < 0)
    return store.emitOpError("is in pipeline '")
               << p.getName().getValue() << "' but in no role: list it under the role that "
               << "copies it out",
           failure();
  StoreRingPlan ring;
  ring.store = store;
  ring.pipeline = p.getName().str();
  ring.depth = p.getDepth();
  ring.stageBytes = tile.getNumElements() * elemBytes;
  ring.stageStride = alignTo(ring.stageBytes, kRingAlignment);
  ring.issuer = owner;
  plan.storeRings.push_back(ring);
  return success();
}

/// The role that computes a handed-over store's tile: the one computing
/// role besides the role copying it out.
LogicalResult chooseWriter(KernelOp kernel, KernelPlan &plan, StoreRingPlan &ring) {
  int writer = -1;
  for (auto [r, role] : llvm::enumerate(plan.roles)) {
    if (r == ring.issuer || !role.computes())
      continue;
    if (writer >= 0)
      return ring.store.emitOpError("is copied out by role '")
                 << plan.roles[ring.issuer].name << "', but roles '" << plan.roles[writer].name
                 << "' and '" << role.name
                 << "' both compute; a handed-over store needs one role to compute its tile",
             failure();
    writer = r;
  }
  if (writer < 0)
    return ring.store.emitOpError("is in pipeline '")
               << ring.pipeline
               << "', but no other role computes its tile; a bulk store hands a tile from the "
                  "computing role to a role that copies it out",
           failure();
  if (plan.roles[ring.issuer].computes())
    return ring.store.emitOpError("is copied out by role '")
               << plan.roles[ring.issuer].name
               << "', which also computes; a role copying stores out lists only copies",
           failure();
  ring.writer = writer;
  return success();
}

/// A `copy: shared` pipeline: its buffers (tiles made in one block by the
/// role listing them) and their places in a stage.
LogicalResult planSharedRing(KernelOp kernel, KernelPlan &plan, PipelineAttr p,
                             const llvm::StringMap<Operation *> &byId,
                             function_ref<int(StringRef)> roleOwning, ScheduleAttr schedule) {
  SharedRingPlan ring;
  ring.pipeline = p.getName().str();
  ring.depth = p.getDepth();
  int writer = -1;
  for (StringRef id : p.getBuffers().getAsValueRange<StringAttr>()) {
    Operation *op = byId.lookup(id);
    if (!op || op->getNumResults() != 1 || !isa<TileType>(op->getResult(0).getType()))
      return kernel.emitOpError("pipeline '")
                 << ring.pipeline << "' carries '" << id << "', which makes no tile of the kernel",
             failure();
    auto fail = [&](const Twine &why) {
      InFlightDiagnostic diag = op->emitOpError("is in pipeline '")
                                << ring.pipeline << "', " << why;
      noteScheduleLine(diag, schedule, {"pipelines"});
      return failure();
    };
    int owner = roleOwning(id);
    if (owner < 0 || plan.roles.size() < 2)
      return fail("but no role lists it: list it under the role that computes it and writes "
                  "the stages");
    if (writer >= 0 && owner != writer)
      return fail("but another role lists it: one role writes a pipeline's stages");
    writer = owner;
    if (!ring.buffers.empty() && op->getBlock() != ring.buffers.front()->getBlock())
      return fail("but not in the same block as '" +
                  ring.buffers.front()->getAttrOfType<StringAttr>(kOpIdAttr).getValue() +
                  "': a stage holds one of each buffer, so give each its own pipeline");
    ring.buffers.push_back(op);
  }
  llvm::sort(ring.buffers, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ring.buffers) {
    Operation *reader = nullptr;
    for (Operation *user : op->getUsers())
      if (isa<ConvertLayoutOp>(user) && user->hasAttr(kRingReadAttr))
        reader = user;
    ring.readers.push_back(reader);
    ring.bufferOffsets.push_back(ring.stageBytes);
    // 16-byte aligned, so each thread's vector accesses stay aligned.
    ring.stageBytes = alignTo(ring.stageBytes + tileBytes(op->getResult(0)), 16);
  }
  ring.stageStride = alignTo(ring.stageBytes, kRingAlignment);
  ring.writer = writer;
  plan.sharedRings.push_back(ring);
  return success();
}

} // namespace

std::optional<SmallVector<int64_t>> kiln::slicedInRegisters(SliceOp slice) {
  std::optional<TileLayout> in = assignedLayout(slice.getInput()),
                            out = assignedLayout(slice.getResult());
  if (!in || !out)
    return std::nullopt;
  return windowRegisters(*in, *out, slice.getOffsets());
}

StringRef KernelPlan::mmaOf(Operation *op) const {
  for (const RolePlan &role : roles)
    if (role.computes() && role.runs.contains(op))
      return role.mma();
  return schedule.getMma().getValue();
}

bool KernelPlan::makes(unsigned r, Value v) const {
  const RolePlan &role = roles[r];
  if (!role.computes())
    return false;
  // A loop's carried tile (its argument or result): the role carrying it.
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *loop = arg.getOwner()->getParentOp();
    return isa_and_nonnull<scf::ForOp>(loop) && arg.getArgNumber() > 0 &&
           role.carries(loop, arg.getArgNumber() - 1);
  }
  Operation *def = v.getDefiningOp();
  if (isa<scf::ForOp>(def))
    return role.carries(def, cast<OpResult>(v).getResultNumber());
  if (const SharedRingPlan *shared = sharedRingOf(def);
      shared && llvm::is_contained(shared->buffers, def))
    return r == shared->writer;
  return role.runs.contains(def);
}

int64_t KernelPlan::layoutWarpsOf(Value v) const {
  for (unsigned r = 0; r < roles.size(); ++r)
    if (makes(r, v))
      return roles[r].numWarps;
  return layoutWarps;
}

const SharedRingPlan *KernelPlan::sharedRingOf(Operation *op) const {
  for (const SharedRingPlan &r : sharedRings)
    if (r.indexOf(op) >= 0)
      return &r;
  return nullptr;
}

const StoreRingPlan *KernelPlan::storeRingOf(Operation *store) const {
  for (const StoreRingPlan &r : storeRings)
    if (tile::StoreOp ringStore = r.store; ringStore.getOperation() == store)
      return &r;
  return nullptr;
}

const ResidentPlan *KernelPlan::residentOf(Operation *loop, unsigned index) const {
  for (const ResidentPlan &res : residents)
    if (res.loop == loop && res.index == index)
      return &res;
  return nullptr;
}

const ResidentPlan *KernelPlan::residentTouchedBy(Operation *op) const {
  for (const ResidentPlan &res : residents) {
    if (op == res.update || op == res.scale || op == res.sum || op == res.productScale)
      return &res;
    auto loop = cast<scf::ForOp>(res.loop);
    if (isa<CastOp>(op) && op->getOperand(0) == loop.getRegionIterArgs()[res.index])
      return &res;
  }
  return nullptr;
}

bool KernelPlan::stagesWholeLayout(Operation *op) const {
  auto dot = dyn_cast<DotOp>(op);
  if (!dot)
    return false;
  const ResidentPlan *res = residentUpdatedBy(dot);
  if (std::optional<DotPair> pair = DotPair::of(dot); !res && pair)
    res = residentUpdatedBy(pair->second);
  return res && !res->inRegisters;
}

FailureOr<MmaTiling> KernelPlan::updateTiling(const ResidentPlan &res, std::string &why) const {
  return MmaTiling::get(res.inRegisters ? MmaTiling::Kind::Wgmma : MmaTiling::Kind::Tcgen05,
                        res.update, roles[res.role].numWarps, why);
}

bool KernelPlan::readsARegisters(DotOp dot, const MmaTiling &t) const {
  if (t.nParts != 1 || t.M != t.mTiles * 64 || t.mTiles % t.warpgroups)
    return false;
  Operation *def = dot.getLhs().getDefiningOp();
  if (isa_and_nonnull<SliceOp>(def))
    return false; // staged from its input's registers, never held itself
  const ResidentPlan *res = def ? residentTouchedBy(def) : nullptr;
  if (res && isa<CastOp>(def)) {
    if (!res->inRegisters)
      return false;
    std::string why;
    FailureOr<MmaTiling> held = updateTiling(*res, why);
    return succeeded(held) && held->nParts == 1 && held->N == t.K && held->M == t.M &&
           held->warpgroups == t.warpgroups;
  }
  // fragmentLayout() is the same for every N: compare it with the lhs's.
  tile::LayoutAttr fragment = t.fragmentLayout(dot.getContext());
  return fragment && def && def->getAttrOfType<tile::LayoutAttr>(kLayoutAttr) == fragment;
}

bool KernelPlan::foldsSlice(SliceOp slice, ScheduleAttr schedule) const {
  Operation *def = slice.getInput().getDefiningOp();
  return MmaTiling::kindOf(schedule.getMma()) && feedsOnlyDots(slice) &&
         !(def && residentTouchedBy(def));
}

bool KernelPlan::resultInFragment(DotOp dot, const std::optional<DotPair> &pair,
                                  const MmaTiling &t) const {
  tile::LayoutAttr fragment = t.fragmentLayout(dot.getContext());
  return fragment && dot->getAttr(kLayoutAttr) == fragment &&
         (!pair || pair->second->getAttr(kLayoutAttr) == fragment);
}

void KernelPlan::placeOwnProductStaging(DotOp dot, const std::optional<DotPair> &pair, MmaTiling &t,
                                        bool aInPlace, bool bInPlace) const {
  bool ownsA = !pair || !pair->sharesRhs;
  t.placeStagingAreas(!aInPlace && !(ownsA && readsARegisters(dot, t)), !bInPlace);
}

int64_t KernelPlan::ownProductStagingBytes(DotOp dot, int64_t warps,
                                           function_ref<bool(Value)> readInPlace) const {
  int64_t most = 0;
  auto size = [&](const std::optional<DotPair> &pair) {
    std::string why;
    FailureOr<MmaTiling> t = pair ? MmaTiling::get(MmaTiling::Kind::Wgmma, *pair, warps, why)
                                  : MmaTiling::get(MmaTiling::Kind::Wgmma, dot, warps, why);
    if (failed(t))
      return; // the lowering reports it
    placeOwnProductStaging(dot, pair, *t, readInPlace(dot.getLhs()), readInPlace(dot.getRhs()));
    // Accumulated onto a resident in registers, or left in the
    // accumulators: nothing comes back through the result rows.
    const ResidentPlan *onto = residentUpdatedBy(dot);
    bool owns = !pair || !pair->sharesRhs;
    bool readBack =
        !(owns && ((onto && onto->inRegisters) || (!onto && resultInFragment(dot, pair, *t))));
    most = std::max(most, readBack ? t->bytes : t->dOffset);
  };
  size(std::nullopt);
  if (std::optional<DotPair> pair = DotPair::of(dot))
    size(pair);
  return most;
}

bool KernelPlan::stagesNothing(DotOp dot, int64_t warps) const {
  std::optional<DotPair> pair = DotPair::of(dot);
  if (pair && pair->sharesRhs)
    return false; // each result's rows come back through shared memory
  if (llvm::any_of(roles, [&](const RolePlan &r) { return r.issuesMma && r.runs.contains(dot); }))
    return false;
  std::string why;
  FailureOr<MmaTiling> t = pair ? MmaTiling::get(MmaTiling::Kind::Wgmma, *pair, warps, why)
                                : MmaTiling::get(MmaTiling::Kind::Wgmma, dot, warps, why);
  if (failed(t))
    return false;
  auto inRing = [&](Value operand) {
    Operation *load = stagedTile(operand).first.getDefiningOp();
    const RingPlan *ring = load ? ringOf(load) : nullptr;
    return ring && ring->mmaOperand();
  };
  if (!inRing(dot.getLhs()) && !readsARegisters(dot, *t))
    return false;
  if (!inRing(dot.getRhs()) || (pair && !inRing(pair->second.getRhs())))
    return false;
  if (const ResidentPlan *res = residentUpdatedBy(dot))
    return res->inRegisters && res->inFragmentLayout;
  return resultInFragment(dot, pair, *t);
}

const FlagWaitPlan *KernelPlan::flagWaitOf(Operation *wait) const {
  for (const FlagWaitPlan &f : flagWaits)
    if (tile::WaitOp w = f.wait; w.getOperation() == wait)
      return &f;
  return nullptr;
}

/// Each wait's followers: the roles other than the one that runs it
/// that read global memory after it in its block, by copies they issue or
/// loads of their own (a role that only reads ring stages is ordered after
/// the copies by the ring's barriers).
static void planFlagWaits(KernelOp kernel, KernelPlan &plan) {
  kernel.walk([&](WaitOp wait) {
    FlagWaitPlan f;
    f.wait = wait;
    for (auto [r, role] : llvm::enumerate(plan.roles)) {
      if (role.runs.contains(wait) || role.issuesMma)
        continue;
      bool reads = false;
      for (Operation *op = wait->getNextNode(); op && !reads; op = op->getNextNode())
        op->walk([&](LoadOp load) {
          const RingPlan *ring = plan.ringOf(load);
          reads |= role.runs.contains(load) && (!ring || ring->issuer == r);
        });
      if (reads)
        f.followers.push_back(r);
    }
    plan.flagWaits.push_back(f);
  });
}

const RingPlan *KernelPlan::ringOf(Operation *load) const {
  for (const RingPlan &r : rings)
    if (tile::LoadOp ringLoad = r.load; ringLoad.getOperation() == load)
      return &r;
  return nullptr;
}

/// Tiles whose layout would span two warp counts: an op making a tile, or a
/// loop carrying one, in computing roles of different warp counts.
static LogicalResult checkOneWarpCountATile(KernelOp kernel, const KernelPlan &plan) {
  auto isTile = [](Value v) {
    auto t = dyn_cast<TileType>(v.getType());
    return t && t.getRank() >= 1;
  };
  WalkResult walk = kernel.walk([&](Operation *op) {
    for (Value v : op->getResults()) {
      if (!isTile(v))
        continue;
      const RolePlan *first = nullptr;
      for (auto [r, role] : llvm::enumerate(plan.roles)) {
        if (!plan.makes(r, v))
          continue;
        if (first && first->numWarps != role.numWarps) {
          op->emitOpError("makes a tile in roles '")
              << first->name << "' (" << first->numWarps << " warps) and '" << role.name << "' ("
              << role.numWarps
              << "); a tile's layout spans one warp count: hand it over through a `copy: "
                 "shared` ring, or give the roles the same warps";
          return WalkResult::interrupt();
        }
        first = &role;
      }
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// `schedule` as a role multiplying with `mma` sees it (null: the
/// schedule's own).
static ScheduleAttr withMma(ScheduleAttr schedule, StringAttr mma) {
  if (!mma || mma == schedule.getMma())
    return schedule;
  return ScheduleAttr::get(schedule.getContext(), schedule.getTarget(), schedule.getParams(),
                           schedule.getGrid(), schedule.getWarps(), mma, schedule.getRoles(),
                           schedule.getPipelines(), schedule.getPersistent(), schedule.getSwizzle(),
                           schedule.getGatherMnMajor(), schedule.getRegs(),
                           schedule.getTmemColumns(), schedule.getResident(), schedule.getSources(),
                           schedule.getLayouts());
}

FailureOr<KernelPlan> KernelPlan::build(KernelOp kernel) {
  KernelPlan plan;
  ScheduleAttr schedule = kernel.getScheduleAttr();
  if (!schedule)
    return kernel.emitOpError("needs a schedule"), failure();
  plan.schedule = schedule;
  plan.warps = schedule.getWarps();
  plan.persistent = schedule.getPersistent();
  llvm::StringMap<Operation *> byId = kernel.getOpsById();
  // A pipeline buffer that names a cast of a load stands for the load: the
  // role listing it issues the copy, and whoever uses the cast reads the ring.
  llvm::StringMap<Operation *> sharedById = byId; // for `copy: shared`: the tiles named
  for (Attribute a : schedule.getPipelines())
    for (StringRef id : cast<PipelineAttr>(a).getBuffers().getAsValueRange<StringAttr>())
      if (Operation *op = byId.lookup(id))
        if (Operation *load = KernelOp::copiedBy(op); load != op && load->hasAttr(kPipelineAttr))
          byId[id] = load;

  for (Attribute a : schedule.getRoles()) {
    auto r = cast<RoleAttr>(a);
    RolePlan role;
    role.name = r.getName().str();
    role.firstWarp = r.getFirstWarp();
    role.numWarps = r.getNumWarps();
    role.regs = r.getRegs();
    role.issuesMma = r.getIssuesMma();
    role.schedule = withMma(schedule, r.getMma());
    plan.roles.push_back(std::move(role));
  }
  if (plan.roles.empty()) {
    RolePlan all;
    all.name = "all";
    all.numWarps = plan.warps;
    all.schedule = schedule;
    plan.roles.push_back(std::move(all));
  }
  std::vector<std::pair<int64_t, int64_t>> regsAndWarps;
  for (const RolePlan &r : plan.roles)
    regsAndWarps.push_back({r.regs, r.numWarps});
  plan.launchRegs = launchRegisters(regsAndWarps, plan.warps);
  // A written register budget caps a kernel the roles leave uncapped, e.g.
  // to fit two CTAs of 8 warps on an SM (128 registers).
  if (!plan.launchRegs)
    plan.launchRegs = schedule.getRegs();
  plan.reallocRegs =
      llvm::any_of(plan.roles, [&](const RolePlan &r) { return r.regs != plan.roles[0].regs; });

  // Rings, in pipeline order.
  auto roleOwning = [&](StringRef id) -> int {
    for (auto [i, a] : llvm::enumerate(schedule.getRoles()))
      for (Attribute op : cast<RoleAttr>(a).getOps())
        if (cast<StringAttr>(op).getValue() == id)
          return i;
    return plan.roles.size() == 1 ? 0 : -1;
  };
  for (Attribute a : schedule.getPipelines()) {
    auto p = cast<PipelineAttr>(a);
    if (p.getCopy().getValue() == "shared") {
      if (failed(planSharedRing(kernel, plan, p, sharedById, roleOwning, schedule)))
        return failure();
      continue;
    }
    // TMA loads and bulk stores travel through rings; plain loads need no
    // plan.
    bool out = p.getCopy().getValue() == "bulk";
    if (!out && p.getCopy().getValue() != "tma")
      continue;
    if (out) {
      if (p.getBuffers().size() != 1)
        return kernel.emitOpError("pipeline '")
                   << p.getName().getValue() << "' carries " << p.getBuffers().size()
                   << " stores; a bulk-copy ring carries one: give each its own pipeline",
               failure();
      if (failed(planStoreRing(kernel, plan, p, byId, roleOwning)))
        return failure();
      continue;
    }
    unsigned first = plan.rings.size();
    for (StringRef id : p.getBuffers().getAsValueRange<StringAttr>())
      if (failed(planLoadRing(kernel, plan, p, id, first, byId, roleOwning)))
        return failure();
  }

  // What each role runs: the ops it lists (everything, for a lone role),
  // and for the computing role, the stores it hands to another role's
  // bulk copies. A role that lists only copies it issues just copies.
  SmallVector<SmallVector<Operation *>> seeds(plan.roles.size());
  for (auto [r, role] : llvm::enumerate(plan.roles)) {
    if (role.issuesMma)
      continue;
    if (plan.roles.size() == 1) {
      kernel.getBody().walk([&](Operation *op) {
        if (op->getParentOp() != kernel || !isa<ReturnOp>(op))
          seeds[r].push_back(op);
      });
    } else {
      for (Attribute id : cast<RoleAttr>(schedule.getRoles()[r]).getOps())
        seeds[r].push_back(byId.lookup(cast<StringAttr>(id).getValue()));
    }
    role.copyOnly =
        plan.roles.size() > 1 && !seeds[r].empty() && llvm::all_of(seeds[r], [&](Operation *op) {
          const StoreRingPlan *out = plan.storeRingOf(op);
          return plan.ringOf(op) || isa<WaitOp>(op) || (out && out->issuer == r);
        });
  }
  for (StoreRingPlan &ring : plan.storeRings) {
    if (failed(chooseWriter(kernel, plan, ring)))
      return failure();
    seeds[ring.writer].push_back(ring.store);
  }
  // An issuer last, as it follows the products of the role it serves.
  SmallVector<unsigned> order = llvm::to_vector(llvm::seq<unsigned>(0, plan.roles.size()));
  std::stable_partition(order.begin(), order.end(),
                        [&](unsigned r) { return !plan.roles[r].issuesMma; });
  for (unsigned r : order) {
    if (plan.roles[r].issuesMma && failed(planIssuer(kernel, plan, r, seeds[r])))
      return failure();
    RolePlan &role = plan.roles[r];
    closeOver(plan, r, seeds[r]);
    // Every role knows its program's ids; a persistent loop also strides
    // over the grid, so each role computes the extents too (a copy-only
    // role needs nothing else of them).
    kernel.walk([&](ProgramIdsOp ids) {
      if (plan.persistent)
        closeOver(plan, r, {ids.getOperation()});
      else
        role.runs.insert(ids);
    });
    // Every thread waits for the launches before (none reads their results
    // before) and lets the next launch start: the ops sit at the top of
    // the body and take no operands.
    kernel.walk([&](Operation *op) {
      if (isa<AwaitEarlierOp, AllowLaterOp>(op))
        role.runs.insert(op);
    });
  }
  // A product is lowered for one instruction: the roles running it agree
  // on it, and an issuer issues the schedule's.
  WalkResult mixed = kernel.walk([&](DotOp dot) {
    const RolePlan *first = nullptr;
    for (const RolePlan &role : plan.roles) {
      if (!role.computes() || !role.runs.contains(dot))
        continue;
      if (role.issuer >= 0 && role.schedule != schedule) {
        dot.emitOpError("runs in role '")
            << role.name << "', whose products role '" << plan.roles[role.issuer].name
            << "' issues under 'mma: " << schedule.getMma().getValue()
            << "', but it sets 'mma: " << role.mma() << "'";
        return WalkResult::interrupt();
      }
      if (first && first->mma() != role.mma()) {
        dot.emitOpError("runs in roles '")
            << first->name << "' ('mma: " << first->mma() << "') and '" << role.name
            << "' ('mma: " << role.mma() << "'); a product is lowered for one instruction";
        return WalkResult::interrupt();
      }
      first = &role;
    }
    return WalkResult::advance();
  });
  if (mixed.wasInterrupted())
    return failure();
  for (RingPlan &ring : plan.rings) {
    for (auto [r, role] : llvm::enumerate(plan.roles)) {
      // An issuer reads stages in place after its served role has: the
      // served role releases them.
      bool reads = !role.issuesMma && llvm::any_of(ring.load->getUsers(), [&](Operation *user) {
        return role.runs.contains(user);
      });
      ring.consumedBy.push_back(reads);
      if (reads)
        ring.consumerThreads += role.numWarps * 32;
    }
    if (!ring.consumerThreads)
      return ring.load.emitOpError("fills ring '") << ring.pipeline << "' that no role reads",
             failure();
  }
  for (SharedRingPlan &ring : plan.sharedRings) {
    if (!plan.roles[ring.writer].computes())
      return ring.buffers.front()->emitOpError("is in pipeline '")
                 << ring.pipeline << "', but role '" << plan.roles[ring.writer].name
                 << "', which lists it, only copies or issues products; the role writing a "
                    "`copy: shared` ring computes its tiles",
             failure();
    for (auto [r, role] : llvm::enumerate(plan.roles)) {
      SmallVector<bool, 4> touched;
      for (auto [op, reader] : llvm::zip(ring.buffers, ring.readers))
        touched.push_back(r == ring.writer ||
                          (!role.issuesMma &&
                           (role.runs.contains(op) || (reader && role.runs.contains(reader)))));
      ring.touches.push_back(touched);
      if (r == ring.writer || !llvm::is_contained(touched, true))
        continue;
      if (role.copyOnly)
        return ring.buffers[llvm::find(touched, true) - touched.begin()]->emitOpError(
                   "is read from ring '")
                   << ring.pipeline << "' by role '" << role.name
                   << "', which only copies; a `copy: shared` ring is read by computing roles",
               failure();
      ring.readerThreads += role.numWarps * 32;
    }
    if (!ring.readerThreads)
      return ring.buffers.front()->emitOpError("fills ring '")
                 << ring.pipeline << "' that no other role reads",
             failure();
  }
  if (ArrayAttr kept = schedule.getResident())
    for (Attribute a : kept) {
      StringRef name = cast<StringAttr>(a).getValue();
      Operation *init = byId.lookup(name);
      if (!init || !loopCarrying(init).first) // tile-apply-schedule checked it
        return kernel.emitOpError("has no var '")
                   << name << "' that a loop carries to keep where products accumulate",
               failure();
      FailureOr<ResidentPlan> res = planResident(name, init, schedule);
      if (failed(res))
        return failure();
      int computing = -1;
      for (auto [r, role] : llvm::enumerate(plan.roles))
        if (role.computes() && role.runs.contains(res->update))
          computing = r;
      if (computing < 0)
        return res->update.emitOpError("accumulates onto '")
                   << name << "' but no computing role runs it",
               failure();
      res->role = computing;
      if (plan.roles[computing].schedule != schedule)
        return res->update.emitOpError("accumulates onto '")
                   << name << "' in role '" << plan.roles[computing].name
                   << "', whose 'mma: " << plan.roles[computing].mma()
                   << "' is not the schedule's ('" << schedule.getMma().getValue()
                   << "') that keeps it",
               failure();
      if (res->inRegisters) {
        // The fragment lives in the registers of the warpgroups that issue
        // the update, each holding the same items on every iteration.
        const RolePlan &rp = plan.roles[computing];
        auto fail = [&](const Twine &why) {
          InFlightDiagnostic diag = res->update.emitOpError("accumulates onto '")
                                    << name << "' in registers, but " << why;
          noteScheduleLine(diag, schedule, {"registers"});
          return failure();
        };
        if (rp.issuer >= 0)
          return fail("role '" + plan.roles[rp.issuer].name + "' issues role '" + rp.name +
                      "''s products: a fragment lives in the issuing warpgroups' registers, so "
                      "the role holding the var must issue its own");
        std::string why;
        FailureOr<MmaTiling> t = plan.updateTiling(*res, why);
        if (failed(t))
          return fail(why);
        if (t->items() % t->warpgroups)
          return fail("its " + Twine(t->items()) + " accumulator items do not split evenly over " +
                      Twine(t->warpgroups) + " warpgroups");
        // Come in and go out in the fragment's layout: no staging rows.
        auto loop = cast<scf::ForOp>(res->loop);
        auto laidOut = [&](Value v) {
          std::optional<TileLayout> l = assignedLayout(v);
          return l ? l->attr(v.getContext()) : tile::LayoutAttr();
        };
        tile::LayoutAttr fragment = t->fragmentLayout(kernel.getContext());
        res->inFragmentLayout = fragment && laidOut(loop.getInitArgs()[res->index]) == fragment &&
                                laidOut(loop.getResult(res->index)) == fragment;
        // A factor a row meets each accumulator in the register beside it.
        if (res->rowFactor && !fragment)
          return fail("its factor a row needs the update's accumulators as one tile layout "
                      "(whole 64-row tiles, every column in one part)");
        if (res->rowFactor && assignedLayout(res->factor) && laidOut(res->factor) != fragment)
          return fail("its factor a row is not laid out as the accumulators are");
      }
      plan.residents.push_back(*res);
    }
  planFlagWaits(kernel, plan);
  SmallVector<StagePlacement> placement = planMmaOperandRings(plan);
  planSwizzledReads(plan);
  if (failed(planPipelineGroups(plan, schedule)))
    return failure();
  // tcgen05 operands read in place: the commit after the products frees
  // the stage as soon as they finish (no role reads the tile otherwise).
  for (RingPlan &ring : plan.rings)
    if (ring.mmaOperand() &&
        MmaTiling::kindOf(plan.roles[ring.firstReader()].mma()) == MmaTiling::Kind::Tcgen05) {
      ring.freedByCommit = true;
      ring.consumerThreads = 1;
    }
  // Stages first (each ring's, or for the second operand of a stacked pair,
  // its rows inside the first's), then the mbarriers.
  int64_t offset = 0;
  for (auto [i, ring] : llvm::enumerate(plan.rings)) {
    if (placement[i].owner != i)
      continue;
    // Swizzled stages start on the swizzle's 1024-byte period.
    offset = alignTo(offset, ring.swizzleBytes ? MmaTiling::kAtomAlignment : kRingAlignment);
    ring.offset = offset;
    offset += ring.depth * ring.stageStride;
  }
  for (auto [i, ring] : llvm::enumerate(plan.rings))
    if (placement[i].owner != i) {
      const RingPlan &first = plan.rings[placement[i].owner];
      ring.offset = first.offset + placement[i].rowBytes;
      ring.stageStride = first.stageStride;
    }
  for (StoreRingPlan &ring : plan.storeRings) {
    offset = alignTo(offset, kRingAlignment);
    ring.offset = offset;
    offset += ring.depth * ring.stageStride;
  }
  for (SharedRingPlan &ring : plan.sharedRings) {
    offset = alignTo(offset, kRingAlignment);
    ring.offset = offset;
    offset += ring.depth * ring.stageStride;
  }
  for (RingPlan &ring : plan.rings) {
    ring.barrierOffset = offset;
    offset += 2 * ring.depth * 8;
  }
  for (StoreRingPlan &ring : plan.storeRings) {
    ring.barrierOffset = offset;
    offset += 2 * ring.depth * 8;
  }
  for (SharedRingPlan &ring : plan.sharedRings) {
    ring.barrierOffset = offset;
    offset += 2 * ring.depth * 8;
  }
  for (FlagWaitPlan &f : plan.flagWaits)
    if (!f.followers.empty()) {
      f.progressOffset = offset;
      offset += 8;
    }
  plan.dynamicSharedBytes = offset;

  // tcgen05 accumulators: each role that runs such dots gets columns of its
  // own (roles run concurrently) and an mbarrier their completion arrives
  // on; the CTA allocates the total once, rounded up to a power of two.
  const TargetDesc *target = lookupTarget(schedule.getTarget().str());
  Widest widest; // the dot taking the most columns, for the error below
  int64_t tmemTotal = 0;
  // An issuer uses its served role's columns, staging and barriers.
  for (RolePlan &role : plan.roles) {
    if (role.issuesMma)
      continue;
    role.tmemColumns = mostOf(kernel, role, widest, [&](Operation *op) {
      return tensorMemoryColumnsOf(op, role.mma(), role.numWarps);
    });
    if (role.tmemColumns) {
      role.tmemColumnOffset = tmemTotal;
      tmemTotal += role.tmemColumns;
    }
    if (role.tmemColumns || role.issuer >= 0) {
      role.mmaBarrierOffset = plan.dynamicSharedBytes;
      plan.dynamicSharedBytes += 8;
    }
    if (role.issuer >= 0) {
      role.mmaReadyOffset = plan.dynamicSharedBytes;
      plan.dynamicSharedBytes += 8;
    }
  }
  // Resident tiles take columns of their own: they live across products.
  for (ResidentPlan &res : plan.residents) {
    if (res.inRegisters)
      continue;
    res.columns = tensorMemoryColumnsOf(res.update, plan.roles[res.role].mma(),
                                        plan.roles[res.role].numWarps);
    res.columnOffset = tmemTotal;
    tmemTotal += res.columns;
    if (res.columns > widest.value)
      widest = {res.update, res.columns};
  }
  if (tmemTotal) {
    int64_t budget =
        schedule.getTmemColumns() ? schedule.getTmemColumns() : (target ? target->tmemColumns : 0);
    if (tmemTotal > budget) {
      InFlightDiagnostic diag = widest.op->emitOpError("needs ")
                                << tmemTotal
                                << " tensor-memory columns for the accumulators of the kernel's "
                                   "tcgen05 products"
                                << (plan.residents.empty() ? "" : " and the vars kept there")
                                << ", more than the " << budget
                                << " the schedule allows; use smaller tiles";
      noteScheduleLine(diag, schedule, {"budgets.tmem_columns", "tensor_memory", "params", "mma"});
      return failure();
    }
    plan.tmemColumns = 32;
    while (plan.tmemColumns < tmemTotal)
      plan.tmemColumns *= 2;
    plan.tmemSlotOffset = plan.dynamicSharedBytes;
    plan.dynamicSharedBytes += 8;
  }

  // Tile layouts span the warps of the computing role making them: roles
  // of different warp counts make no tile together (a `copy: shared` ring
  // hands one over, read into the reader's layout).
  plan.layoutWarps = 0;
  for (const RolePlan &r : plan.roles)
    if (r.computes())
      plan.layoutWarps = std::max(plan.layoutWarps, r.numWarps);
  if (failed(checkOneWarpCountATile(kernel, plan)))
    return failure();

  // Staging areas, one per role, after the rings: roles stage concurrently.
  // An operand a ring brings where its product reads it takes none, but
  // where the product stages in the whole layout (stagesWholeLayout). A
  // resident in registers passes through the result rows at the area's
  // start, which every product's size covers.
  auto readInPlace = [&](Value operand) {
    Operation *load = stagedTile(operand).first.getDefiningOp();
    const RingPlan *ring = load ? plan.ringOf(load) : nullptr;
    return ring && ring->mmaOperand();
  };
  Widest largest; // the op staging the most, for the error below
  for (RolePlan &role : plan.roles) {
    if (role.issuesMma)
      continue;
    // Sized as the lowering plans the products (a served role's on its
    // issuer's warps).
    int64_t warps = plan.productWarps(&role - plan.roles.data(),
                                      MmaTiling::kindOf(role.mma()) == MmaTiling::Kind::Wgmma);
    // (A role of one warp has the staging area to itself.)
    auto inWarps = [&](Operation *op) {
      return role.computes() && role.numWarps > 1 && movesInWarps(op, role.mma(), role.numWarps);
    };
    bool wgmma = MmaTiling::kindOf(role.mma()) == MmaTiling::Kind::Wgmma;
    // A resident in registers laid out otherwise than its fragment passes
    // through the result rows: every product keeps its result area then.
    bool passesThrough = llvm::any_of(plan.residents, [](const ResidentPlan &res) {
      return res.inRegisters && !res.inFragmentLayout;
    });
    role.stagingBytes = mostOf(kernel, role, largest, [&](Operation *op) -> int64_t {
      // What the lowering moves in registers only takes no room.
      if (auto dot = dyn_cast<DotOp>(op); dot && wgmma && plan.stagesNothing(dot, warps))
        return 0;
      // A wgmma product of its own role's: no room for an A read from
      // registers nor for a result that stays in the accumulators.
      if (auto dot = dyn_cast<DotOp>(op);
          dot && wgmma && role.issuer < 0 && !passesThrough && !plan.stagesWholeLayout(op))
        return plan.ownProductStagingBytes(dot, warps, readInPlace);
      if (auto slice = dyn_cast<SliceOp>(op);
          slice && (plan.foldsSlice(slice, role.schedule) || slicedInRegisters(slice)))
        return 0;
      if (auto tr = dyn_cast<TransposeOp>(op)) {
        std::optional<TileLayout> in = assignedLayout(tr.getInput()),
                                  out = assignedLayout(tr.getResult());
        if (foldedIntoTensorCoreDots(tr, role.schedule) ||
            (in && out && permutesRegisters(*in, *out, tr.getPermutation())))
          return 0;
      }
      return inWarps(op) ? 0
                         : stagingBytesOf(op, role.mma(), warps,
                                          plan.stagesWholeLayout(op)
                                              ? function_ref<bool(Value)>()
                                              : function_ref<bool(Value)>(readInPlace));
    });
    role.warpSliceBytes = mostOf(kernel, role, largest, [&](Operation *op) -> int64_t {
      return inWarps(op) ? alignTo(stagingBytesOf(op, role.mma(), warps), 16) : 0;
    });
    if (role.stagingBytes) {
      // Tensor-core operands are swizzled in atoms the hardware locates by
      // address.
      role.stagingOffset =
          alignTo(plan.dynamicSharedBytes,
                  MmaTiling::kindOf(role.mma()) ? MmaTiling::kAtomAlignment : kRingAlignment);
      plan.dynamicSharedBytes = role.stagingOffset + role.stagingBytes;
    }
    if (role.warpSliceBytes) {
      role.warpSlicesOffset = alignTo(plan.dynamicSharedBytes, 16);
      plan.dynamicSharedBytes = role.warpSlicesOffset + role.warpSliceBytes * role.numWarps;
    }
  }
  // Before tile-assign-layouts, a product's result is not yet known to stay
  // in its accumulator fragment (resultInFragment), so the staging counted
  // is an upper bound: a 128 x 256 product would be refused for the 128 KB
  // of a result it never stages. The plan built once layouts are set (the
  // NVVM conversion's) holds the kernel to the target's shared memory.
  bool layoutsSet =
      kernel
          ->walk([](Operation *op) {
            return op->hasAttr(kLayoutAttr) ? WalkResult::interrupt() : WalkResult::advance();
          })
          .wasInterrupted();
  if (layoutsSet && target && target->isGpu && plan.dynamicSharedBytes > target->smemBytes) {
    Operation *at = largest.op ? largest.op : kernel.getOperation();
    InFlightDiagnostic diag = at->emitOpError("needs ")
                              << plan.dynamicSharedBytes
                              << " bytes of shared memory with the rings and staging areas of the "
                                 "kernel, more than the "
                              << target->smemBytes << " of " << target->name
                              << "; use smaller tiles (schedule params)";
    noteScheduleLine(diag, schedule, {"params", "pipelines", "target"});
    return failure();
  }

  return plan;
}

/// The most `field` of `dot`'s tiling gives, alone or with the dot it may
/// pair with (the lowering decides per role); 0 when it cannot be planned
/// (the lowering reports why, at the dot).
static int64_t mostOverPairing(MmaTiling::Kind kind, DotOp dot, int64_t warps,
                               int64_t MmaTiling::*field,
                               function_ref<bool(Value)> readInPlace = nullptr) {
  // (A stacked operand is read in place whole or not at all: its first
  // half's ring says which.)
  auto place = [&](MmaTiling &t) {
    if (readInPlace)
      t.placeStagingAreas(!readInPlace(dot.getLhs()), !readInPlace(dot.getRhs()));
  };
  std::string why;
  FailureOr<MmaTiling> t = MmaTiling::get(kind, dot, warps, why);
  if (succeeded(t))
    place(*t);
  int64_t most = succeeded(t) ? (*t).*field : 0;
  if (std::optional<DotPair> pair = DotPair::of(dot))
    if (FailureOr<MmaTiling> both = MmaTiling::get(kind, *pair, warps, why); succeeded(both)) {
      place(*both);
      most = std::max(most, (*both).*field);
    }
  return most;
}

SmallVector<int64_t, 2> kiln::transposeStagingShape(TileType input) {
  SmallVector<int64_t, 2> shape(input.getShape());
  if (shape.size() >= 2)
    shape.back() += 16 / std::max<int64_t>(1, input.getElementType().getIntOrFloatBitWidth() / 8);
  return shape;
}

bool kiln::movesInWarps(Operation *op, StringRef mma, int64_t warps) {
  if (!isa<ConvertLayoutOp, TransposeOp>(op) ||
      alignTo(stagingBytesOf(op, mma, warps), 16) * warps > kWarpSlicesBytes)
    return false;
  // (Planned before tile-assign-layouts too, when nothing has a layout.)
  std::optional<TileLayout> from = assignedLayout(op->getOperand(0)),
                            to = assignedLayout(op->getResult(0));
  if (!from || !to)
    return false;
  auto tr = dyn_cast<TransposeOp>(op);
  if (!tr)
    return staysInWarps(*from, *to, warps);
  if ((stagesDotOperands(mma) && foldsIntoDots(tr)) ||
      permutesRegisters(*from, *to, tr.getPermutation()))
    return false;
  return staysInWarps(*from, *to, warps, tr.getPermutation());
}

int64_t kiln::stagingBytesOf(Operation *op, StringRef mma, int64_t warps,
                             function_ref<bool(Value)> readInPlace) {
  if (auto tr = dyn_cast<TransposeOp>(op)) {
    auto input = tr.getInput().getType();
    int64_t n = std::max<int64_t>(1, input.getElementType().getIntOrFloatBitWidth() / 8);
    for (int64_t d : transposeStagingShape(input))
      n *= d;
    return n;
  }
  if (isa<ConvertLayoutOp, CumsumOp, SliceOp>(op))
    return tileBytes(op->getOperand(0));
  if (auto dot = dyn_cast<DotOp>(op)) {
    if (std::optional<MmaTiling::Kind> kind = MmaTiling::kindOf(mma))
      return mostOverPairing(*kind, dot, warps, &MmaTiling::bytes, readInPlace);
    if (WarpMmaTiling::named(mma)) // (0 where it cannot be planned: the lowering says why)
      return WarpMmaTiling::stagingBytes(dot, warps);
    return alignTo(tileBytes(dot.getLhs()), 16) + tileBytes(dot.getRhs());
  }
  return 0;
}

int64_t kiln::tensorMemoryColumnsOf(Operation *op, StringRef mma, int64_t warps) {
  auto dot = dyn_cast<DotOp>(op);
  if (!dot || MmaTiling::kindOf(mma) != MmaTiling::Kind::Tcgen05)
    return 0;
  return mostOverPairing(MmaTiling::Kind::Tcgen05, dot, warps, &MmaTiling::tmemColumns);
}
