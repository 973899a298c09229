#!/usr/bin/env bash
# Installs the Debian 12 packages weft needs that are not there yet. Idempotent; needs root.
set -euo pipefail

packages=(
  g++ cmake ninja-build git pkg-config
  libxbyak-dev libspdlog-dev libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev
  # peers, measured side by side in the benchmarks
  libxsmm-dev libopenblas-dev libdnnl-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # apt's progress goes to a log, shown only when it fails.
  log=$(mktemp /tmp/weft-install-deps.XXXXXX.log)
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "install-deps: apt-get failed (whole output: $log)" >&2
    exit 1
  fi
  rm -f "$log"
else
  echo "install-deps: all packages present"
fi
