//===- CpuKernel.cpp - JIT and launch of CPU kernels ----------------------===//
#include "backends/cpu/CpuKernel.h"
#include "dsl/TileDialect.h"
#include "lowering/Passes.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"

#include <csetjmp>
#include <csignal>
#include <cstring>

using namespace mlir;
using namespace kiln;

CpuKernel::~CpuKernel() = default;

namespace {
/// Where an integer division by zero in a running kernel returns to: the
/// launch reports it as an error instead of the process dying of SIGFPE.
/// Kernels run on the launching thread, one at a time.
thread_local sigjmp_buf *divisionFault = nullptr;

void onDivisionFault(int) {
  if (divisionFault)
    siglongjmp(*divisionFault, 1);
  std::signal(SIGFPE, SIG_DFL);
  std::raise(SIGFPE);
}

/// f32 -> bf16, round to nearest even, for the x86 code LLVM emits when it
/// materialises a bf16 constant (soft-promoted, rounded by this libcall).
/// The bf16 result travels in the low 16 bits of the float return register.
float truncSfBf2(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  uint32_t h = (bits & 0x7fffffff) > 0x7f800000 ? 0x7fc0 // NaN stays a quiet NaN
                                                : (bits + 0x7fff + ((bits >> 16) & 1)) >> 16;
  float out;
  std::memcpy(&out, &h, 4);
  return out;
}

/// The descriptor of a memref<?xT> as the C interface passes it.
struct FlatMemRef {
  void *allocated, *aligned;
  int64_t offset, size, stride;
};
} // namespace

std::unique_ptr<CpuKernel> CpuKernel::compile(ModuleOp module, std::string &error) {
  auto kernels = llvm::to_vector(module.getOps<tile::KernelOp>());
  auto ops = llvm::to_vector(module.getOps<tile::HostOp>());
  if (ops.size() > 1 || (ops.empty() && kernels.size() != 1)) {
    error = "expected one kernel, or one op and its kernels, in the module; found " +
            std::to_string(kernels.size()) + " kernels and " + std::to_string(ops.size()) + " ops";
    return nullptr;
  }
  auto result = std::unique_ptr<CpuKernel>(new CpuKernel());
  for (tile::KernelOp k : kernels)
    result->kernels.push_back(signatureOf(k));
  if (!ops.empty()) {
    result->plan = planOf(ops[0]);
    ops[0].erase(); // a launch plan, not code
  }

  MLIRContext *ctx = module.getContext();
  PassManager pm(ctx);
  buildCpuToLLVMPipeline(pm);
  if (failed(pm.run(module))) {
    error = "the CPU lowering failed";
    return nullptr;
  }

  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);

  ExecutionEngineOptions options;
  options.transformer = makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, nullptr);
  auto engine = ExecutionEngine::create(module, options);
  if (!engine) {
    error = "JIT compilation failed: " + llvm::toString(engine.takeError());
    return nullptr;
  }
  result->engine = std::move(*engine);
  result->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("__truncsfbf2")] = {llvm::orc::ExecutorAddr::fromPtr(&truncSfBf2),
                                         llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  return result;
}

bool CpuKernel::launch(const std::vector<ArgValue> &args, std::string &error) {
  if (plan.empty())
    return launchKernel(kernels[0], args, error);
  std::vector<std::vector<uint8_t>> scratch;
  auto allocate = [&](const ParamInfo &, size_t bytes, ArgValue &out, std::string &) {
    scratch.emplace_back(std::max<size_t>(bytes, 1), 0xff);
    out.data = scratch.back().data();
    return true;
  };
  auto step = [&](size_t i, const std::vector<ArgValue> &kargs, std::string &err) {
    for (const KernelSignature &k : kernels)
      if (k.name == plan.launches[i].kernel)
        return launchKernel(k, kargs, err);
    err = "no kernel '" + plan.launches[i].kernel + "' in the module";
    return false;
  };
  return runOpPlan(plan, args, allocate, step, error);
}

bool CpuKernel::launchKernel(const KernelSignature &sig, const std::vector<ArgValue> &args,
                             std::string &error) {
  std::map<std::string, int64_t> dims;
  if (!bindArguments(sig, args, dims, error))
    return false;
  // Storage for every argument; invokePacked takes a pointer to each.
  std::vector<int64_t> dimValues;
  for (const std::string &d : sig.runtimeDims)
    dimValues.push_back(dims[d]);
  std::vector<FlatMemRef> descs(args.size());
  std::vector<FlatMemRef *> descPtrs(args.size());
  std::vector<float> f32s(args.size());
  std::vector<double> f64s(args.size());
  std::vector<int32_t> i32s(args.size());
  std::vector<int64_t> i64s(args.size());
  std::vector<void *> packed;
  for (int64_t &d : dimValues)
    packed.push_back(&d);
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamInfo &p = sig.params[i];
    if (p.isView) {
      int64_t n = 1;
      for (int64_t s : args[i].shape)
        n *= s;
      descs[i] = {args[i].data, args[i].data, 0, n, 1};
      descPtrs[i] = &descs[i];
      packed.push_back(&descPtrs[i]);
    } else if (p.dtype == DType::F32) {
      f32s[i] = (float)args[i].scalar;
      packed.push_back(&f32s[i]);
    } else if (p.dtype == DType::F64) { // the float64 reference's promoted scalars
      f64s[i] = args[i].scalar;
      packed.push_back(&f64s[i]);
    } else if (p.dtype == DType::I32) {
      i32s[i] = (int32_t)args[i].scalar;
      packed.push_back(&i32s[i]);
    } else {
      i64s[i] = (int64_t)args[i].scalar;
      packed.push_back(&i64s[i]);
    }
  }
  // A kernel may divide by a quotient of dims that is 0 at these dims
  // (`h / (HQ / HKV)` with HQ < HKV): an error naming the dims, not a crash.
  // (On a GPU the runtime refuses such launches before they start: the
  // divisors are computed on the host.)
  struct sigaction fault = {}, before = {};
  fault.sa_handler = onDivisionFault;
  sigemptyset(&fault.sa_mask);
  sigaction(SIGFPE, &fault, &before);
  sigjmp_buf jump;
  if (sigsetjmp(jump, 1)) {
    divisionFault = nullptr;
    sigaction(SIGFPE, &before, nullptr);
    error = "kernel '" + sig.name + "' divided an integer by zero at";
    for (auto &[name, value] : dims)
      error += " " + name + "=" + std::to_string(value);
    error += ": a dim it divides by (or a quotient of dims) is 0 at these dims";
    return false;
  }
  divisionFault = &jump;
  auto err = engine->invokePacked("_mlir_ciface_" + sig.name, packed);
  divisionFault = nullptr;
  sigaction(SIGFPE, &before, nullptr);
  if (err) {
    error = "launch failed: " + llvm::toString(std::move(err));
    return false;
  }
  return true;
}
