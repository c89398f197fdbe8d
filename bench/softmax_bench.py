"""The tutorial op on a GPU: Kiln's softmax schedules beside torch.softmax.

One process, one GPU, through the kiln package as a user calls it
(kiln.compile, then calls on torch tensors). Per shape: each schedule's
output against torch's (float64 softmax of the same bf16 inputs, and
torch.softmax in bf16), then CUDA-graph replay medians of ours, of
torch.softmax and of a device-to-device copy of the same bytes (the
ceiling: softmax reads x once and writes y once; Kiln's schedules read x
twice, the second time mostly from L2).

usage: python3 bench/softmax_bench.py [--shapes 4096x4096,...] [--json OUT]
(run where kiln.compile finds the builds: the kiln binary, or a cache made
on the build host with --build and carried, $KILN_CACHE_DIR)
"""
from op_bench import graph_ms, run

SCHEDULES = ["softmax_sm_90a", "softmax_sm_90a_rows", "softmax_sm_90a_tma"]


def measure(dims, kernels):
    import torch
    M, N = dims
    x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    ref = torch.softmax(x.double(), dim=-1)
    row = {"M": M, "N": N, "bytes": 2 * x.numel() * 2}
    row["torch_ms"] = graph_ms(lambda: torch.softmax(x, dim=-1))
    row["torch_max_abs_err"] = (torch.softmax(x, dim=-1).double() - ref).abs().max().item()
    row["copy_ms"] = graph_ms(lambda: y.copy_(x))
    line = f"torch {row['torch_ms'] * 1e3:8.2f} us  copy {row['copy_ms'] * 1e3:8.2f} us"
    for name, k in kernels.items():
        y.fill_(float("nan"))
        k(x, y)
        torch.cuda.synchronize()
        err = (y.double() - ref).abs().max().item()
        rel = ((y.double() - ref).norm() / ref.norm()).item()
        if not (err < 4e-3 and rel < 1e-2):  # bf16 rounding of y; NaN fails
            raise SystemExit(f"{name} at {M}x{N}: max abs error {err}, relative {rel}")
        row[f"{name}_max_abs_err"] = err
        row[f"{name}_ms"] = ms = graph_ms(lambda: k(x, y))
        line += (f"  {name} {ms * 1e3:8.2f} us (x{row['torch_ms'] / ms:.2f} torch, "
                 f"{row['bytes'] / ms / 1e6:.0f} GB/s)")
    return row, line


if __name__ == "__main__":
    run("softmax", SCHEDULES, "4096x4096,16384x1024,1024x32768,65536x256,8x4096", measure)
