//===- cuda_emitter_unit.cpp - what the CUDA emitter prints and refuses --===//
// The emitter prints structured GPU kernels (llvm.func, scf, arith, llvm,
// nvvm) as CUDA C++; a construct it has no C++ for is an error naming the
// op and the source line it came from, never different code.

#include "backends/cuda/CudaEmitter.h"
#include "tools/kiln/Driver.h"

#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

using namespace kiln;

namespace {

std::string emit(const char *ir, bool &ok, std::string &error) {
  auto ctx = makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(ir, ctx.get());
  REQUIRE(module);
  std::string text;
  llvm::raw_string_ostream os(text);
  CudaSourceInfo info;
  info.params["k"] = {{"n", "x"}, {"int64_t", "float *__restrict__"}};
  ok = emitCudaSource(*module, info, os, error);
  return text;
}

/// The source printed for `ir`, which must emit.
std::string emitted(const char *ir) {
  bool ok;
  std::string error;
  std::string text = emit(ir, ok, error);
  INFO(error << text);
  REQUIRE(ok);
  return text;
}

/// `first` and `second` are both printed, `first` before `second`.
void requireOrder(const std::string &text, const char *first, const char *second) {
  size_t a = text.find(first), b = text.find(second);
  INFO(text);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  CHECK(a < b);
}

} // namespace

TEST_CASE("cuda emitter: loops, carried values and wrapping arithmetic", "[cuda]") {
  const char *ir = R"mlir(
    llvm.func @k(%n: i64, %x: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %z = arith.constant 0.0 : f32
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %w = arith.muli %t, %t : i32
      %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %z) -> (f32) {
        %f = arith.sitofp %w : i32 to f32
        %a = arith.addf %acc, %f : f32
        scf.yield %a : f32
      }
      llvm.store %s, %x {alignment = 4 : i64} : f32, !llvm.ptr<1>
      llvm.return
    }
  )mlir";
  bool ok;
  std::string error;
  std::string text = emit(ir, ok, error);
  INFO(error);
  REQUIRE(ok);
  CHECK(text.find("extern \"C\" __global__ void __launch_bounds__(128, 1)\nk(int64_t n,") !=
        std::string::npos);
  // i32 arithmetic wraps as LLVM's does: through unsigned.
  CHECK(text.find("(int32_t)((uint32_t)v") != std::string::npos);
  // A constant-bound loop counts in 32 bits; the carried value is a local.
  CHECK(text.find("float carried") != std::string::npos);
  CHECK(text.find("for (int32_t i") != std::string::npos);
  CHECK(text.find("kiln_store<4>(((char *)x), carried") != std::string::npos);
}

TEST_CASE("cuda emitter: a construct without C++ is an error naming it and its line", "[cuda]") {
  const char *ir = R"mlir(
    llvm.func @k(%n: i64, %x: !llvm.ptr<1>) attributes {nvvm.kernel} {
      %v = llvm.load %x {alignment = 4 : i64} : !llvm.ptr<1> -> f32
      %c = math.cos %v : f32 loc("my_op.tile":12:7)
      llvm.store %c, %x {alignment = 4 : i64} : f32, !llvm.ptr<1>
      llvm.return
    }
  )mlir";
  bool ok;
  std::string error;
  emit(ir, ok, error);
  REQUIRE_FALSE(ok);
  CHECK(error.find("my_op.tile\":12:7") != std::string::npos);
  CHECK(error.find("the CUDA emitter cannot express this math op (op 'math.cos' in kernel 'k')") !=
        std::string::npos);
}

TEST_CASE("cuda emitter: masked stores are predicated, invariant loads come first", "[cuda]") {
  // The store's address is computed outside its `if`, as one predicated
  // st.global (nvcc would sink the arithmetic into a branch per store); the
  // invariant load after the barrier is printed before it, as LLVM
  // schedules it in the PTX build (the barrier's asm would pin it).
  const char *ir = R"mlir(
    llvm.func @k(%n: i64, %x: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %i = arith.extui %t : i32 to i64
      %p = llvm.getelementptr %x[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
      nvvm.barrier0
      %v = llvm.load %p invariant {alignment = 4 : i64} : !llvm.ptr<1> -> f32
      %c = arith.cmpi ult, %i, %n : i64
      scf.if %c {
        llvm.store %v, %p {alignment = 4 : i64} : f32, !llvm.ptr<1>
      }
      llvm.return
    }
  )mlir";
  std::string text = emitted(ir);
  requireOrder(text, "kiln_ldg<float>(", "__syncthreads();");
  CHECK(text.find("kiln_store_if(") != std::string::npos);
  CHECK(text.find("@q st.global.b32") != std::string::npos);
  CHECK(text.find("kiln_store<4>") == std::string::npos);
}

