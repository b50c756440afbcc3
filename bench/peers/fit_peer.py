"""The peers of bench/fit_bench.c: Keras model.fit and a PyTorch training loop on the digits MLP
(64 -> 64 relu -> 10, Adam lr 0.003, batch 32, sparse crossentropy on logits, accuracy), the same
80/20 split of examples/data/digits.csv (line i is a test sample when i % 5 == 4), on the CPU.

    fit_peer.py keras|torch DIGITS_CSV [epochs per run (5)] [runs (5)]

Prints "@ keras_fit_examples_per_s X" or "@ torch_loop_examples_per_s Y" (the median of the runs,
after a warm-up epoch). One peer per process: importing torch after tensorflow aborts (both
register the same LLVM options)."""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np

from common import median, report


def load(path):
    rows = np.loadtxt(path, delimiter=",", dtype=np.float32)
    train = np.array([i % 5 != 4 for i in range(len(rows))])
    x = rows[:, :64] / 16.0
    y = rows[:, 64].astype(np.int32)
    return x[train], y[train]


def keras_rates(x, y, epochs, runs):
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(2)
    tf.config.threading.set_inter_op_parallelism_threads(2)
    model = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(64, activation="relu"),
                                 tf.keras.layers.Dense(10)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.003),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    model.fit(x, y, batch_size=32, epochs=1, shuffle=True, verbose=0)  # warm-up: tracing
    rates = []
    for _ in range(runs):
        t0 = time.perf_counter()
        model.fit(x, y, batch_size=32, epochs=epochs, shuffle=True, verbose=0)
        rates.append(epochs * len(x) / (time.perf_counter() - t0))
    return rates


def torch_rates(x, y, epochs, runs):
    import torch

    torch.set_num_threads(2)
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    opt = torch.optim.Adam(model.parameters(), lr=0.003)
    loss_fn = torch.nn.CrossEntropyLoss()
    xt, yt = torch.from_numpy(x), torch.from_numpy(y).long()

    def epoch():
        perm = torch.randperm(len(xt))
        total, hits = 0.0, 0
        for i in range(0, len(xt), 32):
            idx = perm[i:i + 32]
            xb, yb = xt[idx], yt[idx]
            opt.zero_grad()
            logits = model(xb)
            loss = loss_fn(logits, yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)  # the loss metric, read each batch as Keras and Cairn do
            hits += (logits.argmax(1) == yb).sum().item()
        return total, hits

    epoch()
    rates = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(epochs):
            epoch()
        rates.append(epochs * len(xt) / (time.perf_counter() - t0))
    return rates


def main():
    peer, path = sys.argv[1], sys.argv[2]
    epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    x, y = load(path)
    if peer == "keras":
        rates, key = keras_rates(x, y, epochs, runs), "keras_fit_examples_per_s"
    elif peer == "torch":
        rates, key = torch_rates(x, y, epochs, runs), "torch_loop_examples_per_s"
    else:
        sys.exit(f"unknown peer {peer!r}: keras or torch")
    print(f"{peer} examples/s per run:", " ".join(f"{r:.0f}" for r in rates))
    report(key, median(rates))


if __name__ == "__main__":
    main()
