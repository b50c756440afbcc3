"""The Python safetensors package on the file bench/safetensors_bench wrote: the same cases
(load, load+touch, load+sum), best of 9, printed as "@ package/<case> seconds" (and safe_open's
figures as "@ safe_open/<case>"). Run by bench/safetensors_bench.sh."""
import sys
import time

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file

PAGE_FLOATS = 4096 // 4


def use(arrays, how):
    s = 0.0
    for a in arrays:
        flat = a.reshape(-1)
        if how == "load+touch":
            s += float(flat[::PAGE_FLOATS].sum())
        elif how == "load+sum":
            s += float(flat.sum())
    return s


def with_load_file(path, how):
    t0 = time.perf_counter()
    arrays = list(load_file(path).values())
    use(arrays, how)
    return time.perf_counter() - t0


def with_safe_open(path, how):
    t0 = time.perf_counter()
    with safe_open(path, framework="np") as f:
        arrays = [f.get_tensor(k) for k in f.keys()]
    use(arrays, how)
    return time.perf_counter() - t0


def main(path):
    with_load_file(path, "load+sum")
    for how in ("load", "load+touch", "load+sum"):
        print(f"@ package/{how} {min(with_load_file(path, how) for _ in range(9)):.6f}", flush=True)
        print(f"@ safe_open/{how} {min(with_safe_open(path, how) for _ in range(9)):.6f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
