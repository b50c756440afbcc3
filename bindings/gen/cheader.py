"""Parses capi/include/cairn/cairn.h into a model the binding emitters share.

The header is written in a regular style (see its top comment), so a small parser suffices:
  - opaque handles:   typedef struct cairn_x cairn_x;
  - enums:            typedef enum cairn_x { CAIRN_A = 1, ... } cairn_x;
  - structs:          typedef struct cairn_x { <type> <name>; ... } cairn_x;
  - callbacks:        typedef <ret> (*cairn_x_fn)(<params>);
  - functions:        CAIRN_API [CAIRN_MUST_USE] <ret> cairn_name(<params>);
  - macros:           #define CAIRN_ABI_VERSION 1u, integer constants (#define CAIRN_TRUE 1)
  - scalar aliases:   typedef int32_t cairn_bool;  (resolved to the base type in every type string,
                      kept in Header.aliases for emitters that want the name)
  - experimental:     #if defined(CAIRN_EXPERIMENTAL) ... #endif blocks; their declarations are
                      marked Function.experimental
Each declaration keeps the doc comment above it. Anything the parser does not understand in a
declaration is an error, so a header change can never be silently dropped from the bindings.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path
from typing import Optional


@dataclasses.dataclass
class Param:
    name: str
    ctype: str  # normalized C type, e.g. "const int64_t *", "cairn_tensor **"


@dataclasses.dataclass
class Function:
    name: str
    ret: str
    params: list[Param]
    doc: str
    must_use: bool
    experimental: bool = False  # declared inside #if defined(CAIRN_EXPERIMENTAL)

    @property
    def returns_status(self) -> bool:
        return self.ret == "cairn_status *"


@dataclasses.dataclass
class Enum:
    name: str
    values: list[tuple[str, int]]
    doc: str


@dataclasses.dataclass
class Struct:
    name: str
    fields: list[Param]
    doc: str


@dataclasses.dataclass
class Callback:
    name: str
    ret: str
    params: list[Param]
    doc: str


@dataclasses.dataclass
class Header:
    abi_version: int
    handles: list[str]
    enums: list[Enum]
    structs: list[Struct]
    callbacks: list[Callback]
    functions: list[Function]
    # Options-struct initializer macros: "CAIRN_X_OPTIONS_INIT" -> the C expressions between its
    # braces, one per field in order, e.g. ["(uint32_t)sizeof(cairn_x_options)", "NULL", "0"].
    inits: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    # Scalar typedefs: "cairn_bool" -> "int32_t". Type strings in the model use the base type.
    aliases: dict[str, str] = dataclasses.field(default_factory=dict)
    # Integer constant macros: "CAIRN_TRUE" -> 1 (substituted into `inits` too).
    constants: dict[str, int] = dataclasses.field(default_factory=dict)

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)


class ParseError(Exception):
    pass


# Scalar aliases seen so far while parsing (declared before use, as C requires).
_ALIASES: dict[str, str] = {}


def normalize_type(t: str) -> str:
    t = re.sub(r"\s+", " ", t.strip())
    for alias, base in _ALIASES.items():
        t = re.sub(rf"\b{alias}\b", base, t)
    t = re.sub(r"\s*\*\s*", " *", t)  # "int64_t*" -> "int64_t *", "x **" -> "x **"
    t = t.replace("* *", "**").replace("* *", "**")
    return t.strip()


def split_param(p: str) -> Param:
    p = p.strip()
    fp = re.match(r"^(.*)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", p)
    if fp:  # a function pointer parameter, typed as struct fields are: "fnptr:<ret>(<params>)"
        return Param(fp.group(2), "fnptr:" + normalize_type(fp.group(1)) + "(" + fp.group(3) + ")")
    m = re.match(r"^(.*?)([A-Za-z_][A-Za-z0-9_]*)$", p)
    if not m:
        raise ParseError(f"cannot parse parameter {p!r}")
    ctype, name = m.group(1), m.group(2)
    if not ctype.strip():
        raise ParseError(f"parameter without a type: {p!r}")
    return Param(name=name, ctype=normalize_type(ctype))


def parse_params(text: str) -> list[Param]:
    text = text.strip()
    if text in ("void", ""):
        return []
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):  # split at top-level commas (a function pointer's own are inside parentheses)
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [split_param(p) for p in parts]


def strip_comments_keep_docs(src: str) -> list[tuple[str, str]]:
    """Splits the header into (doc, statement) pairs at top level."""
    out: list[tuple[str, str]] = []
    doc = ""
    i = 0
    n = len(src)
    stmt = ""
    depth = 0
    while i < n:
        if src.startswith("/*", i):
            j = src.index("*/", i) + 2
            if depth == 0 and not stmt.strip():
                doc = src[i + 2 : j - 2]
            i = j
            continue
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        c = src[i]
        if c == "#" and not stmt.strip():
            j = src.find("\n", i)
            line = src[i : (n if j < 0 else j)]
            while line.endswith("\\"):
                k = src.find("\n", j + 1)
                line = line[:-1] + src[j + 1 : (n if k < 0 else k)]
                j = k
            out.append(("", line.strip()))
            i = n if j < 0 else j + 1
            doc = ""
            continue
        if c == "{" and depth == 0 and stmt.strip() == 'extern "C"':
            stmt = ""  # the C++ linkage block is transparent
            i += 1
            continue
        if c == "}" and depth == 0:
            i += 1  # closes the extern "C" block
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        stmt += c
        if c == ";" and depth == 0:
            out.append((clean_doc(doc), re.sub(r"\s+", " ", stmt).strip()))
            stmt = ""
            doc = ""
        i += 1
    return out


def clean_doc(doc: str) -> str:
    # Section banners ("/* ----- ... */") introduce a group, they do not document a declaration.
    if doc.lstrip().startswith("-"):
        return ""
    lines = [re.sub(r"^\s*\*? ?", "", line).rstrip() for line in doc.strip().splitlines()]
    return "\n".join(line for line in lines).strip()


def parse(path: Path) -> Header:
    src = path.read_text()
    abi = None
    handles, enums, structs, callbacks, functions = [], [], [], [], []
    inits: dict[str, list[str]] = {}
    aliases: dict[str, str] = {}
    constants: dict[str, int] = {}
    experimental = False
    _ALIASES.clear()
    for doc, stmt in strip_comments_keep_docs(src):
        if stmt.startswith("#"):
            if stmt == "#if defined(CAIRN_EXPERIMENTAL)":
                experimental = True
            elif stmt.startswith("#endif") and "CAIRN_EXPERIMENTAL" in stmt:
                experimental = False
            m = re.match(r"#define CAIRN_ABI_VERSION (\d+)u?$", stmt)
            if m:
                abi = int(m.group(1))
            m = re.match(r"#define (CAIRN_\w+) (-?\d+|\(-?\d+\))$", stmt)
            if m:
                constants[m.group(1)] = int(m.group(2).strip("()"))
            m = re.match(r"#define (CAIRN_\w+_INIT)\s*\{(.*)\}$", stmt)
            if m:
                # Split at commas outside character literals; a literal (',') becomes its code (44).
                values = [e.strip() for e in re.findall(r"\s*'(?:\\.|[^'])'|[^,]+", m.group(2))]
                values = [str(ord(v[1])) if re.fullmatch(r"'.'", v) else v for v in values]
                inits[m.group(1)] = [str(constants.get(v, v)) for v in values]
            continue
        m = re.match(r"^typedef (u?int(?:8|16|32|64)_t|int|double|float|size_t) (cairn_\w+);$", stmt)
        if m:
            aliases[m.group(2)] = m.group(1)
            _ALIASES[m.group(2)] = m.group(1)
            continue
        if stmt.startswith('extern "C"') or stmt in ("}",):
            continue
        m = re.match(r"^typedef struct (\w+) (\w+);$", stmt)
        if m:
            handles.append(m.group(2))
            continue
        m = re.match(r"^typedef enum (\w+) \{(.*)\} (\w+);$", stmt)
        if m:
            values = []
            for item in m.group(2).split(","):
                item = item.strip()
                if not item:
                    continue
                mm = re.match(r"^(\w+) = (0x[0-9a-fA-F]+|\d+)$", item)
                if not mm:
                    raise ParseError(f"enum {m.group(3)}: cannot parse {item!r} (values must be pinned)")
                values.append((mm.group(1), int(mm.group(2), 0)))
            enums.append(Enum(m.group(3), values, doc))
            continue
        m = re.match(r"^typedef struct (\w+) \{(.*)\} (\w+);$", stmt)
        if m:
            fields = []
            for decl in m.group(2).split(";"):
                decl = decl.strip()
                if not decl:
                    continue
                fp = re.match(r"^(.*)\(\*(\w+)\)\((.*)\)$", decl)
                if fp:  # function pointer field
                    fields.append(Param(fp.group(2), "fnptr:" + normalize_type(fp.group(1)) + "(" + fp.group(3) + ")"))
                    continue
                fields.append(split_param(decl))
            structs.append(Struct(m.group(3), fields, doc))
            continue
        m = re.match(r"^typedef (.*?)\(\*(\w+)\)\((.*)\);$", stmt)
        if m:
            callbacks.append(Callback(m.group(2), normalize_type(m.group(1)), parse_params(m.group(3)), doc))
            continue
        m = re.match(r"^CAIRN_API (CAIRN_MUST_USE )?(.*?)\b(cairn_\w+)\((.*)\);$", stmt)
        if m:
            functions.append(
                Function(m.group(3), normalize_type(m.group(2)), parse_params(m.group(4)), doc, bool(m.group(1)),
                         experimental)
            )
            continue
        if stmt.startswith("typedef") or "cairn_" in stmt:
            raise ParseError(f"unrecognized declaration: {stmt[:120]}")
    if abi is None:
        raise ParseError("CAIRN_ABI_VERSION not found")
    return Header(abi, handles, enums, structs, callbacks, functions, inits, aliases, constants)


def main(argv: list[str]) -> int:
    h = parse(Path(argv[1]))
    print(f"ABI {h.abi_version}: {len(h.functions)} functions, {len(h.enums)} enums, "
          f"{len(h.structs)} structs, {len(h.handles)} handles, {len(h.callbacks)} callbacks")
    for f in h.functions:
        print(f"  {f.ret} {f.name}({', '.join(p.ctype + ' ' + p.name for p in f.params)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
