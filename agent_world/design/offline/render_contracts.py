"""Code of a contract's pieces: written values, guards, effects on the entity and the coupled
rows, the rows its arguments name, its key lookup and its listing filters.
"""

from __future__ import annotations

from agent_world.design.offline.contract_schema import linked_pk
from agent_world.design.offline.contracts import Contract, Effect, Guard, Value
from agent_world.design.offline.plans import pk_column
from agent_world.design.offline.render_plans import _Body, _lit, column_filter, ref_filter
from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import singular


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
    if v.source == "notice":
        return (f"({_lit(v.alt_value)} if _hours_until(row[{_lit(v.column)}], now) < "
                f"{v.hours!r} else {_lit(v.value)})")
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


def _live_row(g: Guard, link: str, owner_test: str, owner: str) -> str:
    """The query for a live row of `g.table` (`g.where`) whose `g.link` is `link` (SQL; its `?`
    takes the entity's `g.path[0]`) and whose `g.column` passes `owner_test` against `owner`
    (another member's hold on the title, the borrower's ready hold)."""
    (st, live), = g.where.items()
    marks = ", ".join("?" for _ in live)
    return (f"ctx.one('SELECT 1 FROM \"{g.table}\" WHERE \"{g.link}\" = {link} AND "
            f"\"{st}\" IN ({marks}) AND \"{g.column}\" {owner_test} ?', "
            f"[row[{_lit(g.path[0])}], {', '.join(_lit(x) for x in live)}, {owner}])")


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
        b.add(f"if {_live_row(g, value, 'IS NOT', f'row[{_lit(g.arg)}]')}:")
        b.add(f"raise ToolError(\"Refused: {g.message}.\")", 2)
    elif g.kind == "held_for":
        arg = c.param(g.row)
        ref_pk = pk_column(spec.table(arg.ref_table)) if arg and arg.ref_table else "id"
        b.add(f"if row[{_lit(g.state)}] in {tuple(g.values)!r} and not "
              f"{_live_row(g, '?', '=', f'{ref}[{_lit(ref_pk)}]')}:")
        b.add(f"raise ToolError(\"Refused: {g.message}.\")", 2)
    elif g.kind == "sum_at_most":
        (st, states), = g.where.items()
        pk = linked_pk(spec, g.table or "", g.link or "")
        marks = ", ".join("?" for _ in states)
        b.add(f"owed = ctx.one('SELECT COALESCE(SUM(\"{g.column}\"), 0) AS n FROM \"{g.table}\" "
              f"WHERE \"{g.link}\" = ? AND \"{st}\" IN ({marks})', "
              f"[{ref}[{_lit(pk)}], {', '.join(_lit(s) for s in states)}])['n']")
        b.add(f"if owed > {g.limit!r}:")
        b.add(f"raise ToolError(f\"Refused: {g.message} ({{owed:.2f}}).\")", 2)
    elif g.kind == "no_overlap":  # only a create has it: `values` holds the new row
        (st, live), = g.where.items()
        period = spec.table(g.table or "").column(g.column or "").foreign_key or ""
        parent, ppk = period.split(".")
        start, end = g.path
        pk = linked_pk(spec, g.table or "", g.link or "")
        marks = ", ".join("?" for _ in live)
        b.add(f"span = ctx.one('SELECT \"{start}\" AS s, \"{end}\" AS e FROM \"{parent}\" "
              f"WHERE \"{ppk}\" = ?', [values[{_lit(g.column)}]])")
        b.add(f"if span and ctx.one('SELECT 1 FROM \"{g.table}\" a JOIN \"{parent}\" p ON "
              f"p.\"{ppk}\" = a.\"{g.column}\" WHERE a.\"{g.link}\" = ? AND a.\"{st}\" IN "
              f"({marks}) AND p.\"{start}\" < ? AND p.\"{end}\" > ?', [{ref}[{_lit(pk)}], "
              f"{', '.join(_lit(x) for x in live)}, span['e'], span['s']]):")
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
    if e.when:  # only from the states the row was in before the call
        inner = _Body()
        var = _effect_lines(inner, spec, c, e.model_copy(update={"when": {}}), source)
        b.add("if " + " and ".join(f"row[{_lit(col)}] in {tuple(vals)!r}"
                                   for col, vals in e.when.items()) + ":")
        b.lines += ["    " + line for line in inner.lines]
        return var
    t = spec.table(e.table)
    tpk = pk_column(t)
    if e.rows == "late":
        _late_lines(b, spec, c, e, tpk)
        return None
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
    elif e.rows == "shared":
        clauses.append(f'"{e.link}" = ?')
        params.append(f"{source}[{_lit(e.via)}]")
    for col, values in e.where.items():
        marks = ", ".join("?" for _ in values)
        clauses.append(f'"{col}" IN ({marks})')
        params += [_lit(v) for v in values]
    for col, arg in e.where_row.items():  # the row an argument names (the borrower's hold)
        ref = c.param(arg)
        ref_pk = pk_column(spec.table(ref.ref_table)) if ref and ref.ref_table else "id"
        clauses.append(f'"{col}" = ?')
        params.append(f"{arg}_row[{_lit(ref_pk)}]")
    where_args = list(e.where_arg.items())
    sql = f'UPDATE "{e.table}" SET {sets} WHERE ' + " AND ".join(clauses)
    if e.first_by:  # one row: the first in that order (NULLs first, as SQLite sorts)
        sql = (f'UPDATE "{e.table}" SET {sets} WHERE "{tpk}" = (SELECT "{tpk}" FROM '
               f'"{e.table}" WHERE {" AND ".join(clauses)} ORDER BY "{e.first_by}", "{tpk}" '
               'LIMIT 1)')
    if e.op == "delete":
        sql = f'DELETE FROM "{e.table}" WHERE ' + " AND ".join(clauses)
        vals = ""
    if where_args:
        col, arg = where_args[0]
        b.add(f"marks = ', '.join('?' for _ in {arg})")
        b.add(f"ctx.execute(f'{sql} AND \"{col}\" IN ({{marks}})', "
              f"[{', '.join(x for x in [vals, *params] if x)}, *{arg}])")
    elif e.then_entity:
        # the tool's own row follows what this effect did (a readied hold shelves the copy)
        own = spec.table(c.entity)
        opk = pk_column(own)
        b.add(f"changed = ctx.execute('{sql}', [{', '.join(x for x in [vals, *params] if x)}])"
              ".rowcount")
        b.add("if changed:")
        b.add(f"ctx.execute('UPDATE \"{c.entity}\" SET "
              + ", ".join(f'"{k}" = ?' for k in e.then_entity) + f" WHERE \"{opk}\" = ?', ["
              + ", ".join(_value_expr(v, source, spec) for v in e.then_entity.values())
              + f", row[{_lit(opk)}]])", 2)
    else:
        b.add(f"ctx.execute('{sql}', [{', '.join(x for x in [vals, *params] if x)}])")
    return None


