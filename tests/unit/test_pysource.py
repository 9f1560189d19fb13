"""`pysource.parse`: ast.parse that threads can share (CPython 3.11's AST constructor keeps its
recursion counter per interpreter, python/cpython#106905)."""

from __future__ import annotations

import ast
import gc
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from agent_world import pysource

NESTED = "def f(x):\n" + "".join(f"{'    ' * (i + 1)}if x > {i}:\n" for i in range(40)) + \
    "    " * 41 + "return [[(a, {b: c}) for a in x] for b, c in x]\n"


class _Finalized:
    def __del__(self):
        time.sleep(0)  # runs inside a collection, lets another thread take the interpreter


def _parse_with_garbage(_: int) -> str:
    for _ in range(5):  # cyclic garbage: the collector (and its finalizers) runs mid-parse
        a, b = _Finalized(), _Finalized()
        a.other, b.other = b, a
    return ast.dump(pysource.parse(NESTED))


def test_parse_from_many_threads_at_once():
    # with plain ast.parse about one parse in 300 here failed with "AST constructor recursion
    # depth mismatch": a finalizer switched threads while the AST objects were being built
    expected = ast.dump(ast.parse(NESTED))
    threshold = gc.get_threshold()
    gc.set_threshold(10)
    try:
        with ThreadPoolExecutor(8) as pool:
            dumps = list(pool.map(_parse_with_garbage, range(1500)))
    finally:
        gc.set_threshold(*threshold)
    assert set(dumps) == {expected}


def test_parse_reports_syntax_errors_with_the_file_name():
    with pytest.raises(SyntaxError) as info:
        pysource.parse("def broken(:\n", filename="<tool broken>")
    assert info.value.filename == "<tool broken>"
