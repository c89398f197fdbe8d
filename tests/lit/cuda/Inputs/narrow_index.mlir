// The row offset of a thread's warp and of its block (tests/lit/cuda/narrow_index.test).
llvm.func @k(%n: i64, %p: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %t = nvvm.read.ptx.sreg.tid.x range <i32, 0, 128> : i32
  %tid = arith.index_castui %t : i32 to index
  %warp = arith.divui %tid, %c32 : index
  %row = arith.muli %warp, %c64 : index
  %b = nvvm.read.ptx.sreg.ctaid.x range <i32, 0, 2147483647> : i32
  %bid = arith.index_castui %b : i32 to index
  %nn = arith.index_cast %n : i64 to index
  %base = arith.muli %bid, %nn : index
  %off = arith.addi %base, %row : index
  %o = arith.index_cast %off : index to i64
  %q = llvm.getelementptr %p[%o] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
  %v = llvm.mlir.constant(1.0 : f32) : f32
  llvm.store %v, %q : f32, !llvm.ptr<1>
  llvm.return
}
