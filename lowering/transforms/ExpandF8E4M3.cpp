//===- ExpandF8E4M3.cpp - f8e4m3 conversions as integer arithmetic --------===//
//
// LLVM has no 8-bit float type: MLIR's LLVM lowering stores f8E4M3FN as i8
// and cannot lower an extf or truncf on it. On the CPU every conversion
// becomes the bit arithmetic here; on the GPU the tile conversion pairs
// elements into the hardware's cvt first, and this pass takes whatever
// conversion is left (a scalar's). Both round as `cvt.rn.satfinite`: to
// nearest even, magnitudes past 448 to 448, NaN to NaN.
//
//===----------------------------------------------------------------------===//
#include "lowering/Passes.h"

namespace kiln {
#define GEN_PASS_DEF_EXPANDF8E4M3
#include "lowering/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

bool isF8(Type t) { return isa<Float8E4M3FNType>(getElementTypeOrSelf(t)); }

/// `t`'s shape (a scalar or a vector) with `elem` elements.
Type like(Type t, Type elem) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.clone(elem);
  return elem;
}

/// A splat or scalar constant of `t`.
Value constant(OpBuilder &b, Location loc, Type t, TypedAttr scalar) {
  if (auto v = dyn_cast<VectorType>(t))
    return arith::ConstantOp::create(b, loc, v, SplatElementsAttr::get(v, scalar));
  return arith::ConstantOp::create(b, loc, t, scalar);
}

/// Integer and f32 arithmetic on scalars or vectors of one shape, each
/// operand made in its own statement so that the IR's order does not
/// depend on the C++ compiler's order of evaluating arguments.
struct Bits {
  OpBuilder &b;
  Location loc;
  Type i8, i32, f32;
  Bits(OpBuilder &b, Location loc, Type shape)
      : b(b), loc(loc), i8(like(shape, b.getI8Type())), i32(like(shape, b.getI32Type())),
        f32(like(shape, b.getF32Type())) {}
  Value c(int64_t v) { return constant(b, loc, i32, b.getI32IntegerAttr(v)); }
  Value cf(float v) { return constant(b, loc, f32, b.getF32FloatAttr(v)); }
  /// `x op v` for an i32 constant v.
  template <typename Op> Value withC(Value x, int64_t v) {
    Value k = c(v);
    return Op::create(b, loc, x, k);
  }
  Value andC(Value x, int64_t m) { return withC<arith::AndIOp>(x, m); }
  Value shl(Value x, int64_t n) { return withC<arith::ShLIOp>(x, n); }
  Value shr(Value x, int64_t n) { return withC<arith::ShRUIOp>(x, n); }
  Value addC(Value x, int64_t v) { return withC<arith::AddIOp>(x, v); }
  Value cmpC(arith::CmpIPredicate p, Value x, int64_t v) {
    Value k = c(v);
    return arith::CmpIOp::create(b, loc, p, x, k);
  }
  Value selectC(Value cond, int64_t v, Value x) {
    Value k = c(v);
    return arith::SelectOp::create(b, loc, cond, k, x);
  }
  Value mulF(Value x, float v) {
    Value k = cf(v);
    return arith::MulFOp::create(b, loc, x, k);
  }
};

/// f8e4m3 bits -> f32, exactly: normal codes by moving the exponent and
/// mantissa fields into place, subnormals (exponent 0) as m * 2^-9, the
/// NaN code (S.1111.111) as a quiet NaN.
Value widen(OpBuilder &b, Location loc, Value x) {
  Bits k(b, loc, x.getType());
  Value byte = arith::BitcastOp::create(b, loc, k.i8, x);
  Value bits = arith::ExtUIOp::create(b, loc, k.i32, byte);
  Value sign = k.shl(k.andC(bits, 0x80), 24);
  Value mag = k.andC(bits, 0x7f);
  // (e << 3 | m) << 20 puts e and m at f32's fields; the exponent bias goes
  // from 7 to 127.
  Value normal = k.addC(k.shl(mag, 20), 120 << 23);
  Value m = k.andC(bits, 7);
  Value mf = arith::UIToFPOp::create(b, loc, k.f32, m);
  Value sub = arith::BitcastOp::create(b, loc, k.i32, k.mulF(mf, 0x1p-9f));
  Value isSub = k.cmpC(arith::CmpIPredicate::ult, mag, 8);
  Value isNan = k.cmpC(arith::CmpIPredicate::eq, mag, 0x7f);
  Value r = arith::SelectOp::create(b, loc, isSub, sub, normal);
  r = k.selectC(isNan, 0x7fc00000, r);
  r = arith::OrIOp::create(b, loc, r, sign);
  return arith::BitcastOp::create(b, loc, k.f32, r);
}

