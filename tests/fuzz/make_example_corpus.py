#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/example_fuzzer.cc into corpus/example/ (plain python3).

Each seed is the fuzzer's input format: a flags byte (bit 0: SequenceExample; bits 1-7: the specs'
dtypes), then records as a 2-byte little-endian length and the bytes. The messages use the keys the
fuzzer's specs ask for ("a".."d"), packed and unpacked lists, and a few unknown fields.
"""
import os
import struct
import sys


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def ld(number, payload):  # a length-delimited field
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def floats(*xs, packed=True):
    if packed:
        return ld(2, ld(1, struct.pack(f"<{len(xs)}f", *xs)))
    return ld(2, b"".join(varint(1 << 3 | 5) + struct.pack("<f", x) for x in xs))


def int64s(*xs, packed=True):
    if packed:
        return ld(3, ld(1, b"".join(varint(x) for x in xs)))
    return ld(3, b"".join(varint(1 << 3) + varint(x) for x in xs))


def byteses(*bs):
    return ld(1, b"".join(ld(1, b) for b in bs))


def features(**kv):
    return b"".join(ld(1, ld(1, k.encode()) + ld(2, v)) for k, v in kv.items())


def feature_lists(**kv):
    return b"".join(ld(1, ld(1, k.encode()) + ld(2, b"".join(ld(1, s) for s in steps))) for k, steps in kv.items())


def example(**kv):
    return ld(1, features(**kv))


def sequence_example(context, lists):
    return ld(1, features(**context)) + ld(2, feature_lists(**lists))


def seed(flags, *records):
    return bytes([flags]) + b"".join(struct.pack("<H", len(r)) + r for r in records)


def main(out):
    os.makedirs(out, exist_ok=True)
    unknown = varint(9 << 3) + varint(5)
    seeds = {
        "float_int_bytes": seed(0b0000100, example(a=floats(1, 2), b=int64s(1, -1), c=byteses(b"xy", b""))),
        "unpacked": seed(0b0000010, example(a=int64s(3, 4, packed=False), b=int64s(5, packed=False)) + unknown,
                         example(a=floats(1, 2, packed=False), c=b"")),
        "bytes_default": seed(0b10101010, example(a=byteses(b"ab")), example(b=byteses(b"q"))),
        "sequence": seed(0b0000001, sequence_example(
            {"a": floats(1, 2), "b": int64s(9)},
            {"c": [floats(1, 2), floats(3, 4)], "d": [int64s(1), int64s(), b""]})),
        "sequence_bytes": seed(0b1010101, sequence_example(
            {"a": byteses(b"zz")}, {"c": [byteses(b"ab"), byteses(b"c", b"d")], "d": [byteses(b"hello")]}),
            sequence_example({}, {})),
        "merged_keys": seed(0b0000010, example(a=int64s(1, 2)) + example(a=int64s(3, 4), b=b"")),
        "many_records": seed(0b0000010, *[example(a=int64s(i, -i), b=int64s(*range(i % 4))) for i in range(100)]),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "example"))
