//===- AssignLayouts.cpp - choose a #tile.layout for every GPU tile -------===//
//
// Tiles joined by elementwise ops (and loop-carried ones) must share a layout;
// reductions, broadcasts and unit reshapes relate the layouts of tiles of
// different rank without moving data. We solve those relations: the largest
// unconstrained tile takes the default layout, everything related to it is
// derived, and the next largest follows. Where a relation cannot hold (one
// tile broadcast along rows and along columns), a tile.convert_layout goes
// in at that op and the solve starts again. Dot, transpose and cumsum move
// their data through shared memory anyway, so they relate nothing; a slice
// takes its input's layout where its window is whole spans of it (then it
// is the input's registers), and relates nothing otherwise. Each tile spans
// the warps of the role making it.
//
//===----------------------------------------------------------------------===//
#include "dsl/TileDialect.h"
#include "lowering/Passes.h"
#include "lowering/analysis/KernelPlan.h"
#include "lowering/analysis/Layout.h"
#include "lowering/analysis/MmaTiling.h"

#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <functional>

namespace kiln {
#define GEN_PASS_DEF_TILEASSIGNLAYOUTS
#include "lowering/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::tile;

namespace {

bool isDistributed(Value v) {
  auto t = dyn_cast<TileType>(v.getType());
  return t && t.getRank() >= 1;
}

/// Ops whose operands and result are one tile element by element.
bool isElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, RemOp, MaxOp, MinOp, AndOp, OrOp, CmpOp, NegOp, AbsOp,
             ExpOp, LogOp, Log1pOp, SqrtOp, RsqrtOp, SigmoidOp, TanhOp, NotOp, SelectOp, CastOp>(
      op);
}

/// A derivation between two layout classes: `to`'s layout follows from
/// `from`'s, and the other way round, by remapping `dims`.
struct Relation {
  Operation *op;
  Value from, to;
  /// to.dims[i] = from.dims[fromDim[i]], or (fromDim[i] < 0) a parent dim
  /// `from` does not use (a new unit dim).
  SmallVector<int64_t, 2> fromDim;
};

class LayoutSolver {
public:
  LayoutSolver(KernelOp kernel, const KernelPlan &plan) : kernel(kernel), plan(plan) {}
  LogicalResult run();

private:
  KernelOp kernel;
  const KernelPlan &plan;
  /// The warps v's layout spans: the role making it computes on them.
  int64_t warpsOf(Value v) const { return plan.layoutWarpsOf(v); }
  llvm::EquivalenceClasses<Value> classes;
  SmallVector<Value> values;
  SmallVector<Relation> relations;
  SmallVector<SliceOp> slices;
  DenseMap<Value, LayoutAttr> chosen; // class leader -> layout

