// RUN: kiln-opt %s --tile-assign-layouts --convert-tile-to-nvvm | FileCheck %s

// A column sum of a [4, 64] tile over 2 warps: 16-byte loads, a shuffle
// between the 2 lanes along the column, then a shared-memory exchange
// between the 2 warps, then one owner thread per column group stores.
// CHECK: llvm.mlir.global internal @__kiln_scratch_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<8 x f32>
// CHECK-LABEL: llvm.func @cols(
// CHECK-SAME: %{{.*}}: i64, %{{.*}}: !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias})
// CHECK-SAME: attributes {nvvm.kernel, nvvm.maxntid = array<i32: 64, 1, 1>}
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// CHECK: llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: nvvm.shfl.sync bfly
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier0
// CHECK: scf.if
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: llvm.return
tile.kernel @cols(%N: index, %x: !tile.view<[N, 4, 64], f32> {tile.access = "in"},
                  %y: !tile.view<[N, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 2, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] : !tile.view<[N, 4, 64], f32> -> !tile.tile<4x64xf32>
  %s = tile.reduce sum %t axis 0 : !tile.tile<4x64xf32> -> !tile.tile<64xf32>
  tile.store %s, %y[%n, %c0] window [1, 64] keep [1] : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}
