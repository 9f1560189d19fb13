"""Tool plans → one toolkit-form module (the same form a person writes by hand).

The module has a few shared helpers (`_row`, `_insert`, `_update`, `_like`) and one typed,
documented @tool function per plan. Every SQL statement names its table and columns
explicitly, so a reader (or a repair attempt) sees exactly what a tool touches.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from agent_world.design.offline.contracts import (
    FETCH_MAX_LENGTH,
    Contract,
    Effect,
    Guard,
    Value,
    final_states,
)
from agent_world.design.offline.plans import (
    HASH_COLUMNS,
    MAX_ROWS,
    ParamPlan,
    ToolPlan,
    newest_first,
    pk_column,
)
from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import singular, snake

HEADER = '''"""Tools of the `{name}` environment ({theme}).

Designed from the database schema and the source's tools; each @tool function is one tool
(see agent_world.envs.toolkit). Refusals raise ToolError naming the rule.
"""

import hashlib
import re
from datetime import date, datetime, timedelta
from typing import Annotated, Literal

from pydantic import Field

from agent_world.envs.toolkit import Ctx, ToolError, tool

MAX_ROWS = {max_rows}


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


def _row_in(ctx, table, key, column, value, scope, scope_value, noun):
    """The record of `table` whose `column` equals `value` inside one container (`scope`)."""
    row = ctx.one(f'SELECT * FROM "{{table}}" WHERE "{{column}}" = ? AND "{{scope}}" = ? '
                  f'ORDER BY "{{key}}" LIMIT 1', (value, scope_value))
    if row is None:
        raise ToolError(f"No {{noun}} with {{column}} {{value!r}} there.")
    return row


def _days_after(base, days):
    """`base` (an ISO date or date-time; today when empty) moved by `days` days, same form."""
    if isinstance(base, str) and "T" in base:
        return (datetime.fromisoformat(base) + timedelta(days=days)).isoformat(
            timespec="seconds")
    return (date.fromisoformat(str(base)[:10]) + timedelta(days=days)).isoformat()


def _minutes(offset):
    """'+05:45' / '-03:00' / 'UTC' -> minutes east of UTC."""
    m = re.fullmatch(r"(?:UTC)?([+-])(\\d{{2}}):?(\\d{{2}})", str(offset or "").strip())
    if m is None:
        return 0
    sign = 1 if m.group(1) == "+" else -1
    return sign * (int(m.group(2)) * 60 + int(m.group(3)))


def _next_code(ctx, table, column):
    """The identifier after the stored ones ("MRN-0174976" -> one past the largest number,
    same prefix and width)."""
    found = [re.fullmatch(r"(\\D*)(\\d+)", r["v"]) for r in ctx.query(
        f'SELECT "{{column}}" AS v FROM "{{table}}" WHERE "{{column}}" IS NOT NULL')
        if isinstance(r["v"], str)]
    found = [m for m in found if m]
    if not found:
        return None
    width = max(len(m.group(2)) for m in found)
    return f"{{found[0].group(1)}}{{max(int(m.group(2)) for m in found) + 1:0{{width}}d}}"


def _offset_at(ctx, zone_id, instant, standard, table, link, at, after):
    """A zone's offset (minutes) at `instant` (UTC): the offset after its last transition
    (daylight saving time starting or ending) at or before it, else its standard offset."""
    row = ctx.one(f'SELECT "{{after}}" FROM "{{table}}" WHERE "{{link}}" = ? AND "{{at}}" <= ? '
                  f'ORDER BY "{{at}}" DESC LIMIT 1',
                  (zone_id, instant.isoformat(timespec="seconds")))
    return standard if row is None else _minutes(row[after])


def _offset_text(minutes):
    sign = "+" if minutes >= 0 else "-"
    return f"{{sign}}{{abs(minutes) // 60:02d}}:{{abs(minutes) % 60:02d}}"


def _one_statement(query, verbs, what):
    """`query` as one statement starting with one of `verbs`; refused otherwise."""
    sql = query.strip().rstrip(";").strip()
    head = sql.split(None, 1)[0].upper() if sql else ""
    if ";" in sql or head not in verbs:
        raise ToolError(f"Only a single {{what}} statement can run here.")
    return sql


def _update(ctx, table, key, key_value, changes):
    """Set `changes` on the record whose `key` is `key_value`; the record afterwards."""
    sets = ", ".join(f'"{{c}}" = ?' for c in changes)
    ctx.execute(f'UPDATE "{{table}}" SET {{sets}} WHERE "{{key}}" = ?',
                [*changes.values(), key_value])
    return ctx.one(f'SELECT * FROM "{{table}}" WHERE "{{key}}" = ?', (key_value,))
'''

_PY = {"integer": "int", "number": "float", "string": "str", "boolean": "bool",
       "array": "list[str]"}


def _annotation(p: ParamPlan) -> str:
    if p.enum:
        base = "Literal[" + ", ".join(json.dumps(e) for e in p.enum) + "]"
    else:
        base = _PY[p.type]
    if p.type == "array":
        base = "list[str]"
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
    ret = "list" if plan.kind == "list" or (
        plan.contract is not None and plan.kind == "contract"
        and plan.contract.returns == "rows") else "dict"
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
    for col, values in plan.where.items():  # what the listing's description says its rows are
        b.add(f"clauses.append('\"{col}\" IN ({', '.join('?' for _ in values)})')")
        b.add(f"params.extend({list(values)!r})")
    for p in plan.params:
        if p.role not in ("eq", "like", "ge", "le", "ref", "key"):
            continue
        level = 1
        if not p.required:
            b.add(f"if {p.name} is not None:")
            level = 2
        if p.role in ("eq", "key") and p.column in HASH_COLUMNS:
            # a commit is named by any prefix of its hash, as git does ("a1b2c3d")
            b.add(f"clauses.append('substr(\"{p.column}\", 1, length(?)) = ?')", level)
            b.add(f"params.extend([{p.name}, {p.name}])", level)
        elif p.role in ("eq", "key"):
            b.add(f"clauses.append('\"{p.column}\" = ?')", level)
            b.add(f"params.append({p.name})", level)
        elif p.role == "like":
            b.add(f"clauses.append('\"{p.column}\" LIKE ? ESCAPE \\'\\\\\\'')", level)
            b.add(f"params.append(_like({p.name}))", level)
        elif p.role in ("ge", "le"):
            _bound(b, p, level)
        elif p.role == "ref":
            assert p.ref_table and p.ref_column
            ref_pk = pk_column(spec.table(p.ref_table))
            noun = singular(p.ref_table).replace("_", " ")
            b.add(f"_row(ctx, {_lit(p.ref_table)}, {_lit(ref_pk)}, {_lit(p.ref_column)}, "
                  f"{p.name}, {_lit(noun)})", level)
            sub = f'SELECT "{ref_pk}" FROM "{p.ref_table}" WHERE "{p.ref_column}" = ?'
            if p.closure:  # the record and every record descending from it
                sub = (f'WITH RECURSIVE down(id) AS ({sub} UNION SELECT c."{ref_pk}" FROM '
                       f'"{p.ref_table}" c JOIN down ON c."{p.closure}" = down.id) '
                       'SELECT id FROM down')
            # a row that names no record does not name that one ("not_contains": a branch
            # with no head holds no commit)
            test = f'("{p.column}" IS NULL OR "{p.column}" NOT IN ({sub}))' \
                if p.negate else f'"{p.column}" IN ({sub})'
            b.add(f"clauses.append('{test}')", level)
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
        order = " DESC" if newest_first(plan.name, plan.description) else ""
        b.add(f"sql = f'SELECT * FROM \"{plan.table}\"{{where}} ORDER BY \"{pk}\"{order} LIMIT ?'")
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
    elif plan.kind == "contract":
        render_contract_body(b, spec, plan)
    elif plan.kind == "delete":
        key = _key_lookup(b, spec, plan)
        status = next((c.name for c in table.columns if c.enum and c.name in ("status", "state")),
                      None)
        if plan.refuse_states and status:
            b.add(f"if row[{_lit(status)}] in {tuple(plan.refuse_states)!r}:")
            b.add(f"raise ToolError(f\"Refused: {noun} {{{key}}} is {{row[{_lit(status)}]}} and "
                  "holds what it names; end it first.\")", 2)
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


def _render_create(b: _Body, spec: EnvSpec, plan: ToolPlan, ret: bool = True) -> None:
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
    for via, parent in dict.fromkeys((v, p) for v, p, _ in plan.copied.values()):
        # the container's values (an appointment starts when its slot does, with its clinician)
        ppk = pk_column(spec.table(parent))
        b.add(f"if values.get({_lit(via)}) is not None:")
        b.add(f"container = _row(ctx, {_lit(parent)}, {_lit(ppk)}, {_lit(ppk)}, "
              f"values[{_lit(via)}], {_lit(singular(parent).replace('_', ' '))})", 2)
        for col, (v, _, parent_col) in plan.copied.items():
            if v == via:
                b.add(f"values[{_lit(col)}] = container[{_lit(parent_col)}]", 2)
    for col, value in plan.fixed.items():
        b.add(f"values[{_lit(col)}] = {_lit(value)}")
    for col in plan.now_columns:
        b.add(f"values[{_lit(col)}] = ctx.now()")
    for col in plan.code_columns:
        b.add(f"values[{_lit(col)}] = _next_code(ctx, {_lit(plan.table)}, {_lit(col)})")
    if ret:
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
        final = tuple(sorted(final_states(table.column(col).enum)))  # type: ignore[arg-type]
        b.add(f"if current in {final!r}:")
        b.add(f"raise ToolError(f\"{noun.capitalize()} {{{key}}} is {{current}}, a final "
              f"{col}; it can no longer change.\")", 2)
        if plan.refuse_states:
            b.add(f"if current in {tuple(plan.refuse_states)!r}:")
            b.add(f"raise ToolError(f\"Refused: {noun} {{{key}}} is {{current}}; only the "
                  f"record that holds it can change that.\")", 2)
        _hold_lines(b, spec, plan, target)
        b.add(f"changes[{_lit(col)}] = {target}")
        for field, states in plan.clear_outside.items():
            if plan.target_status is None:
                b.add(f"if {target} not in {tuple(states)!r}:")
                b.add(f"changes[{_lit(field)}] = None  # set only while {' or '.join(states)}", 2)
            elif plan.target_status not in states:
                b.add(f"changes[{_lit(field)}] = None  # set only while {' or '.join(states)}")
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
        # an edit given none of its fields changes nothing ("update_commit" with no field
        # only stamped updated_at); an action with no fields records its time
        if plan.now_columns and not any(p.role in ("set", "ref") for p in plan.params):
            b.add("pass  # nothing but the time of the action is recorded", 2)
        else:
            b.add("raise ToolError(\"Nothing to change: give at least one field.\")", 2)
    for col in plan.now_columns:
        b.add(f"changes[{_lit(col)}] = ctx.now()")
    b.add(f"return _update(ctx, {_lit(plan.table)}, {_lit(pk)}, {key}, changes)")


def _hold_lines(b: _Body, spec: EnvSpec, plan: ToolPlan, target: str) -> None:
    """A status change of a record that holds a parent while live (a trip its bike): leaving
    the live states frees the parent, entering them takes it (refused unless it is free)."""
    fixed = plan.target_status
    for h in plan.holds:
        if not h.held:
            continue
        parent = spec.table(h.parent)
        ppk = pk_column(parent)
        live = tuple(h.holding)
        pnoun = singular(h.parent).replace("_", " ")
        now = [c.name for c in parent.columns if c.name in ("updated_at", "modified_at")]
        # with a fixed target only one direction can happen
        take = f"current not in {live!r}" + ("" if fixed else f" and {target} in {live!r}")
        free = f"current in {live!r}" + ("" if fixed else f" and {target} not in {live!r}")
        takes = fixed is None or fixed in live
        if takes:
            b.add(f"if {take}:")
            b.add(f"if row[{_lit(h.fk)}] is None:", 2)
            b.add(f"raise ToolError(\"Refused: it names no {pnoun} to hold.\")", 3)
            b.add(f"held = _row(ctx, {_lit(h.parent)}, {_lit(ppk)}, {_lit(ppk)}, "
                  f"row[{_lit(h.fk)}], {_lit(pnoun)})", 2)
            for c, values in h.takes.items():
                b.add(f"if held[{_lit(c)}] not in {tuple(values)!r}:", 2)
                b.add(f"raise ToolError(f\"Refused: the {pnoun} has {c} "
                      f"{{held[{_lit(c)}]!r}}; something else holds it.\")", 3)
        for cond, values in ((free, h.free), (take, h.held)):
            if (values is h.held) != takes and fixed is not None:
                continue
            sets = {**values, **{n: None for n in now}}
            cols = ", ".join(f'"{c}" = ?' for c in sets)
            vals = ", ".join("ctx.now()" if c in now else _lit(v) for c, v in sets.items())
            b.add(f"if {cond}:")
            b.add(f"ctx.execute('UPDATE \"{h.parent}\" SET {cols} WHERE \"{ppk}\" = ?', "
                  f"[{vals}, row[{_lit(h.fk)}]])", 2)


def render_module(spec: EnvSpec, plans: list[ToolPlan]) -> str:
    head = HEADER.format(name=spec.name, theme=spec.theme.name.replace('"', "'"),
                         max_rows=MAX_ROWS)
    return head + "".join("\n\n" + render_tool(spec, p) for p in plans)


__all__ = ["render_module", "render_tool"]


# ---- tools rendered from their behaviour contract -----------------------------------------------
def _value_expr(v: Value, row: str, spec: EnvSpec) -> str:
    """Python expression of one written value inside a contract tool."""
    if v.source == "arg" and v.column:
        return f"({v.arg} if {v.arg} is not None else row[{_lit(v.column)}])"
    if v.source == "arg":
        return str(v.arg)
    if v.source == "const":
        return _lit(v.value)
    if v.source == "now":
        return "now"
    if v.source == "today":
        return "ctx.today()"
    if v.source == "entity":
        return f"row[{_lit(v.column)}]"
    if v.source == "row":
        return f"{v.arg}_row[{_lit(v.column)}]"
    if v.source == "days_after":
        base = f"row[{_lit(v.column)}] or ctx.today()" if v.column else "ctx.today()"
        days = _lit(v.value)
        if v.alt_column:
            days = f"({_lit(v.alt_value)} if row[{_lit(v.alt_column)}] else {_lit(v.value)})"
        return f"_days_after({base}, {days})"
    if v.source == "increment":
        return f"(row[{_lit(v.column)}] or 0) + {_lit(v.value)}"
    if v.source == "new_id":
        return "ctx.new_id()"
    if v.source == "next_code":
        return f"_next_code(ctx, {_lit(v.value)}, {_lit(v.column)})"
    if v.source == "sql_table_name":
        return "table_name"
    raise ValueError(f"unknown value source {v.source!r}")


def _dict_expr(sets: dict[str, Value], row: str, spec: EnvSpec) -> str:
    return "{" + ", ".join(f"{_lit(k)}: {_value_expr(v, row, spec)}" for k, v in sets.items()) \
        + "}"


def _guard_lines(b: _Body, spec: EnvSpec, c: Contract, g: Guard, noun: str) -> None:
    ref = "row" if g.row == "entity" else f"{g.row}_row"
    what = noun if g.row == "entity" else g.row.replace("_", " ")
    if g.kind == "state_in":
        b.add(f"if {ref}[{_lit(g.column)}] not in {tuple(g.values)!r}:")
        b.add(f"raise ToolError(f\"Refused: {g.message} ({what} has {g.column} "
              f"{{{ref}[{_lit(g.column)}]!r}}).\")", 2)
    elif g.kind == "below":
        b.add(f"if (row[{_lit(g.column)}] or 0) >= {_lit(g.limit)}:")
        b.add(f"raise ToolError(f\"Refused: {g.column} is already {{row[{_lit(g.column)}]}}, "
              f"the most allowed is {int(g.limit or 0)}.\")", 2)
    elif g.kind == "differs":
        arg = c.param(g.arg or "")
        ref_pk = pk_column(spec.table(arg.ref_table)) if arg and arg.ref_table else "id"
        b.add(f"if row[{_lit(g.column)}] == {g.arg}_row[{_lit(ref_pk)}]:")
        b.add(f"raise ToolError(\"Refused: {g.message}.\")", 2)
    elif g.kind == "none_held":
        # the record the entity reaches along its FK path (a loan's copy's title)
        value, source = "?", c.entity
        for prev, col in zip(g.path, g.path[1:], strict=False):
            parent, pk = spec.table(source).column(prev).foreign_key.split(".")  # type: ignore[union-attr]
            value = f'(SELECT "{col}" FROM "{parent}" WHERE "{pk}" = {value})'
            source = parent
        (st, live), = g.where.items()
        marks = ", ".join("?" for _ in live)
        b.add(f"if ctx.one('SELECT 1 FROM \"{g.table}\" WHERE \"{g.link}\" = {value} AND "
              f"\"{st}\" IN ({marks}) AND \"{g.column}\" IS NOT ?', "
              f"[row[{_lit(g.path[0])}], {', '.join(_lit(x) for x in live)}, "
              f"row[{_lit(g.arg)}]]):")
        b.add(f"raise ToolError(\"Refused: {g.message}.\")", 2)
    elif g.kind == "exists_where":
        paths = next(p.name for p in c.params if p.role == "paths")
        path = c.options.get("path", "path")
        b.add(f"known = {{r[{_lit(path)}] for r in ctx.query('SELECT \"{path}\" FROM "
              f"\"{g.table}\" WHERE \"{g.link}\" = ?', (row[{_lit(pk_column(spec.table(c.entity)))}],))}}")
        b.add(f"missing = [p for p in {paths} if p not in known]")
        b.add("if missing:")
        b.add(f"raise ToolError(f\"Refused: no change to {{', '.join(missing)}} in this "
              f"{noun}.\")", 2)
        b.add(f"if not {paths}:")
        b.add("raise ToolError(\"Refused: give at least one path.\")", 2)


def _effect_lines(b: _Body, spec: EnvSpec, c: Contract, e: Effect, source: str) -> str | None:
    """Emit one effect; the variable holding an inserted row, if any."""
    t = spec.table(e.table)
    tpk = pk_column(t)
    if e.op == "insert":
        var = f"new_{singular(e.table)}"
        b.add(f"{var} = _insert(ctx, {_lit(e.table)}, {_lit(tpk)}, "
              f"{_dict_expr(e.set, source, spec)})")
        return var
    sets = ", ".join(f'"{k}" = ?' for k in e.set)
    vals = ", ".join(_value_expr(v, source, spec) for v in e.set.values())
    clauses: list[str] = []
    params: list[str] = []
    if e.rows == "entity":
        clauses.append(f'"{tpk}" = ?')
        params.append(f"{source}[{_lit(tpk)}]")
    elif e.rows == "children":
        clauses.append(f'"{e.link}" = ?')
        params.append(f"row[{_lit(pk_column(spec.table(c.entity)))}]")
    elif e.rows == "peers":
        clauses += [f'"{e.link}" = ?', f'"{tpk}" != ?']
        params += [f"row[{_lit(e.link)}]", f"row[{_lit(tpk)}]"]
    elif e.rows == "parent" and e.link_arg:
        clauses.append(f'"{tpk}" = ?')
        params.append(f"{e.link_arg}_row[{_lit(tpk)}]")
    elif e.rows == "parent":
        clauses.append(f'"{tpk}" = ?')
        params.append(f"{source}[{_lit(e.link)}]")
    for col, values in e.where.items():
        marks = ", ".join("?" for _ in values)
        clauses.append(f'"{col}" IN ({marks})')
        params += [_lit(v) for v in values]
    where_args = list(e.where_arg.items())
    sql = f'UPDATE "{e.table}" SET {sets} WHERE ' + " AND ".join(clauses)
    if e.op == "delete":
        sql = f'DELETE FROM "{e.table}" WHERE ' + " AND ".join(clauses)
        vals = ""
    if where_args:
        col, arg = where_args[0]
        b.add(f"marks = ', '.join('?' for _ in {arg})")
        b.add(f"ctx.execute(f'{sql} AND \"{col}\" IN ({{marks}})', "
              f"[{', '.join(x for x in [vals, *params] if x)}, *{arg}])")
    else:
        b.add(f"ctx.execute('{sql}', [{', '.join(x for x in [vals, *params] if x)}])")
    return None


def _resolve_rows(b: _Body, spec: EnvSpec, c: Contract) -> None:
    for p in c.params:
        if p.role != "row" or not p.ref_table:
            continue
        ref_pk = pk_column(spec.table(p.ref_table))
        noun = singular(p.ref_table).replace("_", " ")
        if p.required:
            b.add(f"{p.name}_row = _row(ctx, {_lit(p.ref_table)}, {_lit(ref_pk)}, "
                  f"{_lit(p.ref_column)}, {p.name}, {_lit(noun)})")
        else:
            b.add(f"{p.name}_row = None if {p.name} is None else _row(ctx, {_lit(p.ref_table)}, "
                  f"{_lit(ref_pk)}, {_lit(p.ref_column)}, {p.name}, {_lit(noun)})")


def _contract_key(b: _Body, spec: EnvSpec, c: Contract) -> None:
    table = spec.table(c.entity)
    pk = pk_column(table)
    key = c.key()
    assert key is not None
    noun = singular(c.entity).replace("_", " ")
    scope = next((p for p in c.params if p.role == "scope"), None)
    if scope is None:
        b.add(f"row = _row(ctx, {_lit(c.entity)}, {_lit(pk)}, {_lit(key.column)}, {key.name}, "
              f"{_lit(noun)})")
        return
    spk = pk_column(spec.table(scope.ref_table or ""))
    b.add(f"scope = _row(ctx, {_lit(scope.ref_table)}, {_lit(spk)}, {_lit(scope.ref_column)}, "
          f"{scope.name}, {_lit(singular(scope.ref_table or '').replace('_', ' '))})")
    b.add(f"row = _row_in(ctx, {_lit(c.entity)}, {_lit(pk)}, {_lit(key.column)}, {key.name}, "
          f"{_lit(scope.column)}, scope[{_lit(spk)}], {_lit(noun)})")


def _contract_filters(b: _Body, c: Contract) -> None:
    b.add("clauses, params = [], []")
    pk = "id"
    for p in c.params:
        level = 1
        if p.role not in ("any_like", "child_eq", "child_state", "eq", "like", "ge", "le"):
            continue
        if not p.required:
            b.add(f"if {p.name} is not None:")
            level = 2
        if p.role == "any_like":
            ors = " OR ".join(f'"{col}" LIKE ? ESCAPE \\\'\\\\\\\'' for col in p.columns)
            b.add(f"clauses.append('({ors})')", level)
            b.add(f"params.extend([_like({p.name})] * {len(p.columns)})", level)
        elif p.role == "child_eq":
            b.add(f"clauses.append('\"{pk}\" IN (SELECT \"{p.via_link}\" FROM \"{p.via_table}\" "
                  f"WHERE \"{p.via_column}\" = ?)')", level)
            b.add(f"params.append({p.name})", level)
        elif p.role == "child_state":
            b.add(f"clauses.append(('' if {p.name} else 'NOT ') + '\"{pk}\" IN (SELECT "
                  f"\"{p.via_link}\" FROM \"{p.via_table}\" WHERE \"{p.via_column}\" = ? "
                  f"AND \"{p.via_link}\" IS NOT NULL)')", level)
            b.add(f"params.append({_lit(p.via_value)})", level)
        elif p.role == "eq":
            b.add(f"clauses.append('\"{p.column}\" = ?')", level)
            b.add(f"params.append({p.name})", level)
        elif p.role == "like":
            b.add(f"clauses.append('\"{p.column}\" LIKE ? ESCAPE \\'\\\\\\'')", level)
            b.add(f"params.append(_like({p.name}))", level)
        elif p.role in ("ge", "le"):
            _bound(b, p, level)
    b.add('where = (" WHERE " + " AND ".join(clauses)) if clauses else ""')


def _bound(b: _Body, p: Any, level: int) -> None:
    """A range bound: an upper bound compares as much of the value as it gives, so "to
    2026-01-20" keeps that day's 09:00 ('2026-01-20T09:00' > '2026-01-20' as text)."""
    if p.role == "ge":
        b.add(f"clauses.append('\"{p.column}\" >= ?')", level)
        b.add(f"params.append({p.name})", level)
    else:
        b.add(f"clauses.append('substr(\"{p.column}\", 1, length(?)) <= ?')", level)
        b.add(f"params.extend([{p.name}, {p.name}])", level)


