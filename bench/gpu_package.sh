#!/usr/bin/env bash
# Run on the GPU machine from the repo root: the kiln Python package as a
# user calls it. Builds come from a cache made on the build host and carried
# ($KILN_CACHE_DIR; the GPU machines have no kiln binary):
#   KILN_CACHE_DIR=.kiln-cache python3 tests/python/gpu_builds.py
#   KILN_CACHE_DIR=.kiln-cache PYTHONPATH=python python3 bench/softmax_bench.py --build
# Then: the package's tests (GDN decode and prefill, the overlapped op, CUDA
# graphs, argument errors), the softmax beside torch.softmax, and the host
# time of one call beside Triton's launch of an empty kernel.
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
export KILN_CACHE_DIR=${KILN_CACHE_DIR:-.kiln-cache} PYTHONPATH=python:bench PYTHONUNBUFFERED=1
nvidia-smi -L | tee "$OUT/device.log"
python3 -m pytest -q -p no:cacheprovider tests/python 2>&1 | tail -15 | tee "$OUT/pytest.log"
python3 bench/softmax_bench.py --json "$OUT/softmax.json" 2>&1 | tee "$OUT/softmax.log"
manifest() { ls "$KILN_CACHE_DIR"/*/*/"$1".json | head -1; }
{
  python3 bench/launch_overhead.py "$(manifest decode_sm_90a)" --dims B=1,H=4,HV=8,N=1
  python3 bench/launch_overhead.py "$(manifest softmax_sm_90a)" "$(manifest softmax_sm_90a_tma)" --dims M=8,N=4096
} 2>&1 | tee "$OUT/overhead.log"
