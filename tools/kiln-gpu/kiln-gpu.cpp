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

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

using namespace kiln;

static const char *kUsage = R"(kiln-gpu - run a compiled Kiln kernel on the GPU and check it

usage:
  kiln-gpu run MANIFEST.json [--dims NAME=N,...] [--seed N] [--skip FRACTION]
               [--saturate-gates] [--slow-gates] [--seqlens L,...]
               [--no-initial-state] [--repeat N]
      Loads the cubin the manifest names (a selection manifest of `kiln
      compile --select`: every rule's, each launch running the schedule its
      arguments' shape picks), runs the op on fresh random inputs
      (outputs poisoned with NaN first) and checks every output against the
      op's float64 golden reference. Exits 0 when all pass, 1 when any fails,
      2 on bad input or when no GPU is present. --repeat N launches it N
      times on the same inputs (the outputs of the last are checked) and
      reports the median kernel time of the warm launches too: from the
      first kernel's start to the last one's end, copies and scratch fills
      left out.
)";

static int usage(const std::string &msg, int arg) {
  std::fprintf(stderr, "kiln-gpu: error: %s", msg.c_str());
  if (arg >= 0)
    std::fprintf(stderr, " (command line argument %d)", arg);
  std::fprintf(stderr, "\nrun 'kiln-gpu --help' for usage\n");
  return 2;
}

static int runKilnGpu(int argc, char **argv) {
  if (argc >= 2 && (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help"))) {
    std::printf("%s", kUsage);
    return 0;
  }
  if (argc < 3 || std::string(argv[1]) != "run")
    return usage("expected 'run MANIFEST.json'", argc < 2 ? -1 : 1);
  std::string manifestPath = argv[2];
  RunConfig cfg;
  int repeat = 1;
  for (int i = 3; i < argc; ++i) {
    std::string error;
    if (!std::strcmp(argv[i], "--repeat")) {
      char *end = nullptr;
      long n = i + 1 < argc ? std::strtol(argv[i + 1], &end, 10) : 0;
      if (i + 1 >= argc || *end || n < 1 || n > 100000)
        return usage("--repeat needs a count in [1, 100000]", i + 1 < argc ? i + 1 : i);
      repeat = (int)n;
      ++i;
      continue;
    }
    if (!parseRunOption(argc, argv, i, cfg, error))
      return usage("unknown argument '" + std::string(argv[i]) + "'", i);
    if (!error.empty())
      return usage(error, i);
  }
  std::string error;
  // A selection manifest: each launch runs the rule its arguments pick.
  auto selection = GpuSelection::load(manifestPath, error);
  auto kernel = selection || !error.empty() ? nullptr : loadKernelFromManifest(manifestPath, error);
  if (!selection && !kernel) {
    std::fprintf(stderr, "kiln-gpu: error: %s\n", error.c_str());
    return 2;
  }
  const KernelManifest &m = selection ? selection->manifest() : kernel->manifest();
  const OpHarness *harness = findHarness(m.entry);
  if (!harness) {
    std::fprintf(stderr, "kiln-gpu: error: no golden harness for kernel '%s'\n", m.entry.c_str());
    return 2;
  }
  bool rounded = m.roundedOperands; // the looser tolerance if any rule's products round
  if (selection)
    for (size_t r = 0; r < selection->selection().rules.size(); ++r)
      rounded |= selection->kernel(r).manifest().roundedOperands;
  if (!harness->completeConfig(cfg, m.consts, m.types, rounded, error)) {
    std::fprintf(stderr, "kiln-gpu: error: %s\n", error.c_str());
    return 2;
  }
  std::vector<double> ms;
  size_t rule = 0;
  Launcher launch = [&](const std::vector<ArgValue> &args, std::string &err) {
    for (int r = 0; r < repeat; ++r) {
      ms.push_back(0);
      if (!(selection ? selection->launch(args, err, &ms.back(), &rule)
                      : kernel->launch(args, err, &ms.back())))
        return false;
    }
    return true;
  };
  std::vector<CheckResult> checks;
  if (!harness->run(cfg, launch, checks, error)) {
    std::fprintf(stderr, "kiln-gpu: error: %s\n", error.c_str());
    return 2;
  }
  std::string dims = describeShape(cfg);
  std::string warm;
  if (ms.size() > 1) {
    std::vector<double> later(ms.begin() + 1, ms.end());
    std::sort(later.begin(), later.end());
    char buf[96];
    std::snprintf(buf, sizeof buf, ", median %.3f ms of %zu warm launches", later[later.size() / 2],
                  later.size());
    warm = buf;
  }
  std::string schedule = m.schedule;
  if (selection)
    schedule = "selected " + selection->selection().rules[rule].schedule + ", rule " +
               std::to_string(rule + 1);
  std::printf("%s (%s, %s) %s seed %llu: kernel %.3f ms (cold, one launch)%s\n", m.entry.c_str(),
              schedule.c_str(), m.target.c_str(), dims.c_str(), (unsigned long long)cfg.seed,
              ms.empty() ? 0.0 : ms.front(), warm.c_str());
  return printChecks(checks) ? 0 : 1;
}

int main(int argc, char **argv) {
  // The backstop for an allocation that fails after the runs' own host
  // memory checks (fitsHostMemory): an error, not an abort.
  try {
    return runKilnGpu(argc, argv);
  } catch (const std::bad_alloc &) {
  } catch (const std::length_error &) {
  }
  std::fprintf(stderr,
               "kiln-gpu: error: out of host memory (a smaller --dims or --seqlens may fit)\n");
  return 2;
}
