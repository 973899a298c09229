#!/usr/bin/env bash
# Builds weft for AArch64 and runs its tests. On an amd64 host: installs the cross compiler,
# qemu-user and Debian's arm64 libraries, cross-builds into ${WEFT_AARCH64_BUILD_DIR:-build-aarch64}
# (cmake/toolchains/aarch64-linux-gnu.cmake) and runs ctest, every test program under qemu-aarch64.
# On an arm64 host: the same native build and tests, without emulator. One line per phase.
#   WEFT_AARCH64_CTEST_ARGS  extra ctest arguments, e.g. "-R Brgemm"
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${WEFT_AARCH64_BUILD_DIR:-build-aarch64}
if [[ $(dpkg --print-architecture) == arm64 ]]; then
  echo "test-aarch64: native arm64 host"
  bash scripts/install-deps.sh
  toolchain=()
else
  echo "test-aarch64: installing the cross compiler, qemu-user and arm64 libraries"
  bash scripts/install-deps.sh aarch64
  toolchain=(-DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake)
fi
# Benchmarks are built (they must compile for AArch64) but not run: tests only, no timing checks.
WEFT_BUILD_DIR=$build_dir WEFT_BUILD_TARGETS= bash scripts/build.sh "${toolchain[@]}"
# qemu runs one test program per core; two threads at most per program (small shapes, no timing).
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
read -r -a extra <<< "${WEFT_AARCH64_CTEST_ARGS:-}"
echo "test-aarch64: running the tests (ctest, $(nproc) at a time$([[ ${#toolchain[@]} -gt 0 ]] && echo ', under qemu-aarch64'))"
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" --timeout 900 "${extra[@]}"
