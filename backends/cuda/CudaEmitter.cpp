//===- CudaEmitter.cpp - one translation unit from a module's kernels -----===//
//
// The file: a banner, the includes, the few templates every kernel uses,
// the helpers its kernels called (each once, by name), the shared arrays
// and then the kernels in module order. Kernels are printed first into a
// buffer, since they decide which helpers the file needs.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/CudaEmitter.h"
#include "backends/cuda/KernelPrinter.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::cuda;

/// What every generated file starts with: vectors and register arrays as
/// aggregates (constant indices only, so nvcc keeps them in registers) and
/// a bit cast.
static const char *kCommon =
    R"(// Kiln's CUDA source: a vector of the IR is an aligned aggregate (its loads
// and stores move it whole), a register array an unaligned one; both are
// indexed only by constants, so they live in registers.
template <class T, int N> struct alignas(sizeof(T) * N) kiln_vec {
  T e[N];
};
template <class T, int N> struct kiln_array {
  T e[N];
};

template <class To, class From> __device__ __forceinline__ To kiln_bitcast(const From &from) {
  static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the size");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}

// Memory is untyped in the IR: loads and stores move the bits of the type
// they name as one unsigned word or vector of words (a bf16 vector copied
// as a struct would move element by element; a memcpy of the loaded word,
// byte by byte), at the alignment the IR states (so nvcc merges
// neighbouring accesses as LLVM does).
template <int Bytes> struct kiln_bits;
template <> struct kiln_bits<1> { using type = uint8_t; };
template <> struct kiln_bits<2> { using type = uint16_t; };
template <> struct kiln_bits<4> { using type = uint32_t; };
template <> struct kiln_bits<8> { using type = uint2; };
template <> struct kiln_bits<16> { using type = uint4; };

template <class T, int Align = sizeof(T)> __device__ __forceinline__ T kiln_load(const char *p) {
  using Bits = typename kiln_bits<sizeof(T)>::type;
  T v;
  *reinterpret_cast<Bits *>(&v) = *reinterpret_cast<const Bits *>(__builtin_assume_aligned(p, Align));
  return v;
}
template <int Align, class T> __device__ __forceinline__ void kiln_store(char *p, const T &v) {
  using Bits = typename kiln_bits<sizeof(T)>::type;
  *reinterpret_cast<Bits *>(__builtin_assume_aligned(p, Align)) = *reinterpret_cast<const Bits *>(&v);
}
)";

void CudaHelpers::print(llvm::raw_ostream &os) const {
  // Templates other helpers call come first (kiln_ldg is one).
  for (auto &[name, def] : defs)
    if (llvm::StringRef(def).starts_with("template"))
      os << "\n" << def << "\n";
  for (auto &[name, def] : defs)
    if (!llvm::StringRef(def).starts_with("template"))
      os << "\n" << def << "\n";
}

bool kiln::emitCudaSource(ModuleOp module, const CudaSourceInfo &info, llvm::raw_ostream &os,
                          std::string &error) {
  CudaHelpers helpers;
  std::string kernels;
  llvm::raw_string_ostream ks(kernels);
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto global = dyn_cast<LLVM::GlobalOp>(op)) {
      if (global.getAddrSpace() != 3) {
        error = "the CUDA emitter cannot express the global '" + global.getSymName().str() +
                "' outside shared memory";
        return false;
      }
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      std::string elem = array ? KernelPrinter::typeOf(array.getElementType()) : "";
      if (elem.empty()) {
        error = "the CUDA emitter cannot express the shared global '" + global.getSymName().str() +
                "' of this type";
        return false;
      }
      std::string align = std::to_string(global.getAlignment().value_or(16));
      // The dynamic area (a zero-length array) is the launch's dynamic
      // shared memory; other arrays are static scratch.
      std::string name = sharedArrayName(global.getSymName());
      helpers.sharedArrays[name] =
          array.getNumElements() == 0
              ? "extern __shared__ __align__(" + align + ") " + elem + " " + name + "[];"
              : "__shared__ __align__(" + align + ") " + elem + " " + name + "[" +
                    std::to_string(array.getNumElements()) + "];";
      continue;
    }
    auto func = dyn_cast<LLVM::LLVMFuncOp>(op);
    if (!func) {
      error = "the CUDA emitter cannot express a module-level '" +
              op.getName().getStringRef().str() + "'";
      return false;
    }
    auto it = info.params.find(func.getSymName().str());
    KernelPrinter printer(func, it == info.params.end() ? nullptr : &it->second, helpers, ks,
                          info.lineDirectives);
    ks << "\n";
    if (!printer.print(error))
      return false;
  }
  for (const std::string &line : info.banner)
    os << "// " << line << "\n";
  os << "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n";
  if (kernels.find("__nv_fp8_e4m3") != std::string::npos) // an f8e4m3 tensor's type
    os << "#include <cuda_fp8.h>\n";
  if (helpers.tensorMaps)
    os << "#include <cuda.h> // CUtensorMap\n";
  os << "#include <stdint.h>\n\n" << kCommon;
  helpers.print(os);
  if (!helpers.sharedArrays.empty()) {
    os << "\n";
    for (auto &[name, decl] : helpers.sharedArrays)
      os << decl << "\n";
  }
  os << kernels;
  return true;
}
