"""Probe: how long a split prefill op's chunk kernel and scan take run side
by side (two streams, the scan's at high priority, the chunk kernel launched
first or second) against one after the other, CUDA-graph replay median.

The scan reads the scratch a full call left, so this times the overlap only:
it is not a correct way to run the op (nothing makes the scan wait for the
chunks it reads), and it checks nothing. It measures what running the two
kernels concurrently could gain.

usage (GPU machine): PYTHONPATH=bench:python FLA_PATH=.peer \
    python3 bench/prefill_overlap_probe.py SPLIT_MANIFEST.json
"""
import math
import sys

import torch
import triton

import kiln
from prefill_bench import make_inputs, varlen_57

V = 128
kern = kiln.load(sys.argv[1])
print(torch.cuda.get_device_name())
SHAPES = [("1x8192", [8192], 16, 32), ("1x8192", [8192], 4, 8), ("4x8192", [8192] * 4, 16, 32),
          ("varlen57", varlen_57(), 16, 32), ("1x32768", [32768], 16, 32)]
for name, lens, H, HV in SHAPES:
    q, k, v, a, b, A_log, dt_bias, h0, cu = make_inputs(lens, H, HV, seed=1)
    T = sum(lens)
    o = torch.empty((T, HV, V), device="cuda", dtype=torch.bfloat16)
    hT = torch.empty_like(h0)
    idx = torch.arange(len(lens), device="cuda", dtype=torch.int32)  # dense: row n
    args = (q[0], k[0], v[0], a[0], b[0], A_log, dt_bias, cu, idx, h0, hT, o, 1 / math.sqrt(128), 1)
    kern(*args)
    torch.cuda.synchronize()
    side = torch.cuda.Stream(priority=-1)
    def seq():  # segments, chunks, scan
        for i in range(3):
            kern.launch_one(i, *args)
    def conc(scan_first):
        main = torch.cuda.current_stream()
        kern.launch_one(0, *args)
        ev = torch.cuda.Event(); ev.record(main)
        side.wait_event(ev)
        if scan_first:
            with torch.cuda.stream(side):
                kern.launch_one(2, *args)
            kern.launch_one(1, *args)
        else:
            kern.launch_one(1, *args)
            with torch.cuda.stream(side):
                kern.launch_one(2, *args)
        back = torch.cuda.Event(); back.record(side)
        main.wait_event(back)
    t_seq = triton.testing.do_bench_cudagraph(seq, rep=50, return_mode="median")
    t_c1 = triton.testing.do_bench_cudagraph(lambda: conc(False), rep=50, return_mode="median")
    t_c2 = triton.testing.do_bench_cudagraph(lambda: conc(True), rep=50, return_mode="median")
    t_chunks = triton.testing.do_bench_cudagraph(lambda: kern.launch_one(1, *args), rep=50, return_mode="median")
    t_scan = triton.testing.do_bench_cudagraph(lambda: kern.launch_one(2, *args), rep=50, return_mode="median")
    print(f"{name} {H}/{HV}: one after the other {t_seq:.3f} ms (chunks {t_chunks:.3f}, "
          f"scan {t_scan:.3f}); side by side, chunks launched first {t_c1:.3f}, "
          f"scan launched first {t_c2:.3f}", flush=True)
