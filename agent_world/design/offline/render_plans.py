"""Code of the plain plan kinds: the body builder (`_Body`), a key lookup, filters and range
bounds, a create, a status change or field update, and the parents a status change holds
or frees.
"""

from __future__ import annotations

from typing import Any

from agent_world.design.offline.contracts import final_states
from agent_world.design.offline.plans import (
    HASH_COLUMNS,
    ParamPlan,
    ToolPlan,
    pk_column,
    range_bounds,
)
from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import singular


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
    """Emit `row = ...` finding the plan's record by its key argument and what else names it
    (`key_matches`); the expression of the row's id."""
    table = spec.table(plan.table)
    pk = pk_column(table)
    key = plan.param("key")
    matches = plan.key_matches()
    assert pk is not None and (key is not None or matches)
    noun = singular(plan.table).replace("_", " ")
    if not matches:
        assert key is not None
        b.add(f"row = _row(ctx, {_lit(plan.table)}, {_lit(pk)}, {_lit(key.column)}, "
              f"{key.name}, {_lit(noun)})")
        return f"row[{_lit(pk)}]"
    given = ", ".join(f"{_lit(p.column)}: {p.name}" for p in [key, *matches]
                      if p is not None and p.required and p.role != "ref")
    b.add(f"match = {{{given}}}")
    for p in matches:
        level = 1
        if not p.required:
            b.add(f"if {p.name} is not None:")
            level = 2
        if p.role == "ref":  # the id of the record it names, which must exist
            _resolve_at(b, spec, p, f"match[{_lit(p.column)}]", level)
        elif not p.required:
            b.add(f"match[{_lit(p.column)}] = {p.name}", level)
    b.add(f"row = _row_where(ctx, {_lit(plan.table)}, {_lit(pk)}, match, {_lit(noun)})")
    return f"row[{_lit(pk)}]"


def _filters(b: _Body, spec: EnvSpec, plan: ToolPlan) -> None:
    if plan.max_span_days is not None:
        _span_limit(b, plan)
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
        elif p.role in ("eq", "key", "like", "ge", "le"):
            column_filter(b, p, level)
        elif p.role == "ref":
            ref_filter(b, spec, p, level)
    b.add('where = (" WHERE " + " AND ".join(clauses)) if clauses else ""')


def ref_filter(b: _Body, spec: EnvSpec, p: Any, level: int) -> None:
    """The clause of a filter naming another record (`ref`: the repository by its path), which
    must exist; negated, the rows naming any other or none."""
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
            _resolve_at(b, spec, p, f"values[{_lit(p.column)}]", level,
                        scope=_shared_scope(spec, plan, p))
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
    key = next((c for c in table.columns if c.name == pk), None)
    if key is not None and key.type == "text" and not any(
            p.column == pk and p.role in ("set", "ref") for p in plan.params):
        # a text key is no rowid alias: the service names the new record (Gmail's label ids)
        b.add(f"values[{_lit(pk)}] = ctx.new_id({_lit(singular(plan.table) + '_')})")
    if ret:
        b.add(f"return _insert(ctx, {_lit(plan.table)}, {_lit(pk)}, values)")


def _shared_scope(spec: EnvSpec, plan: ToolPlan, p: ParamPlan) -> str | None:
    """The container column a referenced record must share with the one being created, when a
    required argument sets it: git_create_branch(repo_path, base_branch='main') takes the
    base branch of that repository, not the first 'main' of any."""
    assert p.ref_table
    ref = spec.table(p.ref_table)
    table = spec.table(plan.table)
    for q in plan.params:
        if q is p or not q.required or q.column is None or q.role not in ("set", "ref"):
            continue
        fk = table.column(q.column).foreign_key
        mine = next((c for c in ref.columns if c.name == q.column), None)
        if fk and mine is not None and mine.foreign_key == fk and p.ref_column != pk_column(ref):
            return q.column
    return None


def _resolve_at(b: _Body, spec: EnvSpec, p: ParamPlan, target: str, level: int,
                scope: str | None = None) -> None:
    assert p.ref_table and p.ref_column
    ref_pk = pk_column(spec.table(p.ref_table))
    noun = singular(p.ref_table).replace("_", " ")
    if scope:  # looked up inside the container the new record belongs to
        b.add(f"{target} = _row_in(ctx, {_lit(p.ref_table)}, {_lit(ref_pk)}, "
              f"{_lit(p.ref_column)}, {p.name}, {_lit(scope)}, values[{_lit(scope)}], "
              f"{_lit(noun)})[{_lit(ref_pk)}]", level)
        return
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


def _span_limit(b: _Body, plan: ToolPlan) -> None:
    """A range the description caps ("at most 31 days") is refused when its bounds, both
    given, lie further apart."""
    lo, hi = range_bounds(plan.params)  # type: ignore[misc]  # stated_span found them
    b.add(f"if {lo.name} is not None and {hi.name} is not None and (date.fromisoformat("
          f"str({hi.name})[:10]) - date.fromisoformat(str({lo.name})[:10])).days > "
          f"{plan.max_span_days}:")
    b.add(f"raise ToolError(\"Refused: the range from {lo.name} to {hi.name} may span at "
          f"most {plan.max_span_days} days.\")", 2)


def column_filter(b: _Body, p: Any, level: int) -> None:
    """The clause and parameter of a filter on one column: equal (`eq`, `key`; none where the
    argument names every row), a text fragment (`like`), a range bound (`ge`, `le`)."""
    if p.role in ("eq", "key"):
        if p.every is not None:
            b.add(f"if {p.name} != {_lit(p.every)}:", level)
            level += 1
        b.add(f"clauses.append('\"{p.column}\" = ?')", level)
        b.add(f"params.append({p.name})", level)
    elif p.role == "like":
        b.add(f"clauses.append('\"{p.column}\" LIKE ? ESCAPE \\'\\\\\\'')", level)
        b.add(f"params.append(_like({p.name}))", level)
    else:
        _bound(b, p, level)


def _bound(b: _Body, p: Any, level: int) -> None:
    """A range bound: an upper bound compares as much of the value as it gives, so "to
    2026-01-20" keeps that day's 09:00 ('2026-01-20T09:00' > '2026-01-20' as text)."""
    if p.role == "ge" or p.type in ("integer", "number"):  # a number compares as a number
        b.add(f"clauses.append('\"{p.column}\" {'>=' if p.role == 'ge' else '<='} ?')", level)
        b.add(f"params.append({p.name})", level)
    else:
        b.add(f"clauses.append('substr(\"{p.column}\", 1, length(?)) <= ?')", level)
        b.add(f"params.extend([{p.name}, {p.name}])", level)
