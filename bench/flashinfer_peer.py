"""FlashInfer 0.7.2's Hopper GDN kernels as a bench peer (prefill, decode, MTP).

FlashInfer is never committed: ../shared/peers/flashinfer's device_setup.sh
installs its slim SM90 prefill tree into /tmp/fisite on the GPU machine
(gdn_prefill.py, the adapter, lies there too), and
bench/prepare_flashinfer_decode.sh adds the decode and MTP modules from the
same wheel (`decode_overlay`). Run with PYTHONPATH=/tmp/fisite:....

What each call is given, against the work Kiln's kernels do:
- prefill: q and k normalised in FlashInfer's call (use_qk_l2norm_in_kernel,
  a kernel of its own), as Kiln and FLA do in theirs; its API takes no raw
  gates, so the decay and beta are made before the timed call (work that
  Kiln and FLA do inside theirs: FlashInfer is given that much).
- decode and MTP: the same raw inputs as Kiln (q, k normalised in the kernel,
  A_log / a / dt_bias / b), k-last state updated in place.
"""
import torch

K = V = 128


def load():
    """Imports the prefill adapter and kernels; raises the real import error."""
    import gdn_prefill
    gdn_prefill.load()
    return gdn_prefill


def load_decode():
    """FlashInfer's decode entry points (the decode overlay must be installed)."""
    from flashinfer.gdn_decode import gated_delta_rule_decode_pretranspose, gated_delta_rule_mtp
    return gated_delta_rule_decode_pretranspose, gated_delta_rule_mtp


def prefill_calls(q, k, v, a, b, A_log, dt_bias, h0, cu, lens, scale):
    """FlashInfer's prefill on the bench's packed inputs (q, k [T, H, K],
    v [T, HV, V], a, b [T, HV], h0 [N, HV, V, K] f32), one callable per path:
    "cp" (context parallelism) and "nocp". Each returns (o [T, HV, V],
    final state [N, HV, V, K] f32) in buffers it reuses."""
    gdn_prefill = load()
    g_log, beta = gdn_prefill.gates(A_log, a, dt_bias, b)
    cu32 = cu.to(torch.int32)
    T, HV = v.shape[0], v.shape[1]
    o = torch.empty(T, HV, V, device="cuda", dtype=torch.bfloat16)
    s = torch.empty_like(h0)
    return {name: (lambda cp=cp: gdn_prefill.call(
        q, k, v, g_log, beta, scale, h0, cu32, use_cp=cp, max_seqlen=max(lens),
        use_qk_l2norm_in_kernel=True, output=o, output_state=s))
        for name, cp in (("cp", True), ("nocp", False))}


def decode_call(q, k, v, a, b, A_log, dt_bias, state, scale):
    """One decode step of FlashInfer's k-last ("pretranspose") kernel on
    q, k [B, 1, H, K], v [B, 1, HV, V], a, b [B, 1, HV] and `state`
    [B, HV, V, K] (f32: its legacy kernel; bf16: its bf16-state kernel),
    updated in place. The generic FlashInfer backend, not the optional
    source-only one."""
    decode, _ = load_decode()
    o = torch.empty_like(v)
    return lambda: decode(q, k, v, state, A_log, a, dt_bias, b, scale=scale, output=o,
                          use_qk_l2norm=True, backend="flashinfer")


def mtp_call(q, k, v, a, b, A_log, dt_bias, pool, slots, scale):
    """FlashInfer's multi-token decode on [B, T, ...] inputs from an f32 state
    pool read and written through `slots` (its gated_delta_rule_mtp, no
    intermediate states, the pool updated)."""
    _, mtp = load_decode()
    o = torch.empty_like(v)
    return lambda: mtp(q, k, v, pool, slots, A_log, a, dt_bias, b, scale=scale, output=o,
                       disable_state_update=False, use_qk_l2norm=True)
