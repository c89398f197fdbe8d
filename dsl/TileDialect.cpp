//===- TileDialect.cpp - the tile dialect ---------------------------------===//
#include "dsl/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::tile;

#include "dsl/TileDialect.cpp.inc"
#include "dsl/TileEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dsl/TileAttrs.cpp.inc"

void TileDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dsl/TileOps.cpp.inc"
      >();
  registerTypes();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dsl/TileAttrs.cpp.inc"
      >();
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> size, ArrayRef<int64_t> lanes,
                                 ArrayRef<int64_t> warps, ArrayRef<int64_t> dims,
                                 ArrayRef<int64_t> lanesFirst) {
  size_t rank = size.size();
  if (rank < 1 || rank > kMaxLayoutRank || lanes.size() != rank || warps.size() != rank)
    return emitError() << "layout needs size, lanes and warps of one rank, 1 to " << kMaxLayoutRank;
  auto positive = [](ArrayRef<int64_t> xs) {
    return llvm::all_of(xs, [](int64_t x) { return x > 0; });
  };
  if (!positive(size) || !positive(lanes) || !positive(warps))
    return emitError() << "layout sizes, lanes and warps must be positive";
  int64_t laneCount = 1;
  for (int64_t l : lanes)
    laneCount *= l;
  if (32 % laneCount != 0)
    return emitError() << "layout lanes must divide a warp of 32 threads, got " << laneCount;
  if (dims.empty() || dims.size() > rank)
    return emitError() << "layout dims must name 1 to " << rank << " parent dims";
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= (int64_t)rank)
      return emitError() << "layout dim " << d << " is not a parent dim";
    if (llvm::is_contained(dims.take_front(i), d))
      return emitError() << "layout names parent dim " << d << " twice";
  }
  if (!lanesFirst.empty() && lanesFirst.size() != rank)
    return emitError() << "layout lanes_first needs one entry per parent dim (" << rank << "), got "
                       << lanesFirst.size();
  if (llvm::any_of(lanesFirst, [](int64_t x) { return x != 0 && x != 1; }))
    return emitError() << "layout lanes_first entries must be 0 or 1";
  return success();
}
