#!/usr/bin/env bash
# PARLOOPER's loop-tuning workflow (spec_loop_generator, then gemm_loop_tuner.sh or
# conv_fwd_loop_tuner.py) for any weft sample: the loop strings of a spec are written to a file,
# the sample runs once per string, and the ranking, its plot and the runs' log are kept together.
# weft-tune does the work (its strings and measure verbs); this script chains them, puts the
# default string first, and pins the runs.
#
#   SPEC=a_0_K,b_1_M,c_1_N FIRST=aBC THREADS=1 PIN=1 \
#     scripts/tune_loop_strings.sh build/samples/gemm/weft-gemm {} 1024 1024 1024 32 32 32
#   SPEC='a_0_N,b_0_K,c_0_M,d_1_M,e_0_N,f_0_K,g_0_K' STRINGS_OPTIONS=--no-grids \
#     scripts/tune_loop_strings.sh build/samples/conv/weft-conv-fwd {} 2 56 56 64 64 3 3 1 1 1 1 32 32
#
# The command is the sample's, with {} where the loop string goes. Environment: SPEC (required;
# several separated by ';'), THREADS (the team: weft's rules for the strings, and OMP_NUM_THREADS
# of the runs; default 1), FIRST (a string measured first, the "vs first" baseline; default none),
# PIN (a CPU list for taskset, e.g. 1; default none), REPEAT (runs per string, default 1),
# STRINGS_OPTIONS (more `weft-tune strings` options, e.g. "--parlooper" or "--loop-ends 32,32,32"),
# OUT (the results directory; default tune_loop_strings_<date>), WEFT_TUNE (the tool; default
# ${WEFT_BUILD_DIR:-build}/samples/tuning/weft-tune).
set -euo pipefail

tool=${WEFT_TUNE:-${WEFT_BUILD_DIR:-build}/samples/tuning/weft-tune}
if [[ ! -x "$tool" ]]; then
  echo "tune_loop_strings: $tool not found; build the weft-tune target or set WEFT_TUNE" >&2
  exit 2
fi
if [[ -z "${SPEC:-}" || $# -eq 0 ]]; then
  echo "usage: SPEC=<loop spec> [THREADS=T] [FIRST=S] [PIN=cpus] $0 SAMPLE ARGUMENTS... (with {} for the loop string)" >&2
  exit 2
fi
threads=${THREADS:-1}
out=${OUT:-tune_loop_strings_$(date +%Y%m%d_%H%M%S)}
mkdir -p "$out"

{
  [[ -n "${FIRST:-}" ]] && echo "$FIRST"
  # shellcheck disable=SC2086 # STRINGS_OPTIONS is a list of options
  "$tool" strings --spec "$SPEC" --threads "$threads" ${STRINGS_OPTIONS:-}
} > "$out/strings.txt"
echo "tune_loop_strings: $(grep -c . "$out/strings.txt") loop strings of $SPEC in $out/strings.txt" >&2

pin=()
[[ -n "${PIN:-}" ]] && pin=(taskset -c "$PIN")
export OMP_NUM_THREADS=$threads OMP_PROC_BIND=${OMP_PROC_BIND:-close} OMP_PLACES=${OMP_PLACES:-cores}
"${pin[@]}" "$tool" measure --strings "$out/strings.txt" --repeat "${REPEAT:-1}" --plot "$out/ranking.svg" \
  -- "$@" 2> "$out/runs.log" | tee "$out/ranking.txt"
