#!/usr/bin/env python3
"""The training demo's --logdir output, read by the real TensorBoard (tests/xlang/train_digits.sh).

    check_demo_logdir.py PRINTED_LINES LOGDIR

Checks that the event file holds `epoch_loss` and `epoch_accuracy` for every epoch line the demo
printed, equal to the printed values (4 decimals), and the graph of its compiled training step.
"""
import re
import sys

from tensorboard.backend.event_processing import plugin_event_accumulator as pea
from tensorboard.util import tensor_util


def main(lines_path, logdir):
    printed = {}
    with open(lines_path) as f:
        for line in f:
            m = re.match(r"epoch +(\d+)/\d+  loss ([0-9.]+)  accuracy ([0-9.]+)", line)
            if m:
                printed[int(m.group(1))] = (float(m.group(2)), float(m.group(3)))
    acc = pea.EventAccumulator(logdir, size_guidance={pea.TENSORS: 0, pea.GRAPH: 1})
    acc.Reload()
    errors = []
    for tag, k in (("epoch_loss", 0), ("epoch_accuracy", 1)):
        if tag not in acc.Tags()[pea.TENSORS]:
            errors.append(f"{logdir}: no {tag}")
            continue
        got = {e.step: float(tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors(tag)}
        if sorted(got) != sorted(printed):
            errors.append(f"{logdir}: {tag} steps {sorted(got)}, printed epochs {sorted(printed)}")
        for step, v in got.items():
            if step in printed and abs(v - printed[step][k]) > 6e-5:
                errors.append(f"{logdir}: {tag} at step {step} is {v}, printed {printed[step][k]}")
    graph = acc.Graph() if acc.Tags().get(pea.GRAPH) else None
    if graph is None or not any(n.op == "MatMul" for n in graph.node):
        errors.append(f"{logdir}: no graph of train_step with a MatMul")
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
