"""Kiln from Python.

    kernel = kiln.compile("ops/gdn/decode.tile", "ops/gdn/schedules/decode_sm_90a.yaml")
    kernel(q, k, v, a, b, A_log, dt_bias, slots, state, o, scale)   # torch CUDA tensors

    result = kiln.run_cpu("ops/gdn/decode.tile", "ops/gdn/schedules/decode_cpu.yaml",
                          inputs={"q": q}, dims={"B": 4, "H": 4, "HV": 8})
    result.outputs["o"], result.checks

compile() runs the kiln binary (and caches what it builds), select() does so
for a selection file (one call, the schedule each shape picks), load() takes
a prebuilt cubin and manifest (or selection manifest), a Kernel launches on
torch tensors, run_cpu() runs a schedule on the CPU backend. Only numpy is needed to import it;
calling a kernel needs PyTorch and a GPU.
"""
from .compiler import compile, select  # noqa: A004
from .cpu import Check, CpuRun, run_cpu
from .errors import CompileError, KilnError
from .kernel import Kernel, load

__version__ = "0.1.0"
__all__ = ["compile", "select", "load", "run_cpu", "Kernel", "CpuRun", "Check", "KilnError",
           "CompileError"]
