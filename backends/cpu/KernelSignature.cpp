//===- KernelSignature.cpp - a tile kernel's signature -------------------===//
#include "backends/cpu/KernelSignature.h"
#include "dsl/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace kiln;

static DType dtypeOf(Type t) {
  if (t.isBF16())
    return DType::BF16;
  if (t.isF16())
    return DType::F16;
  if (isa<Float8E4M3FNType>(t))
    return DType::F8E4M3;
  if (t.isF64())
    return DType::F64;
  if (t.isInteger(8))
    return DType::I8;
  if (t.isInteger(32))
    return DType::I32;
  if (t.isInteger(64))
    return DType::I64;
  return DType::F32;
}

static ParamInfo viewParam(const std::string &name, tile::ViewType view) {
  ParamInfo p;
  p.name = name;
  p.isView = true;
  p.dtype = dtypeOf(view.getElementType());
  for (unsigned d = 0; d < view.getRank(); ++d) {
    p.sizes.push_back(view.isDynamicDim(d) ? -1 : view.getShape()[d]);
    p.dimNames.push_back(view.getDimNames()[d].str());
  }
  return p;
}

/// Parameters of a kernel or op: block arguments after the runtime dims.
template <typename FuncLike> static KernelSignature signatureOfFunction(FuncLike f) {
  KernelSignature sig;
  sig.name = f.getSymName().str();
  for (StringRef d : f.getDimNames().template getAsValueRange<StringAttr>())
    sig.runtimeDims.push_back(d.str());
  ArrayRef<Type> inputs = f.getFunctionType().getInputs();
  for (unsigned i = sig.runtimeDims.size(); i < inputs.size(); ++i) {
    ParamInfo p;
    if (auto name = f.template getArgAttrOfType<StringAttr>(i, tile::kNameAttr))
      p.name = name.str();
    else
      p.name = "arg" + std::to_string(i);
    if (auto view = dyn_cast<tile::ViewType>(inputs[i])) {
      p = viewParam(p.name, view);
      p.access = f.getAccess(i).str();
    } else {
      p.dtype = dtypeOf(inputs[i]);
    }
    if (auto tol = f.template getArgAttrOfType<FloatAttr>(i, tile::kToleranceAttr))
      p.tolerance = tol.getValueAsDouble();
    if (auto range = f.template getArgAttrOfType<ArrayAttr>(i, tile::kRangeAttr)) {
      p.hasRange = true;
      auto bound = [](Attribute a) {
        ParamInfo::Bound b;
        if (auto n = dyn_cast<IntegerAttr>(a))
          b.value = n.getInt();
        else
          b.dim = cast<StringAttr>(a).str();
        return b;
      };
      p.rangeLo = bound(range[0]);
      p.rangeHi = bound(range[1]);
    }
    if (auto of = f.template getArgAttrOfType<StringAttr>(i, tile::kOffsetsAttr))
      p.offsetsOf = of.str();
    sig.params.push_back(p);
  }
  return sig;
}

KernelSignature kiln::signatureOf(tile::KernelOp kernel) { return signatureOfFunction(kernel); }

OpPlan kiln::planOf(tile::HostOp op) {
  OpPlan plan;
  plan.signature = signatureOfFunction(op);
  Block &body = op.getBody().front();
  unsigned numDims = op.getDimNames().size();
  DenseMap<Value, int64_t> index; // op parameter i, or scratch -1 - i
  for (unsigned i = numDims; i < body.getNumArguments(); ++i)
    index[body.getArgument(i)] = i - numDims;
  auto names = op.getDimNames().getAsValueRange<StringAttr>();
  for (Operation &o : body) {
    if (auto s = dyn_cast<tile::ScratchOp>(o)) {
      ParamInfo p = viewParam(s.getName().str(), s.getResult().getType());
      p.access = "scratch";
      // A size that is no dim of the op is an aligned one (see the
      // language's `dim TP = align(T, 4)`): ceildivui(dim, m) * m.
      auto sizes = s.getSizes();
      for (unsigned d = 0, dyn = 0; d < p.sizes.size(); ++d) {
        if (p.sizes[d] >= 0)
          continue;
        Value size = sizes[dyn++];
        if (isa<BlockArgument>(size) ||
            llvm::any_of(plan.alignedDims, [&](auto &a) { return a.name == p.dimNames[d]; }))
          continue;
        auto mul = size.getDefiningOp<arith::MulIOp>();
        auto up = mul ? mul.getLhs().getDefiningOp<arith::CeilDivUIOp>() : nullptr;
        auto m = mul ? mul.getRhs().getDefiningOp<arith::ConstantIndexOp>() : nullptr;
        auto of = up ? dyn_cast<BlockArgument>(up.getLhs()) : nullptr;
        if (m && of && of.getOwner() == &body && of.getArgNumber() < numDims)
          plan.alignedDims.push_back(
              {p.dimNames[d], (*std::next(names.begin(), of.getArgNumber())).str(), m.value()});
      }
      index[s.getResult()] = -1 - (int64_t)plan.scratch.size();
      plan.scratch.push_back(p);
    } else if (auto l = dyn_cast<tile::LaunchOp>(o)) {
      OpPlan::Launch launch;
      launch.kernel = l.getKernel().str();
      for (Value a : l.getArgs())
        if (!a.getType().isIndex()) // the kernel's runtime dims: solved again at launch
          launch.args.push_back(index.lookup(a));
      plan.launches.push_back(launch);
    }
  }
  return plan;
}
