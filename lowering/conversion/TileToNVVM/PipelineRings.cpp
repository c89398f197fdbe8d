//===- PipelineRings.cpp - TMA rings in a GPU kernel ----------------------===//
//
// The pipelines of convert-tile-to-nvvm: loads carried by a TMA ring
// (the issuing role waits for a free stage, arrives with the expected
// bytes and copies; readers wait for the full stage, read and give it
// back), stores handed to a copying role through a store ring, and tiles
// one computing role hands to others through a shared ring.
//
//===----------------------------------------------------------------------===//
#include "lowering/conversion/TileToNVVM/GpuKernelLowering.h"

using namespace mlir;
using namespace kiln::tile;

namespace kiln::nvvm {

Value GpuKernelLowering::ringStage(const RingStages &ring, Value stage, int64_t bytes) {
  return smemAt(add(cIndex(ring.offset + bytes), mul(stage, cIndex(ring.stageStride))));
}

Value GpuKernelLowering::ringBarrier(const RingStages &ring, Value index) {
  return smemAt(add(cIndex(ring.barrierOffset), mul(index, cIndex(8))));
}

std::pair<Value, Value> GpuKernelLowering::ringPosition(const RingStages &ring, Value counter) {
  Value n = LLVM::LoadOp::create(b, loc(), b.getI32Type(), counter);
  Value nIdx = arith::IndexCastUIOp::create(b, loc(), b.getIndexType(), n);
  Value stage = arith::RemUIOp::create(b, loc(), nIdx, cIndex(ring.depth));
  Value round = arith::DivUIOp::create(b, loc(), n, cI32(ring.depth));
  Value parity = arith::AndIOp::create(b, loc(), round, cI32(1));
  return {stage, parity};
}

void GpuKernelLowering::bumpCounter(Value counter) {
  Value n = LLVM::LoadOp::create(b, loc(), b.getI32Type(), counter);
  LLVM::StoreOp::create(b, loc(), arith::AddIOp::create(b, loc(), n, cI32(1)), counter);
}

void GpuKernelLowering::waitBarrier(Value barrier, Value parity) {
  NVVM::MBarrierTryWaitParityOp::create(b, loc(), barrier, parity, cI32(0x989680));
}

LogicalResult GpuKernelLowering::lowerRingLoad(const RingPlan &ring, LoadOp load) {
  unsigned index = &ring - plan.rings.data();
  TileType tileType = load.getResult().getType();
  if (ring.issuer == role) {
    // One thread issues: the role's only thread when it just copies.
    OpBuilder::InsertionGuard guard(b);
    if (!plan.roles[role].copyOnly)
      enterLeaderOnly();
    auto [stage, parity] = ringPosition(ring, issued[index]);
    // The readers released this stage (a fresh barrier passes parity 1).
    waitBarrier(emptyBarrier(ring, stage), arith::XOrIOp::create(b, loc(), parity, cI32(1)));
    // The group's first load arrives expecting every buffer's bytes: the
    // stage is full once all of its copies have landed.
    Value full = ringBarrier(plan.rings[ring.leader], stage);
    if (ring.leader == index)
      NVVM::MBarrierArriveExpectTxOp::create(b, loc(), Type(), full, cI32(ring.groupBytes),
                                             NVVM::MemScopeKind::CTA, false, Value());
    // Coordinates innermost first, as the tensor map lists its dims. A
    // tensor-core operand comes as one box per K block (the swizzle's row).
    SmallVector<Value> coords;
    for (Value i : llvm::reverse(load.getIndices()))
      coords.push_back(arith::IndexCastOp::create(b, loc(), b.getI32Type(), map.lookup(i)));
    Value inner = coords.front();
    for (int64_t block = 0; block < ring.kBlocks; ++block) {
      coords.front() = arith::AddIOp::create(b, loc(), inner, cI32(block * ring.box.back()));
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc(), ringStage(ring, stage, block * ring.kBlockStride), tensorMaps[index], coords,
          full, ValueRange{}, Value(), Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/true,
          NVVM::CTAGroupKindAttr(), Value());
    }
    bumpCounter(issued[index]);
  }
  // An issuer also reads the stages of tensor-core operands in place, after
  // their copies land; it reads nothing else, and frees nothing (the served
  // role releases them).
  if (!plan.readsRing(ring, role))
    return success();
  auto [stage, parity] = ringPosition(ring, consumed[index]);
  if (ring.waitsFull[role])
    waitBarrier(ringBarrier(plan.rings[ring.leader], stage), parity);
  if (ring.mmaOperand()) {
    // Its product reads the stage in place and releases it.
    if (ring.cutsRows)
      zeroRowsPastLimit(ring, stage, load);
    ringOperands[load.getResult()] = {&ring, stage, ringStage(ring, stage)};
    bumpCounter(consumed[index]);
    return success();
  }
  if (ring.threadSwizzled) {
    readSwizzledStage(ring, ringStage(ring, stage), load.getResult());
    releaseReadStage(ring, stage, load->getBlock());
    bumpCounter(consumed[index]);
    return success();
  }
  // The stage holds the box row-major: the tile, dense.
  ViewInfo stageView = denseStage(ringStage(ring, stage), tileType);
  SmallVector<Value> zeros(tileType.getRank(), cIndex(0));
  SmallVector<int64_t> keep = llvm::to_vector(llvm::seq<int64_t>(0, tileType.getRank()));
  // The box came whole from inside the tensor (zeros outside it): limits
  // tighter than the view's dims cut it again, in stage coordinates.
  SmallVector<Value> stageLimits;
  bool cut = false;
  if (load.getMasked() && !load.getLimits().empty()) {
    auto viewType = cast<ViewType>(load.getView().getType());
    for (auto [td, vd] : llvm::enumerate(load.getKeep())) {
      if (isViewEnd(load.getLimits()[vd], viewType, vd, kernel)) {
        stageLimits.push_back(cIndex(tileType.getShape()[td]));
        continue;
      }
      stageLimits.push_back(arith::SubIOp::create(b, loc(), map.lookup(load.getLimits()[vd]),
                                                  map.lookup(load.getIndices()[vd])));
      cut = true;
    }
    // A dim the load drops (a window of 1) past a sub-view's end: the copy
    // brought the tensor's row there, and the masked load reads zeros.
    Value inside;
    for (unsigned vd = 0; vd < viewType.getRank(); ++vd)
      if (!llvm::is_contained(load.getKeep(), vd) &&
          !isViewEnd(load.getLimits()[vd], viewType, vd, kernel))
        inside = andOf(inside, arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt,
                                                     map.lookup(load.getIndices()[vd]),
                                                     map.lookup(load.getLimits()[vd])));
    if (inside) {
      for (Value &limit : stageLimits)
        limit = arith::SelectOp::create(b, loc(), inside, limit, cIndex(0));
      cut = true;
    }
  }
  if (!cut)
    stageLimits.clear();
  if (failed(
          lowerAccess(stageView, zeros, {}, stageLimits, keep, cut, load.getResult(), true, 0.0)))
    return failure();
  releaseReadStage(ring, stage, load->getBlock());
  bumpCounter(consumed[index]);
  return success();
}

