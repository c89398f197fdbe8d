"""Masked loads along a dynamic contiguous dim, on a GPU: every GEMM and
softmax build of a directory (bench/build_cuda_kernels.sh's: PTX builds in
ptx/, CUDA C++ builds in nvcc/) at shapes whose contiguous dim is not a
multiple of the 16-byte vector (K for A [M, K] and B [K, N]'s N, the
softmax's row), so each load takes the element-by-element branch beside
the vector one, and at one shape where it does not. Outputs poisoned with
NaN first, checked against float64 (NaN fails). A build that rejects the
shapes (a TMA tensor's rows must be 16-byte multiples) is listed as such.
Exits 1 on any failure.

usage: python3 bench/gpu_ragged_check.py [--dir .kiln-out/cuda]
"""
import argparse
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT / "python"), str(_ROOT / "bench")]

import torch

import kiln
from gemm_bench import reference as gemm_reference

GEMM_SHAPES = [(1000, 1000, 1001), (129, 77, 37), (200, 136, 250), (256, 256, 256)]
SOFTMAX_SHAPES = [(333, 1001), (64, 4097), (128, 4096)]


def rel(x, ref):
    x, ref = x.double(), ref.double()
    return ((x - ref).norm() / ref.norm()).item()


def gemm_cases(kern):
    entry = kern.manifest["entry"]
    for M, N, K in GEMM_SHAPES:
        a = torch.randn(M, K, device="cuda").bfloat16()
        b = torch.randn(*((N, K) if entry == "gemm_nt" else (K, N)), device="cuda").bfloat16()
        bias = torch.randn(N, device="cuda")
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        kern(*([a, b, bias, c] if entry == "gemm_bias" else [a, b, c]))
        yield f"{M}x{N}x{K}", c, gemm_reference(kern, a, b, bias), 1e-2


def softmax_cases(kern):
    for M, N in SOFTMAX_SHAPES:
        x = torch.randn(M, N, device="cuda").bfloat16()
        y = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        kern(x, y)
        yield f"{M}x{N}", y, torch.softmax(x.double(), dim=1), 1e-2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=".kiln-out/cuda")
    args = ap.parse_args()
    torch.manual_seed(0)
    failed = checked = 0
    for path in sorted(Path(args.dir).glob("*/*.json")):
        kern = kiln.load(str(path))
        entry = kern.manifest["entry"]
        cases = (gemm_cases if entry.startswith("gemm") else
                 softmax_cases if entry == "softmax" else None)
        if cases is None:
            continue
        try:
            results = list(cases(kern))
        except (kiln.KilnError, ValueError, RuntimeError) as e:  # a shape the build rejects (TMA)
            print(f"REJECTED {path.parent.name}/{path.stem}: {str(e).splitlines()[0]}")
            continue
        for shape, out, ref, tol in results:
            torch.cuda.synchronize()
            err = rel(out, ref)
            ok = not bool(torch.isnan(out).any()) and err < tol
            failed += not ok
            checked += 1
            print(f"{'PASS' if ok else 'FAIL'} {path.parent.name}/{path.stem} {shape} "
                  f"rel {err:.1e}", flush=True)
    print(f"ragged checks: {checked - failed} passed, {failed} failed")
    raise SystemExit(1 if failed or not checked else 0)


if __name__ == "__main__":
    main()
