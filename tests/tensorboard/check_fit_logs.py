#!/usr/bin/env python3
"""Checks the TensorBoard callback's files (examples/c/fit_digits --logdir) with the real TensorBoard.

TensorBoard's own event accumulator reads the runs "train" and "validation" as its server would:
the per-epoch scalars, the learning rate, the weight histograms and the training step's graph.

    check_fit_logs.py LOGDIR EPOCHS
"""
import os
import sys

from tensorboard.backend.event_processing import plugin_event_accumulator as pea
from tensorboard.util import tensor_util

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def load(run_dir):
    acc = pea.EventAccumulator(run_dir, size_guidance={pea.TENSORS: 0, pea.GRAPH: 1})
    acc.Reload()
    return acc


def steps_of(acc, tag):
    return [e.step for e in acc.Tensors(tag)] if tag in acc.Tags()[pea.TENSORS] else []


def main(logdir, epochs):
    train = load(os.path.join(logdir, "train"))
    for tag in ("epoch_loss", "epoch_accuracy", "epoch_learning_rate"):
        check(steps_of(train, tag) == list(range(epochs)), f"train/{tag}: steps {steps_of(train, tag)}")
    losses = [float(tensor_util.make_ndarray(e.tensor_proto)) for e in train.Tensors("epoch_loss")]
    check(len(losses) == epochs and losses[-1] < losses[0], f"train/epoch_loss decreases: {losses}")
    histograms = [t for t in train.Tags()[pea.TENSORS] if t.endswith("kernel_0")]
    check(len(histograms) == 2, f"train: one histogram per kernel, found {histograms}")
    for tag in histograms:
        meta = train.SummaryMetadata(tag)
        check(meta.plugin_data.plugin_name == "histograms", f"{tag}: plugin {meta.plugin_data.plugin_name}")
    check(train.Graph() is not None and len(train.Graph().node) > 0, "train: the training step's graph")
    validation = load(os.path.join(logdir, "validation"))
    check(len(steps_of(validation, "epoch_accuracy")) >= 1, "validation/epoch_accuracy is there")
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print(f"TensorBoard reads the fit callback's runs: {epochs} epochs of scalars, histograms, the graph")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
