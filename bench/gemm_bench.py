"""GEMM (ops/gemm) on a GPU: Kiln's schedules beside torch.matmul (cuBLAS).

One process, one GPU, through the kiln package. Per shape: each schedule's
output against torch's float64 product of the same bf16 inputs (relative
error, NaN fails), then CUDA-graph replay medians of ours and of
torch.matmul, in TFLOP/s (2 M N K flops).

usage: python3 bench/gemm_bench.py [--shapes 4096x4096x4096,...] [--json OUT]
(where kiln.compile finds the builds: the kiln binary, or a cache made on the
build host with --build and carried, $KILN_CACHE_DIR)
"""
from op_bench import graph_ms, run

SCHEDULES = ["gemm_sm_90a", "gemm_sm_90a_ws", "gemm_sm_90a_ws256", "gemm_sm_90a_ws192"]


FAILED = []


def measure(dims, kernels):
    import torch
    M, N, K = dims
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    ref = a.double() @ b.double()
    tflops = lambda ms: 2 * M * N * K / (ms * 1e-3) / 1e12  # noqa: E731
    row = {"M": M, "N": N, "K": K, "torch_ms": graph_ms(lambda: torch.matmul(a, b))}
    line = f"torch {row['torch_ms']:7.3f} ms {tflops(row['torch_ms']):5.0f} TFLOP/s"
    for name, k in kernels.items():
        c.fill_(float("nan"))
        k(a, b, c)
        torch.cuda.synchronize()
        rel = ((c.double() - ref).norm() / ref.norm()).item()
        if not rel < 1e-2:  # bf16 rounding of C; NaN fails
            # Recorded, timed no further; the run exits 1 at its end.
            FAILED.append(f"{name} at {M}x{N}x{K}: relative error {rel}")
            row[f"{name}_error"] = rel
            line += f"  {name} FAIL (relative error {rel:.1e})"
            continue
        row[f"{name}_rel_err"] = rel
        row[f"{name}_ms"] = ms = graph_ms(lambda: k(a, b, c))
        line += (f"  {name} {ms:7.3f} ms {tflops(ms):5.0f} TFLOP/s "
                 f"({row['torch_ms'] / ms * 100:.0f}% of torch)")
    return row, line


if __name__ == "__main__":
    run("gemm", SCHEDULES, "4096x4096x4096,8192x8192x8192,1000x3000x2048", measure)
    if FAILED:
        raise SystemExit("FAIL: " + "; ".join(FAILED))
