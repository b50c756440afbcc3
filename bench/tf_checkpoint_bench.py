"""Makes a TensorFlow checkpoint of MiB megabytes of float32 (16 variables) and times TensorFlow's
own restore of it: tf.train.Checkpoint(...).restore into existing variables (read, CRC-checked and
assigned by RestoreV2), and tf.train.load_checkpoint + get_tensor of every key; best of RUNS, files in
the page cache. Used by bench/tf_checkpoint_bench.sh.

    python tf_checkpoint_bench.py DIR [MiB] [RUNS]   -> prints "tf_restore_s ..", "tf_reader_s .."
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import tensorflow as tf  # noqa: E402


def main():
    d = sys.argv[1]
    mib = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    n_vars = 16
    per = mib * (1 << 20) // 4 // n_vars
    m = tf.Module()
    m.vs = [tf.Variable(tf.random.stateless_uniform([per], seed=[i, 1])) for i in range(n_vars)]
    prefix = tf.train.Checkpoint(m=m).write(os.path.join(d, "ckpt"))
    print("prefix", prefix)
    target = tf.Module()
    target.vs = [tf.Variable(tf.zeros([per])) for _ in range(n_vars)]
    ckpt = tf.train.Checkpoint(m=target)

    def restore():
        ckpt.restore(prefix).expect_partial()
        # Touch the values so any lazy work is done.
        return float(tf.add_n([tf.reduce_sum(v[:1]) for v in target.vs]))

    def reader():
        r = tf.train.load_checkpoint(prefix)
        return sum(r.get_tensor(k).nbytes for k in r.get_variable_to_shape_map() if k != "_CHECKPOINTABLE_OBJECT_GRAPH")

    for name, fn in (("tf_restore_s", restore), ("tf_reader_s", reader)):
        fn()  # warm-up (page cache, graph building)
        best = 1e30
        for _ in range(runs):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        print(name, f"{best:.6f}")


if __name__ == "__main__":
    main()
