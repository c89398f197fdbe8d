//===- WarpProducts.cpp - dot as warp-level mma.sync ----------------------===//
//
// tile.dot in convert-tile-to-nvvm under `mma: mma_sync` (WarpMmaTiling's
// plan): both operands staged row-major in the role's staging area, one
// barrier, then each warp reads its A and B fragments with ldmatrix and
// issues mma.sync.m16n8k16 for each of its m16 x n8 blocks and k steps.
// The result stays in the accumulator fragments, or goes through a
// row-major f32 area where its layout is another.
//
//===----------------------------------------------------------------------===//
#include "lowering/analysis/WarpMma.h"
#include "lowering/conversion/TileToNVVM/GpuKernelLowering.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::tile;

namespace kiln::nvvm {

LogicalResult GpuKernelLowering::lowerWarpMmaDot(DotOp op) {
  if (pairedSeconds.contains(op))
    return success(); // its result came with the dot before it
  int64_t warps = plan.productWarps(role, /*wgmma=*/false);
  WarpMmaStaging staging;
  std::string why;
  FailureOr<WarpMmaTiling> first = WarpMmaTiling::get(op, warps, staging, why);
  if (failed(first)) {
    InFlightDiagnostic diag = op.emitOpError("under 'mma: mma_sync' ") << why;
    noteScheduleLine(diag, schedule, {"mma"});
    return diag;
  }
  // The dots after it whose operands exist here run with it, behind the
  // same barrier (the chunk kernel's q q^T reads q where q k^T staged it).
  // One that does not plan is lowered on its own, and reports its error
  // then.
  SmallVector<DotOp, 4> dots{op};
  SmallVector<WarpMmaTiling, 4> plans{*first};
  WarpMmaTiling::growGroup(op, warps, staging, dots, plans, [&](DotOp d) { return runs(d); });
  for (DotOp d : ArrayRef(dots).drop_front())
    pairedSeconds.insert(d);
  movedB.clear();

  for (const WarpMmaStaging::Tile &st : staging.tiles)
    stageRows(st.tile, stagingBase(st.offset), st.pitch / 2);
  bool throughArea = llvm::any_of(plans, [](const WarpMmaTiling &t) { return !t.keepsResult; });
  // Products from and into registers alone touch no shared memory: no
  // barrier before or after them.
  bool usesStaging = !staging.tiles.empty() || throughArea;
  if (usesStaging)
    syncRole();
  for (auto [d, t] : llvm::zip(dots, plans))
    multiplyWarpMma(d, t);
  if (throughArea) {
    syncRole();
    for (auto [d, t] : llvm::zip(dots, plans))
      if (!t.keepsResult)
        readResultArea(d, stagingBase(t.dOffset), t.dStride, 0, 0);
  }
  if (usesStaging)
    syncRole(); // the staging area is free again
  return success();
}

void GpuKernelLowering::stageRows(Value tile, Value base, int64_t pitch) {
  TileLayout l = layoutOf(tile);
  Type elem = cast<TileType>(tile.getType()).getElementType();
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
  // A thread's run along a row goes out as one store of up to 16 bytes (a
  // run starts at a multiple of its length, and rows are 16-byte aligned):
  // LLVM merges neighbouring stores itself, nvcc only up to 8 bytes.
  int64_t run = std::min<int64_t>(l.contiguous(1), 16 / elemBytes);
  OpBuilder::InsertionGuard guard(b);
  if (Value owner = ownerPredicate(l))
    enterIf(owner);
  SmallVector<Value> bases = threadBases(l);
  const Regs &x = regs[tile];
  for (int64_t r = 0; r < l.numRegs(); r += run) {
    SmallVector<Value> c = regCoords(l, bases, r);
    Value at = sharedElem(base, elem, add(mul(c[0], cIndex(pitch)), c[1]));
    Value v = x[r];
    ArrayRef<Value> elems = ArrayRef<Value>(x).slice(r, run);
    if (run > 1 && !(v = wholeVector(elems, VectorType::get({run}, elem))))
      v = vectorOf(elems);
    LLVM::StoreOp::create(b, loc(), v, at, run * elemBytes);
  }
}

/// An 8 x 8 matrix of 16-bit elements held two a lane (lane l: row l / 4,
/// columns 2 (l % 4) and 2 (l % 4) + 1), transposed across the warp.
/// Free of side effects, so that ptxas (and nvcc, for the CUDA source)
/// schedule it as they like: it is made, as its mma.sync uses are, where
/// the whole warp runs.
Value GpuKernelLowering::transposeMatrix(Value word) {
  return LLVM::InlineAsmOp::create(b, loc(), b.getI32Type(), ValueRange{word},
                                   b.getStringAttr("movmatrix.sync.aligned.m8n8.trans.b16 $0, $1;"),
                                   b.getStringAttr("=r,r"), UnitAttr(), UnitAttr(),
                                   LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}

void GpuKernelLowering::multiplyWarpMma(DotOp op, const WarpMmaTiling &t) {
  Type i8 = b.getI8Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
  // This warp's place in the grid (warps past it repeat the first ones).
  Value wr = arith::RemUIOp::create(b, loc(), arith::DivUIOp::create(b, loc(), warp, cIndex(t.wn)),
                                    cIndex(t.wm));
  Value wc = arith::RemUIOp::create(b, loc(), warp, cIndex(t.wn));
  // ldmatrix: lane l gives the address of row l % 8 of matrix l / 8.
  Value rowInMatrix = arith::RemUIOp::create(b, loc(), lane, cIndex(8));
  Value which = arith::DivUIOp::create(b, loc(), lane, cIndex(8));
  Value whichLow = arith::RemUIOp::create(b, loc(), which, cIndex(2));
  Value whichHigh = arith::DivUIOp::create(b, loc(), which, cIndex(2));
  Value stagingAt = stagingBase();
  auto load = [&](int64_t offset, int64_t pitch, Value row, Value col, int64_t num, bool trans) {
    Value byte = add(cIndex(offset), add(mul(row, cIndex(pitch)), mul(col, cIndex(2))));
    Type type = num == 1
                    ? i32
                    : LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(num, i32));
    Value loaded = NVVM::LdMatrixOp::create(b, loc(), type, sharedElem(stagingAt, i8, byte), num,
                                            trans ? NVVM::MMALayout::col : NVVM::MMALayout::row,
                                            NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
                                            NVVM::LdStMatrixEltType::B16);
    SmallVector<Value> words;
    for (int64_t m = 0; m < num; ++m)
      words.push_back(num == 1 ? loaded : LLVM::ExtractValueOp::create(b, loc(), loaded, m));
    return words;
  };
  // A's fragment of m16 block `mb` at k step `ks`: four matrices, (rows,
  // k) at (0, 0), (8, 0), (0, 8), (8, 8).
  auto aFragment = [&](int64_t mb, int64_t ks) {
    Value m0 = mul(add(wr, cIndex(mb * t.wm)), cIndex(16));
    Value mOff = add(m0, mul(whichLow, cIndex(8))), kOff = mul(whichHigh, cIndex(8));
    if (t.aTransposed) // staged [K, M]: its rows are k
      return load(t.aOffset, t.aPitch, add(add(cIndex(16 * ks), kOff), rowInMatrix), mOff, 4,
                  /*trans=*/true);
    return load(t.aOffset, t.aPitch, add(mOff, rowInMatrix), add(cIndex(16 * ks), kOff), 4,
                /*trans=*/false);
  };
  // B's fragments of n8 blocks nb (and nb + 1 where `two`): per block, k
  // rows 0-7 then 8-15.
  auto bFragments = [&](int64_t nb, bool two, int64_t ks) {
    Value n0 = mul(add(wc, cIndex(nb * t.wn)), cIndex(8));
    Value nOff = two ? add(n0, mul(whichHigh, cIndex(8 * t.wn))) : n0;
    Value kOff = add(cIndex(16 * ks), mul(whichLow, cIndex(8)));
    if (t.bTransposed) // staged [N, K]: its rows are n
      return load(t.bOffset, t.bPitch, add(nOff, rowInMatrix), kOff, two ? 4 : 2,
                  /*trans=*/false);
    return load(t.bOffset, t.bPitch, add(kOff, rowInMatrix), nOff, two ? 4 : 2, /*trans=*/true);
  };

  TileLayout l = layoutOf(op.getResult());
  int64_t mBlocks = t.mBlocks(), nBlocks = t.nBlocks();
  // A's fragment from its registers (t.aInRegisters), two elements a word.
  auto aFromRegisters = [&](int64_t mb, int64_t ks) {
    const Regs &x = regs[op.getLhs()];
    SmallVector<Value> words;
    for (int64_t e = 0; e < 8; e += 2) {
      Value pair = vectorOf({x[t.aRegister(mb, ks, e)], x[t.aRegister(mb, ks, e + 1)]});
      words.push_back(t.bf16 ? LLVM::BitcastOp::create(b, loc(), i32, pair).getResult() : pair);
    }
    return words;
  };
  // Accumulators per (mb, nb): four f32, from the tile accumulated onto
  // where it is in the fragments' layout.
  SmallVector<SmallVector<Value, 4>> acc(mBlocks * nBlocks);
  for (int64_t mb = 0; mb < mBlocks; ++mb)
    for (int64_t nb = 0; nb < nBlocks; ++nb)
      for (int64_t r = 0; r < 4; ++r)
        acc[mb * nBlocks + nb].push_back(t.keepsResult && op.getAcc()
                                             ? regs[op.getAcc()][t.fragmentRegister(mb, nb, r)]
                                             : scalarConstant(b, loc(), f32, 0.0));
  auto mmaType = t.bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  Type word = t.bf16 ? i32 : Type(VectorType::get({2}, b.getF16Type()));
  auto asWords = [&](ArrayRef<Value> v) {
    SmallVector<Value> out;
    for (Value x : v)
      out.push_back(t.bf16 ? x : LLVM::BitcastOp::create(b, loc(), word, x).getResult());
    return out;
  };
  // B's fragment of n8 block `nb` at k step `ks` from its registers
  // (t.bInRegisters): the tile holds B's rows k as an accumulator holds
  // its rows, two neighbouring columns a lane, so each 8 x 8 block is
  // packed and transposed across the warp (`movmatrix`), giving each lane
  // two neighbouring rows of one column, as the B fragment takes them.
  auto bFromRegisters = [&](int64_t nb, int64_t ks) {
    const Regs &x = regs[op.getRhs()];
    SmallVector<Value> &words = movedB[{op.getRhs(), ks, nb}];
    if (!words.empty())
      return asWords(words); // the pair's other product read the same B
    for (int64_t half = 0; half < 2; ++half) {
      Value pair =
          vectorOf({x[t.bRegister(ks, nb, 2 * half)], x[t.bRegister(ks, nb, 2 * half + 1)]});
      words.push_back(transposeMatrix(LLVM::BitcastOp::create(b, loc(), i32, pair)));
    }
    return asWords(words);
  };
  Type accType = LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(4, f32));
  for (int64_t ks = 0; ks < t.kSteps(); ++ks) {
    SmallVector<SmallVector<Value>> a, bw(nBlocks);
    for (int64_t mb = 0; mb < mBlocks; ++mb)
      a.push_back(t.aInRegisters ? aFromRegisters(mb, ks) : asWords(aFragment(mb, ks)));
    for (int64_t nb = 0; nb < nBlocks && t.bInRegisters; ++nb)
      bw[nb] = bFromRegisters(nb, ks);
    for (int64_t nb = 0; nb < nBlocks && !t.bInRegisters; nb += 2) {
      bool two = nb + 1 < nBlocks;
      SmallVector<Value> words = asWords(bFragments(nb, two, ks));
      bw[nb] = {words[0], words[1]};
      if (two)
        bw[nb + 1] = {words[2], words[3]};
    }
    for (int64_t mb = 0; mb < mBlocks; ++mb)
      for (int64_t nb = 0; nb < nBlocks; ++nb) {
        SmallVector<Value, 4> &c = acc[mb * nBlocks + nb];
        Value d = NVVM::MmaOp::create(
            b, loc(), accType, a[mb], bw[nb], c, {16, 8, 16}, std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{mmaType, mmaType},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
        for (int64_t r = 0; r < 4; ++r)
          c[r] = LLVM::ExtractValueOp::create(b, loc(), d, r);
      }
  }

  if (t.keepsResult) {
    Regs out(l.numRegs());
    for (int64_t mb = 0; mb < mBlocks; ++mb)
      for (int64_t nb = 0; nb < nBlocks; ++nb)
        for (int64_t r = 0; r < 4; ++r)
          out[t.fragmentRegister(mb, nb, r)] = acc[mb * nBlocks + nb][r];
    regs[op.getResult()] = out;
    return;
  }
  // Through the result area: each fragment's element at (row, column),
  // written by the warps of the grid (not their copies).
  OpBuilder::InsertionGuard guard(b);
  if (t.wm * t.wn < plan.productWarps(role, /*wgmma=*/false))
    enterIf(below(warp, t.wm * t.wn));
  Value dBase = stagingBase(t.dOffset);
  Value g = arith::DivUIOp::create(b, loc(), lane, cIndex(4));
  Value pair = mul(arith::RemUIOp::create(b, loc(), lane, cIndex(4)), cIndex(2));
  for (int64_t mb = 0; mb < mBlocks; ++mb)
    for (int64_t nb = 0; nb < nBlocks; ++nb)
      for (int64_t r = 0; r < 4; ++r) {
        Value row = add(add(mul(add(wr, cIndex(mb * t.wm)), cIndex(16)), g), cIndex(8 * (r / 2)));
        Value col = add(add(mul(add(wc, cIndex(nb * t.wn)), cIndex(8)), pair), cIndex(r % 2));
        LLVM::StoreOp::create(b, loc(), acc[mb * nBlocks + nb][r],
                              sharedElem(dBase, f32, add(mul(row, cIndex(t.dStride)), col)));
      }
}

} // namespace kiln::nvvm
