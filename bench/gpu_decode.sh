#!/usr/bin/env bash
# Run on the GPU machine from the repo root: builds kiln-gpu (no LLVM needed),
# checks every compiled decode kernel against the golden reference on the CPU
# test shapes and the bench shapes, runs compute-sanitizer on one, then times
# ours beside FLA. Kernels come from `kiln compile --emit cubin` on a build
# machine, under KERNELS (default .kiln-out/var) and SMALL (K=64/V=32 etc.).
set -uo pipefail
OUT=${OUT:-/tmp/kiln-out}
KERNELS=${KERNELS:-.kiln-out/decode}
SMALL=${SMALL:-.kiln-out/small}
GOLDEN_LOG=$OUT/golden.log
source bench/gpu_setup.sh
for m in "$KERNELS"/*.json; do
  for d in B=1,H=4,HV=8 B=3,H=16,HV=32 B=7,H=2,HV=2 B=7,H=4,HV=8; do check "$m" --dims $d --skip 0.3 --seed 7; done
  check "$m" --dims B=7,H=4,HV=8 --saturate-gates
  for hv in 4,8 16,32; do for b in 1 8 64 128 256 512; do
    check "$m" --dims B=$b,H=${hv%,*},HV=${hv#*,} --seed $b; done; done
done
for m in "$SMALL"/*.json; do
  case $m in */f8_cast*) continue ;; esac # not an op with a golden: gpu_f8_check.py below
  for d in B=1,H=4,HV=8 B=3,H=16,HV=32 B=7,H=2,HV=2; do check "$m" --dims $d --skip 0.3; done
done
MTP=${MTP:-.kiln-out/mtp}
for m in "$MTP"/*.json; do
  [ -f "$m" ] || continue
  for d in B=1,T=1,H=4,HV=8 B=7,T=4,H=2,HV=8 B=3,T=8,H=16,HV=32; do check "$m" --dims $d --skip 0.3 --seed 7; done
  check "$m" --dims B=5,T=3,H=4,HV=8 --saturate-gates
  check "$m" --dims B=64,T=4,H=16,HV=32 --seed 64
done
echo "golden checks: $(grep -c '^PASS' "$OUT/golden.log") passed, $fails failed"
ls "$SMALL"/f8_cast*.json >/dev/null 2>&1 && PYTHONPATH=python python3 bench/gpu_f8_check.py "$SMALL"/f8_cast*.json
# One schedule of each kind: plain vectorised loads, and the TMA ring with
# warp roles (synccheck too: mbarriers and named barriers).
for m in "$KERNELS/sm_90a_bv8.json" "$KERNELS/sm_90a_tma.json" "$KERNELS/sm_90a_tma_ring.json" \
         "$KERNELS/sm_90a_bf16.json" "$KERNELS/sm_90a_f8.json" "$MTP/mtp_states_sm_90a_bf16.json"; do
  [ -f "$m" ] || continue; k=$(basename "$m" .json)
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 "$RUN" run "$m" --dims B=7,H=4,HV=8 --skip 0.3 >"$OUT/$tool-$k.log" 2>&1
    echo "$tool $k rc $? ($(grep -E -c 'ERROR SUMMARY: 0|0 hazards|RACECHECK SUMMARY: 0' "$OUT/$tool-$k.log") clean summaries)"
  done
done
# sm_100a: what the machine code holds (never run: no B200).
for c in .kiln-out/sm100/*.cubin; do
  [ -f "$c" ] || continue
  cuobjdump --dump-sass "$c" >"$OUT/$(basename "$c" .cubin).sass" 2>&1
  s="$OUT/$(basename "$c" .cubin).sass"
  echo "sass $(basename "$c"): UTMALDG $(grep -c UTMALDG "$s") SYNCS $(grep -c SYNCS "$s") USETMAXREG $(grep -c USETMAXREG "$s") LDG.E.128 $(grep -c 'LDG.E.128' "$s") LDS.128 $(grep -c 'LDS.128' "$s") STG.E.128 $(grep -c 'STG.E.128' "$s") LDL/STL $(grep -c -E '\b(LDL|STL)\b' "$s")"
done
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/site:bench:python
PYTHONUNBUFFERED=1 FLA_PATH=.peer python3 bench/decode_bench.py "$KERNELS"/*.json --json "$OUT/decode.json" ${BATCHES:+--batches $BATCHES} 2>&1 | tee "$OUT/bench.log"
ls "$MTP"/*.json >/dev/null 2>&1 &&
  PYTHONUNBUFFERED=1 FLA_PATH=.peer python3 bench/mtp_bench.py "$MTP"/*.json --decode "$KERNELS"/sm_90a.json "$KERNELS"/sm_90a_bf16.json --json "$OUT/mtp.json" 2>&1 | tee -a "$OUT/bench.log"
