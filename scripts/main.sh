#!/usr/bin/env bash
# The main job: installs what is missing, builds the libraries and the forward GEMM sample (only
# what it needs: scripts/test.sh builds the rest), and runs the sample with a loop string, verified
# against a double-precision reference, printing GFLOPS. One line per phase.
#   WEFT_MAIN_ARGS  overrides the sample's arguments (see `weft-gemm` without arguments)
set -euo pipefail
cd "$(dirname "$0")/.."
echo "main: installing missing Debian packages"
bash scripts/install-deps.sh
WEFT_BUILD_TARGETS=weft-gemm bash scripts/build.sh
build_dir=${WEFT_BUILD_DIR:-build}
export OMP_PROC_BIND=${OMP_PROC_BIND:-close} OMP_PLACES=${OMP_PLACES:-cores}
# 1024^3 with 32 x 48 x 64 blocks; loops a = K, b = M, c = N blocks. "aBcb" with --m-blocks 8:
# K in 4 batch-reduce chunks outermost; groups of 8 M blocks shared among the threads; inside a
# group, all N blocks, then the group's M blocks (docs/gemm_sample.md).
read -r -a args <<< "${WEFT_MAIN_ARGS:-aBcb 1024 1024 1024 32 48 64 4 1 20 --m-blocks 8}"
echo "main: running weft-gemm ${args[*]}"
"$build_dir/samples/gemm/weft-gemm" "${args[@]}"
