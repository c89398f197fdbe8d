//===- ConvertTileToSCF.cpp - tile kernels to scf loops over memrefs ------===//
//
// The CPU path. A kernel is rebuilt op by op into a func.func: tiles become
// stack buffers, tile ops become loop nests of scalar arith / math ops, and
// the grid becomes a loop nest around the body. The rebuild is a direct walk
// rather than a pattern rewrite because buffer placement (every alloca at the
// entry, loop-carried tiles in their own buffer) is a whole-function decision.
//
//===----------------------------------------------------------------------===//
#include "dsl/TileDialect.h"
#include "lowering/Passes.h"
#include "lowering/analysis/KernelWalk.h"
#include "lowering/conversion/Common/ScalarCodegen.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTTILETOSCF
#include "lowering/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::tile;

namespace {

using BodyFn = function_ref<void(OpBuilder &, ValueRange)>;

class KernelLowering {
public:
  KernelLowering(KernelOp kernel) : kernel(kernel), b(kernel), alloc(kernel) {}

  LogicalResult run();

private:
  KernelOp kernel;
  OpBuilder b;     // where the current op's code goes
  OpBuilder alloc; // the function entry, where buffers go
  IRMapping map;   // tile values to buffers, other values to their copies
  /// Per view argument: its dims and row-major strides as index values.
  DenseMap<Value, ViewGeometry> viewGeometry;

