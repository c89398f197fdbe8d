#!/usr/bin/env bash
# Installs what Kiln needs on Debian 12 (as root), configures and builds it.
# Usage: bash tools/setup.sh            (set up + build)
#        bash tools/setup.sh --check    (then run the main job: kiln check ops)
set -euo pipefail
cd "$(dirname "$0")/.."
# python3-*: the Python package's tests (pytest, numpy; pip installs it).
pkgs="llvm-22-dev libmlir-22-dev mlir-22-tools libyaml-cpp-dev libfmt-dev catch2 ninja-build cmake g++
      python3-numpy python3-pytest python3-pip"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
# cuobjdump + nvdisasm for the SASS tests of sm_100a kernels: NVIDIA's pip
# packages when the CUDA toolkit here lacks them (the tests are skipped
# only where neither can be had).
tools=build/cuda-tools/nvidia/cu13/bin
if ! { [ -x /usr/local/cuda/bin/cuobjdump ] && [ -x /usr/local/cuda/bin/nvdisasm ]; } &&
   ! { [ -x $tools/cuobjdump ] && [ -x $tools/nvdisasm ]; }; then
  PIP="python3 -m pip"
  if ! $PIP --version >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-pip || true
  fi
  $PIP install --quiet --disable-pip-version-check --break-system-packages --target build/cuda-tools \
    nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm 2>/dev/null ||
    $PIP install --quiet --disable-pip-version-check --target build/cuda-tools \
      nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm ||
    echo "setup: cuobjdump could not be installed; the SASS tests will be skipped"
fi
cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build
if [ "${1:-}" = "--check" ]; then
  ./build/bin/kiln check ops
fi
