//===- KernelWalk.h - pieces every tile-kernel lowering shares --*- C++ -*-===//
//
// The CPU and GPU lowerings both rebuild a tile.kernel op by op. These are
// the parts that do not depend on where tiles live (buffers or registers).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LOWERING_ANALYSIS_KERNELWALK_H
#define KILN_LOWERING_ANALYSIS_KERNELWALK_H

#include "dsl/TileDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace kiln {

/// Whether a matrix product under `root` rounds its operands below f32:
/// operands of 16-bit floats, or a schedule multiplying on tensor cores
/// (tf32 / bf16). Results then meet the spec's looser tolerances.
bool roundsMatrixOperands(mlir::Operation *root);

/// Grid axes in launch order, fastest first: tile-apply-schedule's `order`,
/// or the declaration order when no schedule set one.
llvm::SmallVector<int64_t> launchOrder(tile::ProgramIdsOp op);

/// A view's dims as index values (runtime dims looked up in `map`, fixed
/// ones as constants) and its row-major strides, built at `b`.
struct ViewGeometry {
  llvm::SmallVector<mlir::Value> dims, strides;
};
ViewGeometry buildViewGeometry(mlir::OpBuilder &b, mlir::Location l, tile::KernelOp kernel,
                               tile::ViewType view, const mlir::IRMapping &map);

/// Rebuilds an scf.if without results at `b`, lowering the ops of each
/// region with `lowerOp` (which inserts at `b`).
mlir::LogicalResult
lowerIfWithoutResults(mlir::scf::IfOp op, mlir::OpBuilder &b, mlir::Location l,
                      const mlir::IRMapping &map,
                      llvm::function_ref<mlir::LogicalResult(mlir::Operation *)> lowerOp);

/// Copies an op of another dialect (index arithmetic) as it is; ops with
/// regions other than scf.for / scf.if are refused.
mlir::LogicalResult cloneScalarOp(mlir::Operation *op, mlir::OpBuilder &b, mlir::IRMapping &map);

/// `v` as an expression of `kernel`'s dims and integer constants in the
/// manifest's grid form: a dim name (StringAttr), a number (IntegerAttr), or
/// [op, lhs, rhs] (ArrayAttr, op one of add, sub, mul, div, ceildiv),
/// looking through index casts; null when it is anything else (a grid
/// coordinate, a loaded value). Grid extents and invariant divisors use it.
mlir::Attribute dimExprOf(mlir::Value v, tile::KernelOp kernel);

/// Whether `limit`, a load's or store's limit along dim `d` of `view`, is
/// the view's own end there (its dim, or a constant at least as large): no
/// sub-view narrowed it, so nothing in the tensor lies past it.
bool isViewEnd(mlir::Value limit, tile::ViewType view, unsigned d, tile::KernelOp kernel);

} // namespace kiln

#endif
