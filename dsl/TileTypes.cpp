//===- TileTypes.cpp - tile and view types --------------------------------===//
#include "dsl/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::tile;

#define GET_TYPEDEF_CLASSES
#include "dsl/TileTypes.cpp.inc"

void TileDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dsl/TileTypes.cpp.inc"
      >();
}

static bool isTileElementType(Type t) {
  return t.isF32() || t.isBF16() || t.isF16() || isa<Float8E4M3FNType>(t) || t.isF64() ||
         t.isInteger(1) || t.isInteger(8) || t.isInteger(32) || t.isInteger(64);
}

//===----------------------------------------------------------------------===//
// TileType: !tile.tile<32x128xf32>, !tile.tile<f32>
//===----------------------------------------------------------------------===//

Type TileType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false, /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); }, parser.getContext(),
                    shape, elementType);
}

void TileType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape())
    printer << d << "x";
  printer << getElementType() << ">";
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType) {
  for (int64_t d : shape)
    if (d <= 0)
      return emitError() << "tile dims must be positive, got " << d;
  if (!isTileElementType(elementType))
    return emitError() << "unsupported tile element type " << elementType;
  return success();
}

int64_t TileType::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : getShape())
    n *= d;
  return n;
}

TileType TileType::withShape(ArrayRef<int64_t> shape) const {
  return TileType::get(getContext(), shape, getElementType());
}

TileType TileType::withElementType(Type type) const {
  return TileType::get(getContext(), getShape(), type);
}

//===----------------------------------------------------------------------===//
// ViewType: !tile.view<[B, 1, H, 128], bf16>
//===----------------------------------------------------------------------===//

Type ViewType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  SmallVector<StringAttr> names;
  Type elementType;
  auto parseDim = [&]() -> ParseResult {
    int64_t value = 0;
    OptionalParseResult isInt = parser.parseOptionalInteger(value);
    if (isInt.has_value()) {
      if (failed(*isInt))
        return failure();
      shape.push_back(value);
      names.push_back(StringAttr::get(parser.getContext(), ""));
      return success();
    }
    std::string name;
    if (parser.parseKeywordOrString(&name))
      return failure();
    shape.push_back(ShapedType::kDynamic);
    names.push_back(StringAttr::get(parser.getContext(), name));
    return success();
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim) ||
      parser.parseComma() || parser.parseType(elementType) || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); }, parser.getContext(),
                    shape, names, elementType);
}

void ViewType::print(AsmPrinter &printer) const {
  printer << "<[";
  for (unsigned i = 0; i < getShape().size(); ++i) {
    if (i)
      printer << ", ";
    if (isDynamicDim(i))
      printer.printKeywordOrString(getDimNames()[i].getValue());
    else
      printer << getShape()[i];
  }
  printer << "], " << getElementType() << ">";
}

LogicalResult ViewType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, ArrayRef<StringAttr> dimNames,
                               Type elementType) {
  if (shape.size() != dimNames.size())
    return emitError() << "view needs one name slot per dim";
  for (unsigned i = 0; i < shape.size(); ++i) {
    if (ShapedType::isDynamic(shape[i]) ? dimNames[i].getValue().empty() : shape[i] <= 0)
      return emitError() << "view dim " << i << " must be a positive integer or a name";
  }
  if (!isTileElementType(elementType) || elementType.isInteger(1))
    return emitError() << "unsupported view element type " << elementType;
  return success();
}
