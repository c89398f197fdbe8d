#!/usr/bin/env bash
# Run on the build machine after ../shared/peers/flashinfer/prepare.sh .peers/fi
# (which downloads the pinned wheels): packs FlashInfer's GDN decode and MTP
# modules, which its slim SM90 prefill tree leaves out, from the same wheel
# into .peers/fi/fi_decode/flashinfer_decode.tar (git-ignored; carried, never
# committed). On the GPU machine, after device_setup.sh b:
#   tar -xf .peers/fi/fi_decode/flashinfer_decode.tar -C /tmp/fisite --skip-old-files
# and bench/flashinfer_peer.py's load_decode() imports them.
set -euo pipefail
WHEEL=$(ls .peers/fi/.download/flashinfer_python-0.7.2.post1-*.whl)
OUTDIR=.peers/fi/fi_decode
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FILES="flashinfer/gdn_decode.py flashinfer/gdn_kernels/gdn_decode_pretranspose.py
  flashinfer/gdn_kernels/gdn_decode_nontranspose.py flashinfer/gdn_kernels/gdn_decode_mtp.py
  flashinfer/gdn_kernels/gdn_decode_bf16_state.py"
unzip -q "$WHEEL" $FILES -d "$TMP"
mkdir -p "$OUTDIR"
# Same wheel, same bytes: sorted names, fixed owner and times.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$TMP" -cf "$OUTDIR/flashinfer_decode.tar" $FILES
echo "carry .peers/fi/fi_decode ($(du -k "$OUTDIR/flashinfer_decode.tar" | cut -f1) KiB)"
