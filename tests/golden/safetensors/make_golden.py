"""Writes the safetensors golden files with the reference implementation (the `safetensors` package,
its Rust core) and records what each holds in expected.json. Run from the repository root:

    ~/.cache/cairn/bench-venv/bin/python tests/golden/safetensors/make_golden.py tests/golden/safetensors

Needs safetensors (0.8.0 made the committed files), numpy and torch (for bfloat16 and the float8
types, which numpy lacks). The values are fixed (no random numbers), so a rerun with the same
package version gives the same bytes.
"""
import json
import math
import os
import sys

import numpy as np
import safetensors
import safetensors.numpy
import safetensors.torch
import torch


def values_of(t):
    """Every element as JSON numbers, row-major: floats as Python floats (NaN/inf as strings),
    complex as [re, im], bool as 0/1."""
    t = t.detach().reshape(-1)
    if t.dtype == torch.complex64:
        return [[float(v.real), float(v.imag)] for v in t.tolist()]
    if t.dtype in (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                   torch.uint16, torch.uint32, torch.uint64):
        return [int(v) for v in t.tolist()]
    out = []
    for v in t.to(torch.float64).tolist():
        out.append(v if math.isfinite(v) else str(v))
    return out


ST_NAMES = {
    torch.bool: "BOOL", torch.uint8: "U8", torch.int8: "I8", torch.float8_e5m2: "F8_E5M2",
    torch.float8_e4m3fn: "F8_E4M3", torch.int16: "I16", torch.uint16: "U16", torch.float16: "F16",
    torch.bfloat16: "BF16", torch.int32: "I32", torch.uint32: "U32", torch.float32: "F32",
    torch.complex64: "C64", torch.float64: "F64", torch.int64: "I64", torch.uint64: "U64",
}


def describe(tensors):
    return {name: {"dtype": ST_NAMES[t.dtype], "shape": list(t.shape), "values": values_of(t)}
            for name, t in tensors.items()}


def ramp(n, dtype, scale=1.0, offset=0.0):
    return (torch.arange(n, dtype=torch.float64) * scale + offset).to(dtype)


