//===- GpuLauncher.cpp - run a compiled kernel on host tensors ------------===//
#include "backends/runtime/GpuLauncher.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace kiln;

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
  if (!(e = cuda::check(d->moduleLoadData(&k->module, bytes.data()), "cuModuleLoadData")).empty()) {
    error = e + " (kernel '" + manifest.entry + "', target " + manifest.target + ")";
    return nullptr;
  }
  std::vector<const KernelManifest *> entries;
  if (manifest.isOp())
    for (const KernelManifest &km : manifest.kernels)
      entries.push_back(&km);
  else
    entries.push_back(&manifest);
  for (const KernelManifest *km : entries) {
    cuda::Function f = nullptr;
    if (!(e = cuda::check(d->moduleGetFunction(&f, k->module, km->entry.c_str()),
                          "cuModuleGetFunction"))
             .empty()) {
      error = e + " (kernel '" + km->entry + "', target " + manifest.target + ")";
      return nullptr;
    }
    // Static plus dynamic shared memory past 48 KB needs the opt-in, and
    // the manifest may not know the static part (PTX images): always opt in.
    // An exclusive launch beside another asks for more (besideSharedBytes).
    int64_t shared = km->dynamicSharedBytes;
    if (manifest.isOp())
      shared =
          std::max(shared, manifest.plan.launches[km - manifest.kernels.data()].besideSharedBytes);
    if (shared > 0) {
      const int kMaxDynamicShared = 8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
      e = cuda::check(d->funcSetAttribute(f, kMaxDynamicShared, (int)shared), "cuFuncSetAttribute");
      if (!e.empty()) {
        error = e + " (kernel '" + km->entry + "')";
        return nullptr;
      }
    }
    k->functions.push_back(f);
  }
  return k;
}

GpuKernel::~GpuKernel() {
  if (module)
    d->moduleUnload(module);
}

int GpuKernel::multiprocessors(std::string &error) {
  int sms = 0;
  cuda::Device dev = 0;
  const int kMultiprocessorCount = 16; // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
  std::string e = cuda::check(d->deviceGet(&dev, 0), "cuDeviceGet");
  if (e.empty())
    e = cuda::check(d->deviceGetAttribute(&sms, kMultiprocessorCount, dev), "cuDeviceGetAttribute");
  error = e;
  return sms;
}

/// The extent of each of `k`'s grid axes on `dims`, up to the first empty
/// one (the grid is empty then: the axes after it are not evaluated).
static bool gridExtents(const KernelManifest &k, const std::map<std::string, int64_t> &dims,
                        std::vector<int64_t> &extents, std::string &error) {
  extents.clear();
  for (const auto &expr : k.grid) {
    extents.push_back(0);
    if (!evalGridExpr(expr, dims, extents.back(), error))
      return false;
    if (extents.back() <= 0)
      break;
  }
  return true;
}

bool GpuKernel::residentCtas(const KernelManifest &k, int64_t &ctas, std::string &error) {
  if (!k.persistent)
    return true;
  int sms = multiprocessors(error);
  ctas = std::min<int64_t>(ctas, (int64_t)sms * k.persistent);
  return error.empty();
}

bool GpuKernel::ctasOf(const KernelManifest &k, const std::vector<ArgValue> &args, int64_t &ctas,
                       std::string &error) {
  std::map<std::string, int64_t> dims;
  std::vector<int64_t> extents;
  if (!bindArguments(k.signature, args, dims, error) || !gridExtents(k, dims, extents, error))
    return false;
  ctas = 1;
  for (int64_t g : extents)
    ctas *= std::max<int64_t>(g, 0);
  return residentCtas(k, ctas, error);
}

