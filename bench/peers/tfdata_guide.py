#!/usr/bin/env python3
"""tf.data's own times for the performance guide's pipelines (data_bench's guide section), with the
same sleeps, so Cairn's figures can be read beside TensorFlow's from the same run.

    ~/.cache/cairn/bench-venv/bin/python bench/peers/tfdata_guide.py
"""
import time

import tensorflow as tf

from common import report

OPEN, READ, TRAIN, MAP_SLEEP, SAMPLES, EPOCHS = 0.030, 0.015, 0.010, 0.030, 3, 2


def artificial(_=None):
    def gen():
        time.sleep(OPEN)
        for i in range(SAMPLES):
            time.sleep(READ)
            yield (i,)

    return tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((1,), tf.int64))


def slow_identity(x):
    tf.py_function(lambda: time.sleep(MAP_SLEEP), [], ())
    return x


def run(ds, epochs):
    t0 = time.perf_counter()
    for _ in range(epochs):
        for _ in ds:
            time.sleep(TRAIN)
    return time.perf_counter() - t0


def case(key, ds, epochs=EPOCHS, warm=True):
    if warm:
        run(ds, 1)
    t = run(ds, epochs)
    print(f"  tf.data {key:24s} {t * 1e3:7.1f} ms")
    report(f"guide.{key}.tf_s", t)


def main():
    auto = tf.data.AUTOTUNE
    case("naive", artificial())
    case("prefetch", artificial().prefetch(auto))
    case("interleave_sequential", tf.data.Dataset.range(2).interleave(artificial))
    case("interleave_parallel", tf.data.Dataset.range(2).interleave(artificial, num_parallel_calls=auto))
    case("map_sequential", artificial().map(slow_identity))
    case("map_parallel", artificial().map(slow_identity, num_parallel_calls=auto))
    case("cache", artificial().map(slow_identity).cache(), epochs=5, warm=False)


if __name__ == "__main__":
    main()
