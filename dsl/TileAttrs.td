//===- TileAttrs.td - tile dialect attributes --------------*- tablegen -*-===//
#ifndef KILN_TILE_ATTRS
#define KILN_TILE_ATTRS

include "dsl/TileDialect.td"
include "mlir/IR/EnumAttr.td"

def Tile_RoleAttr : AttrDef<Tile_Dialect, "Role"> {
  let mnemonic = "role";
  let summary = "a warp role: a named range of warps, its register budget and the ops it runs";
  let description = [{
    `ops` names (by op id) the ops the role owns; it also runs whatever they
    need. A role with `issuesMma` owns no ops: it issues the tensor-core
    products of the computing role (whose threads stage the operands and
    read the results), following that role's loops. `mma`, where set, is
    the matrix instruction of the products the role runs, in place of the
    schedule's (a fused kernel's chunk work on `mma_sync` beside a state
    on `wgmma`).
  }];
  let parameters = (ins "::mlir::StringAttr":$name, "int64_t":$firstWarp,
                        "int64_t":$numWarps, "int64_t":$regs, "::mlir::ArrayAttr":$ops,
                        DefaultValuedParameter<"bool", "false">:$issuesMma,
                        DefaultValuedParameter<"::mlir::StringAttr",
                                               "::mlir::StringAttr()">:$mma);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Tile_PipelineAttr : AttrDef<Tile_Dialect, "Pipeline"> {
  let mnemonic = "pipeline";
  let summary = "a multi-buffered asynchronous copy pipeline of loads";
  let description = [{
    `buffers` names the loads (by op id) whose tiles travel through the
    pipeline; `depth` is the number of stages in flight; `copy` is the
    mechanism: `tma` or `ld` (plain vectorised loads) for loads, `bulk`
    for stores handed to an epilogue role.
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
    warp specialisation and asynchronous copies; `persistent` (when not 0)
    keeps that many CTAs resident per SM, each looping over grid points, so
    pipelines can fetch the next point's tiles while this one computes;
    `swizzle` (true unless written false) stages tensor-core operands in the
    swizzled shared-memory layouts rather than plain core matrices;
    `gatherMnMajor` (true unless `mn_major: direct`) stages large MN-major
    operands by gathering 16-byte pieces through shared memory; `regs`
    (when not 0, from `budgets: regs`) caps the registers of a thread of a
    kernel without register-reallocating roles; `tmemColumns` (when not 0,
    from `budgets: tmem_columns`) caps the tensor memory the kernel may
    allocate. `resident` names the loop-carried vars kept where the
    tensor cores accumulate across iterations: tensor-memory columns under
    tcgen05 (`tensor_memory: [S]`), the wgmma accumulator fragment in
    registers under wgmma (`registers: [S]`). `layouts` maps op ids to the
    thread layout the schedule chose for the tile each makes: a dictionary
    of `lanes` and, where written, `size` and `warps` (i64 arrays, one entry
    per tile dim); `tile-assign-layouts` completes and applies them. `sources` maps schedule keys (`mma`, `params`,
    `budgets.tmem_columns`, ...) to where the YAML file wrote them, so that
    a limit found while lowering can name the line that set it.
  }];
  let parameters = (ins "::mlir::StringAttr":$target, "::mlir::DictionaryAttr":$params,
                        "::mlir::ArrayAttr":$grid, "int64_t":$warps,
                        "::mlir::StringAttr":$mma, "::mlir::ArrayAttr":$roles,
                        "::mlir::ArrayAttr":$pipelines,
                        DefaultValuedParameter<"int64_t", "0">:$persistent,
                        DefaultValuedParameter<"bool", "true">:$swizzle,
                        DefaultValuedParameter<"bool", "true">:$gatherMnMajor,
                        DefaultValuedParameter<"int64_t", "0">:$regs,
                        DefaultValuedParameter<"int64_t", "0">:$tmemColumns,
                        DefaultValuedParameter<"::mlir::ArrayAttr",
                                               "::mlir::ArrayAttr()">:$resident,
                        DefaultValuedParameter<"::mlir::DictionaryAttr",
                                               "::mlir::DictionaryAttr()">:$sources,
                        DefaultValuedParameter<"::mlir::DictionaryAttr",
                                               "::mlir::DictionaryAttr()">:$layouts);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Tile_LayoutAttr : AttrDef<Tile_Dialect, "Layout"> {
  let mnemonic = "layout";
  let summary = "how a tile's elements are spread over the threads and warps of a CTA";
  let description = [{
    A blocked layout over a *parent* grid of rank 1 to 4, in the style of
    Triton's blocked and slice layouts, but one attribute for both. Per parent
    dim `p`: each thread holds `size[p]` consecutive elements, `lanes[p]`
    threads of a warp and `warps[p]` warps of the CTA cover the next levels, and
    the span `size[p] * lanes[p] * warps[p]` repeats until the tile's extent is
    covered. Lane and warp ids are split row-major over the parent dims (the
    last parent dim varies fastest). `dims[d]` names the parent dim that tile
    dim `d` runs along; parent dims that no tile dim names, and tile dims of
    extent 1, are replicated: every thread along them holds the same values.
    A tile reduced out of a larger one, or broadcast into one, keeps the
    larger one's parent, so no data moves between the two (a 1-D row of a
    2-D tile, a [1, BV] result of a [1, BV, K] one).

    `lanes_first` (optional, 0 or 1 per parent dim) reorders a dim's levels:
    where it is 1, the lanes come first and a thread's `size` elements along
    the dim lie `lanes` apart instead of next to each other. The accumulator
    fragment of a wgmma is such a layout: a warp's 16 rows are 8 lanes, then
    2 registers 8 rows apart, then the warps (below, one warpgroup holding a
    [64, 64] result, each thread rows r and r + 8 of columns 2c, 2c + 1,
    8 + 2c, ...).

    ```mlir
    // [32, 128] f32 over 4 warps: 16-byte vectors, a warp per row.
    #tile.layout<size = [1, 4], lanes = [1, 32], warps = [4, 1], dims = [0, 1]>
    // The row vector kn[128] that is broadcast along dim 0 of that tile.
    #tile.layout<size = [1, 4], lanes = [1, 32], warps = [4, 1], dims = [1]>
    // The wgmma accumulator of a [64, 64] product on one warpgroup.
    #tile.layout<size = [2, 2], lanes = [8, 4], warps = [4, 1], dims = [0, 1],
                 lanes_first = [1, 0]>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$size, ArrayRefParameter<"int64_t">:$lanes,
                        ArrayRefParameter<"int64_t">:$warps, ArrayRefParameter<"int64_t">:$dims,
                        OptionalArrayRefParameter<"int64_t">:$lanesFirst);
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$size, "::llvm::ArrayRef<int64_t>":$lanes,
                     "::llvm::ArrayRef<int64_t>":$warps, "::llvm::ArrayRef<int64_t>":$dims), [{
      return $_get($_ctxt, size, lanes, warps, dims, ::llvm::ArrayRef<int64_t>());
    }]>
  ];
  let assemblyFormat = [{
    `<` `size` `=` `[` $size `]` `,` `lanes` `=` `[` $lanes `]` `,` `warps` `=` `[` $warps `]`
    `,` `dims` `=` `[` $dims `]` (`,` `lanes_first` `=` `[` $lanesFirst^ `]`)? `>`
  }];
  let genVerifyDecl = 1;
}

#endif // KILN_TILE_ATTRS
