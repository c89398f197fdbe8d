#!/usr/bin/env bash
# Installs what Kiln needs on Debian 12 (as root), configures and builds it.
# Usage: bash tools/setup.sh            (set up + build)
#        bash tools/setup.sh --check    (then run the main job: kiln check ops)
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs="llvm-22-dev libmlir-22-dev mlir-22-tools libyaml-cpp-dev libfmt-dev catch2 ninja-build cmake g++"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build
if [ "${1:-}" = "--check" ]; then
  ./build/bin/kiln check ops
fi
