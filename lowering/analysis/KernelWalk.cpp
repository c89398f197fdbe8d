//===- KernelWalk.cpp - pieces every tile-kernel lowering shares ----------===//
#include "lowering/analysis/KernelWalk.h"
#include "dsl/schedule/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace kiln;

bool kiln::roundsMatrixOperands(Operation *root) {
  auto narrow = [](mlir::Value v) {
    return cast<tile::TileType>(v.getType()).getElementType().getIntOrFloatBitWidth() < 32;
  };
  bool rounds = false;
  root->walk([&](tile::DotOp dot) {
    auto kernel = dot->getParentOfType<tile::KernelOp>();
    auto schedule = kernel ? kernel.getScheduleAttr() : nullptr;
    const TargetDesc *target = schedule ? lookupTarget(schedule.getTarget().str()) : nullptr;
    // (The schedule's instruction or a role's own.)
    auto onTensorCores = [&](StringAttr name) {
      const MmaKind *mma = target && name ? target->mma(name.str()) : nullptr;
      return mma && mma->tensorCores;
    };
    bool tensorCores = schedule && onTensorCores(schedule.getMma());
    if (schedule)
      for (auto role : schedule.getRoles().getAsRange<tile::RoleAttr>())
        tensorCores |= onTensorCores(role.getMma());
    if (tensorCores || narrow(dot.getLhs()) || narrow(dot.getRhs())) {
      rounds = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return rounds;
}

SmallVector<int64_t> kiln::launchOrder(tile::ProgramIdsOp op) {
  if (auto attr = op->getAttrOfType<DenseI64ArrayAttr>("order"))
    return SmallVector<int64_t>(attr.asArrayRef());
  SmallVector<int64_t> order;
  for (unsigned i = 0; i < op.getExtents().size(); ++i)
    order.push_back(i);
  return order;
}

ViewGeometry kiln::buildViewGeometry(OpBuilder &b, Location l, tile::KernelOp kernel,
                                     tile::ViewType view, const IRMapping &map) {
  ViewGeometry g;
  Block &body = kernel.getBody().front();
  auto names = kernel.getDimNames().getAsValueRange<StringAttr>();
  for (unsigned d = 0; d < view.getRank(); ++d) {
    if (view.isDynamicDim(d)) {
      auto pos = llvm::find(names, view.getDimNames()[d].getValue());
      g.dims.push_back(map.lookup(body.getArgument(std::distance(names.begin(), pos))));
    } else {
      g.dims.push_back(arith::ConstantIndexOp::create(b, l, view.getShape()[d]));
    }
  }
  g.strides.resize(view.getRank());
  Value stride = arith::ConstantIndexOp::create(b, l, 1);
  for (int d = view.getRank() - 1; d >= 0; --d) {
    g.strides[d] = stride;
    stride = arith::MulIOp::create(b, l, stride, g.dims[d]);
  }
  return g;
}

LogicalResult kiln::lowerIfWithoutResults(scf::IfOp op, OpBuilder &b, Location l,
                                          const IRMapping &map,
                                          function_ref<LogicalResult(Operation *)> lowerOp) {
  if (op.getNumResults() != 0)
    return op.emitOpError("with results is not supported in tile kernels yet");
  bool hasElse = !op.getElseRegion().empty();
  auto newIf = scf::IfOp::create(b, l, TypeRange{}, map.lookup(op.getCondition()), hasElse);
  OpBuilder::InsertionGuard guard(b);
  for (auto [from, to] : {std::pair{&op.getThenRegion(), &newIf.getThenRegion()},
                          std::pair{&op.getElseRegion(), &newIf.getElseRegion()}}) {
    if (from->empty())
      continue;
    b.setInsertionPoint(to->front().getTerminator());
    for (Operation &inner : from->front().without_terminator())
      if (failed(lowerOp(&inner)))
        return failure();
  }
  return success();
}

LogicalResult kiln::cloneScalarOp(Operation *op, OpBuilder &b, IRMapping &map) {
  if (op->getNumRegions() != 0)
    return op->emitOpError("with regions is not supported inside tile kernels");
  b.clone(*op, map);
  return success();
}

Attribute kiln::dimExprOf(Value v, tile::KernelOp kernel) {
  MLIRContext *ctx = kernel.getContext();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto names = kernel.getDimNames();
    if (arg.getOwner() != &kernel.getBody().front() || arg.getArgNumber() >= names.size())
      return {};
    return names[arg.getArgNumber()];
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return {};
  if (auto c = dyn_cast<arith::ConstantOp>(def))
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return IntegerAttr::get(IntegerType::get(ctx, 64), i.getInt());
  if (isa<arith::IndexCastUIOp, arith::IndexCastOp>(def))
    return dimExprOf(def->getOperand(0), kernel);
  const char *op = isa<arith::AddIOp>(def)                            ? "add"
                   : isa<arith::SubIOp>(def)                          ? "sub"
                   : isa<arith::MulIOp>(def)                          ? "mul"
                   : isa<arith::DivSIOp, arith::DivUIOp>(def)         ? "div"
                   : isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(def) ? "ceildiv"
                   : isa<arith::MinSIOp, arith::MinUIOp>(def)         ? "min"
                   : isa<arith::MaxSIOp, arith::MaxUIOp>(def)         ? "max"
                                                                      : nullptr;
  if (!op)
    return {};
  Attribute a = dimExprOf(def->getOperand(0), kernel), b = dimExprOf(def->getOperand(1), kernel);
  if (!a || !b)
    return {};
  return ArrayAttr::get(ctx, {StringAttr::get(ctx, op), a, b});
}

bool kiln::isViewEnd(Value limit, tile::ViewType view, unsigned d, tile::KernelOp kernel) {
  Attribute e = dimExprOf(limit, kernel);
  if (view.isDynamicDim(d))
    return e && e == view.getDimNames()[d];
  auto i = dyn_cast_or_null<IntegerAttr>(e);
  return i && i.getInt() >= view.getShape()[d];
}