  Value leader(Value v) { return classes.getLeaderValue(v); }
  void join(Value a, Value b) {
    if (isDistributed(a) && isDistributed(b))
      classes.unionSets(a, b);
  }
  void collect(Operation *op);
  LayoutAttr derive(const Relation &r, bool forward, LayoutAttr known);
  /// Gives v's class a layout; false when it has another one already.
  bool set(Value v, LayoutAttr layout);
  /// The widest element, in bytes, of v's class (16-byte vectors of it).
  unsigned classBytes(Value v);
  /// Gives the tiles the schedule's `layouts:` name their layouts.
  LogicalResult applyScheduleLayouts();
  /// Gives a wgmma or mma_sync product's result, where nothing chose
  /// another layout, the layout its accumulators have: it then never
  /// leaves them.
  void applyFragmentLayouts();
  /// Lets a transpose keep an accumulator fragment's registers: its result
  /// takes the fragment's layout with the dims swapped, or a ring load it
  /// transposes (read from shared memory in any layout) is read in that of
  /// the fragment it meets. Either way the transpose moves nothing.
  void relateTransposesOfFragments();
  /// Gives a slice without a layout its input's, where the window then
  /// stays in the registers holding it (windowRegisters); true if any.
  bool keepSlicesInRegisters();

public:
  /// Where the last run() failed on a conflict: the op and the tile to convert.
  Operation *conflictOp = nullptr;
  Value conflictValue;
};

void LayoutSolver::collect(Operation *op) {
  for (Value r : op->getResults())
    if (isDistributed(r)) {
      classes.insert(r);
      values.push_back(r);
    }
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (BlockArgument arg : block.getArguments())
        if (isDistributed(arg)) {
          classes.insert(arg);
          values.push_back(arg);
        }
  if (isElementwise(op)) {
    for (Value operand : op->getOperands())
      join(operand, op->getResult(0));
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    slices.push_back(slice);
  } else if (auto dot = dyn_cast<DotOp>(op)) {
    if (dot.getAcc()) // accumulated in place
      join(dot.getAcc(), dot.getResult());
  } else if (auto forOp = dyn_cast<scf::ForOp>(op)) {
    auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
    for (unsigned i = 0; i < forOp.getNumResults(); ++i) {
      join(forOp.getInitArgs()[i], forOp.getRegionIterArgs()[i]);
      join(forOp.getRegionIterArgs()[i], yield.getOperand(i));
      join(yield.getOperand(i), forOp.getResult(i));
    }
  } else if (auto red = dyn_cast<ReduceOp>(op)) {
    if (isDistributed(red.getResult())) {
      Relation r{op, red.getInput(), red.getResult(), {}};
      for (int64_t d = 0; d < red.getInput().getType().getRank(); ++d)
        if (d != (int64_t)red.getAxis())
          r.fromDim.push_back(d);
      relations.push_back(r);
    }
  } else if (auto bc = dyn_cast<BroadcastOp>(op)) {
    if (isDistributed(bc.getInput())) {
      // The input is the output with its leading dims dropped.
      int64_t inRank = bc.getInput().getType().getRank();
      int64_t outRank = bc.getResult().getType().getRank();
      Relation r{op, bc.getResult(), bc.getInput(), {}};
      for (int64_t d = 0; d < inRank; ++d)
        r.fromDim.push_back(outRank - inRank + d);
      relations.push_back(r);
    }
  } else if (auto rs = dyn_cast<ReshapeOp>(op)) {
    // Only unit dims may come or go: the non-unit dims keep their order.
    ArrayRef<int64_t> in = rs.getInput().getType().getShape();
    ArrayRef<int64_t> out = rs.getResult().getType().getShape();
    Relation r{op, rs.getInput(), rs.getResult(), {}};
    unsigned j = 0;
    for (int64_t extent : out) {
      while (j < in.size() && in[j] == 1 && extent != 1)
        ++j;
      if (extent == 1 && (j >= in.size() || in[j] != 1)) {
        r.fromDim.push_back(-1);
        continue;
      }
      r.fromDim.push_back(j < in.size() ? (int64_t)j++ : -1);
    }
    if (isDistributed(rs.getInput()) && isDistributed(rs.getResult()))
      relations.push_back(r);
  }
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &inner : block)
        collect(&inner);
}

LayoutAttr LayoutSolver::derive(const Relation &r, bool forward, LayoutAttr known) {
  ArrayRef<int64_t> dims = known.getDims();
  SmallVector<int64_t, 2> out;
  if (forward) {
    // to.dims[i] = from.dims[fromDim[i]]; a new dim takes an unused parent dim.
    SmallVector<bool, 2> used(known.getSize().size(), false);
    for (int64_t f : r.fromDim)
      if (f >= 0 && f < (int64_t)dims.size())
        used[dims[f]] = true;
    for (int64_t f : r.fromDim) {
      if (f >= 0 && f < (int64_t)dims.size()) {
        out.push_back(dims[f]);
        continue;
      }
      auto free = llvm::find(used, false);
      if (free == used.end())
        return {};
      *free = true;
      out.push_back(free - used.begin());
    }
  } else {
    // from.dims[fromDim[i]] = to.dims[i]; dims of `from` that `to` dropped
    // take the remaining parent dims in order.
    int64_t fromRank = cast<TileType>(r.from.getType()).getRank();
    out.assign(fromRank, -1);
    SmallVector<bool, 2> used(known.getSize().size(), false);
    for (auto [i, f] : llvm::enumerate(r.fromDim))
      if (f >= 0) {
        out[f] = dims[i];
        used[dims[i]] = true;
      }
    for (int64_t &d : out)
      if (d < 0) {
        auto free = llvm::find(used, false);
        if (free == used.end())
          return {};
        *free = true;
        d = free - used.begin();
      }
  }
  return LayoutAttr::get(known.getContext(), known.getSize(), known.getLanes(), known.getWarps(),
                         out, known.getLanesFirst());
}