  Location loc() { return kernel.getLoc(); }
  Value cIndex(OpBuilder &ob, int64_t v) { return arith::ConstantIndexOp::create(ob, loc(), v); }
  Value buffer(Type tileType) {
    auto t = cast<TileType>(tileType);
    return memref::AllocaOp::create(alloc, loc(),
                                    MemRefType::get(t.getShape(), t.getElementType()));
  }
  void forEach(ArrayRef<int64_t> shape, BodyFn body, ArrayRef<int64_t> lower = {}) {
    SmallVector<Value> lbs, ubs, steps;
    for (auto [i, d] : llvm::enumerate(shape)) {
      lbs.push_back(cIndex(b, lower.empty() ? 0 : lower[i]));
      ubs.push_back(cIndex(b, d));
      steps.push_back(cIndex(b, 1));
    }
    scf::buildLoopNest(b, loc(), lbs, ubs, steps,
                       [&](OpBuilder &nb, Location, ValueRange ivs) { body(nb, ivs); });
  }
  Value in(Value tile) { return map.lookup(tile); }
  Value loadAt(OpBuilder &nb, Value buf, ValueRange ivs) {
    return memref::LoadOp::create(nb, loc(), buf, ivs);
  }
  void storeAt(OpBuilder &nb, Value v, Value buf, ValueRange ivs) {
    memref::StoreOp::create(nb, loc(), v, buf, ivs);
  }
  void copy(Value from, Value to, ArrayRef<int64_t> shape) {
    forEach(shape,
            [&](OpBuilder &nb, ValueRange ivs) { storeAt(nb, loadAt(nb, from, ivs), to, ivs); });
  }

  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerFor(scf::ForOp op);
  void lowerProgramIds(ProgramIdsOp op);
  void lowerAccess(Operation *op, Value view, ValueRange indices, ValueRange floors,
                   ValueRange limits, ArrayRef<int64_t> window, ArrayRef<int64_t> keep, bool masked,
                   Value tileBuf, bool isLoad, double other);
};

void KernelLowering::lowerProgramIds(ProgramIdsOp op) {
  unsigned n = op.getExtents().size();
  SmallVector<int64_t> order = launchOrder(op);
  // Outermost loop = slowest axis = last in the order.
  SmallVector<Value> ids(n);
  for (int64_t axis : llvm::reverse(order)) {
    auto loop =
        scf::ForOp::create(b, loc(), cIndex(b, 0), map.lookup(op.getExtents()[axis]), cIndex(b, 1));
    ids[axis] = loop.getInductionVar();
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  for (unsigned i = 0; i < n; ++i)
    map.map(op.getIds()[i], ids[i]);
}

void KernelLowering::lowerAccess(Operation *op, Value view, ValueRange indices, ValueRange floors,
                                 ValueRange limits, ArrayRef<int64_t> window,
                                 ArrayRef<int64_t> keep, bool masked, Value tileBuf, bool isLoad,
                                 double other) {
  auto &[dims, strides] = viewGeometry[view];
  Value mem = map.lookup(view);
  SmallVector<int64_t> tileShape;
  for (int64_t k : keep)
    tileShape.push_back(window[k]);
  SmallVector<Value> starts;
  for (Value i : indices)
    starts.push_back(map.lookup(i));
  forEach(tileShape, [&](OpBuilder &nb, ValueRange ivs) {
    Value linear = cIndex(nb, 0);
    Value inBounds;
    for (unsigned d = 0; d < starts.size(); ++d) {
      Value idx = starts[d];
      auto pos = llvm::find(keep, (int64_t)d);
      if (pos != keep.end()) {
        idx = arith::AddIOp::create(nb, loc(), idx, ivs[pos - keep.begin()]);
        if (masked) {
          Value ok = arith::CmpIOp::create(nb, loc(), arith::CmpIPredicate::ult, idx, dims[d]);
          if (!limits.empty())
            ok = arith::AndIOp::create(nb, loc(), ok,
                                       arith::CmpIOp::create(nb, loc(), arith::CmpIPredicate::slt,
                                                             idx, map.lookup(limits[d])));
          if (!floors.empty())
            ok = arith::AndIOp::create(nb, loc(), ok,
                                       arith::CmpIOp::create(nb, loc(), arith::CmpIPredicate::sge,
                                                             idx, map.lookup(floors[d])));
          inBounds = inBounds ? arith::AndIOp::create(nb, loc(), inBounds, ok).getResult() : ok;
        }
      }
      linear = arith::AddIOp::create(nb, loc(), linear,
                                     arith::MulIOp::create(nb, loc(), idx, strides[d]));
    }
    Type elem = cast<MemRefType>(tileBuf.getType()).getElementType();
    if (isLoad) {
      Value v;
      if (inBounds) {
        auto ifOp = scf::IfOp::create(nb, loc(), TypeRange{elem}, inBounds, /*withElse=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        scf::YieldOp::create(tb, loc(), ValueRange{memref::LoadOp::create(tb, loc(), mem, linear)});
        OpBuilder eb = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(eb, loc(), ValueRange{scalarConstant(eb, loc(), elem, other)});
        v = ifOp.getResult(0);
      } else {
        v = memref::LoadOp::create(nb, loc(), mem, linear);
      }
      storeAt(nb, v, tileBuf, ivs);
    } else {
      Value v = loadAt(nb, tileBuf, ivs);
      if (inBounds) {
        auto ifOp = scf::IfOp::create(nb, loc(), TypeRange{}, inBounds, /*withElse=*/false);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        memref::StoreOp::create(tb, loc(), v, mem, linear);
      } else {
        memref::StoreOp::create(nb, loc(), v, mem, linear);
      }
    }
  });
}

LogicalResult KernelLowering::lowerFor(scf::ForOp op) {
  SmallVector<Value> carriers(op.getInitArgs().size());
  SmallVector<Value> plainInits;
  for (auto [i, init] : llvm::enumerate(op.getInitArgs())) {
    if (auto t = dyn_cast<TileType>(init.getType())) {
      carriers[i] = buffer(t);
      copy(in(init), carriers[i], t.getShape());
    } else {
      plainInits.push_back(map.lookup(init));
    }
  }
  auto loop =
      scf::ForOp::create(b, loc(), map.lookup(op.getLowerBound()), map.lookup(op.getUpperBound()),
                         map.lookup(op.getStep()), plainInits);
  map.map(op.getInductionVar(), loop.getInductionVar());
  unsigned plain = 0;
  for (auto [i, arg] : llvm::enumerate(op.getRegionIterArgs()))
    map.map(arg, carriers[i] ? carriers[i] : loop.getRegionIterArgs()[plain++]);

  OpBuilder::InsertionGuard guard(b);
  Block *body = loop.getBody();
  if (body->mightHaveTerminator())
    b.setInsertionPoint(body->getTerminator());
  else
    b.setInsertionPointToEnd(body);
  for (Operation &inner : op.getBody()->without_terminator())
    if (failed(lowerOp(&inner)))
      return failure();
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  // Stage yielded tiles that are another carrier of this loop, so that a
  // permutation of carried tiles does not read an overwritten buffer.
  SmallVector<Value> sources(carriers.size());
  for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
    if (!carriers[i])
      continue;
    sources[i] = in(v);
    if (sources[i] != carriers[i] && llvm::is_contained(carriers, sources[i])) {
      Value staged = buffer(v.getType());
      copy(sources[i], staged, cast<TileType>(v.getType()).getShape());
      sources[i] = staged;
    }
  }
  SmallVector<Value> plainYields;
  for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
    if (!carriers[i])
      plainYields.push_back(map.lookup(v));
    else if (sources[i] != carriers[i])
      copy(sources[i], carriers[i], cast<TileType>(v.getType()).getShape());
  }
  if (!plainInits.empty())
    scf::YieldOp::create(b, loc(), plainYields);
  plain = 0;
  for (auto [i, result] : llvm::enumerate(op.getResults()))
    map.map(result, carriers[i] ? carriers[i] : loop.getResult(plain++));
  return success();
}

