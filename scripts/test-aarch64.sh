#!/usr/bin/env bash
# Builds weft for AArch64 and runs its tests. On an amd64 host: installs the cross compiler,
# qemu-user and Debian's arm64 libraries, cross-builds into ${WEFT_AARCH64_BUILD_DIR:-build-aarch64}
# (cmake/toolchains/aarch64-linux-gnu.cmake) and runs ctest, every test program under qemu-aarch64.
# On an arm64 host: the same native build and tests, without emulator. One line per phase.
#   WEFT_AARCH64_CTEST_ARGS  extra ctest arguments, e.g. "-R Brgemm"
#   WEFT_AARCH64_CPUS        qemu CPUs for the second pass over the kernel suites (see below)
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

# Under qemu, again on the CPUs for which weft chooses other kernels: the main run above is qemu's
# default CPU ("max": SVE at 512 bits with BF16, so sve512_bf16); then SVE at 256 bits with BF16
# (sve256_bf16, a Graviton 3), SVE at 128 bits with BF16 (neon_bf16, and sve128_bf16 in the tests
# that run every ISA the CPU has: Graviton 4, Grace), A64FX (sve512 without BF16) and Neoverse N1
# (neon, neither SVE nor BF16). The suites whose kernels depend on the CPU: the TPP families through
# the library (each on every ISA the CPU runs), the ISA choice, and the GEMM sample in fp32 and bf16.
# (The emitters' own tests do not: they run the kernel they name, the SVE ones at each length.)
# WEFT_AARCH64_CPUS replaces the list (empty: none).
if [[ ${#toolchain[@]} -gt 0 ]]; then
  read -r -a cpus <<< "${WEFT_AARCH64_CPUS-max,sve-default-vector-length=32 max,sve-default-vector-length=16 a64fx neoverse-n1}"
  kernels='^(Cpu|Brgemm|Unary|Binary|EltwiseTypes|NanRule|TppFunctor|GemmSampleCli|NeonBrgemmMmla\.EveryBf16Isa)'
  for cpu in "${cpus[@]}"; do
    echo "test-aarch64: the kernel suites under qemu -cpu $cpu"
    log="$build_dir/ctest-cpu-${cpu//[,=]/_}.log"
    # On A64FX glibc copies memory with SVE, which qemu runs slowly: the random-shape sweep (its
    # kernels are those of the main run at 512 bits) would take minutes there.
    skip=()
    [[ $cpu == a64fx* ]] && skip=(-E 'Brgemm\.RandomShapesAgainstReference')
    if ! QEMU_CPU=$cpu ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" --timeout 900 -R "$kernels" \
        "${skip[@]}" "${extra[@]}" >"$log" 2>&1; then
      cat "$log"
      echo "test-aarch64: FAILED under qemu -cpu $cpu (whole output: $log)" >&2
      exit 1
    fi
    grep -E 'tests passed|Total Test time' "$log"
  done
fi
