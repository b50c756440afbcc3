"""Shared by the peers' benchmark scripts: the same data and output format as bench/data_bench.cc."""
import time

import numpy as np

IMAGES = 60000
SIDE = 28
BATCH = 128
SHUFFLE_BUFFER = 10000


def images():
    """60,000 28x28 uint8 images (seeded noise) and int64 labels 0..9, as data_bench.cc makes them
    (the values differ, the sizes and dtypes do not; the pipelines do not look at the values)."""
    rng = np.random.default_rng(42)
    pixels = rng.integers(0, 256, size=(IMAGES, SIDE, SIDE), dtype=np.uint8)
    labels = (np.arange(IMAGES) % 10).astype(np.int64)
    return pixels, labels


def report(key, value):
    """A figure for data_bench.sh's summary."""
    print(f"@ {key} {value:.6g}", flush=True)


def median_seconds(fn, reps):
    """The median wall time of `reps` calls of fn, after one warm-up call."""
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return median(times)


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def epoch(batches):
    """Elements per second of one pass over `batches` (pairs whose first part has the batch as its
    leading dimension); checks that the pass saw every image once."""
    t0 = time.perf_counter()
    n = 0
    for image, _ in batches:
        n += image.shape[0]
    t = time.perf_counter() - t0
    assert n == IMAGES, n
    return IMAGES / t
