//===- Float8Pairs.cpp - f8e4m3 registers in byte pairs -------------------===//
//
// f8e4m3 converts two elements at a time (cvt.rn.satfinite.e4m3x2.f32 and
// back through f16x2), and both emitters should move its bytes as 16-bit
// words, never one by one: the helpers find a register pair's word where
// loads made it (bytePairWord) and hand stores the words casts made
// (bytesFromPairs).
//
//===----------------------------------------------------------------------===//
#include "lowering/conversion/TileToNVVM/GpuKernelLowering.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::tile;

namespace kiln::nvvm {

/// The vector and constant position `v` was extracted from, looking through
/// bitcasts of the element (f8e4m3 <-> i8); a null vector otherwise.
std::pair<Value, int64_t> extractedFrom(Value v) {
  while (auto c = v.getDefiningOp<arith::BitcastOp>())
    v = c.getIn();
  auto e = v.getDefiningOp<LLVM::ExtractElementOp>();
  APInt at;
  if (!e || !matchPattern(e.getPosition(), m_ConstantInt(&at)))
    return {};
  return {e.getVector(), at.getSExtValue()};
}

/// The byte pair (vector<2xi8>) of elements lo and hi when they are bytes
/// 2k and 2k + 1 of one vector of bytes: its k-th 16-bit word, so that
/// neither emitter moves single bytes (nvcc turns byte inserts into PRMT
/// chains; LLVM finds the word itself). Null otherwise.
Value bytePairWord(OpBuilder &b, Location l, Value lo, Value hi) {
  auto [vl, pl] = extractedFrom(lo);
  auto [vh, ph] = extractedFrom(hi);
  auto bytes = vl ? dyn_cast<VectorType>(vl.getType()) : VectorType();
  if (!bytes || vl != vh || pl % 2 || ph != pl + 1 || !bytes.getElementType().isInteger(8) ||
      bytes.getNumElements() % 2)
    return {};
  // A load of words (lowerAccessAs) and this bitcast back fold together.
  auto words = VectorType::get({bytes.getNumElements() / 2}, b.getI16Type());
  Value w = LLVM::BitcastOp::create(b, l, words, vl);
  Value k = LLVM::ConstantOp::create(b, l, b.getI32Type(), pl / 2);
  Value word = LLVM::ExtractElementOp::create(b, l, w, k);
  return LLVM::BitcastOp::create(b, l, VectorType::get({2}, b.getI8Type()), word);
}

/// The `n` bytes of registers that are byte pairs (element 0 and 1 of one
/// vector<2xi8>, through bitcasts) in order, as a vector of n / 2 16-bit
/// words, the form a store takes them in (a byte vector reaches nvcc as a
/// byte array, joined byte by byte); null when they are not.
Value bytesFromPairs(OpBuilder &b, Location l, ArrayRef<Value> bytes) {
  int64_t n = bytes.size();
  if (n % 2)
    return {};
  SmallVector<Value> pairs;
  for (int64_t e = 0; e < n; e += 2) {
    auto [vl, pl] = extractedFrom(bytes[e]);
    auto [vh, ph] = extractedFrom(bytes[e + 1]);
    if (!vl || vl != vh || pl != 0 || ph != 1 ||
        vl.getType() != VectorType::get({2}, b.getI8Type()))
      return {};
    pairs.push_back(vl);
  }
  auto words = VectorType::get({n / 2}, b.getI16Type());
  Value v = LLVM::PoisonOp::create(b, l, words);
  for (auto [k, pair] : llvm::enumerate(pairs)) {
    // A cvt's word (lowerFloat8Cast) and this bitcast back fold together.
    Value word = LLVM::BitcastOp::create(b, l, b.getI16Type(), pair);
    Value at = LLVM::ConstantOp::create(b, l, b.getI32Type(), (int64_t)k);
    v = LLVM::InsertElementOp::create(b, l, v, word, at);
  }
  return v;
}

void GpuKernelLowering::lowerFloat8Cast(CastOp op) {
  const Regs &x = regs[op.getInput()];
  Type from = op.getInput().getType().getElementType(), to = op.getType().getElementType();
  if (from == to) {
    regs[op.getResult()] = x;
    return;
  }
  Type i8 = b.getI8Type(), f32 = b.getF32Type();
  auto pairType = VectorType::get({2}, i8);
  auto element = [&](Value v, int64_t e) -> Value {
    return LLVM::ExtractElementOp::create(b, loc(), v, cI32(e));
  };
  int64_t n = x.size();
  Regs out(n);
  // Registers in pairs: one cvt converts two elements (a lone last one is
  // paired with itself).
  for (int64_t r = 0; r < n; r += 2) {
    bool two = r + 1 < n;
    if (isa<Float8E4M3FNType>(to)) {
      Value lo = scalarCast(b, loc(), x[r], f32),
            hi = two ? scalarCast(b, loc(), x[r + 1], f32) : lo;
      // The cvt's first operand becomes the high byte, element 1. As a
      // 16-bit word, which a store of byte pairs takes whole (bytesFromPairs).
      Value word = NVVM::ConvertF32x2ToF8x2Op::create(
          b, loc(), b.getI16Type(), hi, lo, NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE, /*relu=*/false, to);
      Value pair = LLVM::BitcastOp::create(b, loc(), pairType, word);
      for (int64_t e = 0; e < (two ? 2 : 1); ++e)
        out[r + e] = arith::BitcastOp::create(b, loc(), to, element(pair, e));
      continue;
    }
    Value pair = two ? bytePairWord(b, loc(), x[r], x[r + 1]) : Value();
    if (!pair) {
      pair = LLVM::PoisonOp::create(b, loc(), pairType);
      for (int64_t e = 0; e < 2; ++e)
        pair = LLVM::InsertElementOp::create(
            b, loc(), pair, arith::BitcastOp::create(b, loc(), i8, x[two ? r + e : r]), cI32(e));
    }
    // e4m3 -> f16 is exact; f16 -> the target as any float cast.
    Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
        b, loc(), VectorType::get({2}, b.getF16Type()), pair, /*relu=*/false, from);
    for (int64_t e = 0; e < (two ? 2 : 1); ++e)
      out[r + e] = scalarCast(b, loc(), element(halves, e), to);
  }
  regs[op.getResult()] = out;
}

} // namespace kiln::nvvm
