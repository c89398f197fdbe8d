#!/usr/bin/env bash
# Sets up (if needed), builds and runs every test: lit/FileCheck, Catch2 and
# the Python package's pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
# lit, Catch2 and pytest side by side: the Catch2 numerics run on one
# thread, longer than lit takes on every core, so neither waits for the other.
ctest --test-dir build --output-on-failure -j "$(nproc)"
