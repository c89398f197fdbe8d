#!/usr/bin/env bash
# Run on the build machine (LLVM 22 + ptxas): compiles every sm_90a decode
# schedule that lowers to a cubin + manifest under .kiln-out/decode (the
# multi-token ones under .kiln-out/mtp), and the
# K=64 / V=32 and no-L2-norm variants (and the f8e4m3 conversion kernel of
# tests/gpu) under .kiln-out/small, and the sm_100a
# ones under .kiln-out/sm100 (for cuobjdump on the GPU machine). Then carry
# .kiln-out to the GPU machine and run bench/gpu_decode.sh there.
set -euo pipefail
KILN=${KILN:-build/bin/kiln}
rm -rf .kiln-out/decode .kiln-out/small .kiln-out/sm100 .kiln-out/mtp
mkdir -p .kiln-out/decode .kiln-out/small .kiln-out/sm100 .kiln-out/mtp
for s in ops/gdn/schedules/decode_sm_90a*.yaml; do
  name=$(basename "$s" .yaml); name=${name#decode_}
  "$KILN" compile ops/gdn/decode.tile --schedule "$s" --emit cubin -o ".kiln-out/decode/$name.cubin" ||
    echo "skipped $s (does not lower yet)"
done
for s in ops/gdn/schedules/mtp*_sm_90a*.yaml; do
  "$KILN" compile ops/gdn/decode_mtp.tile --schedule "$s" --emit cubin -o ".kiln-out/mtp/$(basename "$s" .yaml).cubin"
done
for s in ops/gdn/schedules/decode_sm_100a*.yaml; do
  "$KILN" compile ops/gdn/decode.tile --schedule "$s" --emit cubin -o ".kiln-out/sm100/$(basename "$s" .yaml | sed s/^decode_//).cubin"
done
for s in ops/gdn/schedules/mtp*_sm_100a*.yaml; do
  "$KILN" compile ops/gdn/decode_mtp.tile --schedule "$s" --emit cubin -o ".kiln-out/sm100/$(basename "$s" .yaml).cubin"
done
# f8e4m3 conversions, PTX and CUDA builds (bench/gpu_f8_check.py).
"$KILN" compile tests/gpu/f8_cast.tile --schedule tests/gpu/f8_cast_sm_90a.yaml --emit cubin -o .kiln-out/small/f8_cast.cubin
"$KILN" compile tests/gpu/f8_cast.tile --schedule tests/gpu/f8_cast_sm_90a.yaml --emit cubin --via cuda -o .kiln-out/small/f8_cast_cuda.cubin
"$KILN" compile ops/gdn/decode.tile --schedule ops/gdn/schedules/decode_sm_90a.yaml -D K=64 -D V=32 \
  --emit cubin -o .kiln-out/small/k64v32.cubin
"$KILN" compile ops/gdn/decode.tile --schedule ops/gdn/schedules/decode_sm_90a.yaml -D USE_QK_L2NORM=0 \
  --emit cubin -o .kiln-out/small/nol2.cubin
"$KILN" compile ops/gdn/decode.tile --schedule ops/gdn/schedules/decode_sm_90a_tma.yaml -D K=64 -D V=32 \
  --emit cubin -o .kiln-out/small/tma_k64v32.cubin
