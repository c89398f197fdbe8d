"""GEMM (ops/gemm) on a GPU: Kiln's schedules beside torch (cuBLAS).

One process, one GPU, through the kiln package. Per shape: each schedule's
output against torch's float64 result of the same inputs (relative error,
NaN fails), then CUDA-graph replay medians of ours and of torch doing the
same work, in TFLOP/s (2 M N K flops). A schedule of `gemm_nt` (B given as
[N, K]) is compared with torch.matmul(a, b.T), one of `gemm_bias` with
torch.addmm; its consts (`name@AB=f16:OUT=f32:ACT=2`) set the operand and
output types and the activation, which torch then applies after the
product (gelu with approximate="tanh").

usage: python3 bench/gemm_bench.py [--shapes 4096x4096x4096,...] [--json OUT]
       [--schedules gemm_nt_sm_90a_ws256@AB=f16,...]
(where kiln.compile finds the builds: the kiln binary, or a cache made on the
build host with --build and carried, $KILN_CACHE_DIR)
"""
from op_bench import graph_ms, run

SCHEDULES = ["gemm_sm_90a", "gemm_sm_90a_ws", "gemm_sm_90a_ws256", "gemm_sm_90a_ws192"]


FAILED = []


TYPES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}


def activation(kern):
    """The torch function of kern's epilogue activation (`ACT`), or None."""
    import torch.nn.functional as F
    return {0: None, 1: F.relu, 2: lambda x: F.gelu(x, approximate="tanh"),
            3: F.silu}[kern.manifest["consts"].get("ACT", 0)]


def torch_form(kern, a, b, bias):
    """What torch runs for the same work as kernel `kern`: the product of
    its kernel (B as [K, N] or, for gemm_nt, [N, K]; gemm_bias adds the
    bias), its activation, in its output type."""
    import torch
    entry = kern.manifest["entry"]
    out = getattr(torch, TYPES[kern.manifest["consts"].get("OUT", "bf16")])
    act = activation(kern)

    def call():
        if entry == "gemm_nt":
            c = torch.matmul(a, b.T)
        elif entry == "gemm_bias":
            c = torch.addmm(bias.to(a.dtype), a, b)
        else:
            c = torch.matmul(a, b)
        c = act(c) if act else c
        return c if c.dtype == out else c.to(out)
    return call


def reference(kern, a, b, bias):
    """The float64 result kern should give (before its output's rounding)."""
    entry = kern.manifest["entry"]
    c = a.double() @ (b.double().T if entry == "gemm_nt" else b.double())
    if entry == "gemm_bias":
        c = c + bias.double()[None, :]
    act = activation(kern)
    return act(c) if act else c


def measure(dims, kernels):
    import torch
    M, N, K = dims
    tflops = lambda ms: 2 * M * N * K / (ms * 1e-3) / 1e12  # noqa: E731
    row = {"M": M, "N": N, "K": K}
    line = ""
    torch_done = {}  # torch's time per form of the work, measured once
    gen = torch.Generator(device="cuda").manual_seed(M + N + K)
    for name, k in kernels.items():
        consts = k.manifest["consts"]
        entry = k.manifest["entry"]
        ab = getattr(torch, TYPES[consts.get("AB", "bf16")])
        a = torch.randn(M, K, device="cuda", dtype=ab, generator=gen)
        b = torch.randn(*((N, K) if entry == "gemm_nt" else (K, N)), device="cuda", dtype=ab,
                        generator=gen)
        bias = torch.randn(N, device="cuda", dtype=torch.float32, generator=gen)
        c = torch.empty(M, N, device="cuda", dtype=getattr(torch, TYPES[consts.get("OUT", "bf16")]))
        args = (a, b, bias, c) if entry == "gemm_bias" else (a, b, c)
        form = (entry, consts.get("AB", "bf16"), consts.get("OUT", "bf16"), consts.get("ACT", 0))
        if form not in torch_done:
            torch_done[form] = graph_ms(torch_form(k, a, b, bias))
            key = "torch_ms" if form == ("gemm", "bf16", "bf16", 0) else f"torch_{'_'.join(map(str, form))}_ms"
            row[key] = torch_done[form]
            line += f"  torch {'/'.join(map(str, form))} {torch_done[form]:7.3f} ms {tflops(torch_done[form]):5.0f} TFLOP/s"
        ref = reference(k, a, b, bias)
        c.fill_(float("nan"))
        k(*args)
        torch.cuda.synchronize()
        rel = ((c.double() - ref).norm() / ref.norm()).item()
        if not rel < 1e-2:  # 16-bit rounding of C; NaN fails
            # Recorded, timed no further; the run exits 1 at its end.
            FAILED.append(f"{name} at {M}x{N}x{K}: relative error {rel}")
            row[f"{name}_error"] = rel
            line += f"  {name} FAIL (relative error {rel:.1e})"
            continue
        row[f"{name}_rel_err"] = rel
        row[f"{name}_ms"] = ms = graph_ms(lambda: k(*args))
        line += (f"  {name} {ms:7.3f} ms {tflops(ms):5.0f} TFLOP/s "
                 f"({torch_done[form] / ms * 100:.0f}% of torch)")
    return row, line


if __name__ == "__main__":
    run("gemm", SCHEDULES, "4096x4096x4096,8192x8192x8192,1000x3000x2048", measure)
    if FAILED:
        raise SystemExit("FAIL: " + "; ".join(FAILED))
