//===- HoistLoads.cpp - issue global loads as early as their operands allow ===//
//
// A kernel reads its inputs where the source names them, often after work
// that does not need them: a gate's load after a norm's reduction, the state
// after the gates. On a GPU each such load starts one more round trip to
// memory once the work before it is done; moved up, the loads of a block go
// out together and their latencies overlap. Loads stay inside their block:
// one under an `scf.if` may only be valid when its condition holds.
//
//===----------------------------------------------------------------------===//
#include "dsl/TileDialect.h"
#include "lowering/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_TILEHOISTLOADS
#include "lowering/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln::tile;

namespace {

/// Whether `op` (or an op nested in it) may write `view`. Views are distinct
/// kernel arguments (`noalias`), so only stores into the same view count;
/// an op whose effects are unknown counts too.
bool mayWrite(Operation *op, Value view) {
  WalkResult r = op->walk([&](Operation *inner) {
    if (auto store = dyn_cast<StoreOp>(inner))
      return store.getView() == view ? WalkResult::interrupt() : WalkResult::advance();
    if (inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() || isMemoryEffectFree(inner))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!effects || effects.hasEffect<MemoryEffects::Write>())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// A pure op without regions making scalars or indices: the address
/// arithmetic a load needs, cheap to move along with it.
bool isAddressArithmetic(Operation *op) {
  if (op->getNumRegions() || !isMemoryEffectFree(op))
    return false;
  return llvm::all_of(op->getResultTypes(), [](Type t) {
    auto tile = dyn_cast<TileType>(t);
    return tile ? tile.getRank() == 0 : !isa<ViewType>(t);
  });
}

/// Moves `op` up its block past every op it may pass.
void hoist(Operation *op) {
  // Its address arithmetic first, so that it does not pin the op below.
  for (Value operand : op->getOperands())
    if (Operation *def = operand.getDefiningOp())
      if (def->getBlock() == op->getBlock() && isAddressArithmetic(def))
        hoist(def);
  auto load = dyn_cast<LoadOp>(op);
  // A pipeline's load waits for a stage its copies filled ahead and reads
  // it from shared memory: no trip to memory to start early. Below a
  // product it waits while the tensor cores multiply; above, on the
  // product's path.
  bool fromRing = load && load->hasAttr(kPipelineAttr);
  Operation *stop = nullptr; // op goes right after this one (first without)
  for (Operation *prev = op->getPrevNode(); prev && !stop; prev = prev->getPrevNode()) {
    bool defines = llvm::any_of(prev->getResults(),
                                [&](Value r) { return llvm::is_contained(op->getOperands(), r); });
    // Loads keep their source order among themselves: a block issues them
    // in the order its author wrote.
    if (defines || (load && (isa<LoadOp>(prev) || mayWrite(prev, load.getView()))) ||
        (fromRing && isa<DotOp>(prev)))
      stop = prev;
  }
  Operation *target = stop ? stop->getNextNode() : &op->getBlock()->front();
  if (target != op)
    op->moveBefore(target);
}

struct TileHoistLoads : kiln::impl::TileHoistLoadsBase<TileHoistLoads> {
  void runOnOperation() override {
    getOperation().walk([](KernelOp kernel) {
      SmallVector<LoadOp> loads;
      kernel.walk([&](LoadOp load) { loads.push_back(load); }); // source order
      for (LoadOp load : loads)
        hoist(load);
    });
  }
};

} // namespace