def _late_lines(b: _Body, spec: EnvSpec, c: Contract, e: Effect, tpk: str | None) -> None:
    """One new row (a fine) per row of `e.child` the call closes past its due date."""
    child = spec.table(e.child or "")
    accrued = next(v for v in e.set.values() if v.source == "accrued")
    (st, live), = e.where.items()
    marks = ", ".join("?" for _ in live)
    b.add(f"for closed in ctx.query('SELECT * FROM \"{child.name}\" WHERE \"{e.link}\" = ? "
          f"AND \"{st}\" IN ({marks}) AND substr(\"{accrued.column}\", 1, 10) < ?', "
          f"[row[{_lit(pk_column(spec.table(c.entity)))}], "
          f"{', '.join(_lit(x) for x in live)}, ctx.today()]):")
    cap = "None"
    if accrued.alt_column and any(x.name == accrued.alt_column for x in child.columns):
        cap = f"closed[{_lit(accrued.alt_column)}]"
    elif accrued.alt_column:
        reach = reach_sql(spec, child.name, accrued.alt_column)
        if reach is not None:
            b.add(f"capped = ctx.one('{reach[0]}', [closed[{_lit(reach[1])}]])", 2)
            cap = "capped['v'] if capped else None"
    values = []
    for col, v in e.set.items():
        if v.source == "child":
            expr = f"closed[{_lit(v.column)}]"
        elif v.source == "accrued":
            expr = f"_accrued({v.value!r}, closed[{_lit(v.column)}], ctx.today(), {cap})"
        else:
            expr = _value_expr(v, "row", spec)
        values.append(f"{_lit(col)}: {expr}")
    b.add(f"_insert(ctx, {_lit(e.table)}, {_lit(tpk)}, {{{', '.join(values)}}})", 2)


