"""bench/python/bench_torch.py runs end to end on tiny sizes in each of its modes (a smoke run: the script is the
documented way to reproduce docs/python.md's weft.torch figures; its timings are not checked
here, benchmarks never go into tests). Skipped when PyTorch is absent."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

import weft  # noqa: E402

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "python" / "bench_torch.py"
ROW = re.compile(r"^(MLP 3 x 64, batch 32|CNN 3 convs 64x28x28, batch 1) +[\d.]+ +[\d.]+ ms +[\d.]+ ms +[\d.]+x"
                 r" +\(3 layers swapped\)$", re.MULTILINE)


def run_bench(*arguments):
    package = pathlib.Path(weft.__file__).resolve().parents[1]
    environment = dict(os.environ, PYTHONPATH=str(package))
    command = [sys.executable, str(SCRIPT), "--threads", "1", "--mlp", "64x32", "--rounds", "1", "--calls", "1",
               *arguments]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300)


@pytest.mark.parametrize("arguments, header", [
    ((), "float32, forward + backward per step"),
    (("--dtype", "bfloat16", "--sgd"), "bfloat16, forward + backward + SGD per step"),
    (("--dtype", "bfloat16", "--autocast", "--sgd"), "bfloat16, forward + backward + SGD per step, fp32 parameters under "
                                                     "bf16 autocast"),
    (("--dtype", "bfloat16", "--autocast", "--fp32-masters"),
     "weft.torch on fp32 masters, fp32 parameters under bf16 autocast"),
])
def test_bench_torch_times_both_models_of_each_case(arguments, header):
    result = run_bench(*arguments)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert header in result.stdout, result.stdout
    assert [m.group(1) for m in ROW.finditer(result.stdout)] == ["MLP 3 x 64, batch 32",
                                                                  "CNN 3 convs 64x28x28, batch 1"], result.stdout


def test_bench_torch_autocast_needs_bfloat16():
    result = run_bench("--autocast")
    assert result.returncode == 2
    assert "--autocast compares bf16 compute: give --dtype bfloat16" in result.stderr
