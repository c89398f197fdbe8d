"""The few CUDA driver API calls the launcher makes, through ctypes.

No CUDA Python package is needed: libcuda.so.1 is on every machine that can
run a kernel, and the calls are the C++ runtime's (backends/runtime/
CudaDriver.cpp). The library is opened at the first call, so importing kiln
on a machine without a GPU costs nothing. Handles (modules, functions,
events, streams, contexts) are plain ints.

The hot calls (launch, event record and wait) are bound with argtypes once,
so a launch converts only Python ints.
"""
import contextlib
import ctypes

from .errors import KilnError

_lib = None
INVALID_CONTEXT = 201  # CUDA_ERROR_INVALID_CONTEXT: no context current on this thread


def lib():
    """libcuda, initialised; KilnError where there is none."""
    global _lib
    if _lib is None:
        try:
            cu = ctypes.CDLL("libcuda.so.1")
        except OSError:
            raise KilnError("no CUDA driver on this machine (libcuda.so.1 not found)") from None
        P, U, I = ctypes.c_void_p, ctypes.c_uint, ctypes.c_int
        cu.cuLaunchKernel.argtypes = [P, U, U, U, U, U, U, U, P, P, P]
        cu.cuLaunchKernelEx.argtypes = [ctypes.POINTER(LaunchConfig), P, P, P]
        cu.cuEventRecord.argtypes = [P, P]
        cu.cuStreamWaitEvent.argtypes = [P, P, U]
        cu.cuCtxPushCurrent_v2.argtypes = [P]
        cu.cuTensorMapEncodeTiled.argtypes = [P, I, U, P, P, P, P, P, I, I, I, I]
        _lib = cu
        check(cu.cuInit(0), "cuInit")
    return _lib


class LaunchAttribute(ctypes.Structure):
    """CUlaunchAttribute: an id, padding, a 64-byte value (an int here)."""
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_int),
                ("rest", ctypes.c_char * 60)]


class LaunchConfig(ctypes.Structure):
    """CUlaunchConfig, for cuLaunchKernelEx."""
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shared", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)), ("num_attrs", ctypes.c_uint)]


# CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: the launch may start
# while the one before it in the stream finishes (it waits for that one's
# completion itself, griddepcontrol.wait).
PROGRAMMATIC_STREAM_SERIALIZATION = 6


def early_config(grid, threads):
    """A cuLaunchKernelEx configuration that starts a launch early; its
    stream and shared memory are set at each launch."""
    attr = LaunchAttribute(id=PROGRAMMATIC_STREAM_SERIALIZATION, value=1)
    config = LaunchConfig(grid=(ctypes.c_uint * 3)(*grid),
                          block=(ctypes.c_uint * 3)(threads, 1, 1), num_attrs=1)
    config.attrs = ctypes.pointer(attr)
    config._attr = attr  # kept alive with the configuration
    return config


def error_text(rc):
    name = ctypes.c_char_p()
    _lib.cuGetErrorString(rc, ctypes.byref(name))
    return name.value.decode() if name.value else f"error {rc}"


def check(rc, what):
    if rc != 0:
        raise KilnError(f"{what} failed: {error_text(rc)}")


def primary_context(device):
    """Device ordinal `device`'s primary context: the one PyTorch uses."""
    cu = lib()
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(cu.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    return ctx.value


@contextlib.contextmanager
def current(context):
    """`context` current on this thread inside the block, the caller's after."""
    cu = lib()
    check(cu.cuCtxPushCurrent_v2(context), "cuCtxPushCurrent")
    try:
        yield
    finally:
        cu.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))


def multiprocessors(device):
    cu, dev, count = lib(), ctypes.c_int(), ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
    check(cu.cuDeviceGetAttribute(ctypes.byref(count), 16, dev),  # MULTIPROCESSOR_COUNT
          "cuDeviceGetAttribute")
    return count.value


def load_module(image, what):
    """Loads a cubin (or NUL-terminated PTX) into the current context."""
    module = ctypes.c_void_p()
    check(lib().cuModuleLoadData(ctypes.byref(module), image), f"cuModuleLoadData({what})")
    return module.value


def get_function(module, entry):
    function = ctypes.c_void_p()
    check(lib().cuModuleGetFunction(ctypes.byref(function), ctypes.c_void_p(module),
                                    entry.encode()), f"cuModuleGetFunction({entry})")
    return function.value


def set_max_dynamic_shared(function, nbytes, entry):
    """Opts `function` in to `nbytes` of dynamic shared memory: past 48 KB
    static plus dynamic needs it, and a PTX image's static part is unknown,
    so the launcher always opts in."""
    check(lib().cuFuncSetAttribute(ctypes.c_void_p(function), 8, ctypes.c_int(nbytes)),
          f"cuFuncSetAttribute({entry})")  # 8: MAX_DYNAMIC_SHARED_SIZE_BYTES


def event():
    """An event without timing (CU_EVENT_DISABLE_TIMING), for ordering streams."""
    ev = ctypes.c_void_p()
    check(lib().cuEventCreate(ctypes.byref(ev), 2), "cuEventCreate")
    return ev.value


def encode_tensor_map(address, pointer, dtype, rank, dims, strides, box, element_strides,
                      swizzle, what):
    """Writes a tiled TMA descriptor at `address`: no interleave, the given
    swizzle, L2 promotion of 256 bytes, no out-of-bounds fill (the C++
    runtime's cuda::encodeTensorMap)."""
    check(lib().cuTensorMapEncodeTiled(address, dtype, rank, pointer, dims, strides, box,
                                       element_strides, 0, swizzle, 3, 0),
          f"cuTensorMapEncodeTiled({what})")
