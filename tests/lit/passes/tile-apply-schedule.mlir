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

// -----

// A var kept in the accumulators (`resident`) and updated as dot(a, b, acc)
// is updated as acc + dot(a, b), the form resident accumulation takes; the
// sum takes the product's ID.
// CHECK-LABEL: tile.kernel @resident
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: %[[P:.*]] = tile.dot %{{.*}}, %{{.*}} : <64x16xbf16>, <16x64xbf16> -> <64x64xf32>
// CHECK-NEXT: %[[S:.*]] = tile.add %[[ACC]], %[[P]] {tile.id = "acc.2"} : <64x64xf32>
// CHECK-NEXT: scf.yield %[[S]]
tile.kernel @resident(%N: index, %a: !tile.view<[64, 16], bf16> {tile.access = "in"}, %b: !tile.view<[16, 64], bf16> {tile.access = "in"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = [], warps = 4, mma = "wgmma", roles = [], pipelines = [], resident = ["acc"]>} {
  %ids = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = tile.constant 0.000000e+00 : f32 {tile.id = "acc"} : <64x64xf32>
  %x = tile.load %a[%c0, %c0] window [64, 16] keep [0, 1] : !tile.view<[64, 16], bf16> -> !tile.tile<64x16xbf16>
  %y = tile.load %b[%c0, %c0] window [16, 64] keep [0, 1] : !tile.view<[16, 64], bf16> -> !tile.tile<16x64xbf16>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (!tile.tile<64x64xf32>) {
    %d = tile.dot %x, %y, %acc : !tile.tile<64x64xf32> {tile.id = "acc.2"} : <64x16xbf16>, <16x64xbf16> -> <64x64xf32>
    scf.yield %d : !tile.tile<64x64xf32>
  }
  tile.return
}