def _render_compute(b: _Body, spec: EnvSpec, c: Contract) -> None:
    o = c.options
    query = next((p.name for p in c.params if p.role == "text"), "query")
    if c.computation == "sql_select":
        b.add(f"sql = _one_statement({query}, ('SELECT', 'WITH'), 'read-only SELECT')")
        b.add("return ctx.query(sql)")
    elif c.computation == "sql_write":
        b.add(f"sql = _one_statement({query}, ('INSERT', 'UPDATE', 'DELETE'), "
              "'INSERT, UPDATE or DELETE')")
        b.add("cur = ctx.execute(sql)")
        b.add("return {\"rows_affected\": cur.rowcount}")
    elif c.computation == "describe_table":
        _contract_key(b, spec, c)
        col = c.key().column  # type: ignore[union-attr]
        b.add(f"name = row[{_lit(col)}].replace('\"', '\"\"')")
        b.add("cur = ctx.execute(f'SELECT * FROM \"{name}\" LIMIT 0')")
        b.add("return [{\"name\": d[0]} for d in cur.description]")
    elif c.computation in ("diff", "status"):
        _contract_key(b, spec, c)
        pk = pk_column(spec.table(c.entity))
        _resolve_rows(b, spec, c)
        for p in c.params:
            if p.role == "row" and p.column:
                b.add(f"if {p.name}_row[{_lit(p.column)}] != row[{_lit(pk)}]:")
                b.add(f"raise ToolError(f\"No {singular(p.ref_table or '')} {{{p.name}!r}} in "
                      f"this {singular(c.entity)}.\")", 2)
        staged = o["staged_column"]
        b.add(f"changes = ctx.query('SELECT * FROM \"{o['table']}\" WHERE \"{o['link']}\" = ? "
              f"ORDER BY \"{o['path']}\", \"id\"', (row[{_lit(pk)}],))")
        if c.computation == "diff":
            if o.get("staged") is not None:
                b.add(f"changes = [r for r in changes if bool(r[{_lit(staged)}]) is "
                      f"{bool(o['staged'])}]")
            b.add(f"return {{\"files\": [r[{_lit(o['path'])}] for r in changes], "
                  f"\"diff\": \"\\n\".join(r[{_lit(o['diff'])}] for r in changes "
                  f"if r[{_lit(o['diff'])}])}}")
        else:
            change = o.get("change")
            untracked = f" and r[{_lit(change)}] == 'untracked'" if change else " and False"
            tracked = f" and r[{_lit(change)}] != 'untracked'" if change else ""
            b.add(f"return {{\"staged\": [r[{_lit(o['path'])}] for r in changes if "
                  f"r[{_lit(staged)}]],")
            b.add(f"        \"unstaged\": [r[{_lit(o['path'])}] for r in changes if not "
                  f"r[{_lit(staged)}]{tracked}],")
            b.add(f"        \"untracked\": [r[{_lit(o['path'])}] for r in changes if not "
                  f"r[{_lit(staged)}]{untracked}]}}")
    elif c.computation == "convert":
        _resolve_rows(b, spec, c)
        src, time_arg, dst = (c.params[0].name, c.params[1].name, c.params[2].name)
        off, name = _lit(o["offset"]), _lit(o["name"])
        b.add(f"a, z = _minutes({src}_row[{off}]), _minutes({dst}_row[{off}])")
        b.add(f"hours, minutes = (int(x) for x in {time_arg}.split(':'))")
        tr = o.get("transitions")
        if tr:  # today's offsets: the zones' daylight saving time from the transitions table
            pk = _lit(pk_column(spec.table(c.entity)))
            where = f"{_lit(tr['table'])}, {_lit(tr['link'])}, {_lit(tr['at'])}, " \
                    f"{_lit(tr['after'])}"
            b.add("local = datetime.combine(ctx.clock.date(), datetime.min.time()) + "
                  "timedelta(hours=hours, minutes=minutes)")
            b.add(f"a = _offset_at(ctx, {src}_row[{pk}], local - timedelta(minutes=a), a, "
                  f"{where})")
            b.add(f"z = _offset_at(ctx, {dst}_row[{pk}], local - timedelta(minutes=a), z, "
                  f"{where})")
        b.add("total = hours * 60 + minutes - a + z")
        b.add("day, clock = divmod(total, 24 * 60)")
        b.add(f"return {{\"source\": {{\"timezone\": {src}_row[{name}], \"time\": {time_arg}, "
              "\"utc_offset\": _offset_text(a)},")
        b.add(f"        \"target\": {{\"timezone\": {dst}_row[{name}], "
              "\"time\": f\"{clock // 60:02d}:{clock % 60:02d}\", \"utc_offset\": _offset_text(z)},")
        b.add("        \"time_difference\": f\"{(z - a) / 60:+g}h\", \"day_offset\": day}")
    elif c.computation == "clock":
        _resolve_rows(b, spec, c)
        zone = c.params[0].name
        off, name = _lit(o["offset"]), _lit(o["name"])
        b.add(f"z = _minutes({zone}_row[{off}])")
        tr = o.get("transitions")
        if tr:  # the offset the zone has now (daylight saving time from the transitions)
            b.add(f"z = _offset_at(ctx, {zone}_row[{_lit(pk_column(spec.table(c.entity)))}], "
                  f"ctx.clock, z, {_lit(tr['table'])}, {_lit(tr['link'])}, {_lit(tr['at'])}, "
                  f"{_lit(tr['after'])})")
        b.add("local = ctx.clock + timedelta(minutes=z)")
        b.add(f"return {{\"timezone\": {zone}_row[{name}], "
              "\"datetime\": local.isoformat(timespec='seconds') + _offset_text(z), "
              "\"utc_offset\": _offset_text(z)}")
    elif c.computation == "create_table":
        name_col = o["name_column"]
        b.add(f"sql = _one_statement({query}, ('CREATE',), 'CREATE TABLE')")
        b.add("m = re.match(r'(?is)CREATE\\s+TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?[\"`\\[]?(\\w+)', "
              "sql)")
        b.add("if m is None:")
        b.add("raise ToolError(\"Refused: not a CREATE TABLE statement.\")", 2)
        b.add("table_name = m.group(1)")
        b.add(f"if ctx.one('SELECT 1 FROM \"{c.entity}\" WHERE \"{name_col}\" = ?', "
              "(table_name,)):")
        b.add("raise ToolError(f\"Refused: a table named {table_name!r} already exists.\")", 2)
        b.add("now = ctx.now()")
        effect = c.effects[0]
        b.add(f"return _insert(ctx, {_lit(c.entity)}, "
              f"{_lit(pk_column(spec.table(c.entity)))}, {_dict_expr(effect.set, 'row', spec)})")
    elif c.computation == "fetch":
        _resolve_rows(b, spec, c)
        url = c.params[0].name
        opt = {snake(p.name): p.name for p in c.params if p.role == "option"}
        start, length = opt.get("start_index"), opt.get("max_length")
        b.add(f"page = {url}_row")
        b.add("if page['status_code'] is not None and page['status_code'] >= 400:")
        b.add(f"raise ToolError(f\"Failed to fetch {{{url}}} - status code "
              "{page['status_code']}.\")", 2)
        b.add("body = page['body'] or ''")
        b.add(f"start = max(0, {start} or 0)" if start else "start = 0")
        b.add(f"size = {length} if {length} and {length} > 0 else {FETCH_MAX_LENGTH}" if length
              else f"size = {FETCH_MAX_LENGTH}")
        b.add("if start and start >= len(body):")
        b.add("raise ToolError(f\"No more content: start_index {start} is past its end "
              "({len(body)} characters).\")", 2)
        b.add("content = body[start:start + size]")
        b.add("out = {'url': page['url'], 'status_code': page['status_code'], "
              "'content': content}")
        if c.options.get("content_type"):
            b.add("out['content_type'] = page['content_type']")
        b.add("if start + size < len(body):")
        b.add("out['next_start_index'] = start + size  # cut: call again from here", 2)
        b.add("return out")
    elif c.computation == "commit":
        _render_commit(b, spec, c)
    else:
        raise ValueError(f"no renderer for computation {c.computation!r}")


