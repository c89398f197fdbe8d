//===- ConvertTileToNVVM.cpp - tile kernels to NVVM kernels ---------------===//
//
// The GPU path. Each tile.kernel becomes an llvm.func marked nvvm.kernel that
// one CTA runs per grid point. Every tile lives in registers, spread over the
// CTA's threads as its #tile.layout says (tile-assign-layouts chose it): a
// tile becomes the list of scalar SSA values this thread holds, so register
// arrays are never indexed at run time. Views become global pointers indexed
// row-major from the runtime dims; loads and stores along a contiguous dim
// move up to 16 bytes per access. Reductions combine a thread's registers,
// then lanes by butterfly shuffles, then warps through shared memory.
//
// Warp roles (KernelPlan): each role is one branch of an if/else over the
// warp index and lowers only the ops it runs. A load carried by a TMA
// pipeline becomes, in the role that issues it, a wait on the stage's empty
// mbarrier, an expect-tx arrive and a bulk tensor copy into the stage; in
// the roles that read it, a wait on the stage's full mbarrier, shared-memory
// loads into the tile's registers and an arrive on the empty mbarrier.
// `persistent` wraps each role's body in a loop over grid points.
//
//===----------------------------------------------------------------------===//
#include "lowering/Passes.h"
#include "lowering/conversion/TileToNVVM/GpuKernelLowering.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/SaveAndRestore.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTTILETONVVM
#include "lowering/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::tile;
using namespace kiln::nvvm;

namespace kiln::nvvm {

TileLayout GpuKernelLowering::layoutOf(Value v) { return layoutOfValue(v); }

/// The location the code lowered from `op` carries: its source position,
/// named by its stable ID where it has one.
static LocationAttr locationOf(Operation *op) {
  if (auto id = op->getAttrOfType<StringAttr>(kOpIdAttr))
    return NameLoc::get(id, op->getLoc());
  return op->getLoc();
}

/// A role's branch as its location names it: "role NAME, warps A..B".
static std::string roleTitle(const RolePlan &rp) {
  return "role " + rp.name + ", warps " + std::to_string(rp.firstWarp) + ".." +
         std::to_string(rp.firstWarp + rp.numWarps - 1);
}

Value GpuKernelLowering::laneCoord(const TileLayout &l, unsigned p) {
  if (l.lanes[p] == 1)
    return cIndex(0);
  Value q = arith::DivUIOp::create(b, loc(), lane, cIndex(l.laneStride(p)));
  return arith::RemUIOp::create(b, loc(), q, cIndex(l.lanes[p]));
}

Value GpuKernelLowering::warpCoord(const TileLayout &l, unsigned p) {
  if (l.warps[p] == 1)
    return cIndex(0);
  Value q = arith::DivUIOp::create(b, loc(), warp, cIndex(l.warpStride(p)));
  return arith::RemUIOp::create(b, loc(), q, cIndex(l.warps[p]));
}

Value GpuKernelLowering::threadBase(const TileLayout &l, unsigned d) {
  if (l.isUnit(d))
    return cIndex(0);
  unsigned p = l.dims[d];
  return add(mul(laneCoord(l, p), cIndex(l.laneStep(p))),
             mul(warpCoord(l, p), cIndex(l.size[p] * l.lanes[p])));
}

Value GpuKernelLowering::ownerPredicate(const TileLayout &l) {
  Value pred;
  if (l.laneCount() < 32)
    pred = andOf(pred, arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, lane,
                                             cIndex(l.laneCount())));
  if (l.warpCount() < numWarps())
    pred = andOf(pred, arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, warp,
                                             cIndex(l.warpCount())));
  for (unsigned p : l.replicatedParentDims()) {
    if (l.lanes[p] > 1)
      pred = andOf(pred, eq(laneCoord(l, p), 0));
    if (l.warps[p] > 1)
      pred = andOf(pred, eq(warpCoord(l, p), 0));
  }
  return pred;
}

SmallVector<Value> GpuKernelLowering::threadBases(const TileLayout &l) {
  SmallVector<Value> bases;
  for (unsigned d = 0; d < l.shape.size(); ++d)
    bases.push_back(threadBase(l, d));
  return bases;
}

Value GpuKernelLowering::sharedElem(Value base, Type elem, Value linear) {
  Value off = arith::IndexCastOp::create(b, loc(), b.getI64Type(), linear);
  return LLVM::GEPOp::create(b, loc(), base.getType(), elem, base, ValueRange{off});
}

SmallVector<Value> GpuKernelLowering::regCoords(const TileLayout &l, ArrayRef<Value> bases,
                                                int64_t r) {
  SmallVector<int64_t, 2> ri = l.regIndex(r);
  SmallVector<Value> c;
  for (unsigned d = 0; d < l.shape.size(); ++d)
    c.push_back(add(bases[d], cIndex(l.constOffset(d, ri[d]))));
  return c;
}

Value GpuKernelLowering::rowMajor(ArrayRef<Value> coords, ArrayRef<int64_t> shape) {
  Value linear = cIndex(0);
  for (unsigned d = 0; d < shape.size(); ++d)
    linear = add(mul(linear, cIndex(shape[d])), coords[d]);
  return linear;
}

Value GpuKernelLowering::stagingBase(int64_t extraBytes) {
  return smemAt(cIndex(productRole().stagingOffset + extraBytes));
}

/// Shared memory holds bools as bytes, and f8e4m3 as its bits (memoryType).
static Type stagedType(OpBuilder &b, Type elem) {
  return elem.isInteger(1) ? (Type)b.getI8Type() : memoryType(elem);
}

/// A register of `elem` as shared memory holds it (stagedType), and back.
static Value toStaged(OpBuilder &b, Location l, Value v) {
  Type elem = v.getType(), stored = stagedType(b, elem);
  if (stored == elem)
    return v;
  return elem.isInteger(1) ? arith::ExtUIOp::create(b, l, stored, v).getResult()
                           : arith::BitcastOp::create(b, l, stored, v).getResult();
}
static Value fromStaged(OpBuilder &b, Location l, Value v, Type elem) {
  if (v.getType() == elem)
    return v;
  return elem.isInteger(1) ? arith::TruncIOp::create(b, l, elem, v).getResult()
                           : arith::BitcastOp::create(b, l, elem, v).getResult();
}

void GpuKernelLowering::stageOut(Value tile, Value base) {
  auto type = cast<TileType>(tile.getType());
  Type elem = type.getElementType(), stored = stagedType(b, elem);
  stageOutWith(
      tile, [&](Value v) { return toStaged(b, loc(), v); },
      [&](ArrayRef<Value> c) { return sharedElem(base, stored, rowMajor(c, type.getShape())); });
}

void GpuKernelLowering::stageOutWith(Value tile, function_ref<Value(Value)> convert,
                                     function_ref<Value(ArrayRef<Value>)> address) {
  TileLayout l = layoutOf(tile);
  OpBuilder::InsertionGuard guard(b);
  if (Value owner = ownerPredicate(l)) {
    auto only = scf::IfOp::create(b, loc(), TypeRange{}, owner, false);
    b.setInsertionPoint(only.thenBlock()->getTerminator());
  }
  SmallVector<Value> bases = threadBases(l);
  const Regs &x = regs[tile];
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    Value v = convert(x[r]);
    LLVM::StoreOp::create(b, loc(), v, address(regCoords(l, bases, r)));
  }
}

Regs GpuKernelLowering::stageIn(const TileLayout &l, Type elem, Value base,
                                function_ref<Value(ArrayRef<Value>)> linear) {
  Type stored = stagedType(b, elem);
  SmallVector<Value> bases = threadBases(l);
  Regs out(l.numRegs());
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    Value v = LLVM::LoadOp::create(b, loc(), stored,
                                   sharedElem(base, stored, linear(regCoords(l, bases, r))));
    out[r] = fromStaged(b, loc(), v, elem);
  }
  return out;
}

