//===- GlobalAccess.cpp - tile loads and stores of global memory ----------===//
//
// A tile.load or tile.store of a view: each thread's registers at their
// addresses, row-major from the runtime dims, up to 16 bytes an access
// along a contiguous dim, masked elements guarded (one range check a dim),
// a store of replicated elements by one owner thread of each group. An
// f8e4m3 tile moves as bytes, in 16-bit words where they pair.
//
//===----------------------------------------------------------------------===//
#include "lowering/conversion/TileToNVVM/GpuKernelLowering.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::tile;

namespace kiln::nvvm {

// Whether v is computed (within a few steps) from a value loaded in
// `region`. A load made outside the region, before a loop, has long
// arrived when the loop's accesses use it: only a fresh one is worth
// splitting an address for.
static bool readsMemoryIn(Value v, Region *region, int depth = 8) {
  Operation *def = v.getDefiningOp();
  if (!def || depth == 0)
    return false;
  if (isa<LLVM::LoadOp>(def))
    return def->getParentRegion() == region;
  return llvm::any_of(def->getOperands(),
                      [&](Value operand) { return readsMemoryIn(operand, region, depth - 1); });
}

Value GpuKernelLowering::elementAddress(const ViewInfo &vi, ArrayRef<Value> indices, Type elem) {
  Value offset = cIndex(0);
  for (auto [d, index] : llvm::enumerate(indices))
    offset = add(offset, mul(index, vi.strides[d]));
  Value off64 = arith::IndexCastOp::create(b, loc(), b.getI64Type(), offset);
  return LLVM::GEPOp::create(b, loc(), vi.ptr.getType(), elem, vi.ptr, ValueRange{off64});
}

LogicalResult GpuKernelLowering::lowerAccess(const ViewInfo &vi, ArrayRef<Value> starts,
                                             ArrayRef<Value> floors, ArrayRef<Value> limits,
                                             ArrayRef<int64_t> keep, bool masked, Value tile,
                                             bool isLoad, double other) {
  Type elem = cast<TileType>(tile.getType()).getElementType(), mem = memoryType(elem);
  if (mem == elem)
    return lowerAccessAs(elem, vi, starts, floors, limits, keep, masked, tile, isLoad, other);
  // An f8e4m3 tile moves as bytes: its registers are bitcast on the way.
  Regs values = regs[tile];
  if (!isLoad)
    for (Value &v : regs[tile])
      v = arith::BitcastOp::create(b, loc(), mem, v);
  bool lossless = false;
  APFloat fill(other);
  fill.convert(cast<FloatType>(elem).getFloatSemantics(), APFloat::rmNearestTiesToEven, &lossless);
  LogicalResult done = lowerAccessAs(mem, vi, starts, floors, limits, keep, masked, tile, isLoad,
                                     (double)(int8_t)fill.bitcastToAPInt().getZExtValue());
  if (isLoad)
    for (Value &v : regs[tile])
      v = arith::BitcastOp::create(b, loc(), elem, v);
  else
    regs[tile] = values;
  return done;
}

LogicalResult GpuKernelLowering::lowerAccessAs(Type elem, const ViewInfo &vi,
                                               ArrayRef<Value> starts, ArrayRef<Value> floors,
                                               ArrayRef<Value> limits, ArrayRef<int64_t> keep,
                                               bool masked, Value tile, bool isLoad, double other) {
  auto tileType = cast<TileType>(tile.getType());
  unsigned elemBytes = std::max(1u, elem.getIntOrFloatBitWidth() / 8);
  Type ptrType = vi.ptr.getType();
  auto gepFrom = [&](Value ptr, Value offset) -> Value {
    Value off64 = arith::IndexCastOp::create(b, loc(), b.getI64Type(), offset);
    return LLVM::GEPOp::create(b, loc(), ptrType, elem, ptr, ValueRange{off64});
  };

  if (tileType.getRank() == 0) {
    Value at = elementAddress(vi, starts, elem);
    if (isLoad) {
      Value v = LLVM::LoadOp::create(b, loc(), elem, at, elemBytes, false, false, vi.readOnly);
      regs[tile] = {v};
    } else {
      OpBuilder::InsertionGuard guard(b);
      enterLeaderOnly();
      LLVM::StoreOp::create(b, loc(), regs[tile][0], at, elemBytes);
    }
    return success();
  }

  TileLayout l = layoutOf(tile);
  unsigned rank = l.shape.size();
  // Thread-dependent part of the offset, computed once. A start just read
  // from memory (decode's slot) is added last, to a pointer made from
  // everything else: the address then waits on that load for one
  // multiply-add, not for the whole sum.
  Value base = cIndex(0), late;
  SmallVector<Value> coordBase(rank);
  for (unsigned d = 0; d < starts.size(); ++d) {
    Value idx = starts[d], threadPart, coord = idx;
    if (auto pos = llvm::find(keep, (int64_t)d); pos != keep.end()) {
      unsigned td = pos - keep.begin();
      threadPart = threadBase(l, td);
      coordBase[td] = coord = add(idx, threadPart);
    }
    if (readsMemoryIn(idx, b.getInsertionBlock()->getParent())) {
      Value term = mul(idx, vi.strides[d]);
      late = late ? add(late, term) : term;
      if (threadPart)
        base = add(base, mul(threadPart, vi.strides[d]));
      continue;
    }
    base = add(base, mul(coord, vi.strides[d]));
  }
  // With a late term, the accesses' offsets count from a pointer that
  // already holds both parts.
  Value origin = vi.ptr;
  if (late) {
    origin = gepFrom(vi.ptr, base);
    origin = gepFrom(origin, late);
    base = cIndex(0);
  }
  WindowBounds bounds{vi, starts, floors, limits};
  // Vector width along the last tile dim when it is the view's contiguous
  // dim, no limit cuts it and every vector start is provably aligned. The
  // dim's own end then never falls inside a vector (static, a multiple of
  // the width), so a mask decided at a vector's first element holds for all
  // of it.
  // A dynamic contiguous dim (a token-last tensor padded to TP tokens,
  // tests/lit/ptx/dynamic_inner_dim.test) has its width decided at run
  // time instead: one uniform test picks the vector accesses when the dim
  // is a multiple of it, scalar ones otherwise.
  int64_t vec = 1;
  unsigned last = rank - 1;
  bool dynamicInner = false;
  if (!l.isUnit(last) && keep[last] == (int64_t)vi.type.getRank() - 1 &&
      !(masked && (bounds.limitBinds(keep[last]) || bounds.floorBinds(keep[last])))) {
    int64_t innermost = vi.type.getShape().back();
    dynamicInner = ShapedType::isDynamic(innermost);
    vec = std::min<int64_t>(l.contiguous(last), 16 / elemBytes);
    while (vec > 1 &&
           ((!dynamicInner && innermost % vec != 0) || !knownMultipleOf(starts[keep[last]], vec)))
      vec /= 2;
  }
  Value pred = isLoad ? Value() : ownerPredicate(l);
  scf::IfOp guardIf;
  OpBuilder::InsertionGuard guard(b);
  if (pred) {
    guardIf = scf::IfOp::create(b, loc(), TypeRange{}, pred, false);
    b.setInsertionPoint(guardIf.thenBlock()->getTerminator());
  }
  // Each masked dim's one check of an element at constant offset c from
  // the thread's coordinate: (base + c) `pred` bound, or none. Where two or
  // three bounds bind, floor <= coord < limit and 0 <= coord < dim hold
  // together exactly when (coord - lo) <u max(hi - lo, 0), lo the floor (at
  // least 0 where the dim binds), hi the limit (at most the dim): one
  // 64-bit compare an element where there were up to three, lo and the span
  // computed once (base = coordBase - lo, then each element's offset).
  struct RangeCheck {
    Value base, bound;
    arith::CmpIPredicate pred = arith::CmpIPredicate::ult;
  };
  SmallVector<RangeCheck> rangeChecks(rank);
  if (masked) {
    for (unsigned td = 0; td < rank; ++td) {
      unsigned vd = keep[td];
      // A static dim the window provably stays inside needs no check.
      bool dim = !bounds.inside(vd, l.shape[td]), limit = bounds.limitBinds(vd),
           floor = bounds.floorBinds(vd);
      RangeCheck &rc = rangeChecks[td];
      rc.base = coordBase[td];
      if (dim + limit + floor < 2) { // a lone bound, or none
        if (dim) {
          rc.bound = vi.dims[vd];
        } else if (limit) {
          rc.bound = limits[vd];
          rc.pred = arith::CmpIPredicate::slt;
        } else if (floor) {
          rc.bound = floors[vd];
          rc.pred = arith::CmpIPredicate::sge;
        }
        continue;
      }
      Value lo = floor ? floors[vd] : cIndex(0), hi = limit ? limits[vd] : vi.dims[vd];
      if (dim && floor)
        lo = arith::MaxSIOp::create(b, loc(), lo, cIndex(0));
      if (dim && limit)
        hi = arith::MinSIOp::create(b, loc(), hi, vi.dims[vd]);
      rc.bound =
          arith::MaxSIOp::create(b, loc(), arith::SubIOp::create(b, loc(), hi, lo), cIndex(0));
      rc.base = arith::SubIOp::create(b, loc(), coordBase[td], lo);
    }
  }
  // Element e of a vector, as LLVM's insert and extract take it.
  auto position = [&](int64_t e) { return LLVM::ConstantOp::create(b, loc(), b.getI32Type(), e); };
  // `vectors`, where given, receives each vector load's value in register
  // order.
  auto accessAll = [&](int64_t vec, SmallVectorImpl<Value> *vectors = nullptr) {
    Regs result(l.numRegs());
    const Regs &values = isLoad ? result : regs[tile];
    for (int64_t r = 0; r < l.numRegs(); ++r) {
      SmallVector<int64_t, 2> ri = l.regIndex(r);
      if (ri[last] % vec != 0)
        continue; // inside a vector started earlier
      Value offset = base;
      Value inBounds;
      for (unsigned td = 0; td < rank; ++td) {
        int64_t c = l.constOffset(td, ri[td]);
        unsigned vd = keep[td];
        if (c != 0)
          offset = add(offset, mul(cIndex(c), vi.strides[vd]));
        if (masked) {
          const RangeCheck &rc = rangeChecks[td];
          if (rc.bound)
            inBounds = andOf(inBounds, arith::CmpIOp::create(b, loc(), rc.pred,
                                                             add(rc.base, cIndex(c)), rc.bound));
        }
      }
      Value ptr = gepFrom(origin, offset);
      if (vec > 1) {
        auto vecType = VectorType::get({vec}, elem);
        if (isLoad) {
          // f8e4m3 bytes load as 16-bit words, the pairs their conversions
          // take (bytePairWord): a vector of bytes would reach nvcc as a
          // byte array, which it splits into bytes and joins again.
          bool words = isa<Float8E4M3FNType>(tileType.getElementType()) && vec % 2 == 0;
          Type wordType = words ? b.getI16Type() : elem;
          auto loadType = words ? VectorType::get({vec / 2}, wordType) : vecType;
          Value v;
          if (inBounds) {
            auto ifOp = scf::IfOp::create(b, loc(), TypeRange{loadType}, inBounds, true);
            OpBuilder tb = ifOp.getThenBodyBuilder();
            scf::YieldOp::create(
                tb, loc(),
                ValueRange{LLVM::LoadOp::create(tb, loc(), loadType, ptr, vec * elemBytes, false,
                                                false, vi.readOnly)});
            OpBuilder eb = ifOp.getElseBodyBuilder();
            // A word of two fill bytes, as the signed 16-bit value of those bits.
            int64_t bits = words ? (int16_t)(((int64_t)other & 0xff) * 0x101) : (int64_t)other;
            Attribute fill = isa<FloatType>(elem) ? (Attribute)eb.getFloatAttr(elem, other)
                                                  : eb.getIntegerAttr(wordType, bits);
            scf::YieldOp::create(eb, loc(),
                                 ValueRange{LLVM::ConstantOp::create(
                                     eb, loc(), loadType, DenseElementsAttr::get(loadType, fill))});
            v = ifOp.getResult(0);
          } else {
            v = LLVM::LoadOp::create(b, loc(), loadType, ptr, vec * elemBytes, false, false,
                                     vi.readOnly);
          }
          if (words)
            v = LLVM::BitcastOp::create(b, loc(), vecType, v);
          if (vectors)
            vectors->push_back(v);
          for (int64_t e = 0; e < vec; ++e)
            result[r + e] = LLVM::ExtractElementOp::create(b, loc(), v, position(e));
        } else {
          OpBuilder::InsertionGuard storeGuard(b);
          if (inBounds) {
            auto ifOp = scf::IfOp::create(b, loc(), TypeRange{}, inBounds, false);
            b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
          }
          Value v = elem.isInteger(8)
                        ? bytesFromPairs(b, loc(), ArrayRef<Value>(values).slice(r, vec))
                        : Value();
          if (!v)
            v = wholeVector(ArrayRef<Value>(values).slice(r, vec), vecType);
          if (!v) {
            v = LLVM::PoisonOp::create(b, loc(), vecType);
            for (int64_t e = 0; e < vec; ++e)
              v = LLVM::InsertElementOp::create(b, loc(), v, values[r + e], position(e));
          }
          LLVM::StoreOp::create(b, loc(), v, ptr, vec * elemBytes);
        }
        continue;
      }
      if (isLoad) {
        if (inBounds) {
          auto ifOp = scf::IfOp::create(b, loc(), TypeRange{elem}, inBounds, true);
          OpBuilder tb = ifOp.getThenBodyBuilder();
          Value v =
              LLVM::LoadOp::create(tb, loc(), elem, ptr, elemBytes, false, false, vi.readOnly);
          scf::YieldOp::create(tb, loc(), ValueRange{v});
          OpBuilder eb = ifOp.getElseBodyBuilder();
          scf::YieldOp::create(eb, loc(), ValueRange{scalarConstant(eb, loc(), elem, other)});
          result[r] = ifOp.getResult(0);
        } else {
          result[r] =
              LLVM::LoadOp::create(b, loc(), elem, ptr, elemBytes, false, false, vi.readOnly);
        }
      } else if (inBounds) {
        auto ifOp = scf::IfOp::create(b, loc(), TypeRange{}, inBounds, false);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        LLVM::StoreOp::create(tb, loc(), values[r], ptr, elemBytes);
      } else {
        LLVM::StoreOp::create(b, loc(), values[r], ptr, elemBytes);
      }
    }
    return result;
  };
  if (!dynamicInner || vec == 1) {
    Regs result = accessAll(vec);
    if (isLoad)
      regs[tile] = result;
    return success();
  }
  // A load's two branches merge whole vectors: the fast one's loads as
  // they came, the other's elements joined into vectors, of 32-bit words
  // where the elements are narrower. Merged element by element (or as a
  // vector of 16-bit elements), nvcc took every element of the fast path's
  // loaded words apart and joined them again; LLVM folds any form.
  Value whole = eq(arith::RemUIOp::create(b, loc(), vi.dims.back(), cIndex(vec)), 0);
  auto vecType = VectorType::get({vec}, elem);
  unsigned bits = elem.getIntOrFloatBitWidth();
  bool inWords = bits < 32 && vec * bits % 32 == 0;
  Type word = b.getI32Type();
  auto mergeType = inWords ? VectorType::get({vec * bits / 32}, word) : vecType;
  SmallVector<int64_t> vectorStarts;
  for (int64_t r = 0; r < l.numRegs(); ++r)
    if (l.regIndex(r)[last] % vec == 0)
      vectorStarts.push_back(r);
  auto split = scf::IfOp::create(
      b, loc(), isLoad ? SmallVector<Type>(vectorStarts.size(), mergeType) : SmallVector<Type>(),
      whole, true);
  // Elements [first, first + 32 / bits) of `elems` as one word, the first
  // in its low bits.
  auto wordOf = [&](ArrayRef<Value> elems) {
    Value w;
    Type same = b.getIntegerType(bits);
    for (auto [k, x] : llvm::enumerate(elems)) {
      Value part = arith::ExtUIOp::create(
          b, loc(), word, isa<IntegerType>(elem) ? x : arith::BitcastOp::create(b, loc(), same, x));
      if (k)
        part = arith::ShLIOp::create(
            b, loc(), part, arith::ConstantIntOp::create(b, loc(), (int64_t)(k * bits), 32));
      w = w ? arith::OrIOp::create(b, loc(), w, part) : part;
    }
    return w;
  };
  for (auto [block, width] : {std::pair{split.thenBlock(), vec}, {split.elseBlock(), int64_t(1)}}) {
    OpBuilder::InsertionGuard branch(b);
    if (block->mightHaveTerminator())
      block->getTerminator()->erase();
    b.setInsertionPointToEnd(block);
    SmallVector<Value> vectors;
    Regs result = accessAll(width, &vectors);
    if (isLoad && width == 1) {
      int64_t perWord = inWords ? 32 / bits : 1;
      for (int64_t r : vectorStarts) {
        Value v = LLVM::PoisonOp::create(b, loc(), mergeType);
        for (int64_t e = 0; e < vec; e += perWord) {
          ArrayRef<Value> elems = ArrayRef<Value>(result).slice(r + e, perWord);
          v = LLVM::InsertElementOp::create(b, loc(), v, inWords ? wordOf(elems) : elems[0],
                                            position(e / perWord));
        }
        vectors.push_back(v);
      }
    } else if (isLoad && inWords) {
      for (Value &v : vectors)
        v = LLVM::BitcastOp::create(b, loc(), mergeType, v);
    }
    scf::YieldOp::create(b, loc(), isLoad ? ValueRange(vectors) : ValueRange());
  }
  if (isLoad) {
    Regs &result = regs[tile];
    result.assign(l.numRegs(), Value());
    for (auto [merged, r] : llvm::zip_equal(split.getResults(), vectorStarts)) {
      Value v = merged;
      if (inWords)
        v = LLVM::BitcastOp::create(b, loc(), vecType, v);
      for (int64_t e = 0; e < vec; ++e)
        result[r + e] = LLVM::ExtractElementOp::create(b, loc(), v, position(e));
    }
  }
  return success();
}

} // namespace kiln::nvvm
