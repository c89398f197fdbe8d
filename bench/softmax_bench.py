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
import argparse
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCHEDULES = ["softmax_sm_90a", "softmax_sm_90a_rows", "softmax_sm_90a_tma"]


def builds():
    import kiln
    op = REPO / "ops" / "softmax"
    return {s: kiln.compile(op / "softmax.tile", op / "schedules" / f"{s}.yaml")
            for s in SCHEDULES}


def graph_ms(fn):
    import triton
    return triton.testing.do_bench_cudagraph(fn, rep=200, return_mode="median")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="4096x4096,16384x1024,1024x32768,65536x256,8x4096")
    ap.add_argument("--json")
    ap.add_argument("--build", action="store_true", help="only compile into the cache")
    args = ap.parse_args()
    kernels = builds()
    if args.build:
        for name, k in kernels.items():
            print(name, k.path)
        return
    import torch
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}")
    rows = []
    for shape in args.shapes.split(","):
        M, N = (int(d) for d in shape.split("x"))
        x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
        y = torch.empty_like(x)
        ref = torch.softmax(x.double(), dim=-1)
        row = {"M": M, "N": N, "bytes": 2 * x.numel() * 2}
        row["torch_ms"] = graph_ms(lambda: torch.softmax(x, dim=-1))
        row["torch_max_abs_err"] = (torch.softmax(x, dim=-1).double() - ref).abs().max().item()
        row["copy_ms"] = graph_ms(lambda: y.copy_(x))
        line = (f"{shape:>12}  torch {row['torch_ms'] * 1e3:8.2f} us  "
                f"copy {row['copy_ms'] * 1e3:8.2f} us")
        for name, k in kernels.items():
            y.fill_(float("nan"))
            k(x, y)
            torch.cuda.synchronize()
            err = (y.double() - ref).abs().max().item()
            rel = ((y.double() - ref).norm() / ref.norm()).item()
            if not (err < 4e-3 and rel < 1e-2):  # bf16 rounding of y; NaN fails
                raise SystemExit(f"{name} at {shape}: max abs error {err}, relative {rel}")
            row[f"{name}_max_abs_err"] = err
            row[f"{name}_ms"] = graph_ms(lambda: k(x, y))
            line += (f"  {name} {row[f'{name}_ms'] * 1e3:8.2f} us "
                     f"(x{row['torch_ms'] / row[f'{name}_ms']:.2f} torch, "
                     f"{row['bytes'] / row[f'{name}_ms'] / 1e6:.0f} GB/s)")
        rows.append(row)
        print(line, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(),
                                               "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
