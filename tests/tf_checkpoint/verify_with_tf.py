"""Reads a Cairn-written TensorFlow checkpoint (write_sample.cc) with real TensorFlow and checks every
key, dtype, shape and value, and that tf.train.latest_checkpoint finds it. Exit 0 when all match.

    python verify_with_tf.py DIR
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

DTYPES = ["float32", "float64", "int32", "uint8", "int16", "int8", "complex64", "int64", "bool", "bfloat16",
          "float16"]


def expected():
    want = {}
    for name in DTYPES:
        i = np.arange(6)
        x = ((7 * i) % 13).astype(np.float64) if name == "uint8" else ((7 * i) % 13 - 6).astype(np.float64)
        if name in ("float32", "float64", "bfloat16", "float16", "complex64"):
            x = x * 0.25
        if name == "bool":
            v = (i % 2 == 0)
        elif name == "complex64":
            v = (x - 0.5j * x).astype(np.complex64)
        else:
            v = tf.constant(x, dtype=tf.float64)
            v = tf.cast(v, getattr(tf, name)).numpy()
        want["v/" + name] = (getattr(tf, name), np.asarray(v).reshape(2, 3))
    want["step/.ATTRIBUTES/VARIABLE_VALUE"] = (tf.int64, np.int64(1234567890123))
    want["empty"] = (tf.float32, np.zeros([0, 3], np.float32))
    want["s/scalar"] = (tf.string, b"cairn")
    want["s/vector"] = (tf.string, np.array([b"", b"a", b"z" * 300, b"\x00\xff"], dtype=object))
    return want


def main():
    d = sys.argv[1]
    prefix = tf.train.latest_checkpoint(d)
    assert prefix == os.path.join(d, "ckpt-3"), prefix
    r = tf.train.load_checkpoint(prefix)
    shapes, dtypes = r.get_variable_to_shape_map(), r.get_variable_to_dtype_map()
    want = expected()
    assert set(shapes) == set(want), (sorted(shapes), sorted(want))
    listed = dict(tf.train.list_variables(prefix))
    assert set(listed) == set(want)
    for key, (dt, value) in want.items():
        assert dtypes[key] == dt, (key, dtypes[key], dt)
        got = r.get_tensor(key)
        assert list(shapes[key]) == list(np.shape(value)), (key, shapes[key], np.shape(value))
        if dt == tf.string:
            assert np.array_equal(np.asarray(got, dtype=object), np.asarray(value, dtype=object)), (key, got)
        else:
            assert np.asarray(got).dtype == np.asarray(value).dtype, (key, np.asarray(got).dtype)
            assert np.array_equal(np.asarray(got), np.asarray(value)), (key, got, value)
    # A restore through TensorFlow's ops (RestoreV2), not only the Python reader.
    v = tf.Variable(tf.zeros([2, 3], tf.float32))
    restored = tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=["v/float32"], shape_and_slices=[""],
                                    dtypes=[tf.float32])[0]
    v.assign(restored)
    assert np.array_equal(v.numpy(), want["v/float32"][1])
    print(f"verify_with_tf: TensorFlow {tf.__version__} read all {len(want)} keys of {prefix}: OK")


if __name__ == "__main__":
    main()
