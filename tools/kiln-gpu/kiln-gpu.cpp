//===- kiln-gpu.cpp - run compiled kernels on a GPU, no LLVM needed -------===//
//
// The GPU machines have a CUDA driver but no LLVM 22, so `kiln` itself cannot
// run there. `kiln compile --emit cubin` writes a cubin and its manifest;
// this tool loads them with the CUDA driver, feeds the op's harness (fresh
// random inputs, poisoned outputs) and checks against the float64 golden
// reference, exactly as `kiln run` does on the CPU.
//
//===----------------------------------------------------------------------===//
#include "backends/runtime/GpuLauncher.h"
#include "ops/Harness.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace kiln;

static const char *kUsage = R"(kiln-gpu - run a compiled Kiln kernel on the GPU and check it

usage:
  kiln-gpu run MANIFEST.json [--dims NAME=N,...] [--seed N] [--skip FRACTION]
               [--saturate-gates] [--seqlens L,...] [--no-initial-state]
      Loads the cubin the manifest names, runs the op on fresh random inputs
      (outputs poisoned with NaN first) and checks every output against the
      op's float64 golden reference. Exits 0 when all pass, 1 when any fails,
      2 on bad input or when no GPU is present.
)";

static int usage(const std::string &msg, int arg) {
  std::fprintf(stderr, "kiln-gpu: error: %s", msg.c_str());
  if (arg >= 0)
    std::fprintf(stderr, " (command line argument %d)", arg);
  std::fprintf(stderr, "\nrun 'kiln-gpu --help' for usage\n");
  return 2;
}

static bool parseInt(const std::string &s, int64_t &v) {
  char *end = nullptr;
  v = std::strtoll(s.c_str(), &end, 10);
  return !s.empty() && !*end;
}

int main(int argc, char **argv) {
  if (argc >= 2 && (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help"))) {
    std::printf("%s", kUsage);
    return 0;
  }
  if (argc < 3 || std::string(argv[1]) != "run")
    return usage("expected 'run MANIFEST.json'", argc < 2 ? -1 : 1);
  std::string manifestPath = argv[2];
  RunConfig cfg;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    int64_t n;
    if (a == "--dims") {
      if (!next(v))
        return usage("--dims needs NAME=N,...", i);
      size_t pos = 0;
      while (pos <= v.size()) {
        size_t comma = v.find(',', pos);
        std::string part =
            v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        size_t eq = part.find('=');
        if (eq == std::string::npos || eq == 0 || !parseInt(part.substr(eq + 1), n) || n <= 0)
          return usage("--dims takes NAME=POSITIVE_INTEGER pairs, got '" + part + "'", i);
        cfg.dims[part.substr(0, eq)] = n;
        if (comma == std::string::npos)
          break;
        pos = comma + 1;
      }
    } else if (a == "--seed") {
      if (!next(v) || !parseInt(v, n))
        return usage("--seed needs an integer", i);
      cfg.seed = n;
    } else if (a == "--skip") {
      char *end = nullptr;
      if (!next(v) || (cfg.skipFraction = std::strtod(v.c_str(), &end), *end) ||
          cfg.skipFraction < 0 || cfg.skipFraction > 1)
        return usage("--skip needs a fraction in [0, 1]", i);
    } else if (a == "--saturate-gates") {
      cfg.saturateGates = true;
    } else if (a == "--seqlens") {
      if (!next(v) || !parseSeqLens(v, cfg.seqLens))
        return usage("--seqlens takes non-negative lengths like 1,64,200,7", i);
    } else if (a == "--no-initial-state") {
      cfg.initialState = false;
    } else {
      return usage("unknown argument '" + a + "'", i);
    }
  }
  std::string error;
  auto kernel = loadKernelFromManifest(manifestPath, error);
  if (!kernel) {
    std::fprintf(stderr, "kiln-gpu: error: %s\n", error.c_str());
    return 2;
  }
  const KernelManifest &m = kernel->manifest();
  const OpHarness *harness = findHarness(m.entry);
  if (!harness) {
    std::fprintf(stderr, "kiln-gpu: error: no golden harness for kernel '%s'\n", m.entry.c_str());
    return 2;
  }
  harness->completeConfig(cfg, m.consts);
  double ms = 0;
  Launcher launch = [&](const std::vector<ArgValue> &args, std::string &err) {
    return kernel->launch(args, err, &ms);
  };
  std::vector<CheckResult> checks;
  if (!harness->run(cfg, launch, checks, error)) {
    std::fprintf(stderr, "kiln-gpu: error: %s\n", error.c_str());
    return 2;
  }
  std::string dims = describeShape(cfg);
  std::printf("%s (%s, %s) %s seed %llu: kernel %.3f ms (cold, one launch)\n", m.entry.c_str(),
              m.schedule.c_str(), m.target.c_str(), dims.c_str(), (unsigned long long)cfg.seed, ms);
  return printChecks(checks) ? 0 : 1;
}
