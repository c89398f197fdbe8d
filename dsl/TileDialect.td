//===- TileDialect.td - the tile dialect -------------------*- tablegen -*-===//
//
// The `tile` dialect holds a kernel as a tile-level algorithm: register tiles
// with value semantics, views of global tensors with symbolic dims, and a
// schedule attribute that says how the algorithm maps onto a target.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TILE_DIALECT
#define KILN_TILE_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let summary = "Tile-level kernels: register tiles, global views, schedules";
  let description = [{
    A `tile.kernel` is one program instance of a grid. Its body computes on
    register tiles (`!tile.tile<...>`, value semantics, static shapes) loaded
    from and stored to global views (`!tile.view<...>`, symbolic dims).
    Arithmetic on tiles uses the dialect's own elementwise ops, which require
    equal shapes; broadcasting is explicit (`tile.broadcast`). Loops are
    `scf.for` with tile-typed iteration arguments; runtime conditions are
    `scf.if`. Scalars that index memory are `index` values computed with
    `arith`.
  }];
  let cppNamespace = "::kiln::tile";
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif // KILN_TILE_DIALECT
