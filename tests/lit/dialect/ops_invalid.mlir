// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{needs exactly one tile.program_ids, found 0}}
tile.kernel @no_grid(%N: index) attributes {dim_names = ["N"]} {
  tile.return
}

// -----

// expected-error @+1 {{needs tile.access}}
tile.kernel @no_access(%N: index, %x: !tile.view<[N], f32>) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  tile.return
}

// -----

// expected-error @+1 {{uses dim 'M' that is not a runtime dim of the kernel}}
tile.kernel @unknown_dim(%N: index, %x: !tile.view<[M], f32> {tile.access = "in"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  tile.return
}

// -----

tile.kernel @bad_window(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "in"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{window extent 128 exceeds dim 1 of size 64}}
  %t = tile.load %x[%i, %c0] window [1, 128] keep [1] : !tile.view<[N, 64], f32> -> !tile.tile<128xf32>
  tile.return
}

// -----

tile.kernel @bad_keep(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "in"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{dropped dim 0 must have window extent 1}}
  %t = tile.load %x[%i, %c0] window [2, 64] keep [1] : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  tile.return
}

// -----

tile.kernel @bad_elem(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "in"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{tile element type 'bf16' differs from view element type 'f32'}}
  %t = tile.load %x[%i, %c0] window [1, 64] keep [1] : !tile.view<[N, 64], f32> -> !tile.tile<64xbf16>
  tile.return
}

// -----

func.func @dot_shapes(%a: !tile.tile<4x8xbf16>, %b: !tile.tile<4x8xbf16>) {
  // expected-error @+1 {{contracting dims differ: 8 vs 4}}
  %c = tile.dot %a, %b : !tile.tile<4x8xbf16>, !tile.tile<4x8xbf16> -> !tile.tile<4x8xf32>
  return
}

// -----

func.func @dot_result(%a: !tile.tile<4x8xbf16>, %b: !tile.tile<8x4xbf16>) {
  // expected-error @+1 {{result must be 4x4xf32}}
  %c = tile.dot %a, %b : !tile.tile<4x8xbf16>, !tile.tile<8x4xbf16> -> !tile.tile<4x4xbf16>
  return
}

// -----

func.func @reduce_axis(%a: !tile.tile<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %c = tile.reduce sum %a axis 2 : !tile.tile<4x8xf32> -> !tile.tile<4xf32>
  return
}

// -----

func.func @reduce_shape(%a: !tile.tile<4x8xf32>) {
  // expected-error @+1 {{result must be the input without dim 1}}
  %c = tile.reduce sum %a axis 1 : !tile.tile<4x8xf32> -> !tile.tile<8xf32>
  return
}

// -----

func.func @broadcast(%a: !tile.tile<4xf32>) {
  // expected-error @+1 {{dim 0 of size 4 cannot broadcast to 8}}
  %c = tile.broadcast %a : !tile.tile<4xf32> -> !tile.tile<8xf32>
  return
}

// -----

func.func @reshape(%a: !tile.tile<4xf32>) {
  // expected-error @+1 {{cannot change the number of elements (4 vs 8)}}
  %c = tile.reshape %a : !tile.tile<4xf32> -> !tile.tile<2x4xf32>
  return
}

// -----

func.func @slice_outside(%a: !tile.tile<4x8xf32>) {
  // expected-error @+1 {{window [6, 10) of dim 1 lies outside its 8 elements}}
  %c = tile.slice %a [0, 6] : !tile.tile<4x8xf32> -> !tile.tile<4x4xf32>
  return
}

// -----

func.func @slice_offsets(%a: !tile.tile<4x8xf32>) {
  // expected-error @+1 {{needs one offset per dim}}
  %c = tile.slice %a [0] : !tile.tile<4x8xf32> -> !tile.tile<4x4xf32>
  return
}

// -----

func.func @transpose(%a: !tile.tile<4x8xf32>) {
  // expected-error @+1 {{is not a permutation}}
  %c = tile.transpose %a [0, 0] : !tile.tile<4x8xf32> -> !tile.tile<4x4xf32>
  return
}

// -----

