"""examples/train_ddp.py under torchrun --standalone --nproc_per_node=2 (gloo, loopback): weft.torch
layers trained under DistributedDataParallel end with the same weights on both ranks, equal to a
one-process run within fp32 tolerance. Skipped when PyTorch is absent."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
import torch.distributed  # noqa: E402

import weft  # noqa: E402

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_ddp.py"


@pytest.mark.skipif(not torch.distributed.is_available() or not torch.distributed.is_gloo_available(),
                    reason="torch.distributed with gloo is not available")
def test_ddp_training_of_weft_layers_on_two_ranks(tmp_path):
    package = pathlib.Path(weft.__file__).resolve().parents[1]
    environment = dict(os.environ, PYTHONPATH=str(package), OMP_NUM_THREADS="1")
    # Debian's torchrun (torch 1.13) on Python 3.11 cannot parse its default "--redirects 0 --tee 0"
    # (Std.NONE is no member that iterating the IntFlag yields): tee stdout explicitly.
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "--redirects", "1",
               "--tee", "1", "--log_dir", str(tmp_path / "logs"), str(EXAMPLE), "--steps", "4"]
    result = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=180, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for kind in ("mlp", "cnn"):
        for rank in (0, 1):
            steps = re.findall(rf"{kind} rank {rank} step \d: compute +[\d.]+ ms, exposed communication +[\d.]+ ms, "
                               r"reduced (\d+) bytes", result.stdout)
            assert len(steps) == 4 and all(int(b) > 0 for b in steps), result.stdout
            assert re.search(rf"{kind} rank {rank}: weights identical on all 2 ranks: True; equal to a one-process "
                             r"run within rtol [\d.e-]+, atol [\d.e-]+: True", result.stdout), result.stdout
