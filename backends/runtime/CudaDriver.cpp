//===- CudaDriver.cpp - the CUDA driver API, loaded at run time -----------===//
#include "backends/runtime/CudaDriver.h"

#include <dlfcn.h>

using namespace kiln;

namespace {
cuda::Driver loaded;
std::string loadError;

template <typename F> bool bind(void *lib, F &slot, const char *name) {
  slot = reinterpret_cast<F>(dlsym(lib, name));
  if (!slot)
    loadError = std::string("libcuda has no ") + name;
  return slot != nullptr;
}

bool load() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    lib = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    loadError = "no CUDA driver on this machine (libcuda.so.1 not found)";
    return false;
  }
  cuda::Driver &d = loaded;
  bool ok =
      bind(lib, d.init, "cuInit") && bind(lib, d.deviceGet, "cuDeviceGet") &&
      bind(lib, d.deviceGetCount, "cuDeviceGetCount") &&
      bind(lib, d.deviceGetName, "cuDeviceGetName") &&
      bind(lib, d.deviceGetAttribute, "cuDeviceGetAttribute") &&
      bind(lib, d.primaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
      bind(lib, d.ctxSetCurrent, "cuCtxSetCurrent") &&
      bind(lib, d.ctxSynchronize, "cuCtxSynchronize") &&
      bind(lib, d.moduleLoadData, "cuModuleLoadData") &&
      bind(lib, d.moduleUnload, "cuModuleUnload") &&
      bind(lib, d.moduleGetFunction, "cuModuleGetFunction") &&
      bind(lib, d.funcSetAttribute, "cuFuncSetAttribute") &&
      bind(lib, d.memAlloc, "cuMemAlloc_v2") && bind(lib, d.memFree, "cuMemFree_v2") &&
      bind(lib, d.memcpyHtoD, "cuMemcpyHtoD_v2") && bind(lib, d.memcpyDtoH, "cuMemcpyDtoH_v2") &&
      bind(lib, d.memsetD8, "cuMemsetD8_v2") && bind(lib, d.launchKernel, "cuLaunchKernel") &&
      bind(lib, d.launchKernelEx, "cuLaunchKernelEx") &&
      bind(lib, d.eventCreate, "cuEventCreate") && bind(lib, d.eventRecord, "cuEventRecord") &&
      bind(lib, d.eventSynchronize, "cuEventSynchronize") &&
      bind(lib, d.eventElapsedTime, "cuEventElapsedTime") &&
      bind(lib, d.eventDestroy, "cuEventDestroy_v2") &&
      bind(lib, d.getErrorString, "cuGetErrorString") &&
      bind(lib, d.ctxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange") &&
      bind(lib, d.streamCreateWithPriority, "cuStreamCreateWithPriority") &&
      bind(lib, d.streamWaitEvent, "cuStreamWaitEvent") &&
      bind(lib, d.streamDestroy, "cuStreamDestroy_v2") &&
      bind(lib, d.tensorMapEncodeTiled, "cuTensorMapEncodeTiled");
  if (!ok)
    return false;
  std::string e;
  int count = 0;
  cuda::Device dev;
  cuda::Context ctx;
  if (!(e = cuda::check(d.init(0), "cuInit")).empty() ||
      !(e = cuda::check(d.deviceGetCount(&count), "cuDeviceGetCount")).empty()) {
    loadError = e;
    return false;
  }
  if (count == 0) {
    loadError = "the CUDA driver sees no GPU";
    return false;
  }
  if (!(e = cuda::check(d.deviceGet(&dev, 0), "cuDeviceGet")).empty() ||
      !(e = cuda::check(d.primaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain")).empty() ||
      !(e = cuda::check(d.ctxSetCurrent(ctx), "cuCtxSetCurrent")).empty()) {
    loadError = e;
    return false;
  }
  return true;
}
} // namespace

const cuda::Driver *cuda::driver(std::string &why) {
  static bool ok = load();
  if (!ok)
    why = loadError;
  return ok ? &loaded : nullptr;
}

std::string cuda::check(Result r, const char *what) {
  if (r == 0)
    return "";
  const char *name = nullptr;
  if (loaded.getErrorString)
    loaded.getErrorString(r, &name);
  return std::string(what) + " failed: " + (name ? name : "error " + std::to_string(r));
}

std::string cuda::encodeTensorMap(const Driver &d, TensorMap &out, int dataType, DevicePtr base,
                                  const long long *dims, const long long *box, unsigned rank,
                                  unsigned elemBytes, int64_t swizzleBytes) {
  unsigned long long globalDims[5], strides[4];
  unsigned boxDims[5], elementStrides[5];
  unsigned long long stride = elemBytes;
  for (unsigned i = 0; i < rank; ++i) {
    unsigned d = rank - 1 - i; // the map lists dims innermost first
    globalDims[i] = dims[d];
    boxDims[i] = box[d];
    elementStrides[i] = 1;
    if (i > 0)
      strides[i - 1] = stride;
    stride *= dims[d];
  }
  // CU_TENSOR_MAP_SWIZZLE_NONE, _32B, _64B, _128B.
  const int swizzle = swizzleBytes == 128 ? 3 : swizzleBytes == 64 ? 2 : swizzleBytes == 32 ? 1 : 0;
  const int kInterleaveNone = 0, kL2Promotion256B = 3, kOobFillNone = 0;
  return check(d.tensorMapEncodeTiled(&out, dataType, rank, (void *)base, globalDims, strides,
                                      boxDims, elementStrides, kInterleaveNone, swizzle,
                                      kL2Promotion256B, kOobFillNone),
               "cuTensorMapEncodeTiled");
}
