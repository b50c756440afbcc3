#!/usr/bin/env python3
"""Reads the "@ key value" lines of data_bench and the peers' scripts (files given as arguments) and
prints the ratios the issue's targets are about. Every ratio compares figures of one run."""
import sys


def load(paths):
    figures = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.startswith("@ "):
                    _, key, value = line.split()
                    figures[key] = float(value)
    return figures


def guide(f):
    keys = [k[len("guide."):-len(".ideal_s")] for k in f if k.startswith("guide.") and k.endswith(".ideal_s")]
    if not keys:
        return
    print("tf.data performance guide (target: Cairn within 10% of the ideal)")
    print(f"  {'pipeline':24s} {'ideal':>8s} {'Cairn':>8s} {'/ideal':>7s} {'tf.data':>8s} {'/ideal':>7s}")
    for k in keys:
        ideal, ours, tf = f[f"guide.{k}.ideal_s"], f.get(f"guide.{k}.s"), f.get(f"guide.{k}.tf_s")
        tf_cols = f"{tf * 1e3:6.1f}ms {tf / ideal:6.2f}x" if tf else f"{'-':>8s} {'-':>7s}"
        verdict = "ok" if ours and ours <= 1.10 * ideal else "MISSED"
        print(f"  {k:24s} {ideal * 1e3:6.1f}ms {ours * 1e3:6.1f}ms {ours / ideal:6.2f}x {tf_cols}  {verdict}")


def images(f):
    ours = f.get("images.cairn.eps")
    if ours is None:
        return
    print("images: elements/s (target: >= 2x tf.data)")
    for k in sorted(k for k in f if k.startswith("images.") and k.endswith(".eps")):
        print(f"  {k[len('images.'):-len('.eps')]:16s} {f[k]:12.0f}")
    tf = f.get("images.tf.eps")
    if tf:
        print(f"  Cairn / tf.data: {ours / tf:.2f}x  {'ok' if ours >= 2 * tf else 'MISSED'}")
    torch = [v for k, v in f.items() if k.startswith("images.torch_w")]
    if torch:
        print(f"  Cairn / PyTorch DataLoader (its faster num_workers): {ours / max(torch):.2f}x")


def tfrecord(f):
    sizes = sorted(int(k.split(".")[1]) for k in f if k.startswith("tfrecord.") and k.endswith(".ratio"))
    if not sizes:
        return
    print("TFRecord through tfrecord -> prefetch against read() of the files (target >= 0.8x)")
    for s in sizes:
        r = f[f"tfrecord.{s}.ratio"]
        others = "; ".join(f"{label} {f[f'tfrecord.{s}.{k}']:.2f}x" for k, label in
                           (("bare_ratio", "source alone"), ("batched_ratio", "batch(32)->prefetch"),
                            ("reader_ratio", "cairn_record_reader")) if f"tfrecord.{s}.{k}" in f)
        tf = f.get(f"tfrecord.{s}.tf_ratio")
        if tf:
            others += f"; tf.data {tf:.2f}x, Cairn / tf.data {f[f'tfrecord.{s}.rps'] / f[f'tfrecord.{s}.tf_rps']:.1f}x records/s"
        print(f"  {s:8d}-byte records: {f[f'tfrecord.{s}.gbps']:6.2f} GB/s vs {f[f'tfrecord.{s}.raw_gbps']:6.2f} GB/s: "
              f"{r:.2f}x  {'ok' if r >= 0.8 else 'MISSED'}  ({others})")


def checkpoints(f):
    keys = sorted(k[len("ckpt."):-len(".bytes")] for k in f if k.startswith("ckpt.") and k.endswith(".bytes"))
    if not keys:
        return
    print("iterator checkpoints (cairn_iterator_save; tf: tf.train.Checkpoint(iterator).write, files included)")
    for k in keys:
        print(f"  {k:28s} {f[f'ckpt.{k}.bytes']:12.0f} bytes  {f[f'ckpt.{k}.save_us']:10.1f} us")


def main():
    f = load(sys.argv[1:])
    for section in (guide, images, tfrecord, checkpoints):
        section(f)


if __name__ == "__main__":
    main()
