//===- Driver.cpp - source + schedule to a scheduled module ---------------===//
#include "tools/kiln/Driver.h"
#include "backends/cpu/CpuKernel.h"
#include "backends/cpu/KernelSignature.h"
#include "backends/cuda/CudaEmitter.h"
#include "backends/cuda/LauncherHeader.h"
#include "backends/cuda/Nvcc.h"
#include "backends/ptx/ManifestBuilder.h"
#include "dsl/SourceDiagnostics.h"
#include "dsl/TileDialect.h"
#include "lowering/Passes.h"
#include "lowering/analysis/KernelWalk.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

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

/// Whether `kernel` has an op of type T.
template <typename T> static bool hasOp(tile::KernelOp kernel) {
  return kernel->walk([](T) { return WalkResult::interrupt(); }).wasInterrupted();
}

/// The kernel of `keep` named `name`, or null.
static tile::KernelOp kernelNamed(llvm::ArrayRef<tile::KernelOp> keep, llvm::StringRef name) {
  for (tile::KernelOp k : keep)
    if (k.getSymName() == name)
      return k;
  return {};
}

/// How kernel `k` accesses its argument `i` ("in", "out", "inout"; "" for
/// a scalar).
static StringRef access(tile::KernelOp k, unsigned i) {
  auto a = k.getArgAttrOfType<StringAttr>(i, tile::kAccessAttr);
  return a ? a.getValue() : StringRef();
}

static bool writes(StringRef access) { return access == "out" || access == "inout"; }

/// The op's launches, in order (none for a kernel alone).
static llvm::SmallVector<tile::LaunchOp> launchesOf(tile::HostOp op) {
  llvm::SmallVector<tile::LaunchOp> launches;
  if (op)
    op.walk([&](tile::LaunchOp l) { launches.push_back(l); });
  return launches;
}

/// Marks the `in` arguments of `launch`'s kernel that are in `written`
/// (kWrittenBesideAttr): written while the kernel runs. A launch's
/// arguments are its kernel's, in order.
static void markWrittenBeside(tile::KernelOp kernel, tile::LaunchOp launch,
                              const llvm::DenseSet<Value> &written) {
  for (auto [i, v] : llvm::enumerate(launch.getArgs()))
    if (written.contains(v) && access(kernel, i) == "in")
      kernel.setArgAttr(i, tile::kWrittenBesideAttr, UnitAttr::get(kernel.getContext()));
}

/// Marks the `in` arguments of each kernel in `beside` that the launch
/// before it writes.
static void markWrittenBeside(tile::HostOp op, const llvm::StringSet<> &beside,
                              llvm::ArrayRef<tile::KernelOp> keep) {
  llvm::SmallVector<tile::LaunchOp> launches = launchesOf(op);
  for (size_t n = 1; n < launches.size(); ++n) {
    tile::KernelOp before = kernelNamed(keep, launches[n - 1].getKernel());
    tile::KernelOp kernel = kernelNamed(keep, launches[n].getKernel());
    if (!before || !kernel || !beside.contains(kernel.getSymName()))
      continue;
    llvm::DenseSet<Value> written;
    for (auto [i, v] : llvm::enumerate(launches[n - 1].getArgs()))
      if (writes(access(before, i)))
        written.insert(v);
    markWrittenBeside(kernel, launches[n], written);
  }
}

