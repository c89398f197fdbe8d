//===- TileAttrs.td - tile dialect attributes --------------*- tablegen -*-===//
#ifndef KILN_TILE_ATTRS
#define KILN_TILE_ATTRS

include "dsl/TileDialect.td"
include "mlir/IR/EnumAttr.td"

def Tile_RoleAttr : AttrDef<Tile_Dialect, "Role"> {
  let mnemonic = "role";
  let summary = "a warp role: a named range of warps, its register budget and the ops it runs";
  let parameters = (ins "::mlir::StringAttr":$name, "int64_t":$firstWarp,
                        "int64_t":$numWarps, "int64_t":$regs, "::mlir::ArrayAttr":$ops);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Tile_PipelineAttr : AttrDef<Tile_Dialect, "Pipeline"> {
  let mnemonic = "pipeline";
  let summary = "a multi-buffered asynchronous copy pipeline of loads";
  let description = [{
    `buffers` names the loads (by op id) whose tiles travel through the
    pipeline; `depth` is the number of stages in flight; `copy` is the
    mechanism: `tma`, `cp_async` or `ld` (plain vectorised loads).
  }];
  let parameters = (ins "::mlir::StringAttr":$name, "::mlir::ArrayAttr":$buffers,
                        "int64_t":$depth, "::mlir::StringAttr":$copy);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Tile_ScheduleAttr : AttrDef<Tile_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "how a kernel maps onto a target; never changes what it computes";
  let description = [{
    Built by the YAML schedule loader after validation. `params` are the
    schedule parameters the kernel source refers to by name (tile sizes,
    chunk size); `grid` orders the kernel's grid axes, fastest-varying first;
    `warps` is the CTA size in warps; `mma` names the matrix instruction
    (`simt`, `wgmma`, `tcgen05`, or `none`); `roles` and `pipelines` describe
    warp specialisation and asynchronous copies.
  }];
  let parameters = (ins "::mlir::StringAttr":$target, "::mlir::DictionaryAttr":$params,
                        "::mlir::ArrayAttr":$grid, "int64_t":$warps,
                        "::mlir::StringAttr":$mma, "::mlir::ArrayAttr":$roles,
                        "::mlir::ArrayAttr":$pipelines);
  let assemblyFormat = "`<` struct(params) `>`";
}

#endif // KILN_TILE_ATTRS
