//===- Driver.cpp - source + schedule to a scheduled module ---------------===//
#include "tools/kiln/Driver.h"
#include "backends/cpu/CpuKernel.h"
#include "backends/ptx/ManifestBuilder.h"
#include "dsl/SourceDiagnostics.h"
#include "dsl/TileDialect.h"
#include "lowering/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "llvm/Support/Path.h"

#include <chrono>

using namespace mlir;
using namespace kiln;

std::unique_ptr<MLIRContext> kiln::makeContext() {
  DialectRegistry registry;
  registry.insert<tile::TileDialect, arith::ArithDialect, func::FuncDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect, LLVM::LLVMDialect, NVVM::NVVMDialect>();
  auto ctx = std::make_unique<MLIRContext>(registry);
  ctx->loadAllAvailableDialects();
  ctx->printOpOnDiagnostic(false); // messages carry file:line:col; an IR dump buries them
  return ctx;
}

bool kiln::compileOp(MLIRContext &context, const std::string &tilePath,
                     const std::string &schedulePath,
                     const std::map<std::string, lang::ExternalValue> &constants, Compiled &out,
                     llvm::raw_ostream &errs) {
  std::string text, error;
  if (!readFile(tilePath, text, error)) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  if (!loadSchedule(schedulePath, out.schedule, errs))
    return false;
  lang::CompileOptions options;
  options.constants = constants;
  options.scheduleParams = out.schedule.params;
  out.module = lang::compileSource(context, tilePath, text, options, errs);
  if (!out.module)
    return false;
  auto kernels = llvm::to_vector(out.module->getOps<tile::KernelOp>());
  tile::KernelOp kernel;
  for (tile::KernelOp k : kernels)
    if (out.schedule.op.name.empty() || k.getSymName() == out.schedule.op.name)
      kernel = k;
  if (!kernel || (out.schedule.op.name.empty() && kernels.size() > 1)) {
    std::string list;
    for (tile::KernelOp k : kernels)
      list += (list.empty() ? "" : ", ") + k.getSymName().str();
    errs << out.schedule.diag(out.schedule.op.pos.line ? out.schedule.op.pos : SrcPos{1, 1},
                              out.schedule.op.name.empty()
                                  ? "the source has several kernels; name one with 'op:' (" + list +
                                        ")"
                                  : "'" + tilePath + "' has no kernel '" + out.schedule.op.name +
                                        "' (it has: " + list + ")");
    return false;
  }
  for (tile::KernelOp k : kernels)
    if (k != kernel)
      k.erase();
  if (!applySchedule(out.schedule, kernel, errs))
    return false;
  // The consts as compiled (defaults and overrides), for harnesses.
  if (auto vals = kernel->getAttrOfType<DictionaryAttr>("tile.consts"))
    for (NamedAttribute a : vals)
      out.constants[a.getName().str()] = cast<IntegerAttr>(a.getValue()).getInt();
  return true;
}

bool kiln::buildForGpu(Compiled &c, bool assemble, GpuBuild &out, llvm::raw_ostream &errs) {
  const TargetDesc &target = *c.schedule.target;
  if (!target.isGpu) {
    errs << c.schedule.diag(c.schedule.targetPos,
                            "target '" + target.name +
                                "' is not a GPU target; PTX needs sm_90a or sm_100a");
    return false;
  }
  PassManager apply(c.module->getContext());
  apply.addPass(createTileApplySchedule());
  if (failed(apply.run(*c.module)))
    return false;
  std::string error;
  tile::KernelOp kernel = *c.module->getOps<tile::KernelOp>().begin();
  if (!buildManifest(kernel, out.manifest, error)) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  out.manifest.schedule = llvm::sys::path::filename(c.schedule.path).str();
  PassManager pm(c.module->getContext());
  buildNvvmPipeline(pm);
  if (failed(pm.run(*c.module)))
    return false;
  c.module->walk([&](LLVM::LLVMFuncOp f) {
    if (auto bytes = f->getAttrOfType<IntegerAttr>(tile::kDynamicSharedBytesAttr))
      out.manifest.dynamicSharedBytes = bytes.getInt();
  });
  auto ptx = emitPtx(*c.module, target, error);
  if (!ptx) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  out.ptx = *ptx;
  if (!assemble)
    return true;
  if (!assemblePtx(out.ptx, target, out.cubin, out.report, error)) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  out.manifest.registers = out.report.registers;
  out.manifest.staticSharedBytes = out.report.sharedBytes;
  out.manifest.spillBytes = out.report.spillStores + out.report.spillLoads;
  return true;
}

bool kiln::runOnCpu(const std::string &tilePath, const std::string &schedulePath,
                    const std::map<std::string, lang::ExternalValue> &constants, RunConfig config,
                    std::vector<CheckResult> &checks, llvm::raw_ostream &errs, double *compileMs,
                    double *runMs) {
  auto t0 = std::chrono::steady_clock::now();
  auto ctx = makeContext();
  SourceDiagnostics diags(*ctx, errs);
  Compiled c;
  if (!compileOp(*ctx, tilePath, schedulePath, constants, c, errs))
    return false;
  diags.addSource(c.schedule.path, c.schedule.text);
  std::string kernelName = (*c.module->getOps<tile::KernelOp>().begin()).getSymName().str();
  const OpHarness *harness = findHarness(kernelName);
  if (!harness) {
    errs << "kiln: error: no golden harness for kernel '" << kernelName << "'\n";
    return false;
  }
  std::string error;
  auto kernel = CpuKernel::compile(*c.module, error);
  if (!kernel) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  auto t1 = std::chrono::steady_clock::now();
  harness->completeConfig(config, c.constants);
  double launchMs = 0;
  Launcher launch = [&](const std::vector<ArgValue> &args, std::string &err) {
    auto s = std::chrono::steady_clock::now();
    bool ok = kernel->launch(args, err);
    launchMs +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
    return ok;
  };
  if (!harness->run(config, launch, checks, error)) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  if (compileMs)
    *compileMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (runMs)
    *runMs = launchMs;
  return true;
}