LogicalResult KernelLowering::lowerOp(Operation *op) {
  Location l = loc();
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return lowerFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return lowerIfWithoutResults(ifOp, b, loc(), map, [&](Operation *o) { return lowerOp(o); });
  if (auto ids = dyn_cast<ProgramIdsOp>(op)) {
    lowerProgramIds(ids);
    return success();
  }
  if (isa<ReturnOp>(op))
    return success();
  if (op->getDialect() != kernel->getDialect())
    return cloneScalarOp(op, b, map);

  Value result = op->getNumResults() == 1 && isa<TileType>(op->getResult(0).getType())
                     ? buffer(op->getResult(0).getType())
                     : Value();
  ArrayRef<int64_t> shape =
      result ? cast<TileType>(op->getResult(0).getType()).getShape() : ArrayRef<int64_t>{};
  auto elemOf = [](Value v) { return cast<TileType>(v.getType()).getElementType(); };

  LogicalResult status = success();
  TypeSwitch<Operation *>(op)
      .Case([&](LoadOp load) {
        lowerAccess(op, load.getView(), load.getIndices(), load.getFloors(), load.getLimits(),
                    load.getWindow(), load.getKeep(), load.getMasked(), result, /*isLoad=*/true,
                    load.getOther() ? load.getOther()->convertToDouble() : 0.0);
      })
      .Case([&](StoreOp store) {
        lowerAccess(op, store.getView(), store.getIndices(), store.getFloors(), store.getLimits(),
                    store.getWindow(), store.getKeep(), store.getMasked(), in(store.getValue()),
                    /*isLoad=*/false, 0.0);
      })
      // A flag is a one-element store; kernels run one after another here,
      // so a wait always finds its flag set.
      .Case([&](SignalOp signal) {
        SmallVector<int64_t> ones(signal.getIndices().size(), 1);
        lowerAccess(op, signal.getView(), signal.getIndices(), ValueRange(), ValueRange(), ones, {},
                    /*masked=*/false, in(signal.getValue()), /*isLoad=*/false, 0.0);
      })
      // Kernels run one after another: nothing to wait for or to let start.
      .Case<WaitOp, AwaitEarlierOp, AllowLaterOp>([&](Operation *) {})
      .Case([&](ConstantOp c) {
        TypedAttr value = c.getValue();
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
          storeAt(nb, arith::ConstantOp::create(nb, l, value), result, ivs);
        });
      })
      .Case([&](IotaOp iota) {
        Type elem = elemOf(iota.getResult());
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
          storeAt(nb, arith::IndexCastOp::create(nb, l, elem, ivs[0]), result, ivs);
        });
      })
      .Case([&](FromIndexOp fi) {
        Type elem = elemOf(fi.getResult());
        Value v = map.lookup(fi.getInput());
        Value asInt =
            arith::IndexCastOp::create(b, l, isa<FloatType>(elem) ? b.getI64Type() : elem, v);
        storeAt(b, scalarCast(b, loc(), asInt, elem), result, {});
      })
      .Case([&](SplatOp sp) {
        Value v = map.lookup(sp.getInput());
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) { storeAt(nb, v, result, ivs); });
      })
      .Case([&](ToIndexOp ti) {
        Value v = loadAt(b, in(ti.getInput()), {});
        Value idx = v.getType().isInteger(1)
                        ? arith::IndexCastUIOp::create(b, l, b.getIndexType(), v).getResult()
                        : arith::IndexCastOp::create(b, l, b.getIndexType(), v).getResult();
        map.map(ti.getResult(), idx);
      })
      .Case<AddOp, SubOp, MulOp, DivOp, RemOp, MaxOp, MinOp, AndOp, OrOp, CmpOp>([&](Operation *) {
        Value x = in(op->getOperand(0)), y = in(op->getOperand(1));
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
          storeAt(nb, scalarBinary(nb, loc(), op, loadAt(nb, x, ivs), loadAt(nb, y, ivs)), result,
                  ivs);
        });
      })
      .Case<NegOp, AbsOp, ExpOp, LogOp, Log1pOp, SqrtOp, RsqrtOp, SigmoidOp, TanhOp, NotOp>(
          [&](Operation *) {
            Value x = in(op->getOperand(0));
            forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
              storeAt(nb, scalarUnary(nb, loc(), op, loadAt(nb, x, ivs), MathFlavor::Libm), result,
                      ivs);
            });
          })
      .Case([&](SelectOp s) {
        Value c = in(s.getCond()), x = in(s.getLhs()), y = in(s.getRhs());
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
          storeAt(nb,
                  arith::SelectOp::create(nb, l, loadAt(nb, c, ivs), loadAt(nb, x, ivs),
                                          loadAt(nb, y, ivs)),
                  result, ivs);
        });
      })
      .Case([&](CastOp c) {
        Value x = in(c.getInput());
        Type to = elemOf(c.getResult());
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
          storeAt(nb, scalarCast(nb, loc(), loadAt(nb, x, ivs), to), result, ivs);
        });
      })
      .Case([&](BroadcastOp bc) {
        Value x = in(bc.getInput());
        ArrayRef<int64_t> inShape = bc.getInput().getType().getShape();
        unsigned offset = shape.size() - inShape.size();
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
          SmallVector<Value> idx;
          for (unsigned i = 0; i < inShape.size(); ++i)
            idx.push_back(inShape[i] == 1 ? cIndex(nb, 0) : ivs[i + offset]);
          storeAt(nb, loadAt(nb, x, idx), result, ivs);
        });
      })
      .Case([&](ReshapeOp rs) {
        Value x = in(rs.getInput());
        ArrayRef<int64_t> inShape = rs.getInput().getType().getShape();
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
          Value linear = cIndex(nb, 0);
          for (unsigned i = 0; i < shape.size(); ++i)
            linear = arith::AddIOp::create(
                nb, l, arith::MulIOp::create(nb, l, linear, cIndex(nb, shape[i])), ivs[i]);
          SmallVector<Value> idx(inShape.size());
          for (int i = inShape.size() - 1; i >= 0; --i) {
            idx[i] = arith::RemUIOp::create(nb, l, linear, cIndex(nb, inShape[i]));
            linear = arith::DivUIOp::create(nb, l, linear, cIndex(nb, inShape[i]));
          }
          storeAt(nb, loadAt(nb, x, idx), result, ivs);
        });
      })
      .Case([&](ConvertLayoutOp cv) {
        // Layouts mean nothing on the CPU: copy.
        Value x = in(cv.getInput());
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
          storeAt(nb, loadAt(nb, x, ivs), result, ivs);
        });
      })
      .Case([&](SliceOp sl) {
        Value x = in(sl.getInput());
        ArrayRef<int64_t> offsets = sl.getOffsets();
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
          SmallVector<Value> idx;
          for (unsigned i = 0; i < offsets.size(); ++i)
            idx.push_back(offsets[i]
                              ? (Value)arith::AddIOp::create(nb, l, ivs[i], cIndex(nb, offsets[i]))
                              : ivs[i]);
          storeAt(nb, loadAt(nb, x, idx), result, ivs);
        });
      })
      .Case([&](TransposeOp tr) {
        Value x = in(tr.getInput());
        ArrayRef<int64_t> perm = tr.getPermutation();
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
          SmallVector<Value> idx(perm.size());
          for (unsigned i = 0; i < perm.size(); ++i)
            idx[perm[i]] = ivs[i];
          storeAt(nb, loadAt(nb, x, idx), result, ivs);
        });
      })
      .Case([&](ReduceOp red) {
        Value x = in(red.getInput());
        Type elem = elemOf(red.getResult());
        int64_t axis = red.getAxis();
        double identity = reduceIdentity(red.getKind(), elem);
        forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
          storeAt(nb, scalarConstant(nb, loc(), elem, identity), result, ivs);
        });
        forEach(red.getInput().getType().getShape(), [&](OpBuilder &nb, ValueRange ivs) {
          SmallVector<Value> outIdx(ivs.begin(), ivs.end());
          outIdx.erase(outIdx.begin() + axis);
          Value acc = reduceCombine(nb, loc(), red.getKind(), loadAt(nb, result, outIdx),
                                    loadAt(nb, x, ivs));
          storeAt(nb, acc, result, outIdx);
        });
      })
      .Case([&](CumsumOp cs) {
        int64_t axis = cs.getAxis();
        copy(in(cs.getInput()), result, shape);
        SmallVector<int64_t> lower(shape.size(), 0);
        lower[axis] = 1;
        forEach(
            shape,
            [&](OpBuilder &nb, ValueRange ivs) {
              SmallVector<Value> prev(ivs.begin(), ivs.end());
              prev[axis] = arith::SubIOp::create(nb, l, ivs[axis], cIndex(nb, 1));
              Value x = loadAt(nb, result, ivs), p = loadAt(nb, result, prev);
              Value sum = isa<FloatType>(x.getType()) ? (Value)arith::AddFOp::create(nb, l, x, p)
                                                      : arith::AddIOp::create(nb, l, x, p);
              storeAt(nb, sum, result, ivs);
            },
            lower);
      })
      .Case([&](DotOp dot) {
        Value a = in(dot.getLhs()), bb = in(dot.getRhs());
        Type sumType = dot.getType().getElementType(); // f64 in the float64 reference
        if (dot.getAcc())
          copy(in(dot.getAcc()), result, shape);
        else
          forEach(shape, [&](OpBuilder &nb, ValueRange ivs) {
            storeAt(nb, scalarConstant(nb, loc(), sumType, 0.0), result, ivs);
          });
        int64_t kDim = dot.getLhs().getType().getShape()[1];
        forEach({shape[0], kDim, shape[1]}, [&](OpBuilder &nb, ValueRange ivs) {
          Value m = ivs[0], k = ivs[1], n = ivs[2];
          Value x = scalarCast(nb, loc(), loadAt(nb, a, {m, k}), sumType);
          Value y = scalarCast(nb, loc(), loadAt(nb, bb, {k, n}), sumType);
          Value acc = loadAt(nb, result, {m, n});
          Value fma = math::FmaOp::create(nb, l, x, y, acc);
          storeAt(nb, fma, result, {m, n});
        });
      })
      .Default([&](Operation *) { status = op->emitOpError("has no CPU lowering"); });
  if (result)
    map.map(op->getResult(0), result);
  return status;
}

