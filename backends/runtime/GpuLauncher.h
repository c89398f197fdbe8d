//===- GpuLauncher.h - run a compiled kernel on host tensors ---*- C++ -*-===//
#ifndef KILN_BACKENDS_RUNTIME_GPULAUNCHER_H
#define KILN_BACKENDS_RUNTIME_GPULAUNCHER_H

#include "backends/runtime/CudaDriver.h"
#include "backends/runtime/Manifest.h"

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

private:
  /// `ctas` grid points as a persistent kernel launches them: at most its
  /// resident CTAs (unchanged for a kernel that is not persistent).
  bool residentCtas(const KernelManifest &k, int64_t &ctas, std::string &error);
  /// The CTAs one kernel launches on these arguments (0: an empty grid).
  bool ctasOf(const KernelManifest &k, const std::vector<ArgValue> &args, int64_t &ctas,
              std::string &error);
  /// Launches one kernel on `stream` on arguments whose `data` are device
  /// pointers, each CTA with its dynamic shared memory or `sharedBytes`,
  /// whichever is more.
  bool launchOnDevice(const KernelManifest &k, cuda::Function f,
                      const std::vector<ArgValue> &deviceArgs, cuda::Stream stream,
                      std::string &error, int64_t sharedBytes = 0);
  /// The SMs of the device.
  int multiprocessors(std::string &error);

  KernelManifest m;
  const cuda::Driver *d = nullptr;
  cuda::Module module = nullptr;
  std::vector<cuda::Function> functions; // one, or one per launch of an op
};

/// Reads a manifest and the image it names (relative to the manifest).
std::unique_ptr<GpuKernel> loadKernelFromManifest(const std::string &manifestPath,
                                                  std::string &error);

} // namespace kiln

#endif
