//===- GpuLauncher.cpp - run a compiled kernel on host tensors ------------===//
#include "backends/runtime/GpuLauncher.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace kiln;

/// CUtensorMapDataType of an element type. A copy moves bits, so 8-bit
/// integers travel as UINT8 whatever their sign.
static int tensorMapDataType(DType t) {
  switch (t) {
  case DType::I8:
    return 0; // UINT8
  case DType::I32:
    return 3; // INT32
  case DType::I64:
    return 5; // INT64
  case DType::F16:
    return 6; // FLOAT16
  case DType::F32:
    return 7; // FLOAT32
  case DType::F64:
    return 8; // FLOAT64
  case DType::BF16:
    return 9; // BFLOAT16
  }
  return 7;
}

std::unique_ptr<GpuKernel> GpuKernel::load(const KernelManifest &manifest, const std::string &image,
                                           std::string &error) {
  std::string why;
  const cuda::Driver *d = cuda::driver(why);
  if (!d) {
    error = why;
    return nullptr;
  }
  auto k = std::unique_ptr<GpuKernel>(new GpuKernel());
  k->m = manifest;
  k->d = d;
  // cuModuleLoadData wants PTX NUL-terminated.
  std::string bytes = image;
  bytes.push_back('\0');
  std::string e;
  if (!(e = cuda::check(d->moduleLoadData(&k->module, bytes.data()), "cuModuleLoadData")).empty() ||
      !(e = cuda::check(d->moduleGetFunction(&k->function, k->module, manifest.entry.c_str()),
                        "cuModuleGetFunction"))
           .empty()) {
    error = e + " (kernel '" + manifest.entry + "', target " + manifest.target + ")";
    return nullptr;
  }
  if (manifest.dynamicSharedBytes > 48 * 1024) {
    const int kMaxDynamicShared = 8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    e = cuda::check(
        d->funcSetAttribute(k->function, kMaxDynamicShared, (int)manifest.dynamicSharedBytes),
        "cuFuncSetAttribute");
    if (!e.empty()) {
      error = e;
      return nullptr;
    }
  }
  return k;
}

GpuKernel::~GpuKernel() {
  if (module)
    d->moduleUnload(module);
}

