//===- TensorCoreProducts.cpp - dot in a GPU kernel -----------------------===//
//
// tile.dot in convert-tile-to-nvvm: on CUDA cores (operands staged
// row-major, FMAs per result element) or on tensor cores (MmaTiling's
// plan: operands staged K-major or N-major, wgmma issued by each
// warpgroup or tcgen05 by one thread, results read back or kept in
// registers; pairs of products; states kept resident in accumulator
// registers or tensor memory; products handed to an issuing role).
//
//===----------------------------------------------------------------------===//
#include "lowering/conversion/TileToNVVM/GpuKernelLowering.h"

#include <numeric>

using namespace mlir;
using namespace kiln::tile;

namespace kiln::nvvm {

LogicalResult GpuKernelLowering::lowerDot(DotOp op) {
  StringRef mma = schedule.getMma();
  if (std::optional<MmaTiling::Kind> kind = MmaTiling::kindOf(mma))
    return lowerTensorCoreDot(op, *kind);
  if (WarpMmaTiling::named(mma))
    return lowerWarpMmaDot(op);
  if (mma != "none" && mma != "simt")
    return op.emitOpError("needs the schedule's matrix instruction '")
           << mma << "', which is not lowered yet; 'mma: simt' lowers dot on CUDA cores";
  // The SIMT product: both operands staged row-major in shared memory, each
  // thread accumulates its own result elements over the inner dim.
  auto lhsType = op.getLhs().getType(), rhsType = op.getRhs().getType();
  int64_t K = lhsType.getShape()[1], N = rhsType.getShape()[1];
  int64_t lhsBytes =
      lhsType.getNumElements() * lhsType.getElementType().getIntOrFloatBitWidth() / 8;
  Value aBase = stagingBase(), bBase = stagingBase(llvm::alignTo(lhsBytes, 16));
  stageOut(op.getLhs(), aBase);
  stageOut(op.getRhs(), bBase);
  syncRole();
  TileLayout l = layoutOf(op.getResult());
  Type f32 = b.getF32Type();
  Value row = threadBase(l, 0), col = threadBase(l, 1);
  Regs init(l.numRegs());
  for (int64_t r = 0; r < l.numRegs(); ++r)
    init[r] = op.getAcc() ? regs[op.getAcc()][r] : scalarConstant(b, loc(), f32, 0.0);
  auto loop = scf::ForOp::create(b, loc(), cIndex(0), cIndex(K), cIndex(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k = loop.getInductionVar();
    auto operand = [&](Value base, Type elem, Value linear) -> Value {
      return scalarCast(b, loc(),
                        LLVM::LoadOp::create(b, loc(), elem, sharedElem(base, elem, linear)), f32);
    };
    // One load per distinct row of A and column of B this thread touches.
    DenseMap<int64_t, Value> aRows, bCols;
    Regs next(l.numRegs());
    for (int64_t r = 0; r < l.numRegs(); ++r) {
      SmallVector<int64_t, 2> ri = l.regIndex(r);
      int64_t i = l.constOffset(0, ri[0]), j = l.constOffset(1, ri[1]);
      Value &a = aRows[i];
      if (!a)
        a = operand(aBase, lhsType.getElementType(), add(mul(add(row, cIndex(i)), cIndex(K)), k));
      Value &bv = bCols[j];
      if (!bv)
        bv = operand(bBase, rhsType.getElementType(), add(mul(k, cIndex(N)), add(col, cIndex(j))));
      next[r] = LLVM::FMAOp::create(b, loc(), a, bv, loop.getRegionIterArgs()[r]);
    }
    scf::YieldOp::create(b, loc(), next);
  }
  regs[op.getResult()] = Regs(loop.getResults().begin(), loop.getResults().end());
  syncRole();
  return success();
}

GpuKernelLowering::StagedOperand GpuKernelLowering::stagedOperand(Value operand, bool isLhs,
                                                                  const MmaTiling &t, bool nMajor) {
  // A transpose folded into the dot is staged from its input.
  auto [tile, transposed] = stagedTile(operand);
  StagedOperand o{tile, false, nMajor, {}, 1, {}, {}};
  // So is a slice, as its window of the input: the threads holding the
  // window's elements store them (a stacked tile's lower half as B).
  if (auto slice = operand.getDefiningOp<SliceOp>(); slice && plan.foldsSlice(slice, schedule)) {
    o.tile = slice.getInput();
    o.offsets.assign(slice.getOffsets().begin(), slice.getOffsets().end());
    o.window.assign(slice.getType().getShape().begin(), slice.getType().getShape().end());
  }
  // Whether the staged tile's last dim is K: then a thread's consecutive
  // registers along it fill one 16-byte piece of a row with a vector store
  // (so do they along N, for a B staged N-major).
  o.kLast = isLhs != transposed;
  o.l = layoutOf(o.tile);
  unsigned last = o.l.shape.size() - 1;
  if (o.rowsAlongLast() && !o.l.isUnit(last))
    o.vec = std::gcd(o.l.contiguous(last), t.perCore());
  // A run stays inside the window.
  if (!o.offsets.empty())
    o.vec = std::gcd(o.vec, std::gcd(o.offsets[last], o.window[last]));
  return o;
}

bool GpuKernelLowering::swizzlePays(Value operand, bool isLhs, const MmaTiling &t, bool nMajor) {
  StagedOperand o = stagedOperand(operand, isLhs, t, nMajor);
  if (nMajor && !t.nMajorSwizzleBytes)
    return false;
  // A warp stores 16 bytes a lane in phases of 8 lanes; the plain layout
  // keeps them in 8 bank groups only when those lanes are 8 rows.
  unsigned rowDim = o.rowsAlongLast() ? 0 : 1, rowParent = o.l.dims[rowDim];
  bool rowsPerPhase =
      !o.l.isUnit(rowDim) && o.l.laneStride(rowParent) == 1 && o.l.lanes[rowParent] >= 8;
  return o.vec > 1 && !rowsPerPhase && schedule.getSwizzle();
}

void GpuKernelLowering::stageMmaOperand(Value operand, bool isLhs, const MmaTiling &t,
                                        int64_t region, bool swizzled, int64_t rowOffset,
                                        bool nMajor) {
  // Staged K-major: element (row, k) at t.operandOffset(row, k, ...), where
  // row is A's m or B's n; N-major, row is B's k and k its n. A split A
  // (MmaTiling::splitA) is staged as its two parts, aPartBytes() apart.
  StagedOperand o = stagedOperand(operand, isLhs, t, nMajor);
  int64_t parts = isLhs ? t.aParts() : 1;
  if (Operation *def = o.tile.getDefiningOp())
    if (const ResidentPlan *res = plan.residentTouchedBy(def)) {
      for (int64_t part = 0; part < parts; ++part)
        stageResidentOperand(*res, cast<TileType>(o.tile.getType()).getElementType(), isLhs, t,
                             region + part * t.aPartBytes(), swizzled, rowOffset, part);
      return;
    }
  if (stageByPieces(o, isLhs, t, region, swizzled, rowOffset))
    return;
  for (int64_t part = 0; part < parts; ++part)
    stageMmaOperandPart(o, isLhs, t, region + part * t.aPartBytes(), swizzled, rowOffset, nMajor,
                        part);
}

void GpuKernelLowering::stageMmaOperandPart(const StagedOperand &o, bool isLhs, const MmaTiling &t,
                                            int64_t region, bool swizzled, int64_t rowOffset,
                                            bool nMajor, int64_t part) {
  Value tile = o.tile;
  const TileLayout &l = o.l;
  int64_t vec = o.vec;
  Type stored = stagedOperandType(t);
  unsigned last = l.shape.size() - 1, rowDim = o.rowsAlongLast() ? 0 : 1,
           kDim = o.rowsAlongLast() ? 1 : 0;
  int64_t rows = t.stagedRows(isLhs, nMajor);
  int64_t block = t.blockBytes(swizzled, nMajor);

  OpBuilder::InsertionGuard guard(b);
  if (Value owner = ownerPredicate(l)) {
    auto only = scf::IfOp::create(b, loc(), TypeRange{}, owner, false);
    b.setInsertionPoint(only.thenBlock()->getTerminator());
  }
  SmallVector<Value> bases = threadBases(l);
  Value areaStart = cIndex(plan.roles[role].stagingOffset + region);
  // A register's constant rows and K bytes add to the thread's own offset
  // when they keep its permutation (whole 8-row atoms) and its byte in the
  // row (whole K blocks); other registers compute theirs.
  // A window's coordinates count from its start.
  auto windowStart = [&](unsigned d) { return o.offsets.empty() ? 0 : o.offsets[d]; };
  Value rowBase = add(bases[rowDim], cIndex(rowOffset - windowStart(rowDim))),
        kBase = add(bases[kDim], cIndex(-windowStart(kDim)));
  Value threadStart = add(areaStart, operandByteOffset(t, swizzled, rows, rowBase, kBase, nMajor));
  const Regs &x = regs[tile];
  bool split = t.splitA && isLhs;
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<int64_t, 2> ri = l.regIndex(r);
    if (ri[last] % vec)
      continue; // stored with the run it belongs to
    int64_t rowC = l.constOffset(rowDim, ri[rowDim]), kC = l.constOffset(kDim, ri[kDim]);
    bool samePermutation = !swizzled || rowC * block % MmaTiling::kAtomAlignment == 0;
    // Only the elements inside a window are staged.
    OpBuilder::InsertionGuard inWindow(b);
    if (!o.offsets.empty()) {
      Value inside;
      for (unsigned d = 0; d <= last; ++d)
        if (o.window[d] < l.shape[d])
          inside =
              andOf(inside, below(add(bases[d], cIndex(l.constOffset(d, ri[d]) - o.offsets[d])),
                                  o.window[d]));
      if (inside)
        enterIf(inside);
    }
    Value addr;
    if (samePermutation && kC * t.elemBytes % block == 0) {
      addr = smemAt(add(threadStart, cIndex(t.linearOffset(rowC, kC, rows, swizzled, nMajor))));
    } else {
      addr = smemAt(add(areaStart, operandByteOffset(t, swizzled, rows, add(rowBase, cIndex(rowC)),
                                                     add(kBase, cIndex(kC)), nMajor)));
    }
    if (vec == 1) {
      LLVM::StoreOp::create(
          b, loc(), split ? splitPart(x[r], stored, part) : scalarCast(b, loc(), x[r], stored),
          addr);
      continue;
    }
    Value run;
    if (split) {
      SmallVector<Value> f32s;
      SmallVector<int64_t, 2> rj(ri);
      for (int64_t j = 0; j < vec; ++j, ++rj.back())
        f32s.push_back(x[l.regNumber(rj)]);
      run = packSplitRun(f32s, stored, part);
    } else {
      run = packRun(l, x, ri, vec, stored);
    }
    LLVM::StoreOp::create(b, loc(), run, addr, vec * t.elemBytes);
  }
}

bool GpuKernelLowering::stageByPieces(const StagedOperand &o, bool isLhs, const MmaTiling &t,
                                      int64_t region, bool swizzled, int64_t rowOffset) {
  const TileLayout &l = o.l;
  auto type = cast<TileType>(o.tile.getType());
  // A tile of a few elements a thread keeps the direct stores: for a
  // handful of them the gather's barrier would sit on a latency-bound path
  // (the scan's Vnew^T).
  if (!schedule.getGatherMnMajor() || o.rowsAlongLast() || type.getRank() != 2 || l.numRegs() < 8 ||
      !o.offsets.empty())
    return false;
  Type elem = type.getElementType();
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8,
          perVector = 16 / std::max<int64_t>(1, elemBytes);
  int64_t K = type.getShape()[0], R = type.getShape()[1], perPiece = t.perCore();
  int64_t pitch = R + perVector; // padded, and rows stay 16-byte aligned
  if (elemBytes < 2 || R % perVector || K % perPiece || K * pitch * elemBytes > t.M * t.dStride * 4)
    return false;
  Type stored = stagedOperandType(t);
  if (piecesPending)
    syncRole();
  Value scratch = stagingBase(t.dOffset);
  {
    // The tile row-major, up to 16 bytes a store along its rows.
    OpBuilder::InsertionGuard guard(b);
    if (Value owner = ownerPredicate(l))
      enterIf(owner);
    int64_t vec = 1;
    if (!l.isUnit(1)) {
      vec = std::min<int64_t>(l.contiguous(1), perVector);
      while (vec > 1 && R % vec)
        vec /= 2;
    }
    SmallVector<Value> bases = threadBases(l);
    const Regs &x = regs[o.tile];
    for (int64_t r = 0; r < l.numRegs(); ++r) {
      SmallVector<int64_t, 2> ri = l.regIndex(r);
      if (ri[1] % vec)
        continue;
      SmallVector<Value> c = regCoords(l, bases, r);
      Value at = sharedElem(scratch, elem, add(mul(c[0], cIndex(pitch)), c[1]));
      if (vec == 1) {
        LLVM::StoreOp::create(b, loc(), x[r], at);
        continue;
      }
      LLVM::StoreOp::create(b, loc(), packRun(l, x, ri, vec, elem), at, vec * elemBytes);
    }
  }
  syncRole();
  // Pieces: 16 bytes of K of one staged row each, consecutive threads on
  // consecutive rows (so neither the gathers nor the stores conflict).
  int64_t threads = plan.roles[role].numWarps * 32, pieces = R * (K / perPiece);
  Value thread = add(mul(warp, cIndex(32)), lane);
  Value areaStart = cIndex(plan.roles[role].stagingOffset + region);
  int64_t rows = t.stagedRows(isLhs);
  auto pieceType = VectorType::get({perPiece}, stored);
  // A loop, not unrolled rounds: the gathers' addresses would hold
  // registers the operand's role may not have.
  auto rounds =
      scf::ForOp::create(b, loc(), cIndex(0), cIndex((pieces + threads - 1) / threads), cIndex(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(rounds.getBody()->getTerminator());
    Value piece = add(thread, mul(rounds.getInductionVar(), cIndex(threads)));
    if (pieces % threads)
      enterIf(below(piece, pieces));
    Value row = arith::RemUIOp::create(b, loc(), piece, cIndex(R));
    Value k0 = mul(arith::DivUIOp::create(b, loc(), piece, cIndex(R)), cIndex(perPiece));
    SmallVector<Value> x;
    for (int64_t e = 0; e < perPiece; ++e)
      x.push_back(LLVM::LoadOp::create(
          b, loc(), elem,
          sharedElem(scratch, elem, add(mul(add(k0, cIndex(e)), cIndex(pitch)), row))));
    Value offset = operandByteOffset(t, swizzled, rows, add(row, cIndex(rowOffset)), k0);
    // Each part of a split A from the same gather.
    bool split = t.splitA && isLhs;
    for (int64_t part = 0; part < (split ? t.aParts() : 1); ++part) {
      Value v;
      if (split) {
        v = packSplitRun(x, stored, part);
      } else if (!(v = wholeVector(x, pieceType))) {
        v = LLVM::UndefOp::create(b, loc(), pieceType);
        for (int64_t e = 0; e < perPiece; ++e)
          v = LLVM::InsertElementOp::create(b, loc(), v, scalarCast(b, loc(), x[e], stored),
                                            cI32(e));
      }
      LLVM::StoreOp::create(b, loc(), v,
                            smemAt(add(areaStart, add(offset, cIndex(part * t.aPartBytes())))), 16);
    }
  }
  piecesPending = true;
  return true;
}

Value GpuKernelLowering::operandByteOffset(const MmaTiling &t, bool swizzled, int64_t rows,
                                           Value row, Value k, bool nMajor) {
  // MmaTiling::operandOffset: the K block, then the row, then the byte in
  // the row XOR the row's permutation (which only moves bits [4, 7), left
  // 0 by a row's start).
  int64_t block = t.blockBytes(swizzled, nMajor);
  Value kByte = mul(k, cIndex(t.elemBytes));
  Value kBlock = mul(arith::DivUIOp::create(b, loc(), kByte, cIndex(block)), cIndex(rows * block));
  Value byte = arith::RemUIOp::create(b, loc(), kByte, cIndex(block));
  Value inBlock = add(mul(row, cIndex(block)), byte);
  if (swizzled) {
    Value bits = arith::ShRUIOp::create(b, loc(), mul(row, cIndex(block)), cIndex(7));
    Value permutation = arith::ShLIOp::create(
        b, loc(), arith::AndIOp::create(b, loc(), bits, cIndex(block / 16 - 1)), cIndex(4));
    inBlock = arith::XOrIOp::create(b, loc(), inBlock, permutation);
  }
  return add(kBlock, inBlock);
}

bool GpuKernelLowering::stagesBNMajor(DotOp op, const Product &p) {
  if (!p.t.readsBNMajor() || (p.extra && !p.pair->sharesRhs))
    return false;
  StagedOperand o = stagedOperand(op.getRhs(), /*isLhs=*/false, p.t);
  if (o.kLast)
    return false;
  Operation *def = o.tile.getDefiningOp();
  return !def || !plan.residentTouchedBy(def);
}

FailureOr<GpuKernelLowering::Product> GpuKernelLowering::planProduct(DotOp op, MmaTiling::Kind kind,
                                                                     int64_t warps, bool quiet) {
  Product p;
  std::string why;
  p.pair = pairRunning(kind, op, warps, [&](Operation *o) { return runs(o); });
  FailureOr<MmaTiling> tiling =
      p.pair ? MmaTiling::get(kind, *p.pair, warps, why) : MmaTiling::get(kind, op, warps, why);
  if (failed(tiling) && quiet)
    return failure();
  if (failed(tiling))
    return op.emitOpError("under 'mma: ") << schedule.getMma().getValue() << "' " << why;
  p.t = *tiling;
  // A paired dot's other operand goes below the first's; one descriptor
  // reads both, so both are swizzled or neither.
  if (p.pair)
    p.extra = p.pair->sharesRhs ? p.pair->second.getLhs() : p.pair->second.getRhs();
  // Operands a TMA ring brought in the layout the product reads stay where
  // they are (KernelPlan chose them: both halves of a stacked pair or none).
  auto inRing = [&](Value operand) -> const RingOperand * {
    auto it = ringOperands.find(stagedTile(operand).first);
    return it == ringOperands.end() ? nullptr : &it->second;
  };
  p.aRing = inRing(op.getLhs());
  p.bRing = inRing(op.getRhs());
  p.extraRing = p.extra ? inRing(p.extra) : nullptr;
  // A stage goes back once per copy into it: here, where the product runs
  // as often as the copy (the same loop) and is the last of the products
  // reading it (RingPlan::lastReader), or never, where the copy fills it
  // once for the whole kernel (outside every loop, not persistent: a start
  // state read by every step of a loop).
  for (const RingOperand *r : {p.aRing, p.bRing, p.extraRing}) {
    if (!r)
      continue;
    tile::LoadOp load = r->ring->load;
    auto loadLoop = load->getParentOfType<scf::ForOp>();
    auto dotLoop = op->getParentOfType<scf::ForOp>();
    if (loadLoop == dotLoop) {
      if (!r->ring->lastReader || r->ring->lastReader == op)
        p.freed.push_back(r);
      continue;
    }
    if (!loadLoop && !plan.persistent)
      continue;
    if (quiet)
      return failure();
    return op.emitOpError("reads the tile of pipeline '")
           << r->ring->pipeline
           << "' where it lands from a loop its load is outside of, and the ring refills it "
              "(a loop around both, or `persistent`): load it in the product's loop";
  }
  // Those take no room in the staging area, as KernelPlan sized it.
  if (!plan.stagesWholeLayout(op)) {
    if (ownsAccumulators(p, kind))
      plan.placeOwnProductStaging(op, p.pair, p.t, p.aRing, p.bRing);
    else
      p.t.placeStagingAreas(!p.aRing, !p.bRing);
  }
  p.bNMajor = p.bRing ? p.bRing->ring->nMajor : stagesBNMajor(op, p);
  p.aSwizzled = p.aRing || swizzlePays(op.getLhs(), /*isLhs=*/true, p.t);
  p.bSwizzled = p.bRing || swizzlePays(op.getRhs(), /*isLhs=*/false, p.t, p.bNMajor);
  if (p.extra && !p.extraRing) {
    bool &half = p.pair->sharesRhs ? p.aSwizzled : p.bSwizzled;
    half = half && swizzlePays(p.extra, p.pair->sharesRhs, p.t);
  }
  return p;
}

LogicalResult GpuKernelLowering::lowerTensorCoreDot(DotOp op, MmaTiling::Kind kind) {
  if (pairedSeconds.contains(op))
    return success(); // its result came with the dot before it
  if (plan.roles[role].issuesMma)
    return issueServedProduct(op, kind);
  FailureOr<Product> planned =
      planProduct(op, kind, plan.productWarps(role, kind == MmaTiling::Kind::Wgmma));
  if (failed(planned))
    return failure();
  const Product &p = *planned;
  const MmaTiling &t = p.t;
  const std::optional<DotPair> &pair = p.pair;
  // Onto a resident tile: scaled in place first, the product accumulated
  // where it lies, nothing read back.
  const ResidentPlan *onto = accumulatesOnto(op);
  if (onto && onto->factor && !onto->scalesAtMul)
    scaleResident(*onto);
  bool ownAccumulators = ownsAccumulators(p, kind);
  // A that wgmma can read from this thread's registers is not staged.
  std::optional<ARegisters> aRegs;
  if (ownAccumulators && !p.aRing)
    aRegs = registerOperandA(op, t);
  bool staged = false;
  if (!p.aRing && !aRegs) {
    stageMmaOperand(op.getLhs(), /*isLhs=*/true, t, t.aOffset, p.aSwizzled);
    staged = true;
  }
  if (!p.bRing) {
    stageMmaOperand(op.getRhs(), /*isLhs=*/false, t, t.bOffset, p.bSwizzled, 0, p.bNMajor);
    staged = true;
  }
  if (p.extra && !p.extraRing) {
    stageMmaOperand(p.extra, pair->sharesRhs, t, pair->sharesRhs ? t.aOffset : t.bOffset,
                    pair->sharesRhs ? p.aSwizzled : p.bSwizzled, pair->offset());
    staged = true;
  }
  auto [a, bAt] = operandsAt(p);
  // The barrier or hand-over below waits for every gather of a staging by
  // pieces too.
  piecesPending = false;
  // The tensor cores read shared memory through the async proxy: order the
  // generic-proxy stores before them, then wait for every thread's stores.
  if (staged)
    fenceAsyncProxy();
  // A result laid out as the accumulators lie stays in them.
  // (A pair sharing A: both results, side by side in the accumulators.)
  std::optional<Regs> inFragment;
  if (!onto && ownAccumulators && plan.resultInFragment(op, p.pair, p.t))
    inFragment.emplace(t.rounds() * t.nChunk / 2);
  // A wgmma product that staged nothing and leaves its result in registers
  // used no shared memory of the role's: no barrier after it. (The ring
  // stages it read go back below, each thread's arrival after its own wait;
  // a stage is free once every consumer thread has arrived.) Its wait is
  // left to the first op that needs the product done (flushProducts), so
  // that the work between runs while the tensor cores multiply.
  bool registersOnly = false;
  SmallVector<Value> inFlight;
  if (plan.roles[role].issuer >= 0) {
    handOffProduct(t, /*readBack=*/!onto);
  } else if (kind == MmaTiling::Kind::Wgmma) {
    if (staged)
      syncRole();
    registersOnly = !staged && (onto || inFragment);
    inFlight = issueWgmma(t, a, bAt, onto ? &fragments[onto] : nullptr,
                          inFragment ? &*inFragment : nullptr, aRegs ? &*aRegs : nullptr,
                          /*deferWait=*/registersOnly);
  } else {
    issueTcgen05(t, a, bAt, onto, p.freed);
  }
  if (!registersOnly)
    syncRole();
  SmallVector<Value> released;
  for (const RingOperand *r : p.freed)
    if (!r->ring->freedByCommit)
      released.push_back(emptyBarrier(*r->ring, r->stage));
  DotOp second = pair ? pair->second : DotOp();
  if (second)
    pairedSeconds.insert(second);
  // The product done (waited for here if its wait was left pending): its
  // ring stages go back to the copies (tcgen05's commit gave them back
  // already), and a result kept in the accumulators is bound.
  auto finish = [this, t, inFlight, onto, inFragment, op, second,
                 secondFrom = pair ? pair->offset() : 0, released](int64_t newer) mutable {
    if (!inFlight.empty()) {
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc(), newer);
      for (auto [round, acc] : llvm::enumerate(inFlight))
        takeAccumulators(t, round, acc, onto ? &fragments[onto] : nullptr,
                         inFragment ? &*inFragment : nullptr);
    }
    for (Value empty : released)
      NVVM::MBarrierArriveOp::create(b, loc(), Type(), empty, Value());
    if (onto || !inFragment)
      return;
    keepFragmentColumns(op, *inFragment, 0, t);
    if (second)
      keepFragmentColumns(second, *inFragment, secondFrom, t);
  };
  if (registersOnly) {
    PendingProduct &pending = pendingProducts.emplace_back();
    pending.results.push_back(op.getResult());
    if (second)
      pending.results.push_back(second.getResult());
    pending.groups = static_cast<int64_t>(inFlight.size());
    pending.finish = std::move(finish);
    return success();
  }
  finish(0);
  if (onto || inFragment)
    return success();
  Value dBase = stagingBase(t.dOffset);
  // Each result reads its rows (its columns, for a pair sharing A) back.
  readResultArea(op, dBase, t.dStride, 0, 0);
  if (second)
    readResultArea(second, dBase, t.dStride, pair->sharesRhs ? pair->offset() : 0,
                   pair->sharesRhs ? 0 : pair->offset());
  syncRole();
  return success();
}

void GpuKernelLowering::readResultArea(DotOp dot, Value base, int64_t stride, int64_t rowFrom,
                                       int64_t colFrom) {
  TileLayout l = layoutOf(dot.getResult());
  Regs out = stageIn(l, b.getF32Type(), base, [&](ArrayRef<Value> c) {
    return add(mul(add(c[0], cIndex(rowFrom)), cIndex(stride)), add(c[1], cIndex(colFrom)));
  });
  if (dot.getAcc()) {
    const Regs &acc = regs[dot.getAcc()];
    for (int64_t r = 0; r < l.numRegs(); ++r)
      out[r] = arith::AddFOp::create(b, loc(), out[r], acc[r]);
  }
  regs[dot.getResult()] = out;
}

std::optional<ARegisters> GpuKernelLowering::registerOperandA(DotOp op, const MmaTiling &t) {
  if (!plan.readsARegisters(op, t))
    return std::nullopt;
  Value lhs = op.getLhs();
  // v(round, i, h, c): this thread's element of the A tile at row 64 (wg +
  // round * warpgroups) + 16 (warp % 4) + lane / 4 + 8h, column 8i + 2 (lane
  // % 4) + c: where an accumulator of the same shape keeps it.
  std::function<Value(int64_t, int64_t, int64_t, int64_t)> v;
  Operation *def = lhs.getDefiningOp();
  const ResidentPlan *res = def ? plan.residentTouchedBy(def) : nullptr;
  if (res && isa<CastOp>(def)) {
    MmaTiling held = residentTiling(*res);
    Type elem = cast<TileType>(lhs.getType()).getElementType();
    const Regs &f = fragments[res];
    int64_t perRound = held.nChunk / 2;
    v = [&, perRound, elem](int64_t round, int64_t i, int64_t h, int64_t c) {
      return scalarCast(b, loc(), f[round * perRound + 4 * i + 2 * h + c], elem);
    };
  } else {
    const Regs &x = regs[lhs];
    int64_t columns = t.K;
    v = [&x, columns](int64_t round, int64_t i, int64_t h, int64_t c) {
      return x[MmaTiling::fragmentRegister(columns, round, 4 * i + 2 * h + c)];
    };
  }
  Type i32 = b.getI32Type();
  ARegisters out;
  bool tf32 = t.operands == MmaTiling::Operands::TF32;
  Value src, odd;
  if (tf32) {
    // tf32 A: row r's columns t and t + 4 of each 8 in lane t of the quad;
    // an accumulator keeps columns 2t and 2t + 1 there. Each word comes from
    // the quad's lane t / 2 (+ 2), the pair's element t % 2.
    Value quad = arith::AndIOp::create(b, loc(), laneI32(), cI32(~3));
    Value within = arith::AndIOp::create(b, loc(), laneI32(), cI32(3));
    src = arith::OrIOp::create(b, loc(), quad, arith::ShRUIOp::create(b, loc(), within, cI32(1)));
    odd = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ne,
                                arith::AndIOp::create(b, loc(), within, cI32(1)), cI32(0));
  }
  // A split A: its high part's words, then its residual's (splitPart).
  Type element = t.splitA ? stagedOperandType(t) : cast<TileType>(lhs.getType()).getElementType();
  for (int64_t round = 0; round < t.rounds(); ++round)
    for (int64_t step = 0; step < t.aParts() * t.kSteps(); ++step) {
      int64_t part = step / t.kSteps(), s = step % t.kSteps();
      SmallVector<Value, 4> words;
      if (!tf32) {
        // 16-bit A: words (row, 8-column half) = (g, 0), (g + 8, 0), (g, 1),
        // (g + 8, 1), each the accumulator's pair of consecutive columns.
        Type pairType = VectorType::get({2}, element);
        for (int64_t half = 0; half < 2; ++half)
          for (int64_t h = 0; h < 2; ++h) {
            if (t.splitA && part == 0) {
              words.push_back(
                  packHighParts(v(round, 2 * s + half, h, 0), v(round, 2 * s + half, h, 1)));
              continue;
            }
            Value pair = LLVM::UndefOp::create(b, loc(), pairType);
            for (int64_t c = 0; c < 2; ++c) {
              Value x = v(round, 2 * s + half, h, c);
              if (t.splitA)
                x = splitPart(x, element, part);
              pair = LLVM::InsertElementOp::create(b, loc(), pair, x, cI32(c));
            }
            words.push_back(LLVM::BitcastOp::create(b, loc(), i32, pair));
          }
      } else {
        for (int64_t up = 0; up < 2; ++up) // columns t, then t + 4
          for (int64_t h = 0; h < 2; ++h) {
            Value from = up ? arith::AddIOp::create(b, loc(), src, cI32(2)).getResult() : src;
            Value pick[2];
            for (int64_t c = 0; c < 2; ++c)
              pick[c] =
                  shuffleIndexed(LLVM::BitcastOp::create(b, loc(), i32, v(round, s, h, c)), from);
            words.push_back(arith::SelectOp::create(b, loc(), odd, pick[1], pick[0]));
          }
      }
      out.push_back(std::move(words));
    }
  return out;
}

