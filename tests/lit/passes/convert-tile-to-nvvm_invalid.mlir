// RUN: kiln-opt %s --tile-assign-layouts --convert-tile-to-nvvm --split-input-file --verify-diagnostics

tile.kernel @masked_tma(%N: index, %x: !tile.view<[N, 8, 64], f32> {tile.access = "in"},
                        %y: !tile.view<[N, 8, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "none",
      roles = [], pipelines = [#tile.pipeline<name = "ring", buffers = ["t"], depth = 1, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{is masked with other = 1; a TMA copy fills what lies outside the tensor with zeros: load it with `copy: ld`, or let masked-off elements read 0}}
  %t = tile.load %x[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] masked {other = 1.0 : f64, tile.id = "t"} : !tile.view<[N, 8, 64], f32> -> !tile.tile<8x64xf32>
  tile.store %t, %y[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] : !tile.tile<8x64xf32>, !tile.view<[N, 8, 64], f32>
  tile.return
}

// -----

tile.kernel @big_box(%N: index, %x: !tile.view<[N, 512], f32> {tile.access = "in"},
                     %y: !tile.view<[N, 512], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "none",
      roles = [], pipelines = [#tile.pipeline<name = "ring", buffers = ["t"], depth = 1, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{needs a TMA box of 512 along view dim 1; a box dim is at most 256}}
  %t = tile.load %x[%n, %c0] window [1, 512] keep [1] {tile.id = "t"} : !tile.view<[N, 512], f32> -> !tile.tile<512xf32>
  tile.store %t, %y[%n, %c0] window [1, 512] keep [1] : !tile.tile<512xf32>, !tile.view<[N, 512], f32>
  tile.return
}

// -----

tile.kernel @unread(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "in"},
                    %y: !tile.view<[N, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "none",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["t"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["t"], depth = 1, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{fills ring 'ring' that no role reads}}
  %t = tile.load %x[%n, %c0] window [1, 64] keep [1] {tile.id = "t"} : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  %z = tile.constant 0.0 : f32 : !tile.tile<64xf32>
  tile.store %z, %y[%n, %c0] window [1, 64] keep [1] {tile.id = "st"} : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}

// -----

tile.kernel @dot(%N: index, %x: !tile.view<[N, 16, 16], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 2, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.view<[N, 16, 16], f32> -> !tile.tile<16x16xf32>
  // expected-error @+1 {{under 'mma: wgmma' runs on whole warpgroups, but the role has 2 warps}}
  %p = tile.dot %t, %t : !tile.tile<16x16xf32>, !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  tile.return
}

// -----

tile.kernel @dot_inner(%N: index, %x: !tile.view<[N, 16, 4], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "wgmma",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 16, 4] keep [1, 2] : !tile.view<[N, 16, 4], f32> -> !tile.tile<16x4xf32>
  %tt = tile.transpose %t [1, 0] : !tile.tile<16x4xf32> -> !tile.tile<4x16xf32>
  // expected-error @+1 {{under 'mma: wgmma' has an inner dim of 4; wgmma on tf32 operands needs a multiple of 8}}
  %p = tile.dot %t, %tt : !tile.tile<16x4xf32>, !tile.tile<4x16xf32> -> !tile.tile<16x16xf32>
  tile.return
}

// -----

// A 128 x 64 tcgen05 product keeps its accumulator in 64 tensor-memory
// columns; the schedule allows 32.
tile.kernel @tmem_budget(%N: index, %x: !tile.view<[N, 128, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_100a", params = {}, grid = ["n"], warps = 4, mma = "tcgen05",
      roles = [], pipelines = [], tmemColumns = 32>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 128, 64] keep [1, 2] : !tile.view<[N, 128, 64], f32> -> !tile.tile<128x64xf32>
  %u = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 128, 64], f32> -> !tile.tile<64x64xf32>
  // expected-error @+1 {{needs 64 tensor-memory columns for the accumulators of the kernel's tcgen05 products, more than the 32 the schedule allows; use smaller tiles}}
  %p = tile.dot %t, %u : !tile.tile<128x64xf32>, !tile.tile<64x64xf32> -> !tile.tile<128x64xf32>
  tile.store %p, %x[%n, %c0, %c0] window [1, 128, 64] keep [1, 2] : !tile.tile<128x64xf32>, !tile.view<[N, 128, 64], f32>
  tile.return
}

// -----

// tcgen05 reads its result back on whole warpgroups.
tile.kernel @tcgen05_warps(%N: index, %x: !tile.view<[N, 16, 16], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_100a", params = {}, grid = ["n"], warps = 2, mma = "tcgen05",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.view<[N, 16, 16], f32> -> !tile.tile<16x16xf32>
  // expected-error @+1 {{under 'mma: tcgen05' reads its result from tensor memory on whole warpgroups (each warp of one reaches a quarter of the lanes), but the role has 2 warps}}
  %p = tile.dot %t, %t : !tile.tile<16x16xf32>, !tile.tile<16x16xf32> -> !tile.tile<16x16xf32>
  tile.store %p, %x[%n, %c0, %c0] window [1, 16, 16] keep [1, 2] : !tile.tile<16x16xf32>, !tile.view<[N, 16, 16], f32>
  tile.return
}

// -----

// A product frees the ring stages it reads in place once per copy. Here the
// copy (outside the loop) runs once per grid point of a persistent CTA and
// the product once per step: no place frees the stage exactly once.
tile.kernel @in_place_outer(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                            %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "wgmma",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["a"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["a"], depth = 1, copy = "tma">],
      persistent = 1>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "a"} : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  scf.for %i = %c0 to %c4 step %c1 {
    %b = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
    // expected-error @+1 {{reads the tile of pipeline 'ring' where it lands from a loop its load is outside of, and the ring refills it (a loop around both, or `persistent`): load it in the product's loop}}
    %p = tile.dot %a, %b : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
    tile.store %p, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "st"} : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  }
  tile.return
}

