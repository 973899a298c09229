#!/usr/bin/env bash
# One convolution pass over the 23 distinct ResNet-50 v1.5 layers (samples/conv/resnet50_layers.txt,
# PARLOOPER's run_conv_*_resnet50_all.sh list), batch N = threads: weft's sample runs once per layer
# and a table (layer, shape, loop string, GFLOPS, ratio to oneDNN) and an SVG bar plot follow.
#
#   scripts/conv_resnet50.sh fwd                       1 thread
#   THREADS=2 PIN=0,1 scripts/conv_resnet50.sh upd
#
# Settings per layer are the ones weft-bench-conv uses (bench/conv/weft_conv.hpp): fwd and bwd take
# the list's loop string and blockings (bc, bk at most C, K; physical padding; a grid string made
# for another team size runs as Afgbcde), upd takes Abcdefg on one thread and aBCdefg on more (the
# list's upd strings are PARLOOPER's bf16 nests). Passes the list leaves out ("bwd -") are skipped.
#
# The oneDNN column comes from weft-bench-conv --only=dnnl (one run over the pass's layers, same
# threads and pinning) when the bench is built with oneDNN; otherwise it reads "-". The two are
# separate processes, not interleaved: on a loaded machine compare with weft-bench-conv instead.
#
# AUTO=1 runs each layer as `weft-conv-<pass> auto <shape>`: the tuning database's configuration
# (scripts/tune_conv_resnet50.sh fills it; the loop string column shows what `auto` took, marked
# "*" where it was no exact hit).
#
# Environment: THREADS (default 1), AUTO (0 or 1, default 0), PIN (a CPU list for taskset; default 1 for one thread, none
# else), ITERS (timed runs per layer, default 20), CHECK (1: each run is verified against the
# double-precision reference, default 1), BUILD (default build), OUT (results directory, default
# conv_resnet50_<pass>_<date>), LIST (the layer list, default samples/conv/resnet50_layers.txt; the
# oneDNN column comes from the bench run on the same list). Exit 1 when a run fails (its output is
# in OUT/runs.log).
set -euo pipefail

