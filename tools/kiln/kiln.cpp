//===- kiln.cpp - the Kiln command-line tool ------------------------------===//
#include "backends/cpu/CpuKernel.h"
#include "backends/cuda/LauncherHeader.h"
#include "backends/runtime/GpuLauncher.h"
#include "backends/runtime/Json.h"
#include "backends/runtime/Selection.h"
#include "dsl/SourceDiagnostics.h"
#include "dsl/TileDialect.h"
#include "dsl/schedule/Selection.h"
#include "lowering/Passes.h"
#include "tools/kiln/Compare.h"
#include "tools/kiln/Driver.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <new>
#include <stdexcept>

using namespace mlir;
using namespace kiln;

static const char *kUsage = R"(kiln - a tile-level kernel compiler

usage:
  kiln compile --select SELECTION.yaml --emit cubin|ptx -o DIR/NAME.json
      Builds every schedule a selection file names into DIR (SCHEDULE.cubin
      and .json each) and writes NAME.json, the selection manifest: its
      rules in order, which kiln-gpu and kiln.load run as one op, each call
      running the schedule its shape picks (docs/schedule.md, "Selections").

  kiln compile OP.tile --schedule S.yaml [--emit mlir|llvm|ptx|cuda|cubin]
               [--via ptx|cuda] [-D NAME=VALUE]... [--retarget TARGET]
               [--lineinfo] [--print-ir-after-all] [-o FILE]
      Compile the kernel a schedule names. --emit mlir (default) prints the
      scheduled tile IR; --emit llvm prints the LLVM dialect the schedule's
      target lowers to (CPU or NVVM); --emit ptx the PTX of a GPU schedule;
      --emit cuda its CUDA C++ source (one translation unit, the same
      planned kernels as the PTX: nvcc -arch=sm_90a or sm_100a compiles it);
      --emit cubin assembles the PTX with ptxas (--via cuda: compiles the
      CUDA source with nvcc instead; needs -o) and prints the register /
      shared memory / spill report. With -o, ptx, cuda and cubin also write
      FILE's manifest (FILE with .json): entry, parameters, grid, block.
      --lineinfo gives every PTX instruction its .tile line (.loc), or every
      line of the CUDA source its .tile line (#line), and keeps them in the
      cubin (-lineinfo), so Nsight Compute attributes its samples to the
      source's lines.
      --print-ir-after-all prints the IR after every pass to stderr.
      --retarget TARGET compiles the schedule's twin for TARGET: the same
      tiles, roles and pipelines, its tensor-core mma switched to TARGET's
      (tcgen05 <-> wgmma), its tensor-memory budget and `tensor_memory`
      vars dropped; so an sm_100a schedule runs and is checked on an H100.

  kiln run OP.tile --schedule S.yaml [--target cpu|sm_90a|sm_100a]
           [--dims NAME=N,...] [-D NAME=VALUE]... [--seed N]
           [--saturate-gates] [--slow-gates] [--skip FRACTION] [--seqlens L,...]
           [--no-initial-state] [--inputs DIR] [--save DIR] [--expect DIR]
           [--range NAME=LO:HI]... [--json]
      Run the op on fresh random inputs (outputs poisoned with NaN first) and
      check it. An op with a golden harness (GDN) is checked against it; any
      other op against its float64 reference: the same source and tiling
      with every float type promoted to f64, run on the CPU backend. Inputs
      are drawn from the signature (floats normal, integers from their
      `range` in the source or --range), runtime dims come from --dims or
      the source's first `check` line. --target cpu (the default) runs any
      schedule's tiling on the CPU backend; a GPU target must match the
      schedule's and runs its cubin on the GPU (needs one). Prints the
      relative error of every output against its tolerance; exits 0 when
      all pass, 1 when any fails, 2 on bad input or a missing GPU.
      --inputs DIR reads parameter NAME from DIR/NAME.npy where present (an
      inout's NAME.in.npy first; dtype, rank and dims checked; bf16 as uint16
      bits or ml_dtypes.bfloat16); --save DIR writes every parameter as
      DIR/NAME.npy (inputs as used, outputs after the run, an inout also as
      NAME.in.npy before it) and each output's reference as NAME.ref.npy;
      --expect DIR also checks each output NAME against DIR/NAME.npy. These
      run an op with a harness against its float64 reference too. --json
      prints the checks as one JSON object.

  kiln compare OP.tile S1.yaml S2.yaml... [--dims NAME=N,...] [--json]
               [--measured BENCH.json] [--emit cuda]
  kiln compare SELECTION.yaml [--dims NAME=N,...] [--sms N] [--measured BENCH.json] ...
      Schedules of one op side by side: registers, shared memory and spills
      (ptxas), the PTX instruction mix (global loads / stores by width, FMA,
      shuffles, special functions, barriers, TMA, mbarrier, MMA), the layout
      conversions each kernel's lowering placed (shared-memory round trips),
      the roofline floor (fewest bytes and the tile IR's flops over the
      target's bandwidth and rate), the largest output difference from the
      other schedules on the CPU backend (same inputs), and the GPU time
      where a GPU is present; for an op of several kernels, each kernel's
      registers, shared memory and spills.
      --json prints the same as JSON. --measured BENCH.json (written by
      bench/prefill_bench.py --json on a GPU machine) adds each schedule's
      measured times per shape, or its --retarget twin's (an sm_100a
      schedule's H100 twin, a build named NAME_twin), beside the FLA peer's
      in the same run. --emit cuda also builds each GPU schedule through
      its CUDA C++ source with nvcc and shows those kernels' registers,
      shared memory and spills beside the PTX build's. Exits 1 when a
      schedule fails to build.
      Given a selection file (docs/schedule.md, "Selections") in place of
      OP.tile and schedules, compares its schedules and first prints its
      rules, the schedule --dims picks on a GPU of --sms multiprocessors
      (default 132) and, with --measured, the schedule each measured shape
      picks beside the fastest measured there.

  kiln check [OPS_DIR]
      The main job: compile every bundled op (OPS_DIR/*/*.tile, default ops)
      with each of its schedules (OPS_DIR/<op>/schedules/*.yaml) and run each
      on the CPU backend against its golden harness, or at each `check`
      shape of its source against its float64 reference, and check each
      op's selections (OPS_DIR/<op>/select/*.yaml) against it; prints a
      table.

options:
  -D NAME=VALUE     override a `const` of the source (K, V, USE_QK_L2NORM=0)
  --dims B=7,H=4    runtime dims for `run` (defaults per op)
  --range NAME=LO:HI  draw integer input NAME from [LO, HI)
  --seed N          random seed (default 1)
  --saturate-gates  draw the raw gates a, b with standard deviation 30
  --slow-gates      draw the raw gate a around -8: little decay over thousands
                    of tokens (long-memory heads; prefill's segments must carry
                    their start state exactly)
  --skip FRACTION   share of requests with a negative slot index (decode)
  --seqlens 1,64,7  lengths of the packed sequences (prefill; default 1,64,70,7)
  --no-initial-state  start every sequence from a zero state (prefill)
  -h, --help        this text
)";

namespace {

int usageError(const std::string &msg, int argIndex) {
  llvm::errs() << "kiln: error: " << msg;
  if (argIndex >= 0)
    llvm::errs() << " (command line argument " << argIndex << ")";
  llvm::errs() << "\nrun 'kiln --help' for usage\n";
  return 2;
}

struct Args {
  std::string command, input, schedule, emit = "mlir", target = "cpu", output, retarget;
  std::string via = "ptx"; // --emit cubin: assembled from PTX or compiled from CUDA
  std::map<std::string, lang::ExternalValue> constants;
  RunConfig run; // --dims, --seed and the other run options
  bool printAfterAll = false, json = false, lineInfo = false;
  std::vector<std::string> schedules; // compare
  std::string measured;               // compare --measured
  std::string select;                 // compile --select: a selection file
  int64_t sms = 132;                  // compare: the multiprocessors a selection assumes
  DataOptions data;                   // run --inputs, --save, --expect, --range
};

/// --range NAME=LO:HI into `data`; false with `error` on a malformed one.
bool parseRange(const std::string &v, DataOptions &data, std::string &error) {
  size_t eq = v.find('='), colon = v.find(':', eq == std::string::npos ? 0 : eq);
  int64_t lo, hi;
  if (eq == std::string::npos || eq == 0 || colon == std::string::npos ||
      !parseInteger(v.substr(eq + 1, colon - eq - 1), lo) ||
      !parseInteger(v.substr(colon + 1), hi)) {
    error = "--range takes NAME=LO:HI (integers, HI excluded), got '" + v + "'";
    return false;
  }
  if (lo >= hi) {
    error = "--range " + v + " is empty: LO must be below HI";
    return false;
  }
  data.ranges[v.substr(0, eq)] = {lo, hi};
  return true;
}

int parseArgs(int argc, char **argv, Args &a) {
  if (argc < 2)
    return usageError("missing command (compile, run or check)", -1);
  a.command = argv[1];
  if (a.command == "-h" || a.command == "--help") {
    llvm::outs() << kUsage;
    return 0;
  }
  if (a.command != "compile" && a.command != "run" && a.command != "check" &&
      a.command != "compare")
    return usageError("unknown command '" + a.command + "' (compile, run, compare or check)", 1);
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) -> bool {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string v, runError;
    if (arg == "-h" || arg == "--help") {
      llvm::outs() << kUsage;
      return 0;
    } else if (arg == "--schedule" || arg == "-s") {
      if (!value(a.schedule))
        return usageError(arg + " needs a file", i);
    } else if (arg == "--emit") {
      if (!value(a.emit))
        return usageError("--emit needs mlir, llvm, ptx, cuda or cubin", i);
      if (a.emit != "mlir" && a.emit != "llvm" && a.emit != "ptx" && a.emit != "cuda" &&
          a.emit != "cubin")
        return usageError("--emit takes mlir, llvm, ptx, cuda or cubin, not '" + a.emit + "'", i);
    } else if (arg == "--via") {
      if (!value(a.via) || (a.via != "ptx" && a.via != "cuda"))
        return usageError("--via takes ptx or cuda", i);
    } else if (arg == "--target") {
      if (!value(a.target))
        return usageError("--target needs a target", i);
      if (!lookupTarget(a.target))
        return usageError("unknown target '" + a.target + "' (" + targetNames() + ")", i);
    } else if (arg == "--retarget") {
      if (!value(a.retarget))
        return usageError("--retarget needs a target", i);
      const TargetDesc *t = lookupTarget(a.retarget);
      if (!t || !t->isGpu)
        return usageError(
            "--retarget takes a GPU target (sm_90a, sm_100a), not '" + a.retarget + "'", i);
      if (a.command != "compile")
        return usageError("--retarget is an option of kiln compile", i);
    } else if (arg == "-o") {
      if (!value(a.output))
        return usageError("-o needs a file", i);
    } else if (arg == "-D" || arg.rfind("-D", 0) == 0) {
      if (arg == "-D" && !value(v))
        return usageError("-D needs NAME=VALUE", i);
      if (arg != "-D")
        v = arg.substr(2);
      size_t eq = v.find('=');
      int64_t n = 0;
      if (eq == std::string::npos || eq == 0)
        return usageError("-D takes NAME=INTEGER or NAME=TYPE, got '" + v + "'", i);
      std::string value = v.substr(eq + 1);
      // A word is an element type for a dtype const (-D STATE=bf16); the
      // compiler checks it against the const's declaration.
      bool word = !value.empty() && std::isalpha((unsigned char)value[0]);
      if (!word && !parseInteger(value, n))
        return usageError("-D takes NAME=INTEGER or NAME=TYPE, got '" + v + "'", i);
      if (!a.constants
               .emplace(v.substr(0, eq),
                        lang::ExternalValue{n, word ? value : "", "command line -D " + v})
               .second)
        return usageError("-D names " + v.substr(0, eq) + " twice", i);
    } else if (parseRunOption(argc, argv, i, a.run, runError)) {
      if (!runError.empty())
        return usageError(runError, i);
    } else if (arg == "--inputs" || arg == "--save" || arg == "--expect") {
      std::string &dir = arg == "--inputs" ? a.data.inputsDir
                         : arg == "--save" ? a.data.saveDir
                                           : a.data.expectDir;
      if (!value(dir))
        return usageError(arg + " needs a directory", i);
      if (a.command != "run")
        return usageError(arg + " is an option of kiln run", i);
    } else if (arg == "--range") {
      if (!value(v))
        return usageError("--range needs NAME=LO:HI", i);
      if (a.command != "run")
        return usageError("--range is an option of kiln run", i);
      if (!parseRange(v, a.data, runError))
        return usageError(runError, i);
    } else if (arg == "--select") {
      if (!value(a.select))
        return usageError("--select needs a selection file", i);
      if (a.command != "compile")
        return usageError("--select is an option of kiln compile (kiln compare takes the "
                          "selection file in place of OP.tile)",
                          i);
    } else if (arg == "--sms") {
      if (!value(v) || !parseInteger(v, a.sms) || a.sms < 1 || a.sms > 4096)
        return usageError("--sms needs a multiprocessor count in [1, 4096]", i);
      if (a.command != "compare")
        return usageError("--sms is an option of kiln compare", i);
    } else if (arg == "--print-ir-after-all") {
      a.printAfterAll = true;
    } else if (arg == "--lineinfo") {
      a.lineInfo = true;
      if (a.command != "compile")
        return usageError("--lineinfo is an option of kiln compile", i);
    } else if (arg == "--json") {
      a.json = true;
    } else if (arg == "--measured") {
      if (!value(a.measured))
        return usageError("--measured needs a bench JSON file", i);
      if (a.command != "compare")
        return usageError("--measured is an option of kiln compare", i);
    } else if (!arg.empty() && arg[0] == '-') {
      return usageError("unknown option '" + arg + "'", i);
    } else if (a.input.empty()) {
      a.input = arg;
    } else if (a.command == "compare") {
      a.schedules.push_back(arg);
    } else {
      return usageError("unexpected argument '" + arg + "'", i);
    }
  }
  if (a.command == "compare") {
    bool selection = llvm::StringRef(a.input).ends_with(".yaml");
    if (a.input.empty() || (a.schedules.empty() && !selection))
      return usageError("compare needs OP.tile and at least one schedule, or a selection file", -1);
    if (selection && !a.schedules.empty())
      return usageError("compare takes a selection file alone (its rules name the schedules)", -1);
  } else if (!a.select.empty()) {
    if (!a.input.empty() || !a.schedule.empty())
      return usageError("--select names the source and the schedules: give no OP.tile or "
                        "--schedule",
                        -1);
    if (a.emit != "cubin" && a.emit != "ptx")
      return usageError("--select builds every schedule it names: --emit cubin or ptx", -1);
    if (!llvm::StringRef(a.output).ends_with(".json"))
      return usageError("--select writes a selection manifest: name it with -o DIR/NAME.json", -1);
  } else if (a.command != "check") {
    if (a.input.empty())
      return usageError("missing the .tile source", -1);
    if (a.schedule.empty())
      return usageError("missing --schedule S.yaml", -1);
  }
  return -1;
}

bool writeFile(const std::string &path, const std::string &bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec) {
    llvm::errs() << "kiln: error: cannot write '" << path << "': " << ec.message() << "\n";
    return false;
  }
  out << bytes;
  return true;
}

/// Prints ptxas's report of a cubin build, a line per kernel.
void printPtxasReport(const GpuBuild &build) {
  // One line per kernel: an op's kernels each get theirs.
  std::vector<std::pair<const PtxasReport *, const KernelManifest *>> lines;
  if (build.manifest.isOp())
    for (const KernelManifest &k : build.manifest.kernels)
      for (const PtxasReport &e : build.report.entries)
        if (e.kernel == k.entry)
          lines.push_back({&e, &k});
  if (lines.empty())
    lines.push_back({&build.report, &build.manifest});
  for (auto [r, k] : lines) {
    llvm::errs() << "kiln: " << k->entry << " (" << build.manifest.schedule << ") for "
                 << build.manifest.target << ": " << r->registers << " registers, "
                 << r->sharedBytes << " bytes static shared memory, " << r->stackBytes
                 << " bytes stack, " << r->spillStores << " bytes spill stores, " << r->spillLoads
                 << " bytes spill loads";
    if (k->dynamicSharedBytes)
      llvm::errs() << "; " << k->dynamicSharedBytes
                   << " bytes dynamic shared memory (pipeline rings, staging)";
    if (r->injectedWaits)
      llvm::errs() << "; " << r->injectedWaits
                   << " tensor-core waits added by ptxas (a wgmma's registers used "
                      "before its wait)";
    if (!r->wgmmaSerialized.empty())
      llvm::errs() << "; every wgmma serialized by ptxas (" << r->wgmmaSerialized << ")";
    llvm::errs() << "\n";
  }
}

/// Writes a GPU build as --emit `emit` says: the PTX, CUDA source or cubin
/// to `output` (stdout when empty) and its manifest beside it (NAME.json;
/// a CUDA build's launcher header NAME.h too).
bool writeGpuBuild(GpuBuild &build, const std::string &emit, const std::string &output) {
  if (emit == "cubin")
    printPtxasReport(build);
  const std::string &text = emit == "cuda" ? build.cuda : build.ptx;
  if (output.empty()) {
    llvm::outs() << text;
    return true;
  }
  build.manifest.image = llvm::sys::path::filename(output).str();
  llvm::SmallString<256> manifestPath(output);
  llvm::sys::path::replace_extension(manifestPath, "json");
  if (emit == "cuda") {
    // NAME.h beside NAME.cu: the host launcher.
    llvm::SmallString<256> headerPath(output);
    llvm::sys::path::replace_extension(headerPath, "h");
    std::string header;
    llvm::raw_string_ostream hs(header);
    printLauncherHeader(build.manifest, llvm::sys::path::filename(output).str(), {build.origin},
                        hs);
    if (!writeFile(headerPath.str().str(), header))
      return false;
  }
  return writeFile(output, emit == "cubin" ? build.cubin : text) &&
         writeFile(manifestPath.str().str(), json::print(build.manifest.toJson()));
}

/// kiln compile --select: every schedule of the selection built beside the
/// selection manifest (-o DIR/NAME.json), which lists them in rule order.
int compileSelectionCommand(const Args &a) {
  Selection sel;
  if (!loadSelection(a.select, sel, llvm::errs()) ||
      !checkSelection(sel, a.constants, llvm::errs()))
    return 1;
  llvm::SmallString<256> dir(a.output);
  llvm::sys::path::remove_filename(dir);
  SelectionManifest out = selectionManifest(sel);
  std::map<std::string, std::string> built; // schedule -> its op; built once
  for (const SelectionRule &rule : sel.rules) {
    if (built.count(rule.schedule))
      continue;
    auto ctx = makeContext();
    SourceDiagnostics diags(*ctx, llvm::errs());
    Compiled c;
    GpuBuild build;
    if (!compileOp(*ctx, sel.sourcePath, rule.schedulePath, a.constants, c, llvm::errs()))
      return 1;
    diags.addSource(c.schedule.path, c.schedule.text);
    if (!buildForGpu(c, a.emit == "cubin", build, llvm::errs()))
      return 1;
    built[rule.schedule] = build.manifest.entry;
    llvm::SmallString<256> image(dir);
    llvm::sys::path::append(image, rule.schedule + (a.emit == "cubin" ? ".cubin" : ".ptx"));
    if (!writeGpuBuild(build, a.emit, image.str().str()))
      return 1;
  }
  for (SelectionManifest::Rule &rule : out.rules)
    rule.op = built[rule.schedule];
  out.op = out.rules.front().op;
  return writeFile(a.output, json::print(out.toJson())) ? 0 : 1;
}

int compileCommand(const Args &a) {
  if (!a.select.empty())
    return compileSelectionCommand(a);
  auto ctx = makeContext();
  SourceDiagnostics diags(*ctx, llvm::errs());
  Compiled c;
  if (!compileOp(*ctx, a.input, a.schedule, a.constants, c, llvm::errs(),
                 a.retarget.empty() ? nullptr : lookupTarget(a.retarget)))
    return 1;
  diags.addSource(c.schedule.path, c.schedule.text);
  std::string text;
  llvm::raw_string_ostream os(text);
  PassManager pm(ctx.get());
  if (a.printAfterAll)
    printIrAfterEveryPass(pm);
  bool gpu = c.schedule.target->isGpu;
  if (a.via != "ptx" && a.emit != "cubin")
    return usageError("--via chooses how --emit cubin builds; --emit " + a.emit + " takes none",
                      -1);
  if (a.lineInfo && !(gpu && (a.emit == "ptx" || a.emit == "cuda" || a.emit == "cubin")))
    return usageError("--lineinfo gives a GPU schedule's PTX, CUDA source or cubin its source "
                      "lines",
                      -1);
  if (a.emit == "ptx" || a.emit == "cuda" || a.emit == "cubin") {
    if (a.emit == "cubin" && a.output.empty())
      return usageError("--emit cubin writes a binary: name it with -o FILE", -1);
    GpuBuild build;
    GpuEmitter emitter = a.emit == "cuda" || (a.emit == "cubin" && a.via == "cuda")
                             ? GpuEmitter::Cuda
                             : GpuEmitter::Ptx;
    if (!buildForGpu(c, a.emit == "cubin", build, llvm::errs(), a.printAfterAll, emitter,
                     a.lineInfo))
      return 1;
    return writeGpuBuild(build, a.emit, a.output) ? 0 : 1;
  }
  if (a.emit != "mlir") // an op's launch plan is host work: no LLVM of its own
    for (tile::HostOp op : llvm::to_vector(c.module->getOps<tile::HostOp>()))
      op.erase();
  if (a.emit == "mlir") {
    pm.addPass(createTileApplySchedule());
  } else if (gpu) {
    buildNvvmPipeline(pm);
  } else {
    buildCpuToLLVMPipeline(pm);
  }
  if (failed(pm.run(*c.module)))
    return 1;
  c.module->print(os);
  if (a.output.empty()) {
    llvm::outs() << text;
    return 0;
  }
  return writeFile(a.output, text) ? 0 : 1;
}

/// Prints a run's checks: a line each, or with --json one object.
bool reportChecks(const Args &a, const std::string &target,
                  const std::vector<CheckResult> &checks) {
  if (!a.json)
    return printChecks(checks);
  json::Value out = json::Value::obj(), list = json::Value::arr();
  bool ok = true;
  for (const CheckResult &c : checks) {
    json::Value v = json::Value::obj();
    v.set("name", json::Value::str(c.what));
    v.set("rel_error", json::Value::num(std::isfinite(c.relError) ? c.relError : -1));
    v.set("tolerance", json::Value::num(c.tolerance));
    v.set("nan", json::Value::flag(c.nan));
    v.set("ok", json::Value::flag(c.ok()));
    list.array.push_back(std::move(v));
    ok &= c.ok();
  }
  out.set("tile", json::Value::str(a.input));
  out.set("schedule", json::Value::str(a.schedule));
  out.set("target", json::Value::str(target));
  out.set("checks", std::move(list));
  out.set("ok", json::Value::flag(ok));
  llvm::outs() << json::print(out);
  return ok;
}

int runOnGpuCommand(const Args &a, RunConfig cfg) {
  auto ctx = makeContext();
  SourceDiagnostics diags(*ctx, llvm::errs());
  Compiled c;
  if (!compileOp(*ctx, a.input, a.schedule, a.constants, c, llvm::errs()))
    return 2;
  diags.addSource(c.schedule.path, c.schedule.text);
  if (c.schedule.target->name != a.target) {
    llvm::errs() << c.schedule.diag(c.schedule.targetPos,
                                    "this schedule is for '" + c.schedule.target->name +
                                        "', but --target asks for '" + a.target + "'");
    return 2;
  }
  GpuBuild build;
  if (!buildForGpu(c, /*assemble=*/true, build, llvm::errs()))
    return 2;
  std::string error;
  auto kernel = GpuKernel::load(build.manifest, build.cubin, error);
  if (!kernel) {
    llvm::errs() << "kiln: error: cannot run on " << a.target << ": " << error
                 << " (the kernel compiled: " << build.report.registers
                 << " registers; `kiln compile --emit cubin` and kiln-gpu run it elsewhere)\n";
    return 2;
  }
  double ms = 0;
  Launcher launch = [&](const std::vector<ArgValue> &args, std::string &err) {
    return kernel->launch(args, err, &ms);
  };
  std::vector<CheckResult> checks;
  if (const OpHarness *harness = harnessFor(build.manifest.entry, a.data)) {
    if (!harness->completeConfig(cfg, c.constants, c.types, build.manifest.roundedOperands,
                                 error) ||
        !harness->run(cfg, launch, checks, error)) {
      llvm::errs() << "kiln: error: " << error << "\n";
      return 2;
    }
  } else {
    if (!runAgainstReference(a.input, a.schedule, a.constants, build.manifest.signature,
                             build.manifest.roundedOperands, cfg, a.data, launch, checks,
                             llvm::errs()))
      return 2;
  }
  if (!a.json)
    std::printf("%s with %s on %s: %d registers, kernel %.3f ms (one cold launch)\n",
                a.input.c_str(), a.schedule.c_str(), a.target.c_str(), build.report.registers, ms);
  return reportChecks(a, a.target, checks) ? 0 : 1;
}