LogicalResult GpuKernelLowering::lowerCumsum(CumsumOp op) {
  // Through the staging area: the tile goes out row-major, each line along
  // the axis is scanned in place, and every thread reads its elements back.
  // A line of at most 32 32-bit elements is one warp's: a lane an element,
  // log2(n) up-shuffles. Summing each element's prefix from shared memory,
  // as longer lines still do, is a chain of n dependent loads an element: a
  // chunk's 32 decays took 695 instructions that way, a fifth of the fused
  // prefill's chunk role (bench/RESULTS.md, "2026-11-29, evening: source
  // lines").
  auto type = op.getType();
  ArrayRef<int64_t> shape = type.getShape();
  unsigned axis = op.getAxis();
  int64_t n = shape[axis];
  Type elem = type.getElementType();
  bool isFloat = isa<FloatType>(elem);
  Value base = stagingBase();
  stageOut(op.getInput(), base);
  syncRole();
  TileLayout l = layoutOf(op.getResult());
  if (n <= 32 && elem.getIntOrFloatBitWidth() == 32) {
    int64_t inner = 1;
    for (int64_t d : shape.drop_front(axis + 1))
      inner *= d;
    int64_t lines = type.getNumElements() / n, warps = numWarps();
    Type i32 = b.getI32Type();
    Value full = LLVM::ConstantOp::create(b, loc(), i32, -1);
    Value lowest = LLVM::ConstantOp::create(b, loc(), i32, 0); // an up shuffle's lane bound
    Value zero = scalarConstant(b, loc(), elem, 0.0);
    Value inLine = below(lane, n);
    for (int64_t first = 0; first < lines; first += warps) {
      OpBuilder::InsertionGuard guard(b);
      Value line = add(warp, cIndex(first));
      if (first + warps > lines)
        enterIf(below(line, lines));
      // Line (outer, in) holds elements outer * n * inner + i * inner + in.
      Value outer = arith::DivUIOp::create(b, loc(), line, cIndex(inner));
      Value in = arith::RemUIOp::create(b, loc(), line, cIndex(inner));
      Value at = add(add(mul(outer, cIndex(n * inner)), mul(lane, cIndex(inner))), in);
      Value addr = sharedElem(base, elem, at);
      Value v = zero;
      {
        OpBuilder::InsertionGuard read(b);
        auto load = scf::IfOp::create(b, loc(), TypeRange{elem}, inLine, true);
        b.setInsertionPointToStart(load.thenBlock());
        scf::YieldOp::create(b, loc(), ValueRange{LLVM::LoadOp::create(b, loc(), elem, addr)});
        b.setInsertionPointToStart(load.elseBlock());
        scf::YieldOp::create(b, loc(), ValueRange{zero});
        v = load.getResult(0);
      }
      for (int64_t d = 1; d < n; d *= 2) {
        Value offset = LLVM::ConstantOp::create(b, loc(), i32, d);
        Value from = NVVM::ShflOp::create(b, loc(), elem, full, v, offset, lowest,
                                          NVVM::ShflKind::up, UnitAttr());
        from = arith::SelectOp::create(
            b, loc(), arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::uge, lane, cIndex(d)),
            from, zero);
        v = isFloat ? arith::AddFOp::create(b, loc(), v, from).getResult()
                    : arith::AddIOp::create(b, loc(), v, from).getResult();
      }
      enterIf(inLine);
      LLVM::StoreOp::create(b, loc(), v, addr);
    }
    syncRole();
    regs[op.getResult()] =
        stageIn(l, elem, base, [&](ArrayRef<Value> c) { return rowMajor(c, shape); });
    syncRole();
    return success();
  }
  SmallVector<Value> bases = threadBases(l);
  Regs out(l.numRegs());
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<Value> c = regCoords(l, bases, r);
    Value upper = add(c[axis], cIndex(1));
    auto loop = scf::ForOp::create(b, loc(), cIndex(0), upper, cIndex(1),
                                   ValueRange{scalarConstant(b, loc(), elem, 0.0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> src(c);
      src[axis] = loop.getInductionVar();
      Value v = LLVM::LoadOp::create(b, loc(), elem, sharedElem(base, elem, rowMajor(src, shape)));
      Value acc = loop.getRegionIterArgs()[0];
      Value sum = isFloat ? arith::AddFOp::create(b, loc(), acc, v).getResult()
                          : arith::AddIOp::create(b, loc(), acc, v).getResult();
      scf::YieldOp::create(b, loc(), ValueRange{sum});
    }
    out[r] = loop.getResult(0);
  }
  regs[op.getResult()] = out;
  syncRole();
  return success();
}

Value GpuKernelLowering::scratchBuffer(Type elem, int64_t count) {
  OpBuilder::InsertPoint saved = b.saveInsertionPoint();
  b.setInsertionPointToStart(module.getBody());
  // Numbered per kernel; the module's other kernels may have taken a name.
  std::string name;
  do
    name = "__kiln_scratch_" + std::to_string(scratchCount++);
  while (module.lookupSymbol(name));
  auto arrayType = LLVM::LLVMArrayType::get(elem, count);
  LLVM::GlobalOp::create(b, loc(), arrayType, /*isConstant=*/false, LLVM::Linkage::Internal, name,
                         Attribute(), /*alignment=*/16, /*addrSpace=*/3);
  b.restoreInsertionPoint(saved);
  auto ptr3 = LLVM::LLVMPointerType::get(b.getContext(), 3);
  return LLVM::AddressOfOp::create(b, loc(), ptr3, name);
}

LogicalResult GpuKernelLowering::lowerProgramIds(ProgramIdsOp op) {
  unsigned n = op.getIds().size();
  if (n > 3)
    return op.emitOpError("has ") << n << " grid axes; a CUDA grid has at most 3";
  SmallVector<int64_t> order = launchOrder(op);
  Type i32 = b.getI32Type();
  if (plan.persistent) {
    // Resident CTAs stride over the grid points, the first axis of the
    // launch order fastest. The rest of the kernel goes inside the loop.
    if (op->getParentOp() != kernel)
      return op.emitOpError("must be at the top of the kernel for a persistent schedule");
    Value total = cIndex(1);
    for (Value e : op.getExtents())
      total = mul(total, map.lookup(e));
    auto index = [&](Value v) {
      return arith::IndexCastUIOp::create(b, loc(), b.getIndexType(), v);
    };
    Value first = index(NVVM::BlockIdXOp::create(b, loc(), i32));
    Value step = index(NVVM::GridDimXOp::create(b, loc(), i32));
    auto loop = scf::ForOp::create(b, loc(), first, total, step);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value rest = loop.getInductionVar();
    for (int64_t axis : order) {
      Value extent = map.lookup(op.getExtents()[axis]);
      map.map(op.getIds()[axis], arith::RemUIOp::create(b, loc(), rest, extent));
      rest = arith::DivUIOp::create(b, loc(), rest, extent);
    }
    return success();
  }
  SmallVector<int64_t, 3> constant(3, 0);
  for (auto [slot, axis] : llvm::enumerate(order)) {
    if (std::optional<int64_t> e = getConstantIntValue(map.lookup(op.getExtents()[axis])))
      constant[slot] = *e;
    // CUDA's grid limits (2^31 - 1 blocks along x, 65535 along y and z)
    // bound the block index, and so the index arithmetic built on it.
    auto range =
        LLVM::ConstantRangeAttr::get(b.getContext(), 32, 0, slot == 0 ? 2147483647 : 65535);
    Value id = slot == 0   ? (Value)NVVM::BlockIdXOp::create(b, loc(), i32, range)
               : slot == 1 ? (Value)NVVM::BlockIdYOp::create(b, loc(), i32, range)
                           : (Value)NVVM::BlockIdZOp::create(b, loc(), i32, range);
    map.map(op.getIds()[axis], arith::IndexCastUIOp::create(b, loc(), b.getIndexType(), id));
  }
  // The launch takes each axis's extent as it is (GpuLauncher, the
  // launcher header): a constant one bounds the block index.
  Operation *at = b.getInsertionBlock()->getParentOp();
  auto func = dyn_cast<LLVM::LLVMFuncOp>(at);
  if (!func)
    func = at->getParentOfType<LLVM::LLVMFuncOp>();
  if (func && llvm::any_of(constant, [](int64_t e) { return e > 0; }))
    func->setAttr(kGridExtentsAttr, b.getDenseI64ArrayAttr(constant));
  return success();
}

