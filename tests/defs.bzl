"""Test macros: one cc_test per *_test.cc file, all sharing the doctest main and test utilities."""

def cairn_doctests(deps = [], size = "small", tags_by_test = {}, deps_by_test = {}, **kwargs):
    """One cc_test per *_test.cc in the package.

    Args:
      deps: extra dependencies of every test.
      size: Bazel test size.
      tags_by_test: {"stress_test": ["tsan"]} adds tags to single tests ("asan"/"tsan" select the
        sanitizer runs in tools/test).
      deps_by_test: {"ops_test": ["//tests/cases:tables"]} adds dependencies to single tests.
      **kwargs: passed to every cc_test.
    """
    for src in native.glob(["*_test.cc"]):
        name = src[:-3]
        native.cc_test(
            name = name,
            srcs = [src],
            size = size,
            tags = tags_by_test.get(name, []),
            deps = ["//tests/util"] + deps + deps_by_test.get(name, []),
            **kwargs
        )
