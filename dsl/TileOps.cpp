//===- TileOps.cpp - tile dialect op verifiers and assembly ---------------===//
#include "dsl/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

using namespace mlir;
using namespace kiln::tile;

#define GET_OP_CLASSES
#include "dsl/TileOps.cpp.inc"

static bool isFloatTile(Type t) { return isa<FloatType>(cast<TileType>(t).getElementType()); }

/// f8e4m3 is a storage type: tensors hold it, tiles are loaded, stored and
/// cast from and to it, and nothing computes on it (every backend widens it
/// first, as the GPUs' tensor-core-free paths do).
static bool isStorageOnly(Type t) {
  return isa<Float8E4M3FNType>(cast<TileType>(t).getElementType());
}
static LogicalResult storageOnlyError(Operation *op, Type t) {
  return op->emitOpError("cannot compute on ")
         << t << ": f8e4m3 is a storage type; cast it to f32 first";
}
static bool isIntTile(Type t) { return isa<IntegerType>(cast<TileType>(t).getElementType()); }

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

// tile.kernel and tile.op share the function-like syntax and signature rules.
template <typename FuncLike>
static ParseResult parseFunctionLike(OpAsmParser &parser, OperationState &result) {
  auto buildType = [](Builder &b, ArrayRef<Type> args, ArrayRef<Type> results,
                      function_interface_impl::VariadicFlag,
                      std::string &) { return b.getFunctionType(args, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false, FuncLike::getFunctionTypeAttrName(result.name),
      buildType, FuncLike::getArgAttrsAttrName(result.name),
      FuncLike::getResAttrsAttrName(result.name));
}

template <typename FuncLike> static void printFunctionLike(OpAsmPrinter &p, FuncLike op) {
  function_interface_impl::printFunctionOp(p, op, /*isVariadic=*/false,
                                           op.getFunctionTypeAttrName(), op.getArgAttrsAttrName(),
                                           op.getResAttrsAttrName());
}

template <typename FuncLike> static StringRef accessOf(FuncLike op, unsigned argIndex) {
  if (auto access = op.template getArgAttrOfType<StringAttr>(argIndex, kAccessAttr))
    return access.getValue();
  return {};
}

/// The arguments are the runtime dims (index, named by dim_names), then
/// views with an access mode over those dims and f32 / i32 / i64 scalars;
/// nothing is returned.
template <typename FuncLike>
static LogicalResult verifySignature(FuncLike op, const char *whatReturnsNothing) {
  if (!op.getFunctionType().getResults().empty())
    return op.emitOpError(whatReturnsNothing) << " return nothing; write results through out views";
  unsigned numDims = op.getDimNames().size();
  ArrayRef<Type> inputs = op.getFunctionType().getInputs();
  if (inputs.size() < numDims)
    return op.emitOpError("has ") << numDims << " dim names but only " << inputs.size()
                                  << " arguments";
  for (unsigned i = 0; i < inputs.size(); ++i) {
    Type t = inputs[i];
    if (i < numDims) {
      if (!t.isIndex())
        return op.emitOpError("argument ") << i << " is a runtime dim and must be index";
      continue;
    }
    if (isa<ViewType>(t)) {
      StringRef access = op.getAccess(i);
      if (access != "in" && access != "out" && access != "inout")
        return op.emitOpError("view argument ")
               << i << " needs tile.access = \"in\", \"out\" or \"inout\"";
      for (auto [dim, name] :
           llvm::zip(cast<ViewType>(t).getShape(), cast<ViewType>(t).getDimNames())) {
        if (ShapedType::isDynamic(dim) && !llvm::is_contained(op.getDimNames(), name))
          return op.emitOpError("view argument ")
                 << i << " uses dim '" << name.getValue() << "' that is not a runtime dim of the "
                 << (std::is_same_v<FuncLike, KernelOp> ? "kernel" : "op");
      }
      continue;
    }
    // f64: scalars of the float64 reference (the source's promoted f32).
    if (!t.isF32() && !t.isF64() && !t.isInteger(32) && !t.isInteger(64))
      return op.emitOpError("scalar argument ") << i << " must be f32, f64, i32 or i64, got " << t;
  }
  return success();
}

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseFunctionLike<KernelOp>(parser, result);
}

