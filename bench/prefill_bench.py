"""GDN chunked prefill: Kiln's kernels beside FLA's chunk_gated_delta_rule.

One process, one GPU: measures the bf16 matrix rate (torch.matmul, 8192^3),
then for each shape times FLA and every Kiln kernel given with CUDA-graph
replay (median). Both get the same raw inputs: q, k (L2-normalised in the
kernel), v, raw gates a, b with A_log and dt_bias (FLA: use_gate_in_kernel,
use_beta_sigmoid_in_kernel), a random initial state, k-last state
(state_v_first), packed varlen with cu_seqlens. Reports ours against FLA
(ratio) and the achieved TFLOP/s of the chunked algorithm's matrix products.
FLA is imported from $FLA_PATH (fetched and carried, never committed).

With --flashinfer, FlashInfer 0.7.2's Hopper chunk_gated_delta_rule is timed
too, both paths (context parallelism on and off; bench/flashinfer_peer.py
says what it is given). Its fastest path, "fi_best", is the peer each Kiln
kernel is compared with (xFI: FlashInfer's time over ours, > 1 is faster).

usage: python3 bench/prefill_bench.py MANIFEST.json... [--json OUT.json] [--flashinfer]
"""
import argparse
import json
import math
import os
import re
import sys

import torch
import triton

import kiln

sys.path.insert(0, os.environ.get("FLA_PATH", ".peer"))
from fla.ops.gated_delta_rule import chunk_gated_delta_rule  # noqa: E402
import flashinfer_peer  # noqa: E402
from op_bench import check_tags, state_dtype  # noqa: E402

K = V = 128
C = 64


def matmul_rate():
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms = triton.testing.do_bench(lambda: a @ b, warmup=20, rep=200, return_mode="median")
    return 2 * n ** 3 / (ms * 1e-3)


def chunk_flops(T, HV):
    """Matrix-product flops of the 64-token chunked algorithm per value head:
    K K^T, Q K^T (C x C x K), W and U (C x C x (K + V)), W S^T, Q S^T
    (C x K x V each), P Vnew (C x C x V), the state update (C x V x K)."""
    per_chunk = 2 * (2 * C * C * K + C * C * (K + V) + 3 * C * K * V + C * C * V)
    return per_chunk * (T / C) * HV


def kernel_times(fn, calls=20):
    """Mean GPU time per call of each kernel a peer's call `fn` (FLA's or
    FlashInfer's) launches (torch profiler, after a warm-up call), in launch
    order, in ms."""
    fn()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    times = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            us = getattr(ev, "device_time", None)
            us = ev.cuda_time if us is None else us
            # FlashInfer's CuTe DSL kernels share their first 60 characters.
            name = ev.name if len(ev.name) <= 60 else ev.name[:40] + ".." + ev.name[-58:]
            times[name] = times.get(name, 0.0) + us / 1e3 / calls
    return times