static bool fits(Value v, LayoutAttr layout) {
  return !TileLayout::get(layout, cast<TileType>(v.getType()).getShape()).mismatch();
}

bool LayoutSolver::set(Value v, LayoutAttr layout) {
  Value l = leader(v);
  auto it = chosen.find(l);
  if (it == chosen.end()) {
    chosen[l] = layout;
    return true;
  }
  return it->second == layout;
}

unsigned LayoutSolver::classBytes(Value v) {
  unsigned bytes = 0;
  for (Value other : values)
    if (leader(other) == leader(v))
      bytes = std::max(
          bytes, cast<TileType>(other.getType()).getElementType().getIntOrFloatBitWidth() / 8);
  return bytes;
}

LogicalResult LayoutSolver::applyScheduleLayouts() {
  ScheduleAttr schedule = kernel.getScheduleAttr();
  DictionaryAttr layouts = schedule.getLayouts();
  if (!layouts)
    return success();
  llvm::StringMap<Operation *> byId = kernel.getOpsById();
  DictionaryAttr sources = schedule.getSources();
  llvm::DenseMap<Value, StringRef> namedBy; // class leader -> the op id that set it
  for (NamedAttribute entry : layouts) {
    StringRef id = entry.getName();
    // Errors point at the YAML line that asked for the layout.
    Location at = kernel.getLoc();
    if (auto loc = dyn_cast_or_null<LocationAttr>(sources ? sources.get(("layouts." + id).str())
                                                          : Attribute()))
      at = loc;
    Operation *op = byId.lookup(id);
    if (!op || op->getNumResults() != 1 || !isDistributed(op->getResult(0)))
      return emitError(at) << "layouts names '" << id << "', but no op of kernel '"
                           << kernel.getSymName() << "' makes a tile of rank 1 or more by that id";
    Value v = op->getResult(0);
    auto type = cast<TileType>(v.getType());
    auto fields = dyn_cast<DictionaryAttr>(entry.getValue());
    auto list = [&](StringRef key) {
      auto a = fields ? fields.getAs<DenseI64ArrayAttr>(key) : DenseI64ArrayAttr();
      return a ? a.asArrayRef() : ArrayRef<int64_t>();
    };
    LayoutChoice fixed{list("size"), list("lanes"), list("warps")};
    bool valid = !fixed.lanes.empty();
    for (ArrayRef<int64_t> l : {fixed.size, fixed.lanes, fixed.warps})
      valid &= l.empty() || (l.size() == (size_t)type.getRank() &&
                             llvm::all_of(l, [](int64_t x) { return x > 0; }));
    if (!valid)
      return emitError(at) << "the layout of '" << id
                           << "' needs lanes, and positive lanes, size and warps with one entry "
                              "per dim of its tile "
                           << type;
    int64_t lanes = 1, spread = 1;
    for (int64_t l : fixed.lanes)
      lanes *= l;
    for (int64_t w : fixed.warps)
      spread *= w;
    if (32 % lanes != 0)
      return emitError(at) << "the layout of '" << id << "' takes " << lanes
                           << " lanes, which do not divide a warp of 32";
    if (spread > warpsOf(v))
      return emitError(at) << "the layout of '" << id << "' spreads its tile over " << spread
                           << " warps, but the role computing it has " << warpsOf(v);
    LayoutAttr layout =
        defaultLayout(kernel.getContext(), type.getShape(), classBytes(v), warpsOf(v), fixed);
    // A warp-level product's result in its fragments' lanes: the warps are
    // the grid its m16 x n8 blocks are dealt to (its size is the
    // fragments').
    if (isa<DotOp>(op) && WarpMmaTiling::named(plan.mmaOf(op)) &&
        fixed.lanes == ArrayRef<int64_t>{8, 4} && fixed.warps.size() == 2 &&
        (fixed.size.empty() || fixed.size == ArrayRef<int64_t>{2, 2}))
      layout = WarpMmaTiling::fragmentLayout(kernel.getContext(), fixed.warps[0], fixed.warps[1]);
    if (auto why = TileLayout::get(layout, type.getShape()).mismatch()) {
      InFlightDiagnostic diag = emitError(at) << "the layout of '" << id << "' (" << layout
                                              << ") cannot hold its tile " << type << ": " << *why;
      diag.attachNote(op->getLoc()) << "the tile is made here";
      return diag;
    }
    if (!set(v, layout))
      return emitError(at) << "'" << id << "' and '" << namedBy[leader(v)]
                           << "' are one tile to the layouts (elementwise ops join them), "
                              "but the schedule gives them different layouts";
    namedBy[leader(v)] = id;
  }
  return success();
}