void KernelOp::print(OpAsmPrinter &p) { printFunctionLike(p, *this); }

StringRef KernelOp::getAccess(unsigned argIndex) { return accessOf(*this, argIndex); }

ProgramIdsOp KernelOp::getProgramIds() {
  ProgramIdsOp found;
  getBody().walk([&](ProgramIdsOp op) { found = op; });
  return found;
}

llvm::StringMap<Operation *> KernelOp::getOpsById() {
  llvm::StringMap<Operation *> byId;
  getBody().walk([&](Operation *op) {
    if (auto id = op->getAttrOfType<StringAttr>(kOpIdAttr))
      byId[id.getValue()] = op;
  });
  // Aliases after every ID: an ID wins a name.
  getBody().walk([&](Operation *op) {
    if (auto aliases = op->getAttrOfType<ArrayAttr>(kOpAliasesAttr))
      for (StringRef alias : aliases.getAsValueRange<StringAttr>())
        byId.try_emplace(alias, op);
  });
  return byId;
}

Operation *KernelOp::copiedBy(Operation *op) {
  if (auto cast = dyn_cast_or_null<CastOp>(op))
    if (auto load = cast.getInput().getDefiningOp<LoadOp>())
      return load;
  return op;
}

LogicalResult KernelOp::verify() { return verifySignature(*this, "kernels"); }

