"""Tests of the write kinds (create, set_status, update, delete): the exact change of each
success and a refusal for each rule (taken values, final and held states, references).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agent_world.design.offline.contracts import final_states
from agent_world.design.offline.plans import ParamPlan, ToolPlan, next_code, pk_column
from agent_world.design.offline.read_expectations import ReadTests
from agent_world.design.offline.seed_rows import Test, _fits, _noun, _unknown, _variant
from agent_world.mining.semantics.zones import known_zones


class Designer(ReadTests):
    """Writes the tests of one environment's plans."""

    def tests(self, plan: ToolPlan) -> list[Test]:
        """The tests of a plan of a plain kind (a contract plan's: expectations.py)."""
        return getattr(self, f"_{plan.kind}")(plan)

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
                    if p.type == "object":  # a JSON column (left out of `rows`): its seed value
                        pk = pk_column(self.table(plan))
                        v = next((r.get(p.column or "") for r in self.spec.rows.get(plan.table, [])
                                  if r.get(pk) == row.get(pk)), None)
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
                elif col.enum and not p.enum:
                    # a column its table checks against a list of values (a firewall rule's
                    # protocol): another of those, never "TCP (edited)"
                    v = new_id = next((e for e in col.enum if e != old), old)
                elif p.type == "string":
                    v = new_id = f"{old} (edited)" if isinstance(old, str) else "edited"
                    if not _fits(p, v):
                        v = new_id = other.get(col.name)
                elif p.type in ("integer", "number"):
                    v = new_id = (old or 0) + (1 if p.type == "integer" else 1.5)
                elif p.type == "object":  # a JSON column (left out of `rows`): another
                    # record's object, as the source's schema shaped it, else a new one
                    seeds = self.spec.rows.get(plan.table, [])
                    mine = next((r.get(col.name) for r in seeds if r.get(pk) == row.get(pk)),
                                None)
                    v = new_id = next((r.get(col.name) for r in seeds
                                       if isinstance(r.get(col.name), dict) and r.get(col.name)
                                       and r.get(col.name) != mine), {"edited": True})
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

    def _delete_args(self, plan: ToolPlan, row: dict[str, Any]) -> dict[str, Any]:
        """The key naming `row`, and what else the source requires said as the row holds it
        (Helm's uninstall_helm_chart(name, namespace): the release's own namespace)."""
        args = self._key_args(plan, row)
        for p in plan.params:
            if p.required and p.name not in args and p.role == "set" and p.column \
                    and _fits(p, row.get(p.column)):
                args[p.name] = row[p.column]
            elif p.required and p.name not in args:
                args[p.name] = self.filler(p)  # a delete reads no more: any value of its type
        return args

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
                                 self._delete_args(plan, free), equals={"deleted": free[pk]},
                                 changes=[{"table": plan.table, "op": "delete",
                                           "key": {pk: free[pk]}}]))
        used = next((r for r in keyed if refs[r[pk]]), None)
        if used is not None:
            out.append(self.test(plan, "referenced record is refused",
                                 self._delete_args(plan, used), ok=False, error_kind="tool_error",
                                 changes=[]))
        holding = next((r for r in keyed if not refs[r[pk]] and r.get(status or "") in live),
                       None)
        if holding is not None:
            out.append(self.test(plan, f"{holding[status]} record is refused",
                                 self._delete_args(plan, holding), ok=False,
                                 error_kind="tool_error", changes=[]))
        out.append(self._unknown_key(plan))
        return out
