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

// A row sum is spread along dim 0 of the tile's layout; broadcasting it back
// as a row needs it along dim 1: a tile.convert_layout goes in before the
// broadcast (the GPU lowering moves it through shared memory).
// CHECK-LABEL: tile.kernel @conflict
// CHECK: %[[S:.*]] = tile.reduce sum %{{.*}} axis 1 {tile.layout = #tile.layout<{{.*}}dims = [0]>}
// CHECK: %[[C:.*]] = tile.convert_layout %[[S]] {tile.layout = #tile.layout<{{.*}}dims = [1]>}
// CHECK: tile.broadcast %[[C]]
tile.kernel @conflict(%N: index, %x: !tile.view<[N, 64, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], f32> -> !tile.tile<64x64xf32>
  %s = tile.reduce sum %t axis 1 : !tile.tile<64x64xf32> -> !tile.tile<64xf32>
  %b = tile.broadcast %s : !tile.tile<64xf32> -> !tile.tile<64x64xf32>
  %u = tile.add %t, %b : !tile.tile<64x64xf32>
  tile.store %u, %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.return
}

// A tile made only from iotas, scalars, plain loads and elementwise ops is
// made again in the layout a conflicting use needs, not converted through
// shared memory: the row indices and the loaded vector each come twice,
// once spread down the rows (dims [0]) and once along them (dims [1]).
// Two uses wanting the same copy share one (the second `strict` operand is
// the first's), and the originals nothing uses any more are gone.
// CHECK-LABEL: tile.kernel @remat
// CHECK-NOT: tile.convert_layout
// CHECK: %[[I0:.*]] = tile.iota {tile.layout = #tile.layout<{{.*}}dims = [0]>}
// CHECK-NEXT: %[[I1:.*]] = tile.iota {tile.layout = #tile.layout<{{.*}}dims = [1]>}
// CHECK-NEXT: tile.reshape %[[I0]] {{.*}} -> <64x1xi32>
// CHECK-NEXT: %[[ROW:.*]] = tile.reshape %[[I1]] {{.*}} -> <1x64xi32>
// CHECK: tile.cmp ge
// CHECK-NOT: tile.reshape %[[I1]]
// CHECK: tile.broadcast %[[ROW]]
// CHECK-NEXT: tile.cmp gt
// CHECK-NEXT: tile.load %{{.*}} window [1, 64] keep [1] {tile.layout = #tile.layout<{{.*}}dims = [0]>}
// CHECK-NEXT: tile.load %{{.*}} window [1, 64] keep [1] {tile.layout = #tile.layout<{{.*}}dims = [1]>}
// CHECK-NOT: tile.convert_layout
// CHECK: tile.return
tile.kernel @remat(%N: index, %x: !tile.view<[N, 64, 64], f32> {tile.access = "inout"},
                   %w: !tile.view<[N, 64], f32> {tile.access = "in"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], f32> -> !tile.tile<64x64xf32>
  %i = tile.iota : <64xi32>
  %ic = tile.reshape %i : <64xi32> -> <64x1xi32>
  %ir = tile.reshape %i : <64xi32> -> <1x64xi32>
  %icb = tile.broadcast %ic : <64x1xi32> -> <64x64xi32>
  %irb = tile.broadcast %ir : <1x64xi32> -> <64x64xi32>
  %causal = tile.cmp ge, %icb, %irb : <64x64xi32> -> <64x64xi1>
  %ic2 = tile.reshape %i : <64xi32> -> <64x1xi32>
  %ir2 = tile.reshape %i : <64xi32> -> <1x64xi32>
  %icb2 = tile.broadcast %ic2 : <64x1xi32> -> <64x64xi32>
  %irb2 = tile.broadcast %ir2 : <1x64xi32> -> <64x64xi32>
  %strict = tile.cmp gt, %icb2, %irb2 : <64x64xi32> -> <64x64xi1>
  %r = tile.load %w[%n, %c0] window [1, 64] keep [1] : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  %rc = tile.reshape %r : <64xf32> -> <64x1xf32>
  %rr = tile.reshape %r : <64xf32> -> <1x64xf32>
  %rcb = tile.broadcast %rc : <64x1xf32> -> <64x64xf32>
  %rrb = tile.broadcast %rr : <1x64xf32> -> <64x64xf32>
  %outer = tile.mul %rcb, %rrb : <64x64xf32>
  %p = tile.mul %t, %outer : <64x64xf32>
  %q = tile.select %causal, %p, %t : <64x64xi1>, <64x64xf32>
  %u = tile.select %strict, %q, %p : <64x64xi1>, <64x64xf32>
  tile.store %u, %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.return
}

// A tile whose layout the schedule chose (`layouts: {w: ...}`) is not made
// again: the user asked for it in that layout, so the uses that need
// others convert it.
// CHECK-LABEL: tile.kernel @remat_named
// CHECK-COUNT-2: tile.load
// CHECK-NOT: tile.load
// CHECK: tile.convert_layout
// CHECK: tile.convert_layout
// CHECK: tile.return
tile.kernel @remat_named(%N: index, %x: !tile.view<[N, 64, 64], f32> {tile.access = "inout"},
                         %w: !tile.view<[N, 64], f32> {tile.access = "in"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "none",
      roles = [], pipelines = [], layouts = {w = {lanes = array<i64: 16>}}>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], f32> -> !tile.tile<64x64xf32>
  %r = tile.load %w[%n, %c0] window [1, 64] keep [1] {tile.id = "w"} : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  %rc = tile.reshape %r : <64xf32> -> <64x1xf32>
  %rr = tile.reshape %r : <64xf32> -> <1x64xf32>
  %rcb = tile.broadcast %rc : <64x1xf32> -> <64x64xf32>
  %rrb = tile.broadcast %rr : <1x64xf32> -> <64x64xf32>
  %outer = tile.mul %rcb, %rrb : <64x64xf32>
  %p = tile.mul %t, %outer : <64x64xf32>
  tile.store %p, %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.return
}