LogicalResult GpuKernelLowering::lowerReduce(ReduceOp op) {
  TileLayout in = layoutOf(op.getInput());
  unsigned axis = op.getAxis();
  Type elem = cast<TileType>(op.getResult().getType()).getElementType();
  ReduceKind kind = op.getKind();
  const Regs &x = regs[op.getInput()];
  bool scalarResult = cast<TileType>(op.getResult().getType()).getRank() == 0;
  TileLayout out = scalarResult ? TileLayout() : layoutOf(op.getResult());
  int64_t numOut = scalarResult ? 1 : out.numRegs();
  // 1. In-thread, in register order.
  Regs partial(numOut);
  for (int64_t r = 0; r < in.numRegs(); ++r) {
    SmallVector<int64_t, 2> ri = in.regIndex(r);
    SmallVector<int64_t, 2> oi(ri);
    oi.erase(oi.begin() + axis);
    int64_t o = scalarResult ? 0 : out.regNumber(oi);
    partial[o] = partial[o] ? reduceCombine(b, loc(), kind, partial[o], x[r]) : x[r];
  }
  if (!in.isUnit(axis)) {
    unsigned p = in.dims[axis];
    // 2. Across the lanes along the axis: butterfly, so every lane ends with
    // the combined value.
    Type i32 = b.getI32Type();
    Value full = LLVM::ConstantOp::create(b, loc(), i32, -1);
    Value clamp = LLVM::ConstantOp::create(b, loc(), i32, 0x1f);
    for (int64_t step = 1; step < in.lanes[p]; step *= 2) {
      Value offset = LLVM::ConstantOp::create(b, loc(), i32, step * in.laneStride(p));
      for (Value &v : partial) {
        Value other = NVVM::ShflOp::create(b, loc(), elem, full, v, offset, clamp,
                                           NVVM::ShflKind::bfly, UnitAttr());
        v = reduceCombine(b, loc(), kind, v, other);
      }
    }
    // 3. Across warps along the axis, through shared memory. Lanes of a
    // warp hold different outputs under one register number, so each lane
    // has its own slots; lane l of another warp of the group along p holds
    // the same outputs.
    if (in.warps[p] > 1) {
      Value scratch = scratchBuffer(elem, numWarps() * 32 * numOut);
      auto ptr3 = scratch.getType();
      unsigned bytes = elem.getIntOrFloatBitWidth() / 8;
      auto slot = [&](Value w, int64_t r) {
        Value i = add(mul(add(mul(w, cIndex(32)), lane), cIndex(numOut)), cIndex(r));
        Value i64 = arith::IndexCastOp::create(b, loc(), b.getI64Type(), i);
        return LLVM::GEPOp::create(b, loc(), ptr3, elem, scratch, ValueRange{i64});
      };
      for (int64_t r = 0; r < numOut; ++r)
        LLVM::StoreOp::create(b, loc(), partial[r], slot(warp, r), bytes);
      syncRole();
      Value mine = warpCoord(in, p);
      Value stride = cIndex(in.warpStride(p));
      // The first warp of this thread's group along p.
      Value first = arith::SubIOp::create(b, loc(), warp, mul(mine, stride));
      for (int64_t r = 0; r < numOut; ++r) {
        Value acc;
        for (int64_t j = 0; j < in.warps[p]; ++j) {
          Value w = add(first, cIndex(j * in.warpStride(p)));
          Value v = LLVM::LoadOp::create(b, loc(), elem, slot(w, r), bytes);
          acc = acc ? reduceCombine(b, loc(), kind, acc, v) : v;
        }
        partial[r] = acc;
      }
      // The scratch may be reused when this op runs again (a loop).
      syncRole();
    }
  }
  regs[op.getResult()] = partial;
  return success();
}

LogicalResult GpuKernelLowering::lowerFor(scf::ForOp op) {
  // Loop-carried tiles travel as their registers, flattened into iter_args;
  // a role carries only the values it uses (KernelPlan).
  // A resident tile goes where its update accumulates before the loop and
  // comes back after it: the loop carries nothing of one in tensor memory,
  // and the wgmma fragment of one in registers (after the others).
  SmallVector<unsigned> kept;
  SmallVector<const ResidentPlan *> residents;
  for (unsigned i = 0; i < op.getNumRegionIterArgs(); ++i) {
    if (!plan.roles[role].carries(op, i))
      continue;
    const ResidentPlan *res = plan.residentOf(op, i);
    if (res && res->role == role)
      residents.push_back(res);
    else
      kept.push_back(i);
  }
  for (const ResidentPlan *res : residents)
    writeResident(*res, op.getInitArgs()[res->index]);
  auto keptOf = [&](ValueRange all) {
    return llvm::map_to_vector(kept, [&](unsigned i) { return all[i]; });
  };
  SmallVector<Value> inits;
  SmallVector<unsigned> counts;
  for (Value init : keptOf(op.getInitArgs())) {
    if (isa<TileType>(init.getType())) {
      const Regs &r = regs[init];
      inits.append(r.begin(), r.end());
      counts.push_back(r.size());
    } else {
      inits.push_back(map.lookup(init));
      counts.push_back(0);
    }
  }
  unsigned keptValues = inits.size();
  auto appendFragments = [&](SmallVector<Value> &to) {
    for (const ResidentPlan *res : residents)
      if (res->inRegisters)
        to.append(fragments[res].begin(), fragments[res].end());
  };
  auto bindFragments = [&](ValueRange from) {
    unsigned k = keptValues;
    for (const ResidentPlan *res : residents)
      if (res->inRegisters) {
        Regs &f = fragments[res];
        f.assign(from.begin() + k, from.begin() + k + f.size());
        k += f.size();
      }
  };
  appendFragments(inits);
  auto loop = scf::ForOp::create(b, loc(), map.lookup(op.getLowerBound()),
                                 map.lookup(op.getUpperBound()), map.lookup(op.getStep()), inits);
  // A role of copies runs on one thread in few registers: its loops stay
  // rolled (see kRolledLoopAttr).
  if (plan.roles[role].copyOnly)
    loop->setAttr(tile::kRolledLoopAttr, b.getUnitAttr());
  map.map(op.getInductionVar(), loop.getInductionVar());
  auto bindRange = [&](ValueRange from, ValueRange to) {
    unsigned k = 0;
    for (auto [i, v] : llvm::enumerate(from)) {
      if (counts[i]) {
        regs[v] = Regs(to.begin() + k, to.begin() + k + counts[i]);
        k += counts[i];
      } else {
        map.map(v, to[k++]);
      }
    }
  };
  bindRange(keptOf(op.getRegionIterArgs()), loop.getRegionIterArgs());
  bindFragments(loop.getRegionIterArgs());
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = loop.getBody();
    if (body->mightHaveTerminator())
      body->getTerminator()->erase();
    b.setInsertionPointToEnd(body);
    // A fragment the loop carries in registers was last defined by a wgmma
    // (its update), waited for at the end of the step. ptxas does not see
    // that wait across the back edge: at the first use of the fragment
    // while a later product is in flight (the state's decay, beside the
    // step's first product) it waits for every product ("warpgroup.wait is
    // injected"). A wait for none here, where none is in flight, shows it.
    if (llvm::any_of(residents, [](const ResidentPlan *res) { return res->inRegisters; }))
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc(), 0);
    for (Operation &inner : op.getBody()->without_terminator())
      if (failed(lowerOp(&inner)))
        return failure();
    SmallVector<Value> yields;
    for (Value v : keptOf(op.getBody()->getTerminator()->getOperands())) {
      if (isa<TileType>(v.getType()))
        yields.append(regs[v].begin(), regs[v].end());
      else
        yields.push_back(map.lookup(v));
    }
    appendFragments(yields);
    scf::YieldOp::create(b, loc(), yields);
  }
  bindRange(keptOf(op.getResults()), loop.getResults());
  bindFragments(loop.getResults());
  for (const ResidentPlan *res : residents)
    if (!op.getResult(res->index).use_empty())
      readResident(*res, op.getResult(res->index));
  return success();
}