/// A kernel launched beside the one before it (`overlap: true`) reads what
/// that one writes only after flags say so: it must wait, and the one before
/// must signal. Flags cost nothing where nothing runs beside: a kernel of
/// `keep` keeps its waits only if it is launched beside the launch before
/// it, its signals only if a launch after it is.
static bool placeFlags(const Schedule &sched, tile::HostOp op, llvm::ArrayRef<tile::KernelOp> keep,
                       llvm::raw_ostream &errs) {
  llvm::SmallVector<llvm::StringRef> order;
  for (tile::LaunchOp l : launchesOf(op))
    order.push_back(l.getKernel());
  llvm::StringSet<> beside, signalling;
  for (const Schedule &section : sched.sections) {
    if (!section.overlap)
      continue;
    if (!op) {
      errs << sched.diag(section.overlapPos, "overlap is for a kernel an op launches after "
                                             "another; the schedule is for a kernel alone");
      return false;
    }
    auto at = llvm::find(order, section.op.name);
    std::string why;
    if (at == order.begin())
      why = "it is the op's first launch: there is no launch to run beside";
    else if (!hasOp<tile::WaitOp>(kernelNamed(keep, section.op.name)))
      why = "it waits on no flag: wait(flags[...], value) before what it reads from '" +
            at[-1].str() + "'";
    else if (!hasOp<tile::SignalOp>(kernelNamed(keep, at[-1])))
      why = "'" + at[-1].str() + "', launched before it, signals no flag";
    if (!why.empty()) {
      errs << sched.diag(section.overlapPos,
                         "kernel '" + section.op.name + "' cannot overlap: " + why);
      return false;
    }
    beside.insert(section.op.name);
  }
  for (auto [i, name] : llvm::enumerate(order))
    if (i + 1 < order.size() && beside.contains(order[i + 1]))
      signalling.insert(name);
  markWrittenBeside(op, beside, keep);
  for (tile::KernelOp k : keep) {
    llvm::SmallVector<Operation *> dead;
    k.walk([&](Operation *o) {
      if ((isa<tile::WaitOp>(o) && !beside.contains(k.getSymName())) ||
          (isa<tile::SignalOp>(o) && !signalling.contains(k.getSymName())))
        dead.push_back(o);
    });
    for (Operation *o : dead)
      o->erase();
  }
  return true;
}

/// The kernel argument a view operand reaches through the views made of it
/// (slices of an argument), or null.
static BlockArgument viewArgument(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto from =
        llvm::find_if(def->getOperands(), [](Value o) { return isa<tile::ViewType>(o.getType()); });
    if (from == def->operand_end())
      return {};
    v = *from;
  }
  return dyn_cast<BlockArgument>(v);
}

/// A kernel of `early` (started early: CUDA's programmatic dependent
/// launch) awaits the launches before it (tile.await_earlier) before its
/// first access to a tensor one of them writes, or reads where it writes:
/// before the first op of its body that makes such an access, so that every
/// thread passes the wait (at the body's end where none does, so that its
/// completion still follows theirs). The kernel launched before each lets
/// it start (tile.allow_later) at its top.
static void placeEarlyStarts(tile::HostOp op, const llvm::StringSet<> &early,
                             llvm::ArrayRef<tile::KernelOp> keep) {
  llvm::SmallVector<tile::LaunchOp> launches = launchesOf(op);
  llvm::DenseMap<Operation *, llvm::DenseSet<unsigned>> conflicts; // kernel -> argument numbers
  llvm::SetVector<Operation *> allowing;
  for (size_t n = 1; n < launches.size(); ++n) {
    tile::KernelOp kernel = kernelNamed(keep, launches[n].getKernel());
    if (!kernel || !early.contains(kernel.getSymName()))
      continue;
    if (tile::KernelOp before = kernelNamed(keep, launches[n - 1].getKernel()))
      allowing.insert(before);
    llvm::DenseSet<Value> written, read;
    for (size_t e = 0; e < n; ++e)
      if (tile::KernelOp k = kernelNamed(keep, launches[e].getKernel()))
        for (auto [i, v] : llvm::enumerate(launches[e].getArgs()))
          (writes(access(k, i)) ? written : read).insert(v);
    llvm::DenseSet<unsigned> &mine = conflicts[kernel];
    for (auto [i, v] : llvm::enumerate(launches[n].getArgs()))
      if (written.contains(v) || (writes(access(kernel, i)) && read.contains(v)))
        mine.insert(i);
    // Written while this kernel runs, until its wait: not read-only (an
    // ld.global.nc of it, ptxas moves above griddepcontrol.wait).
    markWrittenBeside(kernel, launches[n], written);
  }
  for (auto &[k, args] : conflicts) {
    auto kernel = cast<tile::KernelOp>(k);
    Block &body = kernel.getBody().front();
    Operation *first = body.getTerminator();
    for (Operation &top : body.without_terminator()) {
      bool touches =
          top.walk([&](Operation *inner) {
               for (Value v : inner->getOperands())
                 if (BlockArgument a =
                         isa<tile::ViewType>(v.getType()) ? viewArgument(v) : BlockArgument();
                     a && a.getOwner() == &body && args.contains(a.getArgNumber()))
                   return WalkResult::interrupt();
               return WalkResult::advance();
             })
              .wasInterrupted();
      if (touches) {
        first = &top;
        break;
      }
    }
    OpBuilder b(first);
    tile::AwaitEarlierOp::create(b, first->getLoc());
  }
  // At the top: the next launch's programs then take the SMs this one's
  // last programs leave. (At the end, or left to the programs' exit, the
  // multi-token decode's scan gained nothing; bench/RESULTS.md.)
  for (Operation *k : allowing) {
    OpBuilder b = OpBuilder::atBlockBegin(&cast<tile::KernelOp>(k).getBody().front());
    tile::AllowLaterOp::create(b, k->getLoc());
  }
}

