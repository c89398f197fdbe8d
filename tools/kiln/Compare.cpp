//===- Compare.cpp - kiln compare: schedules of one op side by side -------===//
#include "tools/kiln/Compare.h"
#include "backends/cpu/CpuKernel.h"
#include "backends/cpu/KernelSignature.h"
#include "backends/cuda/Nvcc.h"
#include "backends/runtime/GpuLauncher.h"
#include "backends/runtime/Selection.h"
#include "dsl/SourceDiagnostics.h"
#include "dsl/TileDialect.h"
#include "lowering/analysis/KernelWalk.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <regex>

using namespace mlir;
using namespace kiln;

namespace {

/// One kernel of an op: what ptxas gave it.
struct KernelLine {
  std::string name;
  int registers = 0;
  int64_t staticShared = 0, dynamicShared = 0, spillBytes = 0;
  std::string wgmmaSerialized; // why ptxas serialized its wgmma, if it did
};

struct Row {
  std::string schedule, target, error;
  std::vector<KernelLine> kernels; // an op's kernels, in launch order
  PtxasReport report;
  /// With --emit cuda: the kernels as nvcc built them from the CUDA source
  /// (or why not).
  std::vector<KernelLine> cudaKernels;
  std::string cudaError;
  bool hasPtx = false, hasCubin = false;
  int64_t dynamicShared = 0;                    // bytes: pipeline rings and their mbarriers
  std::vector<std::pair<std::string, int>> mix; // PTX instruction counts
  /// Layout conversions (shared-memory round trips) per kernel, in launch
  /// order.
  std::vector<std::pair<std::string, int64_t>> conversions;
  double bytes = 0, flops = 0, estimateUs = 0;
  std::vector<std::vector<double>> outputs; // CPU run, every out / inout view
  double maxDiff = -1;                      // largest |difference| from another schedule
  /// An op without a golden harness: the largest relative error of an
  /// output against the op's float64 reference.
  double referenceError = -1;
  double gpuUs = -1;
  /// From --measured: the build timed (the schedule, or its twin) and its
  /// times per shape beside the peer's.
  struct Measured {
    std::string shape;
    int64_t H = 0, HV = 0;
    double ms = 0, peerMs = -1;
  };
  std::string measuredBuild;
  std::vector<Measured> measured;
};

/// The times a bench JSON holds for `schedule` (a file name): its own
/// build's (`NAME_graph_ms`), or else a build of it under another name, as
/// its --retarget twin (`NAME[BUILD]_graph_ms`, as bench/prefill_bench.py
/// labels a manifest whose file is not named after its schedule, or
/// `NAME_twin_graph_ms`).
void attachMeasured(const json::Value &bench, Row &row) {
  std::string stem = llvm::sys::path::stem(row.schedule).str();
  const json::Value *rows = bench.get("rows");
  if (!rows || rows->kind != json::Value::Array)
    return;
  // A row's key for this schedule and the build it names: the schedule's
  // own before any other build of it.
  auto keyOf = [&](const json::Value &r) -> std::pair<std::string, std::string> {
    const std::string suffix = "_graph_ms";
    if (const json::Value *own = r.get(stem + suffix); own && own->kind == json::Value::Number)
      return {stem + suffix, stem};
    for (auto &[key, v] : r.object) {
      if (v.kind != json::Value::Number || key.size() <= suffix.size() ||
          key.compare(key.size() - suffix.size(), suffix.size(), suffix))
        continue;
      std::string label = key.substr(0, key.size() - suffix.size());
      if (label == stem + "_twin")
        return {key, label};
      if (label.rfind(stem + "[", 0) == 0 && label.back() == ']')
        return {key, label.substr(stem.size() + 1, label.size() - stem.size() - 2)};
    }
    return {};
  };
  for (const json::Value &r : rows->array) {
    auto [key, build] = keyOf(r);
    if (key.empty())
      continue;
    Row::Measured m;
    if (const json::Value *s = r.get("shape"); s && s->kind == json::Value::String)
      m.shape = s->string;
    if (const json::Value *h = r.get("H"))
      m.H = h->asInt();
    if (const json::Value *hv = r.get("HV"))
      m.HV = hv->asInt();
    m.ms = r.get(key)->number;
    if (const json::Value *peer = r.get("fla_graph_ms"); peer && peer->kind == json::Value::Number)
      m.peerMs = peer->number;
    row.measured.push_back(m);
    row.measuredBuild = build;
  }
}

/// Counts PTX instructions by family: what a kernel engineer looks for.
std::vector<std::pair<std::string, int>> instructionMix(const std::string &ptx) {
  static const std::vector<std::pair<std::string, std::regex>> families = {
      {"ld.global.v4", std::regex(R"(\bld\.global(\.nc)?\.v4\.)")},
      {"ld.global.v2", std::regex(R"(\bld\.global(\.nc)?\.v2\.)")},
      {"ld.global", std::regex(R"(\bld\.global(\.nc)?\.[bsuf]\d+)")},
      {"st.global.v4", std::regex(R"(\bst\.global\.v4\.)")},
      {"st.global.v2", std::regex(R"(\bst\.global\.v2\.)")},
      {"st.global", std::regex(R"(\bst\.global\.[bsuf]\d+)")},
      {"ld/st.shared", std::regex(R"(\b(ld|st)\.shared)")},
      {"fma", std::regex(R"(\bfma\.rn)")},
      {"shfl", std::regex(R"(\bshfl\.sync)")},
      {"ex2/lg2/rsqrt", std::regex(R"(\b(ex2|lg2|rsqrt)\.approx)")},
      {"bar.sync", std::regex(R"(\bbar(rier)?\.sync)")},
      {"bar.warp.sync", std::regex(R"(\bbar\.warp\.sync)")},
      {"cp.async.bulk.tensor", std::regex(R"(\bcp\.async\.bulk\.tensor)")},
      {"mbarrier", std::regex(R"(\bmbarrier\.)")},
      {"setmaxnreg", std::regex(R"(\bsetmaxnreg\.)")},
      {"wgmma", std::regex(R"(\bwgmma\.mma_async)")},
      // Warp-level products, their operands read from shared memory, and
      // their B fragments transposed from registers (mma: mma_sync).
      {"mma.sync", std::regex(R"(\bmma\.sync\.)")},
      {"ldmatrix", std::regex(R"(\bldmatrix\.)")},
      {"movmatrix", std::regex(R"(\bmovmatrix\.)")},
      {"tcgen05.mma", std::regex(R"(\btcgen05\.mma)")},
      {"tcgen05.ld", std::regex(R"(\btcgen05\.ld)")},
      {"tcgen05.st", std::regex(R"(\btcgen05\.st\b)")},
  };
  std::vector<std::pair<std::string, int>> out;
  for (auto &[name, re] : families)
    out.push_back({name, (int)std::distance(std::sregex_iterator(ptx.begin(), ptx.end(), re),
                                            std::sregex_iterator())});
  return out;
}

/// The fewest bytes the op must move (every view read once, outputs written
/// once, inout both) and the arithmetic of one pass over the tile IR, times
/// the grid: a roofline floor, not a prediction.
void estimateFlops(tile::KernelOp kernel, const std::map<std::string, int64_t> &dims, Row &row);

/// An op's floor: its own tensors (scratch excluded), every kernel's flops.
void estimate(const KernelSignature &sig, llvm::ArrayRef<tile::KernelOp> kernels,
              const std::map<std::string, int64_t> &dims, Row &row) {
  for (tile::KernelOp kernel : kernels)
    estimateFlops(kernel, dims, row);
  for (const ParamInfo &p : sig.params) {
    if (!p.isView)
      continue;
    double n = dtypeBytes(p.dtype);
    for (size_t d = 0; d < p.sizes.size(); ++d)
      n *= p.sizes[d] >= 0 ? p.sizes[d] : (dims.count(p.dimNames[d]) ? dims.at(p.dimNames[d]) : 1);
    row.bytes += p.access == "inout" ? 2 * n : n;
  }
}

/// The value of an index computation at `dims`, with grid coordinates at
/// the middle of their extent (`mid`): a loop whose trip count grows with
/// a coordinate (causal attention) then counts its average. None where it
/// depends on loaded data.
std::optional<int64_t> evalIndex(Value v, tile::KernelOp kernel,
                                 const std::map<std::string, int64_t> &dims,
                                 const DenseMap<Value, int64_t> &mid, int depth = 0) {
  if (depth > 64)
    return std::nullopt;
  if (auto it = mid.find(v); it != mid.end())
    return it->second;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != &kernel.getBody().front() ||
        arg.getArgNumber() >= kernel.getDimNames().size())
      return std::nullopt;
    auto it = dims.find(cast<StringAttr>(kernel.getDimNames()[arg.getArgNumber()]).str());
    return it == dims.end() ? std::optional<int64_t>(1) : it->second;
  }
  Operation *op = v.getDefiningOp();
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    if (auto n = dyn_cast<IntegerAttr>(c.getValue()))
      return n.getInt();
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp, arith::ExtUIOp,
          arith::TruncIOp>(op))
    return evalIndex(op->getOperand(0), kernel, dims, mid, depth + 1);
  if (op->getNumOperands() != 2)
    return std::nullopt;
  auto a = evalIndex(op->getOperand(0), kernel, dims, mid, depth + 1);
  auto b = evalIndex(op->getOperand(1), kernel, dims, mid, depth + 1);
  if (!a || !b)
    return std::nullopt;
  int64_t x = *a, y = *b;
  return TypeSwitch<Operation *, std::optional<int64_t>>(op)
      .Case<arith::AddIOp>([&](auto) { return x + y; })
      .Case<arith::SubIOp>([&](auto) { return x - y; })
      .Case<arith::MulIOp>([&](auto) { return x * y; })
      .Case<arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp>(
          [&](auto) -> std::optional<int64_t> { return y ? std::optional(x / y) : std::nullopt; })
      .Case<arith::CeilDivSIOp, arith::CeilDivUIOp>([&](auto) -> std::optional<int64_t> {
        return y ? std::optional((x + y - 1) / y) : std::nullopt;
      })
      .Case<arith::RemSIOp, arith::RemUIOp>(
          [&](auto) -> std::optional<int64_t> { return y ? std::optional(x % y) : std::nullopt; })
      .Case<arith::MinSIOp, arith::MinUIOp>([&](auto) { return std::min(x, y); })
      .Case<arith::MaxSIOp, arith::MaxUIOp>([&](auto) { return std::max(x, y); })
      .Default([](Operation *) { return std::nullopt; });
}

