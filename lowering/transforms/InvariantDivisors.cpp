//===- InvariantDivisors.cpp - divide by dims with a host-made multiplier -===//
//
// A 32-bit division on the GPU is a reciprocal, a conversion and a dozen
// dependent integer ops: on decode's path to its first loads, the GVA
// head `hv / (HV / H)` took two of them. A divisor built from dims alone is
// the same for every thread of the launch, so the launcher computes its
// multiplier once (Granlund and Montgomery) and the kernel multiplies.
//
//===----------------------------------------------------------------------===//
#include "dsl/TileDialect.h"
#include "lowering/Passes.h"
#include "lowering/analysis/KernelWalk.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace kiln {
#define GEN_PASS_DEF_TILEINVARIANTDIVISORS
#include "lowering/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::tile;

namespace {

/// A dim expression as the source would write it: `HV / H`.
std::string exprText(Attribute e, bool nested = false) {
  if (auto name = dyn_cast<StringAttr>(e))
    return name.str();
  if (auto n = dyn_cast<IntegerAttr>(e))
    return std::to_string(n.getInt());
  auto parts = cast<ArrayAttr>(e);
  StringRef op = cast<StringAttr>(parts[0]).getValue();
  std::string a = exprText(parts[1], true), b = exprText(parts[2], true);
  if (op == "ceildiv" || op == "min" || op == "max")
    return (op == "ceildiv" ? "cdiv(" : op == "min" ? "minimum(" : "maximum(") + a + ", " + b + ")";
  std::string sym = op == "add" ? " + " : op == "sub" ? " - " : op == "mul" ? " * " : " / ";
  return nested ? "(" + a + sym + b + ")" : a + sym + b;
}

/// A 32-bit quotient or remainder from tile-narrow-index-division (both
/// operands casts of values below 2^31) whose divisor is built from dims.
bool isCandidate(Operation *op, KernelOp kernel, Attribute &divisor) {
  if (!isa<arith::DivUIOp, arith::RemUIOp>(op) || !op->getResult(0).getType().isInteger(32))
    return false;
  if (!llvm::all_of(op->getOperands(), [](Value x) {
        return isa_and_nonnull<arith::IndexCastUIOp>(x.getDefiningOp());
      }))
    return false;
  Value d = op->getOperand(1);
  if (matchPattern(d, m_Constant()))
    return false; // LLVM divides by constants well already
  divisor = dimExprOf(d, kernel);
  return divisor && !isa<IntegerAttr>(divisor);
}

struct TileInvariantDivisors : kiln::impl::TileInvariantDivisorsBase<TileInvariantDivisors> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      if (failed(rewrite(kernel)))
        signalPassFailure();
    });
  }

  static LogicalResult rewrite(KernelOp kernel) {
    SmallVector<std::pair<Operation *, Attribute>> found;
    kernel.walk([&](Operation *op) {
      Attribute d;
      if (isCandidate(op, kernel, d))
        found.push_back({op, d});
    });
    // Last first: a division that only feeds a later divisor (HV / H in
    // hv / (HV / H)) is dead once that one is rewritten, and costs nothing.
    SmallVector<Attribute> exprs;
    Block &entry = kernel.getBody().front();
    DenseSet<Operation *> erased;
    for (auto &[op, divisor] : llvm::reverse(found)) {
      if (erased.contains(op))
        continue;
      if (op->use_empty()) {
        eraseDeadChain(op, erased);
        continue;
      }
      // Attributes are uniqued: equal expressions share an argument.
      auto at = llvm::find(exprs, divisor);
      unsigned argIndex;
      if (at == exprs.end()) {
        exprs.push_back(divisor);
        argIndex = kernel.getNumArguments();
        Builder nb(kernel.getContext());
        std::string text = exprText(divisor);
        auto attrs =
            nb.getDictionaryAttr(nb.getNamedAttr(kNameAttr, nb.getStringAttr("divisor " + text)));
        if (failed(cast<FunctionOpInterface>(kernel.getOperation())
                       .insertArgument(argIndex, nb.getI64Type(), attrs, kernel.getLoc())))
          return kernel.emitOpError("cannot take the argument of divisor ") << text;
      } else {
        argIndex = kernel.getNumArguments() - exprs.size() + (at - exprs.begin());
      }
      OpBuilder b(op);
      Location loc = op->getLoc();
      Type i32 = b.getI32Type(), i64 = b.getI64Type();
      Value packed = entry.getArgument(argIndex);
      Value x = op->getOperand(0);
      // x / d = (x * m) >> s, with m in the low word and s in the high one.
      Value m = arith::ExtUIOp::create(b, loc, i64, arith::TruncIOp::create(b, loc, i32, packed));
      Value s =
          arith::ShRUIOp::create(b, loc, packed, arith::ConstantIntOp::create(b, loc, 32, 64));
      Value product = arith::MulIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, x), m);
      Value q = arith::TruncIOp::create(b, loc, i32, arith::ShRUIOp::create(b, loc, product, s));
      if (isa<arith::RemUIOp>(op))
        q = arith::SubIOp::create(b, loc, x, arith::MulIOp::create(b, loc, q, op->getOperand(1)));
      op->getResult(0).replaceAllUsesWith(q);
      eraseDeadChain(op, erased);
    }
    // The arguments were appended in the order found last first; record
    // them so, for the manifest.
    if (!exprs.empty())
      kernel->setAttr(kDivisorsAttr, ArrayAttr::get(kernel.getContext(), exprs));
    return success();
  }

  /// Erases the unused division `op` and the index arithmetic only it used.
  static void eraseDeadChain(Operation *op, DenseSet<Operation *> &erased) {
    SetVector<Operation *> work;
    auto operandsOf = [&](Operation *o) {
      for (Value x : o->getOperands())
        if (Operation *d = x.getDefiningOp(); d && isa<arith::ArithDialect>(d->getDialect()))
          work.insert(d);
    };
    operandsOf(op);
    erased.insert(op);
    op->erase();
    while (!work.empty()) {
      Operation *o = work.pop_back_val();
      if (!o->use_empty() || !wouldOpBeTriviallyDead(o))
        continue;
      operandsOf(o);
      erased.insert(o);
      o->erase();
    }
  }
};

} // namespace
