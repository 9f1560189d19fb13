"""Tests of a plan rendered from its behaviour contract (`ContractTests`): the success case
with the exact change of every table, one refusal per guard, an unknown record; and the
read_one and listing tests of a contract.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from agent_world.design.offline.contract_schema import link_argument, linked_pk
from agent_world.design.offline.contracts import Contract, ContractParam, Effect, Guard, Value
from agent_world.design.offline.plans import MAX_ROWS, ToolPlan, newest_first, pk_column
from agent_world.design.offline.render_contracts import reach_sql
from agent_world.design.offline.seed_rows import Test, _needle, _noun, _unknown
from agent_world.design.offline.write_expectations import Designer

# what a test passes for a required value a write sets when nothing stored fits: a stand-in
# the test checks is written, no value a request would ask for
STAND_IN_TEXT = "Damaged beyond repair"


# ---- tests from a behaviour contract --------------------------------------------------------------
def _days_after(base: Any, days: int) -> str:
    if isinstance(base, str) and "T" in base:
        return (datetime.fromisoformat(base) + timedelta(days=days)).isoformat(
            timespec="seconds")
    return (date.fromisoformat(str(base)[:10]) + timedelta(days=days)).isoformat()


def _hours_until(at: Any, now: str) -> float:
    if not at:
        return float("inf")
    start = datetime.fromisoformat(str(at)).replace(tzinfo=None)
    return (start - datetime.fromisoformat(now).replace(tzinfo=None)).total_seconds() / 3600


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

    def owed(self, g: Guard, target: dict[str, Any]) -> float:
        """The `sum_at_most` total of `target` (a member's unpaid fines)."""
        pk = linked_pk(self.spec, g.table or "", g.link or "")
        return sum(r.get(g.column or "") or 0 for r in self.rows(g.table or "")
                   if r.get(g.link or "") == target.get(pk)
                   and all(r.get(c) in v for c, v in g.where.items()))

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
        if g.kind == "sum_at_most":
            target = row if g.row == "entity" else argrows.get(g.row)
            return target is not None and self.owed(g, target) <= (g.limit or 0)
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
        if g.kind == "held_for":
            if row.get(g.state or "") not in g.values:
                return True
            holder = argrows.get(g.row)
            p = self.c.param(g.row)
            hpk = pk_column(self.spec.table(p.ref_table)) if p and p.ref_table else "id"
            (st, kept), = g.where.items()
            return holder is not None and any(
                h.get(g.link or "") == row.get(g.path[0]) and h.get(st) in kept
                and h.get(g.column or "") == holder.get(hpk or "id")
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
        if v.source == "notice":
            return v.alt_value if _hours_until(row.get(v.column or ""), self.d.now) < v.hours \
                else v.value
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
            if not all(row.get(col) in vals for col, vals in e.when.items()):
                continue  # the row was not in a state this effect follows from
            t = self.spec.table(e.table)
            tpk = pk_column(t) or "id"
            if e.rows == "late":
                for closed in self.late(e, row):
                    out.append({"table": e.table, "op": "insert",
                                "values": self.charge(e, closed, row, args, argrows)})
                    touched += 1
                continue
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
            elif e.rows == "shared":
                targets = [r for r in self.rows(e.table) if source.get(e.via or "") is not None
                           and r.get(e.link or "") == source.get(e.via or "")]
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
            for col, arg in e.where_row.items():
                p = self.c.param(arg)
                rpk = pk_column(self.spec.table(p.ref_table)) if p and p.ref_table else "id"
                named = (argrows.get(arg) or {}).get(rpk or "id")
                targets = [r for r in targets if named is not None and r.get(col) == named]
            if e.first_by:
                first = e.first_by
                # as SQLite orders: NULLs first, numbers by value, then text
                targets = sorted(targets, key=lambda r: (
                    r.get(first) is not None,
                    (0, r.get(first), "") if isinstance(r.get(first), int | float)
                    else (1, 0, str(r.get(first))), r[tpk]))[:1]
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
            if hit and e.then_entity:  # the tool's own row follows (a copy to the hold shelf)
                then = {k: self.value(v, row, args, argrows) for k, v in e.then_entity.items()}
                entity_values = {**entity_values, **then}
                mine = next((x for x in out if x["table"] == self.c.entity
                             and x["op"] == "update" and x.get("key") == {self.pk: row[self.pk]}),
                            None)
                if mine is not None:
                    mine["values"] = {**mine["values"], **then}
                else:
                    out.append({"table": self.c.entity, "op": "update",
                                "key": {self.pk: row[self.pk]}, "values": then})
        return out, entity_values, touched

    def late(self, e: Effect, row: dict[str, Any]) -> list[dict[str, Any]]:
        """The rows of `e.child` the call closes past their due date (overdue loans)."""
        due = next(v.column for v in e.set.values() if v.source == "accrued") or ""
        return [r for r in self.rows(e.child or "") if r.get(e.link or "") == row[self.pk]
                and all(r.get(col) in vals for col, vals in e.where.items())
                and r.get(due) and str(r.get(due))[:10] < self.today]

    def charge(self, e: Effect, closed: dict[str, Any], row: dict[str, Any],
               args: dict[str, Any], argrows: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """The row a `late` effect inserts for one closed row (a fine for an overdue loan)."""
        values = {}
        for k, v in e.set.items():
            if v.source == "child":
                values[k] = closed.get(v.column or "")
            elif v.source == "accrued":
                days = (date.fromisoformat(self.today) -
                        date.fromisoformat(str(closed.get(v.column or ""))[:10])).days
                amount = round(v.value * max(days, 0), 2)
                cap = self.reach(e.child or "", closed, v.alt_column) if v.alt_column else None
                values[k] = min(amount, cap) if isinstance(cap, int | float) and cap > 0 \
                    else amount
            else:
                values[k] = self.value(v, row, args, argrows)
        return values

    def reach(self, table: str, row: dict[str, Any], column: str, depth: int = 3) -> Any:
        """`column` of `row` or of the first record its references lead to, as the rendered
        query finds it (`render_contracts.reach_sql`)."""
        if column in row:
            return row[column]
        for c in self.spec.table(table).columns:
            if not c.foreign_key:
                continue
            parent, ppk = c.foreign_key.split(".")
            hit = next((r for r in self.rows(parent) if r.get(ppk) == row.get(c.name)), None)
            if any(x.name == column for x in self.spec.table(parent).columns):
                return hit.get(column) if hit else None
            if depth > 1 and reach_sql(self.spec, parent, column, depth - 1) is not None:
                return self.reach(parent, hit, column, depth - 1) if hit else None
        return None

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
                args[p.name] = p.enum[0] if p.enum else {
                    "string": STAND_IN_TEXT, "boolean": True, "number": 1.0,
                    "object": {}, "array": ["x"]}.get(p.type, 1)
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
                elif g.kind == "sum_at_most" and g.row != "entity":
                    p = self.c.param(g.row)
                    others = [x for x in self.c.guards if x is not g and x.row == g.row]
                    bad = next((r for r in self.rows(p.ref_table or "")
                                if r.get(p.ref_column or "") is not None
                                and not self.guard_ok(g, good, args, {g.row: r})
                                and all(self.guard_ok(x, good, args, {g.row: r})
                                        for x in others)), None) if p else None
                    if bad is not None:
                        out.append(self.test(f"refused: {g.message}",
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

    def _said(self, eqs: list[ContractParam], values: tuple[Any, ...]
              ) -> tuple[dict[str, Any], dict[str, set[Any]]] | None:
        """The arguments that select the records whose `eqs` columns hold `values`, and the
        values of those columns each admits: an equality filter says its value, a reference
        (GitLab's project_id) the referenced record's `ref_column`, which every record of
        that value names (None where nothing can say it)."""
        args: dict[str, Any] = {}
        scope: dict[str, set[Any]] = {}
        for q, v in zip(eqs, values, strict=True):
            if q.role == "eq":
                args[q.name], scope[q.column or ""] = v, {v}
                continue
            ref = self.spec.table(q.ref_table or "")
            rpk = next((c.name for c in ref.columns if c.primary_key), None)
            target = next((t for t in self.rows(ref.name) if t.get(rpk or "") == v), None)
            if rpk is None or target is None or target.get(q.ref_column or "") is None:
                return None
            said = target[q.ref_column or ""]
            args[q.name] = said
            scope[q.column or ""] = {t[rpk] for t in self.rows(ref.name)
                                     if t.get(q.ref_column or "") == said}
        return args, scope

    def _commonest_link(self, q: ContractParam, inside: set[Any] | None
                        ) -> tuple[Any, set[Any]] | None:
        """The value of a link (`child_eq`) that most records of `inside` (None: any) are
        linked to, the first of a tie, and every record linked to it; None if none is."""
        via = self.rows(q.via_table or "")
        values = [r.get(q.via_column or "") for r in via if r.get(q.via_column or "") is not None
                  and (inside is None or r.get(q.via_link or "") in inside)]
        if not values:
            return None
        v = max(dict.fromkeys(values), key=values.count)
        return v, {r.get(q.via_link) for r in via if r.get(q.via_column or "") == v}

    def list_tests(self) -> list[Test]:
        rows = self.rows(self.c.entity)
        limit = next((p for p in self.c.params if p.role == "limit"), None)
        cap = (limit.default if limit else MAX_ROWS) or MAX_ROWS

        order = rows[::-1] if newest_first(self.c.tool, self.c.description) else rows
        scope: dict[str, set[Any]] = {}  # column: its values, what the required filters say

        def ids(pred: Any, n: int = cap) -> list[Any]:
            return [r[self.pk] for r in order if pred(r)
                    and all(r.get(c) in vs for c, vs in scope.items())][:n]

        out: list[Test] = []
        for p in self.c.params:
            # what else the tool requires (Codacy's provider and organization beside the
            # filter under test): an argument it ignores takes any value of its type, an
            # equality filter the values of the commonest such record; else no test
            others = [q for q in self.c.params if q.required and q.name != p.name]
            eqs = [q for q in others if q.role in ("eq", "ref") and q.column
                   and not q.negate and not q.closure]
            links = [q for q in others if q.role == "child_eq" and q.via_table]
            if any(q.role != "ignore" and q not in eqs and q not in links for q in others):
                continue
            base = {q.name: self.d.filler(q) for q in others if q.role == "ignore"}
            scope = {}
            if eqs:
                # the values records hold (a member of no project says none)
                keyed = [(k, r) for r in rows
                         if None not in (k := tuple(r.get(q.column or "") for q in eqs))]
                if not keyed:
                    continue
                keys = [k for k, _ in keyed]
                common = max(dict.fromkeys(keys), key=keys.count)  # the first of a tie
                if p.role == "child_eq":
                    # where no record of the commonest project links to a user, the
                    # commonest of those that do: a filter under test that can find one
                    linked = {r.get(p.via_link) for r in self.rows(p.via_table or "")
                              if r.get(p.via_column or "") is not None}
                    hits = [k for k, r in keyed if r[self.pk] in linked]
                    if hits and common not in hits:
                        common = max(dict.fromkeys(hits), key=hits.count)
                said = self._said(eqs, common)
                if said is None:
                    continue
                base |= said[0]
                scope = said[1]
            linked = True
            for q in links:  # Codacy's organization and repository: records linked to one
                inside = set(ids(lambda r: True, len(rows)))
                found = self._commonest_link(q, inside)
                said = None if found is None else link_argument(self.rows, q, found[0])
                if found is None or said is None:
                    linked = False  # a required link no record of the rest holds
                    break
                base[q.name] = said
                scope[self.pk] = (inside - found[1]) if q.negate else (found[1] & inside)
            if not linked:
                continue
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
                    out.append(self.test(f"finds {needle!r} in the {col}", base | {p.name: needle},
                                         pluck=self.pk, equals=ids(lambda r, n=needle, cs=p.columns: any(
                                             isinstance(r.get(c), str) and n in r[c].lower()
                                             for c in cs))))
            elif p.role == "child_eq":
                # a value some record the required filters select links to: a test that
                # expects nothing passes a tool that returns nothing
                found = self._commonest_link(
                    p, set(ids(lambda r: True, len(rows))) if scope else None)
                said = None if found is None else link_argument(self.rows, p, found[0])
                if found is not None and said is not None:
                    owners = found[1]
                    out.append(self.test(f"filters by {p.name}", base | {p.name: said},
                                         pluck=self.pk, equals=ids(
                                             lambda r, o=owners, n=p.negate:
                                             (r[self.pk] in o) is not n)))
            elif p.role == "child_state":
                owners = {r.get(p.via_link) for r in self.rows(p.via_table or "")
                          if r.get(p.via_column or "") == p.via_value}
                for flag in (True, False):
                    out.append(self.test(f"{p.name} = {flag}", base | {p.name: flag}, pluck=self.pk,
                                         equals=ids(lambda r, o=owners, f=flag:
                                                    (r[self.pk] in o) is f)))
        return out
