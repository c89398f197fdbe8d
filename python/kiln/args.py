"""A launch's argument block, built once per shape and rewritten in place.

cuLaunchKernel takes `void **kernelParams`: one pointer per kernel parameter,
each to that parameter's bytes. The launcher builds the array once per
shape, pointing at ctypes objects it keeps (runtime dims as i64, then tensor
pointers and scalars, invariant-divisor arguments, TMA descriptors; the
order of GpuLauncher.cpp's launchOnDevice). A call then only sets the
objects whose values change (a tensor's data pointer, a scalar), so its
cost does not grow with the number of arguments' bookkeeping. The driver
copies the values at launch time (and at CUDA-graph capture), so rewriting
them afterwards is safe.

Plain ctypes: nothing here needs a GPU, except TensorMap.point, which
encodes through the driver.
"""
import ctypes

from . import cuda
from .manifest import DTYPE_BYTES

SCALAR_CTYPES = {"f32": ctypes.c_float, "f64": ctypes.c_double,
                 "i32": ctypes.c_int32, "i64": ctypes.c_int64}
# CUtensorMapDataType by dtype; a copy moves bits, so i8 and f8e4m3 travel as UINT8.
TMA_DTYPES = {"i8": 0, "f8e4m3": 0, "i32": 3, "i64": 5, "f16": 6, "f32": 7, "f64": 8, "bf16": 9}
TMA_SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}  # CU_TENSOR_MAP_SWIZZLE_NONE, _32B, _64B, _128B


def scalar_holder(dtype):
    """A ctypes object holding a scalar parameter of `dtype` as the kernel
    reads it; assigning `.value` a value of the wrong type raises TypeError."""
    return SCALAR_CTYPES[dtype]()


class ParamBlock:
    """The kernelParams array over `values` (ctypes objects, kept alive here)."""

    def __init__(self, values):
        self.values = list(values)
        self.array = (ctypes.c_void_p * len(self.values))(*map(ctypes.addressof, self.values))

    def address(self, index):
        """Where parameter `index`'s bytes are (what the array holds)."""
        return self.array[index]


def tensor_map_layout(shape, dtype, box):
    """cuTensorMapEncodeTiled's dims, byte strides and box, innermost dim
    first, for a contiguous tensor of `shape` (outermost first)."""
    dims = list(reversed(shape))
    strides, stride = [], DTYPE_BYTES[dtype]
    for d in dims[:-1]:
        stride *= d
        strides.append(stride)
    return dims, strides, list(reversed(box))


class TensorMap:
    """A TMA descriptor passed by value: 128 bytes, 64-byte aligned, over a
    tensor of fixed shape, re-encoded only when its base pointer changes."""

    def __init__(self, shape, dtype, box, swizzle):
        raw = ctypes.create_string_buffer(128 + 64)
        # What the block points at; it keeps `raw` alive (from_buffer), also
        # where nothing keeps this object (a map over scratch, encoded once).
        self.storage = (ctypes.c_ubyte * 128).from_buffer(raw, -ctypes.addressof(raw) % 64)
        dims, strides, box = tensor_map_layout(shape, dtype, box)
        rank = len(dims)
        self._encode_args = (
            TMA_DTYPES[dtype], rank, (ctypes.c_uint64 * rank)(*dims),
            (ctypes.c_uint64 * max(rank - 1, 1))(*strides), (ctypes.c_uint32 * rank)(*box),
            (ctypes.c_uint32 * rank)(*[1] * rank), TMA_SWIZZLES[swizzle])
        self.pointer = None

    def point(self, pointer, what):
        """Makes the descriptor describe the tensor at `pointer`."""
        if pointer != self.pointer:
            cuda.encode_tensor_map(ctypes.addressof(self.storage), pointer, *self._encode_args,
                                   what=what)
            self.pointer = pointer