bool GpuKernel::launch(const std::vector<ArgValue> &args, std::string &error,
                       double *milliseconds) {
  std::map<std::string, int64_t> dims;
  if (!bindArguments(m.signature, args, dims, error))
    return false;
  unsigned grid[3] = {1, 1, 1};
  static const int64_t limits[3] = {2147483647, 65535, 65535};
  for (size_t i = 0; i < m.grid.size(); ++i) {
    int64_t g;
    if (!evalGridExpr(m.grid[i], dims, g, error))
      return false;
    if (g <= 0) // an empty grid: nothing to do
      return true;
    if (g > limits[i]) {
      error = "grid extent " + std::to_string(g) + " along " + "xyz"[i] +
              " exceeds the CUDA limit " + std::to_string(limits[i]);
      return false;
    }
    grid[i] = (unsigned)g;
  }
  // Kernel parameters: runtime dims as i64, then views and scalars.
  std::vector<int64_t> dimValues;
  for (auto &name : m.signature.runtimeDims)
    dimValues.push_back(dims.count(name) ? dims[name] : 0);
  struct Buffer {
    cuda::DevicePtr ptr = 0;
    size_t bytes = 0;
  };
  std::vector<Buffer> buffers(args.size());
  std::vector<uint64_t> scalars(args.size());
  std::vector<void *> params;
  for (auto &v : dimValues)
    params.push_back(&v);
  std::string e;
  auto cleanup = [&] {
    for (auto &b : buffers)
      if (b.ptr)
        d->memFree(b.ptr);
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamInfo &p = m.signature.params[i];
    if (p.isView) {
      size_t n = dtypeBytes(p.dtype);
      for (int64_t s : args[i].shape)
        n *= s;
      buffers[i].bytes = n;
      if (n && !(e = cuda::check(d->memAlloc(&buffers[i].ptr, n), "cuMemAlloc")).empty())
        break;
      if (n && !(e = cuda::check(d->memcpyHtoD(buffers[i].ptr, args[i].data, n), "cuMemcpyHtoD"))
                    .empty())
        break;
      params.push_back(&buffers[i].ptr);
    } else {
      // Scalars travel in their own type.
      double v = args[i].scalar;
      switch (p.dtype) {
      case DType::F32: {
        float f = v;
        std::memcpy(&scalars[i], &f, 4);
        break;
      }
      case DType::F64:
        std::memcpy(&scalars[i], &v, 8);
        break;
      case DType::I32: {
        int32_t x = (int32_t)v;
        std::memcpy(&scalars[i], &x, 4);
        break;
      }
      default: {
        int64_t x = (int64_t)v;
        std::memcpy(&scalars[i], &x, 8);
        break;
      }
      }
      params.push_back(&scalars[i]);
    }
  }
  // TMA descriptors, by value after the kernel's own parameters.
  std::vector<cuda::TensorMap> maps(m.tensorMaps.size());
  for (size_t t = 0; e.empty() && t < m.tensorMaps.size(); ++t) {
    const TensorMapInfo &info = m.tensorMaps[t];
    const ParamInfo &p = m.signature.params[info.param];
    const ArgValue &a = args[info.param];
    std::vector<long long> dims(a.shape.begin(), a.shape.end()),
        box(info.box.begin(), info.box.end());
    e = cuda::encodeTensorMap(*d, maps[t], tensorMapDataType(p.dtype), buffers[info.param].ptr,
                              dims.data(), box.data(), dims.size(), dtypeBytes(p.dtype));
    if (!e.empty())
      e += " (tensor map of '" + p.name + "')";
    params.push_back(&maps[t]);
  }
  // A persistent kernel: as many CTAs as stay resident, looping over the grid.
  if (e.empty() && m.persistent) {
    int sms = 0;
    cuda::Device dev = 0;
    const int kMultiprocessorCount = 16; // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    e = cuda::check(d->deviceGet(&dev, 0), "cuDeviceGet");
    if (e.empty())
      e = cuda::check(d->deviceGetAttribute(&sms, kMultiprocessorCount, dev),
                      "cuDeviceGetAttribute");
    int64_t total = (int64_t)grid[0] * grid[1] * grid[2];
    grid[0] = (unsigned)std::min<int64_t>(total, (int64_t)sms * m.persistent);
    grid[1] = grid[2] = 1;
  }
  cuda::Event start = nullptr, stop = nullptr;
  if (e.empty() && milliseconds) {
    d->eventCreate(&start, 0);
    d->eventCreate(&stop, 0);
    d->eventRecord(start, nullptr);
  }
  if (e.empty())
    e = cuda::check(d->launchKernel(function, grid[0], grid[1], grid[2], (unsigned)m.threads, 1, 1,
                                    (unsigned)m.dynamicSharedBytes, nullptr, params.data(),
                                    nullptr),
                    "cuLaunchKernel");
  if (e.empty() && milliseconds) {
    d->eventRecord(stop, nullptr);
    d->eventSynchronize(stop);
    float ms = 0;
    d->eventElapsedTime(&ms, start, stop);
    *milliseconds = ms;
    d->eventDestroy(start);
    d->eventDestroy(stop);
  }
  if (e.empty())
    e = cuda::check(d->ctxSynchronize(), "kernel execution");
  for (size_t i = 0; e.empty() && i < args.size(); ++i) {
    const ParamInfo &p = m.signature.params[i];
    if (p.isView && p.access != "in" && buffers[i].bytes)
      e = cuda::check(d->memcpyDtoH(args[i].data, buffers[i].ptr, buffers[i].bytes),
                      "cuMemcpyDtoH");
  }
  cleanup();
  if (!e.empty()) {
    error = e + " (kernel '" + m.entry + "')";
    return false;
  }
  return true;
}

std::unique_ptr<GpuKernel> kiln::loadKernelFromManifest(const std::string &path,
                                                        std::string &error) {
  KernelManifest m;
  if (!KernelManifest::load(path, m, error))
    return nullptr;
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  std::ifstream in(dir + "/" + m.image, std::ios::binary);
  if (!in) {
    error = path + ": cannot read the image '" + m.image + "' it names";
    return nullptr;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return GpuKernel::load(m, ss.str(), error);
}
