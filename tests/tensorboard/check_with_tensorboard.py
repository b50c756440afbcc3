#!/usr/bin/env python3
"""Checks files Cairn wrote (tests/tensorboard/write_sample.c) with the real TensorBoard.

Nothing here parses Cairn's formats itself: TensorBoard's own event accumulator (what its server
uses), its record reader and its HTTP data API read them. See README.md.

    check_with_tensorboard.py OUT       (OUT: the directory write_sample filled)
"""
import gzip
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib

import numpy as np
from tensorboard.backend.event_processing import event_file_loader
from tensorboard.backend.event_processing import plugin_event_accumulator as pea
from tensorboard.compat.tensorflow_stub import pywrap_tensorflow
from tensorboard.util import tensor_util

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def read_records_with_tensorboard(path):
    """All records of an uncompressed TFRecord file, through TensorBoard's own reader."""
    reader = pywrap_tensorflow.PyRecordReader_New(path, 0, None, None)
    out = []
    while True:
        try:
            reader.GetNext()
        except Exception as e:  # the reader raises errors.OutOfRangeError at the end
            if type(e).__name__ == "OutOfRangeError":
                return out
            raise
        out.append(reader.record())


def expected_records(out_dir):
    with open(os.path.join(out_dir, "records", "records.txt")) as f:
        return [bytes.fromhex(line.split(" ", 1)[1].strip()) for line in f if line.strip()]


def check_records(out_dir):
    want = expected_records(out_dir)
    rec_dir = os.path.join(out_dir, "records")
    got = read_records_with_tensorboard(os.path.join(rec_dir, "plain.tfrecord"))
    check(got == want, f"plain.tfrecord: TensorBoard read {len(got)} records, want {len(want)} equal ones")
    # TensorBoard's reader has no decompression: inflate the streams with Python's zlib/gzip (the
    # formats TensorFlow's ZLIB and GZIP options write) and read the framing that remains.
    for name, inflate in (("zlib", zlib.decompress), ("gzip", gzip.decompress)):
        with open(os.path.join(rec_dir, f"{name}.tfrecord"), "rb") as f:
            raw = inflate(f.read())
        with tempfile.NamedTemporaryFile(suffix=".tfrecord") as tmp:
            tmp.write(raw)
            tmp.flush()
            got = read_records_with_tensorboard(tmp.name)
        check(got == want, f"{name}.tfrecord: {len(got)} records after inflating, want {len(want)} equal ones")


def event_files(run_dir):
    return sorted(os.path.join(run_dir, f) for f in os.listdir(run_dir) if "tfevents" in f)


