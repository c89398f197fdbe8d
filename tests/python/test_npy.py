"""The .npy files kiln run reads and writes: C order, bf16 as uint16 bits."""
import numpy as np
import pytest

from kiln import npy


def test_round_trip(tmp_path):
    arrays = {"x": np.arange(12, dtype=np.float32).reshape(3, 4),
              "slots": np.array([2, -1, 0], dtype=np.int32),
              "scale": np.float32(0.125), "count": 3}
    npy.write(tmp_path, arrays)
    back = npy.read(tmp_path)
    assert sorted(back) == ["count", "scale", "slots", "x"]
    assert back["x"].dtype == np.float32 and np.array_equal(back["x"], arrays["x"])
    assert back["scale"].shape == () and back["scale"].dtype == np.float32
    assert back["count"].shape == () and back["count"] == 3


def test_fortran_order_goes_out_in_c_order(tmp_path):
    a = np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3))
    assert npy.to_file_array(a).flags.c_contiguous
    npy.write(tmp_path, {"a": a})
    assert np.array_equal(np.load(tmp_path / "a.npy"), a)


def test_bad_names_are_refused(tmp_path):
    with pytest.raises(ValueError, match="input name '../x' is not a parameter name"):
        npy.write(tmp_path, {"../x": np.zeros(1)})


def test_bf16_without_ml_dtypes_stays_bits(monkeypatch):
    monkeypatch.setattr(npy, "bfloat16", None)
    bits = np.array([0x3F80, 0xC000], dtype=np.uint16)  # 1.0, -2.0
    assert npy.from_file_array(bits) is bits
    assert list((bits.astype(np.uint32) << 16).view(np.float32)) == [1.0, -2.0]


def test_bf16_with_ml_dtypes(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.array([1.0, -2.0, 0.5], dtype=ml_dtypes.bfloat16)
    assert npy.to_file_array(x).dtype == np.uint16
    npy.write(tmp_path, {"q": x})
    assert np.load(tmp_path / "q.npy").dtype == np.uint16
    back = npy.read(tmp_path)["q"]
    assert back.dtype == ml_dtypes.bfloat16 and np.array_equal(back, x)


def test_f8e4m3_bits(tmp_path):
    # Without ml_dtypes an f8e4m3 tensor is its uint8 bits both ways.
    bits = np.array([0x38, 0xB0, 0x7E], dtype=np.uint8)  # 1.0, -0.5, 448
    npy.write(tmp_path, {"s": bits})
    assert np.load(tmp_path / "s.npy").dtype == np.uint8
    ml_dtypes = pytest.importorskip("ml_dtypes")
    back = npy.read(tmp_path)["s"]
    assert back.dtype == ml_dtypes.float8_e4m3fn
    assert list(back.astype(np.float32)) == [1.0, -0.5, 448.0]
    assert npy.to_file_array(back).dtype == np.uint8
