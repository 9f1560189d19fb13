"""Tool plans → one toolkit-form module (the same form a person writes by hand).

The module has a few shared helpers (`_row`, `_insert`, `_update`, `_like`) and one typed,
documented @tool function per plan. Every SQL statement names its table and columns
explicitly, so a reader (or a repair attempt) sees exactly what a tool touches. The bodies
come from render_plans.py (plain plan kinds), render_contracts.py and
render_computations.py (tools rendered from their behaviour contract).
"""

from __future__ import annotations

import json
import textwrap

from agent_world.design.offline.plans import MAX_ROWS, ParamPlan, ToolPlan, newest_first, pk_column
from agent_world.design.offline.render_computations import _render_compute
from agent_world.design.offline.render_contracts import (
    _contract_filters,
    _contract_key,
    _effect_lines,
    _guard_lines,
    _resolve_rows,
    _value_expr,
)
from agent_world.design.offline.render_plans import (
    _Body,
    _filters,
    _key_lookup,
    _lit,
    _render_change,
    _render_create,
)
from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import singular

HEADER = '''"""Tools of the `{name}` environment ({theme}).

Designed from the database schema and the source's tools; each @tool function is one tool
(see agent_world.envs.toolkit). Refusals raise ToolError naming the rule.
"""

import hashlib
import re
from datetime import date, datetime, timedelta
from typing import Annotated, Any, Literal

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


def _row_where(ctx, table, key, match, noun):
    """The first record of `table` (in `key` order) holding every value of `match`."""
    where = " AND ".join(f'"{{c}}" = ?' for c in match)
    row = ctx.one(f'SELECT * FROM "{{table}}" WHERE {{where}} ORDER BY "{{key}}" LIMIT 1',
                  list(match.values()))
    if row is None:
        said = ", ".join(f"{{c}} {{v!r}}" for c, v in match.items())
        raise ToolError(f"No {{noun}} with {{said}}.")
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


def _hours_until(at, now):
    """Hours from `now` until `at` (ISO date-times; negative once past, endless when empty)."""
    if not at:
        return float("inf")
    start = datetime.fromisoformat(str(at)).replace(tzinfo=None)
    return (start - datetime.fromisoformat(now).replace(tzinfo=None)).total_seconds() / 3600


def _accrued(rate, due, today, cap):
    """A charge of `rate` per whole day from `due` to `today`, at most `cap` when it has one."""
    days = (date.fromisoformat(str(today)[:10]) - date.fromisoformat(str(due)[:10])).days
    amount = round(rate * max(days, 0), 2)
    return min(amount, cap) if isinstance(cap, (int, float)) and cap > 0 else amount


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
       "array": "list[str]", "object": "dict[str, Any]"}


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


def _doc_text(text: str) -> str:
    """Source words as docstring text: a backslash ("matches \\.md") would be read as an
    escape, a triple quote would end the docstring."""
    return text.replace("\\", "\\\\").replace('"""', "'''")


def _docstring(plan: ToolPlan) -> str:
    # no breaks at hyphens: the schema is read back from these lines, joined by spaces
    lines = textwrap.wrap(_doc_text(plan.description), 92, break_on_hyphens=False) \
        or [plan.name]
    out = ['    """' + lines[0], *("    " + ln for ln in lines[1:])]
    if plan.params:
        out += ["", "    Args:"]
        for p in sorted(plan.params, key=lambda p: not p.required):
            wrapped = textwrap.wrap(f"{p.name}: {_doc_text(p.description)}", 86,
                                    break_on_hyphens=False)
            out.append("        " + wrapped[0])
            out += ["            " + ln for ln in wrapped[1:]]
    out.append('    """')
    return "\n".join(out)


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


def render_module(spec: EnvSpec, plans: list[ToolPlan]) -> str:
    head = HEADER.format(name=spec.name, theme=spec.theme.name.replace('"', "'"),
                         max_rows=MAX_ROWS)
    return head + "".join("\n\n" + render_tool(spec, p) for p in plans)


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
        _contract_filters(b, spec, c)
        limit = next((p.name for p in c.params if p.role == "limit"), "MAX_ROWS")
        order = " DESC" if newest_first(c.tool, c.description) else ""
        b.add(f"sql = f'SELECT * FROM \"{c.entity}\"{{where}} ORDER BY \"{pk}\"{order} LIMIT ?'")
        b.add(f"return ctx.query(sql, [*params, {limit}])")
        return
    if c.verb == "create":
        _render_create(b, spec, plan, ret=False)
        resolved: set[str] = set()
        for g in c.guards:
            if g.row != "entity":
                p = c.param(g.row)
                ref_pk = pk_column(spec.table(p.ref_table or "")) if p else "id"
                if g.row not in resolved:  # two guards on one row read it once
                    b.add(f"{g.row}_row = _row(ctx, {_lit(p.ref_table)}, {_lit(ref_pk)}, "
                          f"{_lit(p.ref_column)}, {g.row}, "
                          f"{_lit(singular(p.ref_table or '').replace('_', ' '))})")
                    resolved.add(g.row)
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


__all__ = ["render_contract_body", "render_module", "render_tool"]
