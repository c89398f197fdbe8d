//===- TileOps.td - tile dialect operations ----------------*- tablegen -*-===//
//
// Every op may carry a discardable `tile.id` string: the stable op ID that
// schedules use to name it (roles own ops, pipelines carry loads).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TILE_OPS
#define KILN_TILE_OPS

include "dsl/TileDialect.td"
include "dsl/TileTypes.td"
include "dsl/TileAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tile_CmpPredicate : I32EnumAttr<"CmpPredicate", "comparison predicate", [
    I32EnumAttrCase<"lt", 0>, I32EnumAttrCase<"le", 1>, I32EnumAttrCase<"gt", 2>,
    I32EnumAttrCase<"ge", 3>, I32EnumAttrCase<"eq", 4>, I32EnumAttrCase<"ne", 5>]> {
  let cppNamespace = "::kiln::tile";
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>, I32EnumAttrCase<"min", 2>]> {
  let cppNamespace = "::kiln::tile";
}

//===----------------------------------------------------------------------===//
// Kernel structure
//===----------------------------------------------------------------------===//

def Tile_KernelOp : Tile_Op<"kernel", [IsolatedFromAbove, FunctionOpInterface, Symbol]> {
  let summary = "one program instance of a grid";
  let description = [{
    The entry block's arguments are first the runtime dims (`index`, named by
    `dim_names`), then the kernel parameters: views (`!tile.view`, with a
    `tile.access` argument attribute of `in`, `out` or `inout`) and scalars
    (`f32`, `i32`, `i64`). The body computes the grid extents, takes its
    coordinates from the single `tile.program_ids`, and ends in `tile.return`.

    ```mlir
    tile.kernel @copy(%N: index, %x: !tile.view<[N, 64], f32> {tile.access = "in"},
                      %y: !tile.view<[N, 64], f32> {tile.access = "out"})
        attributes {dim_names = ["N"]} {
      %i = tile.program_ids ["i"] (%N) : index
      %c0 = arith.constant 0 : index
      %t = tile.load %x[%i, %c0] window [1, 64] keep [1] : !tile.view<[N, 64], f32> -> !tile.tile<64xf32>
      tile.store %t, %y[%i, %c0] window [1, 64] keep [1] : !tile.tile<64xf32>, !tile.view<[N, 64], f32>
      tile.return
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       StrArrayAttr:$dim_names,
                       OptionalAttr<Tile_ScheduleAttr>:$schedule);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() { return getFunctionType().getResults(); }
    /// `in`, `out` or `inout` for a view parameter, empty for scalars and dims.
    ::llvm::StringRef getAccess(unsigned argIndex);
    /// The single tile.program_ids of the body, or null.
    class ProgramIdsOp getProgramIds();
    /// Every op of the body that has a stable ID (`tile.id`), by that ID.
    ::llvm::StringMap<::mlir::Operation *> getOpsById();
    /// The op a pipeline copies when its buffers name `op`: `op` itself,
    /// or, for a cast of a load (`let S0 = load(...) as f32` names the
    /// cast), that load: the copy brings the stored type, the reader casts.
    static ::mlir::Operation *copiedBy(::mlir::Operation *op);
  }];
}

def Tile_ReturnOp : Tile_Op<"return", [Pure, Terminator, ReturnLike, HasParent<"KernelOp">]> {
  let summary = "end of a kernel body";
  let assemblyFormat = "attr-dict";
}

def Tile_HostOp : Tile_Op<"op", [IsolatedFromAbove, FunctionOpInterface, Symbol]> {
  let summary = "an op made of kernel launches, run by the host";
  let description = [{
    The public entry of an op whose work takes several kernels: the entry
    block's arguments are, as for `tile.kernel`, the runtime dims (`index`,
    named by `dim_names`) and then the parameters. The body allocates scratch
    tensors (`tile.scratch`) and launches kernels of the same module in order
    (`tile.launch`); each launch finishes before the next starts. It never
    lowers to device code: backends read it as a launch plan (the CPU runner
    and the GPU runtime allocate the scratch and launch in order).

    ```mlir
    tile.op @two_pass(%T: index, %x: !tile.view<[T, 64], f32> {tile.access = "in"},
                      %y: !tile.view<[T, 64], f32> {tile.access = "out"})
        attributes {dim_names = ["T"]} {
      %tmp = tile.scratch "tmp" (%T) : !tile.view<[T, 64], f32>
      tile.launch @first(%T, %x, %tmp) : index, !tile.view<[T, 64], f32>, !tile.view<[T, 64], f32>
      tile.launch @second(%T, %tmp, %y) : index, !tile.view<[T, 64], f32>, !tile.view<[T, 64], f32>
      tile.end
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       StrArrayAttr:$dim_names);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() { return getFunctionType().getInputs(); }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() { return getFunctionType().getResults(); }
    /// `in`, `out` or `inout` for a view parameter, empty for scalars and dims.
    ::llvm::StringRef getAccess(unsigned argIndex);
  }];
}

