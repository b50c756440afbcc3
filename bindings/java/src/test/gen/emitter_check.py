#!/usr/bin/env python3
"""Checks the Java emitter (bindings/gen/java.py) on declarations and ops the registry and header
do not have yet, so that it keeps producing code that compiles when they arrive: op attributes of
every kind (required and optional), variadic outputs, ops without inputs or outputs, names that
clash with Java keywords, and C API patterns from docs (arrays sharing a count, options structs with
handle fields and _init functions, borrowed handle returns, a status-returning callback parameter, callbacks sharing
one user_data). The C glue is compiled with gcc -fsyntax-only -Werror and the Java with javac
-Xlint:all -Werror. Exit 0 when both compile.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[5]
sys.path.insert(0, str(ROOT / "bindings/gen"))

import cheader  # noqa: E402
import java  # noqa: E402

EXTRA_DECLS = """
typedef struct cairn_ckpt cairn_ckpt;
typedef struct cairn_var_options {
  uint32_t struct_size;
  const char *name;
  int trainable;
  cairn_object *scope;
} cairn_var_options;
typedef struct cairn_manager_options {
  uint32_t struct_size;
  const char *checkpoint_name;
  int32_t max_to_keep;
  double keep_hours;
  const int64_t *dims;
  size_t n_dims;
} cairn_manager_options;
/* Options structs come with an _init the glue starts from (defaults live in the header alone). */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_var_options_init(cairn_var_options *opts, uint32_t struct_size);
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_manager_options_init(cairn_manager_options *opts, uint32_t struct_size);
/* CONSTRUCTOR. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_var_create(cairn_context *ctx, const cairn_tensor *initial,
                                                        const cairn_var_options *opts, cairn_object **out);
/* METHOD. */
CAIRN_API const char *cairn_var_name(const cairn_object *var);
/* METHOD. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_object_vars(cairn_object *root, int trainable_only, cairn_object_array **out);
/* METHOD. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_ckpt_count(const cairn_ckpt *c, int64_t *out);
/* METHOD. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_ckpt_blob(const cairn_ckpt *c, const char *key, char **out, size_t *size);
typedef void (*cairn_progress_fn)(void *user_data, int64_t done, const char *what);
typedef struct cairn_progress_options {
  uint32_t struct_size;
  cairn_progress_fn progress;
  void *progress_user_data;
  void (*progress_release)(void *progress_user_data);
} cairn_progress_options;
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_progress_options_init(cairn_progress_options *opts, uint32_t struct_size);
/* METHOD. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_ckpt_progress(cairn_ckpt *c, const cairn_progress_options *opts);
/* CONSTRUCTOR. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_ckpt_create(cairn_context *ctx, const char *const *names,
                                                         cairn_object *const *objects, size_t n, cairn_ckpt **out);
/* METHOD. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_ckpt_save(cairn_ckpt *ckpt, const char *prefix, char **path_out);
/* METHOD. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_ckpt_manage(cairn_ckpt *ckpt, const char *directory,
                                                         const cairn_manager_options *opts, cairn_object **out);
typedef struct cairn_plain_options {
  uint32_t struct_size;
  int32_t level;
} cairn_plain_options;
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_plain_options_init(cairn_plain_options *opts, uint32_t struct_size);
/* METHOD. */
CAIRN_API int32_t cairn_plain(const cairn_plain_options *opts);
/* A status callback with a string and a handle, passed without a release hook. */
typedef cairn_status *(*cairn_visit_fn)(void *user_data, cairn_object *obj, const char *path, int64_t depth);
/* METHOD. */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_ckpt_visit(cairn_ckpt *c, cairn_visit_fn visit, void *visit_user_data);
/* METHOD. Callbacks of two types, one returning nothing, sharing one user_data (as cairn_cond's branches do). */
CAIRN_API CAIRN_MUST_USE cairn_status *cairn_ckpt_walk(cairn_ckpt *c, cairn_progress_fn before, cairn_visit_fn visit,
                                                       void *user_data);