void LayoutSolver::applyFragmentLayouts() {
  // Products another role issues come back through shared memory, and a
  // pair stacking A holds each result's rows in other warpgroups' turns:
  // those keep any layout. A pair sharing A holds both results' columns side
  // by side, each in the fragment's layout.
  // (Each product by the instruction of the role running it.)
  // Warp-level products keep their results where the warps computed
  // them (a dot accumulated onto a tile takes that tile's layout with it).
  kernel.walk([&](DotOp dot) {
    if (!WarpMmaTiling::named(plan.mmaOf(dot)))
      return;
    std::string why;
    WarpMmaStaging staging;
    if (FailureOr<WarpMmaTiling> t =
            WarpMmaTiling::get(dot, warpsOf(dot.getResult()), staging, why);
        succeeded(t))
      set(dot.getResult(), t->fragmentLayout(kernel.getContext()));
  });
  const MmaTiling::Kind wgmma = MmaTiling::Kind::Wgmma;
  auto onWgmma = [&](Operation *op) { return MmaTiling::kindOf(plan.mmaOf(op)) == wgmma; };
  if (llvm::any_of(plan.roles, [](const RolePlan &r) { return r.issuesMma; }))
    return;
  // A resident in registers comes in and goes out in its fragment's
  // layout (the loop joins its value before, in and after the loop), so
  // its load and store read and write the registers the update holds.
  for (const ResidentPlan &res : plan.residents) {
    if (!res.inRegisters)
      continue;
    std::string why;
    FailureOr<MmaTiling> t = plan.updateTiling(res, why);
    if (succeeded(t))
      if (LayoutAttr fragment = t->fragmentLayout(kernel.getContext())) {
        set(cast<scf::ForOp>(res.loop).getInitArgs()[res.index], fragment);
        // A factor a row scales the fragments register for register.
        if (res.rowFactor)
          set(res.factor, fragment);
        // A product scaled before its sum keeps its result in the
        // accumulators, which the sum adds register for register.
        if (res.productFactor) {
          DotOp update = res.update;
          set(update.getResult(), fragment);
        }
      }
  }
  kernel.walk([&](DotOp dot) {
    if (!onWgmma(dot))
      return;
    int64_t warps = warpsOf(dot.getResult());
    std::optional<DotPair> pair = pairContaining(wgmma, dot, warps, onWgmma);
    if (plan.residentUpdatedBy(dot) || (pair && pair->sharesRhs))
      return;
    std::string why;
    FailureOr<MmaTiling> t =
        pair ? MmaTiling::get(wgmma, *pair, warps, why) : MmaTiling::get(wgmma, dot, warps, why);
    if (failed(t))
      return; // the lowering reports it
    if (LayoutAttr fragment = t->fragmentLayout(kernel.getContext()))
      set(dot.getResult(), fragment);
  });
}

