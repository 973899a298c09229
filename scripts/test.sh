#!/usr/bin/env bash
# Installs what is missing, builds everything and runs all tests (ctest, then the Python package's
# pytest suites under Debian's /usr/bin/python3). One line per phase.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "test: installing missing Debian packages"
bash scripts/install-deps.sh
WEFT_BUILD_TARGETS= bash scripts/build.sh
build_dir=${WEFT_BUILD_DIR:-build}
echo "test: running the tests (ctest, $(nproc) at a time)"
ctest --test-dir "$build_dir" --output-on-failure -j"$(nproc)" --timeout 600

# The Python package is built when pybind11 and Debian's Python are found (WEFT_PYTHON=AUTO), and
# install-deps.sh installs them: a build without it is an error here, so the Python suites cannot be
# skipped unseen. pytest's exit status 5 (no test collected) stays a failure.
if ! grep -q "weft_python_extension" "$build_dir/build.ninja"; then
  echo "test: the Python package was not built (WEFT_PYTHON off, or pybind11-dev / python3-dev missing)" >&2
  exit 1
fi
# Likewise the MPI sample (WEFT_MPI=AUTO builds it when install-deps.sh's Open MPI is found): without
# it its ctests (samples/MlpMpi.*) would be missing, not failing.
if ! grep -q "weft-mlp-mpi" "$build_dir/build.ninja"; then
  echo "test: weft-mlp-mpi was not built (WEFT_MPI off, or libopenmpi-dev missing)" >&2
  exit 1
fi
echo "test: running the Python tests (pytest, /usr/bin/python3)"
PYTHONPATH="$build_dir/python" /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python
