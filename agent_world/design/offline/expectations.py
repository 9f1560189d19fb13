"""Tool tests whose expectations come from the seed rows, not from running the tool.

For each plan the expected result or state change is computed here in plain Python over the
spec's seed rows (filters, counts, sums, the row a key names, the row a create inserts),
independently of the SQL the renderer writes. Every tool gets positive cases and refusals
(unknown id, final status, still-referenced record, taken unique value), and every write test
states its exact database change (`ToolExpectation.changes`).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from datetime import date, datetime, timedelta
from typing import Any

from agent_world.design.offline.contracts import (
    FETCH_MAX_LENGTH,
    Contract,
    ContractParam,
    Guard,
    Value,
    final_states,
)
from agent_world.design.offline.plans import (
    DEFAULT_LIMIT,
    HASH_COLUMNS,
    MAX_ROWS,
    ParamPlan,
    ToolPlan,
    newest_first,
    next_code,
    pk_column,
)
from agent_world.envs.spec import EnvSpec, TableSpec
from agent_world.mining.offline.naming import singular, snake
from agent_world.mining.semantics import known_zones

Test = dict[str, Any]




def _variant(base: str, i: int) -> str:
    """A fresh value shaped like a stored one, as a person would type it: the last number
    moved on (`FP-9372` → `FP-9373`), a hex digest redrawn, else a numbered copy
    (`America/New_York-2`); "new1-FP-9372" read as an artefact in every request."""
    if re.fullmatch(r"[0-9a-f]{7,64}", base):
        return hashlib.sha256(f"{base}:{i}".encode()).hexdigest()[:len(base)]
    if re.fullmatch(r"[^@\s]+@[^@\s]+", base):  # an address: another mailbox, same domain
        local, domain = base.split("@")
        return f"{local}{i + 1}@{domain}"
    m = list(re.finditer(r"\d+", base))
    if m:
        last = m[-1]
        n = str(int(last.group()) + i).zfill(len(last.group()))
        return base[:last.start()] + n + base[last.end():]
    return f"{base}-{i + 1}"


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


def _noun(table: str) -> str:
    """What a refusal of an unknown record of `table` names (the renderer's noun)."""
    return singular(table).replace("_", " ")


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
    """A word of a stored value to search for: a whole word, as a person types it (a test's
    "Americ" became the tasks' "timezones matching 'Americ'")."""
    words = [w for w in re.findall(r"[A-Za-z0-9]{3,}", value)]
    return words[0] if words else None


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
                if cell != v:
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
        if plan.kind == "contract":
            return _contract_tests(self, plan)
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
                         error_kind="tool_error", error_contains=_noun(plan.table),
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

    def _expected_ids(self, plan: ToolPlan, args: dict[str, Any]) -> list[Any]:
        pk = pk_column(self.table(plan))
        hits = [r[pk] for r in self.rows(plan.table) if self.matches(plan, r, args)]
        if newest_first(plan.name, plan.description):
            hits.reverse()
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

    # -- writes ----------------------------------------------------------------------------
    def _fresh(self, plan: ToolPlan, p: ParamPlan, template: Any) -> Any:
        column = p.column or ""
        taken = {r.get(column) for r in self.rows(plan.table)}
        if p.type in ("integer", "number"):
            nums = [v for v in taken if isinstance(v, int | float) and not isinstance(v, bool)]
            return int(max(nums, default=0)) + 1
        base = template if isinstance(template, str) else column
        zones = known_zones(like=base) if "/" in base else ()
        if zones:  # a time zone that exists, at the same offset: not "America/New_York-2"
            zone = next((z for z in zones if z not in taken and _fits(p, z)), None)
            if zone is not None:
                return zone
        for i in range(1, 100):
            for cand in (_variant(base, i), f"new{i}-{base}"):
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
        values.update({c: next_code([r.get(c) for r in self.rows(plan.table)])
                       for c in plan.code_columns})
        values.update(self.copied_values(plan, values))
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
                                     error_kind="tool_error", error_contains=_noun(table or ""),
                                     changes=[]))
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
        if status_param is not None and status_param.enum is not None:
            enum = [s for s in enum if s in status_param.enum]
        best = None
        final = final_states(self.table(plan).column(col).enum)
        for row in keyed:
            current = row.get(col)
            if current in final or current in plan.refuse_states:
                continue
            target = plan.target_status or next(
                (s for s in enum if s != current and s not in final), None) or next(
                (s for s in enum if s != current), None)
            if target is None or target == current:
                continue
            args = args_for(row, target)
            if any(v is None for v in args.values()):
                continue
            coupled = self._held_changes(plan, row, current, target)
            if coupled is None:
                continue
            values = {col: target, **{c: self.now for c in plan.now_columns}}
            for p in plan.params:
                if p.role == "set" and p.column != col and p.name in args:
                    values[p.column] = args[p.name]
            values.update({f: None for f, states in plan.clear_outside.items()
                           if target not in states and row.get(f) is not None})
            if best is None or len(coupled) > len(best[3]):
                best = (target, args, {"table": plan.table, "op": "update",
                                       "key": {pk: row[pk]}, "values": values}, coupled)
            if len(coupled) == len([h for h in plan.holds if h.held]):
                break
        if best is not None:
            target, args, change, coupled = best
            out.append(self.test(plan, f"changes {col} to {target}", args,
                                 contains={col: target}, changes=[change, *coupled]))
        held = next((r for r in keyed if r.get(col) in plan.refuse_states), None)
        if held is not None:
            target = plan.target_status or next((s for s in enum if s != held[col]), None)
            args = args_for(held, target)
            if target is not None and all(v is not None for v in args.values()):
                out.append(self.test(plan, f"held {held[col]} is refused", args, ok=False,
                                     error_kind="tool_error", changes=[]))
        same = next((r for r in keyed if (plan.target_status or r.get(col)) == r.get(col)
                     and r.get(col) is not None), None)
        if same is not None:
            args = args_for(same, same[col])
            if all(v is not None for v in args.values()):
                out.append(self.test(plan, f"already {same[col]} is refused", args, ok=False,
                                     error_kind="tool_error", changes=[]))
        done = next((r for r in keyed if r.get(col) in final
                     and r.get(col) != plan.target_status), None)
        if done is not None:
            target = plan.target_status or next((s for s in enum if s != done[col]), None)
            args = args_for(done, target)
            if target is not None and all(v is not None for v in args.values()):
                out.append(self.test(plan, f"final {done[col]} is refused", args, ok=False,
                                     error_kind="tool_error", changes=[]))
        out.append(self._unknown_key(plan))
        return out

    def _held_changes(self, plan: ToolPlan, row: dict[str, Any], current: Any, target: Any
                      ) -> list[dict[str, Any]] | None:
        """The parents a status change frees or takes (None: refused, the parent is taken)."""
        out: list[dict[str, Any]] = []
        for h in plan.holds:
            if not h.held:
                continue
            was, now = current in h.holding, target in h.holding
            if was == now:
                continue
            parent_t = self.spec.table(h.parent)
            ppk = pk_column(parent_t) or "id"
            parent = next((r for r in self.rows(h.parent) if r.get(ppk) == row.get(h.fk)), None)
            if parent is None:
                if now:
                    return None
                continue
            if now and any(parent.get(c) not in v for c, v in h.takes.items()):
                return None
            values = {**(h.held if now else h.free), **{
                c.name: self.now for c in parent_t.columns
                if c.name in ("updated_at", "modified_at")}}
            if any(parent.get(k) != v for k, v in values.items()):
                out.append({"table": h.parent, "op": "update", "key": {ppk: parent[ppk]},
                            "values": values})
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
        if keyed and sets and not any(p.required for p in sets):
            args = self._key_args(plan, keyed[0])
            for p in plan.params:
                if p.required and p.name not in args:
                    args[p.name] = self.filler(p)
            out.append(self.test(plan, "an edit with no field to change is refused", args,
                                 ok=False, error_kind="tool_error", changes=[]))
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
        status = next((c.name for c in self.table(plan).columns
                       if c.enum and c.name in ("status", "state")), None)
        live = set(plan.refuse_states) if status else set()
        out = []
        free = next((r for r in keyed if not refs[r[pk]] and r.get(status or "") not in live),
                    None)
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
        holding = next((r for r in keyed if not refs[r[pk]] and r.get(status or "") in live),
                       None)
        if holding is not None:
            out.append(self.test(plan, f"{holding[status]} record is refused",
                                 self._key_args(plan, holding), ok=False,
                                 error_kind="tool_error", changes=[]))
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