/* METHOD. */
CAIRN_API double cairn_ckpt_weights(const cairn_ckpt *c, const double *w, size_t n_w, const cairn_tensor *const *ts, size_t n_ts);
"""


def dtype(name):
    return {"name": name, "kind": "DTYPE", "inferred": True, "allowed_dtypes": ["float32", "int32"]}


EXTRA_OPS = [
    {"name": "Sum", "summary": "reduce", "inputs": [{"name": "input", "type_attr": "T"}],
     "outputs": [{"name": "output", "type_attr": "T"}],
     "attrs": [dtype("T"), {"name": "axis", "kind": "INTS", "default": []},
               {"name": "keep_dims", "kind": "BOOL", "default": False}]},
    {"name": "Reshape", "summary": "r", "inputs": [{"name": "tensor", "type_attr": "T"}],
     "outputs": [{"name": "output", "type_attr": "T"}], "attrs": [dtype("T"), {"name": "shape", "kind": "INTS"}]},
    {"name": "Split", "summary": "s", "inputs": [{"name": "value", "type_attr": "T"}],
     "outputs": [{"name": "output", "type_attr": "T", "variadic": True, "number_attr": "num_split"}],
     "attrs": [dtype("T"), {"name": "num_split", "kind": "INT"}, {"name": "axis", "kind": "INT", "default": 0}]},
    {"name": "SplitEven", "summary": "s", "inputs": [{"name": "value", "type_attr": "T"}],
     "outputs": [{"name": "output", "type_attr": "T", "variadic": True, "number_attr": "num_split"}],
     "attrs": [dtype("T"), {"name": "num_split", "kind": "INT", "default": 2}]},
    {"name": "Unique", "summary": "u", "inputs": [{"name": "x", "type_attr": "T"}],
     "outputs": [{"name": "y", "type_attr": "T"}, {"name": "idx", "type_attr": "out_idx"}],
     "attrs": [dtype("T"), {"name": "out_idx", "kind": "DTYPE", "default": "int32", "allowed_dtypes": ["int32"]}]},
    {"name": "RandomUniform", "summary": "odd text: <x> & \"q\" */ @param", "inputs": [],
     "outputs": [{"name": "output", "type_attr": "dtype"}],
     "attrs": [{"name": "shape", "kind": "INTS"},
               {"name": "dtype", "kind": "DTYPE", "default": "float32", "allowed_dtypes": ["float32"]},
               {"name": "minval", "kind": "FLOAT", "default": 0}, {"name": "maxval", "kind": "FLOAT", "default": 1.5},
               {"name": "mode", "kind": "STRING", "default": "a\"b", "allowed_values": ["a\"b", "c"]},
               {"name": "weights", "kind": "FLOATS", "default": [1, 2.5]},
               {"name": "class", "kind": "INT", "default": -3}]},
    {"name": "ConcatV2", "summary": "c", "inputs": [{"name": "values", "type_attr": "T", "variadic": True}],
     "outputs": [{"name": "output", "type_attr": "T"}], "attrs": [dtype("T"), {"name": "axis", "kind": "INT"}]},
    {"name": "Pack", "summary": "p", "inputs": [{"name": "first", "type_attr": "T"},
                                                {"name": "values", "type_attr": "T", "variadic": True}],
     "outputs": [{"name": "output", "type_attr": "T"}], "attrs": [dtype("T"), {"name": "axis", "kind": "INT", "default": 0}]},
    {"name": "Sink", "summary": "nothing out", "inputs": [{"name": "ctx", "type_attr": "T"}], "outputs": [],
     "attrs": [dtype("T"), {"name": "tags", "kind": "FLOATS"}]},
]


def main() -> int:
    real = (ROOT / "capi/include/cairn/cairn.h").read_text()
    end = real.index('#ifdef __cplusplus\n} /* extern "C" */')
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "include/cairn").mkdir(parents=True)
        header = tmp / "include/cairn/cairn.h"
        header.write_text(real[:end] + EXTRA_DECLS + real[end:])
        ops = json.loads((ROOT / "bindings/gen/ops.json").read_text())
        registered = {op["name"] for op in ops}
        ops += [op for op in EXTRA_OPS if op["name"] not in registered]  # patterns not registered yet
        files = java.emit(cheader.parse(header), ops)
        out = tmp / "out"
        for rel, text in files.items():
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        src = ROOT / "bindings/java/src/main"
        gen_java = out / "bindings/java/src/main/java"
        for hand in src.glob("java/**/*.java"):
            rel = hand.relative_to(src / "java")
            if not (gen_java / rel).exists():
                shutil.copy(hand, gen_java / rel)
        missing = [f"cairn_{n}" for n in ("var_create", "ckpt_create", "ckpt_manage", "ckpt_weights", "plain", "ckpt_count",
                                                "ckpt_blob", "ckpt_progress", "ckpt_walk")
                   if f"cairn_{n}:" in files["bindings/java/src/main/java/dev/cairn/CairnNative.java"].split(
                       "final class CairnNative")[0]]
        if missing:
            print(f"emitter_check: not bound: {missing}", file=sys.stderr)
            return 1
        jdk = Path(shutil.which("javac")).resolve().parent.parent  # JNI headers: <jdk>/include
        c_file = out / "bindings/java/src/main/native/dev_cairn_CairnNative.c"
        subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                        f"-I{tmp / 'include'}", f"-I{jdk / 'include'}", f"-I{jdk / 'include/linux'}",
                        f"-I{src / 'native'}", str(c_file)], check=True)
        sources = [str(p) for p in gen_java.glob("**/*.java")]
        subprocess.run(["javac", "-Xlint:all", "-Werror", "-d", str(tmp / "classes")] + sources, check=True)
    print("emitter_check: generated C and Java for extra ops and declarations compile")
    return 0


if __name__ == "__main__":
    sys.exit(main())