void GpuKernelLowering::zeroRowsPastLimit(const RingPlan &ring, Value stage, LoadOp load) {
  // The rows of the window inside the limit; the rest came whole from the
  // tensor (the next sequence's tokens, say). Only a window crossing the
  // limit pays, a uniform branch for the role.
  int64_t rows = load.getResult().getType().getShape()[0];
  int64_t vd = load.getKeep()[0];
  Value inside = arith::SubIOp::create(b, loc(), map.lookup(load.getLimits()[vd]),
                                       map.lookup(load.getIndices()[vd]));
  OpBuilder::InsertionGuard guard(b);
  enterIf(arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::slt, inside, cIndex(rows)));
  Value from = arith::MaxSIOp::create(b, loc(), inside, cIndex(0));
  // A row is one line of swizzleBytes in each K block (or N block, read
  // N-major): the swizzle moves 16-byte pieces only within their line, so
  // zeroing whole lines needs no swizzled address. The role's threads take
  // the pieces in turn.
  int64_t pieces = ring.swizzleBytes / 16, perBlock = rows * pieces;
  int64_t total = perBlock * ring.kBlocks, threads = plan.roles[role].numWarps * 32;
  Value me = add(mul(warp, cIndex(32)), lane);
  Value zero = vectorOf(SmallVector<Value>(4, cI32(0)));
  Value stageStart = add(cIndex(ring.offset), mul(stage, cIndex(ring.stageStride)));
  for (int64_t first = 0; first < total; first += threads) {
    OpBuilder::InsertionGuard each(b);
    Value piece = add(me, cIndex(first));
    Value block = arith::DivUIOp::create(b, loc(), piece, cIndex(perBlock));
    Value line = arith::RemUIOp::create(b, loc(), piece, cIndex(perBlock));
    Value row = arith::DivUIOp::create(b, loc(), line, cIndex(pieces));
    Value past = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::uge, row, from);
    enterIf(andOf(first + threads > total ? below(piece, total) : Value(), past));
    Value at =
        add(stageStart,
            add(mul(block, cIndex(ring.kBlockStride)),
                add(mul(row, cIndex(ring.swizzleBytes)),
                    mul(arith::RemUIOp::create(b, loc(), line, cIndex(pieces)), cIndex(16)))));
    LLVM::StoreOp::create(b, loc(), zero, smemAt(at), 16);
  }
  // The tensor cores read through the async proxy, after every thread's
  // stores.
  fenceAsyncProxy();
  syncRole();
}

