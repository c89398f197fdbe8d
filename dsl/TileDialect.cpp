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