/// The arithmetic of one program: each op's elements, a loop's body times
/// its trip count at `dims` (1 where the count depends on loaded data), the
/// larger branch of an `if`.
double blockFlops(Block &block, tile::KernelOp kernel, const std::map<std::string, int64_t> &dims,
                  const DenseMap<Value, int64_t> &mid) {
  auto numel = [](Type t) {
    double n = 1;
    if (auto tt = dyn_cast<tile::TileType>(t))
      for (int64_t e : tt.getShape())
        n *= e;
    return n;
  };
  double flops = 0;
  for (Operation &op : block) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto lo = evalIndex(loop.getLowerBound(), kernel, dims, mid);
      auto hi = evalIndex(loop.getUpperBound(), kernel, dims, mid);
      auto step = evalIndex(loop.getStep(), kernel, dims, mid);
      double trips =
          lo && hi && step && *step > 0 ? std::max<int64_t>(0, (*hi - *lo + *step - 1) / *step) : 1;
      flops += trips * blockFlops(*loop.getBody(), kernel, dims, mid);
    } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
      double t = blockFlops(branch.getThenRegion().front(), kernel, dims, mid);
      double e = branch.getElseRegion().empty()
                     ? 0
                     : blockFlops(branch.getElseRegion().front(), kernel, dims, mid);
      flops += std::max(t, e);
    } else if (auto dot = dyn_cast<tile::DotOp>(op)) {
      flops += 2.0 * numel(dot.getResult().getType()) * dot.getLhs().getType().getShape()[1];
    } else if (isa<tile::ReduceOp>(op)) {
      flops += numel(op.getOperand(0).getType());
    } else if (isa<tile::AddOp, tile::SubOp, tile::MulOp, tile::DivOp, tile::MaxOp, tile::MinOp,
                   tile::ExpOp, tile::LogOp, tile::Log1pOp, tile::SqrtOp, tile::RsqrtOp,
                   tile::SigmoidOp, tile::TanhOp>(op)) {
      flops += numel(op.getResult(0).getType());
    } else {
      for (Region &r : op.getRegions())
        for (Block &b : r)
          flops += blockFlops(b, kernel, dims, mid);
    }
  }
  return flops;
}

