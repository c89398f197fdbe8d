"""The CUDA C++ build of every sm_90a schedule beside its PTX build.

bench/build_cuda_kernels.sh compiles each schedule twice from one plan:
through PTX (ptxas) into .kiln-out/cuda/ptx/NAME.json and through CUDA C++
(nvcc) into .kiln-out/cuda/nvcc/NAME-cuda.json. For each pair this runs
both on the same inputs at the op's bench shape (outputs poisoned with NaN
first), checks the CUDA build's outputs against the PTX build's (bit for
bit: both round alike) and, where a torch reference is at hand (GEMM,
matmul, softmax), against float64; then times both (CUDA-graph median, one
process, one GPU). The GDN builds' golden checks are kiln-gpu's
(bench/gpu_cuda.sh).

usage: python3 bench/cuda_vs_ptx.py [--dir .kiln-out/cuda] [--json OUT.json]
       [--per-kernel] [--only NAME,NAME]
(from the repository root; the `kiln` package and bench/gemm_bench.py are
found from the script's own place, no PYTHONPATH needed)
"""
import argparse
import json
import math
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT / "python"), str(_ROOT / "bench")]

import torch
import triton

import kiln
from gemm_bench import reference as gemm_reference


def graph_ms(fn):
    return triton.testing.do_bench_cudagraph(fn, rep=50, return_mode="median")


def decode_tokens(kern, seed, B, T, H, HV, K, V):
    """A decode step's inputs for B requests of T tokens each, and a state
    pool of B rows in the kernel's state dtype (drawn in that order)."""
    from op_bench import state_dtype
    g = torch.Generator(device="cuda").manual_seed(seed)
    bf = dict(device="cuda", dtype=torch.bfloat16)
    q, k = (torch.randn(B, T, H, K, generator=g, **bf) for _ in range(2))
    v = torch.randn(B, T, HV, V, generator=g, **bf)
    a, b = (torch.randn(B, T, HV, generator=g, **bf) for _ in range(2))
    A_log = torch.rand(HV, generator=g, device="cuda") * 2 - 1
    dt_bias = 0.5 * torch.randn(HV, generator=g, device="cuda")
    state0 = torch.randn(B, HV, V, K, generator=g, device="cuda").to(state_dtype(kern))
    return [q, k, v, a, b, A_log, dt_bias], state0


def gdn_decode(kern, B=256, H=16, HV=32, K=128, V=128):
    tokens, state0 = decode_tokens(kern, B, B, 1, H, HV, K, V)
    slots = torch.arange(B, device="cuda", dtype=torch.int32)

    def setup():
        state, o = state0.clone(), torch.full_like(tokens[2], float("nan"))
        return tokens + [slots, state, o, 1 / math.sqrt(K)], [state, o]
    return f"B={B} H/HV={H}/{HV}", setup, None


def gdn_decode_mtp(kern, B=64, T=4, H=16, HV=32, K=128, V=128):
    """Multi-token decode (T tokens a request), states in the kernel's dtype;
    gdn_decode_mtp_states also writes every token's state, and
    gdn_decode_mtp_scatter each token's state to a pool slot of its own
    (the pool B x (T + 1) rows: the requests' rows, then the tokens')."""
    entry = kern.manifest["entry"]
    states = entry == "gdn_decode_mtp_states"
    scatter = entry == "gdn_decode_mtp_scatter"
    tokens, state0 = decode_tokens(kern, B + T, B, T, H, HV, K, V)
    slots = torch.arange(B, device="cuda", dtype=torch.int32)
    token_slots = B + torch.arange(B * T, device="cuda", dtype=torch.int32).reshape(B, T)
    if scatter:
        state0 = torch.cat([state0, state0.new_zeros(B * T, *state0.shape[1:])])

    def setup():
        state, o = state0.clone(), torch.full_like(tokens[2], float("nan"))
        args = tokens + [slots, slots] + ([token_slots] if scatter else []) + [state]
        outs = [state, o]
        if states:
            inter = torch.full((B, T, HV, V, K), float("nan"), device="cuda", dtype=state0.dtype)
            args.append(inter)
            outs.append(inter)
        return args + [o, 1 / math.sqrt(K)], outs
    return f"B={B} T={T} H/HV={H}/{HV}", setup, None


