// RUN: kiln-opt %s --tile-assign-layouts --split-input-file --verify-diagnostics

// A tile's layout spans the warps of the role making it; roles computing
// on different warp counts cannot both make one (role b's store needs t).
tile.kernel @roles(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 6, mma = "none",
      roles = [#tile.role<name = "a", firstWarp = 0, numWarps = 4, regs = 0, ops = ["t"]>,
               #tile.role<name = "b", firstWarp = 4, numWarps = 2, regs = 0, ops = ["store.x"]>],
      pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{makes a tile in roles 'a' (4 warps) and 'b' (2); a tile's layout spans one warp count: hand it over through a `copy: shared` ring, or give the roles the same warps}}
  %t = tile.load %x[%n, %c0] window [1, 64] keep [1] {tile.id = "t"} : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  tile.store %t, %x[%n, %c0] window [1, 64] keep [1] {tile.id = "store.x"} : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
  tile.return
}


// -----

// A schedule's layout must cover its tile evenly: 8 lanes down a 4-row tile do not.
// expected-error @+1 {{the layout of 't' (#tile.layout<size = [1, 4], lanes = [8, 4], warps = [1, 1], dims = [0, 1]>) cannot hold its tile '!tile.tile<4x64xf32>': tile extent 4 along dim 0 is not a multiple of the layout's span 8 (size x lanes x warps)}}
tile.kernel @span(%N: index, %x: !tile.view<[N, 4, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 1, mma = "none",
      roles = [], pipelines = [], layouts = {t = {lanes = array<i64: 8, 4>}}>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{the tile is made here}}
  %t = tile.load %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 4, 64], f32> -> !tile.tile<4x64xf32>
  %u = tile.add %t, %t {tile.id = "u"} : !tile.tile<4x64xf32>
  tile.store %u, %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] : !tile.tile<4x64xf32>, !tile.view<[N, 4, 64], f32>
  tile.return
}

// -----

// Lanes beyond a warp.
// expected-error @+1 {{the layout of 't' takes 64 lanes, which do not divide a warp of 32}}
tile.kernel @lanes(%N: index, %x: !tile.view<[N, 4, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 1, mma = "none",
      roles = [], pipelines = [], layouts = {t = {lanes = array<i64: 4, 16>}}>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 4, 64], f32> -> !tile.tile<4x64xf32>
  %u = tile.add %t, %t {tile.id = "u"} : !tile.tile<4x64xf32>
  tile.store %u, %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] : !tile.tile<4x64xf32>, !tile.view<[N, 4, 64], f32>
  tile.return
}

// -----

// More warps than the role computing the tile has.
// expected-error @+1 {{the layout of 't' spreads its tile over 4 warps, but the role computing it has 2}}
tile.kernel @warps(%N: index, %x: !tile.view<[N, 4, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 2, mma = "none",
      roles = [], pipelines = [], layouts = {t = {lanes = array<i64: 1, 32>, warps = array<i64: 4, 1>}}>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 4, 64], f32> -> !tile.tile<4x64xf32>
  %u = tile.add %t, %t {tile.id = "u"} : !tile.tile<4x64xf32>
  tile.store %u, %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] : !tile.tile<4x64xf32>, !tile.view<[N, 4, 64], f32>
  tile.return
}

// -----

// One entry per tile dim.
// expected-error @+1 {{the layout of 't' needs lanes, and positive lanes, size and warps with one entry per dim of its tile '!tile.tile<4x64xf32>'}}
tile.kernel @rank(%N: index, %x: !tile.view<[N, 4, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 1, mma = "none",
      roles = [], pipelines = [], layouts = {t = {lanes = array<i64: 32>}}>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 4, 64], f32> -> !tile.tile<4x64xf32>
  %u = tile.add %t, %t {tile.id = "u"} : !tile.tile<4x64xf32>
  tile.store %u, %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] : !tile.tile<4x64xf32>, !tile.view<[N, 4, 64], f32>
  tile.return
}

// -----

// Only a tile has a layout.
// expected-error @+1 {{layouts names 'c', but no op of kernel 'nottile' makes a tile of rank 1 or more by that id}}
tile.kernel @nottile(%N: index, %x: !tile.view<[N, 4, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 1, mma = "none",
      roles = [], pipelines = [], layouts = {c = {lanes = array<i64: 32>}}>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant {tile.id = "c"} 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 4, 64], f32> -> !tile.tile<4x64xf32>
  %u = tile.add %t, %t {tile.id = "u"} : !tile.tile<4x64xf32>
  tile.store %u, %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] : !tile.tile<4x64xf32>, !tile.view<[N, 4, 64], f32>
  tile.return
}

// -----

// Tiles joined by elementwise ops share one layout: two different ones for them is an error.
// expected-error @+1 {{'u' and 't' are one tile to the layouts (elementwise ops join them), but the schedule gives them different layouts}}
tile.kernel @joined(%N: index, %x: !tile.view<[N, 4, 64], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 1, mma = "none",
      roles = [], pipelines = [], layouts = {t = {lanes = array<i64: 2, 16>}, u = {lanes = array<i64: 4, 8>}}>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] {tile.id = "t"} : !tile.view<[N, 4, 64], f32> -> !tile.tile<4x64xf32>
  %u = tile.add %t, %t {tile.id = "u"} : !tile.tile<4x64xf32>
  tile.store %u, %x[%n, %c0, %c0] window [1, 4, 64] keep [1, 2] : !tile.tile<4x64xf32>, !tile.view<[N, 4, 64], f32>
  tile.return
}

// -----

// A tile no GPU thread can hold: one warp over 1048576 elements is 32768 a
// thread (the lowering would unroll that many values in each).
tile.kernel @huge(%N: index, %x: !tile.view<[N, 1048576], f32> {tile.access = "inout"}) attributes {dim_names = ["N"],
    schedule = #tile.schedule<target = "sm_90a", params = {}, grid = ["n"], warps = 1, mma = "none",
      roles = [], pipelines = []>} {
  %n = tile.program_ids ["n"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{this tile of shape [1048576] puts 32768 elements on each thread; a GPU thread holds at most 4096 of one tile (more warps, or smaller tiles)}}
  %t = tile.load %x[%n, %c0] window [1, 1048576] keep [1] {tile.id = "t"} : !tile.view<[N, 1048576], f32> -> !tile.tile<1048576xf32>
  tile.store %t, %x[%n, %c0] window [1, 1048576] keep [1] : !tile.tile<1048576xf32>, !tile.view<[N, 1048576], f32>
  tile.return
}
