//===- Passes.td - Kiln's lowering passes ------------------*- tablegen -*-===//
#ifndef KILN_LOWERING_PASSES
#define KILN_LOWERING_PASSES

include "mlir/Pass/PassBase.td"

def TileApplySchedule : Pass<"tile-apply-schedule", "::mlir::ModuleOp"> {
  let summary = "Bind a kernel's #tile.schedule to its ops";
  let description = [{
    Checks the schedule attached to every `tile.kernel` against the kernel and
    records the decisions on the ops that later passes lower: the launch order
    of the grid axes on `tile.program_ids` (`order`, fastest first), the role
    that owns each op named by a warp role (`tile.role`), and the pipeline that
    carries each load named by a pipeline (`tile.pipeline`). A schedule that
    names an op the kernel lacks, or a grid axis it does not have, is an error.
    A loop-carried var the schedule keeps where the tensor cores accumulate
    (`registers:` / `tensor_memory:`, `resident` on the attribute) and that
    the loop updates as `dot(a, b, acc)` is rewritten to `acc + dot(a, b)`,
    the form a resident accumulation takes (the sum keeps the product's ID):
    `%d = tile.dot %x, %y, %acc` becomes `%p = tile.dot %x, %y` and
    `%d = tile.add %acc, %p`.

    Before:
    ```mlir
    tile.kernel @k(...) attributes {schedule = #tile.schedule<target = "sm_90a",
        params = {BV = 32 : i64}, grid = ["iv", "hv", "n"], warps = 4, mma = "none",
        roles = [], pipelines = [#tile.pipeline<name = "state", buffers = ["S0"],
                                                depth = 2, copy = "tma">]>} {
      %ids:3 = tile.program_ids ["n", "hv", "iv"] (%B, %HV, %c4) : index, index, index
      %S0 = tile.load %state[...] ... {tile.id = "S0"}
    ```
    After:
    ```mlir
      %ids:3 = tile.program_ids ["n", "hv", "iv"] (%B, %HV, %c4) {order = array<i64: 2, 1, 0>} : ...
      %S0 = tile.load %state[...] ... {tile.id = "S0", tile.pipeline = "state"}
    ```
  }];
}

def TileHoistLoads : Pass<"tile-hoist-loads", "::mlir::ModuleOp"> {
  let summary = "Issue every global load as early as its operands allow";
  let description = [{
    Moves each `tile.load` up its block to just below the last op it needs:
    the definition of an operand (its address arithmetic, scalars and
    indices made by pure ops, moves up with it first), an op that may store
    into the same view (views are distinct kernel arguments, `noalias`), or
    a load written before it, so that a block issues its loads in source
    order. A kernel then starts all the loads of a block together instead
    of one round trip to memory after each piece of work that precedes a
    load in the source: on a GPU, a decode step's state load no longer
    waits for the norms of q and k, nor a gate's load for a reduction.
    Loads never leave their block: one under `scf.if` may be valid only
    when its condition holds (points are not masked), and one in a loop
    body reads that iteration's window. A load a schedule's pipeline
    carries (`tile.pipeline`) has no trip to memory to start early (its
    copies filled the stage ahead): it stops below a `tile.dot`, where its
    wait for the stage runs while the product multiplies.

    Before:
    ```mlir
    %q = tile.load %qv[%n, %c0] window [1, 128] keep [1] : ... -> <128xf32>
    %s = tile.reduce sum %q axis 0 : <128xf32> -> <f32>
    %i = tile.to_index %slot : <i32>
    %S = tile.load %state[%i, %c0] window [1, 128] keep [1] : ... -> <128xf32>
    ```
    After:
    ```mlir
    %q = tile.load %qv[%n, %c0] window [1, 128] keep [1] : ... -> <128xf32>
    %i = tile.to_index %slot : <i32>
    %S = tile.load %state[%i, %c0] window [1, 128] keep [1] : ... -> <128xf32>
    %s = tile.reduce sum %q axis 0 : <128xf32> -> <f32>
    ```
  }];
}

def TileNarrowIndexDivision : Pass<"tile-narrow-index-division", "::mlir::ModuleOp"> {
  let summary = "Divide runtime dims and grid coordinates in 32 bits";
  let description = [{
    Index arithmetic lowers to 64-bit integers on the GPU, where a 64-bit
    division or remainder is a long routine (a call, with register saves
    in local memory where ptxas inlines it under pressure). The GPU runtime
    rejects every dim of 2^31 or more, and a grid coordinate is below its
    extent, so a quotient or remainder of dims, grid coordinates,
    non-negative constants under 2^31, and quotients, remainders, minima
    and maxima of those, fits in 32 bits. Each such `divsi` / `divui` /
    `ceildivsi` / `ceildivui` / `remsi` / `remui` on `index` becomes the
    unsigned i32 op between `index_castui`s (both operands are
    non-negative, so the signed forms equal the unsigned ones). Products
    and sums of dims may exceed 2^31 and stay 64-bit. GPU pipeline only.

    Before (GVA: the key head of value head `hv`):
    ```mlir
    %ids:2 = tile.program_ids ["n", "hv"](%B, %HV) : index, index
    %g = arith.divsi %HV, %H : index
    %h = arith.divsi %ids#1, %g : index
    ```
    After:
    ```mlir
    %0 = arith.index_castui %HV : index to i32
    %1 = arith.index_castui %H : index to i32
    %2 = arith.divui %0, %1 : i32
    %g = arith.index_castui %2 : i32 to index
    %3 = arith.index_castui %ids#1 : index to i32
    %4 = arith.index_castui %g : index to i32
    %5 = arith.divui %3, %4 : i32
    %h = arith.index_castui %5 : i32 to index
    ```
  }];
}

def ExpandF8E4M3 : Pass<"expand-f8e4m3"> {
  let summary = "Lower f8e4m3 conversions to integer arithmetic";
  let description = [{
    LLVM has no 8-bit float: MLIR's LLVM lowering keeps `f8E4M3FN` as
    `i8` and cannot lower an `arith.extf` or `arith.truncf` on it. This
    pass rewrites each into integer and f32 arithmetic on the bits (scalars
    and vectors alike). Widening is exact (subnormals as m * 2^-9, the NaN
    code as a quiet NaN); narrowing rounds as PTX's `cvt.rn.satfinite`
    does: to nearest even, magnitudes past 448 to +-448, NaN to NaN. A
    source wider than f32 rounds to f32 first, as the GPU's cvt takes f32.
    The CPU pipeline runs it on every conversion; on the GPU,
    `convert-tile-to-nvvm` pairs a tile's conversions into the hardware's
    `cvt` first and this pass takes what is left.

    Before:
    ```mlir
    %w = arith.extf %x : f8E4M3FN to f32
    ```
    After (abridged):
    ```mlir
    %b = arith.bitcast %x : f8E4M3FN to i8
    %0 = arith.extui %b : i8 to i32
    %mag = arith.andi %0, %c127 : i32
    %1 = arith.shli %mag, %c20 : i32
    %normal = arith.addi %1, %c1006632960 : i32     // exponent bias 7 -> 127
    ...                                              // subnormal, NaN, sign
    %w = arith.bitcast %r : i32 to f32
    ```
  }];
}

def ConvertTileToSCF : Pass<"convert-tile-to-scf", "::mlir::ModuleOp"> {
  let summary = "Lower tile kernels to scf loops over memref buffers (the CPU path)";
  let description = [{
    Every `tile.kernel` becomes a `func.func` that runs the whole grid: a loop
    nest over the grid axes in the scheduled order around the body. Views
    become flat `memref<?xT>` arguments indexed row-major from the runtime
    dims; each tile becomes a stack buffer (`memref.alloca` at the function
    entry) and each tile op a loop nest of scalar `arith` / `math` ops. Tiles
    carried by `scf.for` live in a dedicated buffer that the loop body
    overwrites at its end, so no iteration reads a buffer that the same
    iteration has already overwritten. Masked loads and stores test every
    element against the view's dims. The function gets
    `llvm.emit_c_interface`, so the JIT calls it through `_mlir_ciface_<name>`.

    Before:
    ```mlir
    tile.kernel @scale(%N: index, %x: !tile.view<[N, 4], f32> {tile.access = "inout"})
        attributes {dim_names = ["N"]} {
      %i = tile.program_ids ["i"] (%N) : index
      %c0 = arith.constant 0 : index
      %t = tile.load %x[%i, %c0] window [1, 4] keep [1] : !tile.view<[N, 4], f32> -> !tile.tile<4xf32>
      %d = tile.add %t, %t : !tile.tile<4xf32>
      tile.store %d, %x[%i, %c0] window [1, 4] keep [1] : !tile.tile<4xf32>, !tile.view<[N, 4], f32>
      tile.return
    }
    ```
    After (abridged):
    ```mlir
    func.func @scale(%N: index, %x: memref<?xf32>) attributes {llvm.emit_c_interface} {
      %t = memref.alloca() : memref<4xf32>
      %d = memref.alloca() : memref<4xf32>
      scf.for %i = %c0 to %N step %c1 {
        scf.for %j = %c0 to %c4 step %c1 { ... memref.load %x[...] ... memref.store ... %t[%j] }
        scf.for %j = %c0 to %c4 step %c1 { ... arith.addf ... memref.store ... %d[%j] }
        scf.for %j = %c0 to %c4 step %c1 { ... memref.store ... %x[...] }
      }
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def TileInvariantDivisors : Pass<"tile-invariant-divisors", "::mlir::ModuleOp"> {
  let summary = "Divide by dims with multipliers the launcher computes";
  let description = [{
    A 32-bit division on the GPU is a reciprocal, a conversion and a dozen
    dependent integer ops. A divisor built only from dims and constants
    (`H`, `HV / H`) is the same for the whole launch, so each such 32-bit
    `divui` / `remui` from `tile-narrow-index-division` (both operands
    casts of values below 2^31; constant divisors are left to LLVM)
    becomes a multiply and a shift by a multiplier the launcher computes
    once (Granlund and Montgomery, "Division by invariant integers using
    multiplication", theorem 4.2 with N = 31): for `1 <= d < 2^31`,
    `s = 31 + ceil(log2 d)`, `m = ceil(2^s / d) < 2^32`, and
    `x / d = (x * m) >> s` for every `0 <= x < 2^31`. A remainder is
    `x - (x / d) * d`.

    Each distinct divisor appends one `i64` argument to the kernel
    (`m | s << 32`, named `divisor <expr>`), and the kernel's
    `kiln.divisors` attribute lists their expressions in the grid's form
    (a dim, a number, or `[op, lhs, rhs]`), which the manifest carries as
    `divisors`; both runtimes reject a divisor outside `[1, 2^31)`.
    Divisions processed last first: one that only fed a later divisor (the
    `HV / H` of `hv / (HV / H)`) dies with it and costs nothing. GPU
    pipeline only.

    Before (after `tile-narrow-index-division`):
    ```mlir
    %2 = arith.divui %0, %1 : i32           // HV / H
    %g = arith.index_castui %2 : i32 to index
    %3 = arith.index_castui %ids#1 : index to i32
    %4 = arith.index_castui %g : index to i32
    %5 = arith.divui %3, %4 : i32           // hv / (HV / H)
    ```
    After (`%d` the new last argument, `kiln.divisors = [["div", "HV", "H"]]`):
    ```mlir
    %3 = arith.index_castui %ids#1 : index to i32
    %m = arith.extui (arith.trunci %d : i64 to i32) : i32 to i64
    %s = arith.shrui %d, %c32 : i64
    %p = arith.muli (arith.extui %3 : i32 to i64), %m : i64
    %5 = arith.trunci (arith.shrui %p, %s : i64) : i64 to i32
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TileAssignLayouts : Pass<"tile-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Choose a #tile.layout for every tile of a GPU kernel";
  let description = [{
    Spreads every tile of rank 1 or more over the threads and warps of the
    CTA the schedule declares (`warps`) and records the choice as
    `tile.layout` on the op that makes the tile. Tiles joined by elementwise
    ops and loop-carried tiles share a layout; a reduction's result, a
    broadcast's operand and a unit reshape keep the 2-D parent of the tile
    they come from, so reductions and broadcasts move no data between
    layouts. Tiles the schedule's `layouts:` names (by op id) take the lanes,
    and where given the vector size and warps, it chose first; a layout that
    cannot cover its tile is an error at the schedule's line. Next, under
    `mma: wgmma`, a product whose warpgroups each hold whole 64-row tiles of
    its result (no column parts, no padding, no issuing role, not a pair
    stacking A, not accumulating onto a resident) gives its result the
    layout of its accumulator fragments (`lanes_first = [1, 0]`: a warp's
    16 rows are 8 lanes, then 2 registers 8 rows apart), so the result never
    leaves the registers the tensor cores wrote; a pair sharing A gives each
    result its columns of the fragment in that layout. A transpose of such a
    fragment takes the fragment's layout with its dims swapped, and a TMA
    ring load transposed into one is read in that swapped layout: such
    transposes renumber registers and move nothing. A `registers:` resident
    takes its update's fragment layout for its value before and after its
    loop (the loop joins them with the value it carries), so it is loaded
    and stored in the registers the update accumulates in. The largest
    tile nothing constrains then takes the default layout:
    16-byte vectors along the last dim, the lanes of a warp next, then warps
    down the leading dim. `dot`, `transpose` and `cumsum` move their data
    through shared memory anyway, so their operands and results are free.
    Where one tile would need two layouts at once (a vector broadcast along
    rows and along columns, a reduction's result broadcast back the other
    way) or a derived layout cannot cover a tile evenly, the pass breaks
    the relation at that op and solves again. A tile made only from iotas,
    constants, scalars, plain loads (no ring, no op the schedule names) and
    earlier conversions, through elementwise ops, broadcasts and unit
    reshapes (at most 24 ops of at most 1024 elements), is made again for
    the conflicting use, each copy right after its original, so it takes
    the layout its user needs; copies that compute the same thing in the
    same layout fold into one and originals left unused go. Anything else
    gets a `tile.convert_layout` (shared memory between two barriers of the
    role). Conversions that end up between equal layouts are removed.
    Last, a tile whose layout puts more than 4096 elements on a thread is an
    error at its source line: no thread holds it, and the lowering would
    unroll it into that many values a thread.

    Before (the row indices compared down and across a [64, 64] tile):
    ```mlir
    %i = tile.iota : <64xi32>
    %c = tile.reshape %i : <64xi32> -> <64x1xi32>
    %r = tile.reshape %i : <64xi32> -> <1x64xi32>
    %cb = tile.broadcast %c : <64x1xi32> -> <64x64xi32>
    %rb = tile.broadcast %r : <1x64xi32> -> <64x64xi32>
    %causal = tile.cmp ge, %cb, %rb : <64x64xi32> -> <64x64xi1>
    ```
    After (two iotas, no conversion):
    ```mlir
    %i0 = tile.iota {tile.layout = #tile.layout<..., dims = [0]>} : <64xi32>
    %i1 = tile.iota {tile.layout = #tile.layout<..., dims = [1]>} : <64xi32>
    %c = tile.reshape %i0 {...} : <64xi32> -> <64x1xi32>
    %r = tile.reshape %i1 {...} : <64xi32> -> <1x64xi32>
    ...
    ```

    Before (a row sum broadcast back as a row):
    ```mlir
    %s = tile.reduce sum %t axis 1 : <64x64xf32> -> <64xf32>
    %b = tile.broadcast %s : <64xf32> -> <64x64xf32>
    ```
    After:
    ```mlir
    %s = tile.reduce sum %t axis 1 {tile.layout = #tile.layout<..., dims = [0]>}
    %c = tile.convert_layout %s {tile.layout = #tile.layout<..., dims = [1]>}
    %b = tile.broadcast %c {tile.layout = ...}
    ```

    Before:
    ```mlir
    %S = tile.load %state[...] window [1, 1, 32, 128] keep [2, 3] : ... -> <32x128xf32>
    %k = tile.load %key[...] window [1, 128] keep [1] : ... -> <128xf32>
    %kb = tile.broadcast %k : <128xf32> -> <32x128xf32>
    %p = tile.mul %S, %kb : <32x128xf32>
    %r = tile.reduce sum %p axis 1 : <32x128xf32> -> <32xf32>
    ```
    After:
    ```mlir
    %S = tile.load ... {tile.layout = #tile.layout<size = [1, 4], lanes = [1, 32],
                                                   warps = [4, 1], dims = [0, 1]>}
    %k = tile.load ... {tile.layout = #tile.layout<size = [1, 4], lanes = [1, 32],
                                                   warps = [4, 1], dims = [1]>}
    ...
    %r = tile.reduce sum %p axis 1 {tile.layout = #tile.layout<size = [1, 4],
                                     lanes = [1, 32], warps = [4, 1], dims = [0]>}
    ```
  }];
}

def ConvertTileToNVVM : Pass<"convert-tile-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower scheduled, laid-out tile kernels to NVVM kernels (the GPU path)";
  let description = [{
    Every `tile.kernel` becomes an `llvm.func` with `nvvm.kernel`, one CTA of
    `32 * warps` threads per grid point (`nvvm.maxntid`); the grid axes map to
    `ctaid.x/y/z` in the scheduled order, fastest first. A single warp role
    caps registers with `nvvm.maxnreg`. A `tile.signal` meets the CTA's
    threads and releases its flag at GPU scope; a `tile.wait` polls its flag
    relaxed and then fences (acquire), and when the schedule gives it a role
    of its own, counts it passed in shared memory, where the roles reading
    after it wait. Views become `!llvm.ptr<1>` arguments
    (`noalias`, `align 16`, and `readonly` for `in` views, which lets loads use
    the read-only path) indexed row-major from the runtime dims, passed as
    `i64`.

    Each tile lives in registers as its `tile.layout` says: this thread's
    elements become a list of scalar SSA values, so no register array is ever
    indexed at run time. Loads and stores along the view's contiguous dim move
    up to 16 bytes per access when the start is provably aligned; a store of
    replicated elements is done by one owner thread of each group. Reductions
    combine a thread's registers in order, then lanes with `shfl.sync.bfly`,
    then warps through a shared-memory scratch array between two barriers;
    every thread ends with the same bits. Special functions use the f32
    approximations of the special-function unit (`ex2`, `lg2`, `rsqrt`).
    Loop-carried tiles become their registers, flattened into `iter_args`.
    Masked accesses keep 16-byte vectors when no bound can cut one (a row
    bound from `limits`); the whole vector is guarded, zeros fill a load.
    Where a dim has two or three bounds (the view's own dim, a slice's
    floor and limit), an element's check is one unsigned compare,
    `(coord - lo) <u max(hi - lo, 0)`, lo and the span computed once an
    access: `floor <= coord < limit && coord <u dim` in one 64-bit compare
    where there were three.
    A start loaded in the same region (decode's slot) is added to the
    address last, to a pointer made from the other starts while it was in
    flight: `p = gep(gep(base, rest), slot * stride)`, not
    `gep(base, slot * stride + rest)`. A start loaded before a loop is
    summed in dim order (it has long arrived when the loop uses it).

    `tile.convert_layout`, `tile.transpose`, `tile.cumsum` and `tile.slice`
    (a window: the whole input goes out, the window comes back) stage the
    tile row-major in the role's staging area of dynamic shared memory (owner
    threads write, a barrier, each thread reads its elements in the result
    layout, a barrier frees the area; a transpose pads each row by 16 bytes
    so that reads down a column spread over more banks). A cumsum scans each
    line along its axis in place between the two: a line of at most 32
    32-bit elements on one warp (a lane an element, log2(n) `shfl.sync.up`),
    a longer one element by element. A conversion or
    transpose that keeps every element in the warp holding it, on a role
    of several warps (KernelPlan's `movesInWarps`: at most 64 KB of slices
    in all), goes instead through that warp's own slice, past the staging
    area, and syncs only the warp (`nvvm.bar.warp.sync`, twice), since no
    other warp ever touches the slice:

      %t = tile.transpose %p [1, 0] : <64x32xf32> -> <32x64xf32>
    where %p is a wgmma fragment (warp w: rows 16w..16w+15) and %t lays
    each warp's 16 columns out 8 a lane, becomes
      llvm.store ... (to slice `warp`); nvvm.bar.warp.sync
      llvm.load ...;                    nvvm.bar.warp.sync `tile.dot` with `mma: simt` (or none)
    stages both operands the same way and each thread accumulates its result
    elements with FMAs over the inner dim. With `mma: mma_sync` (f16 /
    bf16 operands) each staged tile goes row-major, rows padded by 16
    bytes, once for every operand it is (a transpose feeding only dots is
    staged from its input), the dot and the next dot of its block when
    everything the second reads exists before the first behind one
    barrier; every warp then reads its fragments with `nvvm.ldmatrix`
    (`<col>` where the staged rows run along the fragment's other dim) and
    issues `nvvm.mma.sync` m16n8k16 per m16 x n8 block of its grid and k
    step, the result kept in the accumulator fragments (tile-assign-layouts
    gives every such result their layout, on a grid of warps a schedule may
    pick; another layout reads the result back from a padded f32 area). On
    a grid of whole rows an A laid out as such a result (cast to 16 bits)
    is read from its registers, unstaged:
      %d = tile.dot %a, %b : <32x32xf16>, <32x32xf16> -> <32x32xf32>
    on 4 warps (a 2 x 2 grid, each a 16 x 16 block) becomes
      llvm.store ... (each operand's tile); nvvm.barrier0
      nvvm.ldmatrix ... {num = 4}; nvvm.ldmatrix ... {layout = <col>, num = 4}
      nvvm.mma.sync A[...] B[...] C[...] {shape = m16n8k16} (x 2 per k step)
      nvvm.barrier0
    With `mma: wgmma` both operands
    are staged K-major: swizzled (16-byte pieces of a row XOR-permuted by
    the row, in 128 / 64 / 32-byte K blocks) where threads hold runs along
    K, plain core matrices otherwise or under `swizzle = false` (a transpose
    feeding only such dots folds into the staging, and so does a slice: the
    threads holding the window's elements store them, each register under
    a branch on its coordinates, so `dot(Xh, Xh[32 +: 32, :])` stages B
    from the warps holding rows 32..63 and reads A from the accumulator
    registers; a dot and the next dot of
    its block that share an operand, when the second needs nothing computed
    after the first, run as one product with the other operands stacked;
    a 16-bit B with N last is staged N-major as it lies, its rows K's, or
    read so from its TMA ring stage, and read through wgmma's transpose bit
    (B `<row>`); any other operand with
    K first and 8 or more elements a thread goes row-major into the result
    area and is gathered from there into whole 16-byte pieces unless
    `mn_major: direct`), a proxy fence and a
    barrier hand them to the tensor cores, each warpgroup issues
    `nvvm.wgmma.mma_async` on shared-memory descriptors for its 64-row items
    (f32 operands as tf32, bf16 / f16 as such; an f32 A with a bf16 B as
    two bf16 parts, its top 16 bits and its rounded rest, each over every K
    step into one accumulator) and writes its accumulator
    fragment to a padded f32 area the result's layout reads back; a result
    whose layout is the fragment's own (`lanes_first`, see
    tile-assign-layouts) keeps the accumulators as its registers instead,
    with no area, no read-back and one barrier fewer. An A operand held as
    wgmma reads A from registers (such a result, through elementwise ops,
    or a cast of a `registers:` resident, the warpgroups holding exactly
    the 64-row tiles they multiply) is not staged: each K step's four words
    are packed from the accumulator pairs (16-bit A: the accumulator's
    column pairs are A's) or moved within each quad of lanes (tf32 A holds
    columns t and t + 4 where the accumulators hold 2t and 2t + 1), and the
    product is `wgmma.mma_async` with A in registers as inline PTX (the NVVM
    op takes descriptors only); a product that stages nothing needs no
    proxy fence or barrier before it, and one that also leaves its result
    in registers none after it (each thread gives back the ring stages it
    read after its own wait). Such a product's wait is not emitted after
    its commit but where something needs it: before the first op that reads
    its result, touches shared memory, issues a product that stages, opens
    a region, or ends the block. Ops that only compute on registers,
    reductions (across warps through a scratch array of their own), plain
    global loads and stores, reads of ring stages the role does not fill
    (a role that also copies into the ring might wait there for a stage
    the product frees), transposes in registers or read in place by a
    product, conversions through warp slices, and further such products
    (A from registers or a ring, B from a ring, no resident) are lowered
    while it multiplies; a `registers:` resident's scale (`S * s`, or one
    factor a row, `S * r[:, None]`, each pair times the register beside it) is
    applied where its mul lies when every product reading a copy of S
    comes before it (wgmma reads a copy from registers of its own), else
    at the update, which waits for the products it reads and its own
    resident's last update, not for another resident's (two states updated
    a step, gdn_prefill_scan_tr's D and E, each chain's products in flight
    beside the other's); wgmma groups complete in order, so an op that
    needs the older of two products in flight waits with the newer one's
    groups still running (`wait_group 1`):

      %q = tile.dot ... (registers only); tile.store %o ...; use of %q
    becomes
      nvvm.wgmma.mma_async ...; nvvm.wgmma.commit.group.sync.aligned
      llvm.store ... (%o)
      nvvm.wgmma.wait.group.sync.aligned 0; nvvm.mbarrier.arrive %empty
      ... (%q's accumulators)

      %s = tile.dot ... (onto a resident); %p = tile.dot %vb, %pt (registers
      only); use of %p
    becomes
      nvvm.wgmma.mma_async ... (%s's); nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.mma_async ... (%p's); nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 1; nvvm.mbarrier.arrive %empty_s
      nvvm.wgmma.wait.group.sync.aligned 0; nvvm.mbarrier.arrive %empty_p
      ... (%p's accumulators)

    After each wait the accumulators pass through an empty asm (`=f` outputs
    tied to them), so that LLVM moves no use of them above the wait; a loop
    that carries a fragment in registers begins each step with a wait for
    none, so that ptxas sees the last step's wait across the back edge.
    Either way ptxas would otherwise wait for every product in flight where
    the fragment or the results are first used (`kiln compile` reports such
    waits). An operand
    that a TMA ring brings and nothing else reads (KernelPlan decides) is not
    staged: its copies land in the swizzled K-major layout (one 128-byte
    swizzled box per K block), the descriptors point into the ring's stage,
    and the product releases the stage after its wait (where several
    unpaired products read the tile alike, the last of them in the block;
    where the load stops at a limit along the tile's first dim, a window
    crossing it first zeroes the stage's rows past it, fences and waits for
    the role, in a branch only such a window takes):

      %a = tile.load %x[...] {tile.pipeline = "ring"} : ... -> !tile.tile<64x64xf32>
      %p = tile.dot %a, %bt : ...
    becomes, in the reading role,
      nvvm.mbarrier.try_wait.parity %full, %parity
      ... stage %bt only; nvvm.fence.proxy; barrier
      nvvm.wgmma.mma_async (descriptor of %a = the ring stage) ...
      nvvm.wgmma.wait.group.sync.aligned 0; barrier
      nvvm.mbarrier.arrive %empty
    Such an operand takes no room in the staging area (KernelPlan sizes it
    without it; only a tensor-memory resident's update keeps the whole
    layout, where its columns pass through the result rows; a resident in
    registers comes in and goes out register for register where its value
    before and after the loop lies in its fragment's layout, else through
    rows at the area's start, outside its loop; a wgmma product that stages
    nothing and a transpose that renumbers registers take no room). A product
    frees the stage once per copy: where it runs in the load's loop; never
    where the load lies outside every loop of a kernel that is not
    persistent (the copy fills it once: a start state every step reads); a
    product in a loop whose load the ring refills outside it is an error.
    A stage the role's threads read goes back at its block's first global
    access (or end) with the other stages read there, behind one fence for
    the async proxy, which the next copy writes through (an arrive alone
    left shared loads still in flight to race that copy):

      %u = tile.load %x[...] {tile.pipeline = "ring"}   (threads read it)
      ... ; tile.store %o, %y[...]
    becomes
      nvvm.mbarrier.try_wait.parity %full; llvm.load ... (the stage)
      ... ; nvvm.fence.proxy <async.shared>; nvvm.mbarrier.arrive %empty
      llvm.store ... (global)
    A pipeline of several buffers builds a ring per buffer (stages, empty
    barriers) whose copies all land on the full barriers of the load that
    comes first; that load's copy arrives expecting every buffer's bytes,
    and each reading role waits once a stage, at the first load it reads:

      pipelines = [#tile.pipeline<name = "ring", buffers = ["a", "b"], ...>]
      %a = tile.load ... {tile.id = "a"}; %b = tile.load ... {tile.id = "b"}
    becomes, in the copying role,
      try_wait %empty_a; arrive.expect_tx %full_a, bytes(a) + bytes(b);
      copy a -> %full_a; try_wait %empty_b; copy b -> %full_a
    and in a reading role
      try_wait %full_a; read a ...; read b ...
    Under `mma: tcgen05` the operands stage the same way; one thread of the
    role issues `nvvm.tcgen05.mma` (64 or 128 rows) into the role's
    tensor-memory columns and `nvvm.tcgen05.commit`s to the role's mbarrier,
    the role waits on its phase parity and reads the columns back with
    `nvvm.tcgen05.ld`; the kernel allocates its tensor memory once (one
    warp, then `relinquish_alloc_permit`) and frees it at the end, and the
    columns are checked against `budgets.tmem_columns`. A role with
    `issuesMma` issues the products of the computing role instead: the
    computing role stages and fences the operands, arrives on its ready
    mbarrier and waits on its done one before reading the result; the
    issuing role runs the same loops, waits on ready and issues (tcgen05: one
    thread, committing to done; wgmma: its warpgroup, which writes the
    result rows and arrives on done):

      computing role:  stage a, b; nvvm.fence.proxy; nvvm.mbarrier.arrive %ready
                       nvvm.mbarrier.try_wait.parity %done; nvvm.tcgen05.ld ...
      issuing role:    nvvm.mbarrier.try_wait.parity %ready
                       nvvm.tcgen05.mma ...; nvvm.tcgen05.commit %done

    A store in a `copy: bulk` pipeline goes the other way, from the
    computing role to the role owning it, through a ring of stages:

      computing role:  nvvm.mbarrier.try_wait.parity %empty[s]
                       llvm.store ... (the tile, row-major, into stage s)
                       nvvm.fence.proxy; nvvm.mbarrier.arrive %full[s]
      copying thread:  nvvm.mbarrier.try_wait.parity %full[s]
                       scf.for ... iter_args(%off) {tile.rolled}: (per kept row)
                         nvvm.cp.async.bulk.global.shared.cta ...; %off + stride
                       nvvm.cp.async.bulk.commit.group
                       nvvm.cp.async.bulk.wait_group 1 {read}
                       nvvm.mbarrier.arrive %empty[s - 1]

    Tiles in a `copy: shared` pipeline go from the computing role listing
    them to the other computing roles that use them; a reader makes none
    of them, so for `%kn = tile.mul ...; %kq = tile.reduce ...` it becomes

      writing role:    (%kn computed) nvvm.mbarrier.try_wait.parity %empty[s]
                       llvm.store ... (%kn into stage s, in its layout)
                       (%kq computed) llvm.store ... (one thread)
                       nvvm.mbarrier.arrive %full[s]
      reading role:    nvvm.mbarrier.try_wait.parity %full[s]
                       llvm.load ... (%kn); llvm.load ... (%kq)
                       nvvm.mbarrier.arrive %empty[s]

    A loop-carried tile the schedule keeps in tensor memory (`tensor_memory:
    [S]`, KernelPlan's ResidentPlan) lives in columns of its own: written
    there before the loop, scaled in place and accumulated onto in it, its
    casts staged from the columns as operands, read back after it:

      before the loop: llvm.store ... (S to the staging rows); nvvm.barrier
                       nvvm.tcgen05.st ...; nvvm.tcgen05.wait <store>
      S as bf16 (an operand):  nvvm.tcgen05.ld ...; llvm.store ... (K-major)
      S * s + dot(a, b):       nvvm.tcgen05.ld ...; llvm.fmul; nvvm.tcgen05.st
                       nvvm.tcgen05.wait <store>; (stage a, b; hand over)
                       nvvm.tcgen05.mma %S_columns ... (accumulate on every step)
      after the loop:  nvvm.tcgen05.ld ...; llvm.store ...; llvm.load ...

    Under wgmma (`registers: [S]`) the same tile is the update's
    accumulator fragment, carried through the loop's iter_args:

      before the loop: llvm.store ... (S to the staging rows); nvvm.barrier
                       llvm.load ... (each thread its fragment's pairs)
      S as bf16 (an A operand): bf16 pairs of the fragment, no staging
                       llvm.inline_asm "wgmma.mma_async ... {a0, a1, a2, a3}, desc_b"
      S as bf16 (a B operand):  llvm.store vector<2xbf16> ... (K-major)
      S * s + dot(a, b):       llvm.fmul (each fragment register)
                       (stage a, b) nvvm.wgmma.mma_async %fragment ... (scale-d 1)
      after the loop:  llvm.store ... (the fragment's pairs); llvm.load ...
    The kernel's dynamic shared
    memory (rings, barriers, staging) is recorded as
    `kiln.dynamic_shared_bytes` on the `llvm.func` for the launch manifest,
    and the grid's extents along x, y and z that are compile-time constants
    (0 where only the launch knows one) as `kiln.grid_extents`, from which
    the CUDA source states each block index's range.

    Before (a SIMT product):
    ```mlir
    %p = tile.dot %a, %b : <16x16xf32>, <16x16xf32> -> <16x16xf32>
    ```
    After (per thread):
    ```mlir
    llvm.store %a0, %stage : f32, !llvm.ptr<3>   // ... every owned element of a, b
    nvvm.barrier0
    %acc:8 = scf.for %k = %c0 to %c16 step %c1 iter_args(...) {
      %x = llvm.load %arow : !llvm.ptr<3> -> f32
      %y = llvm.load %bcol : !llvm.ptr<3> -> f32
      %f = llvm.intr.fma(%x, %y, %acc0) : (f32, f32, f32) -> f32
      ...
    }
    nvvm.barrier0
    ```
    After, under `mma: wgmma` (one warpgroup, abridged):
    ```mlir
    llvm.store %a0123, %stageA {alignment = 16} : vector<4xf32>, !llvm.ptr<3>
    llvm.store %b0123, %stageB {alignment = 16} : vector<4xf32>, !llvm.ptr<3>
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    nvvm.wgmma.fence.aligned
    %d0 = nvvm.wgmma.mma_async %descA0, %descB0, %undef, <m = 64, n = 16, k = 8>,
        D[<f32>, <zero>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>] : ...
    %d1 = nvvm.wgmma.mma_async %descA1, %descB1, %d0, <m = 64, n = 16, k = 8>, ...
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 0
    llvm.store %pair, %result {alignment = 8} : vector<2xf32>, !llvm.ptr<3>
    nvvm.barrier0
    %p0 = llvm.load %resultElem : !llvm.ptr<3> -> f32   // ... in the result's layout
    ```

    Warp roles (several `roles` in the schedule) become one branch each of an
    if/else over the warp index; a role lowers only the ops it owns and what
    they need (lowering/analysis/KernelPlan). Roles with different budgets move to them
    with `nvvm.setmaxregister` from a launch cap (`nvvm.maxnreg`) that is their
    average. A load in a `copy: tma` pipeline becomes a ring of shared-memory
    stages (an external `__kiln_dynamic_smem` array) with full and empty
    mbarriers, initialised by thread 0 before a CTA barrier. The issuing role
    waits on the empty barrier, arms the full one with the tile's bytes and
    issues `nvvm.cp.async.bulk.tensor` with a tensor map passed by value
    (`llvm.byval`, `nvvm.grid_constant`, after the kernel's own arguments);
    reading roles wait on the full barrier, load the stage into registers and
    arrive on the empty one. Where the readers' layout would hit the same
    shared-memory banks from many lanes of a warp (KernelPlan counts the
    wavefronts both ways), the copies write the stage with TMA's 128-byte
    swizzle instead, in boxes of 128-byte rows, and each read XORs its
    16-byte piece with its row:

      %u = tile.load %x[...] {tile.pipeline = "u_ring"} -> <32x64xf32>  (read
          in the wgmma accumulators' layout: 8 rows of 4 columns a warp)
    becomes two 32 x 32 boxes of a 128-byte-swizzled tensor map, and
      llvm.load (stage + box * 4096 + row * 128 + ((col * 4 % 128) ^ (row % 8) << 4))

    A swizzled tile of 16-bit elements whose layout is made of 8 x 8
    matrices, each lane holding two neighbours of each (the accumulators'
    layout, as laid out or with its dims swapped: `matrixReads` in
    lowering/analysis/Layout), is read four matrices an instruction
    instead, each lane giving the address of one 16-byte matrix row:

      %v = tile.load %v[...] {tile.pipeline = "ring"} -> <32x64xbf16>  (read
          in the accumulators' layout with its dims swapped)
    becomes
      nvvm.ldmatrix %row {num = 4, layout = #nvvm.mma_layout<col>}  (.trans)
    and each 32-bit word a pair of elements: 2 instructions where there were
    16 loads, each with its own swizzled address.

    The lowered function lists its tensor maps as lowered (view argument,
    swizzle, box) in `kiln.tensor_maps`, for the manifest. With
    `persistent`, each role loops over grid points from `ctaid.x` by
    `nctaid.x`.

    Before (a producer role owns the load `t`, a compute role reduces it):
    ```mlir
    %t = tile.load %x[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] {tile.id = "t"}
        : <[N, 8, 64], f32> -> <8x64xf32>
    %s = tile.reduce sum %t axis 0 {tile.id = "s"} : <8x64xf32> -> <64xf32>
    ```
    After (abridged):
    ```mlir
    scf.if %in_producer {
      nvvm.setmaxregister decrease 40
      nvvm.mbarrier.try_wait.parity %empty, %parity_xor_1, %ticks
      nvvm.mbarrier.arrive.expect_tx %full, %c2048_i32
      nvvm.cp.async.bulk.tensor.shared.cluster.global %stage, %tmap, %full,
          box[%c0, %c0, %n] {isCTAOnly = true}
    } else {
      nvvm.setmaxregister increase 232
      nvvm.mbarrier.try_wait.parity %full, %parity, %ticks
      %v = llvm.load %stage_p {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
      nvvm.mbarrier.arrive %empty
      ...
    }
    ```

    Single-role example, before:
    ```mlir
    %S = tile.load %state[%slot, %c0] window [1, 128] keep [1]
        {tile.layout = #tile.layout<size = [4], lanes = [32], warps = [1], dims = [0]>}
        : <[N, 128], f32> -> <128xf32>
    %s = tile.reduce sum %S axis 0 : <128xf32> -> <f32>
    ```
    After (abridged):
    ```mlir
    llvm.func @k(%N: i64, %state: !llvm.ptr<1> {llvm.noalias, llvm.align = 16}, ...)
        attributes {nvvm.kernel, nvvm.maxntid = array<i32: 32, 1, 1>} {
      %v = llvm.load %p {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
      ... llvm.extractelement, arith.addf ...
      %o = nvvm.shfl.sync bfly %all, %x, %c1, %c31 : f32 -> f32
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // KILN_LOWERING_PASSES
