// RUN: kiln-opt %s --expand-f8e4m3 | FileCheck %s

// Widening: the byte's exponent and mantissa moved into f32's fields with
// the bias 7 -> 127 (120 << 23 = 1006632960), subnormals as m * 2^-9, the
// NaN code as a quiet NaN (2143289344), the sign ORed back.
// CHECK-LABEL: func.func @widen
// CHECK-NOT: arith.extf %{{.*}} : f8E4M3FN
// CHECK: %[[B:.*]] = arith.bitcast %arg0 : f8E4M3FN to i8
// CHECK: arith.extui %[[B]] : i8 to i32
// CHECK: arith.addi %{{.*}}, %c1006632960_i32 : i32
// CHECK: arith.uitofp %{{.*}} : i32 to f32
// CHECK: arith.mulf %{{.*}}, %cst : f32
// CHECK: arith.select
// CHECK: arith.select %{{.*}}, %c2143289344_i32, %{{.*}} : i32
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// f64 through f32 (exact).
// CHECK: %[[W:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK-NEXT: arith.extf %[[W]] : f32 to f64
func.func @widen(%x: f8E4M3FN) -> (f32, f64) {
  %w = arith.extf %x : f8E4M3FN to f32
  %d = arith.extf %x : f8E4M3FN to f64
  return %w, %d : f32, f64
}

// Narrowing: round the mantissa to 3 bits to nearest even (0x7ffff plus
// the kept bit's parity), rebias (120 << 3 = 960), saturate at 0x7e (448);
// below 2^-6 (0x3c800000) the subnormal code is |x| 2^9 rounded by adding
// 2^23; NaN (above 0x7f800000) to 0x7f.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: arith.truncf %{{.*}} to f8E4M3FN
// CHECK: arith.addi %{{.*}}, %c524287_i32 : i32
// CHECK: arith.addi %{{.*}}, %c-960_i32 : i32
// CHECK: arith.minui %{{.*}}, %c126_i32 : i32
// CHECK: arith.cmpi ult, %{{.*}}, %c1015021568_i32 : i32
// CHECK: arith.cmpi ugt, %{{.*}}, %c2139095040_i32 : i32
// CHECK: %[[T:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK: arith.bitcast %[[T]] : i8 to f8E4M3FN
// Vectors the same way, with splat constants; f16 sources widen to f32 first.
// CHECK: arith.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: arith.constant dense<126> : vector<4xi32>
// CHECK: arith.minui %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: arith.bitcast %{{.*}} : vector<4xi8> to vector<4xf8E4M3FN>
// CHECK: arith.extf %{{.*}} : f16 to f32
func.func @narrow(%x: f32, %v: vector<4xf32>, %h: f16) -> (f8E4M3FN, vector<4xf8E4M3FN>, f8E4M3FN) {
  %n = arith.truncf %x : f32 to f8E4M3FN
  %m = arith.truncf %v : vector<4xf32> to vector<4xf8E4M3FN>
  %k = arith.truncf %h : f16 to f8E4M3FN
  return %n, %m, %k : f8E4M3FN, vector<4xf8E4M3FN>, f8E4M3FN
}
