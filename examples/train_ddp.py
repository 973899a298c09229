#!/usr/bin/python3
"""Data-parallel training of weft.torch layers under torch.distributed's DistributedDataParallel
(gloo): an MLP and a small CNN, each rank on its share of every global batch.

    PYTHONPATH=build/python torchrun --standalone --nproc_per_node=2 examples/train_ddp.py [--steps 5]

(torchrun is Debian's /usr/bin/torchrun, i.e. /usr/bin/python3 -m torch.distributed.run.) Per step
and rank it prints:
  compute   forward, backward up to the moment the last gradient bucket was ready, and the SGD step
  exposed   the rest of backward(): waiting for the all-reduces that computing did not hide
  reduced   the bytes of the gradient buckets this rank all-reduced (DDP's comm hook counts them)
After the steps it checks that every rank holds the same weights (bit for bit) and that they equal,
within fp32 tolerance, the weights of a one-process run over the whole batches; a failed check ends
with exit status 1.
"""
import argparse
import copy
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

import weft
import weft.torch as wt

IMAGE = (3, 16, 16)


def make_mlp():
    return wt.MLP([64, 128, 128, 10])


def make_cnn():
    return nn.Sequential(wt.Conv2d(3, 16, 3, padding=1, relu=True), wt.Conv2d(16, 32, 3, stride=2, padding=1, relu=True),
                         nn.Flatten(), wt.Linear(32 * 8 * 8, 10))


def global_batch(kind, step, size):
    """Step `step`'s whole batch, the same on every rank (a generator seeded by the step)."""
    generator = torch.Generator().manual_seed(1000 + step)
    shape = (size, 64) if kind == "mlp" else (size,) + IMAGE
    return torch.randn(shape, generator=generator), torch.randint(0, 10, (size,), generator=generator)


class CommStats:
    """What DDP's communication hook sees of one backward pass."""

    def __init__(self):
        self.bytes = 0
        self.last_ready = None


def counted_allreduce(stats, bucket):
    # DDP calls the hook when a bucket's gradients are all computed: the last call marks the end of
    # the gradient computation; the all-reduce itself is gloo's, averaged as DDP's default does.
    buffer = bucket.buffer()
    stats.bytes += buffer.numel() * buffer.element_size()
    stats.last_ready = time.perf_counter()
    return default_hooks.allreduce_hook(None, bucket)


def train(model, kind, steps, batch, lr, rank=0, world=1, stats=None):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    share = batch // world
    for step in range(steps):
        x, y = global_batch(kind, step, batch)
        x, y = x[rank * share:(rank + 1) * share].contiguous(), y[rank * share:(rank + 1) * share]
        begin = time.perf_counter()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        forward_end = time.perf_counter()
        if stats is not None:
            stats.bytes, stats.last_ready = 0, None
        loss.backward()
        backward_end = time.perf_counter()
        optimizer.step()
        end = time.perf_counter()
        if stats is not None:
            ready = stats.last_ready or backward_end
            compute = (ready - begin) + (end - backward_end)
            exposed = backward_end - ready
            print(f"{kind} rank {rank} step {step}: compute {compute * 1e3:7.2f} ms, exposed communication "
                  f"{exposed * 1e3:6.2f} ms, reduced {stats.bytes} bytes, loss {loss.item():.4f}", flush=True)


def flat_weights(model):
    return torch.cat([value.reshape(-1).float() for value in model.state_dict().values()])


def run(kind, make, args, rank, world):
    torch.manual_seed(args.seed)  # the same initial weights everywhere (DDP broadcasts rank 0's anyway)
    model = make()
    initial = copy.deepcopy(model.state_dict())
    ddp = DistributedDataParallel(model)
    stats = CommStats()
    ddp.register_comm_hook(stats, counted_allreduce)
    train(ddp, kind, args.steps, args.batch, args.lr, rank, world, stats)

    mine = flat_weights(model)
    everyone = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(everyone, mine)
    identical = all(torch.equal(everyone[0], other) for other in everyone[1:])

    alone = make()  # one process, the whole batches
    alone.load_state_dict(initial)
    train(alone, kind, args.steps, args.batch, args.lr)
    expected = flat_weights(alone)
    difference = (mine - expected).abs().max().item()
    close = torch.allclose(mine, expected, rtol=args.rtol, atol=args.atol)
    print(f"{kind} rank {rank}: weights identical on all {world} ranks: {identical}; equal to a one-process run "
          f"within rtol {args.rtol}, atol {args.atol}: {close} (max difference {difference:.3g})", flush=True)
    return identical and close


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=32, help="the global batch, split among the ranks")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--threads", type=int, default=1, help="weft's threads per rank")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-5)
    parser.add_argument("--models", default="mlp,cnn")
    args = parser.parse_args()
    dist.init_process_group("gloo")  # torchrun's environment: RANK, WORLD_SIZE, MASTER_ADDR, ...
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch % world:
        sys.exit(f"--batch {args.batch} does not split evenly among {world} ranks")
    weft.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    makers = {"mlp": make_mlp, "cnn": make_cnn}
    ok = True
    for kind in args.models.split(","):
        ok = run(kind, makers[kind], args, rank, world) and ok
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
