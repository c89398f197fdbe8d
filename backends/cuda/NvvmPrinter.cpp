//===- NvvmPrinter.cpp - nvvm ops and NVVM intrinsics as CUDA C++ ---------===//
//
// What CUDA C++ has a builtin for becomes that builtin (threadIdx,
// __syncthreads, __shfl_xor_sync, __syncwarp); every other instruction
// becomes a call of a helper named after it, whose body is that one PTX
// instruction in `asm volatile`, defined once at the top of the file. The
// PTX each helper holds is what the NVVM path emits for the same op, so the
// two builds run the same instructions.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/KernelPrinter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::cuda;

namespace {

/// "%0, %1, ..., %{n-1}" from `first`.
std::string operandList(unsigned first, unsigned n) {
  std::string s;
  for (unsigned i = 0; i < n; ++i)
    s += (i ? ", %" : "%") + std::to_string(first + i);
  return s;
}

/// `"c"(v.e[0]), "c"(v.e[1]), ...`: the `n` elements of the array or vector
/// `v` as asm operands of constraint c.
std::string elementOperands(const std::string &constraint, const std::string &v, unsigned n) {
  std::string s;
  for (unsigned i = 0; i < n; ++i)
    s += (i ? ", \"" : "\"") + constraint + "\"(" + v + ".e[" + std::to_string(i) + "])";
  return s;
}

/// A helper returning `type` v, n 32-bit registers (v itself where n is 1,
/// its elements otherwise) that one PTX instruction `instr {...}, [address];`
/// loads. "memory": what it reads is handed over by other asm (a ring's
/// wait and arrival, tensor memory's fences), which it must not cross.
std::string loadHelper(const std::string &name, const std::string &type, const std::string &instr,
                       unsigned n) {
  std::string outs = n == 1 ? "\"=r\"(v)" : elementOperands("=r", "v", n);
  return "__device__ __forceinline__ " + type + " " + name + "(uint32_t address) {\n  " + type +
         " v;\n  asm volatile(\"" + instr + " {" + operandList(0, n) + "}, [%" + std::to_string(n) +
         "];\"\n               : " + outs +
         "\n               : \"r\"(address) : \"memory\");\n  return v;\n}";
}

/// A helper whose body is `asm volatile(ptx : : inputs : "memory")`, taking
/// u32 / u64 arguments.
std::string voidHelper(const std::string &name, const std::string &params, const std::string &ptx,
                       const std::string &inputs) {
  return "__device__ __forceinline__ void " + name + "(" + params + ") {\n  asm volatile(\"" + ptx +
         "\" ::" + (inputs.empty() ? "" : " " + inputs) + " : \"memory\");\n}";
}

} // namespace

