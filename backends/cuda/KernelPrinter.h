//===- KernelPrinter.h - one GPU kernel as CUDA C++ -------------*- C++ -*-===//
//
// Internal to backends/cuda. KernelPrinter prints one llvm.func kernel:
// KernelPrinter.cpp holds values, types, control flow and the arith / llvm
// ops; NvvmPrinter.cpp the nvvm ops and NVVM intrinsics, through helpers
// (CudaHelpers) defined once at the top of the file.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_CUDA_KERNELPRINTER_H
#define KILN_BACKENDS_CUDA_KERNELPRINTER_H

#include "backends/cuda/CudaEmitter.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <optional>
#include <set>
#include <string>

namespace kiln::cuda {

/// The helper functions a file uses, each defined once, in name order.
class CudaHelpers {
public:
  /// Registers helper `name` (defined by `definition`) and returns its name.
  const std::string &use(const std::string &name, const std::string &definition) {
    auto it = defs.emplace(name, definition).first;
    return it->first;
  }
  /// File-scope shared arrays (llvm.mlir.global in address space 3).
  std::map<std::string, std::string> sharedArrays;
  bool tensorMaps = false;
  void print(llvm::raw_ostream &os) const;

private:
  std::map<std::string, std::string> defs;
};

/// An error the printer found: the message names the construct; the
/// location is the op's (its .tile line).
struct PrintError {
  std::string message;
};

class KernelPrinter {
public:
  /// With `lineDirectives`, every line of the kernel's body is preceded by
  /// `#line N "FILE"`: the .tile line of the op it prints, so nvcc
  /// -lineinfo maps each instruction to the source.
  KernelPrinter(mlir::LLVM::LLVMFuncOp func, const CudaKernelParams *params, CudaHelpers &helpers,
                llvm::raw_ostream &os, bool lineDirectives = false)
      : helpers(helpers), func(func), params(params), os(os), lineDirectives(lineDirectives) {}
  /// Prints the kernel; on failure sets `error` (with the op's location).
  bool print(std::string &error);

  // Shared by KernelPrinter.cpp and NvvmPrinter.cpp.
  /// The C++ type of `t`; empty when the emitter has none.
  static std::string typeOf(mlir::Type t);
  /// The expression a use of `v` reads: a literal for constants, else its
  /// variable.
  std::string use(mlir::Value v);
  /// `const T name = expr;` for `result`.
  void assign(mlir::Value result, const std::string &expr);
  /// A new line at the current indentation.
  llvm::raw_ostream &line();
  /// Shared-memory address (u32) of pointer `v` (an address-space 3 value).
  std::string smemAddress(mlir::Value v);
  bool fail(mlir::Operation *op, const std::string &message);
  /// A 16-bit element read out of a vector of them with a constant index,
  /// as the 32-bit word holding it (`word`, an expression) and which half
  /// of it (`high`). Given the 16-bit element, nvcc moves a high half out
  /// with a byte permute before using it, where the PTX build's ptxas reads
  /// it in place (mov.b32 {lo, hi}); an f8 pair conversion takes the word
  /// instead.
  struct WordHalf {
    std::string word;
    bool high = false;
  };
  std::optional<WordHalf> wordHalfOf(mlir::Value element);
  /// Whether an op may write its struct result into `from`'s variable in
  /// place: `from` is a mutable register array (a product's or asm's
  /// result, or a loop's carried value) that nothing reads afterwards.
  /// Chained tensor-core products then touch the same registers, with no
  /// copy between a product and the next, which a wgmma in flight forbids.
  bool updatesInPlace(mlir::Value from, mlir::Operation *op);
  /// The C++ variable of `v` (a value declared or carried).
  std::string nameOf(mlir::Value v) { return names.lookup(v); }
  void alias(mlir::Value v, const std::string &name) { names[v] = name; }
  CudaHelpers &helpers;

private:
  mlir::LLVM::LLVMFuncOp func;
  const CudaKernelParams *params;
  llvm::raw_ostream &os;
  llvm::DenseMap<mlir::Value, std::string> names;
  std::set<std::string> taken;
  unsigned counter = 0, indent = 1;
  std::string lastSource;
  bool lineDirectives;
  /// The .tile file and line of the op being printed (0: none yet).
  std::string sourceFile;
  unsigned sourceLine = 0;
  /// Ops not printed where they stand: extracts an in-place asm update
  /// reads directly, products fused into an fma, a masked store's address
  /// printed with its offset apart.
  llvm::DenseSet<mlir::Operation *> elided;
  /// Inline asm whose tied inputs are one struct's members, updated in
  /// place: the struct.
  llvm::DenseMap<mlir::Operation *, mlir::Value> inPlaceAsm;
  void planInPlaceUpdates();
  /// Elides 16-bit elements whose every user reads the word holding them
  /// instead (wordHalfOf).
  void planWordReads();
  /// A sum or difference printed as an fma: the product it fuses.
  llvm::DenseMap<mlir::Operation *, mlir::Operation *> fusedProduct;
  void planFusedProducts();
  /// Masked stores whose address is printed as a base and an immediate
  /// byte offset: the base's element index and the offset.
  llvm::DenseMap<mlir::Operation *, std::pair<mlir::Value, int64_t>> storeOffsets;
  void planStoreOffsets();
  std::string *errorOut = nullptr;

  std::string declare(mlir::Value v, llvm::StringRef hint = "v");
  bool printBlock(mlir::Block &block);
  bool printOp(mlir::Operation *op);
  bool printFor(mlir::Operation *op);
  bool printIf(mlir::Operation *op);
  bool printArith(mlir::Operation *op);
  bool printMath(mlir::Operation *op);
  bool printLLVM(mlir::Operation *op);
  bool printInlineAsm(mlir::LLVM::InlineAsmOp op);
  /// Defined in NvvmPrinter.cpp: nvvm ops and llvm.call_intrinsic of NVVM
  /// intrinsics. Returns false with an error set when it cannot.
  bool printNvvm(mlir::Operation *op);
  bool printIntrinsic(mlir::LLVM::CallIntrinsicOp op);
  void noteSource(mlir::Operation *op);
};

/// The C++ name of shared global `symbol` (no reserved leading `__`).
inline std::string sharedArrayName(llvm::StringRef symbol) { return symbol.ltrim('_').str(); }

/// An llvm.mlir.undef or poison: any value will do.
inline bool isUndefined(mlir::Value v) {
  return mlir::isa_and_nonnull<mlir::LLVM::UndefOp, mlir::LLVM::PoisonOp>(v.getDefiningOp());
}

/// `v` as a C literal of type `t` (ints, floats, splat vectors).
std::string literal(mlir::Attribute value, mlir::Type t);

} // namespace kiln::cuda

#endif