bool LayoutSolver::keepSlicesInRegisters() {
  bool any = false;
  for (SliceOp slice : slices) {
    auto in = chosen.find(leader(slice.getInput()));
    if (in == chosen.end() || chosen.count(leader(slice.getResult())))
      continue;
    TileLayout from = TileLayout::get(in->second, slice.getInput().getType().getShape()),
               to = TileLayout::get(in->second, slice.getResult().getType().getShape());
    if (windowRegisters(from, to, slice.getOffsets()))
      any |= set(slice.getResult(), in->second);
  }
  return any;
}

void LayoutSolver::relateTransposesOfFragments() {
  auto fragmentOf = [&](Value v) -> LayoutAttr {
    auto it = chosen.find(leader(v));
    return it != chosen.end() && !it->second.getLanesFirst().empty() ? it->second : LayoutAttr();
  };
  kernel.walk([&](TransposeOp tr) {
    if (foldsIntoDots(tr) || !isDistributed(tr.getInput()))
      return;
    Relation r{tr, tr.getInput(), tr.getResult(), llvm::to_vector<2>(tr.getPermutation())};
    if (LayoutAttr in = fragmentOf(tr.getInput()); in && !chosen.count(leader(tr.getResult()))) {
      set(tr.getResult(), derive(r, /*forward=*/true, in));
      return;
    }
    auto load = tr.getInput().getDefiningOp<LoadOp>();
    if (LayoutAttr out = fragmentOf(tr.getResult());
        out && load && plan.ringOf(load) && !chosen.count(leader(tr.getInput())))
      set(tr.getInput(), derive(r, /*forward=*/false, out));
  });
}

LogicalResult LayoutSolver::run() {
  for (Operation &op : kernel.getBody().front())
    collect(&op);
  // The schedule's layouts first: the tiles related to them follow; then
  // the products' accumulators.
  if (failed(applyScheduleLayouts()))
    return failure();
  applyFragmentLayouts();
  relateTransposesOfFragments();
  keepSlicesInRegisters();
  auto numel = [](Value v) {
    int64_t n = 1;
    for (int64_t e : cast<TileType>(v.getType()).getShape())
      n *= e;
    return std::make_pair((int64_t)cast<TileType>(v.getType()).getRank(), n);
  };
  while (true) {
    // Propagate along relations until nothing changes.
    bool changed = true;
    while (changed) {
      changed = false;
      for (const Relation &r : relations) {
        bool hasFrom = chosen.count(leader(r.from)), hasTo = chosen.count(leader(r.to));
        if (!hasFrom && !hasTo)
          continue;
        // A layout derived across the op that cannot hold the other side's
        // shape: the known side is converted at this op. One that fits but
        // disagrees with the other side's choice: that side is converted.
        Value known = hasFrom ? r.from : r.to, other = hasFrom ? r.to : r.from;
        LayoutAttr l = derive(r, hasFrom, chosen[leader(known)]);
        if (!l || !fits(other, l)) {
          conflictOp = r.op, conflictValue = known;
          return failure();
        }
        if (hasFrom && hasTo) {
          if (!set(other, l)) {
            conflictOp = r.op, conflictValue = other;
            return failure();
          }
          continue;
        }
        set(other, l);
        changed = true;
      }
      changed |= keepSlicesInRegisters();
    }
    // The largest tile still without a layout takes the default.
    Value biggest;
    for (Value v : values)
      if (!chosen.count(leader(v)) && (!biggest || numel(v) > numel(biggest)))
        biggest = v;
    if (!biggest)
      break;
    auto t = cast<TileType>(biggest.getType());
    chosen[leader(biggest)] =
        defaultLayout(kernel.getContext(), t.getShape(), classBytes(biggest), warpsOf(biggest));
  }
  // Record the choice on every op that makes a tile, and check it fits.
  for (Value v : values) {
    LayoutAttr layout = chosen[leader(v)];
    TileLayout tl = TileLayout::get(layout, cast<TileType>(v.getType()).getShape());
    Operation *owner = v.getDefiningOp() ? v.getDefiningOp() : v.getParentBlock()->getParentOp();
    if (auto why = tl.mismatch())
      return owner->emitOpError("cannot use layout ") << layout << ": " << *why;
    if (v.getDefiningOp() && v.getDefiningOp()->getNumResults() == 1)
      v.getDefiningOp()->setAttr(kLayoutAttr, layout);
  }
  return success();
}

