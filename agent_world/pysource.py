"""Parsing Python source that tools, tests and solutions carry.

`parse` is `ast.parse` behind one process-wide lock. CPython 3.11 keeps the AST constructor's
recursion counter in interpreter state, not per thread, so two threads parsing at once can fail
with `SystemError: AST constructor recursion depth mismatch` (python/cpython#106905) — seen when
the synthesize stage works on several environments in parallel threads. Parsing is fast; the
lock costs nothing measurable.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    with _LOCK:
        return ast.parse(source, filename=filename)


__all__ = ["parse"]
