//===- ScalarCodegen.h - one element of a tile op, as arith / math -*- C++ -*-===//
//
// Every backend lowers a tile op to the same scalar operation per element;
// only transcendental functions differ by target (libm on the CPU, the GPU's
// approximate special-function unit on NVIDIA). Both lowerings call these.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LOWERING_CONVERSION_COMMON_SCALARCODEGEN_H
#define KILN_LOWERING_CONVERSION_COMMON_SCALARCODEGEN_H

#include "dsl/TileDialect.h"

#include "mlir/IR/Builders.h"

namespace kiln {

/// How transcendental functions are computed.
enum class MathFlavor {
  Libm, // math dialect ops, lowered to libm calls / LLVM intrinsics
  Nvvm, // ex2 / lg2 / rsqrt approximations of the special-function unit
};

mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location l, mlir::Type type, double value);
mlir::Value scalarCast(mlir::OpBuilder &b, mlir::Location l, mlir::Value x, mlir::Type to);
/// The element operation of a binary tile op (add ... or, cmp).
mlir::Value scalarBinary(mlir::OpBuilder &b, mlir::Location l, mlir::Operation *op, mlir::Value x,
                         mlir::Value y);
/// The element operation of a unary tile op (neg ... not).
mlir::Value scalarUnary(mlir::OpBuilder &b, mlir::Location l, mlir::Operation *op, mlir::Value x,
                        MathFlavor flavor);
mlir::Value reduceCombine(mlir::OpBuilder &b, mlir::Location l, tile::ReduceKind kind,
                          mlir::Value acc, mlir::Value x);
double reduceIdentity(tile::ReduceKind kind, mlir::Type type);

} // namespace kiln

#endif
