"""weft.isa, weft.cpu, weft.set_num_threads, and importing weft without PyTorch."""
import os
import subprocess
import sys

import pytest

import weft

KNOWN_ISAS = {"reference", "avx2", "avx512", "avx512_bf16", "neon", "neon_bf16", "sve128", "sve256", "sve512",
              "sve128_bf16", "sve256_bf16", "sve512_bf16"}


def test_isa_is_a_known_name_the_cpu_runs():
    isa = weft.isa()
    assert isa in KNOWN_ISAS
    features = weft.cpu()
    if isa.startswith("avx512"):
        assert features["avx512f"] and features["avx512bw"]
    if isa == "avx2":
        assert features["avx2"] and features["fma"]


def test_cpu_reports_one_architecture_and_its_best_isa():
    features = weft.cpu()
    assert features["x86_64"] != features["aarch64"]
    assert features["best_isa"] in KNOWN_ISAS
    assert features["logical_cpus"] >= 1
    assert isinstance(features["model"], str)


def test_set_num_threads_sets_what_get_num_threads_reports():
    before = weft.get_num_threads()
    try:
        weft.set_num_threads(1)
        assert weft.get_num_threads() == 1
        weft.set_num_threads(3)
        assert weft.get_num_threads() == 3
    finally:
        weft.set_num_threads(before)


@pytest.mark.parametrize("bad", [2.5, "2", True, None])
def test_set_num_threads_rejects_non_integers(bad):
    with pytest.raises(TypeError, match="argument 'n'"):
        weft.set_num_threads(bad)


@pytest.mark.parametrize("bad", [0, -1, 1 << 20])
def test_set_num_threads_rejects_counts_out_of_range(bad):
    with pytest.raises(ValueError, match="argument 'n'"):
        weft.set_num_threads(bad)


def test_weft_imports_and_runs_without_torch():
    # sys.modules['torch'] = None makes every `import torch` fail, as on a machine without PyTorch.
    program = (
        "import sys; sys.modules['torch'] = None\n"
        "import numpy as np, weft\n"
        "a = np.ones((2, 3), np.float32); b = np.ones((3, 4), np.float32)\n"
        "assert (weft.einsum('ij,jk->ik', a, b) == 3).all()\n"
        "assert 'torch' not in sys.modules or sys.modules['torch'] is None\n"
        "print('ok')\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            env=dict(os.environ), timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
