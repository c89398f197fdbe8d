// RUN: kiln-opt %s --tile-assign-layouts | FileCheck %s

// The [4, 64] tile takes the default layout (16-byte vectors, 16 lanes along
// the row, 2 lanes and 2 warps down); the row vector broadcast into it and
// the reduction out of it keep that parent.
// CHECK-LABEL: tile.kernel @rows
// CHECK: tile.load %{{.*}} window [1, 4, 64] keep [1, 2] {tile.layout = #tile.layout<size = [1, 4], lanes = [2, 16], warps = [2, 1], dims = [0, 1]>}
// CHECK: tile.load %{{.*}} window [1, 64] keep [1] {tile.layout = #tile.layout<size = [1, 4], lanes = [2, 16], warps = [2, 1], dims = [1]>}
// CHECK: tile.broadcast {{.*}} {tile.layout = #tile.layout<size = [1, 4], lanes = [2, 16], warps = [2, 1], dims = [0, 1]>}
// CHECK: tile.reduce sum {{.*}} axis 1 {tile.layout = #tile.layout<size = [1, 4], lanes = [2, 16], warps = [2, 1], dims = [0]>}
tile.kernel @rows(%N: index, %x: !tile.view<[N, 4, 64], f32> {tile.access = "in"},
                  %w: !tile.view<[N, 64], f32> {tile.access = "in"},
                  %y: !tile.view<[N, 4], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 2, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] : !tile.view<[N, 4, 64], f32> -> !tile.tile<4x64xf32>
  %r = tile.load %w[%n, %c0] window [1, 64] keep [1] : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  %rb = tile.broadcast %r : !tile.tile<64xf32> -> !tile.tile<4x64xf32>
  %p = tile.mul %t, %rb : !tile.tile<4x64xf32>
  %s = tile.reduce sum %p axis 1 : !tile.tile<4x64xf32> -> !tile.tile<4xf32>
  tile.store %s, %y[%n, %c0] window [1, 4] keep [1] : !tile.tile<4xf32>, !tile.view<[N, 4], f32>
  tile.return
}
