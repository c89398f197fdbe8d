"""kiln.run_cpu: the CLI contract with a fake kiln, then the real CPU
backend on bundled ops (the tutorial softmax, GDN decode)."""
import numpy as np
import pytest
from conftest import REPO, needs_kiln, real_kiln

import kiln


def test_command_line_and_results(tmp_path, fake_kiln, op_files):
    kiln_bin, calls = fake_kiln
    tile, schedule = op_files
    q = np.linspace(-1, 1, 8, dtype=np.float32)
    run = kiln.run_cpu(tile, schedule, inputs={"q": q}, dims={"B": 2, "H": 4}, consts={"K": 64},
                       seed=7, ranges={"slots": (-1, 2)}, kiln_bin=kiln_bin)
    [argv] = calls()
    assert argv[:3] == ["run", str(tile), "-s"]
    for flags in [["--dims", "B=2,H=4"], ["-D", "K=64"], ["--range", "slots=-1:2"],
                  ["--seed", "7"], ["--json"]]:
        assert any(argv[i:i + len(flags)] == flags for i in range(len(argv)))
    assert run.ok and run.checks == [kiln.Check("o", 1e-7, 1e-5, True, False)]
    assert np.array_equal(run.outputs["q"], q)  # inputs come back as used
    assert run.outputs["o"].shape == (2, 3) and run.references["o"].dtype == np.float64
    assert run.before == {} and run.report["target"] == "cpu"


def test_expect_and_inputs_before_a_run(tmp_path, fake_kiln, op_files):
    kiln_bin, calls = fake_kiln
    state = np.ones(3, np.float32)
    run = kiln.run_cpu(*op_files, inputs={"state.in": state},
                       expect={"o": np.arange(6, dtype=np.float32).reshape(2, 3)},
                       kiln_bin=kiln_bin)
    assert "--expect" in calls()[0]
    assert run.ok and [c.name for c in run.checks] == ["o", "o vs --expect"]
    assert np.array_equal(run.before["state"], state)
    run = kiln.run_cpu(*op_files, expect={"o": np.zeros((2, 3))}, kiln_bin=kiln_bin)
    assert not run.ok and not run.checks[1].ok


def test_a_failed_check_is_a_result(tmp_path, fake_kiln, op_files):
    kiln_bin, _ = fake_kiln
    tile, schedule = op_files
    tile.write_text("fail\n")
    run = kiln.run_cpu(tile, schedule, kiln_bin=kiln_bin)
    assert not run.ok and not run.checks[0].ok and "o" in run.outputs


def test_bad_input_raises_kilns_message(tmp_path, fake_kiln, op_files):
    kiln_bin, _ = fake_kiln
    tile, schedule = op_files
    tile.write_text("bad\n")
    with pytest.raises(kiln.KilnError, match="exit 2\\):\nkiln: error: q.npy: dim 1 is 3"):
        kiln.run_cpu(tile, schedule, kiln_bin=kiln_bin)


def test_no_binary(op_files, no_kiln):
    with pytest.raises(kiln.KilnError, match="run_cpu needs the kiln binary"):
        kiln.run_cpu(*op_files)


DECODE = REPO / "ops" / "gdn" / "decode.tile"
DECODE_CPU = REPO / "ops" / "gdn" / "schedules" / "decode_cpu.yaml"
SMALL = dict(dims={"B": 3, "H": 2, "HV": 4, "N": 3}, consts={"K": 64, "V": 32})


@needs_kiln
def test_decode_on_the_cpu_backend():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((3, 1, 2, 64), dtype=np.float32)
    q = (q.view(np.uint32) >> 16).astype(np.uint16)  # bf16 bits
    A_log = rng.uniform(-1, 1, 4).astype(np.float32)
    slots = np.array([2, 0, 1], dtype=np.int32)
    run = kiln.run_cpu(DECODE, DECODE_CPU, seed=3, kiln_bin=real_kiln(), **SMALL,
                       inputs={"q": q, "A_log": A_log, "slots": slots, "scale": np.float32(0.125)})
    assert run.ok and {c.name for c in run.checks} >= {"o", "state"}
    assert all(c.ok and not c.nan and c.rel_error < c.tolerance for c in run.checks)
    assert set(run.outputs) == {"q", "k", "v", "a", "b", "A_log", "dt_bias", "slots", "state",
                                "o", "scale"}
    # Inputs come back as used (bf16 as bfloat16 where ml_dtypes is installed).
    assert np.array_equal(run.outputs["q"].view(np.uint16), q)
    assert np.array_equal(run.outputs["A_log"], A_log)
    assert np.array_equal(run.outputs["slots"], slots) and run.outputs["scale"] == np.float32(0.125)
    assert run.outputs["state"].shape == (3, 4, 32, 64) and run.outputs["state"].dtype == np.float32
    assert run.before["state"].shape == (3, 4, 32, 64)  # inout: also as it was
    assert not np.array_equal(run.before["state"], run.outputs["state"])
    assert run.outputs["o"].shape == (3, 1, 4, 32) and run.references["o"].shape == (3, 1, 4, 32)
    assert run.outputs["o"].dtype == (kiln.npy.bfloat16 or np.uint16)


