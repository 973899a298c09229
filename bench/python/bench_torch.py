#!/usr/bin/python3
"""weft.torch next to torch.nn (a script, not a test): one training step's forward and backward
(and, with --sgd, the SGD step) of an MLP and a small CNN, torch.nn's model and the same model
after weft.torch.optimize, in one process, the two interleaved round by round: the times are
medians over the rounds, the speed-up is the median of the rounds' ratios (torch.nn / weft.torch).

    PYTHONPATH=build/python /usr/bin/python3 bench/python/bench_torch.py [--mlp 1024x256,4096x1024]
        [--layers 3] [--threads 2] [--rounds 7] [--dtype float32|bfloat16] [--resnet] [--no-cnn] [--sgd]
        [--fp32-masters] [--autocast]

--mlp: the MLPs' width x batch (each --layers Linear + ReLU layers); --resnet: each ResNet-50
layer of bench_python.py's list alone (Conv2d + ReLU at batch = threads, its input requiring a
gradient, as inside a network: forward, backward by data and by weights).

In bfloat16 both models keep bf16 parameters (weft.torch.optimize keeps a model's dtype);
--fp32-masters gives weft.torch's layers fp32 master weights instead (optimize(model,
master_dtype=torch.float32)): fp32 weight gradients, and with --sgd a bf16 copy each step.
--autocast (bfloat16): mixed precision as PyTorch users run it. The model holds fp32 parameters
and steps under torch.autocast("cpu", dtype=torch.bfloat16) on fp32 input (bf16 compute, fp32
weight gradients), torch.nn's and weft.torch's alike (weft.torch's fp32 layers compute in bf16
there). With --fp32-masters too, weft.torch's model is instead the model in bf16 on fp32 masters,
stepping without autocast on the input in bf16.

--threads goes to torch.set_num_threads and weft.set_num_threads (import torch resets OpenMP's
count of this thread).
"""
import argparse
import copy
import os
import statistics
import subprocess
import time

# OpenBLAS (torch.nn.Linear's BLAS here) lets its idle threads sleep at once, so that they do not
# take the cores from the next call in the interleaved rounds (bench_python.py says more).
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import torch  # noqa: E402
from torch import nn  # noqa: E402

import weft  # noqa: E402
import weft.torch  # noqa: E402
from resnet50_layers import RESNET_LAYERS, resnet_layers  # noqa: E402


def cpu_name():
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return weft.cpu()["model"]



