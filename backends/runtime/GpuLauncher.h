//===- GpuLauncher.h - run a compiled kernel on host tensors ---*- C++ -*-===//
#ifndef KILN_BACKENDS_RUNTIME_GPULAUNCHER_H
#define KILN_BACKENDS_RUNTIME_GPULAUNCHER_H

#include "backends/runtime/CudaDriver.h"
#include "backends/runtime/Manifest.h"

#include <memory>

namespace kiln {

class GpuKernel {
public:
  /// Loads `image` (cubin or PTX bytes) for the kernel the manifest names.
  static std::unique_ptr<GpuKernel> load(const KernelManifest &manifest, const std::string &image,
                                         std::string &error);
  ~GpuKernel();

  /// Copies the tensors to the device, launches once, copies `out` and
  /// `inout` views back. Checks every argument against the signature first
  /// and every driver call after; `milliseconds` gets the kernel's time.
  bool launch(const std::vector<ArgValue> &args, std::string &error,
              double *milliseconds = nullptr);
  const KernelManifest &manifest() const { return m; }

private:
  KernelManifest m;
  const cuda::Driver *d = nullptr;
  cuda::Module module = nullptr;
  cuda::Function function = nullptr;
};

/// Reads a manifest and the image it names (relative to the manifest).
std::unique_ptr<GpuKernel> loadKernelFromManifest(const std::string &manifestPath,
                                                  std::string &error);

} // namespace kiln

#endif
