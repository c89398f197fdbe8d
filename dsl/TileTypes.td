//===- TileTypes.td - tile dialect types -------------------*- tablegen -*-===//
#ifndef KILN_TILE_TYPES
#define KILN_TILE_TYPES

include "dsl/TileDialect.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def Tile_TileType : TypeDef<Tile_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "a register tile: static shape, element type, value semantics";
  let description = [{
    `!tile.tile<32x128xf32>` is a 32 x 128 tile of f32; `!tile.tile<f32>` is a
    scalar (rank 0). Where the elements live (threads, registers, shared
    memory) is decided by the schedule during lowering, never by this type.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getRank() const { return getShape().size(); }
    int64_t getNumElements() const;
    TileType withShape(::llvm::ArrayRef<int64_t> shape) const;
    TileType withElementType(::mlir::Type type) const;
  }];
}

def Tile_ViewType : TypeDef<Tile_Dialect, "View"> {
  let mnemonic = "view";
  let summary = "a view of a dense row-major global tensor with symbolic dims";
  let description = [{
    `!tile.view<[B, 1, H, 128], bf16>`: dims are integers (fixed when the
    kernel is compiled) or names of runtime dims of the kernel. Strides are
    row-major and derived from the dims (the innermost dim is contiguous).
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        ArrayRefParameter<"::mlir::StringAttr">:$dimNames,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getRank() const { return getShape().size(); }
    bool isDynamicDim(unsigned i) const { return ::mlir::ShapedType::isDynamic(getShape()[i]); }
  }];
}

#endif // KILN_TILE_TYPES
