#!/usr/bin/env bash
# Builds the example against Kiln's generated CUDA source. On the build host
# (with kiln): `examples/gdn_decode/build.sh --generate` writes
# .kiln-out/example/gdn_decode.{cu,h,json}. Where nvcc and a GPU are (no kiln
# needed): `examples/gdn_decode/build.sh && .kiln-out/example/gdn_decode`.
set -euo pipefail
GEN=.kiln-out/example
if [ "${1:-}" = --generate ]; then
  mkdir -p "$GEN"
  ${KILN:-build/bin/kiln} compile ops/gdn/decode.tile -s ops/gdn/schedules/decode_sm_90a_tma.yaml \
    --emit cuda -o "$GEN/gdn_decode.cu"
  exit 0
fi
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Werror all-warnings -I"$GEN" \
  examples/gdn_decode/main.cu "$GEN/gdn_decode.cu" -lcuda -o "$GEN/gdn_decode"