Value GpuKernelLowering::wgmmaRegisterA(const MmaTiling &t, Value acc, ArrayRef<Value> a,
                                        Value bDesc, bool zero, bool bNMajor) {
  int64_t n = t.nChunk / 2;
  bool tf32 = t.operands == MmaTiling::Operands::TF32;
  const char *type = tf32 ? "tf32" : t.operands == MmaTiling::Operands::BF16 ? "bf16" : "f16";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + std::string(zero ? "0" : "1") +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(t.nChunk) + "k" +
                     std::to_string(t.kStep) + ".f32." + type + "." + type + " {";
  std::string constraints;
  for (int64_t j = 0; j < n; ++j) {
    text += (j ? ", $" : "$") + std::to_string(j);
    constraints += (j ? ",=f" : "=f");
  }
  // Operands count the n outputs first, then the n accumulators tied to
  // them, then A's words and B's descriptor.
  text += "}, {$" + std::to_string(2 * n) + ", $" + std::to_string(2 * n + 1) + ", $" +
          std::to_string(2 * n + 2) + ", $" + std::to_string(2 * n + 3) + "}, $" +
          std::to_string(2 * n + 4) + ", p, 1, 1" +
          (tf32      ? ""
           : bNMajor ? ", 1"
                     : ", 0") +
          ";\n}";
  SmallVector<Value> operands;
  for (int64_t j = 0; j < n; ++j) {
    operands.push_back(LLVM::ExtractValueOp::create(b, loc(), acc, j));
    constraints += "," + std::to_string(j);
  }
  llvm::append_range(operands, a);
  constraints += ",r,r,r,r,l";
  operands.push_back(bDesc);
  return LLVM::InlineAsmOp::create(b, loc(), acc.getType(), operands, b.getStringAttr(text),
                                   b.getStringAttr(constraints), b.getUnitAttr(), UnitAttr(),
                                   LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}

bool GpuKernelLowering::transposesInRegisters(TransposeOp tr) {
  return permutesRegisters(layoutOf(tr.getInput()), layoutOf(tr.getResult()), tr.getPermutation());
}

std::optional<Regs> GpuKernelLowering::transposedInRegisters(TransposeOp tr) {
  if (!transposesInRegisters(tr))
    return std::nullopt;
  TileLayout in = layoutOf(tr.getInput()), out = layoutOf(tr.getResult());
  ArrayRef<int64_t> perm = tr.getPermutation();
  const Regs &from = regs[tr.getInput()];
  Regs to(out.numRegs());
  for (int64_t r = 0; r < out.numRegs(); ++r) {
    SmallVector<int64_t, 2> index = out.regIndex(r), source(index.size());
    for (auto [d, p] : llvm::enumerate(perm))
      source[p] = index[d];
    to[r] = from[in.regNumber(source)];
  }
  return to;
}

Value GpuKernelLowering::operandDescriptor(const MmaTiling &t, OperandAt at, Value offset,
                                           int64_t rows) {
  // The start address in 16-byte units, then the layout and strides.
  bool swizzled = at.swizzled;
  Type i64 = b.getI64Type();
  auto i64Const = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc(), v, 64); };
  Value areaAddr = LLVM::PtrToIntOp::create(b, loc(), i64, at.base);
  Value addr =
      arith::AddIOp::create(b, loc(), areaAddr, arith::IndexCastOp::create(b, loc(), i64, offset));
  Value start = arith::ShRUIOp::create(
      b, loc(), arith::AndIOp::create(b, loc(), addr, i64Const(0x3FFFF)), i64Const(4));
  return arith::OrIOp::create(b, loc(), start,
                              i64Const(t.descriptorBits(rows, swizzled, at.nMajor)));
}