int64_t GpuKernelLowering::pendingNeededBy(Operation *op) {
  int64_t all = static_cast<int64_t>(pendingProducts.size()) - 1;
  if (!runs(op) || pairedSeconds.contains(op))
    return -1; // nothing to lower here
  if (const ResidentPlan *res = plan.residentTouchedBy(op); res && res->role == role) {
    // A product scaled before its sum is added there: the sum waits for it.
    if (op == res->sum && res->productFactor) {
      int64_t last = -1;
      DotOp update = res->update;
      for (auto [i, pending] : llvm::enumerate(pendingProducts))
        if (llvm::is_contained(pending.results, update.getResult()))
          last = static_cast<int64_t>(i);
      return last;
    }
    if (op != res->update)
      return -1;
    // An update waits for the products it reads and for its own state's
    // last update; the others write other registers and stay in flight, so
    // two states' chains (gdn_prefill_scan_tr's D and E) run side by side.
    int64_t last = -1;
    for (auto [i, pending] : llvm::enumerate(pendingProducts)) {
      bool needed = llvm::any_of(pending.results, [&](Value v) {
        Operation *def = v.getDefiningOp();
        return llvm::is_contained(op->getOperands(), v) ||
               (def && plan.residentTouchedBy(def) == res);
      });
      if (needed)
        last = static_cast<int64_t>(i);
    }
    return last;
  }
  if (!runsBesidePending(op))
    return all;
  int64_t reads = -1;
  for (auto [i, pending] : llvm::enumerate(pendingProducts))
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return llvm::is_contained(pending.results, v); }))
      reads = static_cast<int64_t>(i);
  return reads;
}

bool GpuKernelLowering::runsBesidePending(Operation *op) {
  if (op->getNumRegions())
    return false;
  if (op->getDialect() != kernel->getDialect())
    return !isa<ReturnOp>(op);
  if (auto dot = dyn_cast<DotOp>(op))
    return issuesBesideProducts(dot);
  // Plain global loads and stores. A ring's load waits for its stage and
  // reads it, which no product in flight touches; but a role that also
  // copies into the ring may wait there for a stage such a product frees.
  if (auto load = dyn_cast<LoadOp>(op))
    if (const RingPlan *ring = plan.ringOf(load))
      return ring->issuer != role;
  if (isa<LoadOp, StoreOp>(op))
    return accessesGlobalMemory(op);
  // (A transpose a tensor-core product reads in place lowers to nothing.)
  if (auto tr = dyn_cast<TransposeOp>(op))
    return foldedIntoTensorCoreDots(tr, schedule) || transposesInRegisters(tr) ||
           movesInWarpSlices(op);
  if (isa<ConvertLayoutOp>(op))
    return movesInWarpSlices(op);
  if (auto slice = dyn_cast<SliceOp>(op))
    return plan.foldsSlice(slice, schedule) || slicedInRegisters(slice);
  // (A reduction across warps meets in a scratch array of its own.)
  return isa<ConstantOp, IotaOp, FromIndexOp, SplatOp, ToIndexOp, AddOp, SubOp, MulOp, DivOp, RemOp,
             MaxOp, MinOp, AndOp, OrOp, CmpOp, NegOp, AbsOp, ExpOp, LogOp, Log1pOp, SqrtOp, RsqrtOp,
             SigmoidOp, TanhOp, NotOp, SelectOp, CastOp, BroadcastOp, ReshapeOp, ReduceOp>(op);
}

LogicalResult GpuKernelLowering::lowerOp(Operation *op) {
  if (!pendingProducts.empty())
    if (int64_t last = pendingNeededBy(op); last >= 0)
      flushProducts(last);
  // The releases' fence waits for every memory access of the thread before
  // it: given before the block's first global access after the reads, it
  // waits for little (at the block's end, for the stores of the step: the
  // prefill scan's step was 10% slower).
  if (accessesGlobalMemory(op))
    flushReleases(op->getBlock());
  LogicalResult lowered = lowerOpNow(op);
  // The writer of a shared ring hands the tile over once it made it.
  if (const SharedRingPlan *shared = plan.sharedRingOf(op);
      shared && shared->writer == role && succeeded(lowered) && runs(op)) {
    llvm::SaveAndRestore<LocationAttr> at(here, locationOf(op));
    lowered = passSharedBuffer(*shared, op);
  }
  // A product's wait stays in the block that issued it; so do the releases
  // of the ring stages the block read.
  Operation *next = op->getNextNode();
  if (!next || next->hasTrait<OpTrait::IsTerminator>()) {
    flushProducts();
    flushReleases(op->getBlock());
  }
  return lowered;
}

bool GpuKernelLowering::accessesGlobalMemory(Operation *op) {
  if (auto load = dyn_cast<LoadOp>(op))
    return !plan.ringOf(load);
  if (auto store = dyn_cast<StoreOp>(op))
    return !plan.storeRingOf(store);
  return isa<SignalOp, WaitOp>(op);
}