// -----

// The same, with a product in flight before it: the lowering asks whether
// the dot can issue beside that one (it cannot), and reports the error once,
// where the dot lowers.
tile.kernel @in_place_outer_pending(%N: index, %x: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                            %y: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "wgmma",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["a", "c", "d"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["st", "st2"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["a"], depth = 1, copy = "tma">,
                   #tile.pipeline<name = "ring_c", buffers = ["c"], depth = 2, copy = "tma">,
                   #tile.pipeline<name = "ring_d", buffers = ["d"], depth = 2, copy = "tma">],
      persistent = 1>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "a"} : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
  scf.for %i = %c0 to %c4 step %c1 {
    %c = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "c"} : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
    %d = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "d"} : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
    %dt = tile.transpose %d [1, 0] : !tile.tile<64x64xbf16> -> !tile.tile<64x64xbf16>
    %q = tile.dot %c, %dt : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
    %b = tile.load %x[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : !tile.view<[N, 64, 64], bf16> -> !tile.tile<64x64xbf16>
    // expected-error @+1 {{reads the tile of pipeline 'ring' where it lands from a loop its load is outside of, and the ring refills it (a loop around both, or `persistent`): load it in the product's loop}}
    %p = tile.dot %a, %b : !tile.tile<64x64xbf16>, !tile.tile<64x64xbf16> -> !tile.tile<64x64xf32>
    tile.store %p, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "st"} : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
    tile.store %q, %y[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "st2"} : !tile.tile<64x64xf32>, !tile.view<[N, 64, 64], f32>
  }
  tile.return
}

// -----