LogicalResult KernelOp::verifyRegions() {
  unsigned numProgramIds = 0;
  llvm::StringMap<Operation *> ids;
  WalkResult walk = getBody().walk([&](Operation *op) -> WalkResult {
    if (isa<ProgramIdsOp>(op))
      ++numProgramIds;
    if (auto id = op->getAttrOfType<StringAttr>(kOpIdAttr)) {
      auto [it, inserted] = ids.try_emplace(id.getValue(), op);
      if (!inserted) {
        op->emitOpError("reuses op id '") << id.getValue() << "'";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (numProgramIds != 1)
    return emitOpError("needs exactly one tile.program_ids, found ") << numProgramIds;
  if (getProgramIds()->getParentOp() != getOperation())
    return emitOpError("tile.program_ids must be at the top level of the body");
  return success();
}

//===----------------------------------------------------------------------===//
// HostOp, ScratchOp, LaunchOp
//===----------------------------------------------------------------------===//

ParseResult HostOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseFunctionLike<HostOp>(parser, result);
}

void HostOp::print(OpAsmPrinter &p) { printFunctionLike(p, *this); }

StringRef HostOp::getAccess(unsigned argIndex) { return accessOf(*this, argIndex); }

LogicalResult HostOp::verify() { return verifySignature(*this, "ops"); }

LogicalResult ScratchOp::verify() {
  ViewType t = getResult().getType();
  int64_t dynamic = llvm::count_if(t.getShape(), ShapedType::isDynamic);
  if ((int64_t)getSizes().size() != dynamic)
    return emitOpError("needs one size per runtime dim of its type (")
           << dynamic << "), got " << getSizes().size();
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto kernel = symbols.lookupNearestSymbolFrom<KernelOp>(*this, getKernelAttr());
  if (!kernel)
    return emitOpError("'") << getKernel() << "' is not a tile.kernel of this module";
  ArrayRef<Type> want = kernel.getFunctionType().getInputs();
  if (want.size() != getArgs().size())
    return emitOpError("kernel '")
           << getKernel() << "' takes " << want.size()
           << " arguments (its dims, then its parameters), got " << getArgs().size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(want, getArgs().getTypes())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("argument ") << i << " is " << std::get<1>(pair) << " but kernel '"
                                      << getKernel() << "' takes " << std::get<0>(pair);
  return success();
}

//===----------------------------------------------------------------------===//
// ProgramIdsOp
//===----------------------------------------------------------------------===//

LogicalResult ProgramIdsOp::verify() {
  if (getNames().size() != getExtents().size() || getIds().size() != getExtents().size())
    return emitOpError("needs one name and one result per grid extent");
  if (getExtents().empty() || getExtents().size() > 3)
    return emitOpError("grids have 1 to 3 axes, got ") << getExtents().size();
  return success();
}

//===----------------------------------------------------------------------===//
// Loads and stores
//===----------------------------------------------------------------------===//

static LogicalResult verifyWindow(Operation *op, ViewType view, unsigned numIndices,
                                  unsigned numFloors, unsigned numLimits, bool masked,
                                  ArrayRef<int64_t> window, ArrayRef<int64_t> keep, TileType tile) {
  if (numIndices != view.getRank() || window.size() != view.getRank())
    return op->emitOpError("needs one index and one window extent per view dim (")
           << view.getRank() << ")";
  if (numLimits != 0 && numLimits != view.getRank())
    return op->emitOpError("needs no limits or one per view dim (") << view.getRank() << ")";
  if (numLimits != 0 && !masked)
    return op->emitOpError("with limits must be masked");
  if (numFloors != 0 && numFloors != view.getRank())
    return op->emitOpError("needs no floors or one per view dim (") << view.getRank() << ")";
  if (numFloors != 0 && !masked)
    return op->emitOpError("with floors must be masked");
  if (keep.size() != tile.getRank())
    return op->emitOpError("keeps ")
           << keep.size() << " dims but the tile has rank " << tile.getRank();
  int64_t prev = -1;
  for (auto [i, k] : llvm::enumerate(keep)) {
    if (k <= prev || k >= view.getRank())
      return op->emitOpError("keep must list increasing view dims");
    if (window[k] != tile.getShape()[i])
      return op->emitOpError("window extent ")
             << window[k] << " of dim " << k << " does not match tile dim " << tile.getShape()[i];
    prev = k;
  }
  for (auto [d, w] : llvm::enumerate(window)) {
    if (w <= 0)
      return op->emitOpError("window extents must be positive");
    if (!llvm::is_contained(keep, int64_t(d)) && w != 1)
      return op->emitOpError("dropped dim ") << d << " must have window extent 1";
    if (!view.isDynamicDim(d) && w > view.getShape()[d])
      return op->emitOpError("window extent ")
             << w << " exceeds dim " << d << " of size " << view.getShape()[d];
  }
  if (tile.getElementType() != view.getElementType())
    return op->emitOpError("tile element type ")
           << tile.getElementType() << " differs from view element type " << view.getElementType();
  return success();
}

LogicalResult LoadOp::verify() {
  return verifyWindow(*this, getView().getType(), getIndices().size(), getFloors().size(),
                      getLimits().size(), getMasked(), getWindow(), getKeep(),
                      getResult().getType());
}

LogicalResult StoreOp::verify() {
  return verifyWindow(*this, getView().getType(), getIndices().size(), getFloors().size(),
                      getLimits().size(), getMasked(), getWindow(), getKeep(),
                      getValue().getType());
}

/// A flag: one i32 element of the view, set or awaited as a rank-0 i32.
static LogicalResult verifyFlag(Operation *op, ViewType view, size_t indices, TileType value) {
  if (!view.getElementType().isInteger(32))
    return op->emitOpError("needs an i32 view for its flags, got ") << view.getElementType();
  if (indices != view.getShape().size())
    return op->emitOpError("needs one index per dim of the view (")
           << view.getShape().size() << "), got " << indices;
  if (value.getRank() != 0 || !value.getElementType().isInteger(32))
    return op->emitOpError("needs a rank-0 i32 value, got ") << value;
  return success();
}

LogicalResult SignalOp::verify() {
  return verifyFlag(*this, getView().getType(), getIndices().size(), getValue().getType());
}

LogicalResult WaitOp::verify() {
  return verifyFlag(*this, getView().getType(), getIndices().size(), getValue().getType());
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  Type elementType = getResult().getType().getElementType();
  if (getValue().getType() != elementType)
    return emitOpError("value type ")
           << getValue().getType() << " differs from element type " << elementType;
  if (!isa<FloatAttr, IntegerAttr>(getValue()))
    return emitOpError("value must be a float or integer scalar");
  return success();
}

LogicalResult IotaOp::verify() {
  TileType t = getResult().getType();
  if (t.getRank() != 1 || !isIntTile(t) || t.getElementType().isInteger(1))
    return emitOpError("result must be a 1-D integer tile");
  return success();
}

LogicalResult FromIndexOp::verify() {
  TileType t = getResult().getType();
  if (t.getRank() != 0 || t.getElementType().isInteger(1))
    return emitOpError("result must be a rank-0 numeric tile");
  return success();
}

LogicalResult ToIndexOp::verify() {
  TileType t = getInput().getType();
  if (t.getRank() != 0 || !isIntTile(t))
    return emitOpError("input must be a rank-0 integer tile");
  return success();
}

LogicalResult SplatOp::verify() {
  if (getInput().getType() != getResult().getType().getElementType())
    return emitOpError("element type must be the scalar's type");
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename Op> static LogicalResult verifyFloat(Op op) {
  if (isStorageOnly(op.getType()))
    return storageOnlyError(op, op.getType());
  if (!isFloatTile(op.getType()))
    return op.emitOpError("needs a float tile, got ") << op.getType();
  return success();
}
template <typename Op> static LogicalResult verifyBool(Op op) {
  if (!cast<TileType>(op.getType()).getElementType().isInteger(1))
    return op.emitOpError("needs an i1 tile, got ") << op.getType();
  return success();
}
template <typename Op> static LogicalResult verifyNumeric(Op op) {
  if (isStorageOnly(op.getType()))
    return storageOnlyError(op, op.getType());
  if (cast<TileType>(op.getType()).getElementType().isInteger(1))
    return op.emitOpError("needs a numeric tile, got ") << op.getType();
  return success();
}

LogicalResult AddOp::verify() { return verifyNumeric(*this); }
LogicalResult SubOp::verify() { return verifyNumeric(*this); }
LogicalResult MulOp::verify() { return verifyNumeric(*this); }
LogicalResult DivOp::verify() { return verifyNumeric(*this); }
LogicalResult RemOp::verify() { return verifyNumeric(*this); }
LogicalResult MaxOp::verify() { return verifyNumeric(*this); }
LogicalResult MinOp::verify() { return verifyNumeric(*this); }
LogicalResult AndOp::verify() { return verifyBool(*this); }
LogicalResult OrOp::verify() { return verifyBool(*this); }
LogicalResult NegOp::verify() { return verifyNumeric(*this); }
LogicalResult AbsOp::verify() { return verifyNumeric(*this); }
LogicalResult ExpOp::verify() { return verifyFloat(*this); }
LogicalResult LogOp::verify() { return verifyFloat(*this); }
LogicalResult Log1pOp::verify() { return verifyFloat(*this); }
LogicalResult SqrtOp::verify() { return verifyFloat(*this); }
LogicalResult RsqrtOp::verify() { return verifyFloat(*this); }
LogicalResult SigmoidOp::verify() { return verifyFloat(*this); }
LogicalResult TanhOp::verify() { return verifyFloat(*this); }
LogicalResult NotOp::verify() { return verifyBool(*this); }

LogicalResult CmpOp::verify() {
  if (getLhs().getType() != getRhs().getType())
    return emitOpError("compares tiles of different types");
  if (isStorageOnly(getLhs().getType()))
    return storageOnlyError(*this, getLhs().getType());
  if (getResult().getType() !=
      getLhs().getType().withElementType(IntegerType::get(getContext(), 1)))
    return emitOpError("result must be an i1 tile of the operands' shape");
  return success();
}

LogicalResult SelectOp::verify() {
  if (getLhs().getType() != getResult().getType() || getRhs().getType() != getResult().getType())
    return emitOpError("branches must have the result type");
  if (getCond().getType() !=
      getResult().getType().withElementType(IntegerType::get(getContext(), 1)))
    return emitOpError("condition must be an i1 tile of the result's shape");
  return success();
}

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getResult().getType().getShape())
    return emitOpError("cannot change the shape");
  if (getResult().getType().getElementType().isInteger(1))
    return emitOpError("cannot cast to i1; compare instead");
  if ((isStorageOnly(getInput().getType()) && !isFloatTile(getResult().getType())) ||
      (isStorageOnly(getResult().getType()) && !isFloatTile(getInput().getType())))
    return emitOpError("casts f8e4m3 only from and to floats");
  return success();
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("cannot change the element type");
  if (in.getRank() > out.getRank())
    return emitOpError("cannot lower the rank");
  unsigned offset = out.getRank() - in.getRank();
  for (unsigned i = 0; i < in.getRank(); ++i) {
    int64_t a = in.getShape()[i], b = out.getShape()[i + offset];
    if (a != 1 && a != b)
      return emitOpError("dim ") << i << " of size " << a << " cannot broadcast to " << b;
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("cannot change the element type");
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot change the number of elements (")
           << in.getNumElements() << " vs " << out.getNumElements() << ")";
  return success();
}

LogicalResult TransposeOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  ArrayRef<int64_t> perm = getPermutation();
  if (perm.size() != in.getRank() || out.getRank() != in.getRank())
    return emitOpError("permutation must have one entry per dim");
  SmallVector<bool> seen(perm.size(), false);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOpError("is not a permutation");
    seen[p] = true;
    if (out.getShape()[i] != in.getShape()[p])
      return emitOpError("result dim ") << i << " must equal input dim " << p;
  }
  if (in.getElementType() != out.getElementType())
    return emitOpError("cannot change the element type");
  return success();
}

LogicalResult SliceOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  ArrayRef<int64_t> offsets = getOffsets();
  if (offsets.size() != in.getRank() || out.getRank() != in.getRank())
    return emitOpError("needs one offset per dim");
  if (in.getElementType() != out.getElementType())
    return emitOpError("cannot change the element type");
  for (unsigned d = 0; d < in.getRank(); ++d)
    if (offsets[d] < 0 || out.getShape()[d] < 1 ||
        offsets[d] + out.getShape()[d] > in.getShape()[d])
      return emitOpError("window [")
             << offsets[d] << ", " << offsets[d] + out.getShape()[d] << ") of dim " << d
             << " lies outside its " << in.getShape()[d] << " elements";
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions, scans, matrix products
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  TileType in = getInput().getType(), out = getResult().getType();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= (int64_t)in.getRank())
    return emitOpError("axis ") << axis << " is out of range for rank " << in.getRank();
  SmallVector<int64_t> expected(in.getShape());
  expected.erase(expected.begin() + axis);
  if (out != in.withShape(expected))
    return emitOpError("result must be the input without dim ") << axis;
  if (in.getElementType().isInteger(1))
    return emitOpError("cannot reduce i1 tiles");
  if (isStorageOnly(in))
    return storageOnlyError(*this, in);
  return success();
}

