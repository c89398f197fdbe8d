//===- KernelSignature.cpp - a tile kernel's signature -------------------===//
#include "backends/cpu/KernelSignature.h"
#include "dsl/TileDialect.h"

using namespace mlir;
using namespace kiln;

static DType dtypeOf(Type t) {
  if (t.isBF16()) return DType::BF16;
  if (t.isF16()) return DType::F16;
  if (t.isF64()) return DType::F64;
  if (t.isInteger(8)) return DType::I8;
  if (t.isInteger(32)) return DType::I32;
  if (t.isInteger(64)) return DType::I64;
  return DType::F32;
}

KernelSignature kiln::signatureOf(tile::KernelOp kernel) {
  KernelSignature sig;
  sig.name = kernel.getSymName().str();
  for (StringRef d : kernel.getDimNames().getAsValueRange<StringAttr>())
    sig.runtimeDims.push_back(d.str());
  ArrayRef<Type> inputs = kernel.getFunctionType().getInputs();
  for (unsigned i = sig.runtimeDims.size(); i < inputs.size(); ++i) {
    ParamInfo p;
    if (auto name = kernel.getArgAttrOfType<StringAttr>(i, tile::kNameAttr))
      p.name = name.str();
    else
      p.name = "arg" + std::to_string(i);
    if (auto view = dyn_cast<tile::ViewType>(inputs[i])) {
      p.isView = true;
      p.access = kernel.getAccess(i).str();
      p.dtype = dtypeOf(view.getElementType());
      for (unsigned d = 0; d < view.getRank(); ++d) {
        p.sizes.push_back(view.isDynamicDim(d) ? -1 : view.getShape()[d]);
        p.dimNames.push_back(view.getDimNames()[d].str());
      }
    } else {
      p.dtype = dtypeOf(inputs[i]);
    }
    sig.params.push_back(p);
  }
  return sig;
}

