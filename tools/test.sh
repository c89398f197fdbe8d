#!/usr/bin/env bash
# Sets up (if needed), builds and runs every test: lit/FileCheck, Catch2 and
# the Python package's pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
ctest --test-dir build --output-on-failure
