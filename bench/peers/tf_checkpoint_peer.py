"""TensorFlow's save and restore of the variables bench/checkpoint_bench.cc saves: 256 MiB of float32
in 100 variables. Save is tf.train.Checkpoint.write plus an fsync of the files it wrote (Cairn's save
fsyncs); restore is tf.train.Checkpoint.restore into the existing variables, files in the page
cache. Median of RUNS. Used by bench/checkpoint_bench.sh.

    python tf_checkpoint_peer.py DIR [RUNS]   -> "@ tf/save_s ..", "@ tf/restore_s .."
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from common import median, report  # noqa: E402


def main():
    d = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    total = 256 << 18  # float32 values, as in checkpoint_bench.cc
    n_vars = 100
    rng = np.random.default_rng(1)
    m = tf.Module()
    m.vs = [tf.Variable((rng.standard_normal(total // n_vars + (i < total % n_vars)) * 0.05).astype(np.float32))
            for i in range(n_vars)]
    ckpt = tf.train.Checkpoint(m=m)

    def save(i):
        prefix = ckpt.write(os.path.join(d, f"tf_ckpt_{i}"))
        for name in os.listdir(d):
            if name.startswith(f"tf_ckpt_{i}."):
                fd = os.open(os.path.join(d, name), os.O_RDONLY)
                os.fsync(fd)
                os.close(fd)
        return prefix

    save_times = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        prefix = save(i)
        if i:  # the first one builds the save graph
            save_times.append(time.perf_counter() - t0)
    restore_times = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        ckpt.restore(prefix).expect_partial()  # save_counter is not in a write()
        if i:
            restore_times.append(time.perf_counter() - t0)
    report("tf/save_s", median(save_times))
    report("tf/restore_s", median(restore_times))
    for name in os.listdir(d):
        if name.startswith("tf_ckpt_") or name == "checkpoint":
            os.remove(os.path.join(d, name))


if __name__ == "__main__":
    main()
