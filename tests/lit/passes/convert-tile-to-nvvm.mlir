// RUN: kiln-opt %s --tile-assign-layouts --convert-tile-to-nvvm --split-input-file | FileCheck %s

// A column sum of a [4, 64] tile over 2 warps: 16-byte loads, a shuffle
// between the 2 lanes along the column, then a shared-memory exchange
// between the 2 warps (one slot per lane: lanes hold different columns),
// then one owner thread per column group stores.
// CHECK: llvm.mlir.global internal @__kiln_scratch_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<256 x f32>
// CHECK-LABEL: llvm.func @cols(
// CHECK-SAME: %{{.*}}: i64, %{{.*}}: !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias})
// CHECK-SAME: attributes {kiln.dynamic_shared_bytes = 0 : i64, kiln.layout_conversions = 0 : i64, nvvm.kernel, nvvm.maxntid = array<i32: 64, 1, 1>}
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

// -----
// Warp roles and a TMA ring (persistent: each CTA loops over grid points).
// Thread 0 initialises the full (count 1) and empty (count 128: the compute
// warpgroup) mbarriers of both stages, then every role is one branch: the
// producer warpgroup gives registers back and one thread of it waits for a
// free stage, arms the full barrier with the tile's bytes and issues the
// bulk tensor copy; the compute warpgroup takes more registers, waits for a
// full stage, reads it with 16-byte shared loads, reduces over a named
// barrier of its own 128 threads, then releases the stage (a proxy fence
// first: the next copy writes it through the async proxy; before the
// block's first global access, so that the fence waits for no store) and
// stores.
// CHECK: llvm.mlir.global external @__kiln_dynamic_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func @ring(
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-SAME: kiln.tensor_maps = [array<i64: 1, 0, 1, 8, 64>]
// CHECK-SAME: nvvm.maxnreg = 136 : i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %[[ONE:.*]] : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %[[CONSUMERS:.*]] : !llvm.ptr<3>, i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.barrier0
// CHECK: scf.if
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] {isCTAOnly = true
// CHECK: } else {
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: nvvm.mbarrier.arrive
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK-NOT: llvm.store
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.mbarrier.arrive
// CHECK: llvm.store %{{.*}} : vector<4xf32>, !llvm.ptr<1>
tile.kernel @ring(%N: index, %x: !tile.view<[N, 8, 64], f32> {tile.access = "in"},
                  %y: !tile.view<[N, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "none",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["t"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["s", "st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["t"], depth = 2, copy = "tma">],
      persistent = 1>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 8, 64], f32> -> !tile.tile<8x64xf32>
  %s = tile.reduce sum %t axis 0 {tile.id = "s"} : !tile.tile<8x64xf32> -> !tile.tile<64xf32>
  tile.store %s, %y[%n, %c0] window [1, 64] keep [1] {tile.id = "st"} : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}

// -----

// A pipeline of two buffers: each has its stages, but both copies land on
// the first load's full barrier, which expects both boxes' bytes (2 x 2048);
// the second load issues its copy without an arrival of its own, and the
// reading role waits once a stage, at the first load.
// CHECK-LABEL: llvm.func @ring_group(
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[FULL:[^,]*]], %{{.*}}
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %[[FULL]], box
// CHECK-NOT: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: } else {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.return
tile.kernel @ring_group(%N: index, %x: !tile.view<[N, 8, 64], f32> {tile.access = "in"},
                        %z: !tile.view<[N, 8, 64], f32> {tile.access = "in"},
                        %y: !tile.view<[N, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "none",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["t", "u"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["s", "st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["u", "t"], depth = 2, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 8, 64], f32> -> !tile.tile<8x64xf32>
  %u = tile.load %z[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] {tile.id = "u"} : !tile.view<[N, 8, 64], f32> -> !tile.tile<8x64xf32>
  %tu = tile.add %t, %u : !tile.tile<8x64xf32>
  %s = tile.reduce sum %tu axis 0 {tile.id = "s"} : !tile.tile<8x64xf32> -> !tile.tile<64xf32>
  tile.store %s, %y[%n, %c0] window [1, 64] keep [1] {tile.id = "st"} : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}

// -----

// A ring read a row a lane (the schedule's layout): dense, the 32 lanes of
// a warp would read one bank (rows of 256 bytes); so the copies write the
// stage 128-byte swizzled, as two boxes of 32 columns (kiln.tensor_maps:
// view argument 1, swizzle 128, box [1, 32, 32]; the stage 1024-byte
// aligned), and each read XORs its 16-byte piece with its row % 8.
// CHECK-LABEL: llvm.func @ring_swizzled(
// CHECK-SAME: kiln.tensor_maps = [array<i64: 1, 128, 1, 32, 32>]
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: } else {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[PIECE:.*]] = arith.shli %{{.*}}, %{{.*}} : index
// CHECK: arith.xori %{{.*}}, %[[PIECE]] : index
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK: nvvm.mbarrier.arrive
tile.kernel @ring_swizzled(%N: index, %x: !tile.view<[N, 32, 64], f32> {tile.access = "in"},
                           %y: !tile.view<[N, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "none",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["t"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["s", "st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["t"], depth = 2, copy = "tma">],
      layouts = {t = {size = array<i64: 1, 1>, lanes = array<i64: 32, 1>, warps = array<i64: 1, 4>}}>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 32, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 32, 64], f32> -> !tile.tile<32x64xf32>
  %s = tile.reduce sum %t axis 0 {tile.id = "s"} : !tile.tile<32x64xf32> -> !tile.tile<64xf32>
  tile.store %s, %y[%n, %c0] window [1, 64] keep [1] {tile.id = "st"} : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}

// -----

// A ring load with a limit (a packed sequence's end) inside a loop that
// carries a sum: the producer role runs the loop for its bounds only (it
// carries nothing: no registers of the sum, no reduction), copies whole
// boxes, and the compute role masks rows at or past the limit again as it
// reads the stage (limit - start, in stage rows).
// CHECK-LABEL: llvm.func @ring_limits(
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT: llvm.intr.vector.reduce
// CHECK-NOT: nvvm.shfl
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: } else {
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[LEFT:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: arith.cmpi slt, %{{.*}}, %[[LEFT]] : index
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: nvvm.mbarrier.arrive
tile.kernel @ring_limits(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "in"},
                         %y: !tile.view<[64], f32> {tile.access = "out"}, %len32: i32) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "none",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["t"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["t"], depth = 2, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %len = arith.index_cast %len32 : i32 to index
  %f0 = arith.constant 0.0 : f32
  %zero = tile.splat %f0 : f32 -> !tile.tile<64xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (!tile.tile<64xf32>) {
    %row = arith.muli %i, %c8 : index
    %t = tile.load %x[%row, %c0] limits [%len, %c64] window [8, 64] keep [0, 1] masked {tile.id = "t"} : !tile.view<[N, 64], f32> -> !tile.tile<8x64xf32>
    %s = tile.reduce sum %t axis 0 : !tile.tile<8x64xf32> -> !tile.tile<64xf32>
    %a = tile.add %acc, %s : !tile.tile<64xf32>
    scf.yield %a : !tile.tile<64xf32>
  }
  tile.store %r, %y[%c0] window [64] keep [0] {tile.id = "st"} : !tile.tile<64xf32>, !tile.view<[64], f32>
  tile.return
}

// -----

// A SIMT dot: both operands staged row-major in the role's staging area of
// dynamic shared memory, a barrier, then each thread accumulates its own
// result elements over the inner dim with FMAs; a barrier frees the area.
// A transpose goes through the same area.
// CHECK-LABEL: llvm.func @simt_dot(
// CHECK-SAME: kiln.dynamic_shared_bytes = 2048 : i64
// CHECK: llvm.mlir.addressof @__kiln_dynamic_smem
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier0
// CHECK: scf.for
// CHECK: llvm.intr.fma
// CHECK: nvvm.barrier0
tile.kernel @simt_dot(%N: index, %x: !tile.view<[N, 16, 16], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 1, mma = "simt",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.view<[N, 16, 16], f32> -> !tile.tile<16x16xf32>
  %tt = tile.transpose %t [1, 0] : !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  %p = tile.dot %t, %tt : !tile.tile<16x16xf32>, !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  tile.store %p, %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.tile<16x16xf32>, !tile.view<[N, 16, 16], f32>
  tile.return
}

// -----

// The same product under wgmma on one warpgroup: both operands staged
// K-major (the transpose folds into the staging of B, 16-byte stores of f32
// read as tf32), a proxy fence and a barrier, two m64n16k8 instructions
// (K = 16) on shared-memory descriptors (leading byte offset 64 rows x 16
// bytes, stride 128 bytes), then the fragment as float pairs into a padded
// result area read back in the result's layout. M = 16 pads to 64 rows:
// only rows below 16 are written back.
// CHECK-LABEL: llvm.func @wgmma_dot(
// CHECK-SAME: kiln.dynamic_shared_bytes = 6656 : i64
// CHECK-NOT: nvvm.barrier0
// Rows of 16 f32 (64 bytes) swizzle in 64-byte blocks: each thread's piece
// of a row is XOR-permuted by the row; the descriptors say so (mode 2 in
// bits 62-63, 512 bytes between 8-row groups, leading offset 1).
// CHECK: arith.xori
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.constant -9223371899415756800 : i64
// CHECK: %[[D1:.*]] = nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 16, k = 8>, D[<f32>, <zero>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// CHECK: nvvm.wgmma.mma_async {{.*}}, %[[D1]], <m = 64, n = 16, k = 8>, D[<f32>, <one>], A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: arith.cmpi ult, %{{.*}}, %c16
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier0
tile.kernel @wgmma_dot(%N: index, %x: !tile.view<[N, 16, 16], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.view<[N, 16, 16], f32> -> !tile.tile<16x16xf32>
  %tt = tile.transpose %t [1, 0] : !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  %p = tile.dot %t, %tt : !tile.tile<16x16xf32>, !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  tile.store %p, %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.tile<16x16xf32>, !tile.view<[N, 16, 16], f32>
  tile.return
}

// -----

// bf16 operands multiply as bf16 (m64n16k16): one instruction covers K = 16.
// B is [K, N] with N along each thread's registers: staged N-major, as it
// lies, 16 bytes of N a store (no gather of K), and read so through the
// transpose bit (B <row>). Its descriptor: 32-byte swizzle (bits 62-63 =
// 3), 8-row groups 256 bytes apart (bits 32-45 = 16), N blocks K x 32
// bytes apart (bits 16-29 = 32): 0xC000001000200000.
// CHECK-LABEL: llvm.func @wgmma_bf16(
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: arith.constant -4611685949705814016 : i64
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 16, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
tile.kernel @wgmma_bf16(%N: index, %x: !tile.view<[N, 16, 16], bf16> {tile.access = "in"}, %y: !tile.view<[N, 16, 16], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.view<[N, 16, 16], bf16> -> !tile.tile<16x16xbf16>
  %p = tile.dot %t, %t : !tile.tile<16x16xbf16>, !tile.tile<16x16xbf16> -> !tile.tile<16x16xf32>
  tile.store %p, %y[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.tile<16x16xf32>, !tile.view<[N, 16, 16], f32>
  tile.return
}

// -----

// A bf16 B that is a transpose ([N, K] rows, K along the registers) stays
// K-major: no transpose bit (B <col>).
// CHECK-LABEL: llvm.func @wgmma_bf16_k_major(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 16, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
tile.kernel @wgmma_bf16_k_major(%N: index, %x: !tile.view<[N, 16, 16], bf16> {tile.access = "in"}, %y: !tile.view<[N, 16, 16], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.view<[N, 16, 16], bf16> -> !tile.tile<16x16xbf16>
  %tt = tile.transpose %t [1, 0] : !tile.tile<16x16xbf16> -> !tile.tile<16x16xbf16>
  %p = tile.dot %t, %tt : !tile.tile<16x16xbf16>, !tile.tile<16x16xbf16> -> !tile.tile<16x16xf32>
  tile.store %p, %y[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.tile<16x16xf32>, !tile.view<[N, 16, 16], f32>
  tile.return
}

// -----

// Two products of one rhs run as one: [a; c] (32 rows, one 64-row tile)
// times b, one fence, one commit and wait; each result reads its own rows of
// the accumulator area (the second from row 16: 16 x (16 + 8) f32 on).
// The third product needs the first's result, so it runs on its own.
// CHECK-LABEL: llvm.func @wgmma_pair(
// CHECK: nvvm.fence.proxy
// CHECK-NOT: nvvm.fence.proxy
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 16, k = 8>
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 16, k = 8>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: llvm.return
tile.kernel @wgmma_pair(%N: index, %x: !tile.view<[N, 16, 16], f32> {tile.access = "in"}, %y: !tile.view<[N, 16, 16], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.view<[N, 16, 16], f32> -> !tile.tile<16x16xf32>
  %b = tile.transpose %a [1, 0] : !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  %c = tile.exp %a : !tile.tile<16x16xf32>
  %p = tile.dot %a, %b : !tile.tile<16x16xf32>, !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  %q = tile.dot %c, %b : !tile.tile<16x16xf32>, !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  %r = tile.dot %p, %q : !tile.tile<16x16xf32>, !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  tile.store %r, %y[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.tile<16x16xf32>, !tile.view<[N, 16, 16], f32>
  tile.return
}

// -----

// Two products of one lhs run as one with their rhs side by side: a x [b, c]
// is one m64n32 product per K step.
// CHECK-LABEL: llvm.func @wgmma_pair_columns(
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 8>
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 32, k = 8>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: llvm.return
tile.kernel @wgmma_pair_columns(%N: index, %x: !tile.view<[N, 16, 16], f32> {tile.access = "in"}, %y: !tile.view<[N, 16, 16], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.view<[N, 16, 16], f32> -> !tile.tile<16x16xf32>
  %c = tile.exp %a : !tile.tile<16x16xf32>
  %p = tile.dot %a, %a : !tile.tile<16x16xf32>, !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  %q = tile.dot %a, %c : !tile.tile<16x16xf32>, !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  %r = tile.add %p, %q : !tile.tile<16x16xf32>
  tile.store %r, %y[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.tile<16x16xf32>, !tile.view<[N, 16, 16], f32>
  tile.return
}

// -----

// Masked loads along a row bound keep their 16-byte vectors: the bound
// guards whole vectors, and what is out of range reads as zeros. The row's
// two bounds (the view's dim N and the limit) are one range check, made
// once: the span min(limit, N) - 0, clamped at 0, and each row's offset
// compared with it unsigned (a row past either, or below 0, fails it).
// CHECK-LABEL: llvm.func @row_limit(
// CHECK: %[[HI:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK: %[[WIDTH:.*]] = arith.subi %[[HI]], %{{.*}} : index
// CHECK: %[[SPAN:.*]] = arith.maxsi %[[WIDTH]], %{{.*}} : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %[[SPAN]] : index
// CHECK: scf.if %[[IN]] -> (vector<4xf32>)
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.mlir.constant(dense<0.000000e+00> : vector<4xf32>)
tile.kernel @row_limit(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "inout"}, %lim32: i32) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 1, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %lim = arith.index_cast %lim32 : i32 to index
  %t = tile.load %x[%c0, %c0] limits [%lim, %c64] window [8, 64] keep [0, 1] masked : !tile.view<[N, 64], f32> -> !tile.tile<8x64xf32>
  tile.store %t, %x[%c0, %c0] limits [%lim, %c64] window [8, 64] keep [0, 1] masked : !tile.tile<8x64xf32>, !tile.view<[N, 64], f32>
  tile.return
}

// -----

// A masked window with a runtime start over a static dim can run past its
// end: each 16-byte vector is checked against the dim (it cannot straddle
// it: the dim and the start are multiples of the width).
// CHECK-LABEL: llvm.func @static_masked(
// CHECK: arith.cmpi ult, %{{.*}}, %c64
// CHECK: scf.if %{{.*}} -> (vector<4xf32>)
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
tile.kernel @static_masked(%N: index, %x: !tile.view<[64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 1, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c4 = arith.constant 4 : index
  %start = arith.muli %n, %c4 : index
  %t = tile.load %x[%start] window [32] keep [0] masked : !tile.view<[64], f32> -> !tile.tile<32xf32>
  tile.store %t, %x[%start] window [32] keep [0] masked : !tile.tile<32xf32>, !tile.view<[64], f32>
  tile.return
}

// -----

// The same product under tcgen05: one whole warp allocates 32 tensor-memory
// columns (16 rounded up) and gives up the permit before the CTA barrier;
// the staged operands are fenced for the async proxy; tcgen05 fences wrap
// the barrier; one thread issues the 64-row MMAs (K in two steps, the first
// without accumulating) and commits them to the role's mbarrier; every
// thread waits on its phase parity, reads 8 columns of its lanes with
// tcgen05.ld and waits for the load (an asm that takes and gives back the
// loaded registers, so no use of them moves above it) before storing them; at the end the
// allocating warp frees the columns after a barrier.
// CHECK-LABEL: llvm.func @tcgen05_dot(
// CHECK: nvvm.tcgen05.alloc %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit
// CHECK: nvvm.mbarrier.init %{{.*}}, %{{.*}}
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: scf.for
// The instruction descriptor: f32 accumulators, tf32 operands, N 16, M 64.
// CHECK: nvvm.tcgen05.mma {{.*}}, %c67373328_i32, {{.*}} {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<tf32>}
// CHECK-NOT: nvvm.tcgen05.ld
// CHECK: nvvm.tcgen05.commit %[[BAR:.*]] : !llvm.ptr<3>
// CHECK-NOT: nvvm.tcgen05.ld
// CHECK: nvvm.mbarrier.try_wait.parity %[[BAR]]
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.ld {{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<8xi32>
// CHECK: llvm.inline_asm has_side_effects "tcgen05.wait::ld.sync.aligned;"
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.dealloc %{{.*}}, %{{.*}} : !llvm.ptr<6>, i32
// CHECK: llvm.return
tile.kernel @tcgen05_dot(%N: index, %x: !tile.view<[N, 16, 16], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_100a", params = {}, grid = ["n"], warps = 4, mma = "tcgen05",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.view<[N, 16, 16], f32> -> !tile.tile<16x16xf32>
  %tt = tile.transpose %t [1, 0] : !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  %p = tile.dot %t, %tt : !tile.tile<16x16xf32>, !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  tile.store %p, %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.tile<16x16xf32>, !tile.view<[N, 16, 16], f32>
  tile.return
}

// -----

// The same product issued by an MMA warp (`issues: mma`): the compute role
// stages and fences the operands, then arrives on its ready mbarrier and
// waits on its done one before reading the columns back; the MMA warp (warp
// 4) waits on ready and one of its threads issues the MMAs and commits them
// to done. Neither role runs the other's half.
// CHECK-LABEL: llvm.func @tcgen05_issuer(
// CHECK: nvvm.mbarrier.init %[[DONE:[^,]*]], %{{.*}}
// CHECK: nvvm.mbarrier.init %[[READY:[^,]*]], %{{.*}}
// The compute role.
// CHECK: scf.if
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK: nvvm.mbarrier.arrive %{{.*}}
// CHECK-NOT: nvvm.tcgen05.mma
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.ld
// CHECK: llvm.store %{{.*}}, %{{.*}} : vector<4xf32>, !llvm.ptr<1>
// The MMA warp: no operand staging, no read-back, no store.
// CHECK: } else {
// CHECK-NOT: nvvm.tcgen05.ld
// CHECK-NOT: llvm.store %{{.*}} !llvm.ptr<1>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.mma
// CHECK: nvvm.tcgen05.commit
// CHECK-NOT: nvvm.tcgen05.ld
// CHECK: nvvm.tcgen05.dealloc
tile.kernel @tcgen05_issuer(%N: index, %x: !tile.view<[N, 16, 16], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_100a", params = {}, grid = ["n"], warps = 5, mma = "tcgen05",
      roles = [#tile.role<name = "compute", firstWarp = 0, numWarps = 4, regs = 128, ops = ["st"]>,
               #tile.role<name = "mma", firstWarp = 4, numWarps = 1, regs = 128, ops = [], issuesMma = true>],
      pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.view<[N, 16, 16], f32> -> !tile.tile<16x16xf32>
  %tt = tile.transpose %t [1, 0] : !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  %p = tile.dot %t, %tt : !tile.tile<16x16xf32>, !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  tile.store %p, %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] {tile.id = "st"} : !tile.tile<16x16xf32>, !tile.view<[N, 16, 16], f32>
  tile.return
}

// -----

// A ring whose tile is only a wgmma operand (K its last dim) lands where the
// product reads it: the producer copies it as one 128-byte-swizzled box per
// K block (64 f32 of K: two), the compute role waits for the stage, stages
// only the other operand, and gives the stage back after the product, not
// after reading it into registers (it never does).
// CHECK-LABEL: llvm.func @ring_mma_operand(
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: } else {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: llvm.load %{{.*}} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: nvvm.mbarrier.arrive
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.barrier id
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
tile.kernel @ring_mma_operand(%N: index, %x: !tile.view<[N, 64, 64], f32> {tile.access = "in"},
                              %w: !tile.view<[16, 64], f32> {tile.access = "in"},
                              %y: !tile.view<[N, 64, 16], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "wgmma",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["a"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["a"], depth = 2, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "a"} : !tile.view<[N, 64, 64], f32> -> !tile.tile<64x64xf32>
  %b = tile.load %w[%c0, %c0] window [16, 64] keep [0, 1] : !tile.view<[16, 64], f32> -> !tile.tile<16x64xf32>
  %bt = tile.transpose %b [1, 0] : !tile.tile<16x64xf32> -> !tile.tile<64x16xf32>
  %p = tile.dot %a, %bt : !tile.tile<64x64xf32>, !tile.tile<64x16xf32> -> !tile.tile<64x16xf32>
  tile.store %p, %y[%n, %c0, %c0] window [1, 64, 16] keep [1, 2] {tile.id = "st"} : !tile.tile<64x16xf32>, !tile.view<[N, 64, 16], f32>
  tile.return
}

// -----

// A result in its accumulators' layout (tile-assign-layouts gives a 64-row
// product on one warpgroup that layout) stays in the registers the product
// leaves it in: after the wait, one barrier (the staging area may be
// written again) and no result area to write and read back; the store
// writes each thread's column pairs (8 bytes).
// CHECK-LABEL: llvm.func @wgmma_fragment(
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-NOT: !llvm.ptr<3>
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
tile.kernel @wgmma_fragment(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"}, %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %p = tile.dot %t, %t : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  tile.store %p, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.return
}

// -----

// A product's result in its accumulators is the next product's A straight
// from the registers: packed to bf16 pairs for a bf16 product, moved within
// each quad of lanes for a tf32 one (tf32 A holds columns t and t + 4 where
// the accumulators hold 2t and 2t + 1). Only B is staged, and the
// transposed store takes the result's registers as they are.
// CHECK-LABEL: llvm.func @wgmma_register_a(
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-4: llvm.bitcast {{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.shfl.sync idx
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.return
tile.kernel @wgmma_register_a(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"}, %w: !tile.view<[N, 64, 64], f32> {tile.access = "in"}, %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %f = tile.load %w[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], f32> -> !tile.tile<64x64xf32>
  %p = tile.dot %t, %t : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  %pb = tile.cast %p : !tile.tile<64x64xf32> -> !tile.tile<64x64xbf16>
  %q = tile.dot %pb, %t : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  %r = tile.dot %q, %f : !tile.tile<64x64xf32>, !tile.tile<64x64xf32> -> !tile.tile<64x64xf32>
  %rt = tile.transpose %r [1, 0] : !tile.tile<64x64xf32> -> !tile.tile<64x64xf32>
  tile.store %rt, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.return
}

// -----

// A product that stages nothing (A from the registers of the product
// before, B in place in its TMA ring stage) and leaves its result in its
// accumulators touches no shared memory of the role's: no barrier after
// its wait, each thread gives the ring stage back itself. The first
// product staged both operands and keeps its barrier. The second one's
// wait waits for what needs it: the store of its result.
// CHECK-LABEL: llvm.func @registers_only(
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.barrier id
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.extractvalue
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.barrier
// CHECK: llvm.store {{.*}} !llvm.ptr<1>
// CHECK: llvm.return
tile.kernel @registers_only(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                            %w: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                            %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "wgmma",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["b"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["b"], depth = 2, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %b = tile.load %w[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "b"} : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %bt = tile.transpose %b [1, 0] : !tile.tile<64x64xbf16> -> !tile.tile<64x64xbf16>
  %p = tile.dot %t, %t : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  %pb = tile.cast %p : !tile.tile<64x64xf32> -> !tile.tile<64x64xbf16>
  %q = tile.dot %pb, %bt : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  tile.store %q, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "st"} : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.return
}

// -----

// A product in flight: the ops after it that neither read its result nor
// touch shared memory (here the exp and the store of the first product's
// result, and a scalar compare) are lowered between its commit and its
// wait; the wait comes
// before the first op that may need the product done (here a region: the
// `scf.if`), and the ring stage goes back after it.
// CHECK-LABEL: llvm.func @wait_deferred(
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned
// CHECK-COUNT-16: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NEXT: arith.cmpi
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK: scf.if
// CHECK: llvm.store {{.*}} !llvm.ptr<1>
// CHECK: llvm.return
tile.kernel @wait_deferred(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                           %w: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                           %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"},
                           %z: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "wgmma",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["b"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["st", "ez"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["b"], depth = 2, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %b = tile.load %w[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "b"} : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %bt = tile.transpose %b [1, 0] : !tile.tile<64x64xbf16> -> !tile.tile<64x64xbf16>
  %p = tile.dot %t, %t : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  %pb = tile.cast %p : !tile.tile<64x64xf32> -> !tile.tile<64x64xbf16>
  %q = tile.dot %pb, %bt : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  %e = tile.exp %p : !tile.tile<64x64xf32>
  tile.store %e, %z[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "ez"} : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  %first = arith.cmpi eq, %n, %c0 : index
  scf.if %first {
    tile.store %q, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "st"} : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  }
  tile.return
}

// -----

// Two products in flight: the second reads only registers (A) and its ring
// stage (B) and is issued before the first one's wait. The store of the
// first one's result waits for it alone, wgmma groups completing in order
// (`wait_group 1`: the second still multiplies while the store goes out);
// the store of the second waits for the rest.
// CHECK-LABEL: llvm.func @two_in_flight(
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: llvm.store {{.*}} !llvm.ptr<1>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned
// CHECK: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>
// CHECK: llvm.return
tile.kernel @two_in_flight(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                           %w: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                           %v: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                           %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"},
                           %z: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "wgmma",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["b", "c"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["sq", "sr"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["b"], depth = 2, copy = "tma">,
                   #tile.pipeline<name = "ring2", buffers = ["c"], depth = 2, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %b = tile.load %w[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "b"} : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %c = tile.load %v[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "c"} : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %bt = tile.transpose %b [1, 0] : !tile.tile<64x64xbf16> -> !tile.tile<64x64xbf16>
  %ct = tile.transpose %c [1, 0] : !tile.tile<64x64xbf16> -> !tile.tile<64x64xbf16>
  %p = tile.dot %t, %t : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  %pb = tile.cast %p : !tile.tile<64x64xf32> -> !tile.tile<64x64xbf16>
  %e = tile.exp %p : !tile.tile<64x64xf32>
  %eb = tile.cast %e : !tile.tile<64x64xf32> -> !tile.tile<64x64xbf16>
  %q = tile.dot %pb, %bt : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  %r = tile.dot %eb, %ct : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  tile.store %q, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "sq"} : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.store %r, %z[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "sr"} : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.return
}

// -----

// A transpose that keeps every element in its warp (each warp holds the
// same 16 rows of the product's result before and the same 16 columns
// after) goes through the warp's own slice of shared memory, past the
// staging area, with warp synchronisation only: 4 slices of 64 x 36 f32
// (36864 bytes) after the 12288 of staging (the operands only: the
// product's result stays in its accumulators and takes no result rows).
// CHECK-LABEL: llvm.func @transpose_in_warps(
// CHECK-SAME: kiln.dynamic_shared_bytes = 49152 : i64
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.barrier0
// CHECK-NOT: nvvm.barrier
// CHECK-COUNT-16: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.bar.warp.sync
// CHECK-NOT: nvvm.barrier
// CHECK-COUNT-16: llvm.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.bar.warp.sync
// CHECK-NOT: nvvm.barrier
// CHECK-COUNT-2: llvm.store {{.*}} : vector<8xbf16>, !llvm.ptr<1>
// CHECK: llvm.return
tile.kernel @transpose_in_warps(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"}, %w: !tile.view<[N, 64, 32], bf16> {tile.access = "in"}, %y: !tile.view<[N, 32, 64], bf16> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = [], layouts = {pb = {size = array<i64: 1, 8>, lanes = array<i64: 16, 2>, warps = array<i64: 1, 4>}}>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %u = tile.load %w[%n, %c0, %c0] window [1, 64, 32] keep [1, 2] : !tile.view<[N, 64, 32], bf16> -> !tile.tile<64x32xbf16>
  %p = tile.dot %t, %u : !tile.tile<64x64xbf16>, !tile.tile<64x32xbf16> -> !tile.tile<64x32xf32>
  %pt = tile.transpose %p [1, 0] : !tile.tile<64x32xf32> -> !tile.tile<32x64xf32>
  %pb = tile.cast %pt {tile.id = "pb"} : !tile.tile<32x64xf32> -> !tile.tile<32x64xbf16>
  tile.store %pb, %y[%n, %c0, %c0] window [1, 32, 64] keep [1, 2] : !tile.tile<32x64xbf16>, !tile.view<[N, 32, 64], bf16>
  tile.return
}

// -----

// A row sum broadcast back as a row needs one layout conversion (a
// reduction is not made again): the function counts it for reports
// (`kiln compare`), and it moves through the staging area between two
// barriers.
// CHECK-LABEL: llvm.func @one_conversion(
// CHECK-SAME: kiln.layout_conversions = 1 : i64
// CHECK: nvvm.barrier0
// CHECK: nvvm.barrier0
tile.kernel @one_conversion(%N: index, %x: !tile.view<[N, 64, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
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

// -----

// An f32 A times a bf16 B runs as two bf16 products into one accumulator:
// A's top 16 bits (no conversion instruction: the bits as they lie, two
// elements' a word by one byte permute, selector 0x7632) and the rounded
// rest, staged one after the other (the second part 64 x 32 x 2 = 4096
// bytes on), each over both K steps of the same B.
// CHECK-LABEL: llvm.func @split_a(
// CHECK: nvvm.prmt <default> %c30258_i32{{.*}} : i32
// CHECK: arith.andi %{{.*}}, %c-65536{{.*}} : i32
// CHECK: arith.subf
// CHECK-NEXT: arith.truncf {{.*}} : f32 to bf16
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
tile.kernel @split_a(%N: index, %x: !tile.view<[N, 64, 32], f32> {tile.access = "in"},
                     %w: !tile.view<[N, 32, 64], bf16> {tile.access = "in"},
                     %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%n, %c0, %c0] window [1, 64, 32] keep [1, 2] : !tile.view<[N, 64, 32], f32> -> !tile.tile<64x32xf32>
  %b = tile.load %w[%n, %c0, %c0] window [1, 32, 64] keep [1, 2] : !tile.view<[N, 32, 64], bf16> -> !tile.tile<32x64xbf16>
  %p = tile.dot %a, %b : !tile.tile<64x32xf32>, !tile.tile<32x64xbf16> -> !tile.tile<64x64xf32>
  tile.store %p, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.return
}

// -----

// The same split with A in registers (an f32 product's accumulators) and B
// read in place from its TMA ring as it lies, [K, N]: N-major, the ring's
// boxes 64 columns (128 bytes, the swizzle's block) of all 64 rows, read
// through the transpose bit (the inline PTX's last immediate). Both parts'
// 4 K steps each, nothing staged, no barrier.
// CHECK-LABEL: llvm.func @split_a_ring_n_major(
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.barrier id
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.mbarrier.arrive
tile.kernel @split_a_ring_n_major(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                                  %w: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                                  %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "wgmma",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["b"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["b"], depth = 2, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %b = tile.load %w[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "b"} : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  %p = tile.dot %t, %t : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  %q = tile.dot %p, %b : !tile.tile<64x64xf32>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
  tile.store %q, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "st"} : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.return
}

// -----

// A split A held K first ([K, M], transposed into the dot) is staged by
// pieces: the tile goes row-major into the result rows once, one barrier,
// and each gathered piece of 8 bf16 is stored as both parts (the second
// 64 x 32 x 2 = 4096 bytes on).
// CHECK-LABEL: llvm.func @split_a_pieces(
// CHECK: nvvm.barrier
// CHECK-NOT: nvvm.barrier
// CHECK: scf.for
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: arith.constant 4096 : index
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NEXT: }
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>]
tile.kernel @split_a_pieces(%N: index, %x: !tile.view<[N, 32, 64], f32> {tile.access = "in"},
                            %w: !tile.view<[N, 32, 64], bf16> {tile.access = "in"},
                            %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %at = tile.load %x[%n, %c0, %c0] window [1, 32, 64] keep [1, 2] : !tile.view<[N, 32, 64], f32> -> !tile.tile<32x64xf32>
  %a = tile.transpose %at [1, 0] : !tile.tile<32x64xf32> -> !tile.tile<64x32xf32>
  %b = tile.load %w[%n, %c0, %c0] window [1, 32, 64] keep [1, 2] : !tile.view<[N, 32, 64], bf16> -> !tile.tile<32x64xbf16>
  %p = tile.dot %a, %b : !tile.tile<64x32xf32>, !tile.tile<32x64xbf16> -> !tile.tile<64x64xf32>
  tile.store %p, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  tile.return
}

// -----

// A row picked by an index just loaded (decode's slot): the index's term is
// added last, to a pointer made from the rest, so the row's address waits on
// the load for one multiply and one add.
// CHECK-LABEL: llvm.func @row_by_index(
// CHECK: %[[IDX:.*]] = llvm.load %{{.*}} invariant {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: %[[REST:.*]] = llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: %[[ROW:.*]] = llvm.getelementptr %[[REST]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: llvm.getelementptr %[[ROW]][%{{.*}}]
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
tile.kernel @row_by_index(%N: index, %idx: !tile.view<[N], i32> {tile.access = "in"},
                          %x: !tile.view<[N, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 1, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %i32 = tile.load %idx[%n] window [1] keep [] : !tile.view<[N], i32> -> !tile.tile<i32>
  %row = tile.to_index %i32 : !tile.tile<i32>
  %t = tile.load %x[%row, %c0] window [1, 64] keep [1] : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  tile.store %t, %x[%n, %c0] window [1, 64] keep [1] : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}

// -----
// A ring stage a product reads in place on every step of a loop, copied
// once outside it (not persistent): the copy fills it once for the kernel,
// so no step frees it (convert-tile-to-nvvm_invalid.mlir: where it is
// refilled, that is an error).
// CHECK-LABEL: llvm.func @in_place_once(
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.mbarrier.arrive
// CHECK: llvm.return
tile.kernel @in_place_once(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                            %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "wgmma",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["a"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["a"], depth = 1, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "a"} : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  scf.for %i = %c0 to %c4 step %c1 {
    %b = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
    %p = tile.dot %a, %b : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
    tile.store %p, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "st"} : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  }
  tile.return
}

// -----
// A cumsum of 32 f32 (a chunk's log decays): out to the staging area, one
// warp scans the line in place (a lane an element, five up-shuffles whose
// lanes below the distance add nothing), then every thread reads its
// elements back. No per-element prefix loop.
// CHECK-LABEL: llvm.func @decays(
// CHECK: nvvm.barrier0
// CHECK-NOT: scf.for
// CHECK-COUNT-5: nvvm.shfl.sync up
// CHECK-NOT: nvvm.shfl.sync up
// CHECK: nvvm.barrier0
// CHECK: nvvm.barrier0
// CHECK: llvm.return
tile.kernel @decays(%N: index, %x: !tile.view<[N, 32], f32> {tile.access = "in"},
                    %y: !tile.view<[N, 32], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0] window [1, 32] keep [1] : !tile.view<[N, 32], f32> -> !tile.tile<32xf32>
  %s = tile.cumsum %t axis 0 : !tile.tile<32xf32>
  tile.store %s, %y[%n, %c0] window [1, 32] keep [1] : !tile.tile<32xf32>, !tile.view<[N, 32], f32>
  tile.return
}

// -----
// A line longer than a warp keeps the prefix loop.
// CHECK-LABEL: llvm.func @long_line(
// CHECK-NOT: nvvm.shfl.sync up
// CHECK: scf.for
// CHECK: llvm.return
tile.kernel @long_line(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "in"},
                       %y: !tile.view<[N, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0] window [1, 64] keep [1] : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  %s = tile.cumsum %t axis 0 : !tile.tile<64xf32>
  tile.store %s, %y[%n, %c0] window [1, 64] keep [1] : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}

// -----
// A grid axis of a compile-time extent (4 column blocks, on y) is listed on
// the function for the CUDA source's ranges; the one known only at launch
// (N, on x) as 0.
// CHECK-LABEL: llvm.func @constant_axis(
// CHECK-SAME: kiln.grid_extents = array<i64: 0, 4, 0>
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// CHECK: nvvm.read.ptx.sreg.ctaid.y
tile.kernel @constant_axis(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "in"},
                           %y: !tile.view<[N, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n", "j"], warps = 1, mma = "none",
      roles = [], pipelines = []>} {
  %c4 = arith.constant 4 : index
  %ids:2 = tile.program_ids ["n", "j"] (%N, %c4) : index, index
  %c16 = arith.constant 16 : index
  %j0 = arith.muli %ids#1, %c16 : index
  %t = tile.load %x[%ids#0, %j0] window [1, 16] keep [1] : !tile.view<[N, 64], f32> -> !tile.tile<16xf32>
  tile.store %t, %y[%ids#0, %j0] window [1, 16] keep [1] : !tile.tile<16xf32>, !tile.view<[N, 64], f32>
  tile.return
}
