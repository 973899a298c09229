#!/usr/bin/env bash
# Configures and builds weft into ${WEFT_BUILD_DIR:-build} (Release, Ninja). Extra arguments go to
# the CMake configure step, e.g. scripts/build.sh -DWEFT_SANITIZE=address,undefined.
#   WEFT_BUILD_TARGETS  builds only these targets (and what they need), e.g. "weft-gemm";
#                       empty or unset builds everything (libraries, samples, tests, benchmarks, fuzz).
# Prints one line per phase, with the number of build steps, so a long build says what it is doing;
# the compiler's output goes to $build_dir/build.log and is shown on failure or warnings.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${WEFT_BUILD_DIR:-build}
read -r -a targets <<< "${WEFT_BUILD_TARGETS:-}"

echo "build: configuring $build_dir (CMake, ${WEFT_BUILD_TYPE:-Release})"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${WEFT_BUILD_TYPE:-Release}" "$@" >/dev/null

# The commands a build from scratch runs (ninja's dry run cannot count: CMake's glob check makes it
# stop at "re-running CMake"); the log's last [done/total] tells how many really ran.
steps=$(ninja -C "$build_dir" -t commands "${targets[@]}" | wc -l)
what=${targets[*]:-everything}
echo "build: building $what (at most $steps steps on $(nproc) cores)"
start=$SECONDS
log="$build_dir/build.log"
# The compiler's words go to the log; on failure (or warnings) they are shown, else one line.
if ! cmake --build "$build_dir" -j"$(nproc)" ${targets[@]:+--target "${targets[@]}"} >"$log" 2>&1; then
  grep -v '^\[[0-9]*/[0-9]*\]' "$log" | tail -n 60 >&2
  echo "build: FAILED after $((SECONDS - start)) s (whole output: $log)" >&2
  exit 1
fi
if grep -q 'warning:' "$log"; then
  grep -v '^\[[0-9]*/[0-9]*\]' "$log" >&2
  echo "build: $(grep -c 'warning:' "$log") compiler warnings (whole output: $log)" >&2
fi
ran=$(grep -o '^\[[0-9]*/' "$log" | tail -n 1 | tr -d '[/')
echo "build: done, ${ran:-0} steps in $((SECONDS - start)) s"
