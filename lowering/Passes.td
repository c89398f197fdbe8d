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

#endif // KILN_LOWERING_PASSES