void GpuKernelLowering::forEachFragmentPair(
    const MmaTiling &t, Value mTile, Value nPart,
    function_ref<void(int64_t reg, Value row, Value col)> visit) {
  // Registers 4i + 2h + {0, 1} of a thread hold row 16 * warp + lane / 4 +
  // 8h, columns 8i + 2 * (lane % 4) + {0, 1}.
  Value warpInGroup = arith::RemUIOp::create(b, loc(), warp, cIndex(4));
  Value row0 = add(mul(mTile, cIndex(64)), add(mul(warpInGroup, cIndex(16)),
                                               arith::DivUIOp::create(b, loc(), lane, cIndex(4))));
  Value col0 = add(mul(nPart, cIndex(t.nChunk)),
                   mul(arith::RemUIOp::create(b, loc(), lane, cIndex(4)), cIndex(2)));
  for (int64_t i = 0; i < t.nChunk / 8; ++i)
    for (int64_t h = 0; h < 2; ++h)
      visit(4 * i + 2 * h, add(row0, cIndex(8 * h)), add(col0, cIndex(8 * i)));
}

void GpuKernelLowering::forEachResidentPair(
    const MmaTiling &t, function_ref<void(int64_t reg, Value row, Value col)> visit) {
  // KernelPlan made the items a multiple of the warpgroups: no idle turns.
  Value wg = arith::DivUIOp::create(b, loc(), warp, cIndex(4));
  for (int64_t round = 0; round < t.rounds(); ++round) {
    Value item = add(wg, cIndex(round * t.warpgroups));
    forEachFragmentPair(
        t, arith::DivUIOp::create(b, loc(), item, cIndex(t.nParts)),
        arith::RemUIOp::create(b, loc(), item, cIndex(t.nParts)),
        [&](int64_t reg, Value row, Value col) { visit(round * t.nChunk / 2 + reg, row, col); });
  }
}

