#!/usr/bin/env bash
# Run on the GPU machine from the repo root, after bench/build_cuda_kernels.sh
# on the build host: the CUDA C++ builds of every sm_90a schedule beside
# their PTX builds. Golden checks of the GDN builds (kiln-gpu: decode,
# multi-token decode and prefill shapes, slow and saturated gates), compute-sanitizer on a CUDA
# build of each kind (plain loads, TMA ring with roles, wgmma prefill, the
# overlapped op), then bench/cuda_vs_ptx.py: outputs of the two builds
# compared bit for bit and timed side by side.
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
GOLDEN_LOG=$OUT/cuda_golden.log
DIR=.kiln-out/cuda
source bench/gpu_setup.sh
CHECKS=$OUT/cuda_checks.txt
: >"$CHECKS"
check() { echo "$*" >>"$CHECKS"; } # queued, then run side by side
for m in "$DIR"/ptx/decode_*.json "$DIR"/nvcc/decode_*.json; do
  for d in B=1,H=4,HV=8 B=3,H=16,HV=32 B=7,H=2,HV=2; do check "$m" --dims $d --skip 0.3 --seed 7; done
  check "$m" --dims B=7,H=4,HV=8 --saturate-gates
  check "$m" --dims B=256,H=16,HV=32 --seed 3
done
for m in "$DIR"/ptx/mtp_*.json "$DIR"/nvcc/mtp_*.json; do
  for d in B=1,T=1,H=4,HV=8 B=7,T=4,H=2,HV=8 B=3,T=8,H=16,HV=32; do check "$m" --dims $d --skip 0.3 --seed 7; done
  check "$m" --dims B=5,T=3,H=4,HV=8 --saturate-gates
  check "$m" --dims B=64,T=4,H=16,HV=32 --seed 64
done
for m in "$DIR"/ptx/prefill*.json "$DIR"/nvcc/prefill*.json; do
  for t in 1 65 1000; do check "$m" --dims H=2,HV=2 --seqlens $t --seed $t; done
  check "$m" --dims H=4,HV=8 --seqlens 1,64,200,7 --no-initial-state
  check "$m" --dims H=16,HV=32 --seqlens 300,5,0,77 --saturate-gates
  check "$m" --dims H=4,HV=8 --seqlens 3000 --slow-gates
done
run_checks "$CHECKS"
echo "golden checks: $(grep -c '^PASS' "$GOLDEN_LOG") passed, $fails failed"
for s in decode_sm_90a_bv8 decode_sm_90a_tma_ring prefill_split_sm_90a_wgmma_tma prefill_split_sm_90a_overlap; do
  m=$DIR/nvcc/$s-cuda.json
  case $s in decode*) dims="--dims B=7,H=4,HV=8 --skip 0.3" ;; *) dims="--dims H=4,HV=8 --seqlens 1,64,70,7" ;; esac
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 "$RUN" run "$m" $dims >/tmp/sanitizer.log 2>&1
    rc=$?
    { echo "== $tool $s rc $rc"; cat /tmp/sanitizer.log; } >>"$OUT/cuda-sanitizers.log"
    echo "$tool $s (cuda) rc $rc ($(grep -E -c 'ERROR SUMMARY: 0|0 hazards|RACECHECK SUMMARY: 0' /tmp/sanitizer.log) clean summaries)"
  done
done
export PYTHONPATH=bench:python PYTHONUNBUFFERED=1
python3 bench/cuda_vs_ptx.py --dir "$DIR" --json "$OUT/cuda_vs_ptx.json" 2>&1 | tee "$OUT/cuda_vs_ptx.log"
# Both builds' masked loads along a dynamic contiguous dim where it is not a
# multiple of the vector (the element branch), against float64.
python3 bench/gpu_ragged_check.py --dir "$DIR" 2>&1 | tee "$OUT/ragged.log" | tail -1