LogicalResult KernelLowering::run() {
  FunctionType type = kernel.getFunctionType();
  SmallVector<Type> argTypes;
  for (Type t : type.getInputs()) {
    if (auto view = dyn_cast<ViewType>(t))
      argTypes.push_back(MemRefType::get({ShapedType::kDynamic}, view.getElementType()));
    else
      argTypes.push_back(t);
  }
  auto func = func::FuncOp::create(b, kernel.getLoc(), kernel.getSymName(),
                                   b.getFunctionType(argTypes, {}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  auto ret = func::ReturnOp::create(b, kernel.getLoc());
  // Buffers go before this anchor, code after it: every alloca dominates.
  b.setInsertionPoint(ret);
  alloc.setInsertionPoint(cIndex(b, 0).getDefiningOp());

  Block &body = kernel.getBody().front();
  unsigned numDims = kernel.getDimNames().size();
  for (auto [from, to] : llvm::zip(body.getArguments(), entry->getArguments()))
    map.map(from, to);
  // Dims and row-major strides of every view, computed once at the entry.
  for (unsigned i = numDims; i < body.getNumArguments(); ++i)
    if (auto view = dyn_cast<ViewType>(body.getArgument(i).getType()))
      viewGeometry[body.getArgument(i)] = buildViewGeometry(b, loc(), kernel, view, map);
  for (Operation &op : body)
    if (failed(lowerOp(&op)))
      return failure();
  return success();
}

struct ConvertTileToSCF : kiln::impl::ConvertTileToSCFBase<ConvertTileToSCF> {
  void runOnOperation() override {
    SmallVector<KernelOp> kernels(getOperation().getOps<KernelOp>());
    for (KernelOp kernel : kernels) {
      KernelLowering lowering(kernel);
      if (failed(lowering.run()))
        return signalPassFailure();
      kernel.erase();
    }
  }
};

} // namespace
