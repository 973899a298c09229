#!/usr/bin/env bash
# Tunes the forward GEMM sample for a list of shapes, in the spirit of PARLOOPER's
# gemm_loop_tuner.sh, but in-process: one weft-tune run per shape searches loop strings, blockings,
# tile sizes and batch-reduce factors, and stores each winner in the tuning database, where
# `weft-gemm auto ...` finds it.
#
#   scripts/tune_gemm_shapes.sh                          # M, N, K in {512, 1024, 2048}, all 27
#   SIZES="1024 2048" THREADS=2 BUDGET=60 scripts/tune_gemm_shapes.sh
#   SHAPES="4096x1024x1024 1024x4096x1024" scripts/tune_gemm_shapes.sh   # explicit MxNxK list
#   EXTRA="--dtype bf16" scripts/tune_gemm_shapes.sh                   # the bf16 records (USE_BF16=1 auto)
#
# Environment: SIZES (each of M, N, K ranges over it), SHAPES (overrides SIZES), THREADS
# (default: all cores), BUDGET (seconds per shape, default 60), WEFT_TUNE (the tool; default
# ${WEFT_BUILD_DIR:-build}/samples/tuning/weft-tune), WEFT_TUNING_DB (the database), PLOTS (a
# directory for one SVG per shape), EXTRA (more weft-tune options, e.g. "--bn 32,64").
set -euo pipefail
cd "$(dirname "$0")/.."

tool=${WEFT_TUNE:-${WEFT_BUILD_DIR:-build}/samples/tuning/weft-tune}
if [[ ! -x "$tool" ]]; then
  echo "tune_gemm_shapes: $tool not found; build the weft-tune target or set WEFT_TUNE" >&2
  exit 2
fi
threads=${THREADS:-$(nproc)}
budget=${BUDGET:-60}
export OMP_PROC_BIND=${OMP_PROC_BIND:-close} OMP_PLACES=${OMP_PLACES:-cores}

shapes=()
if [[ -n "${SHAPES:-}" ]]; then
  read -r -a shapes <<< "$SHAPES"
else
  read -r -a sizes <<< "${SIZES:-512 1024 2048}"
  for m in "${sizes[@]}"; do
    for n in "${sizes[@]}"; do
      for k in "${sizes[@]}"; do shapes+=("${m}x${n}x${k}"); done
    done
  done
fi

summary=()
for shape in "${shapes[@]}"; do
  IFS=x read -r m n k <<< "$shape"
  if [[ -z "$m" || -z "$n" || -z "$k" ]]; then
    echo "tune_gemm_shapes: shape '$shape' is not MxNxK" >&2
    exit 2
  fi
  plot=()
  if [[ -n "${PLOTS:-}" ]]; then
    mkdir -p "$PLOTS"
    plot=(--plot "$PLOTS/gemm_${m}_${n}_${k}_t${threads}.svg")
  fi
  echo "=== ${m} x ${n} x ${k}, ${threads} threads, budget ${budget} s"
  # shellcheck disable=SC2086 # EXTRA is a list of options
  out=$("$tool" gemm --M "$m" --N "$n" --K "$k" --threads "$threads" --budget "$budget" "${plot[@]}" ${EXTRA:-})
  echo "$out"
  summary+=("$(printf '%-18s %s' "${m}x${n}x${k}" "$(grep '^best:' <<< "$out" | cut -c7-)")")
done

echo
echo "=== summary (also in the tuning database: $tool show)"
printf '%s\n' "${summary[@]}"
