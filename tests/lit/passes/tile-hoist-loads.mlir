// RUN: kiln-opt %s --tile-hoist-loads --split-input-file | FileCheck %s

// A load rises above the work before it to just below its last operand;
// its address arithmetic rises with it, and loads keep their source order.
// CHECK-LABEL: tile.kernel @early
// CHECK: %[[IDS:.*]]:2 = tile.program_ids
// CHECK-NEXT: %[[Q:.*]] = tile.load %{{.*}}[%[[IDS]]#0, %{{.*}}] {{.*}} {tile.id = "q"}
// CHECK-NEXT: %[[SLOT:.*]] = tile.load {{.*}} {tile.id = "slot"}
// CHECK-NEXT: %[[I:.*]] = tile.to_index %[[SLOT]]
// CHECK-NEXT: tile.load %{{.*}}[%[[I]], %{{.*}}] {{.*}} {tile.id = "S"}
// CHECK-NEXT: tile.mul %[[Q]], %[[Q]]
// CHECK-NEXT: tile.reduce sum
tile.kernel @early(%B: index, %q: !tile.view<[B, 128], f32> {tile.access = "in"},
                   %slots: !tile.view<[B], i32> {tile.access = "in"},
                   %state: !tile.view<[B, 128], f32> {tile.access = "in"},
                   %o: !tile.view<[B], f32> {tile.access = "out"}) attributes {dim_names = ["B"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ids:2 = tile.program_ids ["n", "j"](%B, %c1) : index, index
  %q0 = tile.load %q[%ids#0, %c0] window [1, 128] keep [1] {tile.id = "q"} : <[B, 128], f32> -> <128xf32>
  %sq = tile.mul %q0, %q0 : <128xf32>
  %s = tile.reduce sum %sq axis 0 : <128xf32> -> <f32>
  %slot = tile.load %slots[%ids#0] window [1] keep [] {tile.id = "slot"} : <[B], i32> -> <i32>
  %i = tile.to_index %slot : <i32>
  %S = tile.load %state[%i, %c0] window [1, 128] keep [1] {tile.id = "S"} : <[B, 128], f32> -> <128xf32>
  %p = tile.mul %S, %q0 : <128xf32>
  %r = tile.reduce sum %p axis 0 : <128xf32> -> <f32>
  %t = tile.add %r, %s : <f32>
  tile.store %t, %o[%ids#0] window [1] keep [] : <f32>, <[B], f32>
  tile.return
}

// -----

// A store into the same view stops a load, one into another view does not,
// nor does a loop that only reads it; a loop that stores into it does.
// CHECK-LABEL: tile.kernel @stores
// CHECK: tile.store {{.*}} {tile.id = "store.x"}
// CHECK-NEXT: tile.load {{.*}} {tile.id = "x1"}
// CHECK-NEXT: tile.store {{.*}} {tile.id = "store.y"}
// CHECK: scf.for
// CHECK: tile.store {{.*}} {tile.id = "store.x.2"}
// CHECK: }
// CHECK-NEXT: tile.load {{.*}} {tile.id = "x2"}
tile.kernel @stores(%N: index, %x: !tile.view<[N, 4], f32> {tile.access = "inout"},
                    %y: !tile.view<[N, 4], f32> {tile.access = "out"}) attributes {dim_names = ["N"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %i = tile.program_ids ["i"](%N) : index
  %z = tile.constant 0.0 : f32 : <4xf32>
  tile.store %z, %x[%i, %c0] window [1, 4] keep [1] {tile.id = "store.x"} : <4xf32>, <[N, 4], f32>
  tile.store %z, %y[%i, %c0] window [1, 4] keep [1] {tile.id = "store.y"} : <4xf32>, <[N, 4], f32>
  %a = tile.load %x[%i, %c0] window [1, 4] keep [1] {tile.id = "x1"} : <[N, 4], f32> -> <4xf32>
  scf.for %j = %c0 to %c4 step %c1 {
    tile.store %a, %x[%i, %c0] window [1, 4] keep [1] {tile.id = "store.x.2"} : <4xf32>, <[N, 4], f32>
  }
  %e = tile.exp %a : <4xf32>
  %b = tile.load %x[%i, %c0] window [1, 4] keep [1] {tile.id = "x2"} : <[N, 4], f32> -> <4xf32>
  %s = tile.add %b, %e : <4xf32>
  tile.store %s, %y[%i, %c0] window [1, 4] keep [1] : <4xf32>, <[N, 4], f32>
  tile.return
}

// -----

// A load under scf.if rises to the top of its branch, never out of it: its
// address may be valid only when the condition holds.
// CHECK-LABEL: tile.kernel @guarded
// CHECK: scf.if
// CHECK-NEXT: tile.to_index
// CHECK-NEXT: tile.load {{.*}} {tile.id = "S"}
// CHECK-NEXT: tile.constant 1.0
tile.kernel @guarded(%N: index, %slots: !tile.view<[N], i32> {tile.access = "in"},
                     %state: !tile.view<[N, 4], f32> {tile.access = "inout"}) attributes {dim_names = ["N"]} {
  %c0 = arith.constant 0 : index
  %i = tile.program_ids ["i"](%N) : index
  %slot = tile.load %slots[%i] window [1] keep [] : <[N], i32> -> <i32>
  %zero = tile.constant 0 : i32 : <i32>
  %ok = tile.cmp ge, %slot, %zero : <i32> -> <i1>
  %okIndex = tile.to_index %ok : <i1>
  %take = arith.cmpi ne, %okIndex, %c0 : index
  scf.if %take {
    %one = tile.constant 1.0 : f32 : <4xf32>
    %e = tile.exp %one : <4xf32>
    %s = tile.to_index %slot : <i32>
    %S = tile.load %state[%s, %c0] window [1, 4] keep [1] {tile.id = "S"} : <[N, 4], f32> -> <4xf32>
    %u = tile.add %S, %e : <4xf32>
    tile.store %u, %state[%s, %c0] window [1, 4] keep [1] : <4xf32>, <[N, 4], f32>
  }
  tile.return
}

// -----

// A pipeline's load (its stage filled ahead by its copies) stays below a
// product before it: its wait then runs while the tensor cores multiply.
// A plain load rises above it.
// CHECK-LABEL: tile.kernel @ring_below_dot
// CHECK: tile.load {{.*}} {tile.id = "x"}
// CHECK-NEXT: tile.load {{.*}} {tile.id = "g"}
// CHECK-NEXT: tile.dot
// CHECK-NEXT: tile.load {{.*}} {tile.id = "r"
tile.kernel @ring_below_dot(%N: index, %a: !tile.view<[N, 64, 64], bf16> {tile.access = "in"},
                            %g: !tile.view<[N, 64], f32> {tile.access = "in"},
                            %r: !tile.view<[N, 64], f32> {tile.access = "in"},
                            %o: !tile.view<[N, 64, 64], f32> {tile.access = "out"}) attributes {dim_names = ["N"]} {
  %c0 = arith.constant 0 : index
  %n = tile.program_ids ["n"](%N) : index
  %x = tile.load %a[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] {tile.id = "x"} : <[N, 64, 64], bf16> -> <64x64xbf16>
  %d = tile.dot %x, %x : <64x64xbf16>, <64x64xbf16> -> <64x64xf32>
  %gv = tile.load %g[%n, %c0] window [1, 64] keep [1] {tile.id = "g"} : <[N, 64], f32> -> <64xf32>
  %rv = tile.load %r[%n, %c0] window [1, 64] keep [1] {tile.id = "r", tile.pipeline = "ring"} : <[N, 64], f32> -> <64xf32>
  %rb = tile.broadcast %rv : <64xf32> -> <64x64xf32>
  %gb = tile.broadcast %gv : <64xf32> -> <64x64xf32>
  %s = tile.add %d, %rb : <64x64xf32>
  %t = tile.add %s, %gb : <64x64xf32>
  tile.store %t, %o[%n, %c0, %c0] window [1, 64, 64] keep [1, 2] : <64x64xf32>, <[N, 64, 64], f32>
  tile.return
}
