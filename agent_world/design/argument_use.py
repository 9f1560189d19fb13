"""Which of a designed tool's required arguments its code never reads.

A tool whose source requires an argument it then ignores cannot do what the source says:
`delete_rows_or_columns(path, sheet, axis, start)` that deletes one record by `path` whatever
`axis` and `start` say, `create_pivot_table` that stores its sheet and cell but not its
`row_fields`. Tests built from the same plan pass such a tool (they were drawn from what it
does), so cross-validation reads the code: every required parameter must be loaded somewhere in
the function's body (stored, compared, passed on to a helper).
"""

from __future__ import annotations

import ast

from agent_world.pysource import parse

# a body that hands its whole namespace on reads every argument
_NAMESPACE_CALLS = frozenset({"locals", "vars"})


def unread_arguments(source: str, name: str, required: list[str]) -> list[str]:
    """The `required` parameters of function `name` in `source` that its body never reads;
    [] when the function is not found or reads its namespace whole."""
    try:
        tree = parse(source)
    except SyntaxError:
        return []  # a tool that does not compile is rejected as such
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
               and n.name == name), None)
    if fn is None:
        return []
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
    if fn.args.kwarg is not None:  # **kwargs: what it reads is not visible by name
        return []
    read: set[str] = set()
    for node in (n for stmt in fn.body for n in ast.walk(stmt)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            read.add(node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in _NAMESPACE_CALLS:
            return []
    return [a for a in required if a in params and a not in read]


__all__ = ["unread_arguments"]
