//===- CudaDriver.h - the CUDA driver API, loaded at run time --*- C++ -*-===//
//
// Kiln builds and runs its tests on machines without a GPU or a CUDA driver,
// so nothing links libcuda: the runtime opens libcuda.so.1 when it is first
// asked for a device, and says so plainly when there is none.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_RUNTIME_CUDADRIVER_H
#define KILN_BACKENDS_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <string>

namespace kiln::cuda {

using Result = int;
using Device = int;
using DevicePtr = unsigned long long;
using Context = struct CtxOpaque *;
using Module = struct ModOpaque *;
using Function = struct FuncOpaque *;
using Stream = struct StreamOpaque *;
using Event = struct EventOpaque *;

/// CUlaunchAttribute and CUlaunchConfig (cuda.h), for cuLaunchKernelEx.
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int flag;
  } value;
};
struct LaunchConfig {
  unsigned gridX, gridY, gridZ, blockX, blockY, blockZ, sharedBytes;
  Stream stream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};
/// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: the launch may
/// start while the one before it in the stream finishes (it awaits that
/// one's completion itself, griddepcontrol.wait).
inline constexpr int kProgrammaticStreamSerialization = 6;

/// Entry points of libcuda that Kiln uses.
struct Driver {
  Result (*init)(unsigned);
  Result (*deviceGet)(Device *, int);
  Result (*deviceGetCount)(int *);
  Result (*deviceGetName)(char *, int, Device);
  Result (*deviceGetAttribute)(int *, int, Device);
  Result (*primaryCtxRetain)(Context *, Device);
  Result (*ctxSetCurrent)(Context);
  Result (*ctxSynchronize)();
  Result (*moduleLoadData)(Module *, const void *);
  Result (*moduleUnload)(Module);
  Result (*moduleGetFunction)(Function *, Module, const char *);
  Result (*funcSetAttribute)(Function, int, int);
  Result (*memAlloc)(DevicePtr *, size_t);
  Result (*memFree)(DevicePtr);
  Result (*memcpyHtoD)(DevicePtr, const void *, size_t);
  Result (*memcpyDtoH)(void *, DevicePtr, size_t);
  Result (*memsetD8)(DevicePtr, unsigned char, size_t);
  Result (*launchKernel)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, Stream, void **, void **);
  Result (*launchKernelEx)(const LaunchConfig *, Function, void **, void **);
  Result (*eventCreate)(Event *, unsigned);
  Result (*eventRecord)(Event, Stream);
  Result (*eventSynchronize)(Event);
  Result (*eventElapsedTime)(float *, Event, Event);
  Result (*eventDestroy)(Event);
  Result (*getErrorString)(Result, const char **);
  Result (*ctxGetStreamPriorityRange)(int *, int *);
  Result (*streamCreateWithPriority)(Stream *, unsigned, int);
  Result (*streamWaitEvent)(Stream, Event, unsigned);
  Result (*streamDestroy)(Stream);
  /// cuTensorMapEncodeTiled(map, dtype, rank, address, dims, strides (bytes,
  /// dims 1..rank-1), box, element strides, interleave, swizzle, L2
  /// promotion, OOB fill); the enums travel as ints.
  Result (*tensorMapEncodeTiled)(void *, int, unsigned, void *, const unsigned long long *,
                                 const unsigned long long *, const unsigned *, const unsigned *,
                                 int, int, int, int);
};

/// A TMA descriptor as the driver writes it: 128 bytes, 64-byte aligned.
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

/// Builds a tiled tensor map over a dense row-major tensor (dims outermost
/// first) copying `box` (outermost first), its 16-byte pieces swizzled in
/// rows of `swizzleBytes` (0: none); "" or the driver's error.
std::string encodeTensorMap(const Driver &d, TensorMap &out, int dataType, DevicePtr base,
                            const long long *dims, const long long *box, unsigned rank,
                            unsigned elemBytes, int64_t swizzleBytes);

/// The driver with a current context on device 0, or null with `why` set
/// (no libcuda, no device, init failed).
const Driver *driver(std::string &why);

/// "cuFoo failed: CUDA_ERROR_..." for a failed call, or empty for success.
std::string check(Result r, const char *what);

} // namespace kiln::cuda

#endif
