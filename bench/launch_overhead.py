"""Host time of one kernel call: Kiln's launcher beside Triton's.

Each call is timed on the host while the GPU is held busy by a sleep kernel,
so launches only queue up and the time is the caller's alone: argument
checks, the lookup of what the shape needs, the driver's launch. Triton
launches an empty kernel with one argument and with as many as the Kiln
kernel takes. Kiln's kernels get zero-filled tensors of the manifest's shapes
for --dims (their results do not matter here). Median of --reps batches of
--calls calls, in microseconds.

usage: python3 bench/launch_overhead.py MANIFEST.json... [--dims B=1,H=4,HV=8]
"""
import argparse
import statistics
import time

import torch
import triton

import kiln
from kiln.launch import TORCH_DTYPES


@triton.jit
def _empty(x):
    pass


@triton.jit
def _empty11(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, s):
    pass


def host_us(fn, calls, reps):
    """Median host microseconds per call of `fn`, queued behind a sleep."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        torch.cuda._sleep(50_000_000)  # tens of ms of GPU time: the calls only queue
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def zero_args(kernel, dims):
    """Zero tensors and unit scalars for the kernel's signature at `dims`."""
    args = []
    for p in kernel.info.signature.params:
        if p.is_view:
            shape = [dims[d] if isinstance(d, str) else d for d in p.shape]
            args.append(torch.zeros(shape, dtype=TORCH_DTYPES[p.dtype], device="cuda"))
        else:
            args.append(1.0 if p.dtype.startswith("f") else 1)
    return args


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifests", nargs="+")
    ap.add_argument("--dims", default="B=1,H=4,HV=8,N=1")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--reps", type=int, default=21)
    args = ap.parse_args()
    dims = {k: int(v) for k, v in (d.split("=") for d in args.dims.split(","))}
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"triton {triton.__version__}")
    x = torch.zeros(1, device="cuda")
    ptrs = [torch.zeros(4, device="cuda") for _ in range(10)]
    print(f"triton empty kernel, 1 argument:   "
          f"{host_us(lambda: _empty[(1,)](x), args.calls, args.reps):6.2f} us")
    print(f"triton empty kernel, 11 arguments: "
          f"{host_us(lambda: _empty11[(1,)](*ptrs, 0.5), args.calls, args.reps):6.2f} us")
    for path in args.manifests:
        kern = kiln.load(path)
        kargs = zero_args(kern, dims)
        us = host_us(lambda: kern(*kargs), args.calls, args.reps)
        print(f"kiln {kern.tag}, {len(kargs)} arguments: {us:6.2f} us")


if __name__ == "__main__":
    main()
