"""ops/attention: each schedule's tiling on the CPU backend against a naive
float64 attention in numpy (the op's own float64 reference runs the same
online softmax; this one does not): packed varlen with an empty sequence,
grouped-query heads, causal and not."""
import numpy as np
import pytest
from conftest import REPO, needs_kiln, real_kiln

import kiln

ATTENTION = REPO / "ops" / "attention" / "attention.tile"
SCHEDULES = REPO / "ops" / "attention" / "schedules"


def bf16_bits(rng, shape):
    x = rng.standard_normal(shape, dtype=np.float32)
    return (x.view(np.uint32) >> 16).astype(np.uint16)


def widen(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def naive(q, k, v, cu, scale, causal):
    T, HQ, D = q.shape
    group = HQ // k.shape[1]
    o = np.zeros((T, HQ, D))
    lse = np.zeros((T, HQ))
    for bos, eos in zip(cu[:-1], cu[1:]):
        if bos == eos:
            continue
        for h in range(HQ):
            s = scale * q[bos:eos, h] @ k[bos:eos, h // group].T
            if causal:
                s = np.where(np.tril(np.ones(s.shape, bool)), s, -np.inf)
            m = s.max(axis=1, keepdims=True)
            p = np.exp(s - m)
            o[bos:eos, h] = p @ v[bos:eos, h // group] / p.sum(axis=1, keepdims=True)
            lse[bos:eos, h] = (m + np.log(p.sum(axis=1, keepdims=True)))[:, 0]
    return o, lse


@needs_kiln
@pytest.mark.parametrize("schedule", ["attention_cpu", "attention_causal_cpu",
                                      "attention_sm_90a", "attention_causal_sm_90a"])
def test_attention_matches_naive_softmax(schedule):
    rng = np.random.default_rng(3)
    cu = np.array([0, 5, 70, 70, 133], dtype=np.int32)   # an empty sequence, ragged blocks
    T, HKV, G, D = int(cu[-1]), 2, 2, 128
    q = bf16_bits(rng, (T, HKV, G, D))         # query head hk G + g reads key head hk
    k, v = (bf16_bits(rng, (T, HKV, D)) for _ in range(2))
    scale = np.float32(D ** -0.5)
    run = kiln.run_cpu(ATTENTION, SCHEDULES / f"{schedule}.yaml", kiln_bin=real_kiln(),
                       inputs={"q": q, "k": k, "v": v, "cu_seqlens": cu, "scale": scale})
    assert run.ok
    want_o, want_lse = naive(widen(q).reshape(T, HKV * G, D), widen(k), widen(v), cu,
                             float(scale), "causal" in schedule)
    o = widen(run.outputs["o"].view(np.uint16)).reshape(T, HKV * G, D)
    assert np.linalg.norm(o - want_o) / np.linalg.norm(want_o) < 1e-2
    assert np.abs(run.outputs["lse"].reshape(T, HKV * G) - want_lse).max() < 1e-3


@needs_kiln
def test_offsets_out_of_order_are_refused(tmp_path):
    cu = np.array([0, 70, 5, 133], dtype=np.int32)
    rng = np.random.default_rng(0)
    q = bf16_bits(rng, (133, 2, 1, 128))
    with pytest.raises(kiln.KilnError, match="element 2 of 'cu_seqlens' is 5; offsets run "
                                             "from 0 to T = 133 and never decrease"):
        kiln.run_cpu(ATTENTION, SCHEDULES / "attention_cpu.yaml", kiln_bin=real_kiln(),
                     inputs={"q": q, "cu_seqlens": cu})
