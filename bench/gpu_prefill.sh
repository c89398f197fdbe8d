#!/usr/bin/env bash
# Run on the GPU machine from the repo root: builds kiln-gpu, checks every
# compiled prefill kernel against the golden recurrence on the CPU test cases
# (lengths around the chunk size, varlen, with and without initial state,
# GVA and plain heads, K=64/V=32), runs compute-sanitizer on some, checks the
# plain bf16 / tf32 products of tests/gpu/matmul.tile against torch, then
# times ours beside FLA's chunk_gated_delta_rule (bench/prefill_bench.py),
# each kernel of an op also alone.
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
GOLDEN_LOG=$OUT/prefill_golden.log
source bench/gpu_setup.sh
for m in .kiln-out/prefill/*.json; do
  for t in 1 63 64 65 1000; do check "$m" --dims H=2,HV=2 --seqlens $t --seed $t; done
  check "$m" --dims H=4,HV=8 --seqlens 1,64,200,7
  check "$m" --dims H=4,HV=8 --seqlens 1,64,200,7 --no-initial-state
  check "$m" --dims H=16,HV=32 --seqlens 300,5,0,77 --saturate-gates
  # Slowly decaying heads: a state carried wrong (prefill_split_sm_90a_cp's
  # segment starts) shows only where the start is not forgotten.
  check "$m" --dims H=4,HV=8 --seqlens 3000 --slow-gates
  check "$m" --dims H=4,HV=8 --seqlens 700,1 --slow-gates --no-initial-state
  # The cut ops: one long sequence of few heads in 16 segments (_tr) or 8,
  # and two sequences cut side by side.
  if grep -qE '"entry": "gdn_prefill_split_(cp|tr)"' "$m"; then
    check "$m" --dims H=2,HV=8 --seqlens 20000 --slow-gates --seed 7
    check "$m" --dims H=2,HV=8 --seqlens 5000,7001 --no-initial-state --seed 9
  fi
done
for m in .kiln-out/prefill_small/*.json; do
  check "$m" --dims H=4,HV=8 --seqlens 5,0,130,64
done
echo "prefill golden checks: $(grep -c '^PASS' "$OUT/prefill_golden.log") passed, $fails failed"
# SANITIZE: the builds to run compute-sanitizer on (default: seven of them).
for s in ${SANITIZE-sm_90a_simt sm_90a_wgmma sm_90a_wgmma_tma split_sm_90a_wgmma split_sm_90a_wgmma_tma split_sm_90a_mma split_sm_90a_epilogue}; do
  m=.kiln-out/prefill/prefill_$s.json
  for tool in memcheck racecheck synccheck; do
    # One log for all of them: the device tool brings back a handful of files.
    compute-sanitizer --tool $tool --error-exitcode 9 "$RUN" run "$m" --dims H=4,HV=8 --seqlens 1,64,70,7 >/tmp/sanitizer.log 2>&1
    rc=$?
    { echo "== $tool prefill_$s rc $rc"; cat /tmp/sanitizer.log; } >>"$OUT/prefill-sanitizers.log"
    echo "$tool prefill_$s rc $rc ($(grep -E -c 'ERROR SUMMARY: 0|0 hazards|RACECHECK SUMMARY: 0' /tmp/sanitizer.log) clean summaries)"
  done
done
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/site:bench:python
python3 bench/gpu_matmul_check.py || echo "FAIL: matmul check"
# Ops whose manifests launch a kernel beside another (`overlap`): the same
# bytes as one after the other, run after run (bench/prefill_overlap_check.py).
overlapping=$(grep -l '"overlap": true' .kiln-out/prefill/*.json)
[ -z "$overlapping" ] || FLA_PATH=.peer python3 bench/prefill_overlap_check.py $overlapping --runs 20 \
  2>&1 | tee "$OUT/prefill_overlap_check.log" | grep -E "^FAIL|^overlap check"
# BENCH: the manifests to time (default: every prefill build).
PYTHONUNBUFFERED=1 FLA_PATH=.peer python3 bench/prefill_bench.py ${BENCH:-.kiln-out/prefill/*.json} --per-kernel \
  --json "$OUT/prefill.json" 2>&1 | tee "$OUT/prefill_bench.log"
