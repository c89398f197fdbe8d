#!/usr/bin/env bash
# Run on the build machine (LLVM 22 + CUDA toolkit): every sm_90a schedule
# of the bundled ops and of tests/gpu built twice from the same plan, through
# PTX (ptxas) into .kiln-out/cuda/ptx and through CUDA C++ (nvcc) into
# .kiln-out/cuda/nvcc, with the kernels' resource reports in
# .kiln-out/cuda/resources.txt. Then carry .kiln-out to the GPU machine and
# run bench/gpu_cuda.sh there.
set -euo pipefail
KILN=${KILN:-build/bin/kiln}
OUTDIR=.kiln-out/cuda
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR/ptx" "$OUTDIR/nvcc"
source_of() {
  case $1 in
  ops/gdn/*/decode_*) echo ops/gdn/decode.tile ;;
  ops/gdn/*/mtp_*) echo ops/gdn/decode_mtp.tile ;;
  ops/gdn/*/prefill*) echo ops/gdn/prefill.tile ;;
  tests/gpu/*) echo tests/gpu/matmul.tile ;;
  *) echo "ops/$(basename "$(dirname "$(dirname "$1")")")/$(basename "$(dirname "$(dirname "$1")")").tile" ;;
  esac
}
for s in ops/*/schedules/*sm_90a*.yaml tests/gpu/matmul_*sm_90a*.yaml; do
  name=$(basename "$s" .yaml)
  tile=$(source_of "$s")
  "$KILN" compile "$tile" -s "$s" --emit cubin -o "$OUTDIR/ptx/$name.cubin" 2>&1 |
    sed "s/^/ptx  /" >>"$OUTDIR/resources.txt"
  "$KILN" compile "$tile" -s "$s" --emit cubin --via cuda -o "$OUTDIR/nvcc/$name-cuda.cubin" 2>&1 |
    sed "s/^/cuda /" >>"$OUTDIR/resources.txt"
done
cat "$OUTDIR/resources.txt"
