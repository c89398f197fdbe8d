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
