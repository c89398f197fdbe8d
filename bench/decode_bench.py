"""GDN decode: Kiln's kernels beside FLA's fused_recurrent_gated_delta_rule.

One process, one GPU: measures the device-to-device copy bandwidth, then for
each shape times FLA and every Kiln kernel given, two ways: CUDA-graph replay
(median, triton.testing.do_bench_cudagraph) and one call after an L2 flush
(median, triton.testing.do_bench, which clears a 256 MB buffer before each
call). Bytes counted: the state read and written (in the kernel's STATE
dtype: f32, bf16 or f16; FLA's is f32), plus q, k, v, o and gates.
Also checks that ours and FLA agree on every shape (the golden check is
kiln-gpu's). FLA is imported from the path in $FLA_PATH (fetched and carried,
never committed). With --flashinfer, FlashInfer's k-last decode kernel too,
on an f32 state (its legacy kernel) and on a bf16 state (its bf16-state
kernel), given the same raw inputs (bench/flashinfer_peer.py).

usage: python3 bench/decode_bench.py MANIFEST.json... [--json OUT.json]
"""
import argparse
import json
import math
import os
import sys

import torch
import triton

import kiln

sys.path.insert(0, os.environ.get("FLA_PATH", ".peer"))
from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule  # noqa: E402

import flashinfer_peer  # noqa: E402
from op_bench import check_tags, state_dtype, state_for  # noqa: E402

K = V = 128


@triton.jit
def _empty(x):
    pass


def launch_floor():
    """An empty kernel's time under the same graph-replay timing: the floor
    under any one-kernel decode step."""
    x = torch.empty(1, device="cuda")
    return 1e3 * triton.testing.do_bench_cudagraph(lambda: _empty[(1,)](x), rep=100,
                                                   return_mode="median")


def copy_bandwidth():
    n = 1 << 28  # 1 GiB of f32
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    ms = triton.testing.do_bench(lambda: dst.copy_(src), warmup=50, rep=300, return_mode="median")
    return 2 * n * 4 / (ms * 1e-3)


