"""A Kernel on a machine without a GPU: it loads, and a call fails clearly."""
import importlib.util
import json

import pytest
import samples

import kiln


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(samples.single()))
    return kiln.load(path)


def test_argument_count_is_checked_first(kernel):
    with pytest.raises(TypeError, match=r"toy\[toy_sm_90a.yaml\] takes 5 arguments, got 2"):
        kernel(1, 2)


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed")
def test_a_call_without_torch_says_so(kernel):
    with pytest.raises(kiln.KilnError, match="needs PyTorch"):
        kernel(None, None, None, 1.0, 1)
