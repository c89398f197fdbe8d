// RUN: kiln-opt %s --tile-apply-schedule --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: tile.kernel @k
// CHECK: tile.program_ids ["n", "iv"](%{{.*}}, %{{.*}}) {order = array<i64: 1, 0>}
// CHECK: tile.load {{.*}} {tile.id = "S0", tile.pipeline = "ring", tile.role = "producer"}
tile.kernel @k(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "in"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["iv", "n"], warps = 4, mma = "none",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 1, regs = 40, ops = ["S0"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["S0"], depth = 2, copy = "tma">]>} {
  %c2 = arith.constant 2 : index
  %ids:2 = tile.program_ids ["n", "iv"] (%N, %c2) : index, index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%ids#0, %c0] window [1, 64] keep [1] {tile.id = "S0"} : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  tile.return
}

// -----

// expected-error @+1 {{pipeline 'ring' carries 'S1', which is not a load of the kernel}}
tile.kernel @bad(%N: index) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = [], warps = 4, mma = "none", roles = [],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["S1"], depth = 2, copy = "tma">]>} {
  %ids = tile.program_ids ["n"] (%N) : index
  tile.return
}