LogicalResult CumsumOp::verify() {
  if ((int64_t)getAxis() < 0 || (int64_t)getAxis() >= getInput().getType().getRank())
    return emitOpError("axis ") << getAxis() << " is out of range";
  return verifyNumeric(*this);
}

LogicalResult DotOp::verify() {
  TileType a = getLhs().getType(), b = getRhs().getType(), c = getResult().getType();
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOpError("operands must be 2-D tiles");
  if (!isFloatTile(a) || !isFloatTile(b))
    return emitOpError("operands must be float tiles");
  if (isStorageOnly(a) || isStorageOnly(b))
    return storageOnlyError(*this, isStorageOnly(a) ? a : b);
  if (a.getShape()[1] != b.getShape()[0])
    return emitOpError("contracting dims differ: ") << a.getShape()[1] << " vs " << b.getShape()[0];
  // Products sum in f32, or in f64 when both operands are f64 (the float64 reference).
  bool f64 = a.getElementType().isF64() && b.getElementType().isF64();
  if (c.getShape() != ArrayRef<int64_t>{a.getShape()[0], b.getShape()[1]} ||
      c.getElementType() !=
          (f64 ? Type(Float64Type::get(getContext())) : Float32Type::get(getContext())))
    return emitOpError("result must be ")
           << a.getShape()[0] << "x" << b.getShape()[1] << (f64 ? "xf64" : "xf32");
  if (getAcc() && getAcc().getType() != c)
    return emitOpError("accumulator must have the result type");
  return success();
}
