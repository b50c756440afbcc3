#!/usr/bin/env python3
"""Writes the golden TFRecord files in this folder with real TensorFlow (see README.md).

Run with a venv that has tensorflow-cpu==2.21.0 (not the test venv: TensorFlow is needed only to
remake these files, never at test time):
    python3 -m venv /tmp/tfv && /tmp/tfv/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tfv/bin/python tests/golden/tfrecord/make_golden.py tests/golden/tfrecord
"""
import os
import sys

import tensorflow as tf


def records():
    """Records of several sizes, including empty ones and ones that cross zlib's internal buffers."""
    out = [b"", b"a", b"hello, cairn", bytes(range(256))]
    out += [bytes([(i * 7 + j) % 251 for j in range(1000 + i)]) for i in range(5)]
    out.append(b"x" * 70000)
    out.append(b"")
    return out


def example(i):
    feats = {
        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
        "score": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5 * i, -1.25])),
        "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"item-%d" % i])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feats)).SerializeToString()


def main(out_dir):
    recs = records()
    for name, compression in (("plain", None), ("zlib", "ZLIB"), ("gzip", "GZIP")):
        opts = tf.io.TFRecordOptions(compression_type=compression) if compression else None
        with tf.io.TFRecordWriter(os.path.join(out_dir, f"records_{name}.tfrecord"), opts) as w:
            for r in recs:
                w.write(r)
    with tf.io.TFRecordWriter(os.path.join(out_dir, "examples.tfrecord")) as w:
        for i in range(4):
            w.write(example(i))
    # The expected contents, one line per record: its length and hex bytes.
    with open(os.path.join(out_dir, "records.txt"), "w") as f:
        for r in recs:
            f.write(f"{len(r)} {r.hex()}\n")
    print("tensorflow", tf.__version__)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
