"""Tool plans → one toolkit-form module (the same form a person writes by hand).

The module has a few shared helpers (`_row`, `_insert`, `_update`, `_like`) and one typed,
documented @tool function per plan. Every SQL statement names its table and columns
explicitly, so a reader (or a repair attempt) sees exactly what a tool touches.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from agent_world.agents.offline_design.plans import (
    MAX_ROWS,
    TERMINAL,
    ParamPlan,
    ToolPlan,
    pk_column,
)
from agent_world.agents.offline_mining.naming import singular
from agent_world.envs.spec import EnvSpec

HEADER = '''"""Tools of the `{name}` environment ({theme}).

Designed from the database schema and the source's tools; each @tool function is one tool
(see agent_world.envs.toolkit). Refusals raise ToolError naming the rule.
"""

from typing import Annotated, Literal

from pydantic import Field

from agent_world.envs.toolkit import Ctx, ToolError, tool

MAX_ROWS = {max_rows}
FINAL_STATUSES = {final}


def _row(ctx, table, key, column, value, noun):
    """The first record of `table` (in `key` order) whose `column` equals `value`."""
    row = ctx.one(f'SELECT * FROM "{{table}}" WHERE "{{column}}" = ? ORDER BY "{{key}}" LIMIT 1',
                  (value,))
    if row is None:
        raise ToolError(f"No {{noun}} with {{column}} {{value!r}}.")
    return row


def _like(text):
    """A LIKE pattern matching `text` anywhere, its wildcards escaped."""
    escaped = text.replace("\\\\", "\\\\\\\\").replace("%", "\\\\%").replace("_", "\\\\_")
    return f"%{{escaped}}%"


def _insert(ctx, table, key, values):
    """Insert one record and return it as stored."""
    columns = ", ".join(f'"{{c}}"' for c in values)
    marks = ", ".join("?" for _ in values)
    cur = ctx.execute(f'INSERT INTO "{{table}}" ({{columns}}) VALUES ({{marks}})',
                      list(values.values()))
    return ctx.one(f'SELECT * FROM "{{table}}" WHERE rowid = ?', (cur.lastrowid,))


def _update(ctx, table, key, key_value, changes):
    """Set `changes` on the record whose `key` is `key_value`; the record afterwards."""
    sets = ", ".join(f'"{{c}}" = ?' for c in changes)
    ctx.execute(f'UPDATE "{{table}}" SET {{sets}} WHERE "{{key}}" = ?',
                [*changes.values(), key_value])
    return ctx.one(f'SELECT * FROM "{{table}}" WHERE "{{key}}" = ?', (key_value,))
'''

_PY = {"integer": "int", "number": "float", "string": "str", "boolean": "bool"}


def _annotation(p: ParamPlan) -> str:
    if p.enum:
        base = "Literal[" + ", ".join(json.dumps(e) for e in p.enum) + "]"
    else:
        base = _PY[p.type]
    if p.role == "limit":
        base = f"Annotated[int, Field(ge=1, le={MAX_ROWS})]"
    elif p.pattern and not p.enum:
        base = f'Annotated[{base}, Field(pattern=r"{p.pattern}")]'
    if p.required:
        return base
    if p.role == "limit" or p.default is not None:
        return base
    return f"{base} | None"


def _signature(plan: ToolPlan) -> str:
    parts = ["ctx: Ctx"]
    for p in sorted(plan.params, key=lambda p: not p.required):
        ann = _annotation(p)
        if p.required:
            parts.append(f"{p.name}: {ann}")
        else:
            parts.append(f"{p.name}: {ann} = {p.default!r}")
    ret = "dict" if plan.kind != "list" else "list"
    one = f"def {plan.name}({', '.join(parts)}) -> {ret}:"
    if len(one) <= 100:
        return one
    inner = "".join(f"        {x},\n" for x in parts)
    return f"def {plan.name}(\n{inner}) -> {ret}:"


def _docstring(plan: ToolPlan) -> str:
    lines = textwrap.wrap(plan.description, 92) or [plan.name]
    out = ['    """' + lines[0], *("    " + ln for ln in lines[1:])]
    if plan.params:
        out += ["", "    Args:"]
        for p in sorted(plan.params, key=lambda p: not p.required):
            wrapped = textwrap.wrap(f"{p.name}: {p.description}", 86)
            out.append("        " + wrapped[0])
            out += ["            " + ln for ln in wrapped[1:]]
    out.append('    """')
    return "\n".join(out)


def _lit(value: Any) -> str:
    return repr(value)


class _Body:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, line: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + line)

    def text(self) -> str:
        return "\n".join(self.lines)


def _key_lookup(b: _Body, spec: EnvSpec, plan: ToolPlan) -> str:
    """Emit `row = _row(...)` for the plan's key argument; the expression of the row's id."""
    table = spec.table(plan.table)
    pk = pk_column(table)
    key = plan.param("key")
    assert key is not None and pk is not None
    noun = singular(plan.table).replace("_", " ")
    b.add(f"row = _row(ctx, {_lit(plan.table)}, {_lit(pk)}, {_lit(key.column)}, {key.name}, "
          f"{_lit(noun)})")
    return f"row[{_lit(pk)}]"


