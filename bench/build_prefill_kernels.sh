#!/usr/bin/env bash
# Run on the build machine: compiles every sm_90a prefill schedule to a cubin +
# manifest under .kiln-out/prefill (and a K=64 / V=32 variant under
# .kiln-out/prefill_small). Then carry .kiln-out and run bench/gpu_prefill.sh.
set -euo pipefail
KILN=${KILN:-build/bin/kiln}
rm -rf .kiln-out/prefill .kiln-out/prefill_small .kiln-out/matmul
mkdir -p .kiln-out/prefill .kiln-out/prefill_small .kiln-out/matmul
for s in ops/gdn/schedules/prefill_sm_90a*.yaml ops/gdn/schedules/prefill_split_sm_90a*.yaml; do
  name=$(basename "$s" .yaml)
  "$KILN" compile ops/gdn/prefill.tile --schedule "$s" --emit cubin -o ".kiln-out/prefill/$name.cubin"
done
# (Not the split schedules of 64 state rows a CTA, wgmma_tma and bv64_regs:
# V = 32 has no 64 rows to give.)
for s in sm_90a_simt sm_90a_wgmma sm_90a_wgmma_tma split_sm_90a_simt split_sm_90a_wgmma \
  split_sm_90a_mma split_sm_90a_epilogue; do
  "$KILN" compile ops/gdn/prefill.tile --schedule ops/gdn/schedules/prefill_$s.yaml -D K=64 -D V=32 \
    --emit cubin -o .kiln-out/prefill_small/${s}_k64v32.cubin
done
# Plain products for bench/gpu_matmul_check.py (the tensor-core lowering on
# bf16 operands and on tf32 operands, the bf16 product issued by an MMA
# warpgroup, warp-level mma.sync on bf16 and on transposed f16, a bf16
# product stored transposed, two products reading one ring stage, on one
# warp a product of a product's result by itself, from its registers, and a
# running sum in the accumulators updated by a scaled f16 product).
for s in bf16_sm_90a tf32_sm_90a bf16_sm_90a_mma bf16_sm_90a_sync f16_sm_90a_sync bf16_ct_sm_90a \
  bf16_two_sm_90a bf16_square_sm_90a_sync scaled_update_sm_90a; do
  "$KILN" compile tests/gpu/matmul.tile --schedule tests/gpu/matmul_$s.yaml \
    --emit cubin -o .kiln-out/matmul/matmul_${s/_sm_90a/}.cubin
done
# The bf16 product's B staged N-major in each form: BN columns a CTA, so an
# instruction's N is 8 or 24 (plain core matrices), 16 (32-byte swizzle),
# 32 (64-byte), 64 (128-byte, one block) and, on 64-row tiles, 128 split in
# two column parts of 64 (the second part's N blocks start K x 128 bytes on).
for v in "128 8" "128 24" "128 16" "128 32" "128 64" "64 128"; do
  set -- $v
  sed -e "s/^params: .*/params: {BM: $1, BN: $2}/" tests/gpu/matmul_bf16_sm_90a.yaml \
    > .kiln-out/matmul/bf16_bm$1_bn$2.yaml
  "$KILN" compile tests/gpu/matmul.tile --schedule .kiln-out/matmul/bf16_bm$1_bn$2.yaml \
    --emit cubin -o .kiln-out/matmul/matmul_bf16_bm$1_bn$2.cubin
done
