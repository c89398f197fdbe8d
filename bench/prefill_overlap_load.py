"""An overlapped prefill while another kernel holds SMs (issue 47, item 4).

A Kiln op whose manifest launches a kernel beside the one before it (the
`_overlap` scan waits on flags the chunk kernel sets) must finish, with the
same bytes as one launch after the other, when another stream's persistent
kernel holds part or all of the GPU, as a communication library's kernels
do. For each manifest and each load (SMs held for --hold-ms by bench/spin.cu,
one CTA an SM), the spinner is launched on its own stream and the op right
after it on a stream of its own, both with no wait between; then the
outputs are compared with an unloaded serial run byte for byte, and the
op's time from its launch to its last kernel's end is reported (at least
the hold, where the load kept its kernels from starting).

usage: python3 bench/prefill_overlap_load.py SPIN.cubin MANIFEST.json... [--hold-ms 200]
"""
import argparse
import ctypes
import math
import sys
import time

import torch

import kiln
from kiln import cuda
from prefill_bench import make_inputs, same_bytes

V = 128


class Spinner:
    """bench/spin.cu's kernel, each CTA with (almost) all of an SM's shared memory."""

    def __init__(self, cubin):
        self.ctx = cuda.primary_context(torch.cuda.current_device())
        with cuda.current(self.ctx):
            module = cuda.load_module(open(cubin, "rb").read(), cubin)
            self.function = cuda.get_function(module, "spin")
            self.shared = torch.cuda.get_device_properties(0).shared_memory_per_block_optin - 1024
            cuda.set_max_dynamic_shared(self.function, self.shared, "spin")
        self.stream = torch.cuda.Stream()

    def launch(self, ctas, ns):
        arg = ctypes.c_uint64(ns)
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg), ctypes.c_void_p))
        with cuda.current(self.ctx):
            cuda.check(cuda.lib().cuLaunchKernel(self.function, ctas, 1, 1, 128, 1, 1, self.shared,
                                                 self.stream.cuda_stream, params, None),
                       "cuLaunchKernel(spin)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spin")
    ap.add_argument("manifests", nargs="+")
    ap.add_argument("--hold-ms", type=float, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--held", default=None,
                    help="SMs the load holds, e.g. 66,124 (default: half, all but 8, all but 1, all)")
    ap.add_argument("--shapes", default="1x8192/16,1x8192/4,4x8192/16",
                    help="NxL/H shapes (HV = 2H)")
    args = ap.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    spinner = Spinner(args.spin)
    shapes = []
    for key in args.shapes.split(","):
        nl, h = key.split("/")
        n, length = (int(x) for x in nl.split("x"))
        shapes.append((nl, [length] * n, int(h), 2 * int(h)))
    loads = ([int(x) for x in args.held.split(",")] if args.held
             else [sms // 2, sms - 8, sms - 1, sms])
    scale = 1 / math.sqrt(128)
    op_stream, done = torch.cuda.Stream(), torch.cuda.Event()
    failed = 0
    print(f"# {torch.cuda.get_device_name()}: {sms} SMs; load: spin.cu holding SMs "
          f"for {args.hold_ms:.0f} ms on another stream")
    for path in args.manifests:
        kern = kiln.load(path)
        for name, lens, H, HV in shapes:
            q, k, v, a, b, A_log, dt_bias, h0, cu = make_inputs(lens, H, HV, seed=11)
            T = sum(lens)
            idx = torch.arange(len(lens), device="cuda", dtype=torch.int32)
            o = torch.empty((T, HV, V), device="cuda", dtype=torch.bfloat16)
            hT = torch.empty_like(h0)

            def call():
                o.fill_(float("nan"))
                hT.fill_(float("nan"))
                kern(q[0], k[0], v[0], a[0], b[0], A_log, dt_bias, cu, idx, h0, hT, o, scale, 1)

            kern.serial = True
            call()
            torch.cuda.synchronize()
            o_ref, s_ref = o.clone(), hT.clone()
            kern.serial = False
            for held in loads:
                differ, times = 0, []
                for _ in range(args.runs):
                    o.fill_(float("nan"))  # poisoned before the load starts
                    hT.fill_(float("nan"))
                    torch.cuda.synchronize()
                    spinner.launch(held, int(args.hold_ms * 1e6))
                    t0 = time.perf_counter()
                    with torch.cuda.stream(op_stream):  # a stream of its own, as an engine's
                        kern(q[0], k[0], v[0], a[0], b[0], A_log, dt_bias, cu, idx, h0, hT, o,
                             scale, 1)
                        done.record()
                    done.synchronize()  # the op alone, not the spinner
                    times.append((time.perf_counter() - t0) * 1e3)
                    torch.cuda.synchronize()  # a trap (10 s flag timeout) raises here at the latest
                    differ += not same_bytes(o, hT, o_ref, s_ref)
                ok = differ == 0
                failed += not ok
                print(f"{'PASS' if ok else 'FAIL'} {kern.tag} {name} {H}/{HV}, {held} of {sms} SMs held: "
                      f"{args.runs} runs, {differ} differ from the serial run; op done "
                      f"{min(times):.1f}-{max(times):.1f} ms after its launch", flush=True)
    print(f"overlap under load: {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
