#!/usr/bin/env python3
"""Writes the golden tf.train.Example / SequenceExample encodings that Cairn's serializer must match.

Run with the pinned TensorBoard venv (tools/setup makes it):
    ~/.cache/cairn/venv/bin/python tests/golden/example/make_golden.py tests/golden/example
It uses protobuf's own deterministic serialization (map keys sorted). TensorBoard's package ships no
example_pb2, so the messages are declared here as a descriptor, with the names, field numbers and packing
of TensorFlow's tensorflow/core/example/feature.proto and example.proto (package "tensorflow"), and protobuf
builds the message classes from it. tests/runtime/io/example_golden_test.cc builds the same messages in C++.
"""
import sys

import google.protobuf
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def _file():
    fd = descriptor_pb2.FileDescriptorProto(name="tf_example.proto", package="tensorflow", syntax="proto3")

    def message(name, fields, nested=()):
        m = fd.message_type.add(name=name)
        for n in nested:
            m.nested_type.add().CopyFrom(n)
        for fname, number, label, ftype, type_name, oneof, packed in fields:
            f = m.field.add(name=fname, number=number, label=label, type=ftype)
            if type_name:
                f.type_name = type_name
            if oneof is not None:
                f.oneof_index = oneof
            if packed:
                f.options.packed = True
        return m

    def map_entry(name, value_type):
        e = descriptor_pb2.DescriptorProto(name=name)
        e.options.map_entry = True
        e.field.add(name="key", number=1, label=F.LABEL_OPTIONAL, type=F.TYPE_STRING)
        e.field.add(name="value", number=2, label=F.LABEL_OPTIONAL, type=F.TYPE_MESSAGE, type_name=value_type)
        return e

    rep, opt = F.LABEL_REPEATED, F.LABEL_OPTIONAL
    message("BytesList", [("value", 1, rep, F.TYPE_BYTES, None, None, False)])
    message("FloatList", [("value", 1, rep, F.TYPE_FLOAT, None, None, True)])
    message("Int64List", [("value", 1, rep, F.TYPE_INT64, None, None, True)])
    feature = message("Feature", [
        ("bytes_list", 1, opt, F.TYPE_MESSAGE, ".tensorflow.BytesList", 0, False),
        ("float_list", 2, opt, F.TYPE_MESSAGE, ".tensorflow.FloatList", 0, False),
        ("int64_list", 3, opt, F.TYPE_MESSAGE, ".tensorflow.Int64List", 0, False),
    ])
    feature.oneof_decl.add(name="kind")
    message("Features", [("feature", 1, rep, F.TYPE_MESSAGE, ".tensorflow.Features.FeatureEntry", None, False)],
            [map_entry("FeatureEntry", ".tensorflow.Feature")])
    message("FeatureList", [("feature", 1, rep, F.TYPE_MESSAGE, ".tensorflow.Feature", None, False)])
    message("FeatureLists",
            [("feature_list", 1, rep, F.TYPE_MESSAGE, ".tensorflow.FeatureLists.FeatureListEntry", None, False)],
            [map_entry("FeatureListEntry", ".tensorflow.FeatureList")])
    message("Example", [("features", 1, opt, F.TYPE_MESSAGE, ".tensorflow.Features", None, False)])
    message("SequenceExample", [
        ("context", 1, opt, F.TYPE_MESSAGE, ".tensorflow.Features", None, False),
        ("feature_lists", 2, opt, F.TYPE_MESSAGE, ".tensorflow.FeatureLists", None, False),
    ])
    return fd


class example_pb2:  # the two classes the functions below use, as a compiled module would give them
    _pool = descriptor_pool.DescriptorPool()
    _pool.Add(_file())
    Example = message_factory.GetMessageClass(_pool.FindMessageTypeByName("tensorflow.Example"))
    SequenceExample = message_factory.GetMessageClass(_pool.FindMessageTypeByName("tensorflow.SequenceExample"))


def example():
    ex = example_pb2.Example()
    f = ex.features.feature
    f["bytes"].bytes_list.value.extend([b"abc", b"", b"\x00\xff\x80"])
    f["floats"].float_list.value.extend([1.5, -2.25, 0.0, 3.0e38])
    f["int64s"].int64_list.value.extend([0, 1, -1, 127, 128, 2**62, -(2**63)])
    f["empty_floats"].float_list.SetInParent()
    f["none"].SetInParent()  # a Feature with no list set
    f["caf\u00e9"].int64_list.value.append(300)
    return ex


def sequence_example():
    ex = example_pb2.SequenceExample()
    ex.context.feature["length"].int64_list.value.append(3)
    ex.context.feature["label"].bytes_list.value.append(b"cat")
    tokens = ex.feature_lists.feature_list["tokens"].feature
    for step in ([1, 2], [3], []):
        tokens.add().int64_list.value.extend(step)
    weights = ex.feature_lists.feature_list["weights"].feature
    for step in ([0.5], [0.25]):
        weights.add().float_list.value.extend(step)
    ex.feature_lists.feature_list["empty"].SetInParent()
    return ex


def main(out_dir):
    for name, msg in (("example.pb", example()), ("sequence_example.pb", sequence_example())):
        with open(f"{out_dir}/{name}", "wb") as f:
            f.write(msg.SerializeToString(deterministic=True))
    print(f"protobuf {google.protobuf.__version__}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
