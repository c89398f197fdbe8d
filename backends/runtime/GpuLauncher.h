//===- GpuLauncher.h - run a compiled kernel on host tensors ---*- C++ -*-===//
#ifndef KILN_BACKENDS_RUNTIME_GPULAUNCHER_H
#define KILN_BACKENDS_RUNTIME_GPULAUNCHER_H

#include "backends/runtime/CudaDriver.h"
#include "backends/runtime/Manifest.h"
#include "backends/runtime/Selection.h"

#include <memory>

namespace kiln {

/// A kernel, or an op of several kernels, loaded from one image.
class GpuKernel {
public:
  /// Loads `image` (cubin or PTX bytes) and the kernel(s) the manifest names.
  static std::unique_ptr<GpuKernel> load(const KernelManifest &manifest, const std::string &image,
                                         std::string &error);
  ~GpuKernel();

  /// Copies the tensors to the device, launches once (an op: allocates its
  /// scratch, filled with 0xff bytes so that unwritten reads show as NaN,
  /// and launches its kernels in order, or one marked `overlap` beside the
  /// launch before it on a second, high-priority stream while its CTAs
  /// leave an SM free), copies `out` and `inout` views
  /// back. Checks every argument against the signature first and every
  /// driver call after; `milliseconds` gets the kernels' time.
  bool launch(const std::vector<ArgValue> &args, std::string &error,
              double *milliseconds = nullptr);
  const KernelManifest &manifest() const { return m; }
  /// The SMs of the device.
  int multiprocessors(std::string &error);

private:
  /// `ctas` grid points as a persistent kernel launches them: at most its
  /// resident CTAs (unchanged for a kernel that is not persistent).
  bool residentCtas(const KernelManifest &k, int64_t &ctas, std::string &error);
  /// The CTAs one kernel launches on these arguments (0: an empty grid).
  bool ctasOf(const KernelManifest &k, const std::vector<ArgValue> &args, int64_t &ctas,
              std::string &error);
  /// Launches one kernel on `stream` on arguments whose `data` are device
  /// pointers, each CTA with its dynamic shared memory or `sharedBytes`,
  /// whichever is more. `early`: as a programmatic dependent of the launch
  /// before it in the stream (OpPlan::Launch::early). `launched` (if given)
  /// says whether it launched anything (an empty grid does not).
  bool launchOnDevice(const KernelManifest &k, cuda::Function f,
                      const std::vector<ArgValue> &deviceArgs, cuda::Stream stream,
                      std::string &error, int64_t sharedBytes = 0, bool early = false,
                      bool *launched = nullptr);
  KernelManifest m;
  const cuda::Driver *d = nullptr;
  cuda::Module module = nullptr;
  std::vector<cuda::Function> functions; // one, or one per launch of an op
};

/// Reads a manifest and the image it names (relative to the manifest).
std::unique_ptr<GpuKernel> loadKernelFromManifest(const std::string &manifestPath,
                                                  std::string &error);

/// The kernels of a selection manifest (backends/runtime/Selection.h), one
/// per rule: a launch binds the dims from its arguments and runs the first
/// rule whose conditions hold on them and on the device's SMs.
class GpuSelection {
public:
  /// Loads `path` when it is a selection manifest; null without an error
  /// when it is some other manifest.
  static std::unique_ptr<GpuSelection> load(const std::string &path, std::string &error);
  /// Launches the rule these arguments pick (GpuKernel::launch); `rule`
  /// gets its index.
  bool launch(const std::vector<ArgValue> &args, std::string &error, double *milliseconds,
              size_t *rule = nullptr);
  const SelectionManifest &selection() const { return s; }
  /// The first rule's manifest: every rule's has the same signature.
  const KernelManifest &manifest() const { return kernels.front()->manifest(); }
  const GpuKernel &kernel(size_t rule) const { return *kernels[rule]; }

private:
  SelectionManifest s;
  std::vector<std::unique_ptr<GpuKernel>> kernels;
};

} // namespace kiln

#endif