void GpuKernelLowering::releaseReadStage(const RingPlan &ring, Value stage, Block *block) {
  releasesPending.push_back({block, emptyBarrier(ring, stage)});
}

void GpuKernelLowering::flushReleases(Block *block) {
  // The next copy into a stage writes it through the async proxy: an
  // arrive alone orders this thread's shared loads before it only in the
  // generic proxy, and a load still in flight may then read the next
  // copy's data (gdn_prefill_cp_correct, whose loaded values wait for a
  // product before their first use, read them so on an H100 now and then).
  // One fence serves every stage the block read.
  auto mine = [&](const std::pair<Block *, Value> &r) { return r.first == block; };
  if (llvm::none_of(releasesPending, mine))
    return;
  fenceAsyncProxy();
  for (auto &[at, empty] : releasesPending)
    if (at == block)
      NVVM::MBarrierArriveOp::create(b, loc(), Type(), empty, Value());
  llvm::erase_if(releasesPending, mine);
}

void GpuKernelLowering::readSwizzledStage(const RingPlan &ring, Value stage, Value tile) {
  auto tileType = cast<TileType>(tile.getType());
  Type elem = memoryType(tileType.getElementType());
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
  TileLayout l = layoutOf(tile);
  unsigned last = l.shape.size() - 1;
  if (elemBytes == 2)
    if (std::optional<MatrixReads> reads = matrixReads(l))
      return readStageMatrices(ring, stage, tile, l, *reads);
  // Vectors as a dense stage is read: a swizzle moves whole 16-byte pieces,
  // so none is split.
  int64_t vec = stageReadVector(l, elemBytes);
  SmallVector<Value> bases;
  for (unsigned d = 0; d <= last; ++d)
    bases.push_back(threadBase(l, d));
  Regs result(l.numRegs());
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    if (l.regIndex(r)[last] % vec)
      continue;
    SmallVector<Value> c = regCoords(l, bases, r);
    Value row = c[0];
    for (unsigned d = 1; d < last; ++d)
      row = add(mul(row, cIndex(l.shape[d])), c[d]);
    Value ptr = swizzledElement(ring, stage, row, c[last], elemBytes);
    if (vec == 1) {
      result[r] = LLVM::LoadOp::create(b, loc(), elem, ptr, elemBytes);
      continue;
    }
    auto vecType = VectorType::get({vec}, elem);
    Value v = LLVM::LoadOp::create(b, loc(), vecType, ptr, vec * elemBytes);
    for (int64_t e = 0; e < vec; ++e)
      result[r + e] = LLVM::ExtractElementOp::create(
          b, loc(), v, LLVM::ConstantOp::create(b, loc(), b.getI32Type(), e));
  }
  if (elem != tileType.getElementType()) // f8e4m3's bytes
    for (Value &v : result)
      v = arith::BitcastOp::create(b, loc(), tileType.getElementType(), v);
  regs[tile] = result;
}

