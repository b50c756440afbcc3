"""Peer figures for bench/graph_bench section 2: the same 20-op elementwise chain on 1M float32
(4 x [mul, add, maximum, sub, sigmoid]) in PyTorch (eager and torch.compile) and TensorFlow (eager,
tf.function, tf.function with XLA), median of 31 runs each, on as many threads as Cairn's pool (torch also on
one thread; the faster figure counts).

    chain_peer.py [--threads N] [--skip-tf] [--skip-torch]

Run from the bench venv (~/.cache/cairn/bench-venv) right after graph_bench, on the same machine;
bench/graph_bench.sh does both. Prints `@ peer/<name> <ms>` lines for the script's ratios."""
import argparse

from common import median_seconds

N = 1 << 20
REPS = 31


def median_ms(fn, reps=REPS):
    return median_seconds(fn, reps) * 1e3


def chain20_of(maximum, sigmoid):
    """The chain with a framework's maximum-with-a-scalar and sigmoid."""

    def chain20(x):
        for _ in range(4):
            x = x * 0.99
            x = x + 0.01
            x = maximum(x, -1.0)
            x = 0.5 - x
            x = sigmoid(x)
        return x

    return chain20


def report(name, ms):
    print(f"@ peer/{name} {ms:.4f}", flush=True)


def torch_figures(threads):
    import torch

    torch.set_num_threads(threads)

    # The fastest natural spelling: clamp_min with a Python scalar (torch.maximum needs a tensor
    # operand and is several times slower in eager mode).
    chain20 = chain20_of(torch.clamp_min, torch.sigmoid)

    x = torch.full([N], 0.1, dtype=torch.float32)
    # On a loaded machine torch's OpenMP threads can be far slower than one thread, so both are
    # measured and the faster counts (the harder peer).
    counts = sorted({1, threads})
    with torch.inference_mode():
        # Eager first: torch.compile leaves compile workers behind that would compete for the CPUs.
        eager = {}
        for t in counts:
            torch.set_num_threads(t)
            eager[t] = median_ms(lambda: chain20(x))
        compiled = torch.compile(chain20)
        compiled(x)  # compiles (tens of seconds) outside the timing
        fused = {}
        for t in counts:
            torch.set_num_threads(t)
            fused[t] = median_ms(lambda: compiled(x))
    report("torch_eager", min(eager.values()))
    report("torch_compile", min(fused.values()))
    each = ", ".join(f"{t} threads: eager {eager[t]:.2f} ms, compile {fused[t]:.2f} ms" for t in counts)
    print(f"# torch {torch.__version__}: {each}", flush=True)


def tf_figures(threads):
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)

    chain20 = chain20_of(tf.maximum, tf.sigmoid)

    x = tf.fill([N], 0.1)
    graph = tf.function(chain20)
    xla = tf.function(chain20, jit_compile=True)
    report("tf_eager", median_ms(lambda: chain20(x).numpy()))
    report("tf_function", median_ms(lambda: graph(x).numpy()))
    report("tf_xla", median_ms(lambda: xla(x).numpy()))
    print(f"# tensorflow {tf.__version__}, {threads} intra-op threads", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-tf", action="store_true")
    parser.add_argument("--skip-torch", action="store_true")
    args = parser.parse_args()
    if not args.skip_torch:
        torch_figures(args.threads)
    if not args.skip_tf:
        tf_figures(args.threads)


if __name__ == "__main__":
    main()
