#!/usr/bin/env python3
"""PyTorch reference for `deepchess bench train`: siamese-comparator training
throughput (pairs/s) on the CPU, same architecture (773-600-400-200-100 encoder with
shared weights, 200-400-200-100-2 head, ReLU), same batch (1000 pairs), Adam, dense
773-wide 0/1 inputs with about 32 active features per position, as PyTorch users feed
DeepChess. Not a project dependency: run it from a virtualenv,

    python3 -m venv .venv-torch && .venv-torch/bin/pip install torch
    .venv-torch/bin/python benches/comparator_train.py --threads 2

and compare with `deepchess bench train` run on the same machine right after.
"""
import argparse
import time

import torch
from torch import nn


def encoder():
    layers, widths = [], [773, 600, 400, 200, 100]
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = encoder()
        self.head = nn.Sequential(
            nn.Linear(200, 400), nn.ReLU(), nn.Linear(400, 200), nn.ReLU(),
            nn.Linear(200, 100), nn.ReLU(), nn.Linear(100, 2))

    def forward(self, a, b):
        return self.head(torch.cat([self.encoder(a), self.encoder(b)], dim=1))


def random_positions(n, generator):
    x = torch.zeros(n, 773)
    for row in x:
        row[torch.randperm(768, generator=generator)[:30]] = 1.0
        row[768 + torch.randint(0, 5, (2,), generator=generator)] = 1.0
    return x


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--batches", type=int, default=20)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: PyTorch's default)")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    model = Siamese()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    data = random_positions(8 * args.batch, g)
    labels = torch.randint(0, 2, (args.batch,), generator=g)

    def step(k):
        s = (k % 4) * 2 * args.batch
        a, b = data[s:s + args.batch], data[s + args.batch:s + 2 * args.batch]
        opt.zero_grad()
        loss = loss_fn(model(a, b), labels)
        loss.backward()
        opt.step()

    step(0)
    start = time.perf_counter()
    for k in range(1, args.batches + 1):
        step(k)
    elapsed = time.perf_counter() - start
    print(f"pytorch {torch.__version__} threads={torch.get_num_threads()} batch={args.batch} "
          f"pairs_per_second={args.batch * args.batches / elapsed:.0f}")


if __name__ == "__main__":
    main()
