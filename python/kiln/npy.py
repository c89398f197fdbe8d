"""Arrays to and from the .npy files `kiln run --inputs DIR --save DIR` reads and writes.

kiln knows bf16 but .npy does not: on disk a bf16 tensor is its uint16 bit
patterns (kiln has no uint16 dtype, so a uint16 file is always bf16). Going
out, an ml_dtypes.bfloat16 array is written as its bits; coming back, uint16
arrays become ml_dtypes.bfloat16 where ml_dtypes is installed and stay
uint16 bit patterns where it is not (`bits.astype(np.uint32) << 16`, viewed
as float32, gives their values). f8e4m3 likewise: its uint8 bits on disk (kiln
has no uint8 dtype), ml_dtypes.float8_e4m3fn in Python where installed.
"""
from pathlib import Path

import numpy as np

try:
    from ml_dtypes import bfloat16, float8_e4m3fn
except ImportError:
    bfloat16 = float8_e4m3fn = None


def to_file_array(value):
    """`value` (an array or a number; a number becomes a 0-d array) as it
    goes into a .npy file kiln reads: C order, bf16 as uint16 bits."""
    a = np.asarray(value)
    if bfloat16 is not None and a.dtype == bfloat16:
        a = a.view(np.uint16)
    if float8_e4m3fn is not None and a.dtype == float8_e4m3fn:
        a = a.view(np.uint8)
    return a if a.flags.c_contiguous else a.copy(order="C")


def from_file_array(a):
    """An array read from a file kiln wrote, bf16 bits as bfloat16 and f8e4m3
    bits as float8_e4m3fn where ml_dtypes is installed."""
    if bfloat16 is not None and a.dtype == np.uint16:
        return a.view(bfloat16)
    if float8_e4m3fn is not None and a.dtype == np.uint8:
        return a.view(float8_e4m3fn)
    return a


def write(directory, arrays):
    """Writes {name: array} as directory/NAME.npy (NAME a parameter's name,
    or NAME.in for an inout tensor's value before a run)."""
    for name, value in arrays.items():
        if not isinstance(name, str) or not name.removesuffix(".in").isidentifier():
            raise ValueError(f"input name {name!r} is not a parameter name")
        np.save(Path(directory) / f"{name}.npy", to_file_array(value), allow_pickle=False)


def read(directory):
    """{stem: array} of every directory/STEM.npy."""
    return {f.stem: from_file_array(np.load(f, allow_pickle=False))
            for f in sorted(Path(directory).glob("*.npy"))}