LogicalResult GpuKernelLowering::lowerOpNow(Operation *op) {
  if (!runs(op)) {
    // Another role's work; a flag it polls, this role may have to follow.
    if (const FlagWaitPlan *f = plan.flagWaitOf(op); f && llvm::is_contained(f->followers, role))
      followFlag(*f);
    return success();
  }
  // A resident tile's scale and sum happen at its update (the scale at its
  // mul where every copy is read before it), its copies where products
  // stage them.
  if (const ResidentPlan *res = plan.residentTouchedBy(op);
      res && res->role == role && op != res->update) {
    if (op == res->scale && res->scalesAtMul)
      scaleResident(*res);
    if (op == res->sum && res->productFactor) {
      llvm::SaveAndRestore<LocationAttr> at(here, locationOf(op));
      addScaledProduct(*res);
    }
    return success();
  }
  llvm::SaveAndRestore<LocationAttr> at(here, locationOf(op));
  // A shared ring's reader loads the tile its writer made.
  if (const SharedRingPlan *shared = plan.sharedRingOf(op); shared && shared->writer != role)
    return passSharedBuffer(*shared, op);
  Location l = loc();
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return lowerFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return lowerIfWithoutResults(ifOp, b, loc(), map, [&](Operation *o) { return lowerOp(o); });
  if (auto ids = dyn_cast<ProgramIdsOp>(op))
    return lowerProgramIds(ids);
  if (isa<ReturnOp>(op))
    return success();
  if (op->getDialect() != kernel->getDialect())
    return cloneScalarOp(op, b, map);

  Value result = op->getNumResults() == 1 && isa<TileType>(op->getResult(0).getType())
                     ? op->getResult(0)
                     : Value();
  int64_t n = 1;
  if (result && cast<TileType>(result.getType()).getRank() > 0)
    n = layoutOf(result).numRegs();
  auto elemOf = [](Value v) { return cast<TileType>(v.getType()).getElementType(); };
  auto each = [&](function_ref<Value(int64_t)> fn) {
    Regs out(n);
    for (int64_t r = 0; r < n; ++r)
      out[r] = fn(r);
    regs[result] = out;
  };

  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](LoadOp load) {
        if (const RingPlan *ring = plan.ringOf(load))
          return lowerRingLoad(*ring, load);
        return lowerAccess(views[load.getView()], mapped(load.getIndices()),
                           mapped(load.getFloors()), mapped(load.getLimits()), load.getKeep(),
                           load.getMasked(), load.getResult(), /*isLoad=*/true,
                           load.getOther() ? load.getOther()->convertToDouble() : 0.0);
      })
      .Case([&](StoreOp store) {
        if (const StoreRingPlan *ring = plan.storeRingOf(store))
          return lowerRingStore(*ring, store);
        return lowerAccess(views[store.getView()], mapped(store.getIndices()),
                           mapped(store.getFloors()), mapped(store.getLimits()), store.getKeep(),
                           store.getMasked(), store.getValue(), /*isLoad=*/false, 0.0);
      })
      .Case([&](SignalOp signal) { return lowerSignal(signal); })
      .Case([&](WaitOp wait) { return lowerWait(wait); })
      .Case([&](AwaitEarlierOp) { return lowerGridDependency("griddepcontrol.wait;"); })
      .Case([&](AllowLaterOp) { return lowerGridDependency("griddepcontrol.launch_dependents;"); })
      .Case([&](ConstantOp c) {
        Value v = arith::ConstantOp::create(b, l, c.getValue());
        each([&](int64_t) { return v; });
        return success();
      })
      .Case([&](IotaOp iota) {
        TileLayout tl = layoutOf(result);
        Value base = threadBase(tl, 0);
        Type elem = elemOf(result);
        each([&](int64_t r) -> Value {
          Value idx = add(base, cIndex(tl.constOffset(0, tl.regIndex(r)[0])));
          return arith::IndexCastOp::create(b, l, elem, idx);
        });
        return success();
      })
      .Case([&](FromIndexOp fi) {
        Type elem = elemOf(result);
        Value v = map.lookup(fi.getInput());
        Value asInt =
            arith::IndexCastOp::create(b, l, isa<FloatType>(elem) ? b.getI64Type() : elem, v);
        regs[result] = {scalarCast(b, l, asInt, elem)};
        return success();
      })
      .Case([&](SplatOp sp) {
        Value v = map.lookup(sp.getInput());
        each([&](int64_t) { return v; });
        return success();
      })
      .Case([&](ToIndexOp ti) {
        Value v = regs[ti.getInput()][0];
        Value idx = v.getType().isInteger(1)
                        ? arith::IndexCastUIOp::create(b, l, b.getIndexType(), v).getResult()
                        : arith::IndexCastOp::create(b, l, b.getIndexType(), v).getResult();
        map.map(ti.getResult(), idx);
        return success();
      })
      .Case<AddOp, SubOp, MulOp, DivOp, RemOp, MaxOp, MinOp, AndOp, OrOp, CmpOp>([&](Operation *) {
        const Regs &x = regs[op->getOperand(0)], &y = regs[op->getOperand(1)];
        each([&](int64_t r) { return scalarBinary(b, l, op, x[r], y[r]); });
        return success();
      })
      .Case<NegOp, AbsOp, ExpOp, LogOp, Log1pOp, SqrtOp, RsqrtOp, SigmoidOp, TanhOp, NotOp>(
          [&](Operation *) {
            const Regs &x = regs[op->getOperand(0)];
            each([&](int64_t r) { return scalarUnary(b, l, op, x[r], MathFlavor::Nvvm); });
            return success();
          })
      .Case([&](SelectOp s) {
        const Regs &c = regs[s.getCond()], &x = regs[s.getLhs()], &y = regs[s.getRhs()];
        each([&](int64_t r) { return (Value)arith::SelectOp::create(b, l, c[r], x[r], y[r]); });
        return success();
      })
      .Case([&](CastOp c) {
        const Regs &x = regs[c.getInput()];
        Type to = elemOf(result);
        if (isa<Float8E4M3FNType>(to) || isa<Float8E4M3FNType>(elemOf(c.getInput()))) {
          lowerFloat8Cast(c);
          return success();
        }
        each([&](int64_t r) { return scalarCast(b, l, x[r], to); });
        return success();
      })
      .Case([&](BroadcastOp bc) {
        const Regs &x = regs[bc.getInput()];
        auto inType = bc.getInput().getType();
        if (inType.getRank() == 0) {
          each([&](int64_t) { return x[0]; });
          return success();
        }
        TileLayout to = layoutOf(result), from = layoutOf(bc.getInput());
        unsigned offset = to.shape.size() - from.shape.size();
        each([&](int64_t r) {
          SmallVector<int64_t, 2> ri = to.regIndex(r), fi;
          for (unsigned d = 0; d < from.shape.size(); ++d)
            fi.push_back(from.isUnit(d) ? 0 : ri[d + offset]);
          return x[from.regNumber(fi)];
        });
        return success();
      })
      .Case([&](ReshapeOp rs) {
        // Only unit dims come or go (tile-assign-layouts checked): the
        // registers keep their order.
        // A copy first: inserting the result may move the map's storage.
        Regs in = regs.lookup(rs.getInput());
        regs[result] = std::move(in);
        return success();
      })
      .Case([&](ReduceOp red) { return lowerReduce(red); })
      .Case([&](ConvertLayoutOp cv) {
        restage(cv.getInput(), cv.getResult(), {}, movesInWarpSlices(op));
        return success();
      })
      .Case([&](SliceOp sl) {
        // Folded: the dots stage the window from the input's registers.
        if (plan.foldsSlice(sl, schedule))
          return success();
        // A window of whole spans of the input's layout: its registers.
        if (std::optional<SmallVector<int64_t>> picked = slicedInRegisters(sl)) {
          const Regs &from = regs[sl.getInput()];
          Regs to;
          for (int64_t r : *picked)
            to.push_back(from[r]);
          regs[sl.getResult()] = std::move(to);
          return success();
        }
        // Otherwise the whole input goes out and the window comes back.
        restage(sl.getInput(), sl.getResult(), sl.getOffsets(), /*inWarps=*/false);
        return success();
      })
      .Case([&](TransposeOp tr) {
        if (foldedIntoTensorCoreDots(tr, schedule))
          return success();
        if (std::optional<Regs> renamed = transposedInRegisters(tr)) {
          regs[tr.getResult()] = std::move(*renamed);
          return success();
        }
        bool inWarps = movesInWarpSlices(op);
        Value base = inWarps ? warpSlice() : stagingBase();
        auto inType = tr.getInput().getType();
        SmallVector<int64_t, 2> inShape = transposeStagingShape(inType);
        Type stored = stagedType(b, inType.getElementType());
        stageOutWith(
            tr.getInput(),
            [&](Value v) {
              return v.getType() == stored
                         ? v
                         : arith::ExtUIOp::create(b, loc(), stored, v).getResult();
            },
            [&](ArrayRef<Value> c) { return sharedElem(base, stored, rowMajor(c, inShape)); });
        syncMovers(inWarps);
        ArrayRef<int64_t> perm = tr.getPermutation();
        regs[tr.getResult()] = stageIn(layoutOf(tr.getResult()), tr.getType().getElementType(),
                                       base, [&](ArrayRef<Value> c) {
                                         SmallVector<Value> src(c.size());
                                         for (unsigned i = 0; i < perm.size(); ++i)
                                           src[perm[i]] = c[i];
                                         return rowMajor(src, inShape);
                                       });
        syncMovers(inWarps);
        return success();
      })
      .Case([&](CumsumOp cs) { return lowerCumsum(cs); })
      .Case([&](DotOp dot) { return lowerDot(dot); })
      .Default([&](Operation *) { return op->emitOpError("has no GPU lowering yet"); });
}

