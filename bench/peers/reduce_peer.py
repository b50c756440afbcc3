"""Peer figures for bench/reduce_bench: torch.sum of float32 over the same shapes and axes (1M and
16M elements; a [4096, 4096] matrix: everything, axis 0, axis 1), on all cores, the median of the
repetitions. Prints "@ torch/<case> <seconds> <bytes>" lines, as reduce_bench does.
Run from the bench venv (~/.cache/cairn/bench-venv) right after reduce_bench, on the same machine."""
import os
import sys

import torch

from common import median_seconds

CASES = [
    ("sum_1M", [1 << 20], None),
    ("sum_16M", [1 << 24], None),
    ("4096x4096_all", [4096, 4096], None),
    ("4096x4096_axis0", [4096, 4096], 0),
    ("4096x4096_axis1", [4096, 4096], 1),
]


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    torch.set_num_threads(os.cpu_count())
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} threads")
    for name, dims, axis in CASES:
        n = 1
        for d in dims:
            n *= d
        x = (torch.arange(n, dtype=torch.int64) % 1000).to(torch.float32).mul_(0.001).reshape(dims)
        fn = (lambda: torch.sum(x)) if axis is None else (lambda: torch.sum(x, dim=axis))
        print(f"@ torch/{name} {median_seconds(fn, reps):.6f} {n * 4}", flush=True)


if __name__ == "__main__":
    main()