def check_events(run_dir):
    files = event_files(run_dir)
    check(len(files) == 1, f"{run_dir}: one event file, found {files}")
    if not files:
        return
    name = os.path.basename(files[0])
    check(name.startswith("events.out.tfevents.") and name.split(".")[3].isdigit() and len(name.split(".")[3]) == 10,
          f"event file name {name} is events.out.tfevents.<10-digit secs>.<host>...")
    raw = list(event_file_loader.RawEventFileLoader(files[0]).Load())
    from tensorboard.compat.proto import event_pb2
    first = event_pb2.Event.FromString(raw[0])
    check(first.file_version == "brain.Event:2", f"first event's file_version is {first.file_version!r}")

    acc = pea.EventAccumulator(run_dir, size_guidance={pea.TENSORS: 0, pea.GRAPH: 1})
    acc.Reload()
    tags = acc.Tags()
    tensors = set(tags[pea.TENSORS])
    for tag in ("loss", "accuracy", "weights", "digits", "rgb", "notes", "tone", "traced/loss"):
        check(tag in tensors, f"tag {tag!r} in TensorBoard's tensor tags {sorted(tensors)}")

    def plugin(tag):
        return acc.SummaryMetadata(tag).plugin_data.plugin_name

    # Scalars: steps 1..20, loss = 1/step, accuracy = 0.05 * step.
    loss = acc.Tensors("loss")
    check(plugin("loss") == "scalars", f"loss's plugin is {plugin('loss')!r}")
    check([e.step for e in loss] == list(range(1, 21)), f"loss steps {[e.step for e in loss]}")
    vals = [float(tensor_util.make_ndarray(e.tensor_proto)) for e in loss]
    check(np.allclose(vals, [1.0 / s for s in range(1, 21)], rtol=1e-6), f"loss values {vals}")
    acc_vals = [float(tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors("accuracy")]
    check(np.allclose(acc_vals, [0.05 * s for s in range(1, 21)], rtol=1e-6), f"accuracy values {acc_vals}")

    # A scalar logged inside a compiled function, replayed 5 times at steps 100..104: value step/1000.
    traced = acc.Tensors("traced/loss")
    check([e.step for e in traced] == list(range(100, 105)), f"traced/loss steps {[e.step for e in traced]}")
    tvals = [float(tensor_util.make_ndarray(e.tensor_proto)) for e in traced]
    check(np.allclose(tvals, [s / 1000.0 for s in range(100, 105)], rtol=1e-6), f"traced/loss values {tvals}")

    # Histogram of 0, 1, ..., 999 at step 1 in TF2's 30 equal buckets: (left, right, count) rows.
    check(plugin("weights") == "histograms", f"weights' plugin is {plugin('weights')!r}")
    h = tensor_util.make_ndarray(acc.Tensors("weights")[0].tensor_proto)
    check(h.shape == (30, 3), f"histogram shape {h.shape}")
    if h.shape == (30, 3):
        check(abs(h[0, 0] - 0.0) < 1e-9 and abs(h[-1, 1] - 999.0) < 1e-9, f"histogram range {h[0,0]}..{h[-1,1]}")
        check(int(round(h[:, 2].sum())) == 1000, f"histogram counts sum to {h[:, 2].sum()}")
        width = 999.0 / 30
        want = np.bincount(np.minimum((np.arange(1000) / width).astype(int), 29), minlength=30)
        check(np.array_equal(h[:, 2].astype(int), want), f"histogram counts {h[:, 2]} want {want}")

    # Images: [width, height, png...] rows; PNGs decode (PIL) to the declared size.
    from PIL import Image
    import io
    for tag, (w, hgt, n, mode) in {"digits": (8, 8, 2, "L"), "rgb": (24, 16, 1, "RGB")}.items():
        check(plugin(tag) == "images", f"{tag}'s plugin is {plugin(tag)!r}")
        t = tensor_util.make_ndarray(acc.Tensors(tag)[0].tensor_proto)
        check(t.shape == (2 + n,), f"{tag}: image tensor shape {t.shape}, want ({2 + n},)")
        if t.shape == (2 + n,):
            check(int(t[0]) == w and int(t[1]) == hgt, f"{tag}: size {t[0]}x{t[1]}, want {w}x{hgt}")
            for k in range(n):
                img = Image.open(io.BytesIO(t[2 + k]))
                check(img.size == (w, hgt) and img.mode == mode, f"{tag}[{k}]: PNG {img.size} {img.mode}")
        if tag == "digits" and t.shape == (4,):
            px = np.array(Image.open(io.BytesIO(t[2])))
            check(px[0, 0] == 0 and px[7, 7] == 63 * 4 % 256, f"digits[0] pixels {px[0,0]}, {px[7,7]}")

    # Text.
    check(plugin("notes") == "text", f"notes' plugin is {plugin('notes')!r}")
    t = tensor_util.make_ndarray(acc.Tensors("notes")[0].tensor_proto)
    check(t.reshape(-1)[0] == b"hello **cairn**", f"text {t!r}")

    # Audio: [k, 2] of (WAV, label); the WAV is 16-bit PCM at 8000 Hz, 2000 frames.
    check(plugin("tone") == "audio", f"tone's plugin is {plugin('tone')!r}")
    t = tensor_util.make_ndarray(acc.Tensors("tone")[0].tensor_proto)
    check(t.shape == (1, 2), f"audio tensor shape {t.shape}")
    if t.shape == (1, 2):
        import wave
        with wave.open(io.BytesIO(t[0, 0])) as wav:
            check((wav.getframerate(), wav.getsampwidth(), wav.getnchannels(), wav.getnframes()) == (8000, 2, 1, 2000),
                  f"wav params {wav.getparams()}")

    # The graph of a compiled function with a cond and a while loop: a GraphDef with both as functions.
    graph = acc.Graph()
    ops = {n.op for n in graph.node}
    check("Placeholder" in ops and len(graph.node) >= 5, f"graph ops {sorted(ops)}")
    check(len(graph.library.function) >= 3, f"graph library has {len(graph.library.function)} functions (cond branches, while cond/body)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_server(logdir, load_fast):
    """A real TensorBoard server on 127.0.0.1 serves our scalars over its HTTP data API."""
    port = free_port()
    tb = os.path.join(os.path.dirname(sys.executable), "tensorboard")
    proc = subprocess.Popen([tb, "--logdir", logdir, "--host", "127.0.0.1", "--port", str(port),
                             f"--load_fast={'true' if load_fast else 'false'}", "--reload_interval", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    mode = "data server (load_fast)" if load_fast else "Python loader"
    try:
        url = f"http://127.0.0.1:{port}/data/plugin/scalars/scalars?run=run1&tag=loss"
        deadline = time.time() + 60
        rows = None
        while time.time() < deadline and rows is None:
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    body = json.loads(r.read())
                    if body:
                        rows = body
            except Exception:
                pass
            if rows is None:
                time.sleep(0.5)
        check(rows is not None, f"TensorBoard ({mode}) served run1/loss within 60 s")
        if rows:
            check([r[1] for r in rows] == list(range(1, 21)), f"served steps ({mode}) {[r[1] for r in rows]}")
            check(np.allclose([r[2] for r in rows], [1.0 / s for s in range(1, 21)], rtol=1e-6), f"served values ({mode})")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def check_profile(logdir):
    prof = os.path.join(logdir, "plugins", "profile")
    runs = os.listdir(prof) if os.path.isdir(prof) else []
    check(len(runs) == 1, f"one profile run under {prof}: {runs}")
    if not runs:
        return
    files = [f for f in os.listdir(os.path.join(prof, runs[0])) if f.endswith(".trace.json.gz")]
    check(len(files) == 1, f"one <host>.trace.json.gz in the profile run: {files}")
    if files:
        with gzip.open(os.path.join(prof, runs[0], files[0])) as f:
            trace = json.load(f)
        names = {e.get("name") for e in trace.get("traceEvents", []) if e.get("ph") == "X"}
        # Replayed nodes are named as in the GraphDef: "<Op>_<node>".
        check(any(n == "MatMul" or n.startswith("MatMul_") for n in names if n),
              f"profile has a MatMul op event: {sorted(n for n in names if n)[:20]}")


def main(out_dir):
    check_records(out_dir)
    check_events(os.path.join(out_dir, "logs", "run1"))
    check_profile(os.path.join(out_dir, "logs"))
    check_server(os.path.join(out_dir, "logs"), load_fast=False)
    check_server(os.path.join(out_dir, "logs"), load_fast=True)
    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print("TensorBoard read every record, event, image, histogram, text, audio and graph Cairn wrote")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