/// Checks each `early_start` section and places its waits (placeEarlyStarts).
static bool placeEarlyWaits(const Schedule &sched, tile::HostOp op,
                            llvm::ArrayRef<tile::KernelOp> keep, llvm::raw_ostream &errs) {
  llvm::StringSet<> early;
  for (const Schedule &section : sched.sections) {
    if (!section.earlyStart)
      continue;
    if (!op) {
      errs << sched.diag(section.earlyStartPos,
                         "early_start is for a kernel an op launches after another; the "
                         "schedule is for a kernel alone");
      return false;
    }
    llvm::SmallVector<tile::LaunchOp> launches = launchesOf(op);
    if (!launches.empty() && launches.front().getKernel() == section.op.name) {
      errs << sched.diag(section.earlyStartPos,
                         "kernel '" + section.op.name +
                             "' cannot start early: it is the op's first launch, and nothing "
                             "but its caller's work comes before it");
      return false;
    }
    early.insert(section.op.name);
  }
  if (!early.empty())
    placeEarlyStarts(op, early, keep);
  return true;
}

bool kiln::compileOp(MLIRContext &context, const std::string &tilePath,
                     const std::string &schedulePath,
                     const std::map<std::string, lang::ExternalValue> &constants, Compiled &out,
                     llvm::raw_ostream &errs, const TargetDesc *retarget, bool float64Reference) {
  std::string text, error;
  if (!readFile(tilePath, text, error)) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  out.sourcePath = tilePath;
  out.schedule.retarget = retarget;
  if (!loadSchedule(schedulePath, out.schedule, errs))
    return false;
  if (float64Reference)
    out.schedule = out.schedule.cpuReference();
  lang::CompileOptions options;
  options.constants = constants;
  options.scheduleParams = out.schedule.params;
  options.promoteFloats = float64Reference;
  out.module = lang::compileSource(context, tilePath, text, options, errs);
  if (!out.module)
    return false;
  auto kernels = llvm::to_vector(out.module->getOps<tile::KernelOp>());
  auto ops = llvm::to_vector(out.module->getOps<tile::HostOp>());
  const Schedule &sched = out.schedule;
  std::string wanted = sched.op.name;
  tile::HostOp op;
  tile::KernelOp kernel;
  for (tile::HostOp o : ops)
    if (o.getSymName() == wanted || (wanted.empty() && ops.size() == 1))
      op = o;
  for (tile::KernelOp k : kernels)
    if (!op && (k.getSymName() == wanted || (wanted.empty() && kernels.size() == 1 && ops.empty())))
      kernel = k;
  if (!op && !kernel) {
    std::string list;
    for (tile::HostOp o : ops)
      list += (list.empty() ? "op " : ", op ") + o.getSymName().str();
    for (tile::KernelOp k : kernels)
      list += (list.empty() ? "" : ", ") + k.getSymName().str();
    errs << sched.diag(
        sched.op.pos.line ? sched.op.pos : SrcPos{1, 1},
        wanted.empty()
            ? "the source has several kernels; name one (or an op) with 'op:' (" + list + ")"
            : "'" + tilePath + "' has no kernel or op '" + wanted + "' (it has: " + list + ")");
    return false;
  }
  // Keep what runs: the kernel, or the op and the kernels it launches.
  llvm::SmallVector<tile::KernelOp> keep;
  if (op) {
    op.walk([&](tile::LaunchOp l) {
      for (tile::KernelOp k : kernels)
        if (k.getSymName() == l.getKernel() && !llvm::is_contained(keep, k))
          keep.push_back(k);
    });
  } else {
    keep.push_back(kernel);
  }
  for (const Schedule &section : sched.sections)
    if (!llvm::any_of(keep, [&](tile::KernelOp k) { return k.getSymName() == section.op.name; })) {
      std::string list;
      for (tile::KernelOp k : keep)
        list += (list.empty() ? "" : ", ") + k.getSymName().str();
      errs << sched.diag(section.op.pos,
                         (op ? "op '" + wanted + "' launches no kernel '"
                             : "the schedule is for kernel '" + wanted + "', not '") +
                             section.op.name + "' (it runs: " + list + ")");
      return false;
    }
  if (!placeFlags(sched, op, keep, errs) || !placeEarlyWaits(sched, op, keep, errs))
    return false;
  for (tile::HostOp o : ops)
    if (o != op)
      o.erase();
  for (tile::KernelOp k : kernels)
    if (!llvm::is_contained(keep, k))
      k.erase();
  for (tile::KernelOp k : keep)
    if (!applySchedule(sched.forKernel(k.getSymName().str()), k, errs))
      return false;
  kernel = keep.front();
  // The consts as compiled (defaults and overrides), for harnesses.
  tile::readConsts(kernel, out.constants, out.types);
  return true;
}