void GpuKernelLowering::keepFragmentColumns(DotOp dot, ArrayRef<Value> fragment, int64_t from,
                                            const MmaTiling &t) {
  int64_t n = dot.getRhs().getType().getShape()[1];
  Regs out = t.fragmentColumns(fragment, from, n);
  if (Value acc = dot.getAcc())
    for (auto [r, x] : llvm::enumerate(out))
      x = arith::AddFOp::create(b, loc(), x, regs[acc][r]);
  regs[dot.getResult()] = std::move(out);
}

void GpuKernelLowering::flushProducts(int64_t last) {
  if (last < 0)
    last = static_cast<int64_t>(pendingProducts.size()) - 1;
  // Taken out first: a finish lowers ops, which must not see these pending.
  SmallVector<PendingProduct, 2> done(pendingProducts.begin(), pendingProducts.begin() + last + 1);
  pendingProducts.erase(pendingProducts.begin(), pendingProducts.begin() + last + 1);
  int64_t later = 0;
  for (const PendingProduct &p : pendingProducts)
    later += p.groups;
  for (auto [i, p] : llvm::enumerate(done)) {
    int64_t newer = later;
    for (const PendingProduct &q : ArrayRef(done).drop_front(i + 1))
      newer += q.groups;
    p.finish(newer);
  }
}