Value GpuKernelLowering::swizzledElement(const RingPlan &ring, Value stage, Value row, Value col,
                                         int64_t elemBytes) {
  int64_t boxElems = ring.swizzleBytes / elemBytes;
  Value box = arith::DivUIOp::create(b, loc(), col, cIndex(boxElems));
  Value inRow = mul(arith::RemUIOp::create(b, loc(), col, cIndex(boxElems)), cIndex(elemBytes));
  Value piece =
      arith::ShLIOp::create(b, loc(), arith::RemUIOp::create(b, loc(), row, cIndex(8)), cIndex(4));
  Value byte = add(add(mul(box, cIndex(ring.kBlockStride)), mul(row, cIndex(ring.swizzleBytes))),
                   arith::XOrIOp::create(b, loc(), inRow, piece));
  return LLVM::GEPOp::create(
      b, loc(), stage.getType(), b.getI8Type(), stage,
      ValueRange{arith::IndexCastOp::create(b, loc(), b.getI64Type(), byte)});
}

void GpuKernelLowering::readStageMatrices(const RingPlan &ring, Value stage, Value tile,
                                          const TileLayout &l, const MatrixReads &reads) {
  Type elem = cast<TileType>(tile.getType()).getElementType();
  // Lane L of an instruction gives the address of row L % 8 of its matrix
  // L / 8. A matrix's first element is, for every thread of a warp, where
  // lane 0 holds it: the thread's own coordinate of that register less its
  // lane's place in the matrix (matrixReads), plus the register's constant
  // part. Only the constant part differs between matrices.
  Value lane4 = arith::RemUIOp::create(b, loc(), lane, cIndex(4));
  Value pair = mul(lane4, cIndex(2));
  Value quad = arith::DivUIOp::create(b, loc(), lane, cIndex(4));
  SmallVector<Value> bases = threadBases(l);
  Value warpRow = arith::SubIOp::create(b, loc(), bases[0], reads.transposed ? pair : quad);
  Value warpCol = arith::SubIOp::create(b, loc(), bases[1], reads.transposed ? quad : pair);
  Value rowInMatrix = arith::RemUIOp::create(b, loc(), lane, cIndex(8));
  Value which = arith::DivUIOp::create(b, loc(), lane, cIndex(8));
  auto offset = [&](unsigned d, int64_t r) { return l.constOffset(d, l.regIndex(r)[d]); };
  // The constant of this lane's matrix: a select over the instruction's.
  auto pick = [&](ArrayRef<int64_t> values) {
    Value v = cIndex(values[0]);
    for (unsigned m = 1; m < values.size(); ++m)
      if (values[m] != values[0])
        v = arith::SelectOp::create(b, loc(), eq(which, m), cIndex(values[m]), v);
    return v;
  };
  Regs result(l.numRegs());
  int64_t count = reads.pairs.size();
  for (int64_t first = 0; first < count;) {
    int64_t num = count - first >= 4 ? 4 : count - first >= 2 ? 2 : 1;
    SmallVector<int64_t, 4> rows, cols;
    // Lanes past the instruction's matrices give addresses it ignores:
    // they repeat its last matrix's.
    for (int64_t m = 0; m < 4; ++m) {
      int64_t r = reads.pairs[first + std::min(m, num - 1)].first;
      rows.push_back(offset(0, r));
      cols.push_back(offset(1, r));
    }
    Value row = add(add(warpRow, pick(rows)), rowInMatrix);
    Value col = add(warpCol, pick(cols));
    Value ptr = swizzledElement(ring, stage, row, col, 2);
    Type i32 = b.getI32Type();
    Type resultType =
        num == 1 ? i32
                 : LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(num, i32));
    Value loaded = NVVM::LdMatrixOp::create(
        b, loc(), resultType, ptr, num,
        reads.transposed ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8), NVVM::LdStMatrixEltType::B16);
    auto pairType = VectorType::get({2}, elem);
    for (int64_t m = 0; m < num; ++m) {
      Value word = num == 1 ? loaded : LLVM::ExtractValueOp::create(b, loc(), loaded, m);
      Value two = LLVM::BitcastOp::create(b, loc(), pairType, word);
      auto [lo, hi] = reads.pairs[first + m];
      result[lo] = LLVM::ExtractElementOp::create(b, loc(), two, cI32(0));
      result[hi] = LLVM::ExtractElementOp::create(b, loc(), two, cI32(1));
    }
    first += num;
  }
  regs[tile] = result;
}