def make_inputs(lens, H, HV, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    T = sum(lens)
    bf = dict(device="cuda", dtype=torch.bfloat16)
    q = torch.randn(1, T, H, K, generator=g, **bf)
    k = torch.randn(1, T, H, K, generator=g, **bf)
    v = torch.randn(1, T, HV, V, generator=g, **bf)
    a = torch.randn(1, T, HV, generator=g, **bf)
    b = torch.randn(1, T, HV, generator=g, **bf)
    A_log = torch.rand(HV, generator=g, device="cuda") * 2 - 1
    dt_bias = torch.randn(HV, generator=g, device="cuda") * 0.5
    h0 = torch.randn(len(lens), HV, V, K, generator=g, device="cuda")
    cu = torch.tensor([0] + lens, device="cuda", dtype=torch.int64).cumsum(0)
    return q, k, v, a, b, A_log, dt_bias, h0, cu


def takes_indices(kern):
    """Whether a build's prefill reads its states through state_indices (every
    build since 2026-11-28; older manifests take dense states)."""
    return any(p.name == "state_indices" for p in kern.info.signature.params)


class States:
    """The states a prefill call reads and writes: dense (sequence n's state in
    row n, indices arange(N)) or, with pool=True, rows of a pool twice the
    batch's size in shuffled order, so the kernels gather and scatter. The
    final states go to a separate NaN-poisoned pool, so that repeated calls
    read the same initial states. `final()` is the [N, ...] final states."""

    def __init__(self, h0, pool=False, seed=0, dtype=torch.float32):
        n = h0.shape[0]
        if pool:
            g = torch.Generator(device="cuda").manual_seed(seed)
            self.idx = torch.randperm(2 * n, generator=g, device="cuda")[:n].to(torch.int32)
            self.initial = torch.randn((2 * n, *h0.shape[1:]), generator=g, device="cuda")
            self.initial[self.idx.long()] = h0
        else:
            self.idx = torch.arange(n, device="cuda", dtype=torch.int32)
            self.initial = h0
        self.initial = self.initial.to(dtype)  # the kernel's STATE dtype
        self.out = torch.full_like(self.initial, float("nan"))

    def args(self, kern, cu):
        """The arguments from cu_seqlens to final_state, for kern's signature."""
        if takes_indices(kern):
            return (cu, self.idx, self.initial, self.out)
        assert self.initial.shape[0] == self.idx.shape[0], "a dense build takes no pool"
        return (cu, self.initial, self.out)

    def final(self):
        if self.out.dtype == torch.float8_e4m3fn:  # torch indexes no 8-bit floats: their bytes
            return self.out.view(torch.uint8)[self.idx.long()].view(self.out.dtype).float()
        return self.out[self.idx.long()].float()


def same_bytes(o, hT, o_ref, s_ref):
    """Whether a prefill call's output and final states equal a reference
    call's byte for byte (bf16 o, f32 states)."""
    return (torch.equal(o.view(torch.int16), o_ref.view(torch.int16))
            and torch.equal(hT.view(torch.int32), s_ref.view(torch.int32)))


def varlen_57(total=8192, seed=5):
    """57 sequence lengths summing to `total` (the contest's largest batch)."""
    gen = torch.Generator().manual_seed(seed)
    w = torch.rand(57, generator=gen) + 0.05
    lens = (w / w.sum() * total).floor().long().clamp(min=1)
    lens[0] += total - lens.sum()
    return lens.tolist()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifests", nargs="+")
    ap.add_argument("--json", default=None)
    ap.add_argument("--per-kernel", action="store_true",
                    help="also time each kernel of an op alone (graph replay, median)")
    ap.add_argument("--fla-kernels", action="store_true",
                    help="also list the time of each of FLA's kernels (and, with"
                         " --flashinfer, of each FlashInfer path's; torch profiler)")
    ap.add_argument("--no-check", action="store_true",
                    help="time only: skip the NaN check (for experiment builds that"
                         " deliberately leave outputs unwritten)")
    ap.add_argument("--pool", action="store_true",
                    help="states in a pool of 2N rows read and written through shuffled"
                         " state_indices (default: dense, indices arange(N))")
    ap.add_argument("--flashinfer", action="store_true",
                    help="also time FlashInfer's SM90 prefill (gdn_prefill.py on PYTHONPATH)")
    ap.add_argument("--shapes", default=None,
                    help="only these shapes, e.g. 1x8192/16,varlen57/16 (name/H)")
    args = ap.parse_args()
    kernels = [kiln.load(m) for m in args.manifests]
    check_tags(ap, kernels)
    if args.flashinfer:
        flashinfer_peer.load()  # the real import error, not a skipped peer
    dev = torch.cuda.get_device_name()
    rate = matmul_rate()
    print(f"# {dev}: bf16 matmul {rate / 1e12:.0f} TFLOP/s (8192^3, torch)")
    shapes = [("1x8192", [8192], 16, 32), ("1x8192", [8192], 4, 8),
              ("4x8192", [8192] * 4, 16, 32), ("varlen57", varlen_57(), 16, 32),
              ("1x32768", [32768], 16, 32)]
    if args.shapes:
        keep = args.shapes.split(",")
        known = {f"{s[0]}/{s[2]}": s for s in shapes}
        shapes = []
        for key in keep:
            # Any NxL/H[/HV] besides the bundled ones: N sequences of L
            # tokens, HV = 2H unless given.
            m = re.fullmatch(r"(\d+)x(\d+)/(\d+)(?:/(\d+))?", key)
            if key in known:
                shapes.append(known[key])
            elif m:
                n, length, h = map(int, m.groups()[:3])
                hv = int(m.group(4)) if m.group(4) else 2 * h
                shapes.append((f"{n}x{length}", [length] * n, h, hv))
            else:
                ap.error(f"--shapes: unknown shape '{key}' (NxL/H or NxL/H/HV, or varlen57/16)")
    rows = []
    scale = 1 / math.sqrt(K)
    for name, lens, H, HV in shapes:
        q, k, v, a, b, A_log, dt_bias, h0, cu = make_inputs(lens, H, HV, seed=len(lens) + HV)
        T = sum(lens)
        flops = chunk_flops(T, HV)

        def fla():
            return chunk_gated_delta_rule(
                q, k, v, g=a, beta=b, scale=scale, initial_state=h0, output_final_state=True,
                use_qk_l2norm_in_kernel=True, use_beta_sigmoid_in_kernel=True, state_v_first=True,
                cu_seqlens=cu, use_gate_in_kernel=True, A_log=A_log, dt_bias=dt_bias)

        row = {"shape": name, "H": H, "HV": HV, "T": T, "N": len(lens), "flops": flops}
        o_ref, s_ref = fla()
        torch.cuda.synchronize()
        row["fla_graph_ms"] = triton.testing.do_bench_cudagraph(fla, rep=200, return_mode="median")
        if args.fla_kernels:
            row["fla_kernels_ms"] = kernel_times(fla)
            print(f"# FLA kernels at {name} {H}/{HV}: " + ", ".join(
                f"{n} {ms:.3f}" for n, ms in row["fla_kernels_ms"].items()), flush=True)
        line = (f"{name:9s} H/HV {H:2d}/{HV:2d} | FLA {row['fla_graph_ms']:7.3f} ms "
                f"{flops / row['fla_graph_ms'] / 1e9:6.1f} TFLOP/s")
        if args.flashinfer:
            for path, fn in flashinfer_peer.prefill_calls(q[0], k[0], v[0], a[0], b[0], A_log,
                                                          dt_bias, h0, cu, lens, scale).items():
                try:
                    o_fi, s_fi = fn()
                    torch.cuda.synchronize()
                except Exception as e:  # a path FlashInfer cannot run here: recorded
                    row[f"fi_{path}_error"] = str(e).splitlines()[0][:160]
                    line += f" | FI {path} FAIL"
                    continue
                row[f"fi_{path}_vs_fla_o"] = ((o_fi.float() - o_ref[0].float()).norm()
                                              / o_ref.float().norm()).item()
                row[f"fi_{path}_vs_fla_state"] = ((s_fi - s_ref).norm() / s_ref.norm()).item()
                row[f"fi_{path}_graph_ms"] = triton.testing.do_bench_cudagraph(
                    fn, rep=200, return_mode="median")
                if args.fla_kernels:
                    row[f"fi_{path}_kernels_ms"] = kernel_times(fn)
                    print(f"# FlashInfer {path} kernels at {name} {H}/{HV}: " + ", ".join(
                        f"{n} {ms:.3f}" for n, ms in row[f"fi_{path}_kernels_ms"].items()),
                        flush=True)
                line += (f" | FI {path} {row[f'fi_{path}_graph_ms']:7.3f} ms"
                         f" (vs FLA o {row[f'fi_{path}_vs_fla_o']:.1e})")
            row["fi_best_graph_ms"] = min(row.get(f"fi_{p}_graph_ms", math.inf) for p in ("cp", "nocp"))
        for kern in kernels:
            tag = kern.tag
            o = torch.full((T, HV, V), float("nan"), device="cuda", dtype=torch.bfloat16)
            states = States(h0, pool=args.pool and takes_indices(kern), seed=T,
                            dtype=state_dtype(kern))
            st = states.args(kern, cu)
            call = lambda: kern(q[0], k[0], v[0], a[0], b[0], A_log, dt_bias, *st, o,  # noqa: E731
                                scale, 1)
            call()
            torch.cuda.synchronize()
            hT = states.final()
            assert args.no_check or not torch.isnan(o).any() and not torch.isnan(hT).any(), f"{tag}: NaN at {name}"
            row[f"{tag}_vs_fla_o"] = ((o.float() - o_ref[0].float()).norm() / o_ref.float().norm()).item()
            row[f"{tag}_vs_fla_state"] = ((hT - s_ref).norm() / s_ref.norm()).item()
            # Through this loader (kernels side by side where the manifest
            # says `overlap`), so a race shows here too.
            # An f8e4m3 state is rounded to 3 mantissa bits: 2^-4 / sqrt(3) rms.
            state_tol = 6e-2 if state_dtype(kern) == torch.float8_e4m3fn else 1e-2
            assert args.no_check or (row[f"{tag}_vs_fla_o"] < 2e-2 and row[f"{tag}_vs_fla_state"] < state_tol), \
                f"{tag}: differs from FLA at {name}: o {row[f'{tag}_vs_fla_o']:.1e}, state {row[f'{tag}_vs_fla_state']:.1e}"
            row[f"{tag}_graph_ms"] = t = triton.testing.do_bench_cudagraph(call, rep=20, return_mode="median")
            line += (f" | {tag} {t:8.3f} ms {flops / t / 1e9:6.1f} TFLOP/s x{row['fla_graph_ms'] / t:5.3f}"
                     f" (vs FLA o {row[f'{tag}_vs_fla_o']:.1e})")
            if args.flashinfer:
                line += f" xFI {row['fi_best_graph_ms'] / t:5.3f}"
            if args.per_kernel and kern.is_op:
                parts = []
                for i, entry in enumerate(kern.entries):
                    alone = lambda: kern.launch_one(i, q[0], k[0], v[0], a[0], b[0], A_log,  # noqa: E731
                                                    dt_bias, *st, o, scale, 1)
                    ms = triton.testing.do_bench_cudagraph(alone, rep=20, return_mode="median")
                    row[f"{tag}_{entry}_ms"] = ms
                    parts.append(f"{entry} {ms:.3f}")
                line += " [" + ", ".join(parts) + "]"
        rows.append(row)
        print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": dev, "matmul_flops_per_s": rate, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
