"""Reads the files tests/safetensors/write_sample wrote (Cairn's writer) with the real safetensors
package and compares every tensor with expected.json: the metadata (checksum keys included) must be
plain strings to it, the sharded index must name every shard, and the bytes must parse as the
reference parses them. Exits 0 when all match, 1 otherwise; prints SKIP and exits 0 when the venv
has no safetensors package (tools/setup decides what the venv holds).

    python tests/safetensors/check_with_python.py DIR
"""
import json
import os
import sys

try:
    import numpy as np
    from safetensors import safe_open
except ImportError as e:  # pragma: no cover - depends on the venv
    print(f"SKIP: tests/safetensors: the venv lacks safetensors or numpy ({e})")
    sys.exit(0)

try:
    import torch  # reads bfloat16 itself
except ImportError:
    torch = None
    try:
        import ml_dtypes  # noqa: F401  registers NumPy's "bfloat16", which safetensors' NumPy reader asks for
    except ImportError:
        pass


def as_list(array, dtype):
    if dtype == "complex64":
        return [[float(v.real), float(v.imag)] for v in array.reshape(-1)]
    return [float(v) if dtype in ("float16", "bfloat16", "float32", "float64") else int(v) for v in array.reshape(-1)]


def check_file(path, expected, names, failures):
    framework = "pt" if torch is not None else "np"
    with safe_open(path, framework=framework) as f:
        meta = f.metadata()
        if meta.get("format") != "pt" or meta.get("written_by") != "cairn":
            failures.append(f"{path}: metadata {meta}")
        for name in f.keys():
            if not any(k.startswith("cairn.checksum.") for k in meta):
                failures.append(f"{path}: no checksum keys in {sorted(meta)}")
            want = expected[name]
            t = f.get_tensor(name)
            if torch is not None:
                if want["dtype"] == "bfloat16":
                    t = t.float()
                t = t.numpy()
            got = as_list(np.asarray(t), want["dtype"])
            if list(t.shape) != want["shape"] or got != want["values"]:
                failures.append(f"{path}: {name!r}: got {list(t.shape)} {got}, want {want['shape']} {want['values']}")
            names.add(name)


def main(out):
    with open(os.path.join(out, "expected.json")) as f:
        expected = json.load(f)
    failures = []
    seen = set()
    check_file(os.path.join(out, "single.safetensors"), expected, seen, failures)
    if seen != set(expected):
        failures.append(f"single.safetensors: names {sorted(seen)} != {sorted(expected)}")
    sharded = os.path.join(out, "sharded")
    with open(os.path.join(sharded, "model.safetensors.index.json")) as f:
        index = json.load(f)
    seen = set()
    for shard in sorted(set(index["weight_map"].values())):
        check_file(os.path.join(sharded, shard), expected, seen, failures)
    if seen != set(index["weight_map"]) or seen != set(expected):
        failures.append(f"sharded: names {sorted(seen)} != weight_map {sorted(index['weight_map'])}")
    for failure in failures:
        print("FAIL:", failure)
    print(f"tests/safetensors: {'FAILED' if failures else 'ok'}: {len(expected)} tensors, one file and "
          f"{len(set(index['weight_map'].values()))} shards read by safetensors")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