void estimateFlops(tile::KernelOp kernel, const std::map<std::string, int64_t> &dims, Row &row) {
  double programs = 1;
  DenseMap<Value, int64_t> mid;
  kernel.walk([&](tile::ProgramIdsOp ids) {
    for (auto [extent, id] : llvm::zip(ids.getExtents(), ids.getIds())) {
      int64_t n = evalIndex(extent, kernel, dims, mid).value_or(1);
      programs *= n;
      mid[id] = n / 2;
    }
  });
  row.flops += blockFlops(kernel.getBody().front(), kernel, dims, mid) * programs;
}

/// The rules, the schedule --dims picks, and per measured shape the pick
/// beside the fastest measured Kiln schedule of that shape.
void printSelection(const CompareOptions &o, const json::Value *benchRows) {
  const Selection &sel = *o.selection;
  SelectionManifest rules = selectionManifest(sel);
  std::printf("selection %s (%s, %lld SMs): the first rule that holds runs\n", sel.path.c_str(),
              sel.target.c_str(), (long long)o.sms);
  for (size_t i = 0; i < rules.rules.size(); ++i) {
    std::string when;
    for (const auto &c : rules.rules[i].when)
      when += (when.empty() ? "" : ", ") + c.text;
    std::printf("  %zu. %-40s %s\n", i + 1, rules.rules[i].schedule.c_str(),
                when.empty() ? "(every shape)" : ("when " + when).c_str());
  }
  auto pick = [&](const std::map<std::string, int64_t> &dims) -> std::string {
    size_t rule = 0;
    std::string error, unknown;
    if (!chooseSelectionRule(rules, dims, o.sms, rule, error, &unknown))
      return "cannot choose: " + error +
             (unknown.empty() ? "" : " (give " + unknown + " with --dims)");
    return rules.rules[rule].schedule + " (rule " + std::to_string(rule + 1) + ")";
  };
  if (!o.dims.empty())
    std::printf("  at %s: %s\n", describeDims(o.dims).c_str(), pick(o.dims).c_str());
  if (!benchRows)
    return;
  std::printf("  measured shapes (%s): picked, and the fastest measured\n", o.measuredPath.c_str());
  for (const json::Value &row : benchRows->array) {
    // The benches time in ms (prefill_bench.py: NAME_graph_ms) or in us
    // (decode_bench.py: NAME_graph_us; mtp_bench.py: NAME_us).
    std::map<std::string, int64_t> dims;
    std::map<std::string, double> times;
    std::string unit;
    for (auto &[key, v] : row.object) {
      if (v.kind != json::Value::Number)
        continue;
      if (llvm::all_of(key, [](char c) {
            return std::isupper((unsigned char)c) || std::isdigit((unsigned char)c);
          }))
        dims[key] = v.asInt();
      for (const char *u : {"ms", "us"}) {
        llvm::StringRef k(key);
        if ((k.consume_back(std::string("_graph_") + u) || k.consume_back(std::string("_") + u)) &&
            llvm::any_of(sel.rules, [&](const SelectionRule &r) { return r.schedule == k; })) {
          times[k.str()] = v.number;
          unit = u;
        }
      }
    }
    auto timed = [&](const std::string &schedule) {
      auto it = times.find(schedule);
      if (it == times.end())
        return std::string();
      char buf[48];
      std::snprintf(buf, sizeof buf, " %.3f %s", it->second, unit.c_str());
      return std::string(buf);
    };
    std::string chosen = pick(dims), best;
    for (auto &[schedule, t] : times)
      if (best.empty() || t < times[best])
        best = schedule;
    std::printf("    %-28s %-52s %s\n", describeDims(dims).c_str(),
                (chosen + timed(chosen.substr(0, chosen.find(' ')))).c_str(),
                best.empty() ? "-" : (best + timed(best)).c_str());
  }
}

} // namespace