bool KernelPrinter::printNvvm(Operation *op) {
  Value r = op->getNumResults() ? op->getResult(0) : Value();
  auto call = [&](const std::string &helper, ArrayRef<std::string> args) {
    std::string text = helper + "(" + llvm::join(args, ", ") + ")";
    if (r && !r.use_empty())
      assign(r, text);
    else
      line() << text << ";\n";
    return true;
  };
  auto simple = [&](const std::string &name, const std::string &ptx) {
    helpers.use(name, voidHelper(name, "", ptx, ""));
    return call(name, {});
  };
  // A special register CUDA names (an unsigned int; the IR's is an i32).
  auto special = [&](const char *name) {
    assign(r, std::string("(int32_t)") + name);
    return true;
  };
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case([&](NVVM::ThreadIdXOp) { return special("threadIdx.x"); })
      .Case([&](NVVM::BlockIdXOp) { return special("blockIdx.x"); })
      .Case([&](NVVM::BlockIdYOp) { return special("blockIdx.y"); })
      .Case([&](NVVM::BlockIdZOp) { return special("blockIdx.z"); })
      .Case([&](NVVM::GridDimXOp) { return special("gridDim.x"); })
      .Case([&](NVVM::Barrier0Op) {
        line() << "__syncthreads();\n";
        return true;
      })
      .Case([&](NVVM::BarrierOp b) {
        if (b.getReductionOp() || !b.getBarrierId() || !b.getNumberOfThreads())
          return fail(op, "a barrier with a reduction or without an id and a thread count");
        // Named barriers: the roles of a warp-specialised kernel sync apart.
        helpers.use("kiln_bar_sync", voidHelper("kiln_bar_sync", "uint32_t id, uint32_t threads",
                                                "bar.sync %0, %1;", "\"r\"(id), \"r\"(threads)"));
        return call("kiln_bar_sync", {use(b.getBarrierId()), use(b.getNumberOfThreads())});
      })
      .Case([&](NVVM::SyncWarpOp b) {
        line() << "__syncwarp((unsigned)" << use(b.getMask()) << ");\n";
        return true;
      })
      .Case([&](NVVM::ShflOp s) {
        if (s.getReturnValueAndIsValid())
          return fail(op, "a shuffle returning its validity");
        Attribute clamp = s.getMaskAndClamp().getDefiningOp()
                              ? s.getMaskAndClamp().getDefiningOp()->getAttr("value")
                              : Attribute();
        // The whole warp: lanes up to 31, or, shuffling up, from lane 0
        // (what CUDA's intrinsics pass at their full width).
        bool up = s.getKind() == NVVM::ShflKind::up;
        if (!clamp || cast<IntegerAttr>(clamp).getInt() != (up ? 0 : 31))
          return fail(op, "a shuffle within lanes narrower than a warp");
        std::string fn;
        switch (s.getKind()) {
        case NVVM::ShflKind::bfly:
          fn = "__shfl_xor_sync";
          break;
        case NVVM::ShflKind::idx:
          fn = "__shfl_sync";
          break;
        case NVVM::ShflKind::down:
          fn = "__shfl_down_sync";
          break;
        case NVVM::ShflKind::up:
          fn = "__shfl_up_sync";
          break;
        }
        assign(r, fn + "((unsigned)" + use(s.getThreadMask()) + ", " + use(s.getVal()) + ", " +
                      use(s.getOffset()) + ")");
        return true;
      })
      .Case([&](NVVM::PermuteOp p) {
        if (p.getMode() != NVVM::PermuteMode::DEFAULT || !p.getHi())
          return fail(op, "a byte permute in a mode other than the two-word default");
        assign(r, "(int32_t)__byte_perm((unsigned)" + use(p.getLo()) + ", (unsigned)" +
                      use(p.getHi()) + ", (unsigned)" + use(p.getSelector()) + ")");
        return true;
      })
      .Case([&](NVVM::MBarrierInitOp m) {
        if (m.getPredicate())
          return fail(op, "a predicated mbarrier.init");
        helpers.use("kiln_mbarrier_init",
                    voidHelper("kiln_mbarrier_init", "uint32_t bar, uint32_t count",
                               "mbarrier.init.shared.b64 [%0], %1;", "\"r\"(bar), \"r\"(count)"));
        return call("kiln_mbarrier_init", {smemAddress(m.getAddr()), use(m.getCount())});
      })
      .Case([&](NVVM::FenceMbarrierInitOp) {
        return simple("kiln_fence_mbarrier_init", "fence.mbarrier_init.release.cluster;");
      })
      .Case([&](NVVM::MBarrierTryWaitParityOp m) {
        // The NVVM op spins in PTX until the phase completes; here the spin
        // is a C++ loop around one try_wait.
        helpers.use(
            "kiln_mbarrier_try_wait_parity",
            R"(__device__ __forceinline__ bool kiln_mbarrier_try_wait_parity(uint32_t bar, uint32_t parity, uint32_t ticks) {
  uint32_t done;
  asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared.b64 p, [%1], %2, %3;\n\tselp.u32 %0, 1, 0, p;\n\t}"
               : "=r"(done) : "r"(bar), "r"(parity), "r"(ticks) : "memory");
  return done != 0;
})");
        line() << "while (!kiln_mbarrier_try_wait_parity(" << smemAddress(m.getAddr()) << ", "
               << use(m.getPhase()) << ", " << use(m.getTicks()) << ")) {\n";
        line() << "}\n";
        return true;
      })
      .Case([&](NVVM::MBarrierArriveOp m) {
        if (m.getCount() || m.getRelaxed() || m.getScope() != NVVM::MemScopeKind::CTA ||
            (r && !r.use_empty()))
          return fail(op, "an mbarrier.arrive with a count, a scope or a used state");
        helpers.use("kiln_mbarrier_arrive",
                    voidHelper("kiln_mbarrier_arrive", "uint32_t bar",
                               "mbarrier.arrive.shared.b64 _, [%0];", "\"r\"(bar)"));
        line() << "kiln_mbarrier_arrive(" << smemAddress(m.getAddr()) << ");\n";
        return true;
      })
      .Case([&](NVVM::MBarrierArriveExpectTxOp m) {
        if (m.getPredicate() || m.getRelaxed() || m.getScope() != NVVM::MemScopeKind::CTA ||
            (r && !r.use_empty()))
          return fail(op, "an mbarrier.arrive.expect_tx with a predicate, a scope or a used state");
        helpers.use("kiln_mbarrier_arrive_expect_tx",
                    voidHelper("kiln_mbarrier_arrive_expect_tx", "uint32_t bar, uint32_t bytes",
                               "mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;",
                               "\"r\"(bar), \"r\"(bytes)"));
        line() << "kiln_mbarrier_arrive_expect_tx(" << smemAddress(m.getAddr()) << ", "
               << use(m.getTxcount()) << ");\n";
        return true;
      })
      .Case([&](NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp c) {
        if (c.getMulticastMask() || c.getPredicate() || !c.getIsCTAOnly() ||
            c.getMode() != NVVM::TMALoadMode::TILE || c.getGroup() || c.getL2CacheHint() ||
            !c.getIm2colOffsets().empty())
          return fail(op, "a TMA load other than a plain tile copy into this CTA");
        unsigned rank = c.getCoordinates().size();
        std::string name = "kiln_tma_load_" + std::to_string(rank) + "d";
        std::string params = "uint32_t dst, const void *map, uint32_t bar";
        std::string inputs = "\"r\"(dst), \"l\"(map), \"r\"(bar)";
        for (unsigned i = 0; i < rank; ++i) {
          params += ", int32_t c" + std::to_string(i);
          inputs += ", \"r\"(c" + std::to_string(i) + ")";
        }
        helpers.use(name, voidHelper(name, params,
                                     "cp.async.bulk.tensor." + std::to_string(rank) +
                                         "d.shared::cta.global.tile.mbarrier::complete_tx::bytes "
                                         "[%0], [%1, {" +
                                         operandList(3, rank) + "}], [%2];",
                                     inputs));
        SmallVector<std::string> args{smemAddress(c.getDstMem()), use(c.getTmaDescriptor()),
                                      smemAddress(c.getMbar())};
        for (Value v : c.getCoordinates())
          args.push_back(use(v));
        return call(name, args);
      })
      .Case([&](NVVM::CpAsyncBulkSharedCTAToGlobalOp c) {
        if (c.getByteMask() || c.getL2CacheHint())
          return fail(op, "a bulk store with a byte mask or a cache hint");
        helpers.use("kiln_bulk_store",
                    voidHelper("kiln_bulk_store", "void *dst, uint32_t src, uint32_t bytes",
                               "cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;",
                               "\"l\"(dst), \"r\"(src), \"r\"(bytes)"));
        return call("kiln_bulk_store",
                    {use(c.getDstMem()), smemAddress(c.getSrcMem()), use(c.getSize())});
      })
      .Case([&](NVVM::CpAsyncBulkCommitGroupOp) {
        return simple("kiln_bulk_commit_group", "cp.async.bulk.commit_group;");
      })
      .Case([&](NVVM::CpAsyncBulkWaitGroupOp w) {
        std::string n = std::to_string(w.getGroup());
        bool read = w.getRead().value_or(false);
        return simple("kiln_bulk_wait_group" + std::string(read ? "_read_" : "_") + n,
                      "cp.async.bulk.wait_group" + std::string(read ? ".read " : " ") + n + ";");
      })
      .Case([&](NVVM::FenceProxyOp f) {
        if (f.getKind() == NVVM::ProxyKind::async_shared &&
            f.getSpace() == NVVM::SharedSpace::shared_cta)
          return simple("kiln_fence_proxy_async_shared_cta", "fence.proxy.async.shared::cta;");
        return fail(op, "this proxy fence");
      })
      // The cvt the PTX build has (nvcc's __nv_cvt_* may take other paths).
      .Case([&](NVVM::ConvertF32x2ToF8x2Op c) {
        // Its 16-bit form: the bytes as one word, not a two-byte struct
        // (which nvcc takes apart and reassembles byte by byte).
        if (!isa<Float8E4M3FNType>(c.getDstTy()) || c.getRnd() != NVVM::FPRoundingMode::RN ||
            c.getSat() != NVVM::SaturationMode::SATFINITE || c.getRelu() ||
            !c.getDst().getType().isInteger(16))
          return fail(op, "an f8 conversion other than e4m3 rn.satfinite to an i16");
        helpers.use("kiln_cvt_e4m3x2_f32",
                    "__device__ __forceinline__ int16_t kiln_cvt_e4m3x2_f32(float hi, float lo) "
                    "{\n  int16_t r;\n  asm(\"cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\" : "
                    "\"=h\"(r) : \"f\"(hi), \"f\"(lo));\n  return r;\n}");
        return call("kiln_cvt_e4m3x2_f32", {use(c.getA()), use(c.getB())});
      })
      .Case([&](NVVM::ConvertF8x2ToF16x2Op c) {
        if (!isa<Float8E4M3FNType>(c.getSrcType()) || c.getRelu())
          return fail(op, "an f8 conversion other than e4m3 to f16");
        // A pair that is a 16-bit word bitcast (bytes 2k, 2k + 1 of a load)
        // goes in as that word.
        auto word = c.getSrc().getDefiningOp<LLVM::BitcastOp>();
        if (!word || !word.getArg().getType().isInteger(16))
          word = nullptr;
        // One of a vector of such words goes in as the 32-bit word holding
        // it, split inside the asm as the PTX build splits it (nvcc moved
        // each 16-bit element out with a byte permute: 98 PRMT in
        // decode_sm_90a_f8's SASS against the PTX build's 17).
        if (std::optional<WordHalf> pair = word ? wordHalfOf(word.getArg()) : std::nullopt) {
          std::string half = pair->high ? "hi" : "lo";
          std::string name = "kiln_cvt_f16x2_e4m3x2_" + half;
          helpers.use(name, "__device__ __forceinline__ kiln_vec<__half, 2> " + name +
                                "(uint32_t w) {\n  uint32_t r;\n  asm(\"{ .reg .b16 lo, hi; "
                                "mov.b32 {lo, hi}, %1; cvt.rn.f16x2.e4m3x2 %0, " +
                                half +
                                "; }\" : \"=r\"(r) : \"r\"(w));\n  return "
                                "kiln_bitcast<kiln_vec<__half, 2>>(r);\n}");
          return call(name, {pair->word});
        }
        if (word) {
          helpers.use("kiln_cvt_f16x2_e4m3x2_word",
                      "__device__ __forceinline__ kiln_vec<__half, 2> "
                      "kiln_cvt_f16x2_e4m3x2_word(int16_t x) {\n  uint32_t r;\n  "
                      "asm(\"cvt.rn.f16x2.e4m3x2 %0, %1;\" : \"=r\"(r) : \"h\"(x));\n  return "
                      "kiln_bitcast<kiln_vec<__half, 2>>(r);\n}");
          return call("kiln_cvt_f16x2_e4m3x2_word", {use(word.getArg())});
        }
        helpers.use("kiln_cvt_f16x2_e4m3x2",
                    "__device__ __forceinline__ kiln_vec<__half, 2> "
                    "kiln_cvt_f16x2_e4m3x2(kiln_vec<int8_t, 2> x) {\n  uint32_t r;\n  "
                    "asm(\"cvt.rn.f16x2.e4m3x2 %0, %1;\" : \"=r\"(r) : "
                    "\"h\"(kiln_bitcast<uint16_t>(x)));\n  return kiln_bitcast<kiln_vec<__half, "
                    "2>>(r);\n}");
        return call("kiln_cvt_f16x2_e4m3x2", {use(c.getSrc())});
      })
      .Case([&](NVVM::SetMaxRegisterOp s) {
        bool inc = s.getAction() == NVVM::SetMaxRegisterAction::increase;
        std::string n = std::to_string(s.getRegCount());
        return simple(std::string("kiln_setmaxnreg_") + (inc ? "inc_" : "dec_") + n,
                      std::string("setmaxnreg.") + (inc ? "inc" : "dec") + ".sync.aligned.u32 " +
                          n + ";");
      })
      .Case([&](NVVM::WgmmaFenceAlignedOp) {
        return simple("kiln_wgmma_fence", "wgmma.fence.sync.aligned;");
      })
      .Case([&](NVVM::WgmmaGroupSyncAlignedOp) {
        return simple("kiln_wgmma_commit_group", "wgmma.commit_group.sync.aligned;");
      })
      .Case([&](NVVM::WgmmaWaitGroupSyncOp w) {
        std::string n = std::to_string(w.getGroup());
        return simple("kiln_wgmma_wait_group_" + n, "wgmma.wait_group.sync.aligned " + n + ";");
      })
      .Case([&](NVVM::WgmmaMmaAsyncOp w) {
        if (w.getSatfinite() || w.getTypeD() != NVVM::WGMMATypes::f32)
          return fail(op, "a wgmma accumulating other than f32");
        NVVM::MMAShapeAttr shape = w.getShape();
        auto acc = cast<LLVM::LLVMStructType>(w.getInouts().getType());
        unsigned n = acc.getBody().size();
        std::string a = NVVM::stringifyWGMMATypes(w.getTypeA()).str(),
                    b = NVVM::stringifyWGMMATypes(w.getTypeB()).str();
        std::string instr = "m" + std::to_string(shape.getM()) + "n" +
                            std::to_string(shape.getN()) + "k" + std::to_string(shape.getK()) +
                            ".f32." + a + "." + b;
        // Immediates: scale-a, scale-b (1 or -1), then the transposes where
        // the types allow them (16-bit operands), as NVVM prints them.
        auto scale = [](NVVM::WGMMAScaleIn s) {
          return s == NVVM::WGMMAScaleIn::one ? std::string("1") : std::string("-1");
        };
        std::string immediates = scale(w.getScaleA()) + ", " + scale(w.getScaleB());
        bool transposable = a == "bf16" || a == "f16";
        // NVVM calls A K-major `row` and B K-major `col`: the other layout is
        // the transposed (MN-major) operand.
        if (transposable)
          immediates += ", " + std::string(w.getLayoutA() == NVVM::MMALayout::col ? "1" : "0") +
                        ", " + std::string(w.getLayoutB() == NVVM::MMALayout::row ? "1" : "0");
        std::string name = "kiln_wgmma_" + instr + "_" + immediates;
        for (char &ch : name)
          if (ch == '.' || ch == ',' || ch == ' ' || ch == '-')
            ch = ch == '-' ? 'm' : '_';
        std::string outs = elementOperands("+f", "d", n);
        std::string def =
            "__device__ __forceinline__ void " + name + "(kiln_array<float, " + std::to_string(n) +
            "> &d, uint64_t a, uint64_t b, uint32_t scale_d) {\n  asm volatile(\"{\\n\\t.reg "
            ".pred p;\\n\\tsetp.ne.b32 p, %" +
            std::to_string(n + 2) + ", 0;\\n\\twgmma.mma_async.sync.aligned." + instr + " {" +
            operandList(0, n) + "}, %" + std::to_string(n) + ", %" + std::to_string(n + 1) +
            ", p, " + immediates + ";\\n\\t}\"\n               : " + outs +
            "\n               : \"l\"(a), \"l\"(b), \"r\"(scale_d) : \"memory\");\n}";
        helpers.use(name, def);
        // The accumulator: the previous product's registers, updated in
        // place; or, where the product overwrites it (scale-d 0), unset
        // registers (a zero written after the wgmma.fence would be an
        // access the fence does not cover).
        std::string result;
        Value accIn = w.getInouts();
        if (updatesInPlace(accIn, op)) {
          result = nameOf(accIn);
          alias(r, result);
        } else if (isUndefined(accIn)) {
          result = declare(r);
          line() << typeOf(r.getType()) << " " << result << ";\n";
        } else {
          result = declare(r);
          line() << typeOf(r.getType()) << " " << result << " = " << use(accIn) << ";\n";
        }
        line() << name << "(" << result << ", " << use(w.getDescriptorA()) << ", "
               << use(w.getDescriptorB()) << ", "
               << (w.getScaleD() == NVVM::WGMMAScaleOut::one ? "1" : "0") << ");\n";
        return true;
      })
      .Case([&](NVVM::Tcgen05AllocOp t) {
        if (t.getGroup() != NVVM::CTAGroupKind::CTA_1)
          return fail(op, "a tensor-memory allocation for two CTAs");
        helpers.use("kiln_tmem_alloc",
                    voidHelper("kiln_tmem_alloc", "uint32_t slot, uint32_t columns",
                               "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;",
                               "\"r\"(slot), \"r\"(columns)"));
        return call("kiln_tmem_alloc", {smemAddress(t.getAddr()), use(t.getNCols())});
      })
      .Case([&](NVVM::Tcgen05DeallocOp t) {
        if (t.getGroup() != NVVM::CTAGroupKind::CTA_1)
          return fail(op, "a tensor-memory release for two CTAs");
        helpers.use("kiln_tmem_dealloc",
                    voidHelper("kiln_tmem_dealloc", "uint32_t address, uint32_t columns",
                               "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;",
                               "\"r\"(address), \"r\"(columns)"));
        return call("kiln_tmem_dealloc", {use(t.getTaddr()), use(t.getNCols())});
      })
      .Case([&](NVVM::Tcgen05RelinquishAllocPermitOp) {
        return simple("kiln_tmem_relinquish_alloc_permit",
                      "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;");
      })
      .Case([&](NVVM::Tcgen05FenceOp f) {
        std::string kind = NVVM::stringifyTcgen05FenceKind(f.getKind()).str();
        return simple("kiln_tcgen05_fence_" + kind, "tcgen05.fence::" + kind + "_thread_sync;");
      })
      .Case([&](NVVM::Tcgen05WaitOp w) {
        // PTX spells the kinds ld and st.
        std::string kind =
            w.getKind() == NVVM::Tcgen05WaitKind::STORE ? std::string("st") : std::string("ld");
        return simple("kiln_tcgen05_wait_" + kind, "tcgen05.wait::" + kind + ".sync.aligned;");
      })
      .Case([&](NVVM::Tcgen05CommitOp c) {
        if (c.getMulticastMask() || c.getGroup() != NVVM::CTAGroupKind::CTA_1)
          return fail(op, "a multicast tcgen05.commit");
        helpers.use(
            "kiln_tcgen05_commit",
            voidHelper(
                "kiln_tcgen05_commit", "uint32_t bar",
                "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];",
                "\"r\"(bar)"));
        return call("kiln_tcgen05_commit", {smemAddress(c.getAddr())});
      })
      .Case([&](NVVM::Tcgen05MMAOp m) {
        if (m.getScaleInputD() || m.getDisableOutputLane() || m.getAShift() ||
            m.getCtaGroup() != NVVM::CTAGroupKind::CTA_1 ||
            !isa<IntegerType>(m.getMatrixA().getType()))
          return fail(op, "a tcgen05.mma with A in tensor memory, scaled or masked");
        std::string kind = NVVM::stringifyTcgen05MMAKind(m.getKind()).str();
        std::string collector = NVVM::stringifyTcgen05MMACollectorOp(m.getCollectorOp()).str();
        std::string name = "kiln_tcgen05_mma_" + kind + "_" + collector;
        helpers.use(name,
                    "__device__ __forceinline__ void " + name +
                        "(uint32_t d, uint64_t a, uint64_t b, uint32_t idesc, bool accumulate) {\n"
                        "  asm volatile(\"{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %4, "
                        "0;\\n\\ttcgen05.mma.cta_group::1.kind::" +
                        kind + ".collector::a::" + collector +
                        " [%0], %1, %2, %3, p;\\n\\t}\"\n"
                        "               :: \"r\"(d), \"l\"(a), \"l\"(b), \"r\"(idesc), "
                        "\"r\"((uint32_t)accumulate) : \"memory\");\n}");
        line() << name << "(" << use(m.getMatrixD()) << ", " << use(m.getMatrixA()) << ", "
               << use(m.getMatrixB()) << ", " << use(m.getIdesc()) << ", "
               << use(m.getEnableInputD()) << ");\n";
        return true;
      })
      .Case([&](NVVM::LdMatrixOp l) {
        if (l.getShape().getM() != 8 || l.getShape().getN() != 8 ||
            l.getEltType() != NVVM::LdStMatrixEltType::B16)
          return fail(op, "an ldmatrix other than m8n8 of 16-bit elements");
        unsigned n = l.getNum();
        bool trans = l.getLayout() == NVVM::MMALayout::col;
        std::string shape = "m8n8.x" + std::to_string(n) + (trans ? ".trans" : "");
        std::string name = "kiln_ldmatrix_x" + std::to_string(n) + (trans ? "_trans" : "");
        std::string type = n == 1 ? "int32_t" : "kiln_array<int32_t, " + std::to_string(n) + ">";
        helpers.use(name,
                    loadHelper(name, type, "ldmatrix.sync.aligned." + shape + ".shared.b16", n));
        assign(r, name + "(" + smemAddress(l.getPtr()) + ")");
        return true;
      })
      .Case([&](NVVM::MmaOp m) {
        NVVM::MMAShapeAttr shape = m.getShape();
        std::optional<NVVM::MMATypes> a = m.getMultiplicandAPtxType(),
                                      bt = m.getMultiplicandBPtxType();
        if (shape.getM() != 16 || shape.getN() != 8 || shape.getK() != 16 || !a || a != bt ||
            (*a != NVVM::MMATypes::bf16 && *a != NVVM::MMATypes::f16) ||
            m.getOperandA().size() != 4 || m.getOperandB().size() != 2 ||
            m.getOperandC().size() != 4 || !m.getOperandC()[0].getType().isF32())
          return fail(op, "an mma.sync other than m16n8k16 of f16 or bf16 into f32");
        std::string type = NVVM::stringifyMMATypes(*a).str();
        std::string name = "kiln_mma_m16n8k16_" + type;
        // Not volatile: a product of its operands alone, which the compiler
        // may schedule as it likes.
        helpers.use(name,
                    "__device__ __forceinline__ kiln_array<float, 4> " + name +
                        "(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, "
                        "uint32_t b1, float c0, float c1, float c2, float c3) {\n"
                        "  kiln_array<float, 4> d;\n"
                        "  asm(\"mma.sync.aligned.m16n8k16.row.col.f32." +
                        type + "." + type +
                        ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, "
                        "%13};\"\n"
                        "      : \"=f\"(d.e[0]), \"=f\"(d.e[1]), \"=f\"(d.e[2]), \"=f\"(d.e[3])\n"
                        "      : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), "
                        "\"r\"(b1), \"f\"(c0), \"f\"(c1), \"f\"(c2), \"f\"(c3));\n"
                        "  return d;\n}");
        SmallVector<std::string> args;
        for (Value w : llvm::concat<Value>(m.getOperandA(), m.getOperandB()))
          args.push_back(w.getType().isInteger(32) ? use(w)
                                                   : "kiln_bitcast<uint32_t>(" + use(w) + ")");
        for (Value c : m.getOperandC())
          args.push_back(use(c));
        return call(name, args);
      })
      .Case([&](NVVM::Tcgen05LdOp l) {
        auto vt = dyn_cast<VectorType>(r.getType());
        if (l.getPack() || l.getOffset() || l.getShape() != NVVM::Tcgen05LdStShape::SHAPE_32X32B ||
            !vt || !vt.getElementType().isInteger(32))
          return fail(op, "a tensor-memory load other than 32x32b into 32-bit registers");
        unsigned n = vt.getNumElements();
        std::string name = "kiln_tmem_ld_32x32b_x" + std::to_string(n);
        helpers.use(name,
                    loadHelper(name, "kiln_vec<int32_t, " + std::to_string(n) + ">",
                               "tcgen05.ld.sync.aligned.32x32b.x" + std::to_string(n) + ".b32", n));
        assign(r, name + "(" + use(l.getTmemAddr()) + ")");
        return true;
      })
      .Case([&](NVVM::Tcgen05StOp s) {
        auto vt = dyn_cast<VectorType>(s.getVal().getType());
        if (s.getUnpack() || s.getOffset() ||
            s.getShape() != NVVM::Tcgen05LdStShape::SHAPE_32X32B || !vt ||
            !vt.getElementType().isInteger(32))
          return fail(op, "a tensor-memory store other than 32x32b from 32-bit registers");
        unsigned n = vt.getNumElements();
        std::string name = "kiln_tmem_st_32x32b_x" + std::to_string(n);
        std::string ins = "\"r\"(address), " + elementOperands("r", "v", n);
        helpers.use(name, "__device__ __forceinline__ void " + name +
                              "(uint32_t address, const kiln_vec<int32_t, " + std::to_string(n) +
                              "> &v) {\n  asm volatile(\"tcgen05.st.sync.aligned.32x32b.x" +
                              std::to_string(n) + ".b32 [%0], {" + operandList(1, n) +
                              "};\"\n               :: " + ins + " : \"memory\");\n}");
        return call(name, {use(s.getTmemAddr()), use(s.getVal())});
      })
      .Default([&](Operation *) { return fail(op, "this nvvm op"); });
}