ViewInfo GpuKernelLowering::denseStage(Value base, TileType tile) {
  ViewInfo v;
  v.ptr = base;
  v.type = ViewType::get(b.getContext(), tile.getShape(), {}, tile.getElementType());
  int64_t stride = 1;
  v.strides.resize(tile.getRank());
  for (int64_t d = tile.getRank() - 1; d >= 0; --d) {
    v.dims.insert(v.dims.begin(), cIndex(tile.getShape()[d]));
    v.strides[d] = cIndex(stride);
    stride *= tile.getShape()[d];
  }
  return v;
}

LogicalResult GpuKernelLowering::lowerRingStore(const StoreRingPlan &ring, StoreOp store) {
  unsigned index = &ring - plan.storeRings.data();
  if (ring.writer == role) {
    auto [stage, parity] = ringPosition(ring, stagesWritten[index]);
    // The copies have read this stage (a fresh barrier passes parity 1).
    waitBarrier(emptyBarrier(ring, stage), arith::XOrIOp::create(b, loc(), parity, cI32(1)));
    if (failed(accessDenseStage(ringStage(ring, stage), store.getValue(), /*isLoad=*/false)))
      return failure();
    // The bulk copies read the stage through the async proxy.
    fenceAsyncProxy();
    NVVM::MBarrierArriveOp::create(b, loc(), Type(), ringBarrier(ring, stage), Value());
    bumpCounter(stagesWritten[index]);
    return success();
  }
  // The copier: its role's one thread.
  auto [stage, parity] = ringPosition(ring, stagesCopied[index]);
  waitBarrier(ringBarrier(ring, stage), parity);
  copyStageOut(store, ringStage(ring, stage));
  // A stage is free once its copies have read it. Waiting for all but the
  // last depth - 1 groups frees the stage the writer needs next while this
  // one's copies still run.
  NVVM::CpAsyncBulkCommitGroupOp::create(b, loc());
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc(), ring.depth - 1, b.getUnitAttr());
  Value n = arith::IndexCastUIOp::create(
      b, loc(), b.getIndexType(),
      LLVM::LoadOp::create(b, loc(), b.getI32Type(), stagesCopied[index]));
  {
    OpBuilder::InsertionGuard guard(b);
    int64_t behind = ring.depth - 1;
    if (behind)
      enterIf(arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::uge, n, cIndex(behind)));
    Value freed = arith::RemUIOp::create(
        b, loc(), arith::SubIOp::create(b, loc(), n, cIndex(behind)), cIndex(ring.depth));
    NVVM::MBarrierArriveOp::create(b, loc(), Type(), emptyBarrier(ring, freed), Value());
  }
  bumpCounter(stagesCopied[index]);
  return success();
}

LogicalResult GpuKernelLowering::accessDenseStage(Value base, Value tile, bool isLoad) {
  auto tileType = cast<TileType>(tile.getType());
  if (tileType.getRank() == 0) {
    // Every thread holds a scalar: all read it, one writes it.
    Type elem = tileType.getElementType();
    unsigned bytes = std::max(1u, elem.getIntOrFloatBitWidth() / 8);
    if (isLoad) {
      regs[tile] = {LLVM::LoadOp::create(b, loc(), elem, base, bytes)};
      return success();
    }
    OpBuilder::InsertionGuard guard(b);
    enterLeaderOnly();
    LLVM::StoreOp::create(b, loc(), regs[tile][0], base, bytes);
    return success();
  }
  SmallVector<Value> zeros(tileType.getRank(), cIndex(0));
  SmallVector<int64_t> keep = llvm::to_vector(llvm::seq<int64_t>(0, tileType.getRank()));
  return lowerAccess(denseStage(base, tileType), zeros, {}, {}, keep, /*masked=*/false, tile,
                     isLoad, 0.0);
}