void GpuKernelLowering::restage(Value input, Value result, ArrayRef<int64_t> offsets,
                                bool inWarps) {
  ArrayRef<int64_t> inShape = cast<TileType>(input.getType()).getShape();
  Value base = inWarps ? warpSlice() : stagingBase();
  stageOut(input, base);
  syncMovers(inWarps);
  regs[result] = stageIn(layoutOf(result), cast<TileType>(result.getType()).getElementType(), base,
                         [&](ArrayRef<Value> c) {
                           if (offsets.empty())
                             return rowMajor(c, inShape);
                           SmallVector<Value> src;
                           for (unsigned d = 0; d < c.size(); ++d)
                             src.push_back(add(c[d], cIndex(offsets[d])));
                           return rowMajor(src, inShape);
                         });
  syncMovers(inWarps); // the area is free for the next op
}

void GpuKernelLowering::syncRole() {
  const RolePlan &r = plan.roles[role];
  if (r.numWarps == plan.warps) {
    NVVM::Barrier0Op::create(b, loc());
    return;
  }
  // Named barrier 1 + role, for the role's threads only: the other roles
  // never reach it.
  NVVM::BarrierOp::create(b, loc(), Type(), cI32(1 + role), cI32(r.numWarps * 32),
                          NVVM::BarrierReductionAttr(), Value());
}

bool GpuKernelLowering::movesInWarpSlices(Operation *op) {
  return plan.roles[role].warpSliceBytes && movesInWarps(op, schedule.getMma(), numWarps());
}

Value GpuKernelLowering::warpSlice() {
  const RolePlan &rp = plan.roles[role];
  return smemAt(add(cIndex(rp.warpSlicesOffset), mul(warp, cIndex(rp.warpSliceBytes))));
}

void GpuKernelLowering::syncMovers(bool inWarps) {
  if (!inWarps) {
    syncRole();
    return;
  }
  // Only the warp's own lanes meet in its slice.
  NVVM::SyncWarpOp::create(b, loc(), arith::ConstantIntOp::create(b, loc(), -1, 32));
}

Value GpuKernelLowering::smemAt(Value byteOffset) {
  Value off = arith::IndexCastOp::create(b, loc(), b.getI64Type(), byteOffset);
  return LLVM::GEPOp::create(b, loc(), dynamicSmem.getType(), b.getI8Type(), dynamicSmem,
                             ValueRange{off});
}

void GpuKernelLowering::initShared() {
  // Roles with MMA barriers are those with tensor-memory columns or an
  // issuer.
  bool polled =
      llvm::any_of(plan.flagWaits, [](const FlagWaitPlan &f) { return f.progressOffset >= 0; });
  if (plan.rings.empty() && plan.storeRings.empty() && plan.sharedRings.empty() &&
      !plan.tmemColumns && !hasIssuer() && !polled)
    return;
  MLIRContext *ctx = b.getContext();
  auto cta1 = NVVM::CTAGroupKindAttr::get(ctx, NVVM::CTAGroupKind::CTA_1);
  if (plan.tmemColumns) {
    // One whole warp allocates the CTA's tensor memory and writes its
    // address to shared memory; giving up the permit lets the SM's other
    // CTAs allocate as soon as this one frees its columns.
    OpBuilder::InsertionGuard guard(b);
    enterFirstWarp();
    NVVM::Tcgen05AllocOp::create(b, loc(), smemAt(cIndex(plan.tmemSlotOffset)),
                                 cI32(plan.tmemColumns), cta1);
    NVVM::Tcgen05RelinquishAllocPermitOp::create(b, loc(), cta1);
  }
  {
    OpBuilder::InsertionGuard guard(b);
    auto first = scf::IfOp::create(b, loc(), TypeRange{}, eq(tid, 0), false);
    b.setInsertionPoint(first.thenBlock()->getTerminator());
    for (const RingPlan &ring : plan.rings)
      for (int64_t s = 0; s < ring.depth; ++s) {
        NVVM::MBarrierInitOp::create(b, loc(), ringBarrier(ring, cIndex(s)), cI32(1), Value());
        NVVM::MBarrierInitOp::create(b, loc(), emptyBarrier(ring, cIndex(s)),
                                     cI32(ring.consumerThreads), Value());
      }
    // A store ring's stage is full when every thread of its writer has
    // written it, free when the copier's copies have read it.
    for (const StoreRingPlan &ring : plan.storeRings)
      for (int64_t s = 0; s < ring.depth; ++s) {
        NVVM::MBarrierInitOp::create(b, loc(), ringBarrier(ring, cIndex(s)),
                                     cI32(plan.roles[ring.writer].numWarps * 32), Value());
        NVVM::MBarrierInitOp::create(b, loc(), emptyBarrier(ring, cIndex(s)), cI32(1), Value());
      }
    // A shared ring's stage is full when every thread of its writer has
    // written it, free when every reading thread has read it.
    for (const SharedRingPlan &ring : plan.sharedRings)
      for (int64_t s = 0; s < ring.depth; ++s) {
        NVVM::MBarrierInitOp::create(b, loc(), ringBarrier(ring, cIndex(s)),
                                     cI32(plan.roles[ring.writer].numWarps * 32), Value());
        NVVM::MBarrierInitOp::create(b, loc(), emptyBarrier(ring, cIndex(s)),
                                     cI32(ring.readerThreads), Value());
      }
    // A role's MMA barrier completes a phase when tcgen05.commit arrives,
    // or when every thread of a wgmma issuer has written the result; its
    // ready barrier when every one of its threads has staged.
    for (const RolePlan &r : plan.roles) {
      if (r.mmaBarrierOffset >= 0) {
        int64_t arrivals = 1;
        if (r.issuer >= 0 && MmaTiling::kindOf(r.mma()) == MmaTiling::Kind::Wgmma)
          arrivals = plan.roles[r.issuer].numWarps * 32;
        NVVM::MBarrierInitOp::create(b, loc(), smemAt(cIndex(r.mmaBarrierOffset)), cI32(arrivals),
                                     Value());
      }
      if (r.mmaReadyOffset >= 0)
        NVVM::MBarrierInitOp::create(b, loc(), smemAt(cIndex(r.mmaReadyOffset)),
                                     cI32(r.numWarps * 32), Value());
    }
    // Polled flags: none passed yet.
    for (const FlagWaitPlan &f : plan.flagWaits)
      if (f.progressOffset >= 0)
        LLVM::StoreOp::create(b, loc(), cI32(0), smemAt(cIndex(f.progressOffset)));
    // Makes the initialised barriers visible to the copy engine.
    NVVM::FenceMbarrierInitOp::create(b, loc());
  }
  if (plan.tmemColumns)
    tcgen05Fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  NVVM::Barrier0Op::create(b, loc());
  if (plan.tmemColumns)
    tcgen05Fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
}

