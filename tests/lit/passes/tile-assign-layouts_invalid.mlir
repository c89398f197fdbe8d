// RUN: kiln-opt %s --tile-assign-layouts --split-input-file --verify-diagnostics

// Layouts span the warps of a computing role; roles computing on different
// warp counts cannot share tiles.
// expected-error @+1 {{has roles that compute on 2 and 4 warps; tile layouts need the same warp count in every computing role}}
tile.kernel @roles(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 6, mma = "none",
      roles = [#tile.role<name = "a", firstWarp = 0, numWarps = 4, regs = 0, ops = ["t"]>,
               #tile.role<name = "b", firstWarp = 4, numWarps = 2, regs = 0, ops = ["store.x"]>],
      pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0] window [1, 64] keep [1] {tile.id = "t"} : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  tile.store %t, %x[%n, %c0] window [1, 64] keep [1] {tile.id = "store.x"} : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}