def _render_commit(b: _Body, spec: EnvSpec, c: Contract) -> None:
    """git commit: the staged changes become the commit's file changes and leave the staging
    area; the checked-out branch's head moves to the commit."""
    o = c.options
    _resolve_rows(b, spec, c)
    repo, msg = c.params[0].name, c.params[1].name
    rpk = pk_column(spec.table(c.params[0].ref_table or ""))
    pk = pk_column(spec.table(c.entity))
    b.add(f"staged = ctx.query('SELECT * FROM \"{o['changes']}\" WHERE \"{o['link']}\" = ? AND "
          f"\"{o['staged']}\" = 1 ORDER BY \"{o['path']}\", \"id\"', ({repo}_row[{_lit(rpk)}],))")
    b.add("if not staged:")
    b.add("raise ToolError(\"Refused: nothing to commit (no staged changes).\")", 2)
    b.add("now = ctx.now()")
    br = o.get("branch")
    parent = "None"
    if br:
        b.add(f"branch = ctx.one('SELECT * FROM \"{br['table']}\" WHERE \"{br['link']}\" = ? AND "
              f"\"{br['status']}\" = ? ORDER BY \"id\" LIMIT 1', "
              f"({repo}_row[{_lit(rpk)}], 'checked_out'))")
        parent = f"branch[{_lit(br['head'])}] if branch else None"
    if o.get("parent"):
        b.add(f"parent = {parent}")
        b.add("if parent is None:")
        b.add(f"last = ctx.one('SELECT \"{pk}\" FROM \"{c.entity}\" WHERE \"{o['repo_fk']}\" = ? "
              f"ORDER BY \"{pk}\" DESC LIMIT 1', ({repo}_row[{_lit(rpk)}],))", 2)
        b.add(f"parent = last[{_lit(pk)}] if last else None", 2)
    values = [f"{_lit(o['repo_fk'])}: {repo}_row[{_lit(rpk)}]", f"'message': {msg}"]
    if o.get("sha"):
        b.add(f"sha = hashlib.sha1(f\"{{{repo}_row[{_lit(rpk)}]}}:{{"
              f"{'parent' if o.get('parent') else 'None'}}}:{{{msg}}}:{{now}}\".encode()).hexdigest()")
        values.append(f"{_lit(o['sha'])}: sha")
    if o.get("parent"):
        values.append(f"{_lit(o['parent'])}: parent")
    values += [f"{_lit(n)}: now" for n in o["now"]]
    b.add(f"new = _insert(ctx, {_lit(c.entity)}, {_lit(pk)}, {{{', '.join(values)}}})")
    f = o.get("files")
    if f:
        b.add("for change in staged:")
        vals = [f"{_lit(f['link'])}: new[{_lit(pk)}]", f"'path': change[{_lit(o['path'])}]"]
        if f.get("change") and o.get("change"):
            vals.append(f"{_lit(f['change'])}: 'added' if change[{_lit(o['change'])}] == "
                        f"'untracked' else change[{_lit(o['change'])}]")
        for key, mark in (("additions", "+"), ("deletions", "-")):
            if f.get(key) and o.get("diff"):
                vals.append(f"{_lit(f[key])}: sum(1 for ln in (change[{_lit(o['diff'])}] or '')"
                            f".splitlines() if ln.startswith({mark!r}) and not "
                            f"ln.startswith({mark * 3!r}))")
        b.add(f"_insert(ctx, {_lit(f['table'])}, 'id', {{{', '.join(vals)}}})", 2)
    b.add(f"ctx.execute('DELETE FROM \"{o['changes']}\" WHERE \"{o['link']}\" = ? AND "
          f"\"{o['staged']}\" = 1', ({repo}_row[{_lit(rpk)}],))")
    if br:
        b.add("if branch:")
        b.add(f"ctx.execute('UPDATE \"{br['table']}\" SET \"{br['head']}\" = ?"
              + (", \"updated_at\" = ?" if _has_col(spec, br["table"], "updated_at") else "")
              + f" WHERE \"id\" = ?', [new[{_lit(pk)}]"
              + (", now" if _has_col(spec, br["table"], "updated_at") else "")
              + ", branch['id']])", 2)
        th = br.get("through")
        if th:
            vals = [f"{_lit(th['branch'])}: branch['id']", f"{_lit(th['commit'])}: new[{_lit(pk)}]"]
            if th.get("now"):
                vals.append(f"{_lit(th['now'])}: now")
            b.add(f"_insert(ctx, {_lit(th['table'])}, 'id', {{{', '.join(vals)}}})", 2)
    b.add(f"return {{**new, \"files\": [change[{_lit(o['path'])}] for change in staged]}}")


