// RUN: kiln-opt %s --tile-assign-layouts --verify-diagnostics

// A row sum is spread along dim 0 of the tile's layout; broadcasting it back
// as a row would need it along dim 1 at the same time.
tile.kernel @conflict(%N: index, %x: !tile.view<[N, 64, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], f32> -> !tile.tile<64x64xf32>
  %s = tile.reduce sum %t axis 1 : !tile.tile<64x64xf32> -> !tile.tile<64xf32>
  // expected-error @+1 {{joins tiles whose layouts disagree}}
  %b = tile.broadcast %s : !tile.tile<64xf32> -> !tile.tile<64x64xf32>
  %u = tile.add %t, %b : !tile.tile<64x64xf32>
  tile.store %u, %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.return
}