TEST_CASE("cuda emitter: a vector stored to global memory is one st.global.v4 / v2", "[cuda]") {
  // Built in the branch that stores it, nvcc split it into 4-byte stores
  // (the bf16 GEMM with an MMA warpgroup, the split prefill's scans, the
  // f16 test matmul's pairs); the predicated store's asm keeps it whole. A
  // shared-memory vector stays a plain store.
  const char *ir = R"mlir(
    llvm.func @k(%n: i64, %x: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %i = arith.extui %t : i32 to i64
      %p = llvm.getelementptr %x[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, vector<4xf32>
      %c = arith.cmpi ult, %i, %n : i64
      %f = arith.uitofp %t : i32 to f32
      scf.if %c {
        %u = llvm.mlir.poison : vector<4xf32>
        %k = llvm.mlir.constant(0 : i32) : i32
        %v = llvm.insertelement %f, %u[%k : i32] : vector<4xf32>
        llvm.store %v, %p {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
        %h = llvm.mlir.poison : vector<2xf32>
        %v2 = llvm.insertelement %f, %h[%k : i32] : vector<2xf32>
        llvm.store %v2, %x {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
      }
      %s = llvm.mlir.addressof @smem : !llvm.ptr<3>
      %w = llvm.mlir.poison : vector<4xf32>
      llvm.store %w, %s {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
      llvm.return
    }
    llvm.mlir.global internal @smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<4 x f32>
  )mlir";
  std::string text = emitted(ir);
  CHECK(text.find("kiln_store_if(true, ") != std::string::npos);
  CHECK(text.find("st.global.v4.b32") != std::string::npos);
  CHECK(text.find("st.global.v2.b32") != std::string::npos);
  CHECK(text.find("kiln_store<8>(") == std::string::npos);
  CHECK(text.find("kiln_store<16>(") != std::string::npos); // the shared one
}

TEST_CASE("cuda emitter: a masked store's constant offset is its immediate", "[cuda]") {
  // x[i + 3] masked: printed as the store to x + i with 12 bytes as the
  // st.global's immediate (ptxas folds it so in the PTX build); the index
  // sum and the address, read by nothing else, are not printed (nvcc would
  // warn of unused variables).
  const char *ir = R"mlir(
    llvm.func @k(%n: i64, %x: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      %c3 = arith.constant 3 : index
      %z = arith.constant 0.0 : f32
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %i = arith.index_castui %t : i32 to index
      %j = arith.addi %i, %c3 : index
      %j64 = arith.index_cast %j : index to i64
      %p = llvm.getelementptr %x[%j64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
      %i64 = arith.index_cast %i : index to i64
      %c = arith.cmpi ult, %i64, %n : i64
      scf.if %c {
        llvm.store %z, %p {alignment = 4 : i64} : f32, !llvm.ptr<1>
      }
      llvm.return
    }
  )mlir";
  std::string text = emitted(ir);
  INFO(text);
  CHECK(text.find("kiln_store_if<12>(") != std::string::npos);
  CHECK(text.find("st.global.b32 [%1+%3]") != std::string::npos);
  CHECK(text.find(" + 3") == std::string::npos);
}

TEST_CASE("cuda emitter: invariant loads stay below an acquire", "[cuda]") {
  // What an overlapped kernel reads after its flag wait was written by the
  // kernel beside it: the load must not float above the acquire.
  const char *ir = R"mlir(
    llvm.func @k(%n: i64, %x: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      %f = llvm.inline_asm has_side_effects "ld.acquire.gpu.b32 $0, [$1];", "=r,l" %x : (!llvm.ptr<1>) -> i32
      %v = llvm.load %x invariant {alignment = 4 : i64} : !llvm.ptr<1> -> f32
      llvm.store %v, %x {alignment = 4 : i64} : f32, !llvm.ptr<1>
      llvm.return
    }
  )mlir";
  requireOrder(emitted(ir), "ld.acquire", "kiln_ldg<float>(");
}

TEST_CASE("cuda emitter: a product read twice is contracted as LLVM does", "[cuda]") {
  // LLVM's NVPTX backend makes both sums fmas; nvcc would keep the product
  // (two uses) and add. A product read once is left to nvcc.
  const char *ir = R"mlir(
    llvm.func @k(%n: i64, %x: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
      %a = llvm.load %x {alignment = 4 : i64} : !llvm.ptr<1> -> f32
      %m = arith.mulf %a, %a : f32
      %s = arith.addf %m, %a : f32
      %d = arith.subf %a, %m : f32
      %once = arith.mulf %s, %d : f32
      %t = arith.addf %once, %a : f32
      llvm.store %t, %x {alignment = 4 : i64} : f32, !llvm.ptr<1>
      llvm.return
    }
  )mlir";
  std::string text = emitted(ir);
  INFO(text);
  CHECK(text.find("= __fmaf_rn(v0, v0, v0);") != std::string::npos);
  CHECK(text.find("= __fmaf_rn(-(v0), v0, v0);") != std::string::npos);
  CHECK(text.find("v0 * v0") == std::string::npos);
  CHECK(text.find("= v1 * v2;") != std::string::npos); // the product read once, and its sum
  CHECK(text.find("= v3 + v0;") != std::string::npos);
}

TEST_CASE("cuda emitter: a byte permute is __byte_perm (one PRMT)", "[cuda]") {
  // The high parts of two f32s as one word (a split A's fragment,
  // GpuKernelLowering::packHighParts): printed as two shifted halves, nvcc
  // spent a shift on each and a permute to join them.
  const char *ir = R"mlir(
    llvm.func @k(%x: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 32, 1, 1>} {
      %sel = arith.constant 30258 : i32
      %a = llvm.load %x {alignment = 4 : i64} : !llvm.ptr<1> -> i32
      %y = llvm.getelementptr %x[1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32
      %b = llvm.load %y {alignment = 4 : i64} : !llvm.ptr<1> -> i32
      %w = nvvm.prmt #nvvm.permute_mode<default> %sel, %a, %b : i32
      llvm.store %w, %x {alignment = 4 : i64} : i32, !llvm.ptr<1>
      llvm.return
    }
  )mlir";
  std::string text = emitted(ir);
  INFO(text);
  // v0 the low word (bytes 0-3), v2 the high one, 0x7632 the selector.
  CHECK(text.find("__byte_perm((unsigned)v0, (unsigned)v2,") != std::string::npos);
  CHECK(text.find("(unsigned)30258)") != std::string::npos);
}
