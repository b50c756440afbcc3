"""Test macros: one cc_test per *_test.cc file, all sharing the doctest main and test utilities."""

def cairn_doctests(deps = [], size = "small", **kwargs):
    for src in native.glob(["*_test.cc"]):
        native.cc_test(
            name = src[:-3],
            srcs = [src],
            size = size,
            deps = ["//tests/util"] + deps,
            **kwargs
        )
