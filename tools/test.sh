#!/usr/bin/env bash
# Sets up (if needed), builds and runs every test: lit/FileCheck, Catch2 and
# the Python package's pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
# lit, Catch2 and pytest side by side, one a core: the Catch2 numerics run
# on one thread for about as long as lit takes on all of them.
ctest --test-dir build --output-on-failure -j "$(nproc)"