def Tile_EndOp : Tile_Op<"end", [Pure, Terminator, HasParent<"HostOp">]> {
  let summary = "end of an op's launch plan";
  let assemblyFormat = "attr-dict";
}

def Tile_ScratchOp : Tile_Op<"scratch", [HasParent<"HostOp">]> {
  let summary = "a tensor the op allocates for its kernels";
  let description = [{
    A dense row-major tensor that lives for one run of the op, passed from
    kernel to kernel. `sizes` give its runtime dims, one per dynamic dim of
    the result type, in order. Its contents start undefined: a kernel must
    write what a later one reads.
  }];
  let arguments = (ins StrAttr:$name, Variadic<Index>:$sizes);
  let results = (outs Tile_ViewType:$result);
  let assemblyFormat = "$name `(` $sizes `)` attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_LaunchOp : Tile_Op<"launch", [HasParent<"HostOp">,
                                       DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "run every program of a kernel's grid";
  let description = [{
    Launches the `tile.kernel` named `kernel` with exactly its arguments: its
    runtime dims, then its parameters (views of the op or scratch tensors,
    and scalars). View types must equal the kernel's, dim names included.
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<AnyType>:$args);
  let assemblyFormat = "$kernel `(` $args `)` attr-dict `:` type($args)";
}

def Tile_ProgramIdsOp : Tile_Op<"program_ids", [Pure]> {
  let summary = "the coordinates of this program instance in the grid";
  let description = [{
    Takes the grid extents (one per named axis) and returns this instance's
    coordinate along each. The schedule's `grid` orders the axes for launch.
  }];
  let arguments = (ins StrArrayAttr:$names, Variadic<Index>:$extents);
  let results = (outs Variadic<Index>:$ids);
  let assemblyFormat = "$names `(` $extents `)` attr-dict `:` type($ids)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def Tile_LoadOp : Tile_Op<"load", [MemoryEffects<[MemRead]>, AttrSizedOperandSegments]> {
  let summary = "load a tile from a window of a global view";
  let description = [{
    `indices` are the window's start along every dim of the view; `window`
    its extent along every dim; `keep` lists the dims that appear in the
    result (the others must have extent 1 and are dropped). With `masked`,
    elements outside the view read as `other` (0 by default); without it the
    window must lie inside the view. `limits`, when present (one per dim,
    masked loads only), bound the view further: an element whose index along
    dim d is not below `limits[d]` counts as outside; `floors`, likewise,
    bound it from below (an index under `floors[d]` is outside). The language
    uses them for sub-views such as one sequence `q[bos..eos]` of a packed
    batch, with floors only where a window may start before the sub-view.

    ```mlir
    %t = tile.load %q[%i, %h, %c0] limits [%eos, %H, %c128] window [64, 1, 128]
         keep [0, 2] masked : !tile.view<?x?x128xbf16> -> !tile.tile<64x128xbf16>
    ```
  }];
  let arguments = (ins Tile_ViewType:$view, Variadic<Index>:$indices, Variadic<Index>:$floors,
                       Variadic<Index>:$limits, DenseI64ArrayAttr:$window,
                       DenseI64ArrayAttr:$keep, UnitAttr:$masked, OptionalAttr<F64Attr>:$other);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = [{
    $view `[` $indices `]` (`floors` `[` $floors^ `]`)? (`limits` `[` $limits^ `]`)?
    `window` $window `keep` $keep
    (`masked` $masked^)? attr-dict `:` type($view) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [MemoryEffects<[MemWrite]>, AttrSizedOperandSegments]> {
  let summary = "store a tile into a window of a global view";
  let description = [{
    The window, `floors` and `limits` are described as for `tile.load`; with
    `masked`, elements outside the view (or outside the floors and limits)
    are not written.
  }];
  let arguments = (ins Tile_TileType:$value, Tile_ViewType:$view, Variadic<Index>:$indices,
                       Variadic<Index>:$floors, Variadic<Index>:$limits,
                       DenseI64ArrayAttr:$window, DenseI64ArrayAttr:$keep, UnitAttr:$masked);
  let assemblyFormat = [{
    $value `,` $view `[` $indices `]` (`floors` `[` $floors^ `]`)? (`limits` `[` $limits^ `]`)?
    `window` $window `keep` $keep
    (`masked` $masked^)? attr-dict `:` type($value) `,` type($view)
  }];
  let hasVerifier = 1;
}

def Tile_AwaitEarlierOp : Tile_Op<"await_earlier", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait until the launches before this kernel's have finished";
  let description = [{
    A kernel launched early (`early_start: true` in its schedule: CUDA's
    programmatic dependent launch) may start while the launch before it
    still runs. The compiler places this op in such a kernel before its
    first access to a tensor that an earlier launch of its op writes (or
    reads, where this kernel writes it), at the top of the kernel's body, so
    that every thread passes it. On a GPU it is `griddepcontrol.wait`: the
    thread waits until the launches before have completed and their writes
    are visible. Nothing is moved across it. On the CPU, where kernels run
    one after another, it is a no-op.

    ```mlir
    tile.await_earlier
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Tile_AllowLaterOp : Tile_Op<"allow_later", [MemoryEffects<[MemWrite]>]> {
  let summary = "let an early-started next launch begin its programs";
  let description = [{
    Placed at the top of a kernel whose next launch in its op starts early
    (see `tile.await_earlier`): once every program of this kernel has passed
    it, the next launch's programs may be scheduled on the SMs this one
    leaves free. On a GPU it is `griddepcontrol.launch_dependents`; it
    orders no memory (the next kernel waits for this one's completion where
    it reads its results). On the CPU a no-op.

    ```mlir
    tile.allow_later
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Tile_SignalOp : Tile_Op<"signal", [MemoryEffects<[MemWrite]>]> {
  let summary = "publish a flag once the program's stores are visible";
  let description = [{
    Sets the i32 element `view[indices]` to `value` once every store the
    program made before it is visible to every program of every kernel on
    the device (on a GPU: all the CTA's threads meet, then one thread
    releases the value at GPU scope). A kernel launched beside this one
    (`overlap:` in its schedule) `tile.wait`s on the flag before it reads
    what this program wrote.

    ```mlir
    tile.signal %epoch, %ready[%t0, %hv] : !tile.tile<i32>, !tile.view<[T, HV], i32>
    ```
  }];
  let arguments = (ins Tile_TileType:$value, Tile_ViewType:$view, Variadic<Index>:$indices);
  let assemblyFormat = "$value `,` $view `[` $indices `]` attr-dict `:` type($value) `,` type($view)";
  let hasVerifier = 1;
}

def Tile_WaitOp : Tile_Op<"wait", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait until a flag holds a value";
  let description = [{
    Waits until the i32 element `view[indices]` equals `value` (an acquire
    at GPU scope, so the loads after it, copies by TMA included, see what
    the program that signalled it stored). Nothing is moved across it. On
    a GPU the wait gives up with a trap after about ten seconds, so a
    device that does not run the signalling kernel beside this one fails
    instead of hanging; on the CPU, where kernels run one after another,
    it is a no-op.

    ```mlir
    tile.wait %epoch, %ready[%t0, %hv] : !tile.tile<i32>, !tile.view<[T, HV], i32>
    ```
  }];
  let arguments = (ins Tile_TileType:$value, Tile_ViewType:$view, Variadic<Index>:$indices);
  let assemblyFormat = "$value `,` $view `[` $indices `]` attr-dict `:` type($value) `,` type($view)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

def Tile_ConstantOp : Tile_Op<"constant", [Pure]> {
  let summary = "a tile with every element equal to a scalar constant";
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_IotaOp : Tile_Op<"iota", [Pure]> {
  let summary = "the 1-D tile [0, 1, ..., N-1]";
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_SplatOp : Tile_Op<"splat", [Pure]> {
  let summary = "a tile with every element equal to a scalar value";
  let arguments = (ins AnyTypeOf<[I1, F32, F64, I32, I64]>:$input);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_FromIndexOp : Tile_Op<"from_index", [Pure]> {
  let summary = "an index scalar as a rank-0 tile of any numeric type";
  let arguments = (ins Index:$input);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_ToIndexOp : Tile_Op<"to_index", [Pure]> {
  let summary = "a rank-0 integer or i1 tile as an index scalar";
  let arguments = (ins Tile_TileType:$input);
  let results = (outs Index:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Tile_BinaryOp<string mnemonic, string what>
    : Tile_Op<mnemonic, [Pure, AllTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "elementwise " # what;
  let arguments = (ins Tile_TileType:$lhs, Tile_TileType:$rhs);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_AddOp : Tile_BinaryOp<"add", "sum">;
def Tile_SubOp : Tile_BinaryOp<"sub", "difference">;
def Tile_MulOp : Tile_BinaryOp<"mul", "product">;
def Tile_DivOp : Tile_BinaryOp<"div", "quotient (integers round toward zero)">;
def Tile_RemOp : Tile_BinaryOp<"rem", "remainder (sign of the dividend)">;
def Tile_MaxOp : Tile_BinaryOp<"max", "maximum">;
def Tile_MinOp : Tile_BinaryOp<"min", "minimum">;
def Tile_AndOp : Tile_BinaryOp<"and", "logical and of i1 tiles">;
def Tile_OrOp : Tile_BinaryOp<"or", "logical or of i1 tiles">;

class Tile_UnaryOp<string mnemonic, string what>
    : Tile_Op<mnemonic, [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "elementwise " # what;
  let arguments = (ins Tile_TileType:$input);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_NegOp : Tile_UnaryOp<"neg", "negation">;
def Tile_AbsOp : Tile_UnaryOp<"abs", "absolute value">;
def Tile_ExpOp : Tile_UnaryOp<"exp", "e^x (floats)">;
def Tile_LogOp : Tile_UnaryOp<"log", "natural logarithm (floats)">;
def Tile_Log1pOp : Tile_UnaryOp<"log1p", "log(1 + x) (floats)">;
def Tile_SqrtOp : Tile_UnaryOp<"sqrt", "square root (floats)">;
def Tile_RsqrtOp : Tile_UnaryOp<"rsqrt", "1 / sqrt(x) (floats)">;
def Tile_SigmoidOp : Tile_UnaryOp<"sigmoid", "1 / (1 + e^-x) (floats)">;
def Tile_TanhOp : Tile_UnaryOp<"tanh", "hyperbolic tangent (floats)">;
def Tile_NotOp : Tile_UnaryOp<"not", "logical negation of an i1 tile">;

def Tile_CmpOp : Tile_Op<"cmp", [Pure, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "elementwise comparison, giving an i1 tile";
  let arguments = (ins Tile_CmpPredicate:$predicate, Tile_TileType:$lhs, Tile_TileType:$rhs);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_SelectOp : Tile_Op<"select", [Pure, AllTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "elementwise choice: cond ? lhs : rhs";
  let arguments = (ins Tile_TileType:$cond, Tile_TileType:$lhs, Tile_TileType:$rhs);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($result)";
  let hasVerifier = 1;
}

def Tile_CastOp : Tile_Op<"cast", [Pure]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Floats round to nearest even (bf16 <-> f16 through f32, as neither
    holds the other); float to integer truncates toward zero; i1 converts
    to 0 / 1.
  }];
  let arguments = (ins Tile_TileType:$input);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure]> {
  let summary = "numpy-style broadcast to a larger shape";
  let description = [{
    Shapes align at the innermost dim; every input dim is 1 or equal to the
    result's. Missing outer dims are added.
  }];
  let arguments = (ins Tile_TileType:$input);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ReshapeOp : Tile_Op<"reshape", [Pure]> {
  let summary = "the same elements in row-major order under another shape";
  let arguments = (ins Tile_TileType:$input);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ConvertLayoutOp : Tile_Op<"convert_layout", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "the same tile, held by the threads in another layout";
  let description = [{
    The identity on values. `tile-assign-layouts` inserts it where two ops
    need one tile in different layouts (a tile broadcast along rows and along
    columns, say); the GPU lowering moves the elements through shared memory.

    ```mlir
    %r = tile.convert_layout %t {tile.layout = #tile.layout<...>} : <64xi32>
    ```
  }];
  let arguments = (ins Tile_TileType:$input);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Tile_TransposeOp : Tile_Op<"transpose", [Pure]> {
  let summary = "permute the dims of a tile";
  let description = [{ Result dim `i` is input dim `permutation[i]`. }];
  let arguments = (ins Tile_TileType:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$input $permutation attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_SliceOp : Tile_Op<"slice", [Pure]> {
  let summary = "a static window of a tile";
  let description = [{
    The result's element `i` is the input's element `offsets + i`; the
    window lies inside the input. Written `x[a +: n, :]` with compile-time
    `a` and `n`. On a GPU it moves through shared memory, except as an
    operand of a tensor-core product, which stages the window straight from
    the input's registers (the threads holding its rows store them), and
    where the window is whole spans of the input's layout (its registers).

    ```mlir
    %b = tile.slice %x [32, 0] : <64x32xf16> -> <32x32xf16>
    ```
  }];
  let arguments = (ins Tile_TileType:$input, DenseI64ArrayAttr:$offsets);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$input $offsets attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions, scans, matrix products
//===----------------------------------------------------------------------===//

def Tile_ReduceOp : Tile_Op<"reduce", [Pure]> {
  let summary = "reduce along one axis, removing it";
  let arguments = (ins Tile_ReduceKind:$kind, Tile_TileType:$input, I64Attr:$axis);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$kind $input `axis` $axis attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_CumsumOp : Tile_Op<"cumsum", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "inclusive cumulative sum along one axis";
  let arguments = (ins Tile_TileType:$input, I64Attr:$axis);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = "$input `axis` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_DotOp : Tile_Op<"dot", [Pure]> {
  let summary = "matrix product [M, K] x [K, N] -> [M, N], accumulated in f32";
  let description = [{
    Operands are floats of any width (bf16 and f16 feed tensor cores); the
    products are summed in f32, onto `acc` when it is given.
  }];
  let arguments = (ins Tile_TileType:$lhs, Tile_TileType:$rhs, Optional<Tile_TileType>:$acc);
  let results = (outs Tile_TileType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`,` $acc^ `:` type($acc))? attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // KILN_TILE_OPS
