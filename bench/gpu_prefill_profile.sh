#!/usr/bin/env bash
# Run on the GPU machine from the repo root: where an op's time goes.
# Times each kernel of every split manifest given (graph replay, beside FLA)
# at 1x8192 16/32, then samples kernels of each with Nsight Compute (warp
# stalls, and stall samples summed by SASS opcode): those whose names match
# $KERNELS (a regex, default: scan). Each kernel's per-instruction table is
# kept as $OUT/MANIFEST_KERNEL.csv: with a build made with `kiln compile
# --lineinfo`, bench/ncu_lines.py sums it by .tile line.
# usage: [KERNELS=chunks|scan] [SHAPE=4x8192/16] bash bench/gpu_prefill_profile.sh MANIFEST.json...
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site:bench:python
PYTHONUNBUFFERED=1 FLA_PATH=.peer python3 bench/prefill_bench.py "$@" --per-kernel \
  --shapes ${SHAPE:-1x8192/16} --json "$OUT/profile.json" 2>&1 | tee "$OUT/profile.log"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu here"; exit 0; }
for m in "$@"; do
 for k in $(echo "${KERNELS:-scan}" | tr '|' ' '); do
  tag=$(basename "$m" .json)_$k
  "$NCU" --clock-control none --kernel-name regex:$k --launch-count 1 --section WarpStateStats \
    --section SourceCounters --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables \
    -o "/tmp/$tag" -f python3 bench/prefill_bench.py "$m" --shapes ${SHAPE:-1x8192/16} >/tmp/ncu_run.log 2>&1 ||
    { echo "ncu failed on $tag"; tail -5 /tmp/ncu_run.log; continue; }
  { echo "== $tag"; "$NCU" -i "/tmp/$tag.ncu-rep" --print-summary none 2>&1 |
      grep -E "Duration|Throughput|Stall|Warp Cycles|Issued|Eligible|L2 Hit|Mem Busy|Max Bandwidth"
    "$NCU" -i "/tmp/$tag.ncu-rep" --page source --print-source sass --csv 2>/dev/null >/tmp/src.csv
    cp /tmp/src.csv "$OUT/$tag.csv"
    python3 bench/ncu_opcodes.py /tmp/src.csv
    python3 bench/ncu_memory.py /tmp/src.csv
    "$NCU" -i "/tmp/$tag.ncu-rep" --page details --section MemoryWorkloadAnalysis_Tables 2>&1 |
      grep -E "Shared|Bank|Wavefront|Global|L1" | head -30; } 2>&1 | tee -a "$OUT/profile.log"
 done
done
