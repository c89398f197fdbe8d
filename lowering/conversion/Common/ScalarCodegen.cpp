//===- ScalarCodegen.cpp - one element of a tile op -----------------------===//
#include "lowering/conversion/Common/ScalarCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::tile;

Value kiln::scalarConstant(OpBuilder &nb, Location l, Type type, double value) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(nb, l, type, nb.getFloatAttr(ft, value));
  return arith::ConstantOp::create(nb, l, type, nb.getIntegerAttr(type, (int64_t)value));
}

Value kiln::scalarCast(OpBuilder &nb, Location l, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto ff = dyn_cast<FloatType>(from), ft = dyn_cast<FloatType>(to);
  if (ff && ft) {
    // bf16 <-> f16: neither holds the other (range, mantissa), so through f32.
    if (ff.getWidth() == ft.getWidth())
      return arith::TruncFOp::create(nb, l, to, arith::ExtFOp::create(nb, l, nb.getF32Type(), x));
    return ff.getWidth() < ft.getWidth() ? arith::ExtFOp::create(nb, l, to, x).getResult()
                                         : arith::TruncFOp::create(nb, l, to, x).getResult();
  }
  if (!ff && ft)
    return from.isInteger(1) ? arith::UIToFPOp::create(nb, l, to, x).getResult()
                             : arith::SIToFPOp::create(nb, l, to, x).getResult();
  if (ff && !ft)
    return arith::FPToSIOp::create(nb, l, to, x);
  unsigned wf = from.getIntOrFloatBitWidth(), wt = to.getIntOrFloatBitWidth();
  if (wf > wt)
    return arith::TruncIOp::create(nb, l, to, x);
  return from.isInteger(1) ? arith::ExtUIOp::create(nb, l, to, x).getResult()
                           : arith::ExtSIOp::create(nb, l, to, x).getResult();
}

Value kiln::scalarBinary(OpBuilder &nb, Location l, Operation *op, Value x, Value y) {
  bool f = isa<FloatType>(x.getType());
  return TypeSwitch<Operation *, Value>(op)
      .Case([&](AddOp) {
        return f ? (Value)arith::AddFOp::create(nb, l, x, y) : arith::AddIOp::create(nb, l, x, y);
      })
      .Case([&](SubOp) {
        return f ? (Value)arith::SubFOp::create(nb, l, x, y) : arith::SubIOp::create(nb, l, x, y);
      })
      .Case([&](MulOp) {
        return f ? (Value)arith::MulFOp::create(nb, l, x, y) : arith::MulIOp::create(nb, l, x, y);
      })
      .Case([&](DivOp) {
        return f ? (Value)arith::DivFOp::create(nb, l, x, y) : arith::DivSIOp::create(nb, l, x, y);
      })
      .Case([&](RemOp) {
        return f ? (Value)arith::RemFOp::create(nb, l, x, y) : arith::RemSIOp::create(nb, l, x, y);
      })
      .Case([&](MaxOp) {
        return f ? (Value)arith::MaximumFOp::create(nb, l, x, y)
                 : arith::MaxSIOp::create(nb, l, x, y);
      })
      .Case([&](MinOp) {
        return f ? (Value)arith::MinimumFOp::create(nb, l, x, y)
                 : arith::MinSIOp::create(nb, l, x, y);
      })
      .Case([&](AndOp) { return (Value)arith::AndIOp::create(nb, l, x, y); })
      .Case([&](OrOp) { return (Value)arith::OrIOp::create(nb, l, x, y); })
      .Case([&](CmpOp cmp) -> Value {
        if (f) {
          static const arith::CmpFPredicate preds[] = {
              arith::CmpFPredicate::OLT, arith::CmpFPredicate::OLE, arith::CmpFPredicate::OGT,
              arith::CmpFPredicate::OGE, arith::CmpFPredicate::OEQ, arith::CmpFPredicate::UNE};
          return arith::CmpFOp::create(nb, l, preds[(int)cmp.getPredicate()], x, y);
        }
        static const arith::CmpIPredicate preds[] = {
            arith::CmpIPredicate::slt, arith::CmpIPredicate::sle, arith::CmpIPredicate::sgt,
            arith::CmpIPredicate::sge, arith::CmpIPredicate::eq,  arith::CmpIPredicate::ne};
        return arith::CmpIOp::create(nb, l, preds[(int)cmp.getPredicate()], x, y);
      })
      .Default([](Operation *) -> Value { llvm_unreachable("not a binary tile op"); });
}

namespace {
/// f32 special functions on the GPU's approximate units: ex2 and lg2 with
/// the base change folded into one multiply, as fast GPU kernels do.
Value nvvmIntrinsic(OpBuilder &b, Location l, const char *name, ValueRange args) {
  return LLVM::CallIntrinsicOp::create(b, l, args[0].getType(), b.getStringAttr(name), args)
      .getResult(0);
}
Value fastExp(OpBuilder &b, Location l, Value x) {
  Value log2e = scalarConstant(b, l, x.getType(), 1.4426950408889634);
  Value scaled = arith::MulFOp::create(b, l, x, log2e);
  return nvvmIntrinsic(b, l, "llvm.nvvm.ex2.approx.ftz.f32", scaled);
}
/// x / y to 2 ulp over the full range (div.full.f32): the IEEE division's
/// slow path is a branch, which splits the block and pins every load after
/// it there.
Value fastDiv(OpBuilder &b, Location l, Value x, Value y) {
  return nvvmIntrinsic(b, l, "llvm.nvvm.div.full", {x, y});
}
Value fastLog(OpBuilder &b, Location l, Value x) {
  Value ln2 = scalarConstant(b, l, x.getType(), 0.6931471805599453);
  return arith::MulFOp::create(b, l, nvvmIntrinsic(b, l, "llvm.nvvm.lg2.approx.ftz.f", x), ln2);
}
} // namespace

