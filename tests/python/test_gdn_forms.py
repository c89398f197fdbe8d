"""GDN's serving forms on the CPU backend: multi-token decode with one token
is plain decode op for op, for every state dtype."""
import numpy as np
import pytest
from conftest import REPO, needs_kiln, real_kiln

import kiln

DECODE = REPO / "ops" / "gdn" / "decode.tile"
MTP = REPO / "ops" / "gdn" / "decode_mtp.tile"
SCHEDULES = REPO / "ops" / "gdn" / "schedules"
DIMS = {"B": 3, "H": 2, "HV": 4, "N": 5}


def bf16_bits(rng, shape):
    x = rng.standard_normal(shape, dtype=np.float32)
    return (x.view(np.uint32) >> 16).astype(np.uint16)


@needs_kiln
@pytest.mark.parametrize("state", ["f32", "bf16"])
def test_mtp_with_one_token_is_decode_bit_for_bit(tmp_path, state):
    decode = SCHEDULES / ("decode_cpu.yaml" if state == "f32" else "decode_cpu_bf16.yaml")
    mtp = tmp_path / "mtp.yaml"
    mtp.write_text(f"target: cpu\nop: gdn_decode_mtp\nparams:\n  BV: V\n  STATE: {state}\n"
                   "grid: [iv, hv, n]\n")
    rng = np.random.default_rng(5)
    B, H, HV, K, V, N = 3, 2, 4, 128, 128, 5
    inputs = {"q": bf16_bits(rng, (B, 1, H, K)), "k": bf16_bits(rng, (B, 1, H, K)),
              "v": bf16_bits(rng, (B, 1, HV, V)), "a": bf16_bits(rng, (B, 1, HV)),
              "b": bf16_bits(rng, (B, 1, HV)),
              "A_log": rng.uniform(-1, 1, HV).astype(np.float32),
              "dt_bias": (0.5 * rng.standard_normal(HV)).astype(np.float32),
              "scale": np.float32(K ** -0.5)}
    slots = np.array([3, -1, 0], dtype=np.int32)
    s0 = rng.standard_normal((N, HV, V, K), dtype=np.float32)
    s0 = s0 if state == "f32" else (s0.view(np.uint32) >> 16).astype(np.uint16)
    one = kiln.run_cpu(DECODE, decode, inputs={**inputs, "slots": slots, "state": s0},
                       kiln_bin=real_kiln())
    many = kiln.run_cpu(MTP, mtp, inputs={**inputs, "read_slots": slots,
                                              "write_slots": slots, "state": s0},
                        kiln_bin=real_kiln())
    assert one.ok and many.ok
    for name in ["o", "state"]:
        a, b = one.outputs[name], many.outputs[name]
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes(), name
    # The padded request wrote nothing, its output is zeros; the state moved.
    assert not np.any(many.outputs["o"][1].view(np.uint16))
    assert many.outputs["state"].tobytes() != s0.tobytes()