/// Whether the schedule names op `id` (a role's ops, a pipeline's buffer, a
/// chosen layout): such an op is not copied.
bool namedBySchedule(ScheduleAttr schedule, StringRef id) {
  auto names = [&](ArrayAttr list) {
    return list &&
           llvm::any_of(list, [&](Attribute a) { return cast<StringAttr>(a).getValue() == id; });
  };
  for (Attribute a : schedule.getRoles())
    if (names(cast<RoleAttr>(a).getOps()))
      return true;
  for (Attribute a : schedule.getPipelines())
    if (names(cast<PipelineAttr>(a).getBuffers()))
      return true;
  return schedule.getLayouts() && schedule.getLayouts().get(id);
}

/// The ops that make `v` from nothing distributed but iotas, constants,
/// scalars, plain loads (no ring, none the schedule names) and layout
/// conversions, through elementwise ops, broadcasts and reshapes, in an
/// order that defines every value before its use; empty when `v` is made
/// any other way or by many ops. Such a tile costs less to make again in
/// another layout than to convert: a conversion goes through shared memory
/// between two barriers of the role.
SmallVector<Operation *> rematerializable(Value v, const KernelPlan &plan, ScheduleAttr schedule) {
  constexpr unsigned kMaxOps = 24;
  constexpr int64_t kMaxElements = 1024;
  SmallVector<Operation *> order;
  llvm::SmallPtrSet<Operation *, 16> seen;
  std::function<bool(Value)> visit = [&](Value x) -> bool {
    if (!isDistributed(x))
      return true; // a scalar: used as it is
    Operation *op = x.getDefiningOp();
    if (!op || op->getNumResults() != 1)
      return false; // a loop-carried value, or a multi-result op
    if (seen.contains(op))
      return true;
    auto type = cast<TileType>(x.getType());
    if (type.getNumElements() > kMaxElements)
      return false;
    if (auto id = op->getAttrOfType<StringAttr>(kOpIdAttr);
        id && namedBySchedule(schedule, id.getValue()))
      return false;
    // A conversion is made again from its input: the copy converts to
    // whatever its users need, often the input's own layout (then it
    // moves nothing and goes).
    if (isa<ConvertLayoutOp>(op)) {
      seen.insert(op);
      order.push_back(op);
      return order.size() <= kMaxOps;
    }
    if (auto load = dyn_cast<LoadOp>(op)) {
      if (plan.ringOf(load))
        return false;
    } else if (!isa<IotaOp, ConstantOp, SplatOp, FromIndexOp, BroadcastOp, ReshapeOp>(op) &&
               !isElementwise(op)) {
      return false;
    }
    for (Value operand : op->getOperands())
      if (!visit(operand))
        return false;
    seen.insert(op);
    order.push_back(op);
    return order.size() <= kMaxOps;
  };
  if (!visit(v))
    order.clear();
  return order;
}

/// Breaks the relation at `op` by making `v` again: a copy of the ops
/// `rematerializable` returned, each placed right after its original (so
/// loads stay where they were hoisted), without op ids or layouts. An
/// operand of `op` is replaced there; `op`'s own result (the relation
/// cannot hold across op) everywhere, so the copy of op relates new tiles.
/// Returns the copies.
SmallVector<Operation *> rematerialize(Operation *op, Value v, ArrayRef<Operation *> chain) {
  if (chain.empty())
    return {};
  OpOperand *use = nullptr;
  for (OpOperand &operand : op->getOpOperands())
    if (operand.get() == v)
      use = &operand;
  IRMapping copies;
  SmallVector<Operation *> made;
  for (Operation *original : chain) {
    OpBuilder b(original->getContext());
    b.setInsertionPointAfter(original);
    Operation *copy = b.clone(*original, copies);
    copy->removeAttr(kOpIdAttr);
    copy->removeAttr(kOpAliasesAttr);
    copy->removeAttr(kLayoutAttr);
    made.push_back(copy);
  }
  if (use)
    use->set(copies.lookup(v));
  else
    v.replaceAllUsesWith(copies.lookup(v));
  return made;
}