func.func @exp_int(%a: !tile.tile<4xi32>) {
  // expected-error @+1 {{needs a float tile}}
  %c = tile.exp %a : !tile.tile<4xi32>
  return
}

// -----

func.func @iota(%a: index) {
  // expected-error @+1 {{result must be a 1-D integer tile}}
  %c = tile.iota : !tile.tile<4x4xi32>
  return
}

// -----

// expected-error @+1 {{tile dims must be positive, got 0}}
func.func @zero_dim(%a: !tile.tile<0xf32>) {
  return
}

// -----

tile.kernel @dups(%N: index) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %a = tile.constant 1.0 : f32 {tile.id = "x"} : !tile.tile<4xf32>
  // expected-error @+1 {{reuses op id 'x'}}
  %b = tile.constant 2.0 : f32 {tile.id = "x"} : !tile.tile<4xf32>
  tile.return
}

// -----

tile.kernel @limits_unmasked(%N: index, %x: !tile.view<[N, 8], f32> {tile.access = "in"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{with limits must be masked}}
  %t = tile.load %x[%i, %c0] limits [%N, %c8] window [1, 8] keep [1] : !tile.view<[N, 8], f32> -> !tile.tile<8xf32>
  tile.return
}

// -----

tile.kernel @limits_count(%N: index, %x: !tile.view<[N, 8], f32> {tile.access = "in"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{needs no limits or one per view dim (2)}}
  %t = tile.load %x[%i, %c0] limits [%N] window [1, 8] keep [1] masked : !tile.view<[N, 8], f32> -> !tile.tile<8xf32>
  tile.return
}

// -----

tile.kernel @floors_count(%N: index, %x: !tile.view<[N, 8], f32> {tile.access = "in"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{needs no floors or one per view dim (2)}}
  %t = tile.load %x[%i, %c0] floors [%c0] window [1, 8] keep [1] masked : !tile.view<[N, 8], f32> -> !tile.tile<8xf32>
  tile.return
}

// -----

tile.op @scratch_sizes(%T: index) attributes {dim_names = ["T"]} {
  // expected-error @+1 {{needs one size per runtime dim of its type (1), got 0}}
  %s = tile.scratch "s" () : !tile.view<[T, 8], f32>
  tile.end
}

// -----

tile.op @launch_unknown(%T: index) attributes {dim_names = ["T"]} {
  // expected-error @+1 {{'missing' is not a tile.kernel of this module}}
  tile.launch @missing(%T) : index
  tile.end
}

// -----

tile.kernel @k(%N: index, %x: !tile.view<[N], f32> {tile.access = "out"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  tile.return
}
tile.op @launch_types(%N: index, %y: !tile.view<[N], bf16> {tile.access = "out"}) attributes {dim_names = ["N"]} {
  // expected-error @+1 {{argument 1 is '!tile.view<[N], bf16>' but kernel 'k' takes '!tile.view<[N], f32>'}}
  tile.launch @k(%N, %y) : index, !tile.view<[N], bf16>
  tile.end
}

// -----

tile.kernel @k2(%N: index, %x: !tile.view<[N], f32> {tile.access = "out"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  tile.return
}
tile.op @launch_count(%N: index) attributes {dim_names = ["N"]} {
  // expected-error @+1 {{kernel 'k2' takes 2 arguments (its dims, then its parameters), got 1}}
  tile.launch @k2(%N) : index
  tile.end
}

// -----

tile.kernel @lanes_first(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "in"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{layout lanes_first needs one entry per parent dim (2), got 1}}
  %t = tile.load %x[%i, %c0] window [1, 64] keep [1] {tile.layout = #tile.layout<size = [1, 2], lanes = [1, 32], warps = [1, 1], dims = [1], lanes_first = [1]>} : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  tile.return
}

// -----

tile.kernel @lanes_first_bits(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "in"}) attributes {dim_names = ["N"]} {
  %i = tile.program_ids ["i"] (%N) : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{layout lanes_first entries must be 0 or 1}}
  %t = tile.load %x[%i, %c0] window [1, 64] keep [1] {tile.layout = #tile.layout<size = [1, 2], lanes = [1, 32], warps = [1, 1], dims = [1], lanes_first = [0, 2]>} : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
  tile.return
}
