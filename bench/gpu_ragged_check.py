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
from cuda_vs_ptx import gemm, rel, softmax

GEMM_SHAPES = [(1000, 1000, 1001), (129, 77, 37), (200, 136, 250), (256, 256, 256)]
SOFTMAX_SHAPES = [(333, 1001), (64, 4097), (128, 4096)]


def cases(kern):
    """kern's checks at the ragged shapes (cuda_vs_ptx's inputs and float64
    references): (shape, output, reference, tolerance) each; none for an
    op other than GEMM and softmax."""
    entry = kern.manifest["entry"]
    if entry.startswith("gemm"):
        made = [gemm(kern, *dims) for dims in GEMM_SHAPES]
    elif entry == "softmax":
        made = [softmax(*dims) for dims in SOFTMAX_SHAPES]
    else:
        return []
    out = []
    for shape, setup, reference in made:
        args, results = setup()
        kern(*args)
        out.append((shape, results[0], reference(), 1e-2))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=".kiln-out/cuda")
    args = ap.parse_args()
    torch.manual_seed(0)
    failed = checked = 0
    for path in sorted(Path(args.dir).glob("*/*.json")):
        kern = kiln.load(str(path))
        try:
            results = cases(kern)
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