/// Folds copies `rematerialize` made that compute what an earlier op
/// of their block computes in the same layout (two conflicts may ask for
/// the same tile in the same layout). Loads fold only with no store
/// between them.
void foldEqualCopies(const llvm::SmallPtrSetImpl<Operation *> &copies) {
  auto same = [](Operation *a, Operation *b) {
    if (a->getName() != b->getName() || a->getOperands() != b->getOperands() ||
        a->getResultTypes() != b->getResultTypes() || a->getNumRegions() + b->getNumRegions() != 0)
      return false;
    auto withoutId = [](Operation *op) {
      NamedAttrList attrs(op->getAttrDictionary());
      attrs.erase(kOpIdAttr);
      attrs.erase(kOpAliasesAttr);
      return attrs.getDictionary(op->getContext());
    };
    return withoutId(a) == withoutId(b);
  };
  llvm::SmallPtrSet<Block *, 4> blocks;
  for (Operation *copy : copies)
    blocks.insert(copy->getBlock());
  for (Block *block : blocks) {
    SmallVector<Operation *> earlier;
    for (Operation &op : llvm::make_early_inc_range(*block)) {
      if (isa<StoreOp>(op))
        llvm::erase_if(earlier, [](Operation *e) { return isa<LoadOp>(e); });
      if (copies.contains(&op)) {
        auto match = llvm::find_if(earlier, [&](Operation *e) { return same(e, &op); });
        if (match != earlier.end()) {
          op.getResult(0).replaceAllUsesWith((*match)->getResult(0));
          op.erase();
          continue;
        }
      }
      if (op.getNumResults() == 1 && op.getNumRegions() == 0)
        earlier.push_back(&op);
    }
  }
}

/// Erases the ops of `ops` whose results nothing uses any more (originals
/// every user of which took a copy), users before what they use.
void eraseUnused(const llvm::SmallPtrSetImpl<Operation *> &ops) {
  SmallVector<Operation *> order(ops.begin(), ops.end());
  bool erased = true;
  while (erased) {
    erased = false;
    for (Operation *&op : order)
      if (op && op->use_empty()) {
        op->erase();
        op = nullptr;
        erased = true;
      }
  }
}

/// Gives the readers of a `copy: shared` ring's buffer whose role computes
/// on another warp count than the writer's a conversion of their own
/// (kRingReadAttr) to read the stage into: its layout spans their warps,
/// the buffer's the writer's. Returns whether it made any.
bool splitRingReads(const KernelPlan &plan) {
  bool split = false;
  for (const SharedRingPlan &ring : plan.sharedRings)
    for (auto [op, reader] : llvm::zip(ring.buffers, ring.readers)) {
      if (reader)
        continue;
      int64_t writerWarps = plan.roles[ring.writer].numWarps;
      auto readsElsewhere = [&](OpOperand &use) {
        return llvm::any_of(plan.roles, [&](const RolePlan &role) {
          return role.computes() && role.numWarps != writerWarps &&
                 role.runs.contains(use.getOwner());
        });
      };
      Value tile = op->getResult(0);
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : tile.getUses())
        if (readsElsewhere(use))
          uses.push_back(&use);
      if (uses.empty())
        continue;
      OpBuilder b(op->getContext());
      b.setInsertionPointAfter(op);
      auto cv = ConvertLayoutOp::create(b, op->getLoc(), tile);
      cv->setAttr(kRingReadAttr, b.getUnitAttr());
      for (OpOperand *use : uses)
        use->set(cv);
      split = true;
    }
  return split;
}