LogicalResult GpuKernelLowering::passSharedBuffer(const SharedRingPlan &ring, Operation *op) {
  unsigned index = &ring - plan.sharedRings.data();
  int i = ring.indexOf(op);
  bool writes = ring.writer == role;
  if (i == ring.first(role)) {
    auto [stage, parity] = ringPosition(ring, sharedPassed[index]);
    // The writer waits for a stage the readers released (a fresh barrier
    // passes parity 1), a reader for one the writer filled.
    if (writes)
      waitBarrier(emptyBarrier(ring, stage), arith::XOrIOp::create(b, loc(), parity, cI32(1)));
    else
      waitBarrier(ringBarrier(ring, stage), parity);
    sharedStage[index] = stage;
  }
  Value stage = sharedStage[index];
  if (failed(accessDenseStage(ringStage(ring, stage, ring.bufferOffsets[i]), op->getResult(0),
                              /*isLoad=*/!writes)))
    return failure();
  if (i != ring.last(role))
    return success();
  // Every thread arrives after its own accesses (a release), and the other
  // side's wait acquires them: the readers see the whole stage, and the
  // writer's next stores to it come after their loads.
  NVVM::MBarrierArriveOp::create(
      b, loc(), Type(), writes ? ringBarrier(ring, stage) : emptyBarrier(ring, stage), Value());
  bumpCounter(sharedPassed[index]);
  return success();
}

