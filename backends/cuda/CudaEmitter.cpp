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

// Memory is untyped in the IR: loads and stores name the type they move
// (a vector's alignment is its size, so it moves whole).
template <class T> __device__ __forceinline__ T kiln_load(const char *p) {
  return *reinterpret_cast<const T *>(p);
}
template <class T> __device__ __forceinline__ void kiln_store(char *p, const T &v) {
  *reinterpret_cast<T *>(p) = v;
}

template <class To, class From> __device__ __forceinline__ To kiln_bitcast(const From &from) {
  static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the size");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
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
    KernelPrinter printer(func, it == info.params.end() ? nullptr : &it->second, helpers, ks);
    ks << "\n";
    if (!printer.print(error))
      return false;
  }
  for (const std::string &line : info.banner)
    os << "// " << line << "\n";
  os << "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n";
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