void kiln::printIrAfterEveryPass(PassManager &pm) {
  pm.getContext()->disableMultithreading(); // required by the pass manager's IR printing
  pm.enableIRPrinting([](Pass *, Operation *) { return false; },
                      [](Pass *, Operation *) { return true; });
}

/// A kernel's tensor maps as its lowering reports them (kTensorMapsAttr):
/// each [view argument, swizzle, box...], the argument counted after the
/// runtime dims, as the manifest counts kernel parameters.
static void setTensorMapsAsLowered(ArrayAttr maps, KernelManifest &k) {
  int64_t numDims = k.signature.runtimeDims.size();
  k.tensorMaps.clear();
  for (Attribute a : maps) {
    ArrayRef<int64_t> m = cast<DenseI64ArrayAttr>(a).asArrayRef();
    k.tensorMaps.push_back({m[0] - numDims, std::vector<int64_t>(m.begin() + 2, m.end()), m[1]});
  }
}

bool kiln::buildForGpu(Compiled &c, bool assemble, GpuBuild &out, llvm::raw_ostream &errs,
                       bool printIrAfterAll, GpuEmitter emitter, bool lineInfo) {
  const TargetDesc &target = *c.schedule.target;
  if (!target.isGpu) {
    errs << c.schedule.diag(c.schedule.targetPos,
                            "target '" + target.name +
                                "' is not a GPU target; PTX and CUDA need sm_90a or sm_100a");
    return false;
  }
  PassManager apply(c.module->getContext());
  if (printIrAfterAll)
    printIrAfterEveryPass(apply);
  apply.addPass(createTileApplySchedule());
  if (failed(apply.run(*c.module)))
    return false;
  std::string error;
  auto kernels = llvm::to_vector(c.module->getOps<tile::KernelOp>());
  std::string scheduleFile = llvm::sys::path::filename(c.schedule.path).str();
  std::map<std::string, KernelManifest> byName;
  for (tile::KernelOp kernel : kernels) {
    KernelManifest &km = byName[kernel.getSymName().str()];
    if (!buildManifest(kernel, km, error)) {
      errs << "kiln: error: " << error << "\n";
      return false;
    }
    km.schedule = scheduleFile;
  }
  auto ops = llvm::to_vector(c.module->getOps<tile::HostOp>());
  if (ops.empty()) {
    out.manifest = byName.begin()->second;
  } else {
    // An op: its signature and plan, and one kernel manifest per launch.
    KernelManifest &m = out.manifest;
    m = {};
    m.plan = planOf(ops[0]);
    for (OpPlan::Launch &l : m.plan.launches) {
      const Schedule &section = c.schedule.forKernel(l.kernel);
      l.overlap = section.overlap;
      l.early = section.earlyStart;
      if (section.exclusive)
        l.besideSharedBytes = target.smemBytes;
    }
    m.entry = ops[0].getSymName().str();
    m.signature = m.plan.signature;
    m.target = target.name;
    m.schedule = scheduleFile;
    m.grid = {json::Value::num(1)};
    // Every kernel's manifest has the consts and schedule params it was built with.
    for (const OpPlan::Launch &l : m.plan.launches) {
      m.kernels.push_back(byName.at(l.kernel));
      for (auto &[k, v] : m.kernels.back().consts)
        m.consts[k] = v;
      for (auto &[k, t] : m.kernels.back().types)
        m.types[k] = t;
      // The op names the tensor-core instruction any kernel uses, and its
      // tolerance follows any kernel whose products round operands.
      if (m.mma.empty() || m.mma == "none" || m.mma == "simt")
        m.mma = m.kernels.back().mma;
      m.roundedOperands |= m.kernels.back().roundedOperands;
    }
    ops[0].erase(); // a launch plan for the runtime, not device code
  }
  PassManager pm(c.module->getContext());
  if (printIrAfterAll)
    printIrAfterEveryPass(pm);
  buildGpuKernelPipeline(pm);
  // The CUDA emitter's half changes only index arithmetic: the kernels'
  // attributes read below are the same either way.
  if (emitter == GpuEmitter::Cuda)
    buildCudaSourcePipeline(pm);
  if (failed(pm.run(*c.module)))
    return false;
  c.module->walk([&](LLVM::LLVMFuncOp f) {
    auto bytes = f->getAttrOfType<IntegerAttr>(tile::kDynamicSharedBytesAttr);
    if (!bytes)
      return;
    if (auto n = f->getAttrOfType<IntegerAttr>(tile::kLayoutConversionsAttr))
      out.layoutConversions[f.getSymName().str()] = n.getInt();
    std::vector<json::Value> divisors;
    if (auto exprs = f->getAttrOfType<ArrayAttr>(tile::kDivisorsAttr))
      for (Attribute e : exprs)
        divisors.push_back(gridExprJson(e));
    auto maps = f->getAttrOfType<ArrayAttr>(tile::kTensorMapsAttr);
    // The kernel's manifest: the build's own, or the op's for this entry.
    auto complete = [&](KernelManifest &k) {
      k.dynamicSharedBytes = bytes.getInt();
      k.divisors = divisors;
      if (maps)
        setTensorMapsAsLowered(maps, k);
    };
    if (!out.manifest.isOp())
      complete(out.manifest);
    for (KernelManifest &k : out.manifest.kernels)
      if (k.entry == f.getSymName())
        complete(k);
  });
  if (emitter == GpuEmitter::Cuda) {
    CudaSourceInfo info;
    out.origin = "Generated by Kiln from " + llvm::sys::path::filename(c.sourcePath).str() +
                 " with schedule " + scheduleFile + " for " + target.name + ".";
    info.banner = {out.origin,
                   "Every line comes from lowering the op's tile IR; regenerate rather than edit."};
    info.lineDirectives = lineInfo;
    if (out.manifest.isOp())
      for (const KernelManifest &k : out.manifest.kernels)
        info.params[k.entry] = cudaKernelParams(k);
    else
      info.params[out.manifest.entry] = cudaKernelParams(out.manifest);
    llvm::raw_string_ostream os(out.cuda);
    if (!emitCudaSource(*c.module, info, os, error)) {
      errs << "kiln: error: " << error << "\n";
      return false;
    }
    if (assemble && !compileCudaSource(out.cuda, target, out.cubin, out.report, error, lineInfo)) {
      errs << "kiln: error: " << error << "\n";
      return false;
    }
  } else {
    PassManager toLLVM(c.module->getContext());
    if (printIrAfterAll)
      printIrAfterEveryPass(toLLVM);
    buildGpuKernelToLLVMPipeline(toLLVM);
    // A subprogram on every kernel: the ops' .tile locations become `.file`
    // and `.loc` directives (DebugDirectivesOnly, what clang's
    // -gline-tables-only gives NVPTX: no DWARF sections, no `debug` target,
    // so ptxas optimizes as before), which LLVM keeps through O3.
    if (lineInfo)
      toLLVM.addPass(LLVM::createDIScopeForLLVMFuncOpPass(
          {/*emissionKind=*/LLVM::DIEmissionKind::DebugDirectivesOnly}));
    if (failed(toLLVM.run(*c.module)))
      return false;
    auto ptx = emitPtx(*c.module, target, error);
    if (!ptx) {
      errs << "kiln: error: " << error << "\n";
      return false;
    }
    out.ptx = *ptx;
    if (assemble && !assemblePtx(out.ptx, target, out.cubin, out.report, error, lineInfo)) {
      errs << "kiln: error: " << error << "\n";
      return false;
    }
  }
  if (!assemble)
    return true;
  out.manifest.registers = out.report.registers;
  out.manifest.staticSharedBytes = out.report.sharedBytes;
  out.manifest.spillBytes = out.report.spillStores + out.report.spillLoads;
  for (KernelManifest &k : out.manifest.kernels)
    for (const PtxasReport &e : out.report.entries)
      if (e.kernel == k.entry) {
        k.registers = e.registers;
        k.staticSharedBytes = e.sharedBytes;
        k.spillBytes = e.spillStores + e.spillLoads;
      }
  return true;
}

