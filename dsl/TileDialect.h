//===- TileDialect.h - the tile dialect -------------------------*- C++ -*-===//
#ifndef KILN_DSL_TILEDIALECT_H
#define KILN_DSL_TILEDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <map>
#include <string>

#include "dsl/TileDialect.h.inc"
#include "dsl/TileEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dsl/TileTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dsl/TileAttrs.h.inc"

#define GET_OP_CLASSES
#include "dsl/TileOps.h.inc"

namespace kiln::tile {
/// Name of the discardable attribute that holds an op's stable ID.
inline constexpr llvm::StringLiteral kOpIdAttr = "tile.id";
/// More names of the op: `let` bindings of a tile an op with an ID already
/// makes (`let kn = if L2 { l2norm(k) } else { k_raw }` with L2 false), so
/// that a schedule naming them holds whatever the source's constants are.
inline constexpr llvm::StringLiteral kOpAliasesAttr = "tile.aliases";
/// Name of the argument attribute that holds a view's access mode.
inline constexpr llvm::StringLiteral kAccessAttr = "tile.access";
/// On an `in` argument of a kernel launched beside the launch before it
/// (`overlap`), or started early (`early_start`), that a launch before it
/// writes: written while the kernel runs, so not read-only (no
/// `ld.global.nc`, which ptxas moves above a wait, flag or griddepcontrol).
inline constexpr llvm::StringLiteral kWrittenBesideAttr = "tile.written_beside";
/// On a lowered scf.for that a role runs on one thread in few registers (a
/// role of copies: its loops, and a store ring's row loop): kept rolled by
/// every backend. LLVM does not unroll them; nvcc unrolled the epilogue
/// role's row loop four times and spilled its addresses.
inline constexpr llvm::StringLiteral kRolledLoopAttr = "tile.rolled";
/// On a tile.convert_layout of a `copy: shared` ring's buffer: where a role
/// whose tile layouts span another warp count than the writer's reads the
/// stage, in a layout of its own (the writer never runs it).
inline constexpr llvm::StringLiteral kRingReadAttr = "tile.ring_read";
/// Name of the argument attribute that holds a parameter's source name.
inline constexpr llvm::StringLiteral kNameAttr = "tile.name";
/// On an output parameter: the relative error it may have against the op's
/// float64 reference (`tolerance 2e-2` in the source), an f64.
inline constexpr llvm::StringLiteral kToleranceAttr = "tile.tolerance";
/// On an integer parameter: the range `kiln run` draws it from (`range
/// 0..N`), [lo, hi): each an integer or the name of a runtime dim.
inline constexpr llvm::StringLiteral kRangeAttr = "tile.range";
/// On an integer input: the runtime dim its values are offsets into (a
/// packed batch's cu_seqlens: 0 first, that dim last, never decreasing).
inline constexpr llvm::StringLiteral kOffsetsAttr = "tile.offsets";
/// Name of the discardable attribute that holds the #tile.layout of an op's
/// tile result (set by tile-assign-layouts on GPU targets).
inline constexpr llvm::StringLiteral kLayoutAttr = "tile.layout";
/// Name of the discardable attribute naming the schedule pipeline that
/// carries a load or store (set by tile-apply-schedule).
inline constexpr llvm::StringLiteral kPipelineAttr = "tile.pipeline";
/// The most parent dims a #tile.layout has (and so the most dims of a tile
/// a schedule's `layouts:` lays out): the views of the language have four.
inline constexpr size_t kMaxLayoutRank = 4;
/// On a lowered GPU kernel: the dynamic shared memory its launch needs.
inline constexpr llvm::StringLiteral kDynamicSharedBytesAttr = "kiln.dynamic_shared_bytes";
/// On a lowered GPU kernel: how many tile.convert_layout ops it lowered
/// (each a shared-memory round trip between two barriers), for reports.
inline constexpr llvm::StringLiteral kLayoutConversionsAttr = "kiln.layout_conversions";
/// On a lowered GPU kernel: the extent of the grid along x, y and z where
/// it is a compile-time constant (0 where it is known only at launch), so
/// that the CUDA source can state each block index's range.
inline constexpr llvm::StringLiteral kGridExtentsAttr = "kiln.grid_extents";
/// On a kernel (and the LLVM function it lowers to): the dim expressions
/// whose multipliers its trailing arguments hold (tile-invariant-divisors).
inline constexpr llvm::StringLiteral kDivisorsAttr = "kiln.divisors";
/// On a lowered GPU kernel: its TMA tensor maps as lowered, one
/// [view argument, swizzle bytes, box dims...] array per ring, for the
/// manifest (a ring's swizzle is chosen once thread layouts are known).
inline constexpr llvm::StringLiteral kTensorMapsAttr = "kiln.tensor_maps";
/// On a lowered GPU kernel: its dynamic shared memory as the plan laid it
/// out, one line per area ("[from, to) what"), for the CUDA source.
inline constexpr llvm::StringLiteral kSharedLayoutAttr = "kiln.shared_layout";

/// The consts a kernel or op was compiled with (its `tile.consts`): integer
/// and bool consts into `ints`, dtype consts and params (`STATE: "bf16"`)
/// into `types`.
inline void readConsts(mlir::Operation *op, std::map<std::string, int64_t> &ints,
                       std::map<std::string, std::string> &types) {
  if (auto consts = op->getAttrOfType<mlir::DictionaryAttr>("tile.consts"))
    for (mlir::NamedAttribute c : consts) {
      if (auto type = llvm::dyn_cast<mlir::StringAttr>(c.getValue()))
        types[c.getName().str()] = type.str();
      else if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(c.getValue()))
        ints[c.getName().str()] = i.getInt();
    }
}
} // namespace kiln::tile

#endif