int runCommand(const Args &a) {
  RunConfig cfg = a.run;
  if (a.target != "cpu")
    return runOnGpuCommand(a, cfg);
  std::vector<CheckResult> checks;
  double compileMs = 0, runMs = 0;
  auto t0 = std::chrono::steady_clock::now();
  if (!runOnCpu(a.input, a.schedule, a.constants, cfg, checks, llvm::errs(), &compileMs, &runMs,
                a.data))
    return 2;
  double totalMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!a.json)
    std::printf("%s with %s on cpu: compile %.0f ms, kernel %.1f ms, total %.0f ms\n",
                a.input.c_str(), a.schedule.c_str(), compileMs, runMs, totalMs);
  return reportChecks(a, "cpu", checks) ? 0 : 1;
}

/// The files of `dir` whose names end with `suffix`, sorted; none where
/// `dir` does not exist.
std::vector<std::string> filesEndingWith(const std::string &dir, llvm::StringRef suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator f(dir, ec), e; f != e && !ec; f.increment(ec))
    if (llvm::StringRef(f->path()).ends_with(suffix))
      out.push_back(f->path());
  std::sort(out.begin(), out.end());
  return out;
}

int checkCommand(const Args &a) {
  std::string dir = a.input.empty() ? "ops" : a.input;
  std::error_code ec;
  std::vector<std::pair<std::string, std::string>> jobs; // (tile, schedule)
  // Each op's selections (OPS_DIR/<op>/select/*.yaml), checked after its
  // schedules.
  std::vector<std::string> selections;
  for (llvm::sys::fs::directory_iterator op(dir, ec), end; op != end && !ec; op.increment(ec)) {
    std::vector<std::string> tiles = filesEndingWith(op->path(), ".tile");
    std::vector<std::string> scheds = filesEndingWith(op->path() + "/schedules", ".yaml");
    for (std::string &sel : filesEndingWith(op->path() + "/select", ".yaml"))
      selections.push_back(std::move(sel));
    // A schedule names its kernel (`op:`); it runs with the source declaring it.
    std::map<std::string, std::string> tileOfKernel;
    for (auto &t : tiles) {
      auto text = llvm::MemoryBuffer::getFile(t);
      lang::Declarations decls;
      std::string ignored;
      llvm::raw_string_ostream quiet(ignored);
      if (text && lang::scanDeclarations(t, (*text)->getBuffer().str(), decls, quiet)) {
        for (auto &k : decls.kernels)
          tileOfKernel[k] = t;
        for (auto &o : decls.ops)
          tileOfKernel[o] = t;
      }
    }
    for (auto &sched : scheds) {
      Schedule s;
      std::string ignored;
      llvm::raw_string_ostream quiet(ignored);
      std::string kernel = loadSchedule(sched, s, quiet) ? s.op.name : "";
      auto it = tileOfKernel.find(kernel);
      if (it != tileOfKernel.end())
        jobs.push_back({it->second, sched});
      else if (!tiles.empty()) // fails below, saying why
        jobs.push_back({tiles.front(), sched});
    }
  }
  std::sort(jobs.begin(), jobs.end());
  if (jobs.empty())
    return usageError("no ops found under '" + dir + "'", -1);
  std::printf("%-16s %-38s %-8s %-24s %-36s %s\n", "op", "schedule", "target", "shape",
              "relative error of each output", "result");
  bool allOk = true;
  for (auto &[tile, sched] : jobs) {
    // Each schedule's tiling runs on the CPU backend; GPU schedules are checked
    // there too (a schedule never changes the result). An op with a golden
    // harness runs its configs; any other runs the source's `check` shapes
    // against its float64 reference.
    std::string errText;
    llvm::raw_string_ostream errs(errText);
    Schedule s;
    bool parsed = loadSchedule(sched, s, errs);
    std::string tileName = llvm::sys::path::filename(tile).str();
    std::string schedName = llvm::sys::path::filename(sched).str();
    if (!parsed) {
      std::printf("%-16s %-38s %-8s %-24s %-36s %s\n", tileName.c_str(), schedName.c_str(), "?",
                  "-", "-", "FAIL");
      std::fprintf(stderr, "%s", errText.c_str());
      allOk = false;
      continue;
    }
    const OpHarness *harness = findHarness(s.op.name);
    std::vector<RunConfig> configs;
    if (harness) {
      configs = harness->checkConfigs;
    } else {
      for (auto &dims : checkShapesOf(tile)) {
        RunConfig cfg;
        cfg.dims = dims;
        configs.push_back(cfg);
      }
      if (configs.empty()) // an op of fixed dims; otherwise the run says which it needs
        configs.emplace_back();
    }
    for (RunConfig cfg : configs) {
      std::vector<CheckResult> checks;
      errText.clear();
      bool ran = runOnCpu(tile, sched, {}, cfg, checks, errs);
      bool ok = ran && !checks.empty();
      std::string errors;
      for (auto &c : checks) {
        ok &= c.ok();
        char num[32];
        std::snprintf(num, sizeof num, "%.2e", c.relError);
        errors += (errors.empty() ? "" : ", ") + c.what + " " + (c.nan ? "NaN" : num);
      }
      allOk &= ok;
      std::string shape = harness ? describeShape(cfg) : "";
      if (!harness)
        for (auto &[k, v] : cfg.dims)
          shape += (shape.empty() ? "" : " ") + k + "=" + std::to_string(v);
      std::printf("%-16s %-38s %-8s %-24s %-36s %s\n", tileName.c_str(), schedName.c_str(),
                  s.target->name.c_str(), shape.empty() ? "-" : shape.c_str(),
                  errors.empty() ? "-" : errors.c_str(), ok ? "PASS" : "FAIL");
      if (!ran)
        std::fprintf(stderr, "%s", errText.c_str());
    }
  }
  // The selections' rules checked against their op as `kiln compile
  // --select` checks them, nothing built.
  std::sort(selections.begin(), selections.end());
  for (const std::string &path : selections) {
    std::string errText;
    llvm::raw_string_ostream errs(errText);
    Selection sel;
    bool ok = loadSelection(path, sel, errs) && checkSelection(sel, {}, errs);
    allOk &= ok;
    std::string source = llvm::sys::path::filename(sel.sourcePath).str();
    std::string rules = std::to_string(sel.rules.size()) +
                        (sel.rules.size() == 1 ? " rule" : " rules, one signature");
    std::printf("%-16s %-38s %-8s %-24s %-36s %s\n", source.empty() ? "?" : source.c_str(),
                ("select/" + llvm::sys::path::filename(path).str()).c_str(),
                sel.target.empty() ? "?" : sel.target.c_str(), "-", rules.c_str(),
                ok ? "PASS" : "FAIL");
    if (!ok)
      std::fprintf(stderr, "%s", errText.c_str());
  }
  std::printf("%s\n", allOk ? "all schedules match their reference" : "FAILURES above");
  return allOk ? 0 : 1;
}

} // namespace

