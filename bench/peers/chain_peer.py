"""Peer figures for bench/graph_bench section 2: the same 20-op elementwise chain on 1M float32
(4 x [mul, add, maximum, sub, sigmoid]) in TensorFlow eager and tf.function, median of 31 runs.
Run from the test venv (~/.cache/cairn/venv) right after graph_bench, on the same machine."""
import tensorflow as tf

from common import median_seconds


def chain20(x):
    for _ in range(4):
        x = x * 0.99
        x = x + 0.01
        x = tf.maximum(x, -1.0)
        x = 0.5 - x
        x = tf.sigmoid(x)
    return x


def median_ms(fn, reps=31):
    return median_seconds(fn, reps) * 1e3


def main():
    x = tf.fill([1 << 20], 0.1)
    graph = tf.function(chain20)
    xla = tf.function(chain20, jit_compile=True)
    print(f"TF {tf.__version__} ({tf.config.threading.get_intra_op_parallelism_threads() or 'default'} intra-op threads):")
    print(f"  eager {median_ms(lambda: chain20(x).numpy()):.2f} ms, tf.function {median_ms(lambda: graph(x).numpy()):.2f} ms, "
          f"tf.function(jit_compile) {median_ms(lambda: xla(x).numpy()):.2f} ms")


if __name__ == "__main__":
    main()
