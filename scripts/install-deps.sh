#!/usr/bin/env bash
# Installs the Debian 12 packages weft needs that are not there yet. Idempotent; needs root.
#   scripts/install-deps.sh           what a native build needs (amd64 or arm64 host)
#   scripts/install-deps.sh aarch64   on an amd64 host: the AArch64 cross compiler, qemu-user and
#                                     Debian's arm64 libraries (multiarch), for scripts/test-aarch64.sh
set -euo pipefail

host=$(dpkg --print-architecture)
packages=(
  g++ cmake ninja-build git pkg-config
  libspdlog-dev libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev
  # the A64 assembler's golden test reads GNU binutils for AArch64 on every host
  binutils-aarch64-linux-gnu
  # peers, measured side by side in the benchmarks
  libopenblas-dev libdnnl-dev
  # the Python package (python/) for Debian's /usr/bin/python3, its tests, and PyTorch for the
  # bfloat16 / DLPack tests and the benchmark's peer
  pybind11-dev python3-dev python3-numpy python3-pytest python3-torch
  # Open MPI for the data-parallel training sample weft-mlp-mpi (docs/scale_out.md)
  libopenmpi-dev openmpi-bin
)
# x86-64 code is generated with Xbyak; libxsmm is a peer on x86-64 only.
if [[ $host == amd64 ]]; then packages+=(libxbyak-dev libxsmm-dev); fi

if [[ ${1:-} == aarch64 && $host != arm64 ]]; then
  # Debian's multiarch arm64 packages install beside the amd64 ones (the header-only ones serve both).
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "install-deps: adding the arm64 architecture to dpkg"
    dpkg --add-architecture arm64
  fi
  packages=(g++-aarch64-linux-gnu qemu-user libgtest-dev:arm64 libgmock-dev:arm64 libbenchmark-dev:arm64
            libspdlog-dev:arm64 libfmt-dev:arm64 libgomp1:arm64 pkgconf:arm64 libopenblas-dev:arm64
            libcli11-dev nlohmann-json3-dev binutils-aarch64-linux-gnu)
fi

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
