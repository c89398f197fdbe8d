"""Flash attention (ops/attention) on a GPU: Kiln's schedules beside torch's
scaled_dot_product_attention on its flash backend.

One process, one GPU, through the kiln package. A shape NxLxH[xD] is N
sequences of L tokens (packed, cu_seqlens for Kiln; a batch of N for torch),
H query and key/value heads, head dim D (128 unless given; the kernels are
built for D = 128 and, with -D D=64, for 64), with PAD tokens of NaN past the
last sequence. Per shape: each schedule's output against torch's (relative
error, NaN fails), then CUDA-graph replay medians of both, in TFLOP/s (4 N H
L^2 D flops, half of that causal).

usage: python3 bench/attention_bench.py [--shapes 4x4096x16,1x4096x16x64,...] [--json OUT]
(builds as in bench/gemm_bench.py: the kiln binary, or a carried cache)
"""
from op_bench import graph_ms, run

SCHEDULES = ["attention_sm_90a", "attention_sm_90a_ws", "attention_causal_sm_90a",
             "attention_causal_sm_90a_ws", "attention_sm_90a@D=64", "attention_causal_sm_90a@D=64"]
# Tokens past the last sequence, NaN: a block crossing a sequence's end must
# not let them reach an output (a TMA copy brings the whole box; the readers
# zero its rows past the end), so a NaN there fails the check.
PAD = 64


def measure(dims, kernels):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    N, L, H, D = dims if len(dims) == 4 else (*dims, 128)
    T = N * L
    bf = dict(device="cuda", dtype=torch.bfloat16)
    q, k, v = (torch.cat([torch.randn(T, H, D, **bf), torch.full((PAD, H, D), float("nan"), **bf)])
               for _ in range(3))
    cu = torch.arange(0, T + 1, L, device="cuda", dtype=torch.int32)
    lse = torch.empty(T + PAD, H, 1, device="cuda", dtype=torch.float32)
    o = torch.empty(T + PAD, H, 1, D, **bf)  # [T, HKV, G, D]: G = 1 query head a key head
    qg = q.view(T + PAD, H, 1, D)
    scale = D ** -0.5
    batch = lambda x: x[:T].view(N, L, H, D).transpose(1, 2)  # noqa: E731
    row, line = {"N": N, "L": L, "H": H, "D": D}, ""
    for name, kern in kernels.items():
        if kern.manifest["consts"].get("D") != D:
            continue
        causal = "causal" in kern.manifest["entry"]  # the kernel, whatever the schedule is called
        flops = 4 * N * H * L * L * D / (2 if causal else 1)
        tflops = lambda ms: flops / (ms * 1e-3) / 1e12  # noqa: E731

        def sdpa():
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                return F.scaled_dot_product_attention(batch(q), batch(k), batch(v),
                                                      is_causal=causal, scale=scale)

        ref = sdpa().transpose(1, 2).reshape(T, H, 1, D).float()
        o.fill_(float("nan"))
        kern(qg, k, v, cu, o, lse, scale)
        torch.cuda.synchronize()
        rel = ((o[:T].float() - ref).norm() / ref.norm()).item()
        if not rel < 2e-2:  # bf16 rounding of P and O; NaN fails
            raise SystemExit(f"{name} at {N}x{L}x{H}: relative error {rel} against SDPA")
        torch_ms = graph_ms(sdpa)
        ms = graph_ms(lambda: kern(qg, k, v, cu, o, lse, scale))
        row.update({f"{name}_rel_err": rel, f"{name}_ms": ms, f"{name}_sdpa_ms": torch_ms})
        line += (f"  {'causal' if causal else 'full'}: SDPA {torch_ms:7.3f} ms "
                 f"{tflops(torch_ms):4.0f} TFLOP/s, {name} {ms:7.3f} ms {tflops(ms):4.0f} "
                 f"TFLOP/s ({torch_ms / ms * 100:.0f}% of SDPA, err {rel:.1e})")
    return row, line


if __name__ == "__main__":
    run("attention", SCHEDULES, "1x4096x16,4x4096x16,1x4096x16x64,4x4096x16x64", measure)
