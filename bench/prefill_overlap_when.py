"""Probe: when each kernel of an overlapped split prefill op finishes.

Runs the op's launches as kiln's launcher does (the scan beside the
chunk kernel, on a high-priority stream), but with CUDA events instead of
graph replay: a sleep kernel first holds the GPU while the host enqueues
both, then events mark when the chunk kernel and the scan end, from the
moment both may start. So the block scheduler sees both kernels pending at
once (in graph replay the chunk kernel starts a little earlier): the
placement, and so the times, can differ from prefill_bench.py's. It checks
nothing (prefill_overlap_check.py does).

usage (GPU machine): PYTHONPATH=bench:python python3 bench/prefill_overlap_when.py M.json...
"""
import math
import statistics
import sys

import torch

import kiln
from prefill_bench import make_inputs

V = 128
SHAPES = [("1x8192", [8192], 16, 32), ("1x32768", [32768], 16, 32)]  # scans fewer than SMs

for path in sys.argv[1:]:
    kern = kiln.load(path)
    launches = kern.manifest["launches"]
    beside = [i for i, l in enumerate(launches) if l.get("overlap")]
    if len(beside) != 1:
        sys.exit(f"{path}: expected one launch marked overlap, found {len(beside)}")
    s = beside[0]
    for name, lens, H, HV in SHAPES:
        q, k, v, a, b, A_log, dt_bias, h0, cu = make_inputs(lens, H, HV, seed=1)
        o = torch.empty((sum(lens), HV, V), device="cuda", dtype=torch.bfloat16)
        args = (q[0], k[0], v[0], a[0], b[0], A_log, dt_bias, cu, h0, torch.empty_like(h0), o,
                1 / math.sqrt(128), 1)
        kern(*args)
        torch.cuda.synchronize()
        main, side = torch.cuda.current_stream(), kern.side_stream
        times = []
        for it in range(30):
            start, before_done, beside_done = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            for i in range(s - 1):
                kern.launch_one(i, *args)
            torch.cuda._sleep(3_000_000)
            start.record(main)
            side.wait_event(start)
            kern.launch_one(s - 1, *args)
            before_done.record(main)
            with torch.cuda.stream(side):
                kern.launch_one(s, *args)
                beside_done.record(side)
            main.wait_event(beside_done)
            for i in range(s + 1, len(launches)):
                kern.launch_one(i, *args)
            torch.cuda.synchronize()
            if it >= 5:
                times.append((start.elapsed_time(before_done), start.elapsed_time(beside_done)))
        print(f"{path}  {name}: {launches[s - 1]['kernel']} done at "
              f"{statistics.median(t[0] for t in times):.3f} ms, {launches[s]['kernel']} at "
              f"{statistics.median(t[1] for t in times):.3f} ms")