static int runKiln(int argc, char **argv) {
  Args a;
  int rc = parseArgs(argc, argv, a);
  if (rc >= 0)
    return rc;
  if (a.command == "compile")
    return compileCommand(a);
  if (a.command == "run")
    return runCommand(a);
  if (a.command == "compare") {
    CompareOptions o;
    o.tilePath = a.input;
    o.schedules = a.schedules;
    Selection sel;
    if (llvm::StringRef(a.input).ends_with(".yaml")) { // a selection: its source and schedules
      if (!loadSelection(a.input, sel, llvm::errs()))
        return 2;
      o.tilePath = sel.sourcePath;
      for (const SelectionRule &r : sel.rules) // a schedule may serve two rules
        if (std::find(o.schedules.begin(), o.schedules.end(), r.schedulePath) == o.schedules.end())
          o.schedules.push_back(r.schedulePath);
      o.selection = &sel;
      o.sms = a.sms;
    }
    o.constants = a.constants;
    o.dims = a.run.dims;
    o.seed = a.run.seed;
    o.json = a.json;
    o.measuredPath = a.measured;
    o.cuda = a.emit == "cuda";
    return compareSchedules(o);
  }
  return checkCommand(a);
}

int main(int argc, char **argv) {
  // Runs check their shapes against host memory before they allocate
  // (fitsHostMemory); this is the backstop for an allocation that still
  // fails, so that it is an error, not an abort.
  try {
    return runKiln(argc, argv);
  } catch (const std::bad_alloc &) {
  } catch (const std::length_error &) {
  }
  llvm::errs() << "kiln: error: out of host memory (a smaller --dims or --seqlens may fit)\n";
  return 2;
}