@needs_kiln
def test_decode_with_an_f8e4m3_state():
    # The state as its e4m3 bits (uint8 in .npy files: numpy has no 8-bit
    # float); 0x38 is 1.0, 0xb0 is -0.5.
    state = np.tile(np.array([0x38, 0xB0], dtype=np.uint8), 3 * 4 * 32 * 32).reshape(3, 4, 32, 64)
    run = kiln.run_cpu(DECODE, DECODE_CPU.with_name("decode_cpu_f8.yaml"), seed=5,
                       kiln_bin=real_kiln(), **SMALL, inputs={"state": state})
    assert run.ok and all(c.ok and not c.nan for c in run.checks)
    assert np.array_equal(run.before["state"].view(np.uint8), state)
    out = run.outputs["state"]
    assert out.shape == state.shape and out.dtype.itemsize == 1
    assert not np.array_equal(out.view(np.uint8), state)  # updated, in place


@needs_kiln
def test_decode_bad_input_names_the_parameter():
    with pytest.raises(kiln.KilnError, match="A_log"):
        kiln.run_cpu(DECODE, DECODE_CPU, inputs={"A_log": np.zeros(5, np.float32)},
                     kiln_bin=real_kiln(), **SMALL)


SOFTMAX = REPO / "ops" / "softmax" / "softmax.tile"


@needs_kiln
@pytest.mark.parametrize("schedule", ["softmax_cpu", "softmax_sm_90a", "softmax_sm_90a_tma"])
def test_softmax_schedules_match_numpy(schedule):
    """A user's own check of each schedule, on the CPU backend: the tiling
    each schedule gives, against numpy's softmax of the same bf16 inputs."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((19, 300), dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    run = kiln.run_cpu(SOFTMAX, REPO / "ops" / "softmax" / "schedules" / f"{schedule}.yaml",
                       inputs={"x": x}, kiln_bin=real_kiln())
    assert run.ok
    xf = (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    want = np.exp(xf - xf.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    y = run.outputs["y"].view(np.uint16).astype(np.uint32) << 16
    assert np.abs(y.view(np.float32) - want).max() < 4e-3


WINDOWS = """
kernel windows(x: in f32[8, 16], y: out f32[4, 16], z: out f32[4, 8], s: out f32[4, 4])
  grid (p: 1)
{
  let t = load(x[0 +: 8, :]);
  store(y[0 +: 4, :], t[4 +: 4, :]);
  store(z[0 +: 4, :], t[2 +: 4, 8 +: 8]);
  store(s[0 +: 4, :], dot(t[0 +: 4, 2 +: 8], t.T[4 +: 8, 1 +: 4]));
}
"""


@needs_kiln
def test_tile_windows_match_numpy(tmp_path):
    """`t[a +: n, :]` on the CPU backend against numpy's slicing: the
    float64 reference shares the lowering, numpy does not."""
    tile = tmp_path / "windows.tile"
    tile.write_text(WINDOWS)
    schedule = tmp_path / "cpu.yaml"
    schedule.write_text("target: cpu\nop: windows\n")
    x = np.random.default_rng(2).standard_normal((8, 16), dtype=np.float32)
    run = kiln.run_cpu(tile, schedule, inputs={"x": x}, kiln_bin=real_kiln())
    assert run.ok
    assert np.array_equal(run.outputs["y"], x[4:8])
    assert np.array_equal(run.outputs["z"], x[2:6, 8:16])
    want = x[0:4, 2:10].astype(np.float64) @ x.T[4:12, 1:5].astype(np.float64)
    assert np.allclose(run.outputs["s"], want, rtol=1e-5, atol=1e-5)


PREFILL = REPO / "ops" / "gdn" / "prefill.tile"


@needs_kiln
def test_prefill_gates_head_major_match_numpy(tmp_path):
    """gdn_prefill_gates alone (the kernel the split ops' chunk kernels read
    their gates from) against numpy: g = -exp(A_log) softplus(a + dt_bias),
    beta = sigmoid(b), head-major, at 40 heads (a 32-head block partly
    past HV) and 70 tokens (a 64-token block partly past T)."""
    schedule = tmp_path / "gates_cpu.yaml"
    schedule.write_text("target: cpu\nop: gdn_prefill_gates\nparams: {C: 32, BV: 32}\n")
    rng = np.random.default_rng(4)
    T, HV = 70, 40
    bf16 = lambda x: (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    a, b = bf16(3 * rng.standard_normal((T, HV))), bf16(3 * rng.standard_normal((T, HV)))
    A_log = rng.uniform(-1, 1, HV).astype(np.float32)
    dt_bias = rng.uniform(-1, 1, HV).astype(np.float32)
    run = kiln.run_cpu(PREFILL, schedule, dims={"T": T, "HV": HV, "TP": 72},
                       inputs={"a": a, "b": b, "A_log": A_log, "dt_bias": dt_bias},
                       kiln_bin=real_kiln())
    assert run.ok
    f32 = lambda x: (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    x = f32(a) + dt_bias
    g = -np.exp(A_log.astype(np.float64)) * np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))
    beta = 1 / (1 + np.exp(-f32(b)))
    assert run.outputs["ga"].shape == (HV, 72)
    assert np.allclose(run.outputs["ga"][:, :T], g.T, rtol=1e-5, atol=1e-6)
    assert np.allclose(run.outputs["gb"][:, :T], beta.T, rtol=1e-5, atol=1e-6)
