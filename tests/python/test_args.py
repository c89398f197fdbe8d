"""The argument block's layout: what cuLaunchKernel reads at each pointer."""
import ctypes
import gc
import struct

import pytest

from kiln.args import ParamBlock, TensorMap, scalar_holder, tensor_map_layout


def read(block, index, fmt):
    size = struct.calcsize(fmt)
    return struct.unpack(fmt, ctypes.string_at(block.address(index), size))[0]


def test_block_points_at_values_rewritten_in_place():
    pointer, scale, n = ctypes.c_void_p(0x1000), scalar_holder("f32"), scalar_holder("i32")
    block = ParamBlock([ctypes.c_int64(7), pointer, scale, n, ctypes.c_uint64(2**40 + 3)])
    scale.value, n.value = 0.5, -3
    assert [read(block, i, f) for i, f in enumerate("qPfiQ")] == [7, 0x1000, 0.5, -3, 2**40 + 3]
    pointer.value = 0x2000  # a later call's tensor: same array, new value
    assert read(block, 1, "P") == 0x2000


def test_scalar_holders_take_their_type_only():
    assert isinstance(scalar_holder("f64"), ctypes.c_double)
    assert isinstance(scalar_holder("i64"), ctypes.c_int64)
    with pytest.raises(TypeError):
        scalar_holder("i32").value = 1.5
    with pytest.raises(TypeError):
        scalar_holder("f32").value = "1"


def test_tensor_map_layout_is_innermost_first():
    dims, strides, box = tensor_map_layout((5, 6, 7), "bf16", (1, 2, 7))
    assert dims == [7, 6, 5] and strides == [14, 84] and box == [7, 2, 1]


def test_tensor_map_storage_is_aligned_and_outlives_its_map():
    t = TensorMap((64, 128), "f32", (64, 32), 128)
    assert ctypes.addressof(t.storage) % 64 == 0 and len(bytes(t.storage)) == 128
    assert t.pointer is None  # encoded at the first point(), by the driver
    block = ParamBlock([t.storage])
    assert block.address(0) == ctypes.addressof(t.storage)
    # A block holds only the storage (a map over scratch is encoded once and
    # dropped): the bytes it points at must stay allocated, not be reused.
    ctypes.memmove(t.storage, b"\x5a" * 128, 128)
    del t
    gc.collect()
    reuse = [ctypes.create_string_buffer(192) for _ in range(1000)]
    assert bytes(block.values[0]) == b"\x5a" * 128 and len(reuse) == 1000