bool GpuKernelLowering::ownsAccumulators(const Product &p, MmaTiling::Kind kind) {
  return kind == MmaTiling::Kind::Wgmma && plan.roles[role].issuer < 0 &&
         (!p.pair || !p.pair->sharesRhs);
}

bool GpuKernelLowering::issuesBesideProducts(DotOp op) {
  std::optional<MmaTiling::Kind> kind = MmaTiling::kindOf(schedule.getMma());
  if (kind != MmaTiling::Kind::Wgmma || plan.roles[role].issuesMma || accumulatesOnto(op))
    return false;
  FailureOr<Product> planned =
      planProduct(op, *kind, plan.productWarps(role, /*wgmma=*/true), /*quiet=*/true);
  if (failed(planned) || planned->pair)
    return false;
  // What lowerTensorCoreDot decides: nothing staged (A in place or from
  // registers, B in place) and the result left in the accumulators.
  const Product &p = *planned;
  return ownsAccumulators(p, *kind) && (p.aRing || plan.readsARegisters(op, p.t)) && p.bRing &&
         plan.resultInFragment(op, p.pair, p.t);
}

/// `words` through an asm (`text`, maybe empty) that takes and gives back
/// each of them (constraint `letter`): every use of what it returns comes
/// after it, where LLVM would move a use of the words themselves anywhere.
static Value throughAsm(OpBuilder &b, Location loc, ArrayRef<Value> words, StringRef letter,
                        StringRef text) {
  int64_t n = static_cast<int64_t>(words.size());
  std::string constraints;
  for (int64_t j = 0; j < n; ++j)
    constraints += "=" + letter.str() + ",";
  for (int64_t j = 0; j < n; ++j)
    constraints += std::to_string(j) + (j + 1 < n ? "," : "");
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), llvm::map_to_vector(words, [](Value w) { return w.getType(); }));
  return LLVM::InlineAsmOp::create(b, loc, type, words, b.getStringAttr(text),
                                   b.getStringAttr(constraints), b.getUnitAttr(), UnitAttr(),
                                   LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}

Value GpuKernelLowering::waitedAccumulators(Value acc) {
  // A wgmma's accumulators are defined only after its wait_group, but the
  // wait as an intrinsic names none of them, and LLVM moves pure uses (a
  // negation, a scale) above it, between the product and its wait: ptxas
  // then waits right after the product ("warpgroup.wait is injected"),
  // and the work meant to run beside it waits too. The registers go
  // through an empty asm after the wait instead, so every use comes after.
  int64_t n = static_cast<int64_t>(cast<LLVM::LLVMStructType>(acc.getType()).getBody().size());
  SmallVector<Value> words;
  for (int64_t j = 0; j < n; ++j)
    words.push_back(LLVM::ExtractValueOp::create(b, loc(), acc, j));
  return throughAsm(b, loc(), words, "f", "");
}

void GpuKernelLowering::takeAccumulators(const MmaTiling &t, int64_t round, Value acc,
                                         Regs *fragment, Regs *results) {
  acc = waitedAccumulators(acc);
  int64_t first = round * t.nChunk / 2;
  if (fragment) {
    for (int64_t j = 0; j < t.nChunk / 2; ++j)
      (*fragment)[first + j] = LLVM::ExtractValueOp::create(b, loc(), acc, j);
    return;
  }
  // fragmentLayout() gives every warpgroup a turn in every round: no
  // branch holds these values.
  for (int64_t j = 0; j < t.nChunk / 2; ++j)
    (*results)[t.fragmentRegister(round, j)] = LLVM::ExtractValueOp::create(b, loc(), acc, j);
}