def reach_sql(spec: EnvSpec, table: str, column: str, depth: int = 3
              ) -> tuple[str, str] | None:
    """A query for `column` of the first record `table`'s references lead to (a loan's copy's
    title's replacement cost), as (SQL with one `?`, the column of `table` it takes)."""
    for c in spec.table(table).columns:
        if not c.foreign_key:
            continue
        parent, ppk = c.foreign_key.split(".")
        if any(x.name == column for x in spec.table(parent).columns):
            return f'SELECT "{column}" AS v FROM "{parent}" WHERE "{ppk}" = ?', c.name
        inner = reach_sql(spec, parent, column, depth - 1) if depth > 1 else None
        if inner is not None:
            return (inner[0][:-1] + f'(SELECT "{inner[1]}" FROM "{parent}" WHERE "{ppk}" = ?)',
                    c.name)
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


def _contract_filters(b: _Body, spec: EnvSpec, c: Contract) -> None:
    b.add("clauses, params = [], []")
    pk = "id"
    for p in c.params:
        level = 1
        if p.role not in ("any_like", "child_eq", "child_state", "eq", "like", "ge", "le",
                          "ref"):
            continue
        if not p.required:
            b.add(f"if {p.name} is not None:")
            level = 2
        if p.role == "any_like":
            ors = " OR ".join(f'"{col}" LIKE ? ESCAPE \\\'\\\\\\\'' for col in p.columns)
            b.add(f"clauses.append('({ors})')", level)
            b.add(f"params.extend([_like({p.name})] * {len(p.columns)})", level)
        elif p.role == "child_eq" and p.type == "array":
            # any of the values given (fetchDocs(urls)): one placeholder per value
            b.add(f"if not isinstance({p.name}, list) or not {p.name}:", level)
            b.add(f"raise ToolError('{p.name} must be a non-empty list.')", level + 1)
            b.add(f"clauses.append('\"{pk}\" IN (SELECT \"{p.via_link}\" FROM \"{p.via_table}\" "
                  f"WHERE \"{p.via_column}\" IN (' + ', '.join('?' * len({p.name})) + '))')",
                  level)
            b.add(f"params.extend({p.name})", level)
        elif p.role == "child_eq":
            # the linked record by the column the source names it by (a commit's sha); NOT IN
            # over a NULL would keep no row
            value = (f'IN (SELECT "{p.ref_key}" FROM "{p.ref_table}" WHERE "{p.ref_column}" = ?)'
                     if p.ref_column else "= ?")
            known = f' AND "{p.via_link}" IS NOT NULL' if p.negate else ""
            b.add(f"clauses.append('\"{pk}\" {'NOT ' if p.negate else ''}IN (SELECT "
                  f"\"{p.via_link}\" FROM \"{p.via_table}\" WHERE \"{p.via_column}\" "
                  f"{value}{known})')", level)
            b.add(f"params.append({p.name})", level)
        elif p.role == "child_state":
            b.add(f"clauses.append(('' if {p.name} else 'NOT ') + '\"{pk}\" IN (SELECT "
                  f"\"{p.via_link}\" FROM \"{p.via_table}\" WHERE \"{p.via_column}\" = ? "
                  f"AND \"{p.via_link}\" IS NOT NULL)')", level)
            b.add(f"params.append({_lit(p.via_value)})", level)
        elif p.role in ("eq", "like", "ge", "le"):
            column_filter(b, p, level)
        elif p.role == "ref":  # git_branch(repo_path): the repository's branches, not every one
            ref_filter(b, spec, p, level)
    b.add('where = (" WHERE " + " AND ".join(clauses)) if clauses else ""')