def gdn_prefill(kern, lens=(8192,), H=16, HV=32, K=128, V=128):
    g = torch.Generator(device="cuda").manual_seed(len(lens))
    T = sum(lens)
    bf = dict(device="cuda", dtype=torch.bfloat16)
    q, k = (torch.randn(T, H, K, generator=g, **bf) for _ in range(2))
    v = torch.randn(T, HV, V, generator=g, **bf)
    a, b = (torch.randn(T, HV, generator=g, **bf) for _ in range(2))
    A_log = torch.rand(HV, generator=g, device="cuda") * 2 - 1
    dt_bias = 0.5 * torch.randn(HV, generator=g, device="cuda")
    h0 = torch.randn(len(lens), HV, V, K, generator=g, device="cuda")
    cu = torch.tensor([0, *lens], device="cuda", dtype=torch.int64).cumsum(0)
    idx = torch.arange(len(lens), device="cuda", dtype=torch.int32)  # dense: row n

    # gdn_prefill_checkpoints: a checkpoint every CKPT_EVERY tokens (its
    # manifest's constant), in a buffer of their count.
    checkpoints = kern.manifest["entry"] == "gdn_prefill_checkpoints"
    every = kern.manifest["consts"]["CKPT_EVERY"] if checkpoints else None
    starts = torch.tensor([0] + [n // every for n in lens], device="cuda",
                          dtype=torch.int64).cumsum(0) if every else None

    def setup():
        hT = torch.full_like(h0, float("nan"))
        o = torch.full((T, HV, V), float("nan"), device="cuda", dtype=torch.bfloat16)
        args, outs = [q, k, v, a, b, A_log, dt_bias, cu, idx, h0, hT, o], [hT, o]
        if every:
            cks = torch.full((max(int(starts[-1]), 1), HV, V, K), float("nan"), device="cuda")
            args, outs = args + [starts, cks], outs + [cks]
        return args + [1 / math.sqrt(K), 1], outs
    return f"{len(lens)}x{lens[0]} H/HV={H}/{HV}", setup, None


def gemm(kern, M=4096, N=4096, K=4096):
    """Any kernel of ops/gemm at its default types (ACT none): B as [K, N],
    or [N, K] for gemm_nt; gemm_bias adds a bias per column."""
    entry = kern.manifest["entry"]
    a = torch.randn(M, K, device="cuda").bfloat16()
    b = torch.randn(*((N, K) if entry == "gemm_nt" else (K, N)), device="cuda").bfloat16()
    bias = torch.randn(N, device="cuda")

    def setup():
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        return ([a, b, bias, c] if entry == "gemm_bias" else [a, b, c]), [c]
    return f"{M}x{N}x{K}", setup, lambda: gemm_reference(kern, a, b, bias)


def matmul(M, N, K, inputs, reference, out=None, dtype=torch.float32):
    """A plain product's case: C [M, N] (or `out`, of `dtype`) poisoned,
    after `inputs`."""
    def setup():
        c = torch.full(out or (M, N), float("nan"), device="cuda", dtype=dtype)
        return [*inputs, c], [c]
    return f"{M}x{N}x{K}", setup, reference


def matmul_bf16(kern, M=2048, N=2048):
    K = kern.manifest["consts"]["K"]
    a = torch.randn(M, K, device="cuda").bfloat16()
    b = torch.randn(K, N, device="cuda").bfloat16()
    return matmul(M, N, K, [a, b], lambda: a.double() @ b.double())


def matmul_tf32_nt(kern, M=2048, N=2304):  # N a multiple of its BN = 48
    K = kern.manifest["consts"]["K"]
    a = torch.randn(M, K, device="cuda")
    bt = torch.randn(N, K, device="cuda")
    return matmul(M, N, K, [a, bt], lambda: a.double() @ bt.double().T + 1.0)


def matmul_f16_tt(kern, M=2048, N=2304):  # N a multiple of its BN = 48
    K = kern.manifest["consts"]["K"]
    at = torch.randn(K, M, device="cuda").half()
    bt = torch.randn(N, K, device="cuda").half()
    return matmul(M, N, K, [at, bt], lambda: at.double().T @ bt.double().T + 1.0)


def matmul_bf16_ct(kern, N=8192):
    K = kern.manifest["consts"]["K"]
    a = torch.randn(128, K, device="cuda").bfloat16()
    b = torch.randn(K, N, device="cuda").bfloat16()
    return matmul(128, N, K, [a, b], lambda: (a.double() @ b.double()).T, out=(N, 128),
                  dtype=torch.bfloat16)


def matmul_bf16_two(kern, N=8192, L=1024):
    """Two products reading one ring stage of B: C1 = A1 B and C2 = A2 B,
    B given transposed; checked on C1 (both compared between the builds)."""
    BM = kern.manifest["consts"]["BM"]
    a1, a2 = (torch.randn(BM, L, device="cuda").bfloat16() for _ in range(2))
    bt = torch.randn(N, L, device="cuda").bfloat16()

    def setup():
        c1, c2 = (torch.full((BM, N), float("nan"), device="cuda") for _ in range(2))
        return [a1, a2, bt, c1, c2], [c1, c2]
    return f"{BM}x{N}x{L} twice", setup, lambda: a1.double() @ bt.double().T


def attention(kern, T=4096, HKV=16, G=1):
    """One sequence of T tokens, 16 heads, the build's head dim; checked
    against SDPA in float64 (its o), causal for attention_causal."""
    D = kern.manifest["consts"].get("D", 128)
    causal = kern.manifest["entry"] == "attention_causal"
    q = torch.randn(T, HKV, G, D, device="cuda").bfloat16()
    k, v = (torch.randn(T, HKV, D, device="cuda").bfloat16() for _ in range(2))
    cu = torch.tensor([0, T], device="cuda", dtype=torch.int32)

    def setup():
        o = torch.full_like(q, float("nan"))
        lse = torch.full((T, HKV, G), float("nan"), device="cuda")
        return [q, k, v, cu, o, lse, D ** -0.5], [o, lse]

    def reference():
        qd = q.double().reshape(T, HKV * G, D).transpose(0, 1)
        kd, vd = (x.double().repeat_interleave(G, dim=1).transpose(0, 1) for x in (k, v))
        o = torch.nn.functional.scaled_dot_product_attention(qd, kd, vd, is_causal=causal)
        return o.transpose(0, 1).reshape(T, HKV, G, D)
    return f"1x{T} {HKV * G} heads D={D}{' causal' if causal else ''}", setup, reference


def softmax(M=4096, N=4096):
    x = torch.randn(M, N, device="cuda").bfloat16()

    def setup():
        y = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        return [x, y], [y]
    return f"{M}x{N}", setup, lambda: torch.softmax(x.double(), dim=1)


def case_for(kern):
    entry = kern.manifest["entry"]
    if entry == "gdn_decode":
        return gdn_decode(kern)
    if entry.startswith("gdn_decode_mtp"):
        return gdn_decode_mtp(kern)
    if entry.startswith("gdn_prefill"):
        return gdn_prefill(kern)
    if entry in ("matmul_bf16", "matmul_tf32_nt", "matmul_f16_tt", "matmul_bf16_ct",
                 "matmul_bf16_two"):
        return globals()[entry](kern)
    if entry in ("attention", "attention_causal"):
        return attention(kern)
    if entry.startswith("gemm"):
        return gemm(kern)
    return {"softmax": softmax}[entry]()


def rel(x, ref):
    x, ref = x.double(), ref.double()
    return ((x - ref).norm() / ref.norm()).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=".kiln-out/cuda")
    ap.add_argument("--json")
    ap.add_argument("--only", help="comma-separated schedules (default: every pair)")
    ap.add_argument("--per-kernel", action="store_true",
                    help="also time each kernel of an op alone (graph replay, median)")
    args = ap.parse_args()
    root = Path(args.dir)
    print(f"# {torch.cuda.get_device_name()}")
    rows, failed = [], 0
    for ptx_path in sorted((root / "ptx").glob("*.json")):
        if args.only and ptx_path.stem not in args.only.split(","):
            continue
        cuda_path = root / "nvcc" / f"{ptx_path.stem}-cuda.json"
        ptx, cuda = kiln.load(str(ptx_path)), kiln.load(str(cuda_path))
        shape, setup, reference = case_for(ptx)
        row = {"schedule": ptx_path.stem, "shape": shape}
        outs = {}
        for tag, kern in (("ptx", ptx), ("cuda", cuda)):
            call_args, results = setup()
            kern(*call_args)
            torch.cuda.synchronize()
            outs[tag] = [r.clone() for r in results]
            row[f"{tag}_nan"] = any(bool(torch.isnan(r).any()) for r in results)
            row[f"{tag}_ms"] = graph_ms(lambda: kern(*call_args))
            if args.per_kernel and kern.is_op:
                for i, entry in enumerate(kern.entries):
                    row[f"{tag}_{entry}_ms"] = graph_ms(lambda: kern.launch_one(i, *call_args))
        row["identical"] = all(torch.equal(p, c) for p, c in zip(outs["ptx"], outs["cuda"]))
        row["cuda_vs_ptx"] = max(rel(c, p) for p, c in zip(outs["ptx"], outs["cuda"]))
        if reference is not None:
            ref = reference()
            row["ptx_vs_ref"] = rel(outs["ptx"][0], ref)
            row["cuda_vs_ref"] = rel(outs["cuda"][0], ref)
        ok = not row["cuda_nan"] and not row["ptx_nan"] and row["cuda_vs_ptx"] < 1e-3
        failed += not ok
        ratio = row["cuda_ms"] / row["ptx_ms"]
        print(f"{row['schedule']:34s} {shape:22s} ptx {row['ptx_ms']:8.4f} ms | cuda "
              f"{row['cuda_ms']:8.4f} ms ({ratio:5.3f}x) | "
              f"{'identical' if row['identical'] else 'differs %.1e' % row['cuda_vs_ptx']}"
              + (f" | vs f64 ptx {row['ptx_vs_ref']:.1e} cuda {row['cuda_vs_ref']:.1e}"
                 if reference else "") + ("" if ok else "  FAIL"), flush=True)
        if args.per_kernel and ptx.is_op:
            print("   per kernel: " + ", ".join(
                f"{e} {row[f'ptx_{e}_ms']:.4f} / {row[f'cuda_{e}_ms']:.4f}" for e in ptx.entries))
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