def _filters(b: _Body, spec: EnvSpec, plan: ToolPlan) -> None:
    b.add("clauses, params = [], []")
    for p in plan.params:
        if p.role not in ("eq", "like", "ge", "le", "ref", "key"):
            continue
        level = 1
        if not p.required:
            b.add(f"if {p.name} is not None:")
            level = 2
        if p.role in ("eq", "key"):
            b.add(f"clauses.append('\"{p.column}\" = ?')", level)
            b.add(f"params.append({p.name})", level)
        elif p.role == "like":
            b.add(f"clauses.append('\"{p.column}\" LIKE ? ESCAPE \\'\\\\\\'')", level)
            b.add(f"params.append(_like({p.name}))", level)
        elif p.role in ("ge", "le"):
            op = ">=" if p.role == "ge" else "<="
            b.add(f"clauses.append('\"{p.column}\" {op} ?')", level)
            b.add(f"params.append({p.name})", level)
        elif p.role == "ref":
            assert p.ref_table and p.ref_column
            ref_pk = pk_column(spec.table(p.ref_table))
            noun = singular(p.ref_table).replace("_", " ")
            b.add(f"_row(ctx, {_lit(p.ref_table)}, {_lit(ref_pk)}, {_lit(p.ref_column)}, "
                  f"{p.name}, {_lit(noun)})", level)
            b.add(f"clauses.append('\"{p.column}\" IN (SELECT \"{ref_pk}\" FROM "
                  f"\"{p.ref_table}\" WHERE \"{p.ref_column}\" = ?)')", level)
            b.add(f"params.append({p.name})", level)
    b.add('where = (" WHERE " + " AND ".join(clauses)) if clauses else ""')


def render_tool(spec: EnvSpec, plan: ToolPlan) -> str:
    """One @tool function for one plan."""
    table = spec.table(plan.table)
    pk = pk_column(table)
    noun = singular(plan.table).replace("_", " ")
    b = _Body()
    if plan.kind == "get":
        _key_lookup(b, spec, plan)
        b.add("return row")
    elif plan.kind == "list":
        _filters(b, spec, plan)
        limit = plan.param("limit")
        b.add(f"sql = f'SELECT * FROM \"{plan.table}\"{{where}} ORDER BY \"{pk}\" LIMIT ?'")
        b.add(f"return ctx.query(sql, [*params, {limit.name if limit else 'MAX_ROWS'}])")
    elif plan.kind == "count_by":
        _filters(b, spec, plan)
        g = plan.group_by
        b.add(f"where += (' AND ' if where else ' WHERE ') + '\"{g}\" IS NOT NULL'")
        b.add(f"sql = f'SELECT \"{g}\" AS value, count(*) AS n FROM \"{plan.table}\"{{where}} "
              f"GROUP BY \"{g}\" ORDER BY \"{g}\"'")
        b.add('return {str(r["value"]): r["n"] for r in ctx.query(sql, params)}')
    elif plan.kind == "summary":
        _filters(b, spec, plan)
        m = plan.measure
        b.add(f"sql = ('SELECT count(\"{m}\") AS count, round(total(\"{m}\"), 2) AS total, "
              f"min(\"{m}\") AS min, '")
        b.add(f"       f'max(\"{m}\") AS max FROM \"{plan.table}\"{{where}}')")
        b.add("return ctx.one(sql, params)")
    elif plan.kind == "create":
        _render_create(b, spec, plan)
    elif plan.kind in ("set_status", "update"):
        _render_change(b, spec, plan)
    elif plan.kind == "delete":
        key = _key_lookup(b, spec, plan)
        for child, col in plan.children:
            b.add(f"n = ctx.one('SELECT count(*) AS n FROM \"{child}\" WHERE \"{col}\" = ?', "
                  f"({key},))[\"n\"]")
            b.add("if n:")
            b.add(f"raise ToolError(f\"Cannot delete {noun} {{{key}}}: {{n}} {child} "
                  "record(s) refer to it.\")", 2)
        b.add(f"ctx.execute('DELETE FROM \"{plan.table}\" WHERE \"{pk}\" = ?', ({key},))")
        b.add(f"return {{\"deleted\": {key}}}")
    decorator = "@tool(write=True)" if plan.write else "@tool"
    if plan.kind == "update" and not plan.now_columns:
        sets = [p.name for p in plan.params if p.role in ("set", "ref") and not p.required]
        if sets and len(sets) == len([p for p in plan.params if p.role in ("set", "ref")]):
            decorator = f"@tool(write=True, require_any={tuple(sets)!r})"
    return f"{decorator}\n{_signature(plan)}\n{_docstring(plan)}\n{b.text()}\n"


