#!/usr/bin/env bash
# Run on the build machine: compiles every sm_90a prefill schedule to a cubin +
# manifest under .kiln-out/prefill (and a K=64 / V=32 variant under
# .kiln-out/prefill_small). Then carry .kiln-out and run bench/gpu_prefill.sh.
set -euo pipefail
KILN=${KILN:-build/bin/kiln}
rm -rf .kiln-out/prefill .kiln-out/prefill_small
mkdir -p .kiln-out/prefill .kiln-out/prefill_small
for s in ops/gdn/schedules/prefill_sm_90a*.yaml; do
  name=$(basename "$s" .yaml)
  "$KILN" compile ops/gdn/prefill.tile --schedule "$s" --emit cubin -o ".kiln-out/prefill/$name.cubin"
done
for s in simt wgmma wgmma_tma; do
  "$KILN" compile ops/gdn/prefill.tile --schedule ops/gdn/schedules/prefill_sm_90a_$s.yaml -D K=64 -D V=32 \
    --emit cubin -o .kiln-out/prefill_small/${s}_k64v32.cubin
done