int kiln::compareSchedules(const CompareOptions &o) {
  json::Value bench;
  std::string benchDevice;
  if (!o.measuredPath.empty()) {
    std::string text, error;
    if (!readFile(o.measuredPath, text, error) || !json::parse(text, bench, error)) {
      std::fprintf(stderr, "kiln: error: --measured %s: %s\n", o.measuredPath.c_str(),
                   error.c_str());
      return 2;
    }
    const json::Value *device = bench.get("device");
    const json::Value *rows = bench.get("rows");
    if (!rows || rows->kind != json::Value::Array) {
      std::fprintf(stderr,
                   "kiln: error: --measured %s: not a bench result (no 'rows' list; "
                   "bench/prefill_bench.py --json writes one)\n",
                   o.measuredPath.c_str());
      return 2;
    }
    benchDevice = device && device->kind == json::Value::String ? device->string : "a GPU";
  }
  if (o.selection)
    printSelection(o, o.measuredPath.empty() ? nullptr : bench.get("rows"));
  std::vector<Row> rows;
  auto checkShapes = checkShapesOf(o.tilePath);
  bool anyHarness = false;
  for (const std::string &path : o.schedules) {
    Row row;
    row.schedule = llvm::sys::path::filename(path).str();
    if (!o.measuredPath.empty())
      attachMeasured(bench, row);
    std::string errText;
    llvm::raw_string_ostream errs(errText);
    auto ctx = makeContext();
    SourceDiagnostics diags(*ctx, errs);
    Compiled c;
    if (!compileOp(*ctx, o.tilePath, path, o.constants, c, errs)) {
      row.error = errText;
      rows.push_back(row);
      continue;
    }
    row.target = c.schedule.target->name;
    auto kernels = llvm::to_vector(c.module->getOps<tile::KernelOp>());
    auto ops = llvm::to_vector(c.module->getOps<tile::HostOp>());
    KernelSignature sig = ops.empty() ? signatureOf(kernels[0]) : planOf(ops[0]).signature;
    const OpHarness *harness = findHarness(sig.name);
    anyHarness |= harness != nullptr;
    // One config for the CPU and the GPU run: same seed, so every schedule
    // sees the same inputs.
    RunConfig cfg;
    cfg.dims = o.dims;
    // Without a harness the numbers are checked at the source's `check`
    // shape (a CPU run at --dims such as a 4096^3 product would take
    // minutes); the estimate is at --dims.
    std::map<std::string, int64_t> numericDims = checkShapes.empty() ? o.dims : checkShapes[0];
    cfg.seed = o.seed;
    std::string error;
    if (harness &&
        !harness->completeConfig(cfg, c.constants, c.types, roundsMatrixOperands(*c.module), error,
                                 sig.runtimeDims)) {
      row.error = "kiln: error: " + error + "\n";
      rows.push_back(row);
      continue;
    }
    estimate(sig, kernels, cfg.dims, row);
    const TargetDesc &t = *c.schedule.target;
    if (t.bandwidthBytesPerS > 0)
      row.estimateUs = 1e6 * std::max(row.bytes / t.bandwidthBytesPerS,
                                      t.bf16FlopsPerS > 0 ? row.flops / t.bf16FlopsPerS : 0.0);
    // Both backends lower in place: the GPU builds get their own copies.
    Compiled g;
    g.module = c.module->clone();
    g.schedule = c.schedule;
    g.constants = c.constants;
    if (o.cuda && c.schedule.target->isGpu) {
      Compiled gc;
      gc.module = c.module->clone();
      gc.schedule = c.schedule;
      gc.constants = c.constants;
      gc.sourcePath = o.tilePath;
      GpuBuild cudaBuild;
      std::string log;
      llvm::raw_string_ostream logStream(log);
      if (findNvcc().empty()) {
        row.cudaError = "nvcc not found";
      } else if (buildForGpu(gc, /*assemble=*/true, cudaBuild, logStream, false,
                             GpuEmitter::Cuda)) {
        for (const PtxasReport &e : cudaBuild.report.entries)
          row.cudaKernels.push_back({e.kernel, e.registers, e.sharedBytes, 0,
                                     e.spillStores + e.spillLoads, e.wgmmaSerialized});
        if (cudaBuild.report.entries.empty())
          row.cudaKernels.push_back({cudaBuild.manifest.entry, cudaBuild.report.registers,
                                     cudaBuild.report.sharedBytes, 0,
                                     cudaBuild.report.spillStores + cudaBuild.report.spillLoads});
      } else {
        row.cudaError = log;
      }
    }

    auto cpu = CpuKernel::compile(*c.module, error);
    if (cpu && harness) {
      std::vector<CheckResult> checks;
      Launcher launch = [&](const std::vector<ArgValue> &args, std::string &err) {
        if (!cpu->launch(args, err))
          return false;
        for (size_t i = 0; i < args.size(); ++i) {
          const ParamInfo &p = cpu->signature().params[i];
          if (!p.isView || p.access == "in")
            continue;
          size_t n = 1;
          for (int64_t s : args[i].shape)
            n *= s;
          // Every type: an f16 or f8e4m3 state compared as zeros would
          // agree with any other schedule's.
          std::vector<double> v(n);
          for (size_t k = 0; k < n; ++k)
            v[k] = elementAt(args[i].data, p.dtype, k);
          row.outputs.push_back(std::move(v));
        }
        return true;
      };
      if (!harness->run(cfg, launch, checks, error))
        row.error = error;
    } else if (cpu) {
      // No harness: each schedule against the op's float64 reference, on
      // the same inputs (same seed) at the numeric shape.
      RunConfig numeric;
      numeric.dims = numericDims;
      numeric.seed = o.seed;
      Launcher launch = [&](const std::vector<ArgValue> &args, std::string &err) {
        return cpu->launch(args, err);
      };
      std::vector<CheckResult> checks;
      if (!runAgainstReference(o.tilePath, path, o.constants, sig, false, numeric, {}, launch,
                               checks, errs))
        row.error = errText;
      for (const CheckResult &c : checks)
        row.referenceError = std::max(row.referenceError, c.nan ? INFINITY : c.relError);
    } else {
      row.error = error;
    }

    if (row.error.empty() && t.isGpu) {
      GpuBuild build;
      bool assemble = !findPtxas().empty();
      if (buildForGpu(g, assemble, build, errs)) {
        row.hasPtx = true;
        row.hasCubin = assemble;
        row.report = build.report;
        row.dynamicShared = build.manifest.dynamicSharedBytes;
        for (const KernelManifest &k : build.manifest.kernels) {
          row.dynamicShared = std::max(row.dynamicShared, k.dynamicSharedBytes);
          KernelLine line{k.entry, 0, 0, k.dynamicSharedBytes, 0};
          for (const PtxasReport &e : build.report.entries)
            if (e.kernel == k.entry) {
              line.registers = e.registers;
              line.staticShared = e.sharedBytes;
              line.spillBytes = e.spillStores + e.spillLoads;
              line.wgmmaSerialized = e.wgmmaSerialized;
            }
          if (assemble)
            row.kernels.push_back(line);
        }
        row.mix = instructionMix(build.ptx);
        if (build.manifest.kernels.empty()) {
          for (auto &[entry, n] : build.layoutConversions)
            row.conversions.push_back({entry, n});
        } else {
          for (const KernelManifest &k : build.manifest.kernels)
            if (auto it = build.layoutConversions.find(k.entry);
                it != build.layoutConversions.end())
              row.conversions.push_back({k.entry, it->second});
        }
        auto gpu = assemble ? GpuKernel::load(build.manifest, build.cubin, error) : nullptr;
        if (gpu && !harness) {
          std::vector<HostArg> args;
          if (makeArguments(sig, numericDims, {}, {}, o.seed, args, error)) {
            std::vector<ArgValue> values = argValues(args);
            double best = 1e30, ms = 0;
            bool ok = true;
            for (int rep = 0; rep < 5 && ok; ++rep) // first launches warm up
              if ((ok = gpu->launch(values, error, &ms)))
                best = std::min(best, ms);
            if (ok)
              row.gpuUs = 1e3 * best;
          }
        } else if (gpu && harness) {
          std::vector<CheckResult> checks;
          double best = 1e30;
          Launcher launch = [&](const std::vector<ArgValue> &args, std::string &err) {
            double ms = 0;
            for (int rep = 0; rep < 5; ++rep) // first launches warm up
              if (!gpu->launch(args, err, &ms))
                return false;
              else
                best = std::min(best, ms);
            return true;
          };
          if (harness->run(cfg, launch, checks, error))
            row.gpuUs = 1e3 * best;
        }
      } else {
        row.error = errText;
      }
    }
    rows.push_back(std::move(row));
  }
  // Largest difference of each schedule's outputs from every other's.
  for (Row &r : rows)
    for (Row &s : rows) {
      if (&r == &s || r.outputs.size() != s.outputs.size() || r.outputs.empty())
        continue;
      for (size_t i = 0; i < r.outputs.size(); ++i)
        for (size_t k = 0; k < r.outputs[i].size() && k < s.outputs[i].size(); ++k) {
          double d = std::fabs(r.outputs[i][k] - s.outputs[i][k]);
          r.maxDiff = std::max(r.maxDiff, std::isnan(d) ? INFINITY : d);
        }
    }

  if (o.json) {
    json::Value all = json::Value::arr();
    for (const Row &r : rows) {
      json::Value v = json::Value::obj();
      v.set("schedule", json::Value::str(r.schedule));
      v.set("target", json::Value::str(r.target));
      if (!r.error.empty())
        v.set("error", json::Value::str(r.error));
      // What ptxas gave the whole op (its largest kernel) or one kernel.
      auto setResources = [](json::Value &into, const KernelLine &k) {
        into.set("registers", json::Value::num(k.registers));
        into.set("static_shared_bytes", json::Value::num(k.staticShared));
        into.set("dynamic_shared_bytes", json::Value::num(k.dynamicShared));
        into.set("spill_bytes", json::Value::num(k.spillBytes));
        if (!k.wgmmaSerialized.empty())
          into.set("wgmma_serialized", json::Value::str(k.wgmmaSerialized));
      };
      // Each kernel's resources, as a list under `key`.
      auto setKernels = [&](const char *key, const std::vector<KernelLine> &kernels) {
        if (kernels.empty())
          return;
        json::Value ks = json::Value::arr();
        for (const KernelLine &k : kernels) {
          json::Value kv = json::Value::obj();
          kv.set("kernel", json::Value::str(k.name));
          setResources(kv, k);
          ks.array.push_back(kv);
        }
        v.set(key, ks);
      };
      if (r.hasCubin) {
        setResources(v, {"", r.report.registers, r.report.sharedBytes, r.dynamicShared,
                         r.report.spillStores + r.report.spillLoads});
        setKernels("kernels", r.kernels);
      }
      setKernels("cuda_kernels", r.cudaKernels);
      if (!r.cudaError.empty())
        v.set("cuda_error", json::Value::str(r.cudaError));
      json::Value mix = json::Value::obj();
      for (auto &[k, n] : r.mix)
        mix.set(k, json::Value::num(n));
      v.set("ptx_mix", mix);
      if (!r.conversions.empty()) {
        json::Value conversions = json::Value::obj();
        for (auto &[k, n] : r.conversions)
          conversions.set(k, json::Value::num(n));
        v.set("layout_conversions", conversions);
      }
      v.set("bytes", json::Value::num(r.bytes));
      v.set("flops", json::Value::num(r.flops));
      v.set("roofline_us", json::Value::num(r.estimateUs));
      if (r.referenceError >= 0)
        v.set("max_rel_error_vs_reference", json::Value::num(r.referenceError));
      else
        v.set("max_abs_diff_vs_others", json::Value::num(r.maxDiff));
      v.set("gpu_us", json::Value::num(r.gpuUs));
      if (!r.measured.empty()) {
        json::Value m = json::Value::obj();
        m.set("device", json::Value::str(benchDevice));
        m.set("build", json::Value::str(r.measuredBuild));
        m.set("source", json::Value::str(o.measuredPath));
        json::Value shapes = json::Value::arr();
        for (const Row::Measured &x : r.measured) {
          json::Value sv = json::Value::obj();
          sv.set("shape", json::Value::str(x.shape));
          sv.set("H", json::Value::num(x.H));
          sv.set("HV", json::Value::num(x.HV));
          sv.set("ms", json::Value::num(x.ms));
          sv.set("peer_ms", json::Value::num(x.peerMs));
          shapes.array.push_back(sv);
        }
        m.set("shapes", shapes);
        v.set("measured", m);
      }
      all.array.push_back(v);
    }
    std::printf("%s", json::print(all).c_str());
  } else {
    std::string dimText;
    for (auto &[k, v] : o.dims)
      dimText += (dimText.empty() ? "" : ",") + k + "=" + std::to_string(v);
    std::printf("%s at %s (defaults for unnamed dims)\n", o.tilePath.c_str(),
                dimText.empty() ? "default dims" : dimText.c_str());
    if (!anyHarness) {
      std::string shape;
      for (auto &[k, v] : checkShapes.empty() ? o.dims : checkShapes[0])
        shape += (shape.empty() ? "" : ",") + k + "=" + std::to_string(v);
      std::printf("max diff: each output's largest relative error against the op's float64 "
                  "reference, on the CPU at %s%s\n",
                  shape.empty() ? "default dims" : shape.c_str(),
                  checkShapes.empty() ? "" : " (the source's check shape)");
    }
    int width = 22; // the schedule column fits the longest name
    for (const Row &r : rows)
      width = std::max(width, (int)r.schedule.size());
    std::printf("%-*s %-8s %5s %7s %6s %9s %9s %10s %10s\n", width, "schedule", "target", "regs",
                "smem", "spill", "MB moved", "MFLOP", "floor us", "max diff");
    for (const Row &r : rows) {
      if (!r.error.empty() && r.outputs.empty()) {
        std::printf("%-*s error: %s\n", width, r.schedule.c_str(), r.error.c_str());
        continue;
      }
      auto num = [&](double v, const char *fmt) {
        char b[32];
        std::snprintf(b, sizeof b, fmt, v);
        return std::string(b);
      };
      double diff = r.referenceError >= 0 ? r.referenceError : r.maxDiff;
      std::printf(
          "%-*s %-8s %5s %7s %6s %9.2f %9.2f %10s %10s%s\n", width, r.schedule.c_str(),
          r.target.c_str(), r.hasCubin ? num(r.report.registers, "%.0f").c_str() : "-",
          r.hasCubin ? num(r.report.sharedBytes + r.dynamicShared, "%.0f").c_str() : "-",
          r.hasCubin ? num(r.report.spillStores + r.report.spillLoads, "%.0f").c_str() : "-",
          r.bytes / 1e6, r.flops / 1e6, r.estimateUs > 0 ? num(r.estimateUs, "%.2f").c_str() : "-",
          // "-": no reference and no other schedule to compare with.
          diff >= 0 ? num(diff, "%.2e").c_str() : "-",
          r.gpuUs >= 0 ? ("  gpu " + num(r.gpuUs, "%.2f") + " us").c_str() : "");
      if (!r.error.empty())
        std::printf("  %s\n", r.error.c_str());
      auto serialized = [](const KernelLine &k) {
        return k.wgmmaSerialized.empty() ? std::string()
                                         : ", wgmma serialized (" + k.wgmmaSerialized + ")";
      };
      for (const KernelLine &k : r.kernels)
        std::printf("  kernel %s: %d regs, %lld B smem, %lld B spilled%s\n", k.name.c_str(),
                    k.registers, (long long)(k.staticShared + k.dynamicShared),
                    (long long)k.spillBytes, serialized(k).c_str());
      for (const KernelLine &k : r.cudaKernels)
        std::printf("  cuda (nvcc) kernel %s: %d regs, %lld B static smem, %lld B spilled%s\n",
                    k.name.c_str(), k.registers, (long long)k.staticShared, (long long)k.spillBytes,
                    serialized(k).c_str());
      if (!r.cudaError.empty())
        std::printf("  cuda: %s\n", r.cudaError.c_str());
      if (!r.mix.empty()) {
        std::string line;
        for (auto &[k, n] : r.mix)
          if (n)
            line += " " + k + ":" + std::to_string(n);
        std::printf("  ptx:%s\n", line.c_str());
      }
      if (!r.conversions.empty()) {
        std::string line;
        for (auto &[k, n] : r.conversions)
          line += std::string(line.empty() ? " " : ", ") +
                  (r.conversions.size() > 1 ? k + " " : "") + std::to_string(n);
        std::printf("  layout conversions:%s\n", line.c_str());
      }
      if (!r.measured.empty()) {
        bool twin = r.measuredBuild != llvm::sys::path::stem(r.schedule);
        std::printf("  measured on %s (%s, %s):\n", benchDevice.c_str(),
                    twin ? ("its twin " + r.measuredBuild).c_str() : "this schedule",
                    o.measuredPath.c_str());
        for (const Row::Measured &x : r.measured)
          std::printf("    %-10s H/HV %-6s %8.3f ms%s\n", x.shape.c_str(),
                      (std::to_string(x.H) + "/" + std::to_string(x.HV)).c_str(), x.ms,
                      x.peerMs > 0 ? ("  (FLA " + num(x.peerMs, "%.3f") + " ms, x" +
                                      num(x.peerMs / x.ms, "%.2f") + ")")
                                         .c_str()
                                   : "");
      }
    }
  }
  bool ok = true;
  for (const Row &r : rows)
    ok &= r.error.empty();
  return ok ? 0 : 1;
}