SmallVector<Value> GpuKernelLowering::issueWgmma(const MmaTiling &t, OperandAt a, OperandAt bAt,
                                                 Regs *fragment, Regs *results,
                                                 const ARegisters *aRegs, bool deferWait) {
  SmallVector<Value> inFlight;
  bool aSwizzled = a.swizzled, bSwizzled = bAt.swizzled;
  using Operands = MmaTiling::Operands;
  Type f32 = b.getF32Type();
  MLIRContext *ctx = b.getContext();
  auto wgmmaType = [&](Operands o) {
    return o == Operands::TF32   ? NVVM::WGMMATypes::tf32
           : o == Operands::BF16 ? NVVM::WGMMATypes::bf16
                                 : NVVM::WGMMATypes::f16;
  };
  Value wg = arith::DivUIOp::create(b, loc(), warp, cIndex(4));
  Value dBase = stagingBase(t.dOffset);
  auto accType = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(t.nChunk / 2, f32));
  for (int64_t round = 0; round < t.rounds(); ++round) {
    OpBuilder::InsertionGuard guard(b);
    Value item = warpgroupTurn(wg, round, t.warpgroups, t.items());
    Value mTile = arith::DivUIOp::create(b, loc(), item, cIndex(t.nParts));
    Value nPart = arith::RemUIOp::create(b, loc(), item, cIndex(t.nParts));
    Value aStart = mul(mTile, cIndex(64 * t.blockBytes(aSwizzled)));
    Value bStart = mul(nPart, cIndex(t.bPartStride(bSwizzled, bAt.nMajor)));
    int64_t bRows = t.stagedRows(/*isLhs=*/false, bAt.nMajor);
    Value acc = LLVM::UndefOp::create(b, loc(), accType);
    int64_t first = round * t.nChunk / 2;
    if (fragment)
      for (int64_t j = 0; j < t.nChunk / 2; ++j)
        acc = LLVM::InsertValueOp::create(b, loc(), acc, (*fragment)[first + j], j);
    NVVM::WgmmaFenceAlignedOp::create(b, loc());
    // A split A's parts in turn, each over all of K (the same B steps).
    for (int64_t step = 0; step < t.aParts() * t.kSteps(); ++step) {
      int64_t part = step / t.kSteps(), s = step % t.kSteps();
      // One instruction reads 32 bytes of K: two plain K blocks, or part of
      // one swizzled block, whose rows the hardware permutes from the start
      // address on.
      Value bStep = add(bStart, cIndex(t.kStepOffset(s, /*isLhs=*/false, bSwizzled, bAt.nMajor)));
      bool zero = step == 0 && !fragment;
      if (aRegs) {
        acc = wgmmaRegisterA(t, acc, (*aRegs)[round * t.aParts() * t.kSteps() + step],
                             operandDescriptor(t, bAt, bStep, bRows), zero, bAt.nMajor);
        continue;
      }
      Value aAt =
          add(aStart, cIndex(part * t.aPartBytes() + t.kStepOffset(s, /*isLhs=*/true, aSwizzled)));
      acc = NVVM::WgmmaMmaAsyncOp::create(
          b, loc(), accType, acc, operandDescriptor(t, a, aAt, t.rowsA),
          operandDescriptor(t, bAt, bStep, bRows),
          NVVM::MMAShapeAttr::get(ctx, 64, t.nChunk, t.kStep), wgmmaType(t.operands),
          wgmmaType(t.operands), NVVM::WGMMATypes::f32,
          zero ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
          NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
          // B "row" (N-major) sets the transpose bit.
          bAt.nMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col, NVVM::MMAIntOverflowAttr());
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc());
    if (deferWait) {
      inFlight.push_back(acc);
      continue;
    }
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc(), 0);
    if (fragment || results) {
      takeAccumulators(t, round, acc, fragment, results);
      continue;
    }
    forEachFragmentPair(t, mTile, nPart, [&](int64_t reg, Value row, Value col) {
      storeFragmentPair(t, dBase, row, col, LLVM::ExtractValueOp::create(b, loc(), acc, reg),
                        LLVM::ExtractValueOp::create(b, loc(), acc, reg + 1));
    });
  }
  return inFlight;
}

void GpuKernelLowering::storeFragmentPair(const MmaTiling &t, Value dBase, Value row, Value col,
                                          Value x0, Value x1) {
  OpBuilder::InsertionGuard guard(b);
  Value inside;
  if (t.M % 64)
    inside = below(row, t.M);
  if (t.N % 8)
    inside = andOf(inside, below(col, t.N));
  if (inside)
    enterIf(inside);
  // A column past an odd N is never read; the row's padding holds it.
  Type f32 = b.getF32Type();
  Value pair = vectorOf({x0, x1});
  LLVM::StoreOp::create(b, loc(), pair,
                        sharedElem(dBase, f32, add(mul(row, cIndex(t.dStride)), col)),
                        t.dStride % 2 ? 4 : 8);
}

void GpuKernelLowering::issueTcgen05Items(const MmaTiling &t, OperandAt a, OperandAt bAt,
                                          Value done, const ResidentPlan *onto,
                                          ArrayRef<const RingOperand *> freed) {
  assert(!bAt.nMajor && "tcgen05 products stage B K-major");
  bool aSwizzled = a.swizzled, bSwizzled = bAt.swizzled;
  using Operands = MmaTiling::Operands;
  MLIRContext *ctx = b.getContext();
  const RolePlan &rp = productRole();
  auto cta1 = NVVM::CTAGroupKindAttr::get(ctx, NVVM::CTAGroupKind::CTA_1);
  tcgen05Fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  auto kind = NVVM::Tcgen05MMAKindAttr::get(
      ctx, t.operands == Operands::TF32 ? NVVM::Tcgen05MMAKind::TF32 : NVVM::Tcgen05MMAKind::F16);
  Value idesc = cI32(t.instructionDescriptor());
  // The K steps run as a loop: one thread issues them, and unrolled, the
  // hoisted descriptors of every step would hold registers of the role.
  for (int64_t item = 0; item < t.items(); ++item)
    for (int64_t part = 0; part < t.aParts(); ++part) {
      int64_t mTile = item / t.nParts, nPart = item % t.nParts;
      int64_t aStart = part * t.aPartBytes() + mTile * t.instrM * t.blockBytes(aSwizzled);
      int64_t bStart = nPart * t.bPartStride(bSwizzled);
      int64_t columns = onto ? onto->columnOffset : rp.tmemColumnOffset;
      Value d = tmemAt(cI32(columns + item * t.nChunk));
      auto steps = scf::ForOp::create(b, loc(), cIndex(0), cIndex(t.kSteps()), cIndex(1));
      OpBuilder::InsertionGuard inLoop(b);
      b.setInsertionPoint(steps.getBody()->getTerminator());
      Value s = steps.getInductionVar();
      // linearOffset of K step s: whole K blocks, then bytes into one.
      auto stepOffset = [&](int64_t start, int64_t rows, bool swizzled) {
        int64_t block = t.blockBytes(swizzled);
        Value kByte = mul(s, cIndex(32));
        return add(cIndex(start), add(mul(arith::DivUIOp::create(b, loc(), kByte, cIndex(block)),
                                          cIndex(rows * block)),
                                      arith::RemUIOp::create(b, loc(), kByte, cIndex(block))));
      };
      // Onto a resident tile every step accumulates; otherwise the first
      // step (of a split A's first part) overwrites what the last product left.
      Value accumulate =
          onto || part
              ? arith::ConstantIntOp::create(b, loc(), 1, 1).getResult()
              : arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ne, s, cIndex(0)).getResult();
      NVVM::Tcgen05MMAOp::create(
          b, loc(), kind, cta1, NVVM::Tcgen05MMACollectorOpAttr(), UnitAttr(), d,
          operandDescriptor(t, a, stepOffset(aStart, t.rowsA, aSwizzled), t.rowsA),
          operandDescriptor(t, bAt, stepOffset(bStart, t.rowsB, bSwizzled), t.rowsB), idesc,
          accumulate, Value(), Value());
    }
  // Arrives on the barrier once every product above has finished; so do
  // the commits that free the ring stages the products read in place.
  NVVM::Tcgen05CommitOp::create(b, loc(), done, Value(), cta1);
  for (const RingOperand *r : freed)
    NVVM::Tcgen05CommitOp::create(b, loc(), emptyBarrier(*r->ring, r->stage), Value(), cta1);
}

void GpuKernelLowering::waitCounted(Value barrier) {
  Type i32 = b.getI32Type();
  Value waits = LLVM::LoadOp::create(b, loc(), i32, mmaWaits);
  waitBarrier(barrier, arith::AndIOp::create(b, loc(), waits, cI32(1)));
  LLVM::StoreOp::create(b, loc(), arith::AddIOp::create(b, loc(), waits, cI32(1)), mmaWaits);
}

void GpuKernelLowering::issueTcgen05(const MmaTiling &t, OperandAt a, OperandAt bAt,
                                     const ResidentPlan *onto,
                                     ArrayRef<const RingOperand *> freed) {
  // The last products' columns were read (tcgen05.wait::ld) before the
  // barrier; the fences order those reads before the MMAs that overwrite them.
  tcgen05Fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  syncRole();
  Value barrier = smemAt(cIndex(productRole().mmaBarrierOffset));
  {
    OpBuilder::InsertionGuard guard(b);
    enterLeaderOnly();
    issueTcgen05Items(t, a, bAt, barrier, onto, freed);
  }
  waitCounted(barrier);
  tcgen05Fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  if (!onto)
    readTensorMemory(t);
}