void GpuKernelLowering::freeTensorMemory() {
  if (!plan.tmemColumns)
    return;
  // Every role is done with its columns (their reads waited) before the
  // allocating warp frees them.
  tcgen05Fence(NVVM::Tcgen05FenceKind::BEFORE_THREAD_SYNC);
  NVVM::Barrier0Op::create(b, loc());
  OpBuilder::InsertionGuard guard(b);
  enterFirstWarp();
  tcgen05Fence(NVVM::Tcgen05FenceKind::AFTER_THREAD_SYNC);
  NVVM::Tcgen05DeallocOp::create(
      b, loc(), tmemAt(), cI32(plan.tmemColumns),
      NVVM::CTAGroupKindAttr::get(b.getContext(), NVVM::CTAGroupKind::CTA_1));
}

void GpuKernelLowering::setRoleRegisters(const RolePlan &rp) {
  if (plan.reallocRegs && rp.regs != plan.launchRegs)
    NVVM::SetMaxRegisterOp::create(b, loc(), rp.regs,
                                   rp.regs > plan.launchRegs
                                       ? NVVM::SetMaxRegisterAction::increase
                                       : NVVM::SetMaxRegisterAction::decrease);
}

LogicalResult GpuKernelLowering::lowerRole(unsigned r, Block &body, const IRMapping &entryMap,
                                           bool setRegs) {
  role = r;
  const RolePlan &rp = plan.roles[r];
  // The role's products multiply with its own instruction.
  llvm::SaveAndRestore<ScheduleAttr> roleSchedule(schedule, rp.schedule);
  map = entryMap;
  regs.clear();
  Value warpInCta = arith::DivUIOp::create(b, loc(), tid, cIndex(32));
  lane = arith::RemUIOp::create(b, loc(), tid, cIndex(32));
  warp =
      rp.firstWarp ? arith::SubIOp::create(b, loc(), warpInCta, cIndex(rp.firstWarp)) : warpInCta;
  if (setRegs)
    setRoleRegisters(rp);
  OpBuilder::InsertionGuard guard(b);
  if (rp.copyOnly)
    enterLeaderOnly();
  for (Operation &op : body)
    if (failed(lowerOp(&op)))
      return failure();
  // The role's bulk stores complete before the CTA exits.
  if (llvm::any_of(plan.storeRings, [&](const StoreRingPlan &ring) { return ring.issuer == r; }))
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc(), 0, UnitAttr());
  return success();
}

ArrayAttr GpuKernelLowering::sharedLayout() {
  SmallVector<std::pair<int64_t, std::string>> areas;
  auto range = [](int64_t from, int64_t bytes) {
    return "[" + std::to_string(from) + ", " + std::to_string(from + bytes) + ") ";
  };
  // A pipeline's buffers interleave their stages: each stage of each lies
  // `stageStride` after the one before.
  auto ring = [&](const RingStages &r, const std::string &what) {
    areas.push_back({r.offset, "[" + std::to_string(r.offset) + ", ...) " + what + ": " +
                                   std::to_string(r.depth) + " stages of " +
                                   std::to_string(r.stageBytes) + " bytes, " +
                                   std::to_string(r.stageStride) + " apart"});
    areas.push_back({r.barrierOffset,
                     range(r.barrierOffset, 16 * r.depth) + what + ": full, then empty mbarriers"});
  };
  for (const RingPlan &r : plan.rings)
    ring(r, "ring `" + r.pipeline + "`");
  for (const StoreRingPlan &r : plan.storeRings)
    ring(r, "store ring `" + r.pipeline + "`");
  for (const SharedRingPlan &r : plan.sharedRings)
    ring(r, "shared ring `" + r.pipeline + "`");
  for (const RolePlan &r : plan.roles) {
    if (r.stagingBytes)
      areas.push_back(
          {r.stagingOffset, range(r.stagingOffset, r.stagingBytes) + "staging of role " + r.name});
    if (r.warpSliceBytes)
      areas.push_back({r.warpSlicesOffset,
                       "[" + std::to_string(r.warpSlicesOffset) + ", ...) per-warp slices of " +
                           std::to_string(r.warpSliceBytes) + " bytes, role " + r.name});
    if (r.mmaBarrierOffset >= 0)
      areas.push_back({r.mmaBarrierOffset,
                       range(r.mmaBarrierOffset, 8) + "tensor-core mbarrier of role " + r.name});
  }
  if (plan.tmemColumns)
    areas.push_back({plan.tmemSlotOffset, range(plan.tmemSlotOffset, 4) +
                                              "tensor-memory address (" +
                                              std::to_string(plan.tmemColumns) + " columns)"});
  llvm::stable_sort(areas, [](auto &a, auto &b) { return a.first < b.first; });
  SmallVector<Attribute> lines;
  for (auto &[at, line] : areas)
    lines.push_back(b.getStringAttr(line));
  return b.getArrayAttr(lines);
}

