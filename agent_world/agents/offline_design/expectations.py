"""Tool tests whose expectations come from the seed rows, not from running the tool.

For each plan the expected result or state change is computed here in plain Python over the
spec's seed rows (filters, counts, sums, the row a key names, the row a create inserts),
independently of the SQL the renderer writes. Every tool gets positive cases and refusals
(unknown id, final status, still-referenced record, taken unique value), and every write test
states its exact database change (`ToolExpectation.changes`).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from agent_world.agents.offline_design.plans import (
    DEFAULT_LIMIT,
    MAX_ROWS,
    TERMINAL,
    ParamPlan,
    ToolPlan,
    pk_column,
)
from agent_world.envs.spec import EnvSpec, TableSpec

Test = dict[str, Any]


class Rows:
    """The seed rows of a spec as the database returns them (defaults filled, booleans as
    booleans, JSON columns left out)."""

    def __init__(self, spec: EnvSpec):
        self.spec = spec
        self._cache: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, table: str) -> list[dict[str, Any]]:
        if table not in self._cache:
            t = self.spec.table(table)
            out = []
            for raw in self.spec.rows.get(table, []):
                row: dict[str, Any] = {}
                for c in t.columns:
                    if c.type == "json":
                        continue
                    v = raw.get(c.name, c.default)
                    if c.type == "boolean" and v is not None:
                        v = bool(v)
                    elif c.type == "real" and isinstance(v, int) and not isinstance(v, bool):
                        v = float(v)
                    row[c.name] = v
                out.append(row)
            pk = pk_column(t)
            if pk:
                out.sort(key=lambda r: r[pk])
            self._cache[table] = out
        return self._cache[table]


def _now(spec: EnvSpec) -> str:
    """`ctx.now()` during the first write of a freshly reset episode (the episode clock is
    `clock_start` plus one minute per committed write, this one included)."""
    return (datetime.fromisoformat(spec.clock_start) + timedelta(minutes=1)
            ).isoformat(timespec="seconds")


def _unknown(spec: EnvSpec, table: str, column: str, py_type: str) -> Any:
    values = [r.get(column) for r in spec.rows.get(table, [])]
    if py_type in ("integer", "number"):
        nums = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        return int(max(nums, default=0)) + 1000
    return f"no-such-{column}"


def _fits(p: ParamPlan, value: Any) -> bool:
    if value is None:
        return False
    if p.type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if p.type == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if p.type == "boolean":
        return isinstance(value, bool)
    if not isinstance(value, str):
        return False
    if p.enum and value not in p.enum:
        return False
    return not p.pattern or re.search(p.pattern, value) is not None


def _needle(value: str) -> str | None:
    words = [w for w in re.findall(r"[A-Za-z0-9]{3,}", value)]
    return words[0][:6] if words else None


class Designer:
    """Writes the tests of one environment's plans."""

    def __init__(self, spec: EnvSpec):
        self.spec = spec
        self.rows = Rows(spec)
        self.now = _now(spec)

    # -- small pieces ----------------------------------------------------------------------
    def table(self, plan: ToolPlan) -> TableSpec:
        return self.spec.table(plan.table)

    def ref_value(self, p: ParamPlan, fk_value: Any) -> Any:
        """The argument naming the referenced row whose id is `fk_value`."""
        assert p.ref_table and p.ref_column
        ref_pk = pk_column(self.spec.table(p.ref_table))
        for r in self.rows(p.ref_table):
            if r[ref_pk] == fk_value:
                return r.get(p.ref_column)
        return None

    def ref_ids(self, p: ParamPlan, value: Any) -> set[Any]:
        assert p.ref_table and p.ref_column
        ref_pk = pk_column(self.spec.table(p.ref_table))
        return {r[ref_pk] for r in self.rows(p.ref_table) if r.get(p.ref_column) == value}

    def matches(self, plan: ToolPlan, row: dict[str, Any], args: dict[str, Any]) -> bool:
        for p in plan.params:
            if p.name not in args or p.role in ("limit", "ignore", "set"):
                continue
            v = args[p.name]
            cell = row.get(p.column) if p.column else None
            if p.role in ("eq", "key"):
                if cell != v:
                    return False
            elif p.role == "like":
                if not isinstance(cell, str) or str(v).lower() not in cell.lower():
                    return False
            elif p.role in ("ge", "le"):
                if cell is None or not isinstance(cell, type(v)):
                    return False
                if (p.role == "ge" and cell < v) or (p.role == "le" and cell > v):
                    return False
            elif p.role == "ref":
                if cell not in self.ref_ids(p, v):
                    return False
        return True

    def filler(self, p: ParamPlan) -> Any:
        """A value for an argument the tool accepts but does not use."""
        if p.enum:
            return p.enum[0]
        return {"integer": 1, "number": 1.0, "boolean": False}.get(p.type, "x")

    def args_from(self, plan: ToolPlan, row: dict[str, Any], *, optional: bool) -> dict | None:
        """Arguments naming `row` (filters equal to its values); None if it cannot."""
        args: dict[str, Any] = {}
        for p in plan.params:
            if not p.required and not optional:
                continue
            if p.role in ("eq", "key", "ge", "le"):
                v = row.get(p.column)
                if not _fits(p, v):
                    if p.required:
                        return None
                    continue
                args[p.name] = v
            elif p.role == "like":
                needle = _needle(row.get(p.column) or "") if isinstance(row.get(p.column),
                                                                         str) else None
                if needle is None:
                    if p.required:
                        return None
                    continue
                args[p.name] = needle
            elif p.role == "ref":
                v = self.ref_value(p, row.get(p.column))
                if not _fits(p, v):
                    if p.required:
                        return None
                    continue
                args[p.name] = v
            elif p.role == "ignore" and p.required:
                args[p.name] = self.filler(p)
        return args

    def test(self, plan: ToolPlan, name: str, args: dict[str, Any], **expect: Any) -> Test:
        return {"name": name, "tool": plan.name, "arguments": args, "expect": expect}

    # -- per kind --------------------------------------------------------------------------
    def tests(self, plan: ToolPlan) -> list[Test]:
        return getattr(self, f"_{plan.kind}")(plan)

    def _key_row(self, plan: ToolPlan, row: dict[str, Any]) -> dict[str, Any] | None:
        key = plan.param("key")
        assert key is not None
        v = row.get(key.column)
        if not _fits(key, v):
            return None
        pk = pk_column(self.table(plan))
        first = min((r for r in self.rows(plan.table) if r.get(key.column) == v),
                    key=lambda r: r[pk])
        return first

    def _key_args(self, plan: ToolPlan, row: dict[str, Any]) -> dict[str, Any]:
        args = self.args_from(plan, row, optional=False) or {}
        key = plan.param("key")
        assert key is not None
        args[key.name] = row[key.column]
        return args

    def _unknown_key(self, plan: ToolPlan) -> Test:
        key = plan.param("key")
        assert key is not None
        args = {p.name: self.filler(p) for p in plan.params if p.required and p.role != "key"}
        for p in plan.params:
            if p.required and p.role == "set" and p.column:
                sample = next((r[p.column] for r in self.rows(plan.table)
                               if _fits(p, r.get(p.column))), None)
                if sample is not None:
                    args[p.name] = sample
        if plan.kind == "update" and not any(p.name in args for p in plan.params
                                               if p.role in ("set", "ref")):
            for p in plan.params:
                if p.role == "set" and p.column:
                    sample = next((r[p.column] for r in self.rows(plan.table)
                                   if _fits(p, r.get(p.column))), None)
                    if sample is not None:
                        args[p.name] = sample
                        break
        args[key.name] = _unknown(self.spec, plan.table, key.column or "", key.type)
        return self.test(plan, "unknown record is refused", args, ok=False,
                         error_kind="tool_error", changes=[] if plan.write else None)

    def _get(self, plan: ToolPlan) -> list[Test]:
        rows = self.rows(plan.table)
        out = []
        for i in sorted({0, len(rows) // 2}) if rows else []:
            row = self._key_row(plan, rows[i])
            if row is None:
                continue
            out.append(self.test(plan, f"returns record {i + 1}", self._key_args(plan, row),
                                 contains=row))
        out.append(self._unknown_key(plan))
        return out

    def _limit(self, plan: ToolPlan, args: dict[str, Any]) -> int:
        limit = plan.param("limit")
        if limit is None:
            return MAX_ROWS
        return int(args.get(limit.name, limit.default or DEFAULT_LIMIT))

    def _expected_ids(self, plan: ToolPlan, args: dict[str, Any]) -> list[Any]:
        pk = pk_column(self.table(plan))
        hits = [r[pk] for r in self.rows(plan.table) if self.matches(plan, r, args)]
        return hits[:self._limit(plan, args)]

    def _list(self, plan: ToolPlan) -> list[Test]:
        rows = self.rows(plan.table)
        pk = pk_column(self.table(plan))
        out: list[Test] = []
        seen: list[dict[str, Any]] = []

        def add(name: str, args: dict[str, Any] | None) -> None:
            if args is None or args in seen:
                return
            seen.append(args)
            out.append(self.test(plan, name, args, equals=self._expected_ids(plan, args),
                                 pluck=pk))

        if rows:
            add("required filters from a seed record", self.args_from(plan, rows[0],
                                                                      optional=False))
            add("every filter from a seed record", self.args_from(plan, rows[len(rows) // 3],
                                                                  optional=True))
        optional = [p for p in plan.params if not p.required and p.role in ("eq", "ref")]
        if optional and rows:
            p = optional[-1]
            values = Counter(r.get(p.column) for r in rows if r.get(p.column) is not None)
            for value, _ in values.most_common(1):
                base = self.args_from(plan, rows[0], optional=False)
                if base is not None:
                    v = self.ref_value(p, value) if p.role == "ref" else value
                    if _fits(p, v):
                        add(f"filtered by {p.name}", {**base, p.name: v})
        limit = plan.param("limit")
        if limit and rows:
            base = self.args_from(plan, rows[0], optional=False)
            if base is not None:
                add("limit caps the rows", {**base, limit.name: 2})
        refs = [p for p in plan.params if p.role == "ref"]
        if refs and rows:
            base = self.args_from(plan, rows[0], optional=False) or {}
            p = refs[0]
            out.append(self.test(plan, f"unknown {p.name} is refused",
                                 {**base, p.name: _unknown(self.spec, p.ref_table or "",
                                                           p.ref_column or "", p.type)},
                                 ok=False, error_kind="tool_error"))
        return out

    def _scopes(self, plan: ToolPlan, rows: list[dict[str, Any]], every: str,
                one: str) -> list[tuple[str, dict[str, Any]]]:
        """An aggregate's test scopes: every record, and the first row's filter when it has one."""
        scopes: list[tuple[str, dict[str, Any]]] = [(every, {})]
        args = self.args_from(plan, rows[0], optional=True) if rows else None
        if args:
            scopes.append((one, args))
        return scopes

    def _count_by(self, plan: ToolPlan) -> list[Test]:
        rows = self.rows(plan.table)
        g = plan.group_by or ""
        out = []
        for name, args in self._scopes(plan, rows, "counts every record", "counts one scope"):
            hits = [r for r in rows if self.matches(plan, r, args) and r.get(g) is not None]
            counts = Counter(str(r[g]) for r in hits)
            out.append(self.test(plan, name, args, equals=dict(sorted(counts.items()))))
        return out

    def _summary(self, plan: ToolPlan) -> list[Test]:
        rows = self.rows(plan.table)
        m = plan.measure or ""
        out = []
        for name, args in self._scopes(plan, rows, "summarizes every record",
                                       "summarizes one scope"):
            vals = [r[m] for r in rows if self.matches(plan, r, args) and r.get(m) is not None]
            vals = [v for v in vals if isinstance(v, int | float) and not isinstance(v, bool)]
            expect = {"count": len(vals), "total": round(float(sum(vals)), 2),
                      "min": min(vals) if vals else None, "max": max(vals) if vals else None}
            out.append(self.test(plan, name, args, equals=expect))
        return out

    # -- writes ----------------------------------------------------------------------------
    def _fresh(self, plan: ToolPlan, p: ParamPlan, template: Any) -> Any:
        column = p.column or ""
        taken = {r.get(column) for r in self.rows(plan.table)}
        if p.type in ("integer", "number"):
            nums = [v for v in taken if isinstance(v, int | float) and not isinstance(v, bool)]
            return int(max(nums, default=0)) + 1
        base = template if isinstance(template, str) else column
        for i in range(1, 100):
            cand = f"new{i}-{base}"
            if cand not in taken and _fits(p, cand):
                return cand
        return None

    def _create(self, plan: ToolPlan) -> list[Test]:
        rows = self.rows(plan.table)
        template = None
        args: dict[str, Any] = {}
        for row in rows:
            args = {}
            ok = True
            for p in plan.params:
                if p.role == "set":
                    v = row.get(p.column or "")
                    if p.column in plan.unique:
                        v = self._fresh(plan, p, v)
                    if not _fits(p, v):
                        if p.required:
                            ok = False
                            break
                        continue
                    args[p.name] = v
                elif p.role == "ref":
                    v = self.ref_value(p, row.get(p.column or ""))
                    if not _fits(p, v):
                        if p.required:
                            ok = False
                            break
                        continue
                    args[p.name] = v
                elif p.role in ("ignore", "limit") and p.required:
                    args[p.name] = self.filler(p)
            if ok and plan.unique_groups:
                ok = self._free_group(plan, args)
            if ok:
                template = row
                break
        if template is None:
            return []
        values = {p.column: (template.get(p.column) if p.role == "ref" else args[p.name])
                  for p in plan.params if p.role in ("set", "ref") and p.name in args}
        values.update(plan.fixed)
        values.update({c: self.now for c in plan.now_columns})
        t = self.table(plan)
        booleans = {c.name for c in t.columns if c.type == "boolean"}
        values = {k: (bool(v) if k in booleans and v is not None else v)
                  for k, v in values.items() if k is not None}
        out = [self.test(plan, "inserts one record", args, contains=values,
                         changes=[{"table": plan.table, "op": "insert", "values": values}])]
        for p in plan.params:
            col = t.column(p.column) if p.column else None
            if p.name not in args:
                continue
            if p.role == "ref" or (col is not None and col.foreign_key):
                table = p.ref_table if p.role == "ref" else col.foreign_key.split(".")[0]
                column = p.ref_column if p.role == "ref" else col.foreign_key.split(".")[1]
                bad = {**args, p.name: _unknown(self.spec, table or "", column or "", p.type)}
                out.append(self.test(plan, f"unknown {p.name} is refused", bad, ok=False,
                                     error_kind="tool_error", changes=[]))
                break
        for group in plan.unique_groups:
            row = rows[0] if rows else None
            by_col = {p.column: p for p in plan.params if p.column}
            if row is None or any(by_col[c].name not in args for c in group):
                continue
            taken = dict(args)
            for c in group:
                p = by_col[c]
                taken[p.name] = self.ref_value(p, row.get(c)) if p.role == "ref" else row.get(c)
            if all(_fits(by_col[c], taken[by_col[c].name]) for c in group):
                out.append(self.test(plan, "taken combination is refused", taken, ok=False,
                                     error_kind="tool_error", changes=[]))
            break
        for p in plan.params:
            if p.column in plan.unique and p.name in args:
                taken = next((r[p.column] for r in rows if _fits(p, r.get(p.column))), None)
                if taken is not None:
                    out.append(self.test(plan, f"taken {p.name} is refused",
                                         {**args, p.name: taken}, ok=False,
                                         error_kind="tool_error", changes=[]))
                break
        return out

    def _group_taken(self, plan: ToolPlan, args: dict[str, Any], group: list[str]) -> bool:
        by_col = {p.column: p for p in plan.params if p.column}
        want = {}
        for c in group:
            p = by_col[c]
            if p.name not in args:
                return False
            want[c] = (next(iter(self.ref_ids(p, args[p.name])), None) if p.role == "ref"
                       else args[p.name])
        return any(all(r.get(c) == v for c, v in want.items()) for r in self.rows(plan.table))

    def _free_group(self, plan: ToolPlan, args: dict[str, Any]) -> bool:
        """Vary the last column of each unique group until the combination is free."""
        by_col = {p.column: p for p in plan.params if p.column}
        for group in plan.unique_groups:
            if not self._group_taken(plan, args, group):
                continue
            p = by_col[group[-1]]
            options = []
            for r in self.rows(plan.table):
                v = self.ref_value(p, r.get(p.column)) if p.role == "ref" else r.get(p.column)
                if _fits(p, v) and v not in options:
                    options.append(v)
            for v in options:
                if not self._group_taken(plan, {**args, p.name: v}, group):
                    args[p.name] = v
                    break
            else:
                return False
        return True

    def _set_status(self, plan: ToolPlan) -> list[Test]:
        rows = self.rows(plan.table)
        col = plan.status_column or ""
        t = self.table(plan)
        pk = pk_column(t)
        enum = t.column(col).enum or []
        status_param = next((p for p in plan.params if p.role == "set" and p.column == col), None)
        out: list[Test] = []

        def args_for(row: dict[str, Any], target: str | None) -> dict[str, Any]:
            args = self._key_args(plan, row)
            if status_param is not None and target is not None:
                args[status_param.name] = target
            for p in plan.params:
                if p.required and p.name not in args and p.role in ("set", "ref", "ignore"):
                    if p.role == "set":
                        args[p.name] = row.get(p.column or "")
                    elif p.role == "ref":
                        args[p.name] = self.ref_value(p, row.get(p.column or ""))
                    else:
                        args[p.name] = self.filler(p)
            return args

        keyed = [r for r in rows if self._key_row(plan, r) is r]
        for row in keyed:
            current = row.get(col)
            if current in TERMINAL:
                continue
            target = plan.target_status or next(
                (s for s in enum if s != current and s not in TERMINAL), None) or next(
                (s for s in enum if s != current), None)
            if target is None or target == current:
                continue
            args = args_for(row, target)
            if any(v is None for v in args.values()):
                continue
            values = {col: target, **{c: self.now for c in plan.now_columns}}
            for p in plan.params:
                if p.role == "set" and p.column != col and p.name in args:
                    values[p.column] = args[p.name]
            out.append(self.test(plan, f"changes {col} to {target}", args,
                                 contains={col: target},
                                 changes=[{"table": plan.table, "op": "update",
                                           "key": {pk: row[pk]}, "values": values}]))
            break
        same = next((r for r in keyed if (plan.target_status or r.get(col)) == r.get(col)
                     and r.get(col) is not None), None)
        if same is not None:
            args = args_for(same, same[col])
            if all(v is not None for v in args.values()):
                out.append(self.test(plan, f"already {same[col]} is refused", args, ok=False,
                                     error_kind="tool_error", changes=[]))
        final = next((r for r in keyed if r.get(col) in TERMINAL
                      and r.get(col) != plan.target_status), None)
        if final is not None:
            target = plan.target_status or next((s for s in enum if s != final[col]), None)
            args = args_for(final, target)
            if target is not None and all(v is not None for v in args.values()):
                out.append(self.test(plan, f"final {final[col]} is refused", args, ok=False,
                                     error_kind="tool_error", changes=[]))
        out.append(self._unknown_key(plan))
        return out

    def _update(self, plan: ToolPlan) -> list[Test]:
        rows = self.rows(plan.table)
        t = self.table(plan)
        pk = pk_column(t)
        keyed = [r for r in rows if self._key_row(plan, r) is r]
        sets = [p for p in plan.params if p.role in ("set", "ref")]
        out: list[Test] = []
        for i, row in enumerate(keyed):
            args = self._key_args(plan, row)
            values: dict[str, Any] = {}
            other = keyed[(i + 1) % len(keyed)] if len(keyed) > 1 else row
            chosen = [p for p in sets if p.required] or sets[:1]
            ok = True
            for p in chosen:
                col = t.column(p.column or "")
                old = row.get(col.name)
                if p.role == "ref":
                    v = self.ref_value(p, other.get(col.name))
                    new_id = other.get(col.name)
                elif col.foreign_key:
                    v = new_id = other.get(col.name)
                elif p.type == "string":
                    v = new_id = f"{old} (edited)" if isinstance(old, str) else "edited"
                    if not _fits(p, v):
                        v = new_id = other.get(col.name)
                elif p.type in ("integer", "number"):
                    v = new_id = (old or 0) + (1 if p.type == "integer" else 1.5)
                else:
                    v = new_id = not old
                if not _fits(p, v):
                    ok = False
                    break
                args[p.name] = v
                values[col.name] = new_id
            for p in plan.params:
                if p.required and p.name not in args:
                    args[p.name] = self.filler(p)
            if not ok or (not values and not plan.now_columns):
                continue
            if all(row.get(k) == v for k, v in values.items()) and not plan.now_columns:
                continue
            values.update({c: self.now for c in plan.now_columns})
            if all(row.get(k) == v for k, v in values.items()):
                continue
            out.append(self.test(plan, "updates the record", args, contains=values,
                                 changes=[{"table": plan.table, "op": "update",
                                           "key": {pk: row[pk]}, "values": values}]))
            break
        out.append(self._unknown_key(plan))
        return out

    def _delete(self, plan: ToolPlan) -> list[Test]:
        rows = self.rows(plan.table)
        pk = pk_column(self.table(plan))
        refs: Counter[Any] = Counter()
        for child, col in plan.children:
            for r in self.rows(child):
                if r.get(col) is not None:
                    refs[r[col]] += 1
        keyed = [r for r in rows if self._key_row(plan, r) is r]
        out = []
        free = next((r for r in keyed if not refs[r[pk]]), None)
        if free is not None:
            out.append(self.test(plan, "deletes an unreferenced record",
                                 self._key_args(plan, free), equals={"deleted": free[pk]},
                                 changes=[{"table": plan.table, "op": "delete",
                                           "key": {pk: free[pk]}}]))
        used = next((r for r in keyed if refs[r[pk]]), None)
        if used is not None:
            out.append(self.test(plan, "referenced record is refused",
                                 self._key_args(plan, used), ok=False, error_kind="tool_error",
                                 changes=[]))
        out.append(self._unknown_key(plan))
        return out


def design_tests(spec: EnvSpec, plans: list[ToolPlan]) -> list[dict[str, Any]]:
    """Every plan's tests, named uniquely, with expectations from the seed rows."""
    designer = Designer(spec)
    tests: list[dict[str, Any]] = []
    for plan in plans:
        for t in designer.tests(plan):
            t["expect"] = {k: v for k, v in t["expect"].items() if v is not None}
            tests.append(t)
    return tests


__all__ = ["Rows", "design_tests"]