def main(out):
    expected = {"safetensors_version": safetensors.__version__, "files": {}}

    # 1. Every Cairn dtype (the writer test re-serializes it and compares bytes), one metadata key
    # (the package writes metadata from a hash map, so several keys come out in varying order).
    cairn = {
        "bool": torch.tensor([True, False, True]),
        "u8": torch.tensor([0, 1, 255], dtype=torch.uint8),
        "i8": torch.tensor([-128, 0, 127], dtype=torch.int8),
        "i16": torch.tensor([[-32768, 0], [1, 32767]], dtype=torch.int16),
        "f16": torch.tensor([0.5, -2.0, 65504.0, float("inf")], dtype=torch.float16),
        "bf16": torch.tensor([1.0, -3.5, 1e30], dtype=torch.bfloat16),
        "i32": ramp(6, torch.int32, 1000, -2000).reshape(2, 3),
        "f32": ramp(24, torch.float32, 0.25, -3).reshape(2, 3, 4),
        "c64": torch.tensor([1 + 2j, -0.5 - 4j], dtype=torch.complex64),
        "f64": torch.tensor([math.pi, -1e-300], dtype=torch.float64),
        "i64": torch.tensor([-(2 ** 63), 2 ** 62 + 7], dtype=torch.int64),
        "scalar": torch.tensor(2.5, dtype=torch.float32),
        "empty": torch.zeros((0, 3), dtype=torch.float32),
        "a.weight": ramp(5, torch.float32, -1.5, 2),
        'odd "name"\n\\ \u00e9\u6f22\x01': torch.tensor([7], dtype=torch.int64),
    }
    path = os.path.join(out, "cairn_dtypes.safetensors")
    safetensors.torch.save_file(cairn, path, metadata={"format": "pt"})
    expected["files"]["cairn_dtypes.safetensors"] = {"metadata": {"format": "pt"}, "tensors": describe(cairn)}

    # 2. Dtypes Cairn lacks (U16, U32, U64: an error naming the tensor) beside ones it has.
    others = {
        "u16": torch.tensor([0, 65535], dtype=torch.uint16),
        "u32": torch.tensor([1, 4294967295], dtype=torch.uint32),
        "u64": torch.tensor([2, 2 ** 64 - 1], dtype=torch.uint64),
        "f32": torch.tensor([1.0, 2.0], dtype=torch.float32),
    }
    path = os.path.join(out, "unsigned.safetensors")
    safetensors.torch.save_file(others, path)
    desc = describe({k: v for k, v in others.items() if k != "u64"})
    desc["u64"] = {"dtype": "U64", "shape": [2], "values": [2, 2 ** 64 - 1]}
    expected["files"]["unsigned.safetensors"] = {"metadata": None, "tensors": desc}

    # 3. Every F8 byte, with torch's float32 value of each (the conversion Cairn must match).
    all_bytes = torch.arange(256, dtype=torch.int64).to(torch.uint8)
    f8 = {
        "e5m2": all_bytes.clone().view(torch.float8_e5m2).reshape(16, 16),
        "e4m3": all_bytes.clone().view(torch.float8_e4m3fn).reshape(16, 16),
    }
    path = os.path.join(out, "f8.safetensors")
    safetensors.torch.save_file(f8, path)
    expected["files"]["f8.safetensors"] = {
        "metadata": None,
        "tensors": {name: {"dtype": ST_NAMES[t.dtype], "shape": list(t.shape), "values": values_of(t.to(torch.float32))}
                    for name, t in f8.items()},
    }

    # 4. numpy's writer, no metadata: only Cairn dtypes, several tensors of one dtype (name order).
    np_tensors = {
        "layer.1.bias": np.array([0.1, 0.2, 0.3], dtype=np.float32),
        "layer.0.bias": np.array([1.0, -1.0], dtype=np.float32),
        "layer.0.kernel": np.arange(6, dtype=np.float32).reshape(3, 2),
        "step": np.array(12345, dtype=np.int64),
        "mask": np.array([[True, False], [False, True]]),
    }
    path = os.path.join(out, "numpy.safetensors")
    safetensors.numpy.save_file(np_tensors, path)
    expected["files"]["numpy.safetensors"] = {
        "metadata": None, "tensors": describe({k: torch.from_numpy(np.array(v)) for k, v in np_tensors.items()})}

    # 5. No tensors at all: the header is "{}" and six spaces.
    path = os.path.join(out, "empty.safetensors")
    safetensors.numpy.save_file({}, path)
    expected["files"]["empty.safetensors"] = {"metadata": None, "tensors": {}}

    # 6. A sharded model laid out as transformers' save_pretrained lays it out: shards written by
    # the package, the index by json.dumps(indent=2, sort_keys=True) (transformers' own call).
    shard_dir = os.path.join(out, "sharded")
    os.makedirs(shard_dir, exist_ok=True)
    shards = [
        {"embed.weight": ramp(12, torch.float32, 0.5).reshape(4, 3)},
        {"block.0.weight": ramp(9, torch.float16, -0.25).reshape(3, 3), "block.0.bias": ramp(3, torch.float16)},
        {"head.weight": ramp(6, torch.bfloat16, 2).reshape(2, 3)},
    ]
    weight_map, total = {}, 0
    for k, shard in enumerate(shards):
        name = f"model-{k + 1:05d}-of-{len(shards):05d}.safetensors"
        safetensors.torch.save_file(shard, os.path.join(shard_dir, name), metadata={"format": "pt"})
        for tname, t in shard.items():
            weight_map[tname] = name
            total += t.numel() * t.element_size()
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    with open(os.path.join(shard_dir, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    merged = {}
    for shard in shards:
        merged.update(shard)
    expected["files"]["sharded"] = {"metadata": {"format": "pt"}, "tensors": describe(merged)}

    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    # The package writes through a temporary file, which leaves mode 0600.
    for root, _, files in os.walk(out):
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