# ---- tests from a behaviour contract --------------------------------------------------------------
def _days_after(base: Any, days: int) -> str:
    if isinstance(base, str) and "T" in base:
        return (datetime.fromisoformat(base) + timedelta(days=days)).isoformat(
            timespec="seconds")
    return (date.fromisoformat(str(base)[:10]) + timedelta(days=days)).isoformat()


def _offset_minutes(text: Any) -> int:
    m = re.fullmatch(r"(?:UTC)?([+-])(\d{2}):?(\d{2})", str(text or "").strip())
    if m is None:
        return 0
    return (1 if m.group(1) == "+" else -1) * (int(m.group(2)) * 60 + int(m.group(3)))


def _offset_str(minutes: int) -> str:
    return f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


class ContractTests:
    """The tests of one contract, computed over the seed rows: the success case on a record the
    contract's guards admit (preferring one where every coupled effect has rows to act on),
    with the exact change of every table; one refusal per guard; an unknown record."""

    def __init__(self, designer: Designer, plan: ToolPlan):
        self.d = designer
        self.plan = plan
        self.c: Contract = plan.contract  # type: ignore[assignment]
        self.spec = designer.spec
        self.table = self.spec.table(self.c.entity)
        self.pk = pk_column(self.table) or "id"
        self.today = self.d.now[:10]

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.d.rows(table)

    def test(self, name: str, args: dict[str, Any], **expect: Any) -> Test:
        return self.d.test(self.plan, name, args, **expect)

    # -- argument values -----------------------------------------------------------------
    def ref_row(self, p: ContractParam, value: Any) -> dict[str, Any] | None:
        if p.ref_table is None:
            return None
        hits = [r for r in self.rows(p.ref_table) if r.get(p.ref_column or "") == value]
        return hits[0] if hits else None

    def key_value(self, row: dict[str, Any]) -> Any:
        key = self.c.key()
        return row.get(key.column or "") if key else None

    def scope_value(self, p: ContractParam, row: dict[str, Any]) -> Any:
        parent = next((r for r in self.rows(p.ref_table or "")
                       if r.get(pk_column(self.spec.table(p.ref_table or "")) or "id")
                       == row.get(p.column or "")), None)
        return parent.get(p.ref_column or "") if parent else None

    def guard_ok(self, g: Guard, row: dict[str, Any], args: dict[str, Any],
                 argrows: dict[str, dict[str, Any]]) -> bool:
        if g.kind == "state_in":
            target = row if g.row == "entity" else argrows.get(g.row)
            return target is not None and target.get(g.column or "") in g.values
        if g.kind == "below":
            return (row.get(g.column or "") or 0) < (g.limit or 0)
        if g.kind == "differs":
            other = argrows.get(g.arg or "")
            return other is not None and row.get(g.column or "") != other.get("id")
        if g.kind == "none_held":
            reached = row.get(g.path[0])
            source = self.c.entity
            for prev, col in zip(g.path, g.path[1:], strict=False):
                parent, pk = self.spec.table(source).column(prev).foreign_key.split(".")  # type: ignore[union-attr]
                hit = next((r for r in self.rows(parent) if r.get(pk) == reached), {})
                reached, source = hit.get(col), parent
            (st, live), = g.where.items()
            return not any(h.get(g.link or "") == reached and h.get(st) in live
                           and h.get(g.column or "") != row.get(g.arg or "")
                           for h in self.rows(g.table or ""))
        if g.kind == "exists_where":
            paths = next((args.get(p.name) for p in self.c.params if p.role == "paths"), [])
            known = {r.get("path") for r in self.rows(g.table or "")
                     if r.get(g.link or "") == row.get(self.pk)}
            return bool(paths) and all(p in known for p in paths)
        return True

    def value(self, v: Value, row: dict[str, Any], args: dict[str, Any],
              argrows: dict[str, dict[str, Any]]) -> Any:
        if v.source == "arg" and v.column and args.get(v.arg or "") is None:
            return row.get(v.column)
        if v.source == "arg":
            return args.get(v.arg or "")
        if v.source == "const":
            return v.value
        if v.source == "now":
            return self.d.now
        if v.source == "today":
            return self.today
        if v.source == "entity":
            return row.get(v.column or "")
        if v.source == "row":
            return (argrows.get(v.arg or "") or {}).get(v.column or "")
        if v.source == "days_after":
            base = (row.get(v.column) if v.column else None) or self.today
            days = v.value
            if v.alt_column and row.get(v.alt_column):
                days = v.alt_value
            return _days_after(base, int(days))
        if v.source == "increment":
            return (row.get(v.column or "") or 0) + v.value
        raise ValueError(f"no test value for {v.source!r}")

    def changes(self, row: dict[str, Any], args: dict[str, Any],
                argrows: dict[str, dict[str, Any]], source: dict[str, Any] | None = None
                ) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
        """(expected changes, the entity's new values, effects that touched a row)."""
        out: list[dict[str, Any]] = []
        entity_values: dict[str, Any] = {}
        touched = 0
        source = source if source is not None else row
        for e in self.c.effects:
            t = self.spec.table(e.table)
            tpk = pk_column(t) or "id"
            values = {k: self.value(v, row, args, argrows) for k, v in e.set.items()}
            if e.op == "insert":
                out.append({"table": e.table, "op": "insert", "values": values})
                touched += 1
                continue
            if e.rows == "entity":
                targets = [r for r in self.rows(e.table) if r[tpk] == row[self.pk]]
            elif e.rows == "children":
                targets = [r for r in self.rows(e.table) if r.get(e.link or "") == row[self.pk]]
            elif e.rows == "peers":
                targets = [r for r in self.rows(e.table) if r.get(e.link or "") ==
                           row.get(e.link or "") and r[tpk] != row[self.pk]]
            elif e.link_arg:
                targets = [r for r in self.rows(e.table)
                           if r[tpk] == (argrows.get(e.link_arg) or {}).get(tpk)]
            else:
                targets = [r for r in self.rows(e.table) if r[tpk] == source.get(e.link or "")]
            targets = [r for r in targets if all(r.get(col) in vals
                                                 for col, vals in e.where.items())]
            for col, arg in e.where_arg.items():
                wanted = args.get(arg) or []
                targets = [r for r in targets if r.get(col) in wanted]
            hit = False
            for r in targets:
                if all(r.get(k) == v for k, v in values.items()):
                    continue  # nothing changes: the diff shows no update
                hit = True
                if e.op == "delete":
                    out.append({"table": e.table, "op": "delete", "key": {tpk: r[tpk]}})
                else:
                    out.append({"table": e.table, "op": "update", "key": {tpk: r[tpk]},
                                "values": values})
            touched += hit
            if e.rows == "entity" and e.table == self.c.entity:
                entity_values = values
        return out, entity_values, touched

    # -- arguments for one record ---------------------------------------------------------
    def args_for(self, row: dict[str, Any]) -> tuple[dict[str, Any],
                                                    dict[str, dict[str, Any]]] | None:
        args: dict[str, Any] = {}
        argrows: dict[str, dict[str, Any]] = {}
        for p in self.c.params:
            if p.role == "key":
                v = row.get(p.column or "")
                if v is None:
                    return None
                args[p.name] = v
            elif p.role == "scope":
                v = self.scope_value(p, row)
                if v is None:
                    return None
                args[p.name] = v
            elif p.role == "row" and p.required:
                pick = self.pick_row(p, row)
                if pick is None:
                    return None
                args[p.name] = pick.get(p.ref_column or "")
                argrows[p.name] = pick
            elif p.role == "set" and p.required:
                args[p.name] = p.enum[0] if p.enum else (
                    "Damaged beyond repair" if p.type == "string" else 1)
            elif p.role == "paths":
                paths = self.paths_for(row)
                if not paths:
                    return None
                args[p.name] = paths
            elif p.role == "ignore" and p.required:
                args[p.name] = self.d.filler(p)  # type: ignore[arg-type]
        return args, argrows

    def pick_row(self, p: ContractParam, row: dict[str, Any]) -> dict[str, Any] | None:
        """A referenced record the guards on it admit (an active member, another branch)."""
        guards = [g for g in self.c.guards if g.row == p.name or g.arg == p.name]
        for cand in self.rows(p.ref_table or ""):
            if cand.get(p.ref_column or "") is None:
                continue
            if all(self.guard_ok(g, row, {}, {p.name: cand}) for g in guards):
                return cand
        return None

    def paths_for(self, row: dict[str, Any]) -> list[str]:
        e = next((e for e in self.c.effects if e.rows == "children"), None)
        if e is None:
            return []
        paths = [r.get("path") for r in self.rows(e.table) if r.get(e.link or "") == row[self.pk]
                 and all(r.get(c) in v for c, v in e.where.items())]
        return sorted(p for p in paths if isinstance(p, str))[:2]

    # -- the tests -------------------------------------------------------------------------
    def write_tests(self) -> list[Test]:
        best = None
        for row in self.rows(self.c.entity):
            built = self.args_for(row)
            if built is None:
                continue
            args, argrows = built
            if not all(self.guard_ok(g, row, args, argrows) for g in self.c.guards):
                continue
            changes, values, touched = self.changes(row, args, argrows)
            if best is None or touched > best[0]:
                best = (touched, row, args, changes, values)
            if touched == len(self.c.effects):
                break
        out: list[Test] = []
        if best is not None:
            _, row, args, changes, values = best
            if any(e.rows == "entity" and e.table == self.c.entity for e in self.c.effects):
                out.append(self.test("does what the contract says", args, contains=values,
                                     changes=changes))
            else:
                child = next(e for e in self.c.effects if e.rows == "children")
                flag, v = next(iter(child.set.items()))
                given = next((p.name for p in self.c.params if p.role == "paths"), None)
                if given is not None:
                    paths = sorted(set(args[given]))
                else:
                    paths = sorted(r.get("path") for r in self.rows(child.table)
                                   if r.get(child.link or "") == row[self.pk])
                out.append(self.test("does what the contract says", args,
                                     equals={flag: v.value, "paths": paths}, changes=changes))
        out += self.refusals(best[1] if best else None)
        return out

    def refusals(self, good: dict[str, Any] | None) -> list[Test]:
        out: list[Test] = []
        for g in self.c.guards:
            if g.row != "entity" or g.kind not in ("state_in", "below", "none_held"):
                continue
            others = [x for x in self.c.guards if x is not g and x.row == "entity"
                      and x.kind in ("state_in", "below", "none_held")]
            for row in self.rows(self.c.entity):
                built = self.args_for(row)
                if built is None:
                    continue
                args, argrows = built
                if self.guard_ok(g, row, args, argrows) or not all(
                        self.guard_ok(x, row, args, argrows) for x in others):
                    continue
                what = g.message if g.kind == "none_held" else \
                    f"{g.column} {row.get(g.column or '')!r}"
                out.append(self.test(f"refused: {what}", args, ok=False,
                                     error_kind="tool_error", changes=[]))
                break
        if good is not None:
            built = self.args_for(good)
            assert built is not None
            args, argrows = built
            for g in self.c.guards:
                if g.kind == "differs" and g.arg:
                    p = self.c.param(g.arg)
                    same = next((r for r in self.rows(p.ref_table or "") if r.get("id") ==
                                 good.get(g.column or "")), None) if p else None
                    if same is not None:
                        out.append(self.test("refused: no move", {**args, g.arg: same.get(
                            p.ref_column or "")}, ok=False, error_kind="tool_error", changes=[]))
                elif g.kind == "state_in" and g.row != "entity":
                    p = self.c.param(g.row)
                    bad = next((r for r in self.rows(p.ref_table or "") if r.get(g.column or "")
                                not in g.values and r.get(p.ref_column or "") is not None),
                               None) if p else None
                    if bad is not None:
                        out.append(self.test(f"refused: {g.row} with {g.column} "
                                             f"{bad.get(g.column or '')!r}",
                                             {**args, g.row: bad.get(p.ref_column or "")},
                                             ok=False, error_kind="tool_error", changes=[]))
                elif g.kind == "exists_where":
                    p = next(p for p in self.c.params if p.role == "paths")
                    out.append(self.test("refused: unknown path", {
                        **args, p.name: ["no/such/file.txt"]}, ok=False,
                        error_kind="tool_error", changes=[]))
            for p in self.c.params:
                if p.role == "row" and p.required and p.ref_table:
                    out.append(self.test(f"refused: unknown {p.name}", {
                        **args, p.name: _unknown(self.spec, p.ref_table, p.ref_column or "",
                                                 p.type)}, ok=False, error_kind="tool_error",
                        error_contains=_noun(p.ref_table), changes=[]))
                    break
        key = self.c.key()
        if key is not None:
            args = {}
            if good is not None:
                args = dict(self.args_for(good)[0])  # type: ignore[index]
            else:
                for p in self.c.params:
                    if p.required and p.role not in ("key",):
                        args[p.name] = self.d.filler(p)  # type: ignore[arg-type]
            args[key.name] = _unknown(self.spec, self.c.entity, key.column or "", key.type)
            out.append(self.test("unknown record is refused", args, ok=False,
                                 error_kind="tool_error",
                                 changes=[] if self.c.write else None))
        return out

    def read_one_tests(self) -> list[Test]:
        out = []
        rows = self.rows(self.c.entity)
        for row in rows[:1] + rows[len(rows) // 2:len(rows) // 2 + 1]:
            built = self.args_for(row)
            if built is None:
                continue
            want = dict(row)
            for child, fk in self.c.embed:
                want[child] = [r for r in self.rows(child) if r.get(fk) == row[self.pk]]
            out.append(self.test(f"returns record {row[self.pk]} with what it includes",
                                 built[0], contains=want))
        return out + self.refusals(None)[-1:]

    def list_tests(self) -> list[Test]:
        rows = self.rows(self.c.entity)
        limit = next((p for p in self.c.params if p.role == "limit"), None)
        cap = (limit.default if limit else MAX_ROWS) or MAX_ROWS

        order = rows[::-1] if newest_first(self.c.tool, self.c.description) else rows

        def ids(pred: Any, n: int = cap) -> list[Any]:
            return [r[self.pk] for r in order if pred(r)][:n]

        out: list[Test] = []
        for p in self.c.params:
            if p.role == "any_like":
                sample = next((r for r in rows[len(rows) // 3:] + rows
                               if isinstance(r.get(p.columns[-1]), str)
                               and _needle(r[p.columns[-1]])), None)
                for col in (p.columns[0], p.columns[-1]):
                    hit = next((r for r in rows[len(rows) // 3:] + rows
                                if isinstance(r.get(col), str) and _needle(r[col])), sample)
                    if hit is None:
                        continue
                    needle = _needle(hit[col]).lower()  # type: ignore[union-attr]
                    out.append(self.test(f"finds {needle!r} in the {col}", {p.name: needle},
                                         pluck=self.pk, equals=ids(lambda r, n=needle, cs=p.columns: any(
                                             isinstance(r.get(c), str) and n in r[c].lower()
                                             for c in cs))))
            elif p.role == "child_eq":
                values = [r.get(p.via_column or "") for r in self.rows(p.via_table or "")
                          if r.get(p.via_column or "") is not None]
                if values:
                    v = max(set(values), key=values.count)
                    owners = {r.get(p.via_link) for r in self.rows(p.via_table or "")
                              if r.get(p.via_column or "") == v}
                    out.append(self.test(f"filters by {p.name}", {p.name: v}, pluck=self.pk,
                                         equals=ids(lambda r, o=owners: r[self.pk] in o)))
            elif p.role == "child_state":
                owners = {r.get(p.via_link) for r in self.rows(p.via_table or "")
                          if r.get(p.via_column or "") == p.via_value}
                for flag in (True, False):
                    out.append(self.test(f"{p.name} = {flag}", {p.name: flag}, pluck=self.pk,
                                         equals=ids(lambda r, o=owners, f=flag:
                                                    (r[self.pk] in o) is f)))
        return out


class ComputeTests(ContractTests):
    """Tests of computing tools: the result computed here from the seed rows."""

    def business(self) -> list[TableSpec]:
        names = self.c.options.get("tables") or []
        return [self.spec.table(n) for n in names if self.rows(n)]

    def compute_sql_select(self) -> list[Test]:
        q = self.c.params[0].name
        out = []
        for t in self.business()[:2]:
            cols = [c.name for c in t.columns if c.type in ("integer", "text", "real")
                    and c.name != "id"][:2]
            pk = pk_column(t) or "id"
            rows = self.rows(t.name)
            sel = ", ".join(f'"{c}"' for c in [pk, *cols])
            out.append(self.test(f"runs a SELECT over {t.name}", {
                q: f'SELECT {sel} FROM "{t.name}" ORDER BY "{pk}" LIMIT 3'},
                equals=[{c: r.get(c) for c in [pk, *cols]} for r in rows[:3]], changes=[]))
            out.append(self.test(f"counts {t.name}", {q: f'SELECT count(*) AS n FROM "{t.name}";'},
                                 equals=[{"n": len(rows)}], changes=[]))
        t = (self.business() or [self.table])[0]
        out.append(self.test("a write is refused", {q: f'DELETE FROM "{t.name}"'}, ok=False,
                             error_kind="tool_error", changes=[]))
        out.append(self.test("two statements are refused", {
            q: f'SELECT 1; DELETE FROM "{t.name}"'}, ok=False, error_kind="tool_error",
            changes=[]))
        return out

    def compute_sql_write(self) -> list[Test]:
        q = self.c.params[0].name
        out = []
        for t in self.business()[:2]:
            pk = pk_column(t) or "id"
            col = next((c for c in t.columns if c.type == "text" and not c.unique and not c.enum
                        and not c.primary_key and not c.foreign_key), None)
            rows = self.rows(t.name)
            if col is None or not rows:
                continue
            row = rows[len(rows) // 2]
            out.append(self.test(f"updates one {singular(t.name)}", {
                q: f"UPDATE \"{t.name}\" SET \"{col.name}\" = 'edited' WHERE \"{pk}\" = "
                   f"{row[pk]}"}, equals={"rows_affected": 1},
                changes=[{"table": t.name, "op": "update", "key": {pk: row[pk]},
                          "values": {col.name: "edited"}}]))
        t = (self.business() or [self.table])[0]
        out.append(self.test("a SELECT is refused", {q: f'SELECT * FROM "{t.name}"'}, ok=False,
                             error_kind="tool_error", changes=[]))
        return out

    def compute_create_table(self) -> list[Test]:
        q = self.c.params[0].name
        name_col = self.c.options["name_column"]
        # in row order: a set's order of strings changes with the process's hash seed, and
        # the test it picks goes into the spec's fingerprint (which seeds task synthesis)
        taken = [r.get(name_col) for r in self.rows(self.c.entity)]
        new = next(n for n in ("reviews", "notes_2", "events_log") if n not in taken)
        values = {name_col: new, **{k: self.d.now for k, v in self.c.effects[0].set.items()
                                    if v.source == "now"}}
        out = [self.test("registers the new table", {
            q: f"CREATE TABLE {new} (id INTEGER PRIMARY KEY, body TEXT)"}, contains=values,
            changes=[{"table": self.c.entity, "op": "insert", "values": values}])]
        old = next((n for n in taken if isinstance(n, str)), None)
        if old:
            out.append(self.test("an existing name is refused", {
                q: f"CREATE TABLE {old} (id INTEGER)"}, ok=False, error_kind="tool_error",
                changes=[]))
        out.append(self.test("not a CREATE TABLE is refused", {q: "DROP TABLE x"}, ok=False,
                             error_kind="tool_error", changes=[]))
        return out

    def compute_describe_table(self) -> list[Test]:
        key = self.c.key()
        assert key is not None
        out = []
        for row in self.rows(self.c.entity):
            name = row.get(key.column or "")
            if name in {t.name for t in self.spec.tables}:
                cols = [c.name for c in self.spec.table(name).columns]
                out.append(self.test(f"describes {name}", {key.name: name}, pluck="name",
                                     equals=cols))
                if len(out) == 2:
                    break
        return out + self.refusals(None)[-1:]

    def _changes_of(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        o = self.c.options
        return sorted((r for r in self.rows(o["table"]) if r.get(o["link"]) == row[self.pk]),
                      key=lambda r: (r.get(o["path"]) or "", r.get("id")))

    def _repo_args(self, row: dict[str, Any]) -> dict[str, Any] | None:
        built = self.args_for(row)
        return built[0] if built else None

    def compute_diff(self) -> list[Test]:
        o = self.c.options
        out = []
        target = next((p for p in self.c.params if p.role == "row"), None)
        for row in self.rows(self.c.entity):
            changes = self._changes_of(row)
            if o.get("staged") is not None:
                changes = [r for r in changes if bool(r.get(o["staged_column"])) is o["staged"]]
            if not any(r.get(o["diff"]) for r in changes):
                continue
            args = {self.c.key().name: row[self.c.key().column]}  # type: ignore[union-attr]
            if target is not None:
                mine = next((r for r in self.rows(target.ref_table or "")
                             if r.get(target.column or "") == row[self.pk]), None)
                if mine is None:
                    continue
                args[target.name] = mine.get(target.ref_column or "")
            out.append(self.test("returns the diff of the changed files", args, equals={
                "files": [r.get(o["path"]) for r in changes],
                "diff": "\n".join(r[o["diff"]] for r in changes if r.get(o["diff"]))},
                changes=[]))
            if target is not None:
                other = next((r for r in self.rows(target.ref_table or "")
                              if r.get(target.column or "") != row[self.pk]
                              and r.get(target.ref_column or "") not in
                              {x.get(target.ref_column or "") for x in
                               self.rows(target.ref_table or "")
                               if x.get(target.column or "") == row[self.pk]}), None)
                if other is not None:
                    out.append(self.test(f"a {target.name} of another "
                                         f"{singular(self.c.entity)} is refused", {
                                             **args, target.name: other.get(target.ref_column or "")},
                                         ok=False, error_kind="tool_error"))
            break
        return out + self.refusals(None)[-1:]

    def compute_status(self) -> list[Test]:
        o = self.c.options
        out = []
        for row in self.rows(self.c.entity):
            changes = self._changes_of(row)
            if not changes:
                continue
            st, change, path = o["staged_column"], o.get("change"), o["path"]
            want = {"staged": [r[path] for r in changes if r.get(st)],
                    "unstaged": [r[path] for r in changes if not r.get(st)
                                 and (not change or r.get(change) != "untracked")],
                    "untracked": [r[path] for r in changes if not r.get(st)
                                  and change and r.get(change) == "untracked"]}
            out.append(self.test("lists staged, unstaged and untracked paths", {
                self.c.key().name: row[self.c.key().column]},  # type: ignore[union-attr]
                equals=want, changes=[]))
            if len(out) == 2:
                break
        return out + self.refusals(None)[-1:]

    def _absent(self, g: Guard, args: dict[str, Any]) -> bool:
        """Whether no row of the guard's table matches it under these arguments."""
        return not any(all(r.get(c) in v for c, v in g.where.items()) and
                       all(r.get(c) == args.get(a) for c, a in g.match.items())
                       for r in self.rows(g.table or ""))

    def _make_absent(self, g: Guard, args: dict[str, Any], new: dict[str, Any]) -> bool:
        """Move the last argument the guard matches (the pickup branch) to a value where nothing
        matches; False when every value matches something."""
        col, arg = list(g.match.items())[-1]
        p = self.c.param(arg)
        if p is None or p.column is None:
            return False
        parent = fk_target_of(self.table, p.column)
        for r in self.rows(parent or ""):
            if self._absent(g, {**args, arg: r.get("id")}):
                args[arg] = new[p.column] = r.get("id")
                return True
        return False

    def compute_commit(self) -> list[Test]:
        """A repository with staged changes: the commit, its file changes, the staged rows
        gone, the checked-out branch moved; nothing staged and an unknown repository are
        refused."""
        o = self.c.options
        repo_p, msg_p = self.c.params[0], self.c.params[1]
        rt = self.spec.table(repo_p.ref_table or "")
        rpk = pk_column(rt) or "id"
        staged_of: dict[Any, list[dict[str, Any]]] = {}
        for r in self.rows(o["changes"]):
            if r.get(o["staged"]) in (True, 1):
                staged_of.setdefault(r.get(o["link"]), []).append(r)
        repos = [r for r in self.rows(rt.name) if r.get(repo_p.ref_column or "") is not None]
        out: list[Test] = []
        repo = next((r for r in repos if staged_of.get(r[rpk])), None)
        if repo is not None:
            out.append(self._commit_test(repo, sorted(
                staged_of[repo[rpk]], key=lambda r: (r.get(o["path"]), r.get("id")))))
        bare = next((r for r in repos if not staged_of.get(r[rpk])), None)
        if bare is not None:
            out.append(self.test("refused: nothing staged", {
                repo_p.name: bare[repo_p.ref_column or ""], msg_p.name: "Nothing here"},
                ok=False, error_kind="tool_error", changes=[]))
        out.append(self.test(f"refused: unknown {repo_p.name}", {
            repo_p.name: _unknown(self.spec, rt.name, repo_p.ref_column or "", repo_p.type),
            msg_p.name: "Nowhere"}, ok=False, error_kind="tool_error", changes=[]))
        return out

    def _commit_test(self, repo: dict[str, Any], staged: list[dict[str, Any]]) -> Test:
        o = self.c.options
        repo_p, msg_p = self.c.params[0], self.c.params[1]
        rpk = pk_column(self.spec.table(repo_p.ref_table or "")) or "id"
        now, message = self.d.now, "Record the staged changes"
        commits = self.rows(self.c.entity)
        new_id = max((r.get(self.pk) or 0 for r in commits), default=0) + 1
        br = o.get("branch")
        branch = next((r for r in self.rows(br["table"]) if r.get(br["link"]) == repo[rpk]
                       and r.get(br["status"]) == "checked_out"), None) if br else None
        parent = branch.get(br["head"]) if branch else None
        if parent is None:
            mine = [r[self.pk] for r in commits if r.get(o["repo_fk"]) == repo[rpk]]
            parent = max(mine) if mine else None
        values: dict[str, Any] = {o["repo_fk"]: repo[rpk], "message": message}
        if o.get("sha"):
            key = f"{repo[rpk]}:{parent if o.get('parent') else None}:{message}:{now}"
            values[o["sha"]] = hashlib.sha1(key.encode()).hexdigest()
        if o.get("parent"):
            values[o["parent"]] = parent
        values.update({n: now for n in o["now"]})
        changes: list[dict[str, Any]] = [{"table": self.c.entity, "op": "insert",
                                          "values": values}]
        f = o.get("files")
        for r in staged if f else []:
            v: dict[str, Any] = {f["link"]: new_id, "path": r.get(o["path"])}
            if f.get("change") and o.get("change"):
                ch = r.get(o["change"])
                v[f["change"]] = "added" if ch == "untracked" else ch
            for key, mark in (("additions", "+"), ("deletions", "-")):
                if f.get(key) and o.get("diff"):
                    v[f[key]] = sum(1 for ln in (r.get(o["diff"]) or "").splitlines()
                                    if ln.startswith(mark) and not ln.startswith(mark * 3))
            changes.append({"table": f["table"], "op": "insert", "values": v})
        changes += [{"table": o["changes"], "op": "delete", "key": {"id": r["id"]}}
                    for r in staged]
        if branch is not None:
            bv: dict[str, Any] = {br["head"]: new_id}
            if any(col.name == "updated_at" for col in self.spec.table(br["table"]).columns):
                bv["updated_at"] = now
            changes.append({"table": br["table"], "op": "update", "key": {"id": branch["id"]},
                            "values": bv})
            th = br.get("through")
            if th:
                tv = {th["branch"]: branch["id"], th["commit"]: new_id}
                if th.get("now"):
                    tv[th["now"]] = now
                changes.append({"table": th["table"], "op": "insert", "values": tv})
        return self.test("commits the staged changes", {
            repo_p.name: repo[repo_p.ref_column or ""], msg_p.name: message},
            contains={**values, "files": [r.get(o["path"]) for r in staged]}, changes=changes)

    def _offset(self, zone: dict[str, Any], instant: datetime) -> int:
        """The zone's offset at `instant` (UTC): after its last transition, else standard."""
        o = self.c.options
        tr = o.get("transitions")
        standard = _offset_minutes(zone.get(o["offset"]))
        if not tr:
            return standard
        pk = pk_column(self.spec.table(self.c.entity))
        when = instant.isoformat(timespec="seconds")
        past = [r for r in self.rows(tr["table"]) if r.get(tr["link"]) == zone.get(pk)
                and str(r.get(tr["at"]) or "") <= when]
        return _offset_minutes(max(past, key=lambda r: r[tr["at"]])[tr["after"]]) if past \
            else standard

    def compute_convert(self) -> list[Test]:
        src, time_p, dst = self.c.params[:3]
        o = self.c.options
        zones = [r for r in self.rows(self.c.entity) if r.get(o["name"])]
        out = []
        pairs = [(zones[0], zones[-1], "12:30"), (zones[-1], zones[0], "23:15")] \
            if len(zones) > 1 else []
        if o.get("transitions"):  # a pair whose offsets today are not their standard ones
            today = datetime.fromisoformat(self.d.now).date()
            noon = datetime.combine(today, datetime.min.time()) + timedelta(hours=12)
            shifted = [z for z in zones if self._offset(z, noon) != _offset_minutes(
                z.get(o["offset"]))]
            if shifted:
                pairs.append((zones[0], shifted[0], "08:45"))
                pairs.append((shifted[-1], zones[0], "21:10"))
        for a, z, clock in pairs:
            h, m = (int(x) for x in clock.split(":"))
            ma, mz = _offset_minutes(a.get(o["offset"])), _offset_minutes(z.get(o["offset"]))
            if o.get("transitions"):
                local = datetime.combine(datetime.fromisoformat(self.d.now).date(),
                                         datetime.min.time()) + timedelta(hours=h, minutes=m)
                ma = self._offset(a, local - timedelta(minutes=ma))
                mz = self._offset(z, local - timedelta(minutes=ma))
            day, t = divmod(h * 60 + m - ma + mz, 24 * 60)
            out.append(self.test(f"converts {clock} from {a[o['name']]} to {z[o['name']]}", {
                src.name: a[o["name"]], time_p.name: clock, dst.name: z[o["name"]]}, equals={
                "source": {"timezone": a[o["name"]], "time": clock,
                           "utc_offset": _offset_str(ma)},
                "target": {"timezone": z[o["name"]], "time": f"{t // 60:02d}:{t % 60:02d}",
                           "utc_offset": _offset_str(mz)},
                "time_difference": f"{(mz - ma) / 60:+g}h", "day_offset": day}, changes=[]))
        if zones:
            out.append(self.test("an unknown zone is refused", {
                src.name: "Nowhere/Unknown", time_p.name: "10:00", dst.name: zones[0][o["name"]]},
                ok=False, error_kind="tool_error"))
        return out

    def compute_fetch(self) -> list[Test]:
        """A page read whole and in pieces (the cut continues where it ended), an error page
        and an unknown URL refused: derived from the stored pages, not from the tool."""
        url = self.c.params[0]
        opt = {snake(p.name): p.name for p in self.c.params if p.role == "option"}
        pages = [r for r in self.rows(self.c.entity) if r.get("url")]
        ok = [r for r in pages if (r.get("status_code") or 0) < 400 and r.get("body")]
        out = []

        def page(r: dict[str, Any], start: int, size: int) -> dict[str, Any]:
            body = r["body"]
            want = {"url": r["url"], "status_code": r["status_code"],
                    "content": body[start:start + size]}
            if self.c.options.get("content_type"):
                want["content_type"] = r.get("content_type")
            if start + size < len(body):
                want["next_start_index"] = start + size
            return want

        for r in sorted(ok, key=lambda r: len(r["body"]))[-1:]:
            out.append(self.test("a page is read", {url.name: r["url"]},
                                 equals=page(r, 0, FETCH_MAX_LENGTH), changes=[]))
            if "max_length" in opt and len(r["body"]) > 10:
                cut = {url.name: r["url"], opt["max_length"]: 10}
                out.append(self.test("a long page is cut where asked", cut,
                                     equals=page(r, 0, 10), changes=[]))
                if "start_index" in opt:
                    out.append(self.test("the next piece starts where the cut ended",
                                         {**cut, opt["start_index"]: 10},
                                         equals=page(r, 10, 10), changes=[]))
        bad = next((r for r in pages if (r.get("status_code") or 0) >= 400), None)
        if bad is not None:
            out.append(self.test("an error page is refused", {url.name: bad["url"]}, ok=False,
                                 error_kind="tool_error",
                                 error_contains=str(bad["status_code"]), changes=[]))
        out.append(self.test("an unknown URL is refused",
                             {url.name: "https://nowhere.invalid/none"}, ok=False,
                             error_kind="tool_error", error_contains=_noun(self.c.entity),
                             changes=[]))
        return out

    def compute_clock(self) -> list[Test]:
        zone = self.c.params[0]
        o = self.c.options
        out = []
        named = [r for r in self.rows(self.c.entity) if r.get(o["name"])]
        now = datetime.fromisoformat(self.d.now)
        # two zones, one of them on daylight saving time now when the transitions say so
        shifted = [z for z in named if self._offset(z, now) != _offset_minutes(z.get(o["offset"]))]
        picks: list[dict[str, Any]] = []
        for z in [*named[:1], *shifted[:1], *named[1:2]]:
            if all(z is not p for p in picks):
                picks.append(z)
        for z in picks[:2]:
            mz = self._offset(z, now)
            local = now + timedelta(minutes=mz)
            out.append(self.test(f"the time in {z[o['name']]}", {zone.name: z[o["name"]]},
                                 equals={"timezone": z[o["name"]],
                                         "datetime": local.isoformat(timespec="seconds")
                                         + _offset_str(mz), "utc_offset": _offset_str(mz)},
                                 changes=[]))
        out.append(self.test("an unknown zone is refused", {zone.name: "Nowhere/Unknown"},
                             ok=False, error_kind="tool_error"))
        return out

    def create_tests(self) -> list[Test]:
        """The plain insert tests, with the coupled rows the contract names (the slot a new
        appointment books) and a refusal per guard on a referenced record."""
        tests = self.d._create(self.plan)
        coupled = [e for e in self.c.effects if e.coupled]
        guards = [g for g in self.c.guards if g.row != "entity"]
        absent = [g for g in self.c.guards if g.kind == "none_where" and g.match]
        out = []
        for t in tests:
            exp = t["expect"]
            if not exp.get("changes") or exp.get("ok") is False:
                out.append(t)
                continue
            args = dict(t["arguments"])
            new = dict(exp["changes"][0]["values"])
            ok = True
            for g in guards:
                p = self.c.param(g.row)
                if p is None or p.ref_table is None:
                    continue
                good = [r for r in self.rows(p.ref_table) if r.get(g.column or "") in g.values]
                cur = self.ref_row(p, args.get(p.name))
                if cur is not None and cur.get(g.column or "") in g.values:
                    continue
                if not good:
                    ok = False
                    break
                args[p.name] = good[0].get(p.ref_column or "")
                new[p.column or ""] = good[0].get(pk_column(self.spec.table(p.ref_table)) or "id")
            for g in absent:
                if not self._absent(g, args):
                    ok = self._make_absent(g, args, new)
            if not ok:
                continue
            new.update(self.d.copied_values(self.plan, new))  # from the container chosen now
            changes = [{**exp["changes"][0], "values": new}]
            for e in coupled:
                parent = next((r for r in self.rows(e.table) if r.get("id") == new.get(e.link)),
                              None)
                if parent is None:
                    continue
                values = {k: self.value(v, new, args, {}) for k, v in e.set.items()}
                if any(parent.get(k) != v for k, v in values.items()):
                    changes.append({"table": e.table, "op": "update", "key": {"id": parent["id"]},
                                    "values": values})
            contains = {k: v for k, v in (exp.get("contains") or {}).items()}
            contains.update({k: v for k, v in new.items() if k in contains})
            out.append({**t, "arguments": args, "expect": {**exp, "contains": contains,
                                                          "changes": changes}})
            for g in absent:
                taken = next((r for r in self.rows(g.table or "")
                              if all(r.get(c) in v for c, v in g.where.items())
                              and all(r.get(c) is not None for c in g.match)), None)
                if taken is not None:
                    out.append(self.test(f"refused: a {singular(g.table or '')} is "
                                         f"{'/'.join(map(str, *g.where.values()))} there", {
                                             **args, **{a: taken[c] for c, a in g.match.items()}},
                                         ok=False, error_kind="tool_error", changes=[]))
            for g in guards:
                p = self.c.param(g.row)
                if p is None or p.ref_table is None:
                    continue
                bad = next((r for r in self.rows(p.ref_table)
                            if r.get(g.column or "") not in g.values), None)
                if bad is not None:
                    out.append(self.test(f"refused: {g.row} with {g.column} "
                                         f"{bad.get(g.column or '')!r}",
                                         {**args, p.name: bad.get(p.ref_column or "")}, ok=False,
                                         error_kind="tool_error", changes=[]))
        return out


def fk_target_of(table: TableSpec, column: str) -> str | None:
    col = next((c for c in table.columns if c.name == column), None)
    return col.foreign_key.split(".")[0] if col is not None and col.foreign_key else None


def _contract_tests(designer: Designer, plan: ToolPlan) -> list[Test]:
    c = plan.contract
    assert c is not None
    t = ComputeTests(designer, plan)
    if c.computation is not None:
        return getattr(t, f"compute_{c.computation}")()
    if c.verb == "read_one":
        return t.read_one_tests()
    if c.verb in ("list", "search"):
        return t.list_tests()
    if c.verb == "create":
        return t.create_tests()
    return t.write_tests()
