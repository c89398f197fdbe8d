#!/usr/bin/env bash
# Run on the GPU machine from the repo root after bench/build_blackwell_twins.sh:
# the H100 twins of the sm_100a prefill schedules (same TMA rings, warp
# roles, staging and descriptors' layouts; wgmma instead of tcgen05) against
# the golden recurrence on the CPU test cases, compute-sanitizer on each,
# the SASS of the sm_100a kernels, and the twins timed beside FLA.
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
GOLDEN_LOG=$OUT/twins_golden.log
source bench/gpu_setup.sh
for m in .kiln-out/twins/sm_90a/*.json; do
  for t in 1 63 64 65 1000; do check "$m" --dims H=2,HV=2 --seqlens $t --seed $t; done
  check "$m" --dims H=4,HV=8 --seqlens 1,64,200,7
  check "$m" --dims H=4,HV=8 --seqlens 1,64,200,7 --no-initial-state
  check "$m" --dims H=16,HV=32 --seqlens 300,5,0,77 --saturate-gates
done
for m in .kiln-out/twins/small/*.json; do
  check "$m" --dims H=4,HV=8 --seqlens 5,0,130,64
done
echo "twin golden checks: $(grep -c '^PASS' "$GOLDEN_LOG") passed, $fails failed"
for m in .kiln-out/twins/sm_90a/*.json; do
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 "$RUN" run "$m" --dims H=4,HV=8 --seqlens 1,64,70,7 >/tmp/sanitizer.log 2>&1
    rc=$?
    { echo "== $tool $(basename "$m") rc $rc"; cat /tmp/sanitizer.log; } >>"$OUT/twins-sanitizers.log"
    echo "$tool $(basename "$m" .json) rc $rc"
  done
done
# The B200 kernels' SASS, by this machine's cuobjdump: tensor-core MMAs,
# tensor-memory loads, TMA, allocation; local memory counted.
for c in .kiln-out/twins/sm_100a/*.cubin; do
  cuobjdump --dump-sass "$c" >/tmp/sass.txt 2>&1
  echo "$(basename "$c"): UTCHMMA $(grep -c UTCHMMA /tmp/sass.txt) LDTM $(grep -c LDTM /tmp/sass.txt)" \
    "UTMALDG $(grep -c UTMALDG /tmp/sass.txt) UTCATOMSWS $(grep -c UTCATOMSWS /tmp/sass.txt)" \
    "STL/LDL $(grep -c -E 'STL|LDL' /tmp/sass.txt)"
done | tee "$OUT/twins_sass.log"
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/site:bench:python
PYTHONUNBUFFERED=1 FLA_PATH=.peer python3 bench/prefill_bench.py .kiln-out/twins/sm_90a/*.json --per-kernel \
  --json "$OUT/twins.json" 2>&1 | tee "$OUT/twins_bench.log"
