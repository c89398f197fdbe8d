"""GDN multi-token decode (MTP): Kiln's kernels for T tokens a request beside
Kiln's one-token decode and FLA's fused_recurrent_gated_delta_rule on the
same T tokens (a batch of B sequences of T tokens from their states: the
same recurrence, with no intermediate states kept).

One process, one GPU, CUDA-graph replay medians. For each shape it prints
each kernel's time and its ratio to one T = 1 step of the plain decode
kernel given with --decode (the issue's bound: T = 4 at most 1.3x), and
checks that an MTP kernel at T = 1 matches each decode kernel with its
state dtype and rows a program (BV) bit for bit.

gdn_decode_mtp_states keeps every token's state in a buffer of its own,
gdn_decode_mtp_scatter in pool slots B + n T + t (the pool holds them).

With --flashinfer, FlashInfer's gated_delta_rule_mtp (f32 state pool through
the same slots, the pool updated, no intermediate states) beside them.
With --per-kernel, each kernel of an op of several launches
(gdn_decode_mtp_chunked: factors, then scan) is also timed alone.

usage: python3 bench/mtp_bench.py --decode DECODE.json... MTP.json... [--json OUT] [--flashinfer]
       [--per-kernel]
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

from decode_bench import K, V, make_inputs  # noqa: E402
import flashinfer_peer  # noqa: E402
from op_bench import check_tags, state_dtype, state_for  # noqa: E402


def graph_us(fn):
    return 1e3 * triton.testing.do_bench_cudagraph(fn, rep=100, return_mode="median")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifests", nargs="+",
                    help="MTP kernels (gdn_decode_mtp[_states|_scatter|_chunked])")
    ap.add_argument("--decode", nargs="+", required=True, help="plain decode kernels")
    ap.add_argument("--json", default=None)
    ap.add_argument("--batches", default="1,64,200")
    ap.add_argument("--tokens", default="1,2,4,8")
    ap.add_argument("--heads", default="16/32")
    ap.add_argument("--flashinfer", action="store_true", help="also time FlashInfer's MTP kernel")
    ap.add_argument("--per-kernel", action="store_true",
                    help="also time each kernel of an op (several launches) alone")
    args = ap.parse_args()
    if args.flashinfer:
        flashinfer_peer.load_decode()
    mtps = [kiln.load(m) for m in args.manifests]
    decodes = [kiln.load(m) for m in args.decode]
    check_tags(ap, mtps + decodes)
    dev = torch.cuda.get_device_name()
    print(f"# {dev}")
    scale = 1 / math.sqrt(K)
    rows, exact = [], []
    for hh in args.heads.split(","):
        H, HV = (int(x) for x in hh.split("/"))
        for B in [int(x) for x in args.batches.split(",")]:
            slots = torch.arange(B, device="cuda", dtype=torch.int32)
            # One T = 1 step of each plain decode kernel: the unit of the ratios.
            q1, k1, v1, a1, b1, A_log, dt_bias, s0 = make_inputs(B, H, HV, seed=B)
            step = {}
            for d in decodes:
                st = state_for(d, s0)
                o = torch.empty_like(v1)
                step[d.tag] = graph_us(lambda: d(q1, k1, v1, a1, b1, A_log, dt_bias, slots, st, o,
                                                 scale))
                # T = 1 through each MTP kernel of the same state dtype: bit for bit.
                st_ref, o_ref = state_for(d, s0), torch.full_like(v1, float("nan"))
                d(q1, k1, v1, a1, b1, A_log, dt_bias, slots, st_ref, o_ref, scale)
                for m in mtps:  # its twins: the same state dtype and rows a program
                    if (state_dtype(m) != state_dtype(d) or m.entries != ["gdn_decode_mtp"]
                            or m.manifest["consts"].get("BV") != d.manifest["consts"].get("BV")):
                        continue
                    st_m, o_m = state_for(m, s0), torch.full_like(v1, float("nan"))
                    m(q1, k1, v1, a1, b1, A_log, dt_bias, slots, slots, st_m, o_m, scale)
                    ds = (st_m.view(torch.uint8) != st_ref.view(torch.uint8)).sum().item()
                    do = (o_m.view(torch.int16) != o_ref.view(torch.int16)).sum().item()
                    exact.append({"B": B, "decode": d.tag, "mtp": m.tag, "state_bytes_differing": ds,
                                  "o_elements_differing": do})
                    print(f"# T=1 {m.tag} vs {d.tag} at B={B}: " + (
                        "bit-identical" if ds == do == 0 else
                        f"DIFFERENT ({ds} state bytes of {st_m.numel() * st_m.element_size()}, "
                        f"{do} o elements of {o_m.numel()})"))
            for T in [int(x) for x in args.tokens.split(",")]:
                q, k, v, a, b, A_log, dt_bias, s0 = make_inputs(B, H, HV, seed=B * 10 + T, T=T)
                row = {"H": H, "HV": HV, "B": B, "T": T}
                row.update({f"{tag}_step_us": t for tag, t in step.items()})

                def fla():
                    return fused_recurrent_gated_delta_rule(
                        q, k, v, g=a, beta=b, A_log=A_log, dt_bias=dt_bias, scale=scale,
                        initial_state=s0, output_final_state=True,
                        use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                        use_beta_sigmoid_in_kernel=True, state_v_first=True)

                o_fla, s_fla = fla()
                row["fla_us"] = graph_us(fla)
                line = f"H/HV {H}/{HV} B {B:4d} T {T} | FLA {row['fla_us']:8.2f} us"
                if args.flashinfer and T > 1:  # its MTP kernel takes T >= 2
                    pool = s0.clone()
                    fn = flashinfer_peer.mtp_call(q, k, v, a, b, A_log, dt_bias, pool, slots, scale)
                    try:
                        o_fi = fn()[0]
                        torch.cuda.synchronize()
                        row["fi_vs_fla_o"] = ((o_fi.float() - o_fla.float()).norm()
                                              / o_fla.float().norm()).item()
                        row["fi_us"] = graph_us(fn)
                        line += f" | FI {row['fi_us']:8.2f} us (vs FLA o {row['fi_vs_fla_o']:.1e})"
                    except Exception as e:  # a shape its kernel does not take: recorded
                        row["fi_error"] = str(e).splitlines()[0][:160]
                        line += f" | FI FAIL ({row['fi_error'][:60]})"
                for m in mtps:
                    # gdn_decode_mtp_scatter writes token t of request n to
                    # pool slot B + n T + t: the pool holds those rows too.
                    scatter = m.entries == ["gdn_decode_mtp_scatter"]
                    pool0 = s0
                    if scatter:
                        pool0 = torch.cat([s0, s0.new_zeros(B * T, *s0.shape[1:])])
                    st = state_for(m, pool0)
                    o = torch.full_like(v, float("nan"))
                    extra, before = [], []
                    if m.entries == ["gdn_decode_mtp_states"]:
                        extra = [torch.empty(B, T, HV, V, K, device="cuda", dtype=st.dtype)]
                    if scatter:
                        before = [B + torch.arange(B * T, device="cuda",
                                                   dtype=torch.int32).reshape(B, T)]
                    call = lambda: m(q, k, v, a, b, A_log, dt_bias, slots, slots,  # noqa: E731
                                     *before, st, *extra, o, scale)
                    call()
                    torch.cuda.synchronize()
                    assert not torch.isnan(o).any(), f"{m.tag}: NaN in o"
                    row[f"{m.tag}_vs_fla_o"] = ((o.float() - o_fla.float()).norm()
                                                / o_fla.float().norm()).item()
                    st = state_for(m, pool0)
                    t = row[f"{m.tag}_us"] = graph_us(call)
                    same = [d for d in decodes if state_dtype(d) == state_dtype(m)]
                    unit = step[same[0].tag] if same else float("nan")
                    line += (f" | {m.tag} {t:8.2f} us x{row['fla_us'] / t:4.2f} FLA, "
                             f"{t / unit:4.2f} steps")
                    if args.per_kernel and m.is_op:
                        parts = []
                        for i, entry in enumerate(m.entries):
                            alone = lambda: m.launch_one(i, q, k, v, a, b, A_log,  # noqa: E731
                                                         dt_bias, slots, slots, *before, st,
                                                         *extra, o, scale)
                            us = row[f"{m.tag}_{entry}_us"] = graph_us(alone)
                            parts.append(f"{entry} {us:.2f}")
                        line += " [" + ", ".join(parts) + "]"
                rows.append(row)
                print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": dev, "rows": rows, "t1_exact": exact}, f, indent=1)


if __name__ == "__main__":
    main()
