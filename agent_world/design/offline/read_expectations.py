"""Tests of the read kinds (get, list, count_by, summary), with the pieces every test writer
shares: the rows, argument values naming a record, and the rows a filter matches.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta
from typing import Any

from agent_world.design.offline.plans import (
    DEFAULT_LIMIT,
    HASH_COLUMNS,
    MAX_ROWS,
    ParamPlan,
    ToolPlan,
    newest_first,
    pk_column,
    range_bounds,
)
from agent_world.design.offline.seed_rows import Rows, Test, _fits, _needle, _noun, _now, _unknown
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import TableSpec


class ReadTests:
    """The shared pieces of the test writer (seed rows, argument values, matching) and the
    tests of the read kinds: get, list, count_by, summary."""

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
        """The ids the argument names (and, with `closure`, their descendants)."""
        assert p.ref_table and p.ref_column
        ref_pk = pk_column(self.spec.table(p.ref_table))
        rows = self.rows(p.ref_table)
        ids = {r[ref_pk] for r in rows if r.get(p.ref_column) == value}
        while p.closure:
            more = {r[ref_pk] for r in rows if r.get(p.closure) in ids} - ids
            if not more:
                break
            ids |= more
        return ids

    def matches(self, plan: ToolPlan, row: dict[str, Any], args: dict[str, Any]) -> bool:
        if any(row.get(col) not in values for col, values in plan.where.items()):
            return False
        for p in plan.params:
            if p.name not in args or p.role in ("limit", "ignore", "set"):
                continue
            v = args[p.name]
            cell = row.get(p.column) if p.column else None
            if p.role in ("eq", "key") and p.column in HASH_COLUMNS:
                if not isinstance(cell, str) or not cell.startswith(str(v)):
                    return False
            elif p.role in ("eq", "key"):
                if cell != v and v != p.every:
                    return False
            elif p.role == "like":
                if not isinstance(cell, str) or str(v).lower() not in cell.lower():
                    return False
            elif p.role in ("ge", "le"):
                if cell is None or not isinstance(cell, type(v)):
                    return False
                if p.role == "le" and isinstance(cell, str):
                    cell = cell[:len(v)]  # an upper bound keeps the whole day it names
                if (p.role == "ge" and cell < v) or (p.role == "le" and cell > v):
                    return False
            elif p.role == "ref":
                if (cell in self.ref_ids(p, v)) is p.negate:
                    return False
        return True

    def copied_values(self, plan: ToolPlan, values: dict[str, Any]) -> dict[str, Any]:
        """What a new record takes from the container its values name (`plan.copied`)."""
        out = {}
        for col, (via, parent, parent_col) in plan.copied.items():
            ppk = pk_column(self.spec.table(parent))
            owner = next((r for r in self.rows(parent) if values.get(via) is not None
                          and r.get(ppk) == values[via]), None)
            if owner is not None:
                out[col] = owner.get(parent_col)
        return out

    def filler(self, p: ParamPlan) -> Any:
        """A value for an argument the tool accepts but does not use."""
        if p.enum:
            return p.enum[0]
        return {"integer": 1, "number": 1.0, "boolean": False, "object": {},
                "array": ["x"]}.get(p.type, "x")

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
    def _key_row(self, plan: ToolPlan, row: dict[str, Any]) -> dict[str, Any] | None:
        key = plan.param("key")
        # the record is found by its key and the other values it is named by (key_matches)
        named = [*([key] if key is not None else []),
                 *(p for p in plan.key_matches() if p.required)]
        assert named
        if not all(_fits(p, self.ref_value(p, row.get(p.column)) if p.role == "ref"
                         else row.get(p.column)) for p in named):
            return None
        values = [row.get(p.column) for p in named]
        pk = pk_column(self.table(plan))
        first = min((r for r in self.rows(plan.table)
                     if [r.get(p.column) for p in named] == values), key=lambda r: r[pk])
        return first

    def _key_args(self, plan: ToolPlan, row: dict[str, Any]) -> dict[str, Any]:
        args = self.args_from(plan, row, optional=False) or {}
        key = plan.param("key")
        if key is not None:
            args[key.name] = row[key.column]
        return args

    def _unknown_key(self, plan: ToolPlan) -> Test:
        # the key, else the first value naming the record, names none
        key = plan.param("key") or next(p for p in plan.key_matches() if p.required)
        args = {p.name: self.filler(p) for p in plan.params if p.required and p is not key}
        if plan.param("key") is None:  # the others as a record holds them: only `key` is wrong
            row = next((r for r in self.rows(plan.table) if self._key_row(plan, r) is r), None)
            args.update(self._key_args(plan, row) if row is not None else {})
            args.pop(key.name, None)
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
        args[key.name] = _unknown(self.spec, key.ref_table or plan.table,
                                  (key.ref_column if key.role == "ref" else key.column) or "",
                                  key.type)
        return self.test(plan, "unknown record is refused", args, ok=False,
                         error_kind="tool_error",
                         error_contains=_noun(key.ref_table if key.role == "ref" else plan.table),
                         changes=[] if plan.write else None)

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

    def _identity(self, plan: ToolPlan) -> str | None:
        """The column a list test reads its records by: the one whose values tell the most
        records apart (a member's email, a slot's start; a text column first, a reference
        last), else the primary key. Ids 1, 2, 3 are every table's: a tool listing another
        table's records would pass."""
        table = self.table(plan)
        rows = self.rows(plan.table)

        def rank(c: Any) -> tuple[int, bool, bool]:
            values = {str(r.get(c.name)) for r in rows if r.get(c.name) is not None}
            return len(values), not c.foreign_key, c.type == "text"

        cols = [c for c in table.columns if not c.primary_key and c.type != "json"
                and all(r.get(c.name) is not None for r in rows)]
        best = max(cols, key=rank, default=None)
        return best.name if best is not None and rank(best)[0] > 1 else pk_column(table)

    def _expected_ids(self, plan: ToolPlan, args: dict[str, Any]) -> list[Any]:
        pk = self._identity(plan)
        hits = [r[pk] for r in self.rows(plan.table) if self.matches(plan, r, args)]
        if newest_first(plan.name, plan.description):
            hits.reverse()
        return hits[:self._limit(plan, args)]

    @staticmethod
    def _too_wide(plan: ToolPlan, base: dict[str, Any] | None) -> dict[str, Any] | None:
        """`base` with its upper bound a day past the span the description allows."""
        bounds = range_bounds(plan.params)
        if base is None or bounds is None or not isinstance(base.get(bounds[0].name), str):
            return None
        lo, hi = bounds
        start = date.fromisoformat(base[lo.name][:10])
        return {**base, hi.name: (start + timedelta(days=(plan.max_span_days or 0) + 1))
                .isoformat()}

    def _list(self, plan: ToolPlan) -> list[Test]:
        rows = self.rows(plan.table)
        pk = self._identity(plan)
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
        if plan.max_span_days is not None and rows:
            wide = self._too_wide(plan, self.args_from(plan, rows[0], optional=False))
            if wide is not None:
                out.append(self.test(plan, f"a range over {plan.max_span_days} days is refused",
                                     wide, ok=False, error_kind="tool_error"))
        refs = [p for p in plan.params if p.role == "ref"]
        # the other required arguments from a record that has them all (a call missing one is
        # refused for that, not for the unknown reference)
        base = next((a for r in rows if (a := self.args_from(plan, r, optional=False))
                     is not None), None) if refs else None
        if base is not None:
            p = refs[0]
            out.append(self.test(plan, f"unknown {p.name} is refused",
                                 {**base, p.name: _unknown(self.spec, p.ref_table or "",
                                                           p.ref_column or "", p.type)},
                                 ok=False, error_kind="tool_error",
                                 error_contains=_noun(p.ref_table or "")))
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