bool KernelPrinter::printIntrinsic(LLVM::CallIntrinsicOp c) {
  Operation *op = c;
  StringRef name = c.getIntrin();
  // Approximate math the NVVM path calls by intrinsic: one PTX instruction
  // each (pure: plain asm lets nvcc schedule and combine them).
  struct Unary {
    const char *intrinsic, *helper, *ptx;
  };
  static const Unary unary[] = {
      {"llvm.nvvm.ex2.approx.ftz.f", "kiln_ex2_approx_ftz", "ex2.approx.ftz.f32"},
      {"llvm.nvvm.ex2.approx.ftz.f32", "kiln_ex2_approx_ftz", "ex2.approx.ftz.f32"},
      {"llvm.nvvm.lg2.approx.ftz.f", "kiln_lg2_approx_ftz", "lg2.approx.ftz.f32"},
      {"llvm.nvvm.rsqrt.approx.ftz.f", "kiln_rsqrt_approx_ftz", "rsqrt.approx.ftz.f32"},
  };
  for (const Unary &u : unary)
    if (name == u.intrinsic) {
      if (c.getNumOperands() != 1 || !c.getResult(0).getType().isF32())
        break;
      helpers.use(u.helper, std::string("__device__ __forceinline__ float ") + u.helper +
                                "(float x) {\n  float r;\n  asm(\"" + u.ptx +
                                " %0, %1;\" : \"=f\"(r) : \"f\"(x));\n  return r;\n}");
      assign(c.getResult(0), std::string(u.helper) + "(" + use(c.getOperand(0)) + ")");
      return true;
    }
  if (name == "llvm.nvvm.div.full" && c.getNumOperands() == 2) {
    helpers.use("kiln_div_full",
                R"(__device__ __forceinline__ float kiln_div_full(float a, float b) {
  float r;
  asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
})");
    assign(c.getResult(0),
           "kiln_div_full(" + use(c.getOperand(0)) + ", " + use(c.getOperand(1)) + ")");
    return true;
  }
  return fail(op, "the intrinsic " + name.str());
}