// A layout the schedule chose (`layouts: {t: {lanes: [4, 8]}}`) is taken as
// given, the vector size and warps filled in as for the default; the tiles
// related to it follow it (the broadcast row, the reduction), and the
// reduction along a row spans 8 lanes instead of 16.
// CHECK-LABEL: tile.kernel @chosen
// CHECK: tile.load %{{.*}} window [1, 8, 64] keep [1, 2] {tile.id = "t", tile.layout = #tile.layout<size = [1, 4], lanes = [4, 8], warps = [2, 1], dims = [0, 1]>}
// CHECK: tile.load %{{.*}} window [1, 64] keep [1] {tile.layout = #tile.layout<size = [1, 4], lanes = [4, 8], warps = [2, 1], dims = [1]>}
// CHECK: tile.reduce sum {{.*}} axis 1 {tile.layout = #tile.layout<size = [1, 4], lanes = [4, 8], warps = [2, 1], dims = [0]>}
tile.kernel @chosen(%N: index, %x: !tile.view<[N, 8, 64], f32> {tile.access = "in"},
                    %w: !tile.view<[N, 64], f32> {tile.access = "in"},
                    %y: !tile.view<[N, 8], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 2, mma = "none",
      roles = [], pipelines = [], layouts = {t = {lanes = array<i64: 4, 8>}}>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 8, 64], f32> -> !tile.tile<8x64xf32>
  %r = tile.load %w[%n, %c0] window [1, 64] keep [1] : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  %rb = tile.broadcast %r : !tile.tile<64xf32> -> !tile.tile<8x64xf32>
  %p = tile.mul %t, %rb : !tile.tile<8x64xf32>
  %s = tile.reduce sum %p axis 1 : !tile.tile<8x64xf32> -> !tile.tile<8xf32>
  tile.store %s, %y[%n, %c0] window [1, 8] keep [1] : !tile.tile<8xf32>, !tile.view<[N, 8], f32>
  tile.return
}

// A wgmma product whose warpgroups hold whole 64-row tiles keeps its result
// in the accumulators' layout (rows: 8 lanes, then 2 registers 8 rows apart,
// then warps; columns in pairs): the tiles joined to it (here the bias it
// adds) follow, and the row sums reduce over the 4 lanes of a row.
// CHECK-LABEL: tile.kernel @fragment
// CHECK: tile.dot {{.*}} {tile.layout = #tile.layout<size = [2, 2], lanes = [8, 4], warps = [4, 1], dims = [0, 1], lanes_first = [1, 0]>}
// CHECK: tile.add {{.*}} {tile.layout = #tile.layout<size = [2, 2], lanes = [8, 4], warps = [4, 1], dims = [0, 1], lanes_first = [1, 0]>}
// CHECK: tile.reduce sum {{.*}} axis 1 {tile.layout = #tile.layout<size = [2, 2], lanes = [8, 4], warps = [4, 1], dims = [0], lanes_first = [1, 0]>}
tile.kernel @fragment(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                      %y: !tile.view<[N, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %p = tile.dot %t, %t : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  %one = tile.constant 1.0 : f32 : !tile.tile<64x64xf32>
  %q = tile.add %p, %one : !tile.tile<64x64xf32>
  %s = tile.reduce sum %q axis 1 : !tile.tile<64x64xf32> -> !tile.tile<64xf32>
  tile.store %s, %y[%n, %c0] window [1, 64] keep [1] : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}

// Two products sharing A are one wgmma (their columns side by side): each
// result keeps its columns in the accumulators' layout, and a transpose of
// one takes that layout with the dims swapped (it then moves nothing).
// CHECK-LABEL: tile.kernel @fragment_pair
// CHECK: tile.dot {{.*}} {tile.layout = #tile.layout<size = [2, 2], lanes = [8, 4], warps = [4, 1], dims = [0, 1], lanes_first = [1, 0]>}
// CHECK: tile.dot {{.*}} {tile.layout = #tile.layout<size = [2, 2], lanes = [8, 4], warps = [4, 1], dims = [0, 1], lanes_first = [1, 0]>}
// CHECK: tile.transpose {{.*}} {tile.layout = #tile.layout<size = [2, 2], lanes = [8, 4], warps = [4, 1], dims = [1, 0], lanes_first = [1, 0]>}
tile.kernel @fragment_pair(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                           %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"},
                           %z: !tile.view<[N, 32, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %u = tile.load %x[%n, %c0, %c0] window [1, 64, 32] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x32xbf16>
  %p = tile.dot %t, %t : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  %q = tile.dot %t, %u : !tile.tile<64x64xbf16>, !tile.tile<64x32xbf16> -> !tile.tile<64x32xf32>
  tile.store %p, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  %qt = tile.transpose %q [1, 0] : !tile.tile<64x32xf32> -> !tile.tile<32x64xf32>
  tile.store %qt, %z[%n, %c0, %c0] window [1, 32, 64] keep [1, 2] : !tile.tile<32x64xf32>, !tile.view<[N, 32, 64], f32>
  tile.return
}
