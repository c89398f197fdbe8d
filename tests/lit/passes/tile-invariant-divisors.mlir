// RUN: kiln-opt %s --tile-narrow-index-division --tile-invariant-divisors | FileCheck %s

// A 32-bit division whose divisor is built from dims multiplies by the
// launcher's multiplier: one trailing i64 argument per distinct divisor,
// listed in kiln.divisors in the grid's expression form. HV / H, which only
// fed the divisor of hv / (HV / H), goes away with it; a remainder keeps its
// divisor for x - q * d; constant, grid-coordinate and 64-bit divisions stay.
// CHECK-LABEL: tile.kernel @gva
// CHECK-SAME: %[[B:[^:]*]]: index, %[[H:[^:]*]]: index, %[[HV:[^:]*]]: index
// CHECK-SAME: %[[DH:[^:]*]]: i64 {tile.name = "divisor H"}
// CHECK-SAME: %[[DG:[^:]*]]: i64 {tile.name = "divisor HV / H"}
// CHECK-SAME: kiln.divisors = ["H", ["div", "HV", "H"]]
// CHECK: %[[IDS:.*]]:2 = tile.program_ids
// CHECK-NOT: arith.divui %{{.*}}, %{{.*}} : i32
// The GVA head: hv * m >> s.
// CHECK: %[[HVID:.*]] = arith.index_castui %[[IDS]]#1 : index to i32
// CHECK: %[[M32:.*]] = arith.trunci %[[DG]] : i64 to i32
// CHECK: %[[M:.*]] = arith.extui %[[M32]] : i32 to i64
// CHECK: %[[S:.*]] = arith.shrui %[[DG]], %c32{{.*}} : i64
// CHECK: %[[X:.*]] = arith.extui %[[HVID]] : i32 to i64
// CHECK: %[[P:.*]] = arith.muli %[[X]], %[[M]] : i64
// CHECK: %[[Q64:.*]] = arith.shrui %[[P]], %[[S]] : i64
// CHECK: %[[Q:.*]] = arith.trunci %[[Q64]] : i64 to i32
// CHECK: arith.index_castui %[[Q]] : i32 to index
// A remainder by H: n - (n / H) * H.
// CHECK: %[[N:.*]] = arith.index_castui %[[IDS]]#0 : index to i32
// CHECK: %[[H32:.*]] = arith.index_castui %[[H]] : index to i32
// CHECK: arith.trunci %[[DH]] : i64 to i32
// CHECK: %[[RQ:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: %[[RQH:.*]] = arith.muli %[[RQ]], %[[H32]] : i32
// CHECK: arith.subi %[[N]], %[[RQH]] : i32
// What stays: by a constant, by a grid coordinate, and a 64-bit quotient.
// CHECK: arith.remui %{{.*}}, %{{.*}} : i32
// CHECK: arith.divui %{{.*}}, %{{.*}} : i32
// CHECK: arith.divsi %{{.*}}, %[[H]] : index
// CHECK: tile.return
tile.kernel @gva(%B: index, %H: index, %HV: index, %x: !tile.view<[B], i64> {tile.access = "in"})
    attributes {dim_names = ["B", "H", "HV"]} {
  %c4 = arith.constant 4 : index
  %ids:2 = tile.program_ids ["n", "hv"](%B, %HV) : index, index
  %groups = arith.divsi %HV, %H : index
  %h = arith.divsi %ids#1, %groups : index
  %r = arith.remsi %ids#0, %H : index
  %bytes = arith.remsi %ids#0, %c4 : index
  %byCoord = arith.divsi %H, %ids#0 : index
  %sum = arith.addi %B, %HV : index
  %big = arith.divsi %sum, %H : index
  %u0 = tile.load %x[%h] window [1] keep [] : <[B], i64> -> <i64>
  %u1 = tile.load %x[%r] window [1] keep [] : <[B], i64> -> <i64>
  %u2 = tile.load %x[%bytes] window [1] keep [] : <[B], i64> -> <i64>
  %u3 = tile.load %x[%byCoord] window [1] keep [] : <[B], i64> -> <i64>
  %u4 = tile.load %x[%big] window [1] keep [] : <[B], i64> -> <i64>
  tile.return
}