bool GpuKernel::launchOnDevice(const KernelManifest &k, cuda::Function function,
                               const std::vector<ArgValue> &args, cuda::Stream stream,
                               std::string &error, int64_t sharedBytes, bool early,
                               bool *launched) {
  if (launched)
    *launched = false;
  std::map<std::string, int64_t> dims;
  if (!bindArguments(k.signature, args, dims, error))
    return false;
  if (!dimsFitGpuKernels(dims, error))
    return false;
  unsigned grid[3] = {1, 1, 1};
  static const int64_t limits[3] = {2147483647, 65535, 65535};
  std::vector<int64_t> extents;
  if (!gridExtents(k, dims, extents, error))
    return false;
  for (size_t i = 0; i < extents.size(); ++i) {
    int64_t g = extents[i];
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
  for (auto &name : k.signature.runtimeDims)
    dimValues.push_back(dims.count(name) ? dims[name] : 0);
  std::vector<cuda::DevicePtr> pointers(args.size());
  std::vector<uint64_t> scalars(args.size());
  std::vector<void *> params;
  for (auto &v : dimValues)
    params.push_back(&v);
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamInfo &p = k.signature.params[i];
    if (p.isView) {
      pointers[i] = (cuda::DevicePtr)(uintptr_t)args[i].data;
      params.push_back(&pointers[i]);
      continue;
    }
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
  // Invariant divisors' multipliers, after the kernel's own parameters.
  std::vector<uint64_t> divisorArgs;
  if (!invariantDivisorArgs(k.divisors, dims, divisorArgs, error))
    return false;
  for (auto &v : divisorArgs)
    params.push_back(&v);
  // TMA descriptors, by value after those.
  std::string e;
  std::vector<cuda::TensorMap> maps(k.tensorMaps.size());
  for (size_t t = 0; e.empty() && t < k.tensorMaps.size(); ++t) {
    const TensorMapInfo &info = k.tensorMaps[t];
    const ParamInfo &p = k.signature.params[info.param];
    const ArgValue &a = args[info.param];
    std::vector<long long> shape(a.shape.begin(), a.shape.end()),
        box(info.box.begin(), info.box.end());
    if (!tmaStridesFit(p.name, a.shape, dtypeBytes(p.dtype), e))
      break;
    e = cuda::encodeTensorMap(*d, maps[t], tensorMapDataType(p.dtype), pointers[info.param],
                              shape.data(), box.data(), shape.size(), dtypeBytes(p.dtype),
                              info.swizzle);
    if (!e.empty())
      e += " (tensor map of '" + p.name + "')";
    params.push_back(&maps[t]);
  }
  // A persistent kernel: as many CTAs as stay resident, looping over the grid.
  if (e.empty() && k.persistent) {
    int64_t ctas = (int64_t)grid[0] * grid[1] * grid[2];
    residentCtas(k, ctas, e);
    grid[0] = (unsigned)ctas;
    grid[1] = grid[2] = 1;
  }
  unsigned shared = (unsigned)std::max(k.dynamicSharedBytes, sharedBytes);
  if (e.empty() && early) {
    cuda::LaunchAttribute attr = {};
    attr.id = cuda::kProgrammaticStreamSerialization;
    attr.value.flag = 1;
    cuda::LaunchConfig config = {grid[0], grid[1], grid[2], (unsigned)k.threads, 1, 1, shared,
                                 stream,  &attr,   1};
    e = cuda::check(d->launchKernelEx(&config, function, params.data(), nullptr),
                    "cuLaunchKernelEx");
  } else if (e.empty()) {
    e = cuda::check(d->launchKernel(function, grid[0], grid[1], grid[2], (unsigned)k.threads, 1, 1,
                                    shared, stream, params.data(), nullptr),
                    "cuLaunchKernel");
  }
  if (e.empty() && launched)
    *launched = true;
  if (!e.empty()) {
    error = e + " (kernel '" + k.entry + "')";
    return false;
  }
  return true;
}

bool GpuKernel::launch(const std::vector<ArgValue> &args, std::string &error,
                       double *milliseconds) {
  std::map<std::string, int64_t> dims;
  if (!bindArguments(m.signature, args, dims, error))
    return false;
  std::vector<cuda::DevicePtr> owned; // every device allocation, freed at the end
  auto allocate = [&](size_t bytes, cuda::DevicePtr &ptr, std::string &e) {
    ptr = 0;
    if (!bytes)
      return true;
    e = cuda::check(d->memAlloc(&ptr, bytes), "cuMemAlloc");
    if (e.empty())
      owned.push_back(ptr);
    return e.empty();
  };
  std::string e;
  std::vector<ArgValue> onDevice = args;
  std::vector<size_t> bytes(args.size(), 0);
  for (size_t i = 0; e.empty() && i < args.size(); ++i) {
    const ParamInfo &p = m.signature.params[i];
    if (!p.isView)
      continue;
    bytes[i] = dtypeBytes(p.dtype);
    for (int64_t s : args[i].shape)
      bytes[i] *= s;
    cuda::DevicePtr ptr = 0;
    if (allocate(bytes[i], ptr, e) && bytes[i])
      e = cuda::check(d->memcpyHtoD(ptr, args[i].data, bytes[i]), "cuMemcpyHtoD");
    // A zero-sized view still needs a non-null pointer to bind; it is never read.
    onDevice[i].data = ptr ? (void *)(uintptr_t)ptr : args[i].data;
  }
  // Two streams: one for the launches in order, one of high priority for a
  // launch beside the one before it. Both blocking (flags 0): the copies
  // and scratch fills, on the legacy default stream, finish before either
  // runs a kernel, and the two streams' kernels still run side by side.
  cuda::Stream mainStream = nullptr, sideStream = nullptr;
  int leastPriority = 0, greatestPriority = 0;
  const unsigned kStreamFlags = 0; // CU_STREAM_DEFAULT: see above
  if (e.empty())
    e = cuda::check(d->ctxGetStreamPriorityRange(&leastPriority, &greatestPriority),
                    "cuCtxGetStreamPriorityRange");
  if (e.empty())
    e = cuda::check(d->streamCreateWithPriority(&mainStream, kStreamFlags, leastPriority),
                    "cuStreamCreateWithPriority");
  if (e.empty())
    e = cuda::check(d->streamCreateWithPriority(&sideStream, kStreamFlags, greatestPriority),
                    "cuStreamCreateWithPriority");
  std::vector<cuda::Event> events; // destroyed at the end
  auto ok = [](cuda::Result r, const char *what, std::string &err) {
    err = cuda::check(r, what);
    return err.empty();
  };
  auto event = [&](unsigned flags, cuda::Event &ev, std::string &err) {
    ev = nullptr;
    if (!ok(d->eventCreate(&ev, flags), "cuEventCreate", err))
      return false;
    events.push_back(ev);
    return true;
  };
  // The time runs from the first kernel's launch: the scratch fills before
  // it are not the op's work.
  cuda::Event start = nullptr, stop = nullptr;
  if (e.empty() && milliseconds)
    event(0, start, e) && event(0, stop, e);
  auto startClock = [&](std::string &err) {
    return !start || ok(d->eventRecord(start, mainStream), "cuEventRecord", err);
  };
  if (e.empty() && m.isOp()) {
    auto scratch = [&](const ParamInfo &, size_t n, ArgValue &out, std::string &err) {
      cuda::DevicePtr ptr = 0;
      if (!allocate(std::max<size_t>(n, 1), ptr, err))
        return false;
      err = cuda::check(d->memsetD8(ptr, 0xff, std::max<size_t>(n, 1)), "cuMemsetD8");
      out.data = (void *)(uintptr_t)ptr;
      return err.empty();
    };
    // A launch marked `overlap` starts where the launch before it starts:
    // each launch on the main stream is preceded by an event the next may
    // wait on. Only where OpPlan::Launch::runsBeside says so; otherwise it
    // runs in order, its flags set by then.
    const unsigned kDisableTiming = 2; // CU_EVENT_DISABLE_TIMING
    int sms = e.empty() ? multiprocessors(e) : 0;
    cuda::Event before = nullptr; // recorded before the last launch on the main stream
    // A launch that starts early does so only right after a launch of this
    // call on the same stream: never after the caller's work.
    bool lastRan = false;
    auto step = [&](size_t i, const std::vector<ArgValue> &kargs, std::string &err) {
      if (i == 0 && !startClock(err))
        return false;
      int64_t ctas = 0;
      bool beside = i > 0 && m.plan.launches[i].overlap;
      if (beside && !ctasOf(m.kernels[i], kargs, ctas, err))
        return false;
      if (!beside || !m.plan.launches[i].runsBeside(ctas, sms)) {
        // The event marks where a launch beside the next would start; it
        // would also stand between an early launch and the one before it.
        bool early = lastRan && m.plan.launches[i].early;
        bool nextBeside = i + 1 < m.plan.launches.size() && m.plan.launches[i + 1].overlap;
        if ((!early || nextBeside) &&
            !(event(kDisableTiming, before, err) &&
              ok(d->eventRecord(before, mainStream), "cuEventRecord", err)))
          return false;
        return launchOnDevice(m.kernels[i], functions[i], kargs, mainStream, err, 0, early,
                              &lastRan);
      }
      lastRan = false; // the main stream's next launch follows an event wait
      cuda::Event done = nullptr;
      return event(kDisableTiming, done, err) &&
             ok(d->streamWaitEvent(sideStream, before, 0), "cuStreamWaitEvent", err) &&
             launchOnDevice(m.kernels[i], functions[i], kargs, sideStream, err,
                            m.plan.launches[i].besideSharedBytes) &&
             ok(d->eventRecord(done, sideStream), "cuEventRecord", err) &&
             ok(d->streamWaitEvent(mainStream, done, 0), "cuStreamWaitEvent", err);
    };
    if (e.empty())
      runOpPlan(m.plan, onDevice, scratch, step, e);
  } else if (e.empty() && startClock(e)) {
    launchOnDevice(m, functions[0], onDevice, mainStream, e);
  }
  float ms = 0;
  if (e.empty() && milliseconds && ok(d->eventRecord(stop, mainStream), "cuEventRecord", e) &&
      ok(d->eventSynchronize(stop), "cuEventSynchronize", e) &&
      ok(d->eventElapsedTime(&ms, start, stop), "cuEventElapsedTime", e))
    *milliseconds = ms;
  if (e.empty())
    e = cuda::check(d->ctxSynchronize(), "kernel execution");
  for (size_t i = 0; e.empty() && i < args.size(); ++i) {
    const ParamInfo &p = m.signature.params[i];
    if (p.isView && p.access != "in" && bytes[i])
      e = cuda::check(
          d->memcpyDtoH(args[i].data, (cuda::DevicePtr)(uintptr_t)onDevice[i].data, bytes[i]),
          "cuMemcpyDtoH");
  }
  for (cuda::Event ev : events)
    d->eventDestroy(ev);
  for (cuda::Stream st : {mainStream, sideStream})
    if (st)
      d->streamDestroy(st);
  for (cuda::DevicePtr ptr : owned)
    d->memFree(ptr);
  if (!e.empty()) {
    error = e.find("(kernel '") == std::string::npos ? e + " (kernel '" + m.entry + "')" : e;
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

std::unique_ptr<GpuSelection> GpuSelection::load(const std::string &path, std::string &error) {
  json::Value v;
  if (!json::parseFile(path, v, error))
    return nullptr;
  if (!SelectionManifest::isSelection(v))
    return nullptr;
  auto sel = std::make_unique<GpuSelection>();
  if (!SelectionManifest::fromJson(v, sel->s, error)) {
    error = path + ": " + error;
    return nullptr;
  }
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  for (const SelectionManifest::Rule &r : sel->s.rules) {
    auto k = loadKernelFromManifest(dir + "/" + r.manifest, error);
    if (!k)
      return nullptr;
    sel->kernels.push_back(std::move(k));
  }
  return sel;
}

bool GpuSelection::launch(const std::vector<ArgValue> &args, std::string &error,
                          double *milliseconds, size_t *rule) {
  std::map<std::string, int64_t> dims;
  if (!bindArguments(manifest().signature, args, dims, error))
    return false;
  int sms = kernels.front()->multiprocessors(error);
  if (!error.empty())
    return false;
  size_t chosen = 0;
  if (!chooseSelectionRule(s, dims, sms, chosen, error))
    return false;
  if (rule)
    *rule = chosen;
  return kernels[chosen]->launch(args, error, milliseconds);
}
