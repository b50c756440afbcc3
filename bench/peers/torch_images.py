#!/usr/bin/env python3
"""PyTorch's side of data_bench's images section: a TensorDataset with a per-element transform
(cast to float, / 255), DataLoader(batch_size=128, shuffle=True), elements per second.

num_workers: 0 (the main process does everything) and the machine's CPU count (worker processes,
persistent, so starting them is not timed each epoch). Both are printed; data_bench.sh compares
with the faster.

    ~/.cache/cairn/bench-venv/bin/python bench/peers/torch_images.py [--epochs N] [--workers N ...]
"""
import argparse
import os

import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset

from common import BATCH, epoch, images, median, report


class Normalized(Dataset):
    """Element i of `base` with its image cast to float32 and divided by 255."""

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return len(self.base)

    def __getitem__(self, i):
        image, label = self.base[i]
        return image.float() / 255.0, label


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--workers", type=int, nargs="*", default=[0, os.cpu_count()])
    args = ap.parse_args()
    pixels, labels = images()
    ds = Normalized(TensorDataset(torch.from_numpy(pixels), torch.from_numpy(labels)))
    for workers in args.workers:
        loader = DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=workers,
                            persistent_workers=workers > 0, generator=torch.Generator().manual_seed(42))
        epoch(loader)  # warm (starts the workers)
        rates = [epoch(loader) for _ in range(args.epochs)]
        print(f"  torch {torch.__version__} DataLoader num_workers={workers}: {median(rates):10.0f} elements/s "
              f"(median of {args.epochs} epochs; {min(rates):.0f}-{max(rates):.0f})")
        report(f"images.torch_w{workers}.eps", median(rates))
        del loader


if __name__ == "__main__":
    main()