def _has_col(spec: EnvSpec, table: str, column: str) -> bool:
    return any(col.name == column for col in spec.table(table).columns)


def render_contract_body(b: _Body, spec: EnvSpec, plan: ToolPlan) -> None:
    """The body of a tool whose plan is its contract (kind "contract")."""
    c = plan.contract
    assert c is not None
    table = spec.table(c.entity)
    pk = pk_column(table)
    noun = singular(c.entity).replace("_", " ")
    if c.computation is not None:
        _render_compute(b, spec, c)
        return
    if c.verb == "read_one":
        _contract_key(b, spec, c)
        b.add("out = dict(row)")
        for child, fk in c.embed:
            b.add(f"out[{_lit(child)}] = ctx.query('SELECT * FROM \"{child}\" WHERE \"{fk}\" = ? "
                  f"ORDER BY \"id\"', (row[{_lit(pk)}],))")
        b.add("return out")
        return
    if c.verb in ("list", "search"):
        _contract_filters(b, c)
        limit = next((p.name for p in c.params if p.role == "limit"), "MAX_ROWS")
        order = " DESC" if newest_first(c.tool, c.description) else ""
        b.add(f"sql = f'SELECT * FROM \"{c.entity}\"{{where}} ORDER BY \"{pk}\"{order} LIMIT ?'")
        b.add(f"return ctx.query(sql, [*params, {limit}])")
        return
    if c.verb == "create":
        _render_create(b, spec, plan, ret=False)
        for g in c.guards:
            if g.row != "entity":
                p = c.param(g.row)
                ref_pk = pk_column(spec.table(p.ref_table or "")) if p else "id"
                b.add(f"{g.row}_row = _row(ctx, {_lit(p.ref_table)}, {_lit(ref_pk)}, "
                      f"{_lit(p.ref_column)}, {g.row}, "
                      f"{_lit(singular(p.ref_table or '').replace('_', ' '))})")
                _guard_lines(b, spec, c, g, noun)
        for g in c.guards:
            if g.kind == "none_where" and g.match:
                cond = [f'"{col}" IN ({", ".join("?" for _ in vals)})'
                        for col, vals in g.where.items()] + [f'"{col}" = ?' for col in g.match]
                vals = [_lit(v) for vals in g.where.values() for v in vals] + list(
                    g.match.values())
                b.add(f"if ctx.one('SELECT 1 FROM \"{g.table}\" WHERE {' AND '.join(cond)}', "
                      f"[{', '.join(vals)}]):")
                b.add(f"raise ToolError(\"Refused: only when {g.message}.\")", 2)
        b.add(f"new = _insert(ctx, {_lit(c.entity)}, {_lit(pk)}, values)")
        b.add("now = ctx.now()")
        for e in c.effects[1:]:
            _effect_lines(b, spec, c, e, "new")
        b.add("return new")
        return
    # transitions and field updates of a named record
    _contract_key(b, spec, c)
    _resolve_rows(b, spec, c)
    for g in c.guards:
        _guard_lines(b, spec, c, g, noun)
    b.add("now = ctx.now()")
    inserted: list[tuple[str, str]] = []
    for e in c.effects:
        var = _effect_lines(b, spec, c, e, "row")
        if var:
            inserted.append((var, singular(e.table)))
    entity_effect = any(e.rows == "entity" and e.table == c.entity for e in c.effects)
    if entity_effect:
        b.add(f"out = dict(ctx.one('SELECT * FROM \"{c.entity}\" WHERE \"{pk}\" = ?', "
              f"(row[{_lit(pk)}],)))")
        columns = {col.name for col in table.columns}
        for var, name in inserted:
            b.add(f"out[{_lit(name if name not in columns else name + '_record')}] = {var}")
        b.add("return out")
        return
    child = next(e for e in c.effects if e.rows == "children")
    flag, value = next(iter(child.set.items()))
    paths = next((p.name for p in c.params if p.role == "paths"), None)
    path = c.options.get("path", "path")
    where = f'"{child.link}" = ?'
    b.add(f"rows = ctx.query('SELECT \"{path}\" FROM \"{child.table}\" WHERE {where} AND "
          f"\"{flag}\" = ? ORDER BY \"{path}\"', (row[{_lit(pk)}], {_value_expr(value, 'row', spec)}))")
    if paths:
        b.add(f"return {{{_lit(flag)}: {_value_expr(value, 'row', spec)}, "
              f"\"paths\": sorted(p for p in {{r[{_lit(path)}] for r in rows}} if p in {paths})}}")
    else:
        b.add(f"return {{{_lit(flag)}: {_value_expr(value, 'row', spec)}, "
              f"\"paths\": [r[{_lit(path)}] for r in rows]}}")
