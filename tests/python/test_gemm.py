"""ops/gemm: each kernel (B as [K, N] or [N, K], with a bias), each
activation and operand / output type, on the CPU backend against numpy's
float64 product of the same inputs (the op's own float64 reference runs the
same tiling; this one does not): ragged M, N and K."""
import math

import numpy as np
import pytest
from conftest import REPO, needs_kiln, real_kiln

import kiln

GEMM = REPO / "ops" / "gemm" / "gemm.tile"
SCHEDULES = REPO / "ops" / "gemm" / "schedules"
M, N, K = 70, 90, 100


def operand(rng, shape, dtype):
    """Random 16-bit operand bits and their float64 values."""
    x = rng.standard_normal(shape, dtype=np.float32)
    if dtype == "f16":
        bits = x.astype(np.float16)
        return bits, bits.astype(np.float64)
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def widen(out, dtype):
    if dtype == "f32":
        return out.astype(np.float64)
    if dtype == "f16":
        return out.view(np.float16).astype(np.float64)
    return (out.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


ACTIVATIONS = {
    0: lambda x: x,
    1: lambda x: np.maximum(x, 0.0),
    2: lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
    3: lambda x: x / (1 + np.exp(-x)),
}


@needs_kiln
@pytest.mark.parametrize("kernel", ["gemm", "gemm_nt", "gemm_bias"])
@pytest.mark.parametrize("act,ab,out", [(0, "bf16", "bf16"), (1, "f16", "f32"),
                                        (2, "bf16", "f16"), (3, "f16", "bf16")])
def test_gemm_matches_numpy(kernel, act, ab, out):
    rng = np.random.default_rng(act)
    a, a64 = operand(rng, (M, K), ab)
    b, b64 = operand(rng, (N, K) if kernel == "gemm_nt" else (K, N), ab)
    inputs = {"a": a, "b": b}
    want = a64 @ (b64.T if kernel == "gemm_nt" else b64)
    if kernel == "gemm_bias":
        inputs["bias"] = rng.standard_normal(N).astype(np.float32)
        want = want + inputs["bias"].astype(np.float64)[None, :]
    want = ACTIVATIONS[act](want)
    run = kiln.run_cpu(GEMM, SCHEDULES / f"{kernel}_cpu.yaml", inputs=inputs,
                       dims={"M": M, "N": N, "K": K},
                       consts={"ACT": act, "AB": ab, "OUT": out}, kiln_bin=real_kiln())
    assert run.ok
    got = widen(run.outputs["c"], out)
    rel = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert rel < (2e-7 if out == "f32" else 5e-3), rel  # C's rounding; NaN fails


@needs_kiln
def test_unknown_activation_is_refused():
    with pytest.raises(kiln.KilnError, match="ACT must be 0 \\(none\\), 1 \\(relu\\)"):
        kiln.run_cpu(GEMM, SCHEDULES / "gemm_cpu.yaml", consts={"ACT": 4},
                     kiln_bin=real_kiln())
