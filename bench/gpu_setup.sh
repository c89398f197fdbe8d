# Sourced by bench/gpu_*.sh on the GPU machine: names the GPU, builds kiln-gpu
# (no LLVM needed) into /tmp/kiln-rt, and defines `check MANIFEST ARGS...`,
# which runs one golden check, appends to $GOLDEN_LOG and counts failures.
OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv,noheader
cmake -S . -B /tmp/kiln-rt -G Ninja -DKILN_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  ninja -C /tmp/kiln-rt >/dev/null || { echo "kiln-gpu build failed"; exit 1; }
RUN=/tmp/kiln-rt/bin/kiln-gpu
fails=0
check() { "$RUN" run "$@" >>"$GOLDEN_LOG" 2>&1 || { fails=$((fails+1)); echo "FAIL: $*"; tail -4 "$GOLDEN_LOG"; }; }
# `run_checks LIST [JOBS]`: the golden checks LIST holds, one `MANIFEST
# ARGS...` a line, JOBS at a time (default 8; each is one small process, so
# they share the GPU), their logs appended to $GOLDEN_LOG in LIST's order.
run_checks() {
  local list=$1 jobs=${2:-8} dir f
  dir=$(mktemp -d)
  nl -ba -nrz -w6 "$list" | RUN=$RUN DIR=$dir xargs -P "$jobs" -L 1 bash -c \
    'n=$0; "$RUN" run "$@" >"$DIR/$n.log" 2>&1 || echo "FAIL: $*" >"$DIR/$n.fail"'
  cat "$dir"/*.log >>"$GOLDEN_LOG"
  for f in "$dir"/*.fail; do
    [ -f "$f" ] || continue
    fails=$((fails + 1)); cat "$f"; tail -4 "${f%.fail}.log"
  done
  rm -rf "$dir"
}
