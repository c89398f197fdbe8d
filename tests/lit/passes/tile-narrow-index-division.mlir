// RUN: kiln-opt %s --tile-narrow-index-division | FileCheck %s

// Quotients and remainders of dims, grid coordinates, small constants and
// quotients of those divide in 32 bits; anything else stays 64-bit.
// CHECK-LABEL: tile.kernel @gva
// CHECK: %[[IDS:.*]]:2 = tile.program_ids
// CHECK: %[[HV:.*]] = arith.index_castui %arg2 : index to i32
// CHECK: %[[H:.*]] = arith.index_castui %arg1 : index to i32
// CHECK: %[[G32:.*]] = arith.divui %[[HV]], %[[H]] : i32
// CHECK: %[[G:.*]] = arith.index_castui %[[G32]] : i32 to index
// CHECK: %[[ID:.*]] = arith.index_castui %[[IDS]]#1 : index to i32
// CHECK: %[[G2:.*]] = arith.index_castui %[[G]] : index to i32
// CHECK: arith.divui %[[ID]], %[[G2]] : i32
// CHECK: arith.remui %{{.*}}, %{{.*}} : i32
// CHECK: arith.ceildivui %{{.*}}, %{{.*}} : i32
// A sum of dims may pass 2^31, and a loaded value is unknown.
// CHECK: %[[SUM:.*]] = arith.addi
// CHECK: arith.divsi %[[SUM]], %arg1 : index
// CHECK: arith.divsi %{{.*}}, %c4 : index
// A negative constant is not narrowed either.
// CHECK: arith.divsi %arg1, %c-2 : index
tile.kernel @gva(%B: index, %H: index, %HV: index, %x: !tile.view<[B], i64> {tile.access = "in"})
    attributes {dim_names = ["B", "H", "HV"]} {
  %c4 = arith.constant 4 : index
  %cm2 = arith.constant -2 : index
  %ids:2 = tile.program_ids ["n", "hv"](%B, %HV) : index, index
  %groups = arith.divsi %HV, %H : index
  %h = arith.divsi %ids#1, %groups : index
  %r = arith.remsi %ids#0, %c4 : index
  %chunks = arith.ceildivsi %B, %c4 : index
  %sum = arith.addi %B, %HV : index
  %big = arith.divsi %sum, %H : index
  %t = tile.load %x[%ids#0] window [1] keep [] : <[B], i64> -> <i64>
  %ti = tile.to_index %t : <i64>
  %loaded = arith.divsi %ti, %c4 : index
  %neg = arith.divsi %H, %cm2 : index
  tile.return
}
