#!/usr/bin/env bash
# Tunes the convolution samples on the 23 distinct ResNet-50 v1.5 layers (samples/conv/resnet50_layers.txt),
# batch N = threads: one `weft-tune conv` run per layer and pass stores its winner in the tuning
# database, where `weft-conv-<pass> auto ...`, `AUTO=1 scripts/conv_resnet50.sh` and weft-bench-conv's
# weft_auto column find it.
#
#   scripts/tune_conv_resnet50.sh                        # fwd, bwd and upd on 1 thread (pinned to CPU 1)
#   THREADS=2 PASSES=bwd BUDGET=60 scripts/tune_conv_resnet50.sh
#   LAYERS="03 17" scripts/tune_conv_resnet50.sh          # some layers only (ids of the list)
#
# Environment: PASSES (default "fwd bwd upd"), THREADS (default 1), BUDGET (measuring seconds per
# layer and pass, default 30; the search stops earlier when it stops gaining), PIN (a CPU list for
# taskset; default 1 for one thread, none else), LAYERS (layer ids, default all), LIST (the layer
# list), WEFT_TUNE (the tool; default ${WEFT_BUILD_DIR:-build}/samples/tuning/weft-tune),
# WEFT_TUNING_DB (the database), PLOTS (a directory for one SVG per run), EXTRA (more weft-tune
# options). Passes the list leaves out (conv1's backward by data) are skipped. Exit 1 when a run fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

tool=${WEFT_TUNE:-${WEFT_BUILD_DIR:-build}/samples/tuning/weft-tune}
if [[ ! -x "$tool" ]]; then
  echo "tune_conv_resnet50: $tool not found; build the weft-tune target or set WEFT_TUNE" >&2
  exit 2
fi
list=${LIST:-$root/samples/conv/resnet50_layers.txt}
budget=${BUDGET:-30}
read -r -a passes <<< "${PASSES:-fwd bwd upd}"
for pass in "${passes[@]}"; do
  if [[ ! $pass =~ ^(fwd|bwd|upd)$ ]]; then
    echo "tune_conv_resnet50: PASSES holds fwd, bwd or upd, not '$pass'" >&2
    exit 2
  fi
done
# shellcheck source=scripts/resnet50_team.sh
source "$root/scripts/resnet50_team.sh"
resnet50_team tune_conv_resnet50

summary=()
failed=0
for pass in "${passes[@]}"; do
  # "id name H W C K R S stride pad" per layer the list gives this pass.
  while read -r id name H W C K R S stride pad; do
    if [[ -n ${LAYERS:-} && " $LAYERS " != *" $id "* ]]; then continue; fi
    plot=()
    if [[ -n ${PLOTS:-} ]]; then
      mkdir -p "$PLOTS"
      plot=(--plot "$PLOTS/conv_${pass}_${id}_${name}_t${threads}.svg")
    fi
    echo "=== $pass $id $name: ${H}x${W} $C->$K ${R}x${S}/$stride pad $pad, N = threads = $threads, budget $budget s"
    # shellcheck disable=SC2086 # EXTRA is a list of options
    if out=$("${pin[@]}" "$tool" conv --pass "$pass" --N "$threads" --H "$H" --W "$W" --C "$C" --K "$K" --R "$R" \
      --S "$S" --stride "$stride" --pad "$pad" --threads "$threads" --budget "$budget" "${plot[@]}" ${EXTRA:-} 2>&1); then
      grep -E '^(conv_|best:|search:)' <<< "$out" || true
      summary+=("$(printf '%-4s %-18s %s' "$pass" "$id $name" "$(grep '^best:' <<< "$out" | cut -c7-)")")
    else
      echo "$out"
      summary+=("$(printf '%-4s %-18s %s' "$pass" "$id $name" "FAILED")")
      failed=1
    fi
  done < <(awk -v pass="$pass" '
    /^[[:space:]]*(#|$)/ { next }
    {
      split($0, part, "|"); split(part[1], l, " ")
      n = split(part[pass == "fwd" ? 2 : pass == "bwd" ? 3 : 4], p, " ")
      if (n >= 2 && p[2] != "-") printf "%02d %s %s %s %s %s %s %s %s %s\n", l[1], l[2], l[3], l[4], l[5], l[6], l[7], l[8], l[9], l[10]
    }' "$list")
done

echo
echo "=== summary, $threads threads (also in the tuning database: $tool show)"
printf '%s\n' "${summary[@]}"
exit "$failed"