const OpHarness *kiln::harnessFor(const std::string &kernelName, const DataOptions &data) {
  return data.any() ? nullptr : findHarness(kernelName);
}

bool kiln::runOnCpu(const std::string &tilePath, const std::string &schedulePath,
                    const std::map<std::string, lang::ExternalValue> &constants, RunConfig config,
                    std::vector<CheckResult> &checks, llvm::raw_ostream &errs, double *compileMs,
                    double *runMs, const DataOptions &data) {
  auto t0 = std::chrono::steady_clock::now();
  auto ctx = makeContext();
  SourceDiagnostics diags(*ctx, errs);
  Compiled c;
  if (!compileOp(*ctx, tilePath, schedulePath, constants, c, errs))
    return false;
  diags.addSource(c.schedule.path, c.schedule.text);
  auto ops = llvm::to_vector(c.module->getOps<tile::HostOp>());
  std::string kernelName = ops.empty()
                               ? (*c.module->getOps<tile::KernelOp>().begin()).getSymName().str()
                               : ops[0].getSymName().str();
  const OpHarness *harness = harnessFor(kernelName, data);
  // Asked before compiling: the CPU lowering replaces the products.
  bool rounded = roundsMatrixOperands(*c.module);
  std::string error;
  auto kernel = CpuKernel::compile(*c.module, error);
  if (!kernel) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  auto t1 = std::chrono::steady_clock::now();
  double launchMs = 0;
  Launcher launch = [&](const std::vector<ArgValue> &args, std::string &err) {
    auto s = std::chrono::steady_clock::now();
    bool ok = kernel->launch(args, err);
    launchMs +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
    return ok;
  };
  if (harness) {
    if (!harness->completeConfig(config, c.constants, c.types, rounded, error) ||
        !harness->run(config, launch, checks, error)) {
      errs << "kiln: error: " << error << "\n";
      return false;
    }
  } else {
    if (!runAgainstReference(tilePath, schedulePath, constants, kernel->signature(), rounded,
                             config, data, launch, checks, errs))
      return false;
  }
  if (compileMs)
    *compileMs = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (runMs)
    *runMs = launchMs;
  return true;
}

