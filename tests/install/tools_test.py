#!/usr/bin/env python3
"""Tests of tools/abi_check that need no Bazel build: abidiff verdicts
on a tiny library built twice (additions pass; removals, struct changes fail; experimental changes
pass) and the suppressions generated from a header."""
import hashlib
import os
import subprocess
import sys
import tempfile
import unittest
from importlib.machinery import SourceFileLoader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
abi_check = SourceFileLoader("abi_check", os.path.join(ROOT, "tools", "abi_check")).load_module()

HEADER = """
typedef struct cairn_tensor cairn_tensor;
typedef struct cairn_thing { int x; } cairn_thing;
CAIRN_API cairn_status *cairn_stable(void);
#if defined(CAIRN_EXPERIMENTAL)
/** Like cairn_stable() but new. */
typedef struct cairn_exp_options { uint32_t struct_size; } cairn_exp_options;
typedef struct cairn_exp_handle cairn_exp_handle;
#if defined(__GNUC__)
CAIRN_API cairn_status *cairn_exp_a(const cairn_exp_options *o);
#endif
CAIRN_API cairn_status *cairn_exp_b(cairn_exp_handle *h);
#endif /* CAIRN_EXPERIMENTAL */
CAIRN_API void cairn_after(void);
#ifdef CAIRN_EXPERIMENTAL
CAIRN_API void cairn_exp_c(void);
#endif
"""


class AbiCheck(unittest.TestCase):
    def test_experimental_blocks(self):
        functions, types = abi_check.experimental_names(HEADER)
        self.assertEqual(functions, {"cairn_exp_a", "cairn_exp_b", "cairn_exp_c"})
        self.assertEqual(types, {"cairn_exp_options", "cairn_exp_handle"})

    def test_unterminated_block_fails(self):
        with self.assertRaises(SystemExit):
            abi_check.experimental_names("#if defined(CAIRN_EXPERIMENTAL)\nCAIRN_API void cairn_x(void);\n")

    def test_opaque_types(self):
        self.assertEqual(abi_check.opaque_types(HEADER), ["cairn_exp_handle", "cairn_tensor"])

    def test_baseline_header(self):
        with open(os.path.join(ROOT, "capi", "abi", "cairn.h")) as f:
            text = f.read()
        functions, _ = abi_check.experimental_names(text)
        self.assertIn("cairn_function_export", functions)
        self.assertIn("cairn_while_loop", functions)
        for stable in ("cairn_tensor_create", "cairn_function_create", "cairn_op_run"):
            self.assertNotIn(stable, functions)
        self.assertIn("cairn_tensor", abi_check.opaque_types(text))
        self.assertNotIn("cairn_dense_options", abi_check.opaque_types(text))


TINY_HEADER = """#include <stdint.h>
typedef struct tiny_options { uint32_t struct_size; int32_t flag; const char *name; } tiny_options;
int cairn_stable(const tiny_options *o);
int cairn_other(void);
#if defined(CAIRN_EXPERIMENTAL)
int cairn_exp(int x);
#endif
"""
TINY_SOURCE = """#include "cairn/cairn.h"
int cairn_stable(const tiny_options *o) { return o ? o->flag : 0; }
int cairn_other(void) { return 1; }
int cairn_exp(int x) { return x; }
"""


class AbiCompare(unittest.TestCase):
    """compare() on a tiny library built twice: what passes and what fails."""

    def build(self, tmp, name, header, source):
        os.makedirs(os.path.join(tmp, name, "cairn"), exist_ok=True)
        with open(os.path.join(tmp, name, "cairn", "cairn.h"), "w") as f:
            f.write(header)
        with open(os.path.join(tmp, name, "lib.c"), "w") as f:
            f.write(source)
        lib = os.path.join(tmp, name, "libtiny.so.1")
        subprocess.run(["cc", "-g", "-shared", "-fPIC", "-DCAIRN_EXPERIMENTAL", "-I", os.path.join(tmp, name),
                        "-Wl,-soname,libtiny.so.1", "-o", lib, os.path.join(tmp, name, "lib.c")], check=True)
        return lib, os.path.join(tmp, name, "cairn", "cairn.h")

    def verdict(self, header, source):
        with tempfile.TemporaryDirectory() as tmp:
            old, old_header = self.build(tmp, "old", TINY_HEADER, TINY_SOURCE)
            baseline = os.path.join(tmp, "old.abi")
            abi_check.abidw(old, baseline)
            new, _ = self.build(tmp, "new", header, source)
            return abi_check.compare(baseline, old_header, new)

    def test_same(self):
        self.assertEqual(self.verdict(TINY_HEADER, TINY_SOURCE)[0], "kept")

    def test_addition_passes(self):
        verdict, report = self.verdict(TINY_HEADER + "int cairn_new(void);\n",
                                       TINY_SOURCE + "int cairn_new(void) { return 2; }\n")
        self.assertEqual(verdict, "kept", report)
        self.assertIn("additions only", report)

    def test_removal_fails(self):
        verdict, report = self.verdict(TINY_HEADER.replace("int cairn_other(void);\n", ""),
                                       TINY_SOURCE.replace("int cairn_other(void) { return 1; }\n", ""))
        self.assertEqual(verdict, "breaks ABI 1", report)

    def test_struct_change_fails(self):
        verdict, report = self.verdict(TINY_HEADER.replace("int32_t flag", "int64_t flag"), TINY_SOURCE)
        self.assertEqual(verdict, "changes functions or types of ABI 1", report)

    def test_experimental_removal_passes(self):
        verdict, report = self.verdict(TINY_HEADER.replace("int cairn_exp(int x);\n", ""),
                                       TINY_SOURCE.replace("int cairn_exp(int x) { return x; }\n", ""))
        self.assertEqual(verdict, "kept", report)


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False).result.wasSuccessful() else 1)
