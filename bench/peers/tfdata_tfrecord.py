#!/usr/bin/env python3
"""tf.data's side of data_bench's tfrecord section: TFRecordDataset(files).prefetch(AUTOTUNE) over
files of the same sizes, against read() of the same files in this process, best of 5. The records
are counted by a reduce inside tf.data (no Python per record), so the figure is tf.data's own.

    ~/.cache/cairn/bench-venv/bin/python bench/peers/tfdata_tfrecord.py [--mib N] [--sizes B,B,..] [--dir DIR]
"""
import argparse
import os
import time

import numpy as np
import tensorflow as tf

from common import report

FILES = 4  # as data_bench.cc's kFiles


def write_files(directory, record_bytes, total_bytes):
    rng = np.random.default_rng(record_bytes)
    payload = rng.integers(0, 256, size=record_bytes, dtype=np.uint8).tobytes()
    per_file = max(1, total_bytes // record_bytes // FILES)
    paths = []
    for f in range(FILES):
        paths.append(os.path.join(directory, f"tf-data-bench-{record_bytes}-{f}.tfrecord"))
        with tf.io.TFRecordWriter(paths[-1]) as w:
            for _ in range(per_file):
                w.write(payload)
    return paths


def read_files(paths):
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    total = 0
    t0 = time.perf_counter()
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            while True:
                got = f.readinto(view)
                if not got:
                    break
                total += got
    return time.perf_counter() - t0, total


def pipeline_pass(ds):
    # A reduce runs inside tf.data, with no Python per record (faster here than a tf.function loop
    # over the iterator).
    t0 = time.perf_counter()
    n, nbytes = ds.reduce((np.int64(0), np.int64(0)),
                          lambda acc, x: (acc[0] + 1, acc[1] + tf.cast(tf.strings.length(x), tf.int64)))
    return time.perf_counter() - t0, int(n), int(nbytes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=128)
    ap.add_argument("--sizes", default="100,1024,16384,262144,1048576")
    ap.add_argument("--dir", default="/tmp")
    args = ap.parse_args()
    print(f"  tf.data {tf.__version__}: TFRecordDataset(files).prefetch(AUTOTUNE), records counted by a reduce")
    for size in (int(s) for s in args.sizes.split(",")):
        paths = write_files(args.dir, size, args.mib << 20)
        try:
            ds = tf.data.TFRecordDataset(paths).prefetch(tf.data.AUTOTUNE)
            read_files(paths)  # into the page cache
            pipeline_pass(ds)  # traces the reduce
            raw = piped = float("inf")
            for _ in range(5):
                raw_s, file_bytes = read_files(paths)
                raw = min(raw, raw_s)
                piped_s, records, payload = pipeline_pass(ds)
                piped = min(piped, piped_s)
            if payload != records * size:
                raise SystemExit(f"tfdata_tfrecord: read {records} records of {payload} bytes in all")
            gb = file_bytes / 1e9
            print(f"  {size:8d}-byte records x {records:7d}: read() {gb / raw:6.2f} GB/s | "
                  f"TFRecordDataset->prefetch {gb / piped:6.2f} GB/s {raw / piped:5.2f}x ({records / piped:7.0f} records/s)")
            report(f"tfrecord.{size}.tf_ratio", raw / piped)
            report(f"tfrecord.{size}.tf_rps", records / piped)
        finally:
            for p in paths:
                os.unlink(p)


if __name__ == "__main__":
    main()