Value kiln::scalarUnary(OpBuilder &nb, Location l, Operation *op, Value x, MathFlavor flavor) {
  bool f = isa<FloatType>(x.getType());
  bool transcendental = isa<ExpOp, LogOp, Log1pOp, RsqrtOp, TanhOp, SigmoidOp>(op);
  if (flavor == MathFlavor::Nvvm && f && transcendental) {
    // Compute in f32 whatever the element type; the approximations are f32.
    Type f32 = nb.getF32Type();
    Value y = scalarCast(nb, l, x, f32);
    Value one = scalarConstant(nb, l, f32, 1.0);
    Value r =
        TypeSwitch<Operation *, Value>(op)
            .Case([&](ExpOp) { return fastExp(nb, l, y); })
            .Case([&](LogOp) { return fastLog(nb, l, y); })
            .Case([&](Log1pOp) -> Value {
              // log(u) * x / (u - 1) with u = 1 + x cancels the rounding of u
              // (Goldberg); where u rounds to 1, log1p(x) = x.
              Value u = arith::AddFOp::create(nb, l, one, y);
              Value um1 = arith::SubFOp::create(nb, l, u, one);
              Value exact = fastDiv(nb, l, arith::MulFOp::create(nb, l, fastLog(nb, l, u), y), um1);
              Value isOne = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, u, one);
              return arith::SelectOp::create(nb, l, isOne, y, exact);
            })
            .Case([&](RsqrtOp) { return nvvmIntrinsic(nb, l, "llvm.nvvm.rsqrt.approx.ftz.f", y); })
            .Case([&](TanhOp) -> Value {
              // tanh(x) = sign(x) (1 - 2 / (e^{2|x|} + 1)): no overflow to NaN.
              Value ax = math::AbsFOp::create(nb, l, y);
              Value e = fastExp(nb, l, arith::AddFOp::create(nb, l, ax, ax));
              Value two = scalarConstant(nb, l, f32, 2.0);
              Value t = arith::SubFOp::create(
                  nb, l, one, fastDiv(nb, l, two, arith::AddFOp::create(nb, l, e, one)));
              return math::CopySignOp::create(nb, l, t, y);
            })
            .Case([&](SigmoidOp) -> Value {
              Value e = fastExp(nb, l, arith::NegFOp::create(nb, l, y));
              return fastDiv(nb, l, one, arith::AddFOp::create(nb, l, one, e));
            });
    return scalarCast(nb, l, r, x.getType());
  }
  return TypeSwitch<Operation *, Value>(op)
      .Case([&](NegOp) -> Value {
        if (f)
          return arith::NegFOp::create(nb, l, x);
        return arith::SubIOp::create(nb, l, scalarConstant(nb, l, x.getType(), 0), x);
      })
      .Case([&](AbsOp) {
        return f ? (Value)math::AbsFOp::create(nb, l, x) : math::AbsIOp::create(nb, l, x);
      })
      .Case([&](ExpOp) { return (Value)math::ExpOp::create(nb, l, x); })
      .Case([&](LogOp) { return (Value)math::LogOp::create(nb, l, x); })
      .Case([&](Log1pOp) { return (Value)math::Log1pOp::create(nb, l, x); })
      .Case([&](SqrtOp) { return (Value)math::SqrtOp::create(nb, l, x); })
      .Case([&](RsqrtOp) { return (Value)math::RsqrtOp::create(nb, l, x); })
      .Case([&](TanhOp) { return (Value)math::TanhOp::create(nb, l, x); })
      .Case([&](SigmoidOp) -> Value {
        // 1 / (1 + e^-x): saturates to 0 or 1 without NaN for large |x|.
        Value one = scalarConstant(nb, l, x.getType(), 1.0);
        Value e = math::ExpOp::create(nb, l, arith::NegFOp::create(nb, l, x));
        return arith::DivFOp::create(nb, l, one, arith::AddFOp::create(nb, l, one, e));
      })
      .Case([&](NotOp) {
        return (Value)arith::XOrIOp::create(nb, l, x, scalarConstant(nb, l, x.getType(), 1));
      })
      .Default([](Operation *) -> Value { llvm_unreachable("not a unary tile op"); });
}

Value kiln::reduceCombine(OpBuilder &nb, Location l, ReduceKind kind, Value acc, Value x) {
  bool f = isa<FloatType>(x.getType());
  switch (kind) {
  case ReduceKind::sum:
    return f ? (Value)arith::AddFOp::create(nb, l, acc, x) : arith::AddIOp::create(nb, l, acc, x);
  case ReduceKind::max:
    return f ? (Value)arith::MaximumFOp::create(nb, l, acc, x)
             : arith::MaxSIOp::create(nb, l, acc, x);
  case ReduceKind::min:
    return f ? (Value)arith::MinimumFOp::create(nb, l, acc, x)
             : arith::MinSIOp::create(nb, l, acc, x);
  }
  llvm_unreachable("unknown reduction");
}

double kiln::reduceIdentity(ReduceKind kind, Type type) {
  if (kind == ReduceKind::sum)
    return 0.0;
  if (isa<FloatType>(type))
    return kind == ReduceKind::max ? -INFINITY : INFINITY;
  unsigned w = type.getIntOrFloatBitWidth();
  double big = std::ldexp(1.0, w - 1);
  return kind == ReduceKind::max ? -big : big - 1;
}