/// What one call of a compiled op takes: its dims, then each parameter's
/// name and type, printed.
static std::string callSignature(Compiled &c, std::vector<std::string> &dims, std::string &name) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto print = [&](auto entry) {
    name = entry.getSymName().str();
    for (mlir::Attribute d : entry.getDimNames())
      dims.push_back(mlir::cast<mlir::StringAttr>(d).getValue().str());
    os << entry.getDimNames() << entry.getFunctionType();
    if (auto args = entry.getArgAttrs())
      os << *args;
  };
  auto ops = llvm::to_vector(c.module->getOps<tile::HostOp>());
  if (!ops.empty())
    print(ops.front());
  else
    print(*c.module->getOps<tile::KernelOp>().begin());
  return text;
}

bool kiln::checkSelection(const Selection &sel,
                          const std::map<std::string, lang::ExternalValue> &constants,
                          llvm::raw_ostream &errs) {
  std::string first, firstRule;
  for (const SelectionRule &rule : sel.rules) {
    auto ctx = makeContext();
    Compiled c;
    if (!compileOp(*ctx, sel.sourcePath, rule.schedulePath, constants, c, errs))
      return false;
    if (c.schedule.target->name != sel.target) {
      errs << sel.diag(rule.pos, "schedule '" + rule.schedule + "' is for " +
                                     c.schedule.target->name + ", the selection for " + sel.target);
      return false;
    }
    std::vector<std::string> dims;
    std::string name;
    std::string signature = callSignature(c, dims, name);
    if (firstRule.empty()) {
      first = signature;
      firstRule = rule.schedule;
    } else if (signature != first) {
      errs << sel.diag(rule.pos, "schedule '" + rule.schedule +
                                     "' builds an op whose parameters differ from those of '" +
                                     firstRule + "': one call must fit every rule");
      return false;
    }
    for (const SelectionCondition &cond : rule.when)
      for (size_t k = 0; k < cond.names.size(); ++k)
        if (cond.names[k] != "sms" &&
            std::find(dims.begin(), dims.end(), cond.names[k]) == dims.end()) {
          std::string known;
          for (const std::string &d : dims)
            known += d + ", ";
          errs << sel.diag(cond.namePos[k], "'" + cond.names[k] + "' is not a runtime dim of " +
                                                name + " (" + known + "or sms)");
          return false;
        }
  }
  return true;
}

SelectionManifest kiln::selectionManifest(const Selection &sel) {
  SelectionManifest m;
  m.target = sel.target;
  m.source = sel.sourcePath;
  for (const SelectionRule &r : sel.rules) {
    SelectionManifest::Rule rule;
    rule.schedule = r.schedule;
    rule.manifest = r.schedule + ".json";
    for (const SelectionCondition &c : r.when)
      rule.when.push_back({c.text, c.rpn});
    m.rules.push_back(std::move(rule));
  }
  return m;
}