def make_inputs(B, H, HV, seed, T=1):
    """Decode inputs for B requests of T tokens (T > 1: multi-token decode)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    bf = dict(device="cuda", dtype=torch.bfloat16)
    q = torch.randn(B, T, H, K, generator=g, **bf)
    k = torch.randn(B, T, H, K, generator=g, **bf)
    v = torch.randn(B, T, HV, V, generator=g, **bf)
    a = torch.randn(B, T, HV, generator=g, **bf)
    b = torch.randn(B, T, HV, generator=g, **bf)
    A_log = torch.rand(HV, generator=g, device="cuda") * 2 - 1
    dt_bias = 0.5 * torch.randn(HV, generator=g, device="cuda")
    state = torch.randn(B, HV, V, K, generator=g, device="cuda")
    return q, k, v, a, b, A_log, dt_bias, state


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifests", nargs="+")
    ap.add_argument("--json", default=None)
    ap.add_argument("--batches", default="1,8,64,128,256,512")
    ap.add_argument("--heads", default="4/8,16/32")
    ap.add_argument("--flashinfer", action="store_true",
                    help="also time FlashInfer's decode (f32 and bf16 states)")
    args = ap.parse_args()
    kernels = [kiln.load(m) for m in args.manifests]
    check_tags(ap, kernels)
    if args.flashinfer:
        flashinfer_peer.load_decode()  # the real import error, not a skipped peer
    dev = torch.cuda.get_device_name()
    bw = copy_bandwidth()
    floor = launch_floor()
    print(f"# {dev}: device-to-device copy {bw / 1e12:.2f} TB/s (read + write); "
          f"empty kernel {floor:.2f} us (graph replay)")
    rows = []
    scale = 1 / math.sqrt(K)
    heads = [tuple(int(x) for x in hh.split("/")) for hh in args.heads.split(",")]
    for H, HV in heads:
        for B in [int(x) for x in args.batches.split(",")]:
            q, k, v, a, b, A_log, dt_bias, state0 = make_inputs(B, H, HV, seed=B * 100 + HV)
            slots = torch.arange(B, device="cuda", dtype=torch.int32)
            io_bytes = (q.numel() + k.numel() + 2 * v.numel() + a.numel() + b.numel()) * 2
            bytes_moved = 2 * state0.numel() * 4 + io_bytes

            def kernel_bytes(kern):
                return 2 * state0.numel() * state_dtype(kern).itemsize + io_bytes

            def fla():
                return fused_recurrent_gated_delta_rule(
                    q, k, v, g=a, beta=b, A_log=A_log, dt_bias=dt_bias, scale=scale,
                    initial_state=state0, output_final_state=True,
                    use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                    use_beta_sigmoid_in_kernel=True, state_v_first=True)

            row = {"H": H, "HV": HV, "B": B, "bytes": bytes_moved}
            try:
                o_ref, s_ref = fla()
                torch.cuda.synchronize()
                row["fla_graph_us"] = 1e3 * triton.testing.do_bench_cudagraph(fla, rep=100, return_mode="median")
                row["fla_flush_us"] = 1e3 * triton.testing.do_bench(fla, warmup=10, rep=100, return_mode="median")
            except Exception as e:  # FLA fails at some shapes: record it
                torch.cuda.synchronize()
                row["fla_error"] = str(e).splitlines()[0][:120]
                o_ref = s_ref = None
            peers = []
            if args.flashinfer:
                for dt, tag in ((torch.float32, "fi_f32"), (torch.bfloat16, "fi_bf16")):
                    st = state0.to(dt, copy=True)
                    fn = flashinfer_peer.decode_call(q, k, v, a, b, A_log, dt_bias, st, scale)
                    o_fi = fn()[0]
                    torch.cuda.synchronize()
                    if o_ref is not None:
                        row[f"{tag}_vs_fla_o"] = ((o_fi.float() - o_ref.float()).norm()
                                                  / o_ref.float().norm()).item()
                        row[f"{tag}_vs_fla_state"] = ((st.float() - s_ref).norm() / s_ref.norm()).item()
                    row[f"{tag}_graph_us"] = 1e3 * triton.testing.do_bench_cudagraph(fn, rep=100, return_mode="median")
                    peers.append((tag, 2 * state0.numel() * st.element_size() + io_bytes))
            for kern in kernels:
                state = state_for(kern, state0)
                o = torch.full_like(v, float("nan"))
                kern(q, k, v, a, b, A_log, dt_bias, slots, state, o, scale)
                torch.cuda.synchronize()
                tag = kern.tag
                if o_ref is not None:
                    row[f"{tag}_vs_fla_o"] = ((o.float() - o_ref.float()).norm() / o_ref.float().norm()).item()
                    row[f"{tag}_vs_fla_state"] = ((state.float() - s_ref).norm() / s_ref.norm()).item()
                assert not torch.isnan(o).any(), f"{tag}: NaN in o at B={B}"
                call = lambda: kern(q, k, v, a, b, A_log, dt_bias, slots, state, o, scale)  # noqa: E731
                row[f"{tag}_graph_us"] = 1e3 * triton.testing.do_bench_cudagraph(call, rep=100, return_mode="median")
                row[f"{tag}_flush_us"] = 1e3 * triton.testing.do_bench(call, warmup=10, rep=100, return_mode="median")
            rows.append(row)
            line = f"H/HV {H:2d}/{HV:2d} B {B:4d} | FLA "
            line += (f'{row["fla_graph_us"]:8.2f} us {bytes_moved / row["fla_graph_us"] / 1e6:6.2f} TB/s'
                     if "fla_graph_us" in row else f'{"FAIL":>24}')
            for tag, kb in peers:
                t = row[f"{tag}_graph_us"]
                line += f" | {tag} {t:8.2f} us {kb / t / 1e6:5.2f} TB/s"
            for kern in kernels:
                tag = kern.tag
                t = row[f"{tag}_graph_us"]
                ratio = row["fla_graph_us"] / t if "fla_graph_us" in row else float("nan")
                kb = kernel_bytes(kern)
                line += (f" | {tag} {t:8.2f} us {kb / t / 1e6:5.2f} TB/s "
                         f"{100 * kb / t / 1e6 / (bw / 1e12):3.0f}% x{ratio:4.2f}"
                         f" (flush {row[f'{tag}_flush_us']:.2f})")
                # Against FlashInfer's kernel of the same state dtype.
                fi = row.get(f"fi_{'bf16' if state_dtype(kern) == torch.bfloat16 else 'f32'}_graph_us")
                if fi is not None and state_dtype(kern) != torch.float16:
                    line += f" xFI {fi / t:4.2f}"
            print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": dev, "copy_bytes_per_s": bw, "empty_kernel_us": floor, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