/// f32 -> f8e4m3 bits, to nearest even, saturating to +-448, NaN to NaN.
Value narrow(OpBuilder &b, Location loc, Value x, Type f8) {
  Bits k(b, loc, x.getType());
  Value bits = arith::BitcastOp::create(b, loc, k.i32, x);
  Value sign = k.andC(k.shr(bits, 24), 0x80);
  Value a = k.andC(bits, 0x7fffffff);
  // Normal results (|x| >= 2^-6): round f32's 23 mantissa bits to 3 (add
  // just under half an f8 unit, plus the kept bit's parity for ties), then
  // rebias the exponent; past 448 (0x7e) saturate.
  Value odd = k.andC(k.shr(a, 20), 1);
  Value rounded = arith::AddIOp::create(b, loc, k.addC(a, 0x7ffff), odd);
  Value normal = k.addC(k.shr(rounded, 20), -(120 << 3));
  Value most = k.c(0x7e);
  normal = arith::MinUIOp::create(b, loc, normal, most);
  // Subnormal results: |x| * 2^9 rounded to an integer (0..8; 8 is the
  // smallest normal's code), by adding 2^23 in f32 (the add rounds to
  // nearest even) and reading the low bits.
  Value scaled = k.mulF(arith::BitcastOp::create(b, loc, k.f32, a), 0x1p9f);
  Value big = k.cf(0x1p23f);
  Value shifted = arith::AddFOp::create(b, loc, scaled, big);
  Value sub = k.addC(arith::BitcastOp::create(b, loc, k.i32, shifted), -0x4b000000);
  Value isSub = k.cmpC(arith::CmpIPredicate::ult, a, 0x3c800000);
  Value isNan = k.cmpC(arith::CmpIPredicate::ugt, a, 0x7f800000);
  Value code = arith::SelectOp::create(b, loc, isSub, sub, normal);
  code = k.selectC(isNan, 0x7f, code);
  code = arith::OrIOp::create(b, loc, code, sign);
  Value byte = arith::TruncIOp::create(b, loc, k.i8, code);
  return arith::BitcastOp::create(b, loc, f8, byte);
}

struct ExpandF8E4M3 : kiln::impl::ExpandF8E4M3Base<ExpandF8E4M3> {
  void runOnOperation() override {
    SmallVector<Operation *> conversions;
    getOperation()->walk([&](Operation *op) {
      if ((isa<arith::ExtFOp>(op) && isF8(op->getOperand(0).getType())) ||
          (isa<arith::TruncFOp>(op) && isF8(op->getResult(0).getType())))
        conversions.push_back(op);
    });
    for (Operation *op : conversions) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value x = op->getOperand(0);
      Type to = op->getResult(0).getType();
      Type f32 = like(x.getType(), b.getF32Type());
      Value r;
      if (isa<arith::ExtFOp>(op)) {
        r = widen(b, loc, x);
        if (to != f32) // f8 -> f32 is exact, and so is f32 -> f64
          r = arith::ExtFOp::create(b, loc, to, r);
      } else {
        // Wider sources round to f32 first, as the GPU's cvt takes f32.
        if (getElementTypeOrSelf(x.getType()).getIntOrFloatBitWidth() > 32)
          x = arith::TruncFOp::create(b, loc, f32, x);
        else if (x.getType() != f32)
          x = arith::ExtFOp::create(b, loc, f32, x);
        r = narrow(b, loc, x, to);
      }
      op->getResult(0).replaceAllUsesWith(r);
      op->erase();
    }
  }
};

} // namespace
