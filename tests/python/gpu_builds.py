"""The kernels test_gpu.py launches, compiled through kiln.compile.

The GPU machines have no kiln binary (no LLVM): run this on the build host,
`KILN_CACHE_DIR=DIR python3 tests/python/gpu_builds.py`, and carry DIR to the
GPU machine, where kiln.compile finds the same builds in the cache.
"""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILDS = {  # name: source, schedule, consts
    "matmul": ("tests/gpu/matmul.tile", "tests/gpu/matmul_bf16_sm_90a.yaml", {}),
    "decode": ("ops/gdn/decode.tile", "ops/gdn/schedules/decode_sm_90a.yaml", {}),
    "decode_tma": ("ops/gdn/decode.tile", "ops/gdn/schedules/decode_sm_90a_tma.yaml", {}),
    "prefill_overlap": ("ops/gdn/prefill.tile",
                        "ops/gdn/schedules/prefill_split_sm_90a_overlap.yaml", {}),
}


def build(name):
    import kiln
    tile, schedule, consts = BUILDS[name]
    return kiln.compile(REPO / tile, REPO / schedule, consts)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "python"))
    for name in BUILDS:
        print(name, build(name).path)
