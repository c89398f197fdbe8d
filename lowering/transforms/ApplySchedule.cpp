//===- ApplySchedule.cpp - bind a #tile.schedule to a kernel's ops --------===//
#include "dsl/TileDialect.h"
#include "dsl/schedule/Schedule.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln {
#define GEN_PASS_DEF_TILEAPPLYSCHEDULE
#include "lowering/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln::tile;

namespace {

/// A var the schedule keeps where the tensor cores accumulate (`registers:`,
/// `tensor_memory:`) is updated in the loop as `acc + dot(a, b)` (or `acc *
/// s + dot(a, b)`); `dot(a, b, acc)` says the same and is written so here,
/// the sum taking the product's attributes (its ID among them).
void splitResidentAccumulation(KernelOp kernel, ScheduleAttr schedule) {
  ArrayAttr kept = schedule.getResident();
  if (!kept)
    return;
  llvm::StringMap<Operation *> byId = kernel.getOpsById();
  for (StringRef name : kept.getAsValueRange<StringAttr>()) {
    Operation *init = byId.lookup(name);
    auto loop = init ? dyn_cast_or_null<scf::ForOp>(kiln::loopCarrying(init).first) : nullptr;
    if (!loop) // (the schedule's check names what is wrong)
      continue;
    unsigned index = kiln::loopCarrying(init).second;
    Value carried = loop.getRegionIterArgs()[index];
    auto dot = loop.getBody()->getTerminator()->getOperand(index).getDefiningOp<DotOp>();
    if (!dot || dot.getAcc() != carried || dot->getBlock() != loop.getBody() || !dot->hasOneUse())
      continue;
    OpBuilder b(dot);
    auto product =
        DotOp::create(b, dot.getLoc(), dot.getType(), dot.getLhs(), dot.getRhs(), Value());
    auto sum = AddOp::create(b, dot.getLoc(), carried, product);
    for (NamedAttribute attr : dot->getDiscardableAttrs())
      sum->setAttr(attr.getName(), attr.getValue());
    dot.replaceAllUsesWith(sum.getResult());
    dot.erase();
  }
}

LogicalResult applySchedule(KernelOp kernel, ScheduleAttr schedule) {
  splitResidentAccumulation(kernel, schedule);
  llvm::StringMap<Operation *> byId = kernel.getOpsById();

  ProgramIdsOp ids = kernel.getProgramIds();
  SmallVector<int64_t> order;
  for (StringRef axis : schedule.getGrid().getAsValueRange<StringAttr>()) {
    auto names = ids.getNames().getAsValueRange<StringAttr>();
    auto it = llvm::find(names, axis);
    if (it == names.end())
      return kernel.emitOpError("schedule orders grid axis '") << axis << "' that the kernel lacks";
    order.push_back(std::distance(names.begin(), it));
  }
  if (!order.empty()) {
    if (order.size() != ids.getNames().size())
      return kernel.emitOpError("schedule grid must order all ")
             << ids.getNames().size() << " axes";
    ids->setAttr("order", DenseI64ArrayAttr::get(kernel.getContext(), order));
  }

  for (auto role : schedule.getRoles().getAsRange<RoleAttr>()) {
    for (StringRef id : role.getOps().getAsValueRange<StringAttr>()) {
      Operation *op = byId.lookup(id);
      if (!op)
        return kernel.emitOpError("role '")
               << role.getName().getValue() << "' names op '" << id << "' that the kernel lacks";
      op->setAttr("tile.role", role.getName());
    }
  }
  for (auto pipe : schedule.getPipelines().getAsRange<PipelineAttr>()) {
    for (StringRef id : pipe.getBuffers().getAsValueRange<StringAttr>()) {
      // A shared ring carries whatever tile its writer computes.
      if (pipe.getCopy().getValue() == "shared") {
        Operation *op = byId.lookup(id);
        if (!op || op->getNumResults() != 1 || !isa<TileType>(op->getResult(0).getType()))
          return kernel.emitOpError("pipeline '") << pipe.getName().getValue() << "' carries '"
                                                  << id << "', which makes no tile of the kernel";
        continue;
      }
      // Bulk copies carry stores out; every other copy brings loads in.
      bool out = pipe.getCopy().getValue() == "bulk";
      Operation *op = out ? byId.lookup(id) : KernelOp::copiedBy(byId.lookup(id));
      if (!op || (out ? !isa<StoreOp>(op) : !isa<LoadOp>(op)))
        return kernel.emitOpError("pipeline '")
               << pipe.getName().getValue() << "' carries '" << id << "', which is not a "
               << (out ? "store" : "load") << " of the kernel"
               << (op && out ? "; a load travels by `copy: tma`" : "")
               << (op && !out ? "; a store leaves by `copy: bulk`" : "");
      op->setAttr(kPipelineAttr, pipe.getName());
    }
  }
  return success();
}

struct TileApplySchedule : kiln::impl::TileApplyScheduleBase<TileApplySchedule> {
  void runOnOperation() override {
    for (KernelOp kernel : getOperation().getOps<KernelOp>())
      if (auto schedule = kernel.getScheduleAttr())
        if (failed(applySchedule(kernel, schedule)))
          return signalPassFailure();
  }
};

} // namespace
