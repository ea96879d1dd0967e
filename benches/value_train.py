#!/usr/bin/env python3
"""PyTorch reference for `deepchess bench train-value`: training throughput (positions/s)
of the evaluation net on the CPU, same architecture and batch: a feature transformer
768 -> N shared by both perspectives (nn.EmbeddingBag in sum mode, the efficient sparse
layer PyTorch offers), SCReLU, 2N -> 1, sigmoid, MSE loss, AdamW, about 30 active
features per position. Not a project dependency: run it from a virtualenv,

    python3 -m venv .venv-torch && .venv-torch/bin/pip install torch
    .venv-torch/bin/python benches/value_train.py --threads 2

and compare with `deepchess bench train-value` run on the same machine right after.
"""
import argparse
import time

import torch
from torch import nn


class PerspectiveNet(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.ft = nn.EmbeddingBag(768, width, mode="sum")
        self.ft_bias = nn.Parameter(torch.zeros(width))
        bound = 1.0 / 768 ** 0.5
        nn.init.uniform_(self.ft.weight, -bound, bound)
        self.out = nn.Linear(2 * width, 1)

    def forward(self, us, us_offsets, them, them_offsets):
        a = self.ft(us, us_offsets) + self.ft_bias
        b = self.ft(them, them_offsets) + self.ft_bias
        h = torch.cat([a, b], dim=1).clamp(0.0, 1.0).pow(2)
        return self.out(h)


def random_batch(n, generator):
    counts = torch.randint(20, 38, (n,), generator=generator)
    us = torch.cat([torch.randperm(768, generator=generator)[:c] for c in counts])
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)[:-1]])
    # the opponent's view: colours swapped, board mirrored
    plane, square = us // 64, us % 64
    them = ((plane + 6) % 12) * 64 + (square ^ 56)
    targets = torch.rand(n, 1, generator=generator)
    return us, offsets, them, offsets, targets


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=16384)
    p.add_argument("--batches", type=int, default=20)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: PyTorch's default)")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = PerspectiveNet(args.width)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    batches = [random_batch(args.batch, g) for _ in range(4)]

    def step(k):
        us, uo, them, to, t = batches[k % 4]
        opt.zero_grad()
        loss = (torch.sigmoid(model(us, uo, them, to)) - t).pow(2).mean()
        loss.backward()
        opt.step()
        with torch.no_grad():
            model.out.weight.clamp_(-127 / 64, 127 / 64)

    step(0)
    start = time.perf_counter()
    for k in range(1, args.batches + 1):
        step(k)
    elapsed = time.perf_counter() - start
    print(f"pytorch {torch.__version__} threads={torch.get_num_threads()} width={args.width} batch={args.batch} "
          f"positions_per_second={args.batch * args.batches / elapsed:.0f}")


if __name__ == "__main__":
    main()