void GpuKernelLowering::copyStageOut(StoreOp store, Value stageBase) {
  const ViewInfo &vi = views[store.getView()];
  TileType tileType = store.getValue().getType();
  Type elem = tileType.getElementType();
  int64_t elemBytes = std::max(1u, elem.getIntOrFloatBitWidth() / 8);
  ArrayRef<int64_t> shape = tileType.getShape(), keep = store.getKeep();
  unsigned last = shape.size() - 1, inner = keep[last];
  int64_t width = shape[last];
  SmallVector<Value> starts = mapped(store.getIndices()), floors = mapped(store.getFloors()),
                     limits = mapped(store.getLimits());
  bool masked = store.getMasked();
  WindowBounds bounds{vi, starts, floors, limits};
  // The elements [lo, hi) of tile dim td the store keeps (the same checks
  // as an element's in lowerAccess), and whether they may be fewer than all.
  auto kept = [&](unsigned td, Value &lo, Value &hi) {
    unsigned vd = keep[td];
    Value start = starts[vd];
    lo = cIndex(0);
    hi = cIndex(shape[td]);
    if (!masked)
      return false;
    bool cut = false;
    auto bound = [&](Value end) {
      hi = arith::MinSIOp::create(b, loc(), hi, arith::SubIOp::create(b, loc(), end, start));
      cut = true;
    };
    if (!bounds.inside(vd, shape[td]))
      bound(vi.dims[vd]);
    if (bounds.limitBinds(vd))
      bound(limits[vd]);
    // Nothing before the sub-view's floor, or before the view's start
    // (lowerAccess's unsigned test) unless the start is known not negative.
    std::optional<int64_t> s = WindowBounds::constant(start);
    if (bounds.floorBinds(vd) || !s || *s < 0) {
      Value floor = bounds.floorBinds(vd) ? floors[vd] : cIndex(0);
      lo = arith::MaxSIOp::create(b, loc(), lo, arith::SubIOp::create(b, loc(), floor, start));
      cut = true;
    }
    return cut;
  };
  Value innerLo, innerHi;
  bool cut = kept(last, innerLo, innerHi);
  // Rows start 16-byte aligned when the view's rows are a multiple of 16
  // bytes (views are 16-byte aligned) and so is the window's start in a row.
  int64_t innermost = vi.type.getShape().back();
  bool alignedRows = !ShapedType::isDynamic(innermost) && innermost * elemBytes % 16 == 0 &&
                     knownMultipleOf(starts[inner], std::max<int64_t>(1, 16 / elemBytes));
  Value whole;
  if (cut)
    whole =
        andOf(arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, innerLo, cIndex(0)),
              arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, innerHi, cIndex(width)));
  // The view offset of the tile's first element, before the loops.
  Value base = cIndex(0);
  for (unsigned vd = 0; vd < starts.size(); ++vd)
    base = add(base, mul(starts[vd], vi.strides[vd]));
  Type i64 = b.getI64Type();
  auto global = [&](Value elemOffset) {
    return LLVM::GEPOp::create(b, loc(), vi.ptr.getType(), elem, vi.ptr,
                               ValueRange{arith::IndexCastOp::create(b, loc(), i64, elemOffset)});
  };
  // One loop per leading tile dim, over the rows the store keeps; `body`
  // copies one row from its stage row and view offset.
  auto eachRow = [&](llvm::function_ref<void(Value rowStage, Value offset)> body) {
    OpBuilder::InsertionGuard guard(b);
    Value offset = base, stageRow = cIndex(0);
    SmallVector<int64_t> stageStrides(shape.size(), width);
    for (int64_t td = (int64_t)last - 2; td >= 0; --td)
      stageStrides[td] = stageStrides[td + 1] * shape[td + 1];
    // Each loop carries its row's view offset and adds the stride a row:
    // the strength reduction LLVM does in the PTX build; nvcc, compiling
    // the CUDA build, redid the whole sum and its 64-bit products a row.
    for (int64_t td = 0; td < (int64_t)last; ++td) {
      Value lo, hi;
      kept(td, lo, hi);
      Value stride = vi.strides[keep[td]];
      auto rows =
          scf::ForOp::create(b, loc(), lo, hi, cIndex(1), ValueRange{add(offset, mul(lo, stride))});
      rows->setAttr(tile::kRolledLoopAttr, b.getUnitAttr());
      b.setInsertionPointToEnd(rows.getBody());
      offset = rows.getRegionIterArgs()[0];
      auto yield = scf::YieldOp::create(b, loc(), ValueRange{add(offset, stride)});
      b.setInsertionPoint(yield);
      stageRow = add(stageRow, mul(rows.getInductionVar(), cIndex(stageStrides[td])));
    }
    body(sharedElem(stageBase, elem, stageRow), offset);
  };
  // One bulk copy for a whole row at a 16-byte aligned address; plain
  // stores for the rest of a cut or misaligned row.
  auto copyRow = [&](Value rowStage, Value rowGlobal) {
    NVVM::CpAsyncBulkSharedCTAToGlobalOp::create(b, loc(), rowGlobal, rowStage,
                                                 cI32(width * elemBytes), Value(), Value());
  };
  auto copyEachRow = [&](Value rowStage, Value offset) { copyRow(rowStage, global(offset)); };
  auto storeElems = [&](Value rowStage, Value offset) {
    auto elems = scf::ForOp::create(b, loc(), innerLo, innerHi, cIndex(1));
    elems->setAttr(tile::kRolledLoopAttr, b.getUnitAttr());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(elems.getBody()->getTerminator());
    Value j = elems.getInductionVar();
    Value v = LLVM::LoadOp::create(b, loc(), elem, sharedElem(rowStage, elem, j), elemBytes);
    LLVM::StoreOp::create(b, loc(), v, global(add(offset, mul(j, vi.strides[inner]))), elemBytes);
  };
  if (alignedRows) {
    if (!whole)
      return eachRow(copyEachRow);
    // Whether rows are whole is the same for every row: test it once,
    // outside the loops.
    auto bulk = scf::IfOp::create(b, loc(), TypeRange{}, whole, /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(bulk.thenBlock()->getTerminator());
    eachRow(copyEachRow);
    b.setInsertionPoint(bulk.elseBlock()->getTerminator());
    eachRow(storeElems);
    return;
  }
  // A misaligned row's alignment depends on the row: test each.
  eachRow([&](Value rowStage, Value offset) {
    Value rowGlobal = global(offset);
    Value aligned = arith::CmpIOp::create(
        b, loc(), arith::CmpIPredicate::eq,
        arith::AndIOp::create(b, loc(), LLVM::PtrToIntOp::create(b, loc(), i64, rowGlobal),
                              arith::ConstantIntOp::create(b, loc(), 15, 64)),
        arith::ConstantIntOp::create(b, loc(), 0, 64));
    auto bulk = scf::IfOp::create(b, loc(), TypeRange{}, whole ? andOf(whole, aligned) : aligned,
                                  /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(bulk.thenBlock()->getTerminator());
    copyRow(rowStage, rowGlobal);
    b.setInsertionPoint(bulk.elseBlock()->getTerminator());
    storeElems(rowStage, offset);
  });
}

} // namespace kiln::nvvm
