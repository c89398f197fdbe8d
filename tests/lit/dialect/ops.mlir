// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// Round trip of every tile op and type through the printer and the parser.

// CHECK-LABEL: tile.kernel @all_ops
// CHECK-SAME: !tile.view<[N, 64], bf16> {tile.access = "in"}
// CHECK-SAME: attributes {dim_names = ["N"], schedule = #tile.schedule<target = "sm_90a"
tile.kernel @all_ops(%N: index, %x: !tile.view<[N, 64], bf16> {tile.access = "in"},
                     %y: !tile.view<[N, 64], f32> {tile.access = "out"}, %s: f32)
    attributes {dim_names = ["N"], schedule = #tile.schedule<target = "sm_90a", params = {BV = 32 : i64},
      grid = ["i"], warps = 4, mma = "wgmma",
      roles = [#tile.role<name = "compute", firstWarp = 0, numWarps = 4, regs = 128, ops = ["t"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["t"], depth = 2, copy = "tma">]>} {
  // CHECK: tile.program_ids ["i"](%{{.*}}) : index
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] window [1, 64] keep [1] masked {tile.id = "t"} : <[N, 64], bf16> -> <64xbf16>
  %t = tile.load %x[%i, %c0] window [1, 64] keep [1] masked {tile.id = "t"} : !tile.view<[N, 64], bf16> -> !tile.tile<64xbf16>
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] limits[%{{.*}}, %{{.*}}] window [1, 64] keep [1] masked : <[N, 64], bf16> -> <64xbf16>
  %c64 = arith.constant 64 : index
  %tl = tile.load %x[%i, %c0] limits [%i, %c64] window [1, 64] keep [1] masked : !tile.view<[N, 64], bf16> -> !tile.tile<64xbf16>
  // CHECK: tile.cast %{{.*}} : <64xbf16> -> <64xf32>
  %f = tile.cast %t : !tile.tile<64xbf16> -> !tile.tile<64xf32>
  // CHECK: tile.splat %{{.*}} : f32 -> <64xf32>
  %sp = tile.splat %s : f32 -> !tile.tile<64xf32>
  %a = tile.add %f, %sp : !tile.tile<64xf32>
  %b = tile.sub %a, %f : !tile.tile<64xf32>
  %m = tile.mul %a, %b : !tile.tile<64xf32>
  %d = tile.div %m, %a : !tile.tile<64xf32>
  %mx = tile.max %d, %m : !tile.tile<64xf32>
  %mn = tile.min %d, %m : !tile.tile<64xf32>
  %r = tile.rem %mx, %mn : !tile.tile<64xf32>
  %e = tile.exp %r : !tile.tile<64xf32>
  %l = tile.log %e : !tile.tile<64xf32>
  %l1 = tile.log1p %l : !tile.tile<64xf32>
  %sq = tile.sqrt %l1 : !tile.tile<64xf32>
  %rs = tile.rsqrt %sq : !tile.tile<64xf32>
  %sg = tile.sigmoid %rs : !tile.tile<64xf32>
  %th = tile.tanh %sg : !tile.tile<64xf32>
  %ab = tile.abs %th : !tile.tile<64xf32>
  %ng = tile.neg %ab : !tile.tile<64xf32>
  // CHECK: tile.cmp lt, %{{.*}}, %{{.*}} : <64xf32> -> <64xi1>
  %c = tile.cmp lt, %ng, %ab : !tile.tile<64xf32> -> !tile.tile<64xi1>
  %nc = tile.not %c : !tile.tile<64xi1>
  %and = tile.and %c, %nc : !tile.tile<64xi1>
  %or = tile.or %and, %c : !tile.tile<64xi1>
  // CHECK: tile.select
  %sel = tile.select %or, %ng, %ab : !tile.tile<64xi1>, !tile.tile<64xf32>
  // CHECK: tile.reshape %{{.*}} : <64xf32> -> <8x8xf32>
  %sq2 = tile.reshape %sel : !tile.tile<64xf32> -> !tile.tile<8x8xf32>
  // CHECK: tile.transpose %{{.*}} [1, 0] : <8x8xf32> -> <8x8xf32>
  %tr = tile.transpose %sq2 [1, 0] : !tile.tile<8x8xf32> -> !tile.tile<8x8xf32>
  // CHECK: tile.slice %{{.*}} [4, 2] : <8x8xf32> -> <4x2xf32>
  %win = tile.slice %tr [4, 2] : !tile.tile<8x8xf32> -> !tile.tile<4x2xf32>
  // CHECK: tile.dot %{{.*}}, %{{.*}}, %{{.*}} : !tile.tile<8x8xf32> : <8x8xf32>, <8x8xf32> -> <8x8xf32>
  %dt = tile.dot %sq2, %tr, %tr : !tile.tile<8x8xf32> : !tile.tile<8x8xf32>, !tile.tile<8x8xf32> -> !tile.tile<8x8xf32>
  // CHECK: tile.cumsum %{{.*}} axis 1 : <8x8xf32>
  %cs = tile.cumsum %dt axis 1 : !tile.tile<8x8xf32>
  // CHECK: tile.reduce max %{{.*}} axis 0 : <8x8xf32> -> <8xf32>
  %rd = tile.reduce max %cs axis 0 : !tile.tile<8x8xf32> -> !tile.tile<8xf32>
  // CHECK: tile.broadcast %{{.*}} : <8xf32> -> <8x8xf32>
  %bc = tile.broadcast %rd : !tile.tile<8xf32> -> !tile.tile<8x8xf32>
  %io = tile.iota : !tile.tile<8xi32>
  %k = tile.constant 3 : i32 : !tile.tile<8xi32>
  %fi = tile.from_index %c0 : !tile.tile<i32>
  %ti = tile.to_index %fi : !tile.tile<i32>
  %flat = tile.reshape %bc : !tile.tile<8x8xf32> -> !tile.tile<64xf32>
  // CHECK: tile.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] window [1, 64] keep [1] : <64xf32>, <[N, 64], f32>
  tile.store %flat, %y[%i, %c0] window [1, 64] keep [1] : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  // CHECK: tile.return
  tile.return
}