def mlp_sizes(text):
    if not text:
        return []  # --mlp "": no MLP (the convolutions alone)
    try:
        return [tuple(int(v) for v in item.split("x")) for item in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--mlp takes WIDTHxBATCH[,WIDTHxBATCH...], not {text!r}")


def step_seconds(model, optimizer, x, calls, autocast=False):
    begin = time.perf_counter()
    for _ in range(calls):
        model.zero_grad(set_to_none=True)
        x.grad = None  # a layer's input that requires a gradient (--resnet): dx anew each step
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = model(x).sum()
        loss.backward()
        if optimizer is not None:
            optimizer.step()
    return (time.perf_counter() - begin) / calls


def compare(name, reference, x, rounds, calls, flops, sgd, master_dtype, autocast=False):
    """autocast: `reference` holds fp32 parameters and steps under bf16 autocast on fp32 x, and
    weft.torch's copy too; with master_dtype, that copy is the model in bf16 on fp32 masters,
    stepping without autocast on x in bf16."""
    model = copy.deepcopy(reference)
    x_weft, weft_autocast = x, autocast
    if autocast and master_dtype is not None:
        model.to(torch.bfloat16)
        x_weft, weft_autocast = x.detach().to(torch.bfloat16).requires_grad_(x.requires_grad), False
    report = weft.torch.optimize(model, master_dtype=master_dtype)
    # A tiny learning rate: the weights move (weft.torch's bf16 copy is made again each step) but
    # stay near where they started, so that both models keep computing alike.
    optimizers = {id(m): torch.optim.SGD(m.parameters(), lr=1e-6) if sgd else None for m in (reference, model)}
    step_seconds(reference, optimizers[id(reference)], x, 2, autocast)  # warm-up: kernels generated, plans
    step_seconds(model, optimizers[id(model)], x_weft, 2, weft_autocast)
    times = {"torch.nn": [], "weft.torch": []}
    for _ in range(rounds):
        times["torch.nn"].append(step_seconds(reference, optimizers[id(reference)], x, calls, autocast))
        times["weft.torch"].append(step_seconds(model, optimizers[id(model)], x_weft, calls, weft_autocast))
    t, w = statistics.median(times["torch.nn"]), statistics.median(times["weft.torch"])
    # The speed-up of each round (the two models timed back to back) and their median: a shared
    # machine's slow spells then weigh on both sides of a ratio instead of on one median.
    ratio = statistics.median(a / b for a, b in zip(times["torch.nn"], times["weft.torch"]))
    print(f"{name:44s} {flops / 1e9:7.2f} {t * 1e3:10.2f} ms {w * 1e3:10.2f} ms {ratio:8.2f}x"
          f"   ({len(report.swapped)} layers swapped)")


def raise_mallocs_mmap_threshold():
    """glibc serves a block above its mmap threshold (128 KiB at first) by a fresh mapping, and
    raises the threshold to a freed mapping's size (up to 32 MiB); torch.nn's tensors come from
    malloc. Until one such free, every step maps and faults in its activations anew: on a Zen 5
    guest (12 us per 4 KiB page) torch.nn's res2a_branch2c at 2 threads took 19.5 ms instead of
    4.2 ms when no MLP ran before it. One freed 16 MiB tensor raises the threshold for every case
    alike, whatever ran first."""
    torch.empty(16 << 20, dtype=torch.uint8).fill_(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mlp", type=mlp_sizes, default=[(1024, 256)], help="WIDTHxBATCH,... ('': none)")
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--resnet", action="store_true", help="also each ResNet-50 layer of the list alone")
    parser.add_argument("--no-cnn", action="store_true", help="leave out the small CNN")
    parser.add_argument("--sgd", action="store_true", help="an SGD step (torch.optim.SGD) after each backward")
    parser.add_argument("--fp32-masters", action="store_true", help="weft.torch's bf16 layers on fp32 master weights")
    parser.add_argument("--autocast", action="store_true",
                        help="bfloat16: both models on fp32 parameters under bf16 autocast")
    args = parser.parse_args()
    if args.autocast and args.dtype != "bfloat16":
        parser.error("--autocast compares bf16 compute: give --dtype bfloat16")
    master_dtype = torch.float32 if args.fp32_masters else None
    # --autocast: the models keep fp32 parameters and take fp32 inputs (autocast casts them).
    model_dtype = torch.float32 if args.autocast else getattr(torch, args.dtype)
    torch.set_num_threads(args.threads)
    weft.set_num_threads(args.threads)
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)
    raise_mallocs_mmap_threshold()
    print(f"{cpu_name()}, weft ISA {weft.isa()}, {args.threads} threads, torch {torch.__version__}, {args.dtype}, "
          f"forward + backward{' + SGD' if args.sgd else ''} per step"
          f"{', weft.torch on fp32 masters' if master_dtype and dtype == torch.bfloat16 else ''}"
          f"{', fp32 parameters under bf16 autocast' if args.autocast else ''}, medians of {args.rounds} rounds of {args.calls}"
          f" (speed-up: of the rounds' ratios)")
    print(f"{'case':44s} {'GFLOP':>7s} {'torch.nn':>13s} {'weft.torch':>13s} {'speed-up':>9s}")
    for width, batch in args.mlp:
        layers = []
        for _ in range(args.layers):
            layers += [nn.Linear(width, width), nn.ReLU()]
        mlp = nn.Sequential(*layers).to(model_dtype)
        x = torch.randn(batch, width).to(model_dtype)
        compare(f"MLP {args.layers} x {width}, batch {batch}", mlp, x, args.rounds, args.calls,
                3 * 2 * batch * width * width * args.layers, args.sgd, master_dtype, args.autocast)
    if not args.no_cnn:
        cnn = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
                            nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU()).to(model_dtype)
        images = torch.randn(args.threads, 64, 28, 28).to(model_dtype)
        conv_flops = 3 * 2 * args.threads * (2 * 64 * 64 * 9 * 28 * 28 + 128 * 64 * 9 * 14 * 14)
        compare(f"CNN 3 convs 64x28x28, batch {args.threads}", cnn, images, args.rounds, args.calls, conv_flops,
                args.sgd, master_dtype, args.autocast)
    if args.resnet:
        for name, H, W, C, K, R, S, stride, pad in resnet_layers(RESNET_LAYERS):
            layer = nn.Sequential(nn.Conv2d(C, K, (R, S), stride=stride, padding=pad), nn.ReLU()).to(model_dtype)
            images = torch.randn(args.threads, C, H, W).to(model_dtype).requires_grad_()
            P, Q = (H + 2 * pad - R) // stride + 1, (W + 2 * pad - S) // stride + 1
            compare(f"{name} {C}x{H}x{W} {K}x{R}x{S}/{stride}", layer, images, args.rounds, args.calls,
                    3 * 2 * args.threads * C * K * R * S * P * Q, args.sgd, master_dtype, args.autocast)

if __name__ == "__main__":
    main()
