#!/usr/bin/env python3
"""Writes expected.json in this folder: the elements real tf.data gives for small deterministic
pipelines. tests/capi/data_golden_test.cc builds the same pipelines through Cairn's C API and
compares every element with these.

Run with the benchmark venv (bench/peers/setup.sh makes it; TensorFlow is never needed at test time):
    bench/peers/setup.sh
    ~/.cache/cairn/bench-venv/bin/python tests/golden/data/make_golden.py tests/golden/data/expected.json

Each case has a name (the test looks its pipeline up by that name), the tf.data expression it ran
(for people), tf.data's cardinality (-1 infinite, -2 unknown) and its elements: each a list of components in tf.data's structure order, each
component {"dtype", "shape", "values" (flat, row-major)}. Shuffle is left out on purpose: its order
comes from TensorFlow's RNG, which Cairn does not reproduce.
"""
import json
import sys

import numpy as np
import tensorflow as tf

D = tf.data.Dataset


def interleave_case(cycle, block):
    # Inner datasets of different lengths (x elements for input x), so the cycle refills unevenly.
    expr = (f"Dataset.range(1, 6).interleave(lambda x: Dataset.range(10 * x, 10 * x + x), "
            f"cycle_length={cycle}, block_length={block})")
    ds = D.range(1, 6).interleave(lambda x: D.range(10 * x, 10 * x + x), cycle_length=cycle,
                                  block_length=block)
    return f"interleave_c{cycle}_b{block}", expr, ds


def padded_source():
    # TensorFlow's documented padded_batch input: element x is x copies of x, for x in 1..4.
    return D.range(1, 5).map(lambda x: tf.fill([x], x))


def cases():
    """(name, expression, dataset). Every expression is evaluated to give its dataset, so the text
    shown in expected.json is exactly what ran."""
    exprs = [
        ("range", "D.range(5)"),
        ("range_step", "D.range(10, 0, -3)"),
        ("slices_2d", "D.from_tensor_slices(np.arange(12, dtype=np.float32).reshape(4, 3))"),
        ("batch", "D.range(10).batch(3)"),
        ("batch_drop", "D.range(10).batch(3, drop_remainder=True)"),
        ("batch_slices", "D.from_tensor_slices(np.arange(12, dtype=np.int32).reshape(6, 2)).batch(4)"),
        ("padded_batch", "padded_source().padded_batch(2)"),
        ("padded_batch_shape", "padded_source().padded_batch(3, padded_shapes=[5], padding_values=np.int64(-1))"),
        ("padded_batch_drop", "padded_source().padded_batch(3, drop_remainder=True)"),
        ("unbatch", "D.range(10).batch(4).unbatch()"),
        ("unbatch_2d", "D.from_tensors(np.arange(6, dtype=np.int32).reshape(2, 3)).unbatch()"),
        ("repeat_take", "D.range(3).repeat(3).take(7)"),
        ("repeat_2", "D.range(3).repeat(2)"),
        ("take_all", "D.range(4).take(-1)"),
        ("skip", "D.range(10).skip(7)"),
        ("skip_past_end", "D.range(3).skip(5)"),
        ("shard", "D.range(10).shard(3, 1)"),
        ("shard_0", "D.range(10).shard(4, 0)"),
        ("zip", "D.zip((D.range(1, 4), D.range(4, 7)))"),
        ("zip_shortest", "D.zip((D.range(3), D.range(10, 15)))"),
        ("concatenate", "D.range(1, 4).concatenate(D.range(4, 8))"),
        ("enumerate", "D.from_tensor_slices(np.array([7, 8, 9], dtype=np.int64)).enumerate(start=5)"),
        ("filter_even", "D.range(10).filter(lambda x: x % 2 == 0)"),
        ("map", "D.range(5).map(lambda x: x * 2 + 1)"),
        ("map_parallel", "D.range(20).map(lambda x: x * 2 + 1, num_parallel_calls=4)"),
        ("map_filter_batch", "D.range(20).map(lambda x: x * 2 + 1).filter(lambda x: x % 3 == 0).batch(2)"),
        ("cache_repeat", "D.range(5).map(lambda x: x * 2 + 1).cache().repeat(2)"),
        ("prefetch", "D.range(10).prefetch(2)"),
        ("batch_prefetch", "D.range(10).batch(4).prefetch(1)"),
        ("interleave_doc", "D.range(1, 6).interleave(lambda x: D.from_tensors(x).repeat(6), "
                           "cycle_length=2, block_length=4)"),
    ]
    out = [(name, expr, eval(expr)) for name, expr in exprs]
    for cycle in (2, 3):
        for block in (1, 2):
            out.append(interleave_case(cycle, block))
    out.append(("interleave_parallel", "interleave_c3_b2 with num_parallel_calls=2, deterministic",
                D.range(1, 6).interleave(lambda x: D.range(10 * x, 10 * x + x), cycle_length=3,
                                         block_length=2, num_parallel_calls=2, deterministic=True)))
    return out


def component(t):
    a = np.asarray(t)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "values": a.reshape(-1).tolist()}


def elements(ds):
    out = []
    for el in ds.as_numpy_iterator():
        parts = el if isinstance(el, tuple) else (el,)
        out.append([component(p) for p in parts])
    return out


def main(path):
    doc = {
        "generator": "tests/golden/data/make_golden.py",
        "tensorflow": tf.__version__,
        "numpy": np.__version__,
        "cases": [{"name": n, "tf": e, "cardinality": int(ds.cardinality().numpy()), "elements": elements(ds)}
                  for n, e, ds in cases()],
    }
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{path}: {len(doc['cases'])} cases, TensorFlow {tf.__version__}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "expected.json")