pass=${1:-}
if [[ $# -ne 1 || ! $pass =~ ^(fwd|bwd|upd)$ ]]; then
  echo "usage: [THREADS=T] [AUTO=0|1] [PIN=cpus] [ITERS=n] [CHECK=0|1] [BUILD=dir] [OUT=dir] $0 fwd|bwd|upd" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build}
sample=$build/samples/conv/weft-conv-$pass
bench=$build/bench/weft-bench-conv
list=${LIST:-$root/samples/conv/resnet50_layers.txt}
iters=${ITERS:-20}
check=${CHECK:-1}
auto=${AUTO:-0}
if [[ ! $auto =~ ^[01]$ ]]; then
  echo "conv_resnet50: AUTO must be 0 or 1, not '$auto'" >&2
  exit 2
fi
out=${OUT:-conv_resnet50_${pass}_$(date +%Y%m%d_%H%M%S)}
if [[ ! -x $sample ]]; then
  echo "conv_resnet50: $sample not found; build the weft-conv-$pass target or set BUILD" >&2
  exit 2
fi
# shellcheck source=scripts/resnet50_team.sh
source "$root/scripts/resnet50_team.sh"
resnet50_team conv_resnet50
mkdir -p "$out"
# Backward by data runs on the filter transposed before the timed runs, as the bench does (oneDNN's
# backward weights layout comes from a reorder outside its timing too).
pass_options=()
if [[ $pass == bwd ]]; then pass_options=(--pretransposed 1); fi

# The sample's arguments per layer: "id name shape loop args..." lines, one per layer with this pass.
awk -v pass="$pass" -v T="$threads" '
  function min(a, b) { return a < b ? a : b }
  function grid_threads(s,   n, parts, i, t) {
    t = 1; n = split(s, parts, ":")
    for (i = 2; i <= n; i++) t *= parts[i] + 0
    return t
  }
  /^[[:space:]]*(#|$)/ { next }
  {
    split($0, part, "|"); split(part[1], l, " ")
    n = split(part[pass == "fwd" ? 2 : pass == "bwd" ? 3 : 4], p, " ")
    if (n < 2 || p[2] == "-") next
    H = l[3]; W = l[4]; C = l[5]; K = l[6]; R = l[7]; S = l[8]; st = l[9]; pad = l[10]
    shape = sprintf("%d %d %d %d %d %d %d %d %d %d %d", T, H, W, C, K, R, S, st, st, pad, pad)
    loop = p[2]; bc = min(p[3], C); bk = min(p[4], K)
    if (pass == "fwd") {
      if (grid_threads(loop) > 1 && grid_threads(loop) != T) loop = "Afgbcde"
      args = sprintf("%s %s %d %d %s %s %s %s %s %s", loop, shape, bc, bk, p[5], p[6], p[7], p[8], p[9], p[10])
    } else if (pass == "bwd") {
      args = sprintf("%s %s %d %d %s %s %s %s %s", loop, shape, bc, bk, p[5], p[6], p[7], p[8], p[9])
    } else {
      loop = T == 1 ? "Abcdefg" : "aBCdefg"
      args = sprintf("%s %s %d %d", loop, shape, bc, bk)
    }
    shape_text = sprintf("%dx%d %d->%d %dx%d/%d", H, W, C, K, R, S, st)
    printf "%02d|%s|%s|%s|%s|%s\n", l[1], l[2], shape_text, loop, args, shape
  }' "$list" > "$out/layers.txt"

# oneDNN's GFLOPS per layer id, from the bench's table (rows: threads pass NN_name ... dnnl GF ...).
declare -A dnnl
if [[ -x $bench ]] && "$bench" --only=dnnl --benchmark_list_tests=true > /dev/null 2>&1; then
  echo "conv_resnet50: oneDNN's figures from $bench --only=dnnl ..." >&2
  "${pin[@]}" "$bench" --only=dnnl --threads="$threads" --benchmark_filter="^$pass/" --min-time=0.2 --layers="$list" \
    > "$out/dnnl.log" 2>&1 || true
  while read -r id gf; do dnnl[$id]=$gf; done < <(awk -v pass="$pass" -v T="$threads" \
    '$1 == T && $2 == pass && $3 ~ /^[0-9][0-9]_/ { print substr($3, 1, 2), $7 }' "$out/dnnl.log")
fi

: > "$out/runs.log"
failed=0
printf '%-2s %-15s %-22s %-22s %8s %8s %7s\n' id layer "HxW C->K RxS/stride" "loop string" GFLOPS oneDNN ratio \
  | tee "$out/table.txt"
while IFS='|' read -r id name shape loop args shape_args; do
  if [[ $auto == 1 ]]; then args="auto $shape_args"; fi
  # shellcheck disable=SC2086 # args is the sample's argument list
  if ! run=$("${pin[@]}" "$sample" $args "$iters" --threads "$threads" --check "$check" "${pass_options[@]}" 2>&1); then
    failed=1
  fi
  printf '%s\n$ %s %s %s\n%s\n' "----- $id $name" "$sample" "$args" "$iters" "$run" >> "$out/runs.log"
  gf=$(awk '/^MEASURE /{ print $2 }' <<< "$run" | tail -1)
  gf=${gf:-0}
  if [[ $auto == 1 ]]; then  # "weft-conv-fwd auto: exact hit: <loop string> bc=.. ..."
    loop=$(sed -n 's/^weft-conv-[a-z]* auto: \([a-z ]*\): \([^ ]*\) .*/\1|\2/p' <<< "$run" | head -1)
    if [[ ${loop%%|*} == "exact hit" ]]; then loop=${loop#*|}; else loop="${loop#*|}*"; fi
  fi
  ref=${dnnl[$id]:-}
  ratio=-
  [[ -n $ref && $gf != 0 ]] && ratio=$(awk -v a="$gf" -v b="$ref" 'BEGIN { printf "%.3f", a / b }')
  printf '%-2s %-15s %-22s %-22s %8.1f %8s %7s\n' "$id" "$name" "$shape" "$loop" "$gf" "${ref:--}" "$ratio" \
    | tee -a "$out/table.txt"
done < "$out/layers.txt"
awk 'NR > 1 && $NF != "-" && $NF > 0 { s += log($NF); n++ }
     END { if (n) printf "geometric mean of the ratios (%d layers): %.3f\n", n, exp(s / n) }' "$out/table.txt" \
  | tee -a "$out/table.txt"

# The bar plot: one group per layer, weft's bar and (when known) oneDNN's.
awk -v title="weft-conv-$pass vs oneDNN, ResNet-50 v1.5 layers, N = threads = $threads (GFLOPS)" '
  NR > 1 && $1 ~ /^[0-9]+$/ { n++; id[n] = $1 "_" $2; w[n] = $(NF - 2); d[n] = ($(NF - 1) == "-" ? 0 : $(NF - 1))
                              top = w[n] > top ? w[n] : top; top = d[n] > top ? d[n] : top }
  END {
    if (top <= 0) top = 1
    left = 60; bottom = 150; plot_h = 300; group = 34; width = left + n * group + 20; height = plot_h + bottom + 40
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n", width, height
    printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
    printf "<text x=\"%d\" y=\"20\" font-size=\"14\">%s</text>\n", left, title
    for (t = 0; t <= 4; t++) {
      y = 30 + plot_h - plot_h * t / 4
      printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", left, width - 20, y, y
      printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n", left - 5, y + 4, top * t / 4
    }
    for (i = 1; i <= n; i++) {
      x = left + (i - 1) * group + 4
      hw = plot_h * w[i] / top; hd = plot_h * d[i] / top
      printf "<rect x=\"%d\" y=\"%.1f\" width=\"13\" height=\"%.1f\" fill=\"#4477aa\"><title>%s weft %.1f</title></rect>\n", x, 30 + plot_h - hw, hw, id[i], w[i]
      if (d[i] > 0) printf "<rect x=\"%d\" y=\"%.1f\" width=\"13\" height=\"%.1f\" fill=\"#cc6677\"><title>%s oneDNN %.1f</title></rect>\n", x + 13, 30 + plot_h - hd, hd, id[i], d[i]
      printf "<text transform=\"translate(%d,%d) rotate(60)\">%s</text>\n", x + 8, 30 + plot_h + 8, id[i]
    }
    ly = height - 12
    printf "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#4477aa\"/><text x=\"%d\" y=\"%d\">weft</text>\n", left, ly - 10, left + 16, ly
    printf "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#cc6677\"/><text x=\"%d\" y=\"%d\">oneDNN</text>\n", left + 70, ly - 10, left + 86, ly
    printf "</svg>\n"
  }' "$out/table.txt" > "$out/plot.svg"
echo "conv_resnet50: table $out/table.txt, plot $out/plot.svg, runs $out/runs.log" >&2
exit "$failed"
