// RUN: kiln-opt %s --tile-assign-layouts --convert-tile-to-nvvm --split-input-file --verify-diagnostics

// expected-error @+1 {{is scheduled with 2 warp roles; warp-specialised lowering}}
tile.kernel @roles(%N: index) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "none",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 1, regs = 40, ops = []>,
               #tile.role<name = "compute", firstWarp = 1, numWarps = 3, regs = 232, ops = []>],
      pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  tile.return
}

// -----

tile.kernel @dot(%N: index, %x: !tile.view<[N, 16, 16], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 1, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.view<[N, 16, 16], f32> -> !tile.tile<16x16xf32>
  // expected-error @+1 {{has no GPU lowering yet}}
  %tt = tile.transpose %t [1, 0] : !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  tile.return
}
