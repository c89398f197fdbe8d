#!/usr/bin/env bash
# Sets up (if needed), builds and runs every test: lit/FileCheck and Catch2.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
ctest --test-dir build --output-on-failure
