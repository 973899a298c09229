#!/usr/bin/env bash
# Installs what is missing, builds everything and runs all tests (ctest). One line per phase.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "test: installing missing Debian packages"
bash scripts/install-deps.sh
WEFT_BUILD_TARGETS= bash scripts/build.sh
build_dir=${WEFT_BUILD_DIR:-build}
echo "test: running the tests (ctest, $(nproc) at a time)"
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" --timeout 600