/// Breaks the relation at `op` by converting `v` there: an operand is
/// converted before op, a result after it (for every other user).
void insertConversion(Operation *op, Value v) {
  OpBuilder b(op);
  for (OpOperand &use : op->getOpOperands())
    if (use.get() == v) {
      use.set(ConvertLayoutOp::create(b, op->getLoc(), v));
      return;
    }
  b.setInsertionPointAfter(op);
  auto cv = ConvertLayoutOp::create(b, op->getLoc(), v);
  v.replaceAllUsesExcept(cv, cv);
}

/// Elements one thread may hold of a tile. Past this a tile fits neither a
/// thread's registers (255 at most) nor any staging, and the lowering would
/// unroll it into that many values a thread (-D K=1000000 on a decode
/// schedule ran the compiler out of memory).
constexpr int64_t kMaxElementsPerThread = 4096;

/// The first tile whose layout puts more than kMaxElementsPerThread on a
/// thread, reported at its source line.
static LogicalResult checkTileSizes(KernelOp kernel) {
  WalkResult walk = kernel.walk([&](Operation *op) {
    auto layout = op->getAttrOfType<LayoutAttr>(kLayoutAttr);
    if (!layout)
      return WalkResult::advance();
    for (Value r : op->getResults()) {
      auto type = dyn_cast<TileType>(r.getType());
      if (!type)
        continue;
      int64_t n = TileLayout::get(layout, type.getShape()).numRegs();
      if (n <= kMaxElementsPerThread)
        continue;
      InFlightDiagnostic diag = op->emitError() << "this tile of shape [";
      llvm::interleaveComma(type.getShape(), diag);
      diag << "] puts " << n << " elements on each thread; a GPU thread holds at most "
           << kMaxElementsPerThread << " of one tile (more warps, or smaller tiles)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

struct TileAssignLayouts : kiln::impl::TileAssignLayoutsBase<TileAssignLayouts> {
  void runOnOperation() override {
    for (KernelOp kernel : getOperation().getOps<KernelOp>()) {
      auto schedule = kernel.getScheduleAttr();
      if (!schedule)
        continue;
      // Layouts span the warps of the computing role making a tile.
      FailureOr<KernelPlan> plan = KernelPlan::build(kernel);
      if (failed(plan))
        return signalPassFailure();
      if (splitRingReads(*plan)) {
        plan = KernelPlan::build(kernel);
        if (failed(plan))
          return signalPassFailure();
      }
      // Each conflict adds one conversion or copy; a kernel has finitely
      // many relations.
      llvm::SmallPtrSet<Operation *, 16> copies, copied;
      for (int attempt = 0;; ++attempt) {
        LayoutSolver solver(kernel, *plan);
        if (succeeded(solver.run()))
          break;
        if (!solver.conflictOp)
          return signalPassFailure();
        if (attempt == 1000) {
          solver.conflictOp->emitOpError("needs layouts that 1000 conversions did not settle");
          return signalPassFailure();
        }
        // A copy is made once: a conflict on a copy converts it.
        if (!copies.contains(solver.conflictValue.getDefiningOp())) {
          SmallVector<Operation *> chain =
              rematerializable(solver.conflictValue, *plan, kernel.getScheduleAttr());
          SmallVector<Operation *> made =
              rematerialize(solver.conflictOp, solver.conflictValue, chain);
          if (!made.empty()) {
            copies.insert(made.begin(), made.end());
            for (Operation *original : chain) // copies are folded, not erased
              if (!copies.contains(original))
                copied.insert(original);
            continue;
          }
        }
        insertConversion(solver.conflictOp, solver.conflictValue);
      }
      foldEqualCopies(copies);
      eraseUnused(copied);
      // Conversions between equal layouts move nothing (a ring's read is
      // another role's load).
      kernel.walk([](ConvertLayoutOp cv) {
        if (!cv->hasAttr(kRingReadAttr) && cv.getInput().getDefiningOp() &&
            cv.getInput().getDefiningOp()->getAttr(kLayoutAttr) == cv->getAttr(kLayoutAttr)) {
          cv.getResult().replaceAllUsesWith(cv.getInput());
          cv.erase();
        }
      });
      if (failed(checkTileSizes(kernel)))
        return signalPassFailure();
    }
  }
};

} // namespace
