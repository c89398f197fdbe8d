#!/usr/bin/env bash
# Run on the build machine: compiles every sm_100a prefill schedule twice,
# for sm_100a (the B200 kernels: SASS is read on the GPU machine) and as its
# H100 twin (`--retarget sm_90a`: the same tiles, roles and TMA rings, the
# products on wgmma), under .kiln-out/twins, with a K=64 / V=32 variant of
# each twin. Then carry .kiln-out and run bench/gpu_blackwell_twins.sh.
set -euo pipefail
KILN=${KILN:-build/bin/kiln}
rm -rf .kiln-out/twins
mkdir -p .kiln-out/twins/sm_100a .kiln-out/twins/sm_90a .kiln-out/twins/small
# A one-warp MMA role has no wgmma twin (a warpgroup issues wgmma): its
# H100 counterpart is a schedule of its own, built by build_prefill_kernels.
for s in ops/gdn/schedules/prefill_*sm_100a*.yaml; do
  name=$(basename "$s" .yaml)
  if [[ $name == *_mma || $name == *_epilogue || $name == *_tmem ]]; then
    "$KILN" compile ops/gdn/prefill.tile --schedule "$s" --emit cubin -o ".kiln-out/twins/sm_100a/$name.cubin"
    continue
  fi
  "$KILN" compile ops/gdn/prefill.tile --schedule "$s" --emit cubin -o ".kiln-out/twins/sm_100a/$name.cubin"
  "$KILN" compile ops/gdn/prefill.tile --schedule "$s" --retarget sm_90a --emit cubin \
    -o ".kiln-out/twins/sm_90a/${name}_twin.cubin"
  "$KILN" compile ops/gdn/prefill.tile --schedule "$s" --retarget sm_90a -D K=64 -D V=32 --emit cubin \
    -o ".kiln-out/twins/small/${name}_twin_k64v32.cubin"
done
