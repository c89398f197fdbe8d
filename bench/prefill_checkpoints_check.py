"""gdn_prefill_checkpoints on the GPU: each checkpoint against gdn_prefill
(the same tiling) run on that prefix of its sequence; o and the final
states against gdn_prefill on the whole batch (bit for bit); then both
timed at 1x8192 16/32.

usage: python3 bench/prefill_checkpoints_check.py CHECKPOINTS.json PREFILL.json
(manifests of prefill_checkpoints_sm_90a and prefill_sm_90a_wgmma, built
here with `kiln compile ... --emit cubin -o DIR/NAME.cubin` and carried)
"""
import sys

import kiln
import torch
import triton

K = V = 128
ck = kiln.load(sys.argv[1])
pl = kiln.load(sys.argv[2])
EVERY = ck.manifest["consts"]["CKPT_EVERY"]

def inputs(lens, H, HV, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    T = sum(lens); bf = dict(device="cuda", dtype=torch.bfloat16)
    q, k = (torch.randn(T, H, K, generator=g, **bf) for _ in range(2))
    v = torch.randn(T, HV, V, generator=g, **bf)
    a, b = (torch.randn(T, HV, generator=g, **bf) for _ in range(2))
    A_log = torch.rand(HV, generator=g, device="cuda") * 2 - 1
    dt = torch.randn(HV, generator=g, device="cuda") * 0.5
    h0 = torch.randn(len(lens), HV, V, K, generator=g, device="cuda")
    cu = torch.tensor([0] + lens, device="cuda", dtype=torch.int64).cumsum(0)
    return q, k, v, a, b, A_log, dt, h0, cu

def run(kern, q, k, v, a, b, A_log, dt, h0, cu, extra=()):
    N = h0.shape[0]; T = q.shape[0]; HV = v.shape[1]
    idx = torch.arange(N, device="cuda", dtype=torch.int32)
    hT = torch.full_like(h0, float("nan"))
    o = torch.full((T, HV, V), float("nan"), device="cuda", dtype=torch.bfloat16)
    kern(q, k, v, a, b, A_log, dt, cu, idx, h0, hT, o, *extra, K ** -0.5, 1)
    return o, hT

worst = 0.0
for lens, H, HV in [([128, 1, 200, 64, 0, 63], 4, 8), ([1000], 2, 2), ([64] * 9, 16, 32)]:
    q, k, v, a, b, A_log, dt, h0, cu = inputs(lens, H, HV, len(lens))
    counts = [l // EVERY for l in lens]
    starts = torch.tensor([0] + counts, device="cuda", dtype=torch.int64).cumsum(0)
    NC = int(starts[-1])
    cks = torch.full((NC, HV, V, K), float("nan"), device="cuda")
    o, hT = run(ck, q, k, v, a, b, A_log, dt, h0, cu, (starts, cks))
    o2, hT2 = run(pl, q, k, v, a, b, A_log, dt, h0, cu)
    torch.cuda.synchronize()
    assert not torch.isnan(cks).any() and not torch.isnan(o).any() and not torch.isnan(hT).any()
    same = torch.equal(o, o2) and torch.equal(hT, hT2)
    errs = []
    for n, l in enumerate(lens):
        bos = int(cu[n])
        for j in range(1, l // EVERY + 1):
            t = slice(bos, bos + j * EVERY)
            cu1 = torch.tensor([0, j * EVERY], device="cuda", dtype=torch.int64)
            _, hp = run(pl, q[t], k[t], v[t], a[t], b[t], A_log, dt, h0[n:n + 1], cu1)
            got = cks[int(starts[n]) + j - 1]
            errs.append(((got - hp[0]).norm() / hp[0].norm()).item())
    worst = max([worst] + errs)
    print(f"lens {lens} H/HV {H}/{HV}: {NC} checkpoints, largest rel. diff to prefix runs "
          f"{max(errs) if errs else 0:.1e}; o and final states identical to gdn_prefill: {same}")
# Time at 1x8192 16/32: checkpoints every 64 tokens against the plain kernel.
q, k, v, a, b, A_log, dt, h0, cu = inputs([8192], 16, 32, 1)
starts = torch.tensor([0, 8192 // EVERY], device="cuda", dtype=torch.int64)
cks = torch.empty((8192 // EVERY, 32, V, K), device="cuda")
t_ck = triton.testing.do_bench_cudagraph(lambda: run(ck, q, k, v, a, b, A_log, dt, h0, cu, (starts, cks)), rep=100, return_mode="median")
t_pl = triton.testing.do_bench_cudagraph(lambda: run(pl, q, k, v, a, b, A_log, dt, h0, cu), rep=100, return_mode="median")
print(f"1x8192 16/32: checkpoints ({8192 // EVERY} of them) {t_ck:.3f} ms, "
      f"gdn_prefill (same tiling) {t_pl:.3f} ms")
if worst >= 1e-3:
    raise SystemExit(f"FAIL: a checkpoint differs from its prefix run by {worst}")
print("PASS")
