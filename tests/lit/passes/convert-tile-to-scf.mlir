// RUN: kiln-opt %s --convert-tile-to-scf | FileCheck %s

// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?xf32>) attributes {llvm.emit_c_interface}
// Buffers live at the entry, before any loop.
// CHECK: memref.alloca() : memref<4xf32>
// CHECK: memref.alloca() : memref<4xf32>
// The grid is a loop nest around the body.
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// Loads are masked against the runtime dim.
// CHECK: arith.cmpi ult
// CHECK: scf.if
// CHECK: memref.load %[[X]]
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[X]]
// CHECK: return
tile.kernel @scale(%N: index, %x: !tile.view<[N, 4], f32> {tile.access = "inout"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%i, %c0] window [1, 4] keep [1] masked : !tile.view<[N, 4], f32> -> !tile.tile<4xf32>
  %d = tile.add %t, %t : !tile.tile<4xf32>
  tile.store %d, %x[%i, %c0] window [1, 4] keep [1] : !tile.tile<4xf32>, !tile.view<[N, 4], f32>
  tile.return
}

// A tile carried by scf.for lives in its own buffer, overwritten at the end of
// each iteration.
// CHECK-LABEL: func.func @carried
// CHECK: %[[CARRIER:.*]] = memref.alloca() : memref<2x2xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[CARRIER]]
// CHECK: memref.store %{{.*}}, %[[CARRIER]]
tile.kernel @carried(%N: index, %y: !tile.view<[N, 2, 2], f32> {tile.access = "out"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %init = tile.constant 1.0 : f32 : !tile.tile<2x2xf32>
  %r = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %init) -> (!tile.tile<2x2xf32>) {
    %t = tile.transpose %acc [1, 0] : !tile.tile<2x2xf32> -> !tile.tile<2x2xf32>
    %p = tile.dot %acc, %t : !tile.tile<2x2xf32>, !tile.tile<2x2xf32> -> !tile.tile<2x2xf32>
    scf.yield %p : !tile.tile<2x2xf32>
  }
  tile.store %r, %y[%i, %c0, %c0] window [1, 2, 2] keep [1, 2] : !tile.tile<2x2xf32>, !tile.view<[N, 2, 2], f32>
  tile.return
}

// Limits bound the window further than the view: both compares guard the
// access (the dim, then the limit).
// CHECK-LABEL: func.func @limited(
// CHECK: %[[LIM:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: arith.cmpi ult
// CHECK: arith.cmpi slt, %{{.*}}, %[[LIM]] : index
// CHECK: arith.andi
// CHECK: scf.if
// CHECK: memref.load
tile.kernel @limited(%N: index, %x: !tile.view<[N], f32> {tile.access = "inout"}, %limit: i32) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %lim = arith.index_cast %limit : i32 to index
  %t = tile.load %x[%i] limits [%lim] window [4] keep [0] masked : !tile.view<[N], f32> -> !tile.tile<4xf32>
  tile.store %t, %x[%i] limits [%lim] window [4] keep [0] masked : !tile.tile<4xf32>, !tile.view<[N], f32>
  tile.return
}

// bf16 and f16 are both 16 bits and neither holds the other: the cast goes
// through f32 (a truncf from bf16 to f16 does not verify).
// CHECK-LABEL: func.func @bf16_to_f16
// CHECK: %[[WIDE:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %[[WIDE]] : f32 to f16
tile.kernel @bf16_to_f16(%N: index, %x: !tile.view<[N, 4], bf16> {tile.access = "in"}, %y: !tile.view<[N, 4], f16> {tile.access = "out"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%i, %c0] window [1, 4] keep [1] masked : !tile.view<[N, 4], bf16> -> !tile.tile<4xbf16>
  %h = tile.cast %t : !tile.tile<4xbf16> -> !tile.tile<4xf16>
  tile.store %h, %y[%i, %c0] window [1, 4] keep [1] : !tile.tile<4xf16>, !tile.view<[N, 4], f16>
  tile.return
}