void GpuKernelLowering::handOffProduct(const MmaTiling &t, bool readBack) {
  const RolePlan &rp = plan.roles[role];
  bool tcgen05 = t.kind == MmaTiling::Kind::Tcgen05;
  // Every thread's staging stores (and, for tcgen05, its reads of the last
  // product's columns) are ordered before the issuer's MMAs by the arrive.
  if (tcgen05)
    tcgen05Fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  NVVM::MBarrierArriveOp::create(b, loc(), Type(), smemAt(cIndex(rp.mmaReadyOffset)), Value());
  waitCounted(smemAt(cIndex(rp.mmaBarrierOffset)));
  if (!tcgen05)
    return; // the issuing warpgroup wrote the result rows
  tcgen05Fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  if (readBack)
    readTensorMemory(t);
}

LogicalResult GpuKernelLowering::issueServedProduct(DotOp op, MmaTiling::Kind kind) {
  const RolePlan &rp = plan.roles[role], &served = plan.roles[rp.serves];
  // wgmma's items are dealt to the issuing warpgroup; tcgen05 plans as the
  // served role does (its warps read the columns back). Either way the
  // operands lie where the served role staged them, swizzled as it chose.
  FailureOr<Product> planned =
      planProduct(op, kind, kind == MmaTiling::Kind::Wgmma ? rp.numWarps : served.numWarps);
  if (failed(planned))
    return failure();
  const MmaTiling &t = planned->t;
  if (planned->pair)
    pairedSeconds.insert(planned->pair->second);
  auto [a, bAt] = operandsAt(*planned);
  waitCounted(smemAt(cIndex(served.mmaReadyOffset)));
  Value done = smemAt(cIndex(served.mmaBarrierOffset));
  if (kind == MmaTiling::Kind::Wgmma) {
    issueWgmma(t, a, bAt);
    // Each thread's result stores are ordered before its arrive.
    NVVM::MBarrierArriveOp::create(b, loc(), Type(), done, Value());
    return success();
  }
  OpBuilder::InsertionGuard guard(b);
  enterLeaderOnly();
  issueTcgen05Items(t, a, bAt, done, accumulatesOnto(op), planned->freed);
  return success();
}

void GpuKernelLowering::forEachColumnBlock(
    const MmaTiling &t, int64_t columnBase,
    function_ref<void(Value at, Value row, Value col0, Value inside)> visit) {
  Type i32 = b.getI32Type();
  // Each warp reaches the lanes of its quarter (its warp index in the CTA
  // mod 4): 32 rows of a 128-row product, or 16 (lanes 0-15 of the quarter)
  // of a 64-row one. The role's warpgroups take blocks of columns in turn.
  Value quarter = arith::RemUIOp::create(
      b, loc(), arith::DivUIOp::create(b, loc(), tid, cIndex(32)), cIndex(4));
  Value wg = arith::DivUIOp::create(b, loc(), warp, cIndex(4));
  Value laneField = arith::ShLIOp::create(
      b, loc(), mul(arith::IndexCastOp::create(b, loc(), i32, quarter), cI32(32)), cI32(16));
  int64_t rowsPerQuarter = t.instrM / 4, perItem = t.nChunk / t.loadColumns;
  Value rowInTile = add(mul(quarter, cIndex(rowsPerQuarter)), lane);
  for (int64_t round = 0; round < t.loadRounds(); ++round) {
    OpBuilder::InsertionGuard guard(b);
    Value block = warpgroupTurn(wg, round, t.warpgroups, t.loadBlocks());
    Value item = arith::DivUIOp::create(b, loc(), block, cIndex(perItem));
    Value inItem = arith::RemUIOp::create(b, loc(), block, cIndex(perItem));
    Value column = add(cIndex(columnBase),
                       add(mul(item, cIndex(t.nChunk)), mul(inItem, cIndex(t.loadColumns))));
    Value at = tmemAt(arith::AddIOp::create(b, loc(), laneField,
                                            arith::IndexCastOp::create(b, loc(), i32, column)));
    Value mTile = arith::DivUIOp::create(b, loc(), item, cIndex(t.nParts));
    Value nPart = arith::RemUIOp::create(b, loc(), item, cIndex(t.nParts));
    Value row = add(mul(mTile, cIndex(t.instrM)), rowInTile);
    Value inside;
    if (rowsPerQuarter < 32)
      inside = below(lane, rowsPerQuarter);
    if (t.M % t.instrM)
      inside = andOf(inside, below(row, t.M));
    Value col0 = add(mul(nPart, cIndex(t.nChunk)), mul(inItem, cIndex(t.loadColumns)));
    visit(at, row, col0, inside);
  }
}

SmallVector<Value> GpuKernelLowering::loadColumns(Value at, int64_t n) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  Value loaded = NVVM::Tcgen05LdOp::create(
      b, loc(), VectorType::get({n}, i32), UnitAttr(),
      NVVM::Tcgen05LdStShapeAttr::get(ctx, NVVM::Tcgen05LdStShape::SHAPE_32X32B), at, Value());
  // The loaded registers are defined only after tcgen05.wait::ld, but the
  // wait as an intrinsic names none of them, and LLVM moves their uses
  // above it. The wait goes through the registers instead.
  SmallVector<Value> words;
  for (int64_t j = 0; j < n; ++j)
    words.push_back(LLVM::ExtractElementOp::create(b, loc(), loaded, cI32(j)));
  Value waited = throughAsm(b, loc(), words, "r", "tcgen05.wait::ld.sync.aligned;");
  SmallVector<Value> out;
  for (int64_t j = 0; j < n; ++j)
    out.push_back(LLVM::ExtractValueOp::create(b, loc(), waited, j));
  return out;
}

void GpuKernelLowering::copyColumnsToRows(const MmaTiling &t, int64_t columnBase) {
  Type f32 = b.getF32Type();
  Value dBase = stagingBase(t.dOffset);
  auto quadType = VectorType::get({4}, f32);
  forEachColumnBlock(t, columnBase, [&](Value at, Value row, Value col0, Value inside) {
    SmallVector<Value> words = loadColumns(at, t.loadColumns);
    if (inside)
      enterIf(inside);
    // Columns past N land in the row's padding, which nobody reads.
    Value rowStart = add(mul(row, cIndex(t.dStride)), col0);
    for (int64_t q = 0; q < t.loadColumns / 4; ++q) {
      Value quad = LLVM::UndefOp::create(b, loc(), quadType);
      for (int64_t j = 0; j < 4; ++j)
        quad = LLVM::InsertElementOp::create(
            b, loc(), quad, LLVM::BitcastOp::create(b, loc(), f32, words[4 * q + j]), cI32(j));
      LLVM::StoreOp::create(b, loc(), quad, sharedElem(dBase, f32, add(rowStart, cIndex(4 * q))),
                            16);
    }
  });
}

MmaTiling GpuKernelLowering::residentTiling(const ResidentPlan &res) {
  std::string why;
  // KernelPlan sized the columns from this plan: it cannot fail here.
  MmaTiling t = *plan.updateTiling(res, why);
  // A resident in registers meets shared memory only where it is written
  // and read whole, outside its update: its rows start the area.
  if (res.inRegisters)
    t.placeStagingAreas(/*stageA=*/false, /*stageB=*/false);
  return t;
}

