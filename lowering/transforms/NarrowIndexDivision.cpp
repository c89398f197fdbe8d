//===- NarrowIndexDivision.cpp - divide dims and grid ids in 32 bits -------===//
//
// Index arithmetic is 64-bit on the GPU, and a 64-bit division is a call
// into a long routine (with register saves to local memory where it is
// inlined under pressure). The runtime rejects any dim of 2^31 or more, and
// grid coordinates are below their dims, so a quotient or remainder of such
// values fits in 32 bits: dividing there costs a handful of instructions.
//
//===----------------------------------------------------------------------===//
#include "dsl/TileDialect.h"
#include "lowering/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_TILENARROWINDEXDIVISION
#include "lowering/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln::tile;

namespace {

/// A quotient or remainder, the ops this pass narrows.
bool isDivision(Operation *op) {
  return isa<arith::DivSIOp, arith::DivUIOp, arith::CeilDivSIOp, arith::CeilDivUIOp, arith::RemSIOp,
             arith::RemUIOp>(op);
}

/// Whether `v` is known to lie in [0, 2^31): a runtime dim, a grid
/// coordinate, such a constant, or a quotient, remainder, minimum or
/// maximum of those.
bool isSmall(Value v, unsigned numDims) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return isa<KernelOp>(arg.getOwner()->getParentOp()) && arg.getArgNumber() < numDims;
  Operation *def = v.getDefiningOp();
  if (isa<ProgramIdsOp>(def))
    return true;
  if (auto c = dyn_cast<arith::ConstantIndexOp>(def))
    return c.value() >= 0 && c.value() < (int64_t(1) << 31);
  if (isDivision(def) || isa<arith::MinSIOp, arith::MinUIOp, arith::MaxSIOp, arith::MaxUIOp>(def))
    return llvm::all_of(def->getOperands(), [&](Value x) { return isSmall(x, numDims); });
  return false;
}

struct TileNarrowIndexDivision : kiln::impl::TileNarrowIndexDivisionBase<TileNarrowIndexDivision> {
  void runOnOperation() override {
    getOperation().walk([](KernelOp kernel) {
      unsigned numDims = kernel.getDimNames().size();
      SmallVector<Operation *> divisions;
      kernel.walk([&](Operation *op) {
        if (isDivision(op) && op->getResult(0).getType().isIndex() &&
            llvm::all_of(op->getOperands(), [&](Value x) { return isSmall(x, numDims); }))
          divisions.push_back(op);
      });
      for (Operation *op : divisions) {
        OpBuilder b(op);
        Location loc = op->getLoc();
        Type i32 = b.getI32Type();
        Value x = arith::IndexCastUIOp::create(b, loc, i32, op->getOperand(0));
        Value y = arith::IndexCastUIOp::create(b, loc, i32, op->getOperand(1));
        // Both are non-negative: the signed ops equal the unsigned ones,
        // which are shorter.
        Value r;
        if (isa<arith::DivSIOp, arith::DivUIOp>(op))
          r = arith::DivUIOp::create(b, loc, x, y);
        else if (isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(op))
          r = arith::CeilDivUIOp::create(b, loc, x, y);
        else
          r = arith::RemUIOp::create(b, loc, x, y);
        op->getResult(0).replaceAllUsesWith(
            arith::IndexCastUIOp::create(b, loc, b.getIndexType(), r));
        op->erase();
      }
    });
  }
};

} // namespace
