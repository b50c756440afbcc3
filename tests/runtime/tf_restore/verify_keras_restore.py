"""Real TensorFlow reads a bundle Cairn wrote (tf_roundtrip_test.cc):

    python verify_keras_restore.py keras|module <prefix> <expected.txt>

1. tf.train.load_checkpoint lists every key and loads every value (name-based access).
2. keras: tf.train.Checkpoint(model=<Keras 3 Sequential: Input(8), Dense(16, relu), Dense(3)>,
   optimizer=<Adam, built on the model's variables>).restore(prefix).assert_consumed() succeeds.
   module: tf.train.Checkpoint(m=<tf.Module: blocks = [Block(w [2,3], b [3]) x 2], table = {"alpha":
   [2], "nested": {"deep": [int32 scalar, bool [1,2]]}}, scalar = float64>).restore(prefix)
   .assert_consumed() succeeds.
3. The restored variables equal Cairn's, listed in expected.txt one a line as "<name> <v0> <v1> ..."
   (%.9g, so float32 values compare exactly). keras: kernel0 bias0 kernel1 bias1, m0..m3 and v0..v3
   (Adam's slots of those, in that order), iterations, learning_rate. module: the paths below.
Exits 0 when all hold; prints what differs and exits 1 otherwise.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402


def restore_keras(prefix):
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(3)])
    opt = keras.optimizers.Adam(learning_rate=0.5)
    opt.build(model.trainable_variables)
    tf.train.Checkpoint(model=model, optimizer=opt).restore(prefix).assert_consumed()
    got = {}
    for i, v in enumerate(model.trainable_variables):
        got[("kernel" if i % 2 == 0 else "bias") + str(i // 2)] = v.numpy()
    for i in range(len(model.trainable_variables)):
        got[f"m{i}"] = opt._momentums[i].numpy()
        got[f"v{i}"] = opt._velocities[i].numpy()
    got["iterations"] = opt.iterations.numpy()
    got["learning_rate"] = opt.learning_rate.numpy()
    return got


class Block(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.zeros([2, 3]))
        self.b = tf.Variable(tf.zeros([3]))


def restore_module(prefix):
    root = tf.Module()
    root.blocks = [Block(), Block()]
    root.table = {"alpha": tf.Variable(tf.zeros([2])),
                  "nested": {"deep": [tf.Variable(0, dtype=tf.int32), tf.Variable([[False, False]])]}}
    root.scalar = tf.Variable(0.0, dtype=tf.float64)
    tf.train.Checkpoint(m=root).restore(prefix).assert_consumed()
    return {"blocks/0/w": root.blocks[0].w.numpy(), "blocks/0/b": root.blocks[0].b.numpy(),
            "blocks/1/w": root.blocks[1].w.numpy(), "blocks/1/b": root.blocks[1].b.numpy(),
            "table/alpha": root.table["alpha"].numpy(),
            "table/nested/deep/0": root.table["nested"]["deep"][0].numpy(),
            "table/nested/deep/1": root.table["nested"]["deep"][1].numpy().astype(np.int32),
            "scalar": root.scalar.numpy()}


def main(kind, prefix, expected_path):
    reader = tf.train.load_checkpoint(prefix)
    keys = sorted(reader.get_variable_to_shape_map())
    for k in keys:
        reader.get_tensor(k)  # every value loads (TensorFlow checks each CRC32C)
    print(f"load_checkpoint: {len(keys)} keys")
    got = restore_keras(prefix) if kind == "keras" else restore_module(prefix)
    print("restore(...).assert_consumed(): ok")
    bad = []
    with open(expected_path) as f:
        for line in f:
            name, *vals = line.split()
            have = np.asarray(got.pop(name)).reshape(-1)
            # %.9g round-trips float32 exactly once parsed back into float32.
            want = np.array([float(x) for x in vals]).astype(have.dtype)
            if want.shape != have.shape or not np.array_equal(want, have):
                bad.append(f"{name}: want {want[:4]}..., have {have[:4]}...")
    if got:
        bad.append(f"not in expected.txt: {sorted(got)}")
    if bad:
        print("\n".join(bad))
        return 1
    print("values: equal")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