void GpuKernelLowering::writeResident(const ResidentPlan &res, Value tile) {
  MmaTiling t = residentTiling(res);
  if (res.inFragmentLayout) {
    // The tile lies as the accumulators do: register for register.
    const Regs &from = regs[tile];
    Regs fragment(t.rounds() * t.nChunk / 2);
    for (int64_t round = 0; round < t.rounds(); ++round)
      for (int64_t j = 0; j < t.nChunk / 2; ++j)
        fragment[round * t.nChunk / 2 + j] = from[t.fragmentRegister(round, j)];
    fragments[&res] = fragment;
    return;
  }
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  Value dBase = stagingBase(t.dOffset);
  stageOutWith(
      tile, [](Value v) { return v; },
      [&](ArrayRef<Value> c) {
        return sharedElem(dBase, f32, add(mul(c[0], cIndex(t.dStride)), c[1]));
      });
  syncRole();
  if (res.inRegisters) {
    // Each thread takes its fragment's elements; the rows padding M to 64
    // start at 0 (the area holds only the tile's rows).
    Regs fragment(t.rounds() * t.nChunk / 2);
    Value zero = scalarConstant(b, loc(), f32, 0.0);
    forEachResidentPair(t, [&](int64_t reg, Value row, Value col) {
      Value inside = t.M % 64 ? below(row, t.M) : Value();
      Value at = add(mul(inside ? arith::SelectOp::create(b, loc(), inside, row, cIndex(0)) : row,
                         cIndex(t.dStride)),
                     col);
      for (int64_t j = 0; j < 2; ++j) {
        Value x = LLVM::LoadOp::create(b, loc(), f32, sharedElem(dBase, f32, add(at, cIndex(j))));
        fragment[reg + j] = inside ? arith::SelectOp::create(b, loc(), inside, x, zero) : x;
      }
    });
    fragments[&res] = fragment;
    syncRole(); // the rows are free for the next op
    return;
  }
  auto quadType = VectorType::get({4}, f32);
  forEachColumnBlock(t, res.columnOffset, [&](Value at, Value row, Value col0, Value inside) {
    // Lanes past the tile's rows store what row 0 holds into columns' lanes
    // no product reads.
    if (inside)
      row = arith::SelectOp::create(b, loc(), inside, row, cIndex(0));
    Value rowStart = add(mul(row, cIndex(t.dStride)), col0);
    Value words = LLVM::UndefOp::create(b, loc(), VectorType::get({t.loadColumns}, i32));
    for (int64_t q = 0; q < t.loadColumns / 4; ++q) {
      Value quad = LLVM::LoadOp::create(b, loc(), quadType,
                                        sharedElem(dBase, f32, add(rowStart, cIndex(4 * q))), 16);
      for (int64_t j = 0; j < 4; ++j)
        words = LLVM::InsertElementOp::create(
            b, loc(), words,
            LLVM::BitcastOp::create(b, loc(), i32,
                                    LLVM::ExtractElementOp::create(b, loc(), quad, cI32(j))),
            cI32(4 * q + j));
    }
    storeColumns(at, words);
  });
  NVVM::Tcgen05WaitOp::create(b, loc(), NVVM::Tcgen05WaitKind::STORE);
  syncRole(); // the rows are free for the next op
}

void GpuKernelLowering::readResident(const ResidentPlan &res, Value result) {
  MmaTiling t = residentTiling(res);
  if (res.inFragmentLayout) {
    const Regs &fragment = fragments[&res];
    Regs out(t.rounds() * t.nChunk / 2);
    for (int64_t round = 0; round < t.rounds(); ++round)
      for (int64_t j = 0; j < t.nChunk / 2; ++j)
        out[t.fragmentRegister(round, j)] = fragment[round * t.nChunk / 2 + j];
    regs[result] = out;
    return;
  }
  if (res.inRegisters) {
    const Regs &fragment = fragments[&res];
    Value dBase = stagingBase(t.dOffset);
    forEachResidentPair(t, [&](int64_t reg, Value row, Value col) {
      storeFragmentPair(t, dBase, row, col, fragment[reg], fragment[reg + 1]);
    });
  } else {
    copyColumnsToRows(t, res.columnOffset);
  }
  syncRole();
  Value dBase = stagingBase(t.dOffset);
  regs[result] = stageIn(layoutOf(result), b.getF32Type(), dBase, [&](ArrayRef<Value> c) {
    return add(mul(c[0], cIndex(t.dStride)), c[1]);
  });
  syncRole();
}

void GpuKernelLowering::scaleResident(const ResidentPlan &res) {
  if (res.rowFactor) {
    // One factor a row, broadcast in the fragment's layout (AssignLayouts
    // gives it that): each accumulator takes the register beside it.
    MmaTiling t = residentTiling(res);
    const Regs &by = regs[res.factor];
    Regs &fragment = fragments[&res];
    for (int64_t round = 0; round < t.rounds(); ++round)
      for (int64_t j = 0; j < t.nChunk / 2; ++j) {
        Value &x = fragment[round * t.nChunk / 2 + j];
        x = arith::MulFOp::create(b, loc(), x, by[t.fragmentRegister(round, j)]);
      }
    return;
  }
  Value factor = regs[res.factor][0];
  if (res.inRegisters) {
    for (Value &x : fragments[&res])
      x = arith::MulFOp::create(b, loc(), x, factor);
    return;
  }
  MmaTiling t = residentTiling(res);
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  forEachColumnBlock(t, res.columnOffset, [&](Value at, Value, Value, Value) {
    SmallVector<Value> words = loadColumns(at, t.loadColumns);
    Value scaled = LLVM::UndefOp::create(b, loc(), VectorType::get({t.loadColumns}, i32));
    for (auto [j, w] : llvm::enumerate(words)) {
      Value x = arith::MulFOp::create(b, loc(), LLVM::BitcastOp::create(b, loc(), f32, w), factor);
      scaled = LLVM::InsertElementOp::create(b, loc(), scaled,
                                             LLVM::BitcastOp::create(b, loc(), i32, x), cI32(j));
    }
    storeColumns(at, scaled);
  });
  // The stores land before the fence and barrier that hand the product over.
  NVVM::Tcgen05WaitOp::create(b, loc(), NVVM::Tcgen05WaitKind::STORE);
}

void GpuKernelLowering::addScaledProduct(const ResidentPlan &res) {
  if (res.factor && !res.scalesAtMul)
    scaleResident(res);
  // The product ran into accumulators of its own and kept its result in
  // fragmentLayout() (AssignLayouts gives every product that keeps its
  // result that layout); the resident holds the accumulators in their own
  // order (writeResident).
  MmaTiling t = residentTiling(res);
  DotOp update = res.update;
  const Regs &product = regs[update.getResult()];
  assert(static_cast<int64_t>(product.size()) == t.rounds() * t.nChunk / 2 &&
         "the scaled product is in the resident's fragment layout");
  Value by = regs[res.productFactor][0];
  Regs &fragment = fragments[&res];
  for (int64_t round = 0; round < t.rounds(); ++round)
    for (int64_t j = 0; j < t.nChunk / 2; ++j) {
      Value &x = fragment[round * t.nChunk / 2 + j];
      x = LLVM::FMAOp::create(b, loc(), product[t.fragmentRegister(round, j)], by, x);
    }
}

void GpuKernelLowering::stageResidentOperand(const ResidentPlan &res, Type copyElem, bool isLhs,
                                             const MmaTiling &t, int64_t region, bool swizzled,
                                             int64_t rowOffset, int64_t part) {
  MmaTiling held = residentTiling(res);
  Type f32 = b.getF32Type(), stored = stagedOperandType(t);
  // Rounded to the copy's type first, as the cast in the source says; a
  // split A's part of that.
  auto toStored = [&](Value x) {
    x = scalarCast(b, loc(), x, copyElem);
    return t.splitA && isLhs ? splitPart(x, stored, part) : scalarCast(b, loc(), x, stored);
  };
  int64_t rows = t.stagedRows(isLhs), perPiece = t.perCore();
  Value areaStart = cIndex(plan.roles[role].stagingOffset + region);
  if (res.inRegisters) {
    // A thread's pair is two consecutive elements of K in one row: one
    // store of both, rounded to the copy's type first as the cast says.
    const Regs &fragment = fragments[&res];
    auto pairType = VectorType::get({2}, stored);
    forEachResidentPair(held, [&](int64_t reg, Value row, Value col) {
      OpBuilder::InsertionGuard guard(b);
      if (held.M % 64)
        enterIf(below(row, held.M));
      Value pair = LLVM::UndefOp::create(b, loc(), pairType);
      for (int64_t j = 0; j < 2; ++j)
        pair = LLVM::InsertElementOp::create(b, loc(), pair, toStored(fragment[reg + j]), cI32(j));
      Value offset = operandByteOffset(t, swizzled, rows, add(row, cIndex(rowOffset)), col);
      LLVM::StoreOp::create(b, loc(), pair, smemAt(add(areaStart, offset)), 2 * t.elemBytes);
    });
    return;
  }
  auto pieceType = VectorType::get({perPiece}, stored);
  forEachColumnBlock(held, res.columnOffset, [&](Value at, Value row, Value col0, Value inside) {
    SmallVector<Value> words = loadColumns(at, held.loadColumns);
    if (inside)
      enterIf(inside);
    Value stagedRow = add(row, cIndex(rowOffset));
    // One 16-byte piece of the row at a time: K-major, a piece is contiguous.
    for (int64_t j = 0; j < held.loadColumns; j += perPiece) {
      Value piece = LLVM::UndefOp::create(b, loc(), pieceType);
      for (int64_t e = 0; e < perPiece; ++e)
        piece = LLVM::InsertElementOp::create(
            b, loc(), piece, toStored(LLVM::BitcastOp::create(b, loc(), f32, words[j + e])),
            cI32(e));
      Value offset = operandByteOffset(t, swizzled, rows, stagedRow, add(col0, cIndex(j)));
      LLVM::StoreOp::create(b, loc(), piece, smemAt(add(areaStart, offset)), 16);
    }
  });
}

} // namespace kiln::nvvm