// A pipeline's buffers are copied a stage at a time, one of each: loads in
// different blocks cannot share its barriers.
tile.kernel @ring_group_blocks(%N: index, %x: !tile.view<[N, 8, 64], f32> {tile.access = "in"},
                               %y: !tile.view<[N, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 8, mma = "none",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["t", "u"]>,
               #tile.role<name = "compute", firstWarp = 4, numWarps = 4, regs = 232, ops = ["s", "st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["t", "u"], depth = 2, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 8, 64], f32> -> !tile.tile<8x64xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %t) -> (!tile.tile<8x64xf32>) {
    // expected-error @+1 {{is in pipeline 'ring' with 't', but not in the same block}}
    %u = tile.load %x[%i, %c0, %c0] window [1, 8, 64] keep [1, 2] {tile.id = "u"} : !tile.view<[N, 8, 64], f32> -> !tile.tile<8x64xf32>
    %b = tile.add %a, %u : !tile.tile<8x64xf32>
    scf.yield %b : !tile.tile<8x64xf32>
  }
  %s = tile.reduce sum %r axis 0 {tile.id = "s"} : !tile.tile<8x64xf32> -> !tile.tile<64xf32>
  tile.store %s, %y[%n, %c0] window [1, 64] keep [1] {tile.id = "st"} : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}

// -----

// A role that copies a pipeline and reads it too waits, at the first
// buffer it reads, for all of the stage's bytes: the copies after that
// wait never go out.
tile.kernel @ring_group_self(%N: index, %x: !tile.view<[N, 8, 64], f32> {tile.access = "in"},
                             %z: !tile.view<[N, 8, 64], f32> {tile.access = "in"},
                             %y: !tile.view<[N, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 4, mma = "none",
      roles = [], pipelines = [#tile.pipeline<name = "ring", buffers = ["t", "u"], depth = 2, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 8, 64], f32> -> !tile.tile<8x64xf32>
  // expected-error @+1 {{is in pipeline 'ring', which the kernel's one role both copies and reads: it waits for the stage at 't', before it issues this copy, and would wait forever}}
  %u = tile.load %z[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] {tile.id = "u"} : !tile.view<[N, 8, 64], f32> -> !tile.tile<8x64xf32>
  %tu = tile.add %t, %u : !tile.tile<8x64xf32>
  %s = tile.reduce sum %tu axis 0 {tile.id = "s"} : !tile.tile<8x64xf32> -> !tile.tile<64xf32>
  tile.store %s, %y[%n, %c0] window [1, 64] keep [1] {tile.id = "st"} : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}

// -----

// One role copies a pipeline's stages: a buffer another role issues cannot
// share its barriers.
tile.kernel @ring_group_roles(%N: index, %x: !tile.view<[N, 8, 64], f32> {tile.access = "in"},
                              %z: !tile.view<[N, 8, 64], f32> {tile.access = "in"},
                              %y: !tile.view<[N, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 12, mma = "none",
      roles = [#tile.role<name = "producer", firstWarp = 0, numWarps = 4, regs = 40, ops = ["t"]>,
               #tile.role<name = "other", firstWarp = 4, numWarps = 4, regs = 40, ops = ["u"]>,
               #tile.role<name = "compute", firstWarp = 8, numWarps = 4, regs = 232, ops = ["s", "st"]>],
      pipelines = [#tile.pipeline<name = "ring", buffers = ["t", "u"], depth = 2, copy = "tma">]>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 8, 64], f32> -> !tile.tile<8x64xf32>
  // expected-error @+1 {{is in pipeline 'ring' with 't', but another role issues it: one role copies a pipeline's stages}}
  %u = tile.load %z[%n, %c0, %c0] window [1, 8, 64] keep [1, 2] {tile.id = "u"} : !tile.view<[N, 8, 64], f32> -> !tile.tile<8x64xf32>
  %tu = tile.add %t, %u : !tile.tile<8x64xf32>
  %s = tile.reduce sum %tu axis 0 {tile.id = "s"} : !tile.tile<8x64xf32> -> !tile.tile<64xf32>
  tile.store %s, %y[%n, %c0] window [1, 64] keep [1] {tile.id = "st"} : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}