def _render_create(b: _Body, spec: EnvSpec, plan: ToolPlan) -> None:
    table = spec.table(plan.table)
    pk = pk_column(table)
    noun = singular(plan.table).replace("_", " ")
    b.add("values = {}")
    for p in sorted(plan.params, key=lambda p: not p.required):
        if p.role not in ("set", "ref") or p.column is None:
            continue
        level = 1
        if not p.required:
            b.add(f"if {p.name} is not None:")
            level = 2
        col = table.column(p.column)
        if p.role == "ref":
            _resolve_at(b, spec, p, f"values[{_lit(p.column)}]", level)
            continue
        if col.foreign_key:
            parent, parent_col = col.foreign_key.split(".")
            b.add(f"_row(ctx, {_lit(parent)}, {_lit(parent_col)}, {_lit(parent_col)}, "
                  f"{p.name}, {_lit(singular(parent).replace('_', ' '))})", level)
        if p.column in plan.unique:
            b.add(f"if ctx.one('SELECT 1 FROM \"{plan.table}\" WHERE \"{p.column}\" = ?', "
                  f"({p.name},)):", level)
            b.add(f"raise ToolError(f\"A {noun} with {p.column} {{{p.name}!r}} already "
                  "exists.\")", level + 1)
        b.add(f"values[{_lit(p.column)}] = {p.name}", level)
    for group in plan.unique_groups:
        where = " AND ".join(f'"{c}" = ?' for c in group)
        b.add(f"if ctx.one('SELECT 1 FROM \"{plan.table}\" WHERE {where}', "
              f"[values.get(c) for c in {group!r}]):")
        b.add(f"raise ToolError(\"A {noun} with these {', '.join(group)} already exists.\")", 2)
    for col, value in plan.fixed.items():
        b.add(f"values[{_lit(col)}] = {_lit(value)}")
    for col in plan.now_columns:
        b.add(f"values[{_lit(col)}] = ctx.now()")
    b.add(f"return _insert(ctx, {_lit(plan.table)}, {_lit(pk)}, values)")


def _resolve_at(b: _Body, spec: EnvSpec, p: ParamPlan, target: str, level: int) -> None:
    assert p.ref_table and p.ref_column
    ref_pk = pk_column(spec.table(p.ref_table))
    noun = singular(p.ref_table).replace("_", " ")
    b.add(f"{target} = _row(ctx, {_lit(p.ref_table)}, {_lit(ref_pk)}, {_lit(p.ref_column)}, "
          f"{p.name}, {_lit(noun)})[{_lit(ref_pk)}]", level)


def _render_change(b: _Body, spec: EnvSpec, plan: ToolPlan) -> None:
    table = spec.table(plan.table)
    pk = pk_column(table)
    noun = singular(plan.table).replace("_", " ")
    key = _key_lookup(b, spec, plan)
    b.add("changes = {}")
    if plan.kind == "set_status":
        col = plan.status_column
        status_param = next((p for p in plan.params if p.role == "set" and p.column == col),
                            None)
        target = status_param.name if status_param else _lit(plan.target_status)
        b.add(f"current = row[{_lit(col)}]")
        b.add(f"if current == {target}:")
        b.add(f"raise ToolError(f\"{noun.capitalize()} {{{key}}} is already {{current}}.\")", 2)
        b.add("if current in FINAL_STATUSES:")
        b.add(f"raise ToolError(f\"{noun.capitalize()} {{{key}}} is {{current}}, a final "
              f"{col}; it can no longer change.\")", 2)
        b.add(f"changes[{_lit(col)}] = {target}")
    for p in plan.params:
        if p.role not in ("set", "ref") or p.column is None or \
                (plan.kind == "set_status" and p.column == plan.status_column):
            continue
        level = 1
        if not p.required:
            b.add(f"if {p.name} is not None:")
            level = 2
        if p.role == "ref":
            _resolve_at(b, spec, p, f"changes[{_lit(p.column)}]", level)
        else:
            col = table.column(p.column)
            if col.foreign_key:
                parent, parent_col = col.foreign_key.split(".")
                b.add(f"_row(ctx, {_lit(parent)}, {_lit(parent_col)}, {_lit(parent_col)}, "
                      f"{p.name}, {_lit(singular(parent).replace('_', ' '))})", level)
            b.add(f"changes[{_lit(p.column)}] = {p.name}", level)
    if plan.kind == "update":
        b.add("if not changes:")
        if plan.now_columns:
            b.add("pass  # nothing but the time of the action is recorded", 2)
        else:
            b.add("raise ToolError(\"Nothing to change: give at least one field.\")", 2)
    for col in plan.now_columns:
        b.add(f"changes[{_lit(col)}] = ctx.now()")
    b.add(f"return _update(ctx, {_lit(plan.table)}, {_lit(pk)}, {key}, changes)")


def render_module(spec: EnvSpec, plans: list[ToolPlan]) -> str:
    final = "frozenset({" + ", ".join(repr(s) for s in sorted(TERMINAL)) + "})"
    head = HEADER.format(name=spec.name, theme=spec.theme.name.replace('"', "'"),
                         max_rows=MAX_ROWS, final=final)
    return head + "".join("\n\n" + render_tool(spec, p) for p in plans)


__all__ = ["render_module", "render_tool"]