LogicalResult GpuKernelLowering::run() {
  MLIRContext *ctx = kernel.getContext();
  FunctionType type = kernel.getFunctionType();
  auto ptr0 = LLVM::LLVMPointerType::get(ctx);
  auto ptr1 = LLVM::LLVMPointerType::get(ctx, 1);
  SmallVector<Type> argTypes;
  for (Type t : type.getInputs()) {
    if (isa<ViewType>(t))
      argTypes.push_back(ptr1);
    else if (isa<IndexType>(t))
      argTypes.push_back(b.getI64Type());
    else
      argTypes.push_back(t);
  }
  // One TMA descriptor per ring, after the kernel's own arguments.
  unsigned firstMap = argTypes.size();
  for (size_t i = 0; i < plan.rings.size(); ++i)
    argTypes.push_back(ptr0);
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), argTypes);
  auto func = LLVM::LLVMFuncOp::create(b, loc(), kernel.getSymName(), fnType);
  int64_t threads = plan.warps * 32;
  func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // The launch needs it; layout conversions add staging the manifest
  // builder (which runs before layouts are chosen) cannot see.
  func->setAttr(kDynamicSharedBytesAttr, b.getI64IntegerAttr(plan.dynamicSharedBytes));
  int64_t conversions = 0;
  kernel.walk([&](ConvertLayoutOp) { ++conversions; });
  func->setAttr(kLayoutConversionsAttr, b.getI64IntegerAttr(conversions));
  if (Attribute divisors = kernel->getAttr(kDivisorsAttr))
    func->setAttr(kDivisorsAttr, divisors); // the launcher's arguments after the parameters
  // The tensor maps as lowered: a ring swizzled for its readers is known
  // only now, after the manifest builder planned the kernel.
  if (!plan.rings.empty()) {
    SmallVector<Attribute> maps;
    for (const RingPlan &ring : plan.rings) {
      SmallVector<int64_t> map{ring.viewArg, ring.swizzleBytes};
      llvm::append_range(map, ring.box);
      maps.push_back(b.getDenseI64ArrayAttr(map));
    }
    func->setAttr(kTensorMapsAttr, b.getArrayAttr(maps));
  }
  if (ArrayAttr layout = sharedLayout(); !layout.empty())
    func->setAttr(kSharedLayoutAttr, layout);
  func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                b.getDenseI32ArrayAttr({(int32_t)threads, 1, 1}));
  // The register cap at entry; setmaxnreg needs one to take effect.
  if (plan.launchRegs)
    func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(), b.getI32IntegerAttr(plan.launchRegs));
  for (size_t i = 0; i < plan.rings.size(); ++i) {
    unsigned arg = firstMap + i;
    func.setArgAttr(arg, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
    func.setArgAttr(arg, LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(64));
    func.setArgAttr(arg, NVVM::NVVMDialect::getGridConstantAttrName(), b.getUnitAttr());
  }

  Block *entry = func.addEntryBlock(b);
  b.setInsertionPointToEnd(entry);
  auto ret = LLVM::ReturnOp::create(b, loc(), ValueRange{});
  b.setInsertionPoint(ret);

  Block &body = kernel.getBody().front();
  for (auto [i, from] : llvm::enumerate(body.getArguments())) {
    Value to = entry->getArgument(i);
    if (isa<IndexType>(from.getType()))
      to = arith::IndexCastOp::create(b, loc(), b.getIndexType(), to);
    map.map(from, to);
    if (auto view = dyn_cast<ViewType>(from.getType())) {
      StringAttr access = kernel.getArgAttrOfType<StringAttr>(i, kAccessAttr);
      // Written by a kernel beside this one, or before one started early,
      // while it runs: not read-only.
      bool writtenBeside = kernel.getArgAttr(i, kWrittenBesideAttr) != nullptr;
      bool readOnly = access && access.getValue() == "in" && !writtenBeside;
      // Views never overlap (documented): lets loads of inputs use the
      // read-only data path and reorder around stores. Not on a view
      // written beside: NVPTX takes loads of a noalias kernel argument the
      // kernel never writes for ld.global.nc, which ptxas may move above
      // the wait (a flag's, griddepcontrol's) that orders them.
      if (!writtenBeside)
        func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr());
      if (readOnly)
        func.setArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName(), b.getUnitAttr());
      func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(16));
      views[from].ptr = to;
      views[from].type = view;
      views[from].readOnly = readOnly;
    }
  }
  // Dims and strides of every view, once at the entry, in argument order
  // (the output must not depend on hash order).
  for (BlockArgument arg : body.getArguments()) {
    if (!views.count(arg))
      continue;
    ViewInfo &vi = views[arg];
    ViewGeometry g = buildViewGeometry(b, loc(), kernel, vi.type, map);
    vi.dims = g.dims;
    vi.strides = g.strides;
  }
  tid = arith::IndexCastUIOp::create(
      b, loc(), b.getIndexType(),
      NVVM::ThreadIdXOp::create(b, loc(), b.getI32Type(),
                                LLVM::ConstantRangeAttr::get(ctx, 32, 0, plan.warps * 32)));
  if (plan.dynamicSharedBytes) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto ptr3 = LLVM::LLVMPointerType::get(ctx, 3);
    if (!module.lookupSymbol("__kiln_dynamic_smem"))
      LLVM::GlobalOp::create(b, loc(), LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                             /*isConstant=*/false, LLVM::Linkage::External, "__kiln_dynamic_smem",
                             Attribute(), /*alignment=*/1024, /*addrSpace=*/3);
    b.restoreInsertionPoint(OpBuilder::InsertPoint(entry, Block::iterator(ret)));
    dynamicSmem = LLVM::AddressOfOp::create(b, loc(), ptr3, "__kiln_dynamic_smem");
    auto zeroCounter = [&] {
      Value c = LLVM::AllocaOp::create(b, loc(), ptr0, b.getI32Type(), cI32(1), 4);
      LLVM::StoreOp::create(b, loc(), cI32(0), c);
      return c;
    };
    for (size_t i = 0; i < plan.rings.size(); ++i) {
      tensorMaps.push_back(entry->getArgument(firstMap + i));
      for (auto *counters : {&issued, &consumed})
        counters->push_back(zeroCounter());
    }
    for (size_t i = 0; i < plan.storeRings.size(); ++i)
      for (auto *counters : {&stagesWritten, &stagesCopied})
        counters->push_back(zeroCounter());
    for (size_t i = 0; i < plan.sharedRings.size(); ++i) {
      sharedPassed.push_back(zeroCounter());
      sharedStage.push_back(Value());
    }
    for (size_t i = 0; i < plan.flagWaits.size(); ++i)
      flagsPassed.push_back(zeroCounter());
  }
  if (plan.tmemColumns || hasIssuer()) {
    mmaWaits = LLVM::AllocaOp::create(b, loc(), ptr0, b.getI32Type(), cI32(1), 4);
    LLVM::StoreOp::create(b, loc(), cI32(0), mmaWaits);
  }
  initShared();

  // One role over the whole CTA needs no branch.
  IRMapping entryMap = map;
  if (plan.roles.size() == 1 && plan.roles[0].firstWarp == 0 &&
      plan.roles[0].numWarps == plan.warps) {
    if (failed(lowerRole(0, body, entryMap, /*setRegs=*/true)))
      return failure();
    freeTensorMemory();
    return success();
  }
  // Otherwise one branch of an if/else chain per role (setmaxnreg takes
  // effect only so); warps outside every role go straight to the end.
  // Roles sharing a warpgroup (one register budget) share a branch that
  // sets it, then split.
  {
    OpBuilder::InsertionGuard guard(b);
    Value warpInCta = arith::DivUIOp::create(b, loc(), tid, cIndex(32));
    auto within = [&](int64_t first, int64_t end) -> Value {
      return arith::AndIOp::create(
          b, loc(),
          arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::uge, warpInCta, cIndex(first)),
          arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ult, warpInCta, cIndex(end)));
    };
    auto enterElse = [&](Value cond, StringRef roles) {
      // The branch's location names its roles (the CUDA emitter's comment).
      auto branch = scf::IfOp::create(b, NameLoc::get(b.getStringAttr(roles), kernel.getLoc()),
                                      TypeRange{}, cond, /*withElse=*/true);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      return branch;
    };
    SmallVector<bool> done(plan.roles.size(), false);
    for (auto [r, rp] : llvm::enumerate(plan.roles)) {
      if (done[r])
        continue;
      SmallVector<unsigned> group;
      for (auto [o, other] : llvm::enumerate(plan.roles))
        if (o == r || shareWarpgroup(rp.firstWarp, rp.numWarps, other.firstWarp, other.numWarps))
          group.push_back(o);
      for (unsigned o : group)
        done[o] = true;
      if (group.size() == 1) {
        auto branch = enterElse(within(rp.firstWarp, rp.firstWarp + rp.numWarps), roleTitle(rp));
        if (failed(lowerRole(r, body, entryMap, /*setRegs=*/true)))
          return failure();
        b.setInsertionPoint(branch.elseBlock()->getTerminator());
        continue;
      }
      int64_t first = rp.firstWarp, end = rp.firstWarp + rp.numWarps;
      for (unsigned o : group) {
        first = std::min(first, plan.roles[o].firstWarp);
        end = std::max(end, plan.roles[o].firstWarp + plan.roles[o].numWarps);
      }
      std::string names;
      for (unsigned o : group)
        names += (names.empty() ? "" : ", ") + plan.roles[o].name;
      auto shared = enterElse(within(first, end), "roles " + names + " (one warpgroup)");
      setRoleRegisters(rp);
      for (unsigned o : group) {
        const RolePlan &member = plan.roles[o];
        auto branch = enterElse(within(member.firstWarp, member.firstWarp + member.numWarps),
                                roleTitle(member));
        if (failed(lowerRole(o, body, entryMap, /*setRegs=*/false)))
          return failure();
        b.setInsertionPoint(branch.elseBlock()->getTerminator());
      }
      b.setInsertionPoint(shared.elseBlock()->getTerminator());
    }
  }
  freeTensorMemory();
  return success();
}

} // namespace kiln::nvvm

namespace {

struct ConvertTileToNVVM : kiln::impl::ConvertTileToNVVMBase<ConvertTileToNVVM> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    for (KernelOp kernel : kernels) {
      if (!kernel.getScheduleAttr()) {
        kernel.emitOpError("needs a schedule to lower to NVVM");
        return signalPassFailure();
      }
      FailureOr<KernelPlan> plan = KernelPlan::build(kernel);
      if (failed(plan))
        return signalPassFailure();
      GpuKernelLowering lowering(kernel, module, *plan);
      if (failed(lowering.run()))
        return signalPassFailure();
      kernel.erase();
    }
  }
};

} // namespace
