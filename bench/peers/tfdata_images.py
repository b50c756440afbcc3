#!/usr/bin/env python3
"""tf.data's side of data_bench's images section: the same pipeline, elements per second, and the
size and time of a tf.train.Checkpoint of the iterator mid-epoch.

    ~/.cache/cairn/bench-venv/bin/python bench/peers/tfdata_images.py [--epochs N]
"""
import argparse
import os
import tempfile
import time

import tensorflow as tf

from common import BATCH, SHUFFLE_BUFFER, epoch, images, median, report


def pipeline(pixels, labels):
    def normalize(image, label):
        return tf.cast(image, tf.float32) / 255.0, label

    return (tf.data.Dataset.from_tensor_slices((pixels, labels))
            .map(normalize, num_parallel_calls=tf.data.AUTOTUNE)
            .shuffle(SHUFFLE_BUFFER, seed=42)
            .batch(BATCH)
            .prefetch(tf.data.AUTOTUNE))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    args = ap.parse_args()
    ds = pipeline(*images())
    epoch(ds)  # warm
    rates = [epoch(ds) for _ in range(args.epochs)]
    print(f"  tf.data {tf.__version__}: {median(rates):10.0f} elements/s (median of {args.epochs} epochs; "
          f"{min(rates):.0f}-{max(rates):.0f})")
    report("images.tf.eps", median(rates))

    it = iter(ds)
    for _ in range(200):
        next(it)
    ckpt = tf.train.Checkpoint(iterator=it)
    with tempfile.TemporaryDirectory() as d:
        times = []
        for i in range(3):
            t0 = time.perf_counter()
            prefix = ckpt.write(os.path.join(d, f"ckpt{i}"))
            times.append(time.perf_counter() - t0)
        size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.startswith("ckpt0"))
    print(f"  checkpoint tf.train.Checkpoint(iterator)      {size:10d} bytes, write {median(times) * 1e6:9.1f} us")
    report("ckpt.images_tf.bytes", size)
    report("ckpt.images_tf.save_us", median(times) * 1e6)


if __name__ == "__main__":
    main()
