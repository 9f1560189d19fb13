"""Repair of semantic violations without inventing meaning (`repair_semantics`): route
columns, time order, lifecycle stamps, types, enums, formats, duplicates and the cross-table
invariants (surplus live records end, held states follow their records: `free_value`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.semantics.checker import check_semantics
from agent_world.mining.semantics.columns import (
    _as_time,
    _before,
    _containment,
    _fk_target,
    _time_columns,
)
from agent_world.mining.semantics.invariants import SURPLUS_KINDS, _scheduled, spec_invariants
from agent_world.mining.semantics.lifecycle_rule import _SOFT_END, NEGATIVE_ENDS, state_rank
from agent_world.mining.semantics.routes import fk_routes
from agent_world.mining.semantics.times import _group, time_pairs
from agent_world.mining.semantics.values import _type_ok
from agent_world.mining.semantics.violations import Violation
from agent_world.mining.semantics.zones import address_country, country_zones


def _coerce(ctype: str, v: Any) -> tuple[bool, Any]:
    """(ok, value) converting a value to a column type where that is unambiguous."""
    if _type_ok(ctype, v):
        return True, v
    try:
        if ctype == "integer" and isinstance(v, str | float) and float(v) == int(float(v)):
            return True, int(float(v))
        if ctype == "real" and isinstance(v, str):
            return True, float(v)
        if ctype == "boolean" and isinstance(v, str) and v.lower() in (
                "true", "false", "yes", "no", "1", "0"):
            return True, v.lower() in ("true", "yes", "1")
        if ctype == "date" and isinstance(v, str) and _as_time(v[:10]) is not None:
            return True, v[:10]
        if ctype == "datetime" and isinstance(v, str) and len(v) == 10 and _as_time(v):
            return True, v + "T00:00:00"
        if ctype == "text" and isinstance(v, int | float | bool):
            return True, str(v)
    except (TypeError, ValueError):
        pass
    return False, v


def _like(value: Any, column: ColumnSpec) -> Any:
    """A time value in the column's own form (date or datetime)."""
    if not isinstance(value, str):
        return value
    if column.type == "date":
        return value[:10]
    return value if len(value) > 10 else value + "T00:00:00"


def repair_semantics(spec: EnvSpec, hints: dict[str, dict[str, dict[str, Any]]] | None = None,
                     passes: int = 4) -> tuple[EnvSpec, list[str], list[Violation]]:
    """Repair what can be repaired without inventing meaning: route columns take the value
    their route fixes, later times move up to the earlier ones, missing lifecycle stamps are
    set and premature ones cleared, values are coerced to their type, out-of-enum, malformed
    or duplicate values in nullable columns become NULL. Returns (repaired copy, what was
    done, what is left)."""
    if hints is None:
        hints = spec.provenance.stats.get("field_hints") or {}
    spec = spec.model_copy(deep=True)
    done: Counter[str] = Counter()
    by = {t.name: t for t in spec.tables}
    left = check_semantics(spec, hints)
    for _ in range(passes):
        if not left:
            break
        index = {t.name: {r.get(t.primary_key[0]): r for r in spec.rows.get(t.name, [])}
                 for t in spec.tables if len(t.primary_key) == 1}
        for v in left:
            t = by[v.table]
            row = index.get(v.table, {}).get(v.row) if v.row is not None else None
            if v.rule == "type" and row is None and v.column in {c.name for c in t.columns}:
                col = t.column(v.column)
                declared = hints.get(v.table, {}).get(v.column, {})
                want = {"boolean": "boolean", "integer": "integer", "number": "real"}.get(
                    declared.get("type"), {"date": "date", "date-time": "datetime"}.get(
                        declared.get("format")))
                rows = spec.rows.get(v.table, [])
                if want and all(_coerce(want, r.get(v.column))[0] or r.get(v.column) is None
                                for r in rows):
                    col.type = want  # type: ignore[assignment]
                    for r in rows:
                        r[v.column] = _coerce(want, r.get(v.column))[1]
                    done["type"] += 1
                continue
            if row is None:
                continue
            col = t.column(v.column) if v.column in {c.name for c in t.columns} else None
            if v.rule == "fk_route" and col is None and "," in v.column:
                if _repair_siblings(spec, t, row, v.column, index):
                    done["fk_route"] += 1
            elif v.rule == "fk_route" and col is not None:
                r = next((r for r in fk_routes(spec.tables) if r.table == v.table
                          and r.kind == "via" and r.column == v.column), None)
                if r is not None:
                    parent = index.get(_fk_target(t.column(r.via))[0], {}).get(  # type: ignore
                        row.get(r.via))
                    if parent is not None and (parent.get(r.parent_column) is not None
                                               or col.nullable):
                        row[v.column] = parent.get(r.parent_column)
                        done["fk_route"] += 1
                        if col.type in ("date", "datetime") and row[v.column] is not None:
                            _created_by(t, row, row[v.column])
                    elif parent is not None and row.get(v.column) is not None:
                        # the parent names none, and the column must name one: another parent
                        # on the route, one that names this row's (a monday upload's column
                        # of its own item)
                        ptable, pk = _fk_target(t.column(r.via))  # type: ignore[misc]
                        other = next((p for p in spec.rows.get(ptable, [])
                                      if p.get(r.parent_column) == row[v.column]), None)
                        if other is not None:
                            row[r.via] = other.get(pk)
                            done["fk_route"] += 1
            elif v.rule == "time_order" and col is not None:
                floor = _time_floor(spec, t, row, v.column, index)
                if "after the clock" in v.message:
                    row[v.column] = _like(spec.clock_start, col)
                    done["time_order"] += 1
                elif floor is not None:
                    row[v.column] = _like(floor, col)
                    done["time_order"] += 1
            elif v.rule == "lifecycle" and col is not None:
                if "is not set" in v.message:
                    times = [row.get(c.name) for c in _time_columns(t)
                             if isinstance(row.get(c.name), str)]
                    if times:
                        row[v.column] = _like(max(times), col)
                        done["lifecycle"] += 1
                elif col.nullable:
                    row[v.column] = None
                    done["lifecycle"] += 1
            elif v.rule == "type" and col is not None:
                ok, value = _coerce(col.type, row.get(v.column))
                if ok or col.nullable:
                    row[v.column] = value if ok else None
                    done["type"] += 1
            elif v.rule in ("enum", "format", "range") and col is not None and col.nullable:
                row[v.column] = None
                done[v.rule] += 1
            elif v.rule == "enum" and col is not None:
                # a required value: the first state both the column and the source allow
                declared = hints.get(v.table, {}).get(v.column, {}).get("enum") or []
                allowed = [str(x) for x in declared if not col.enum or str(x) in col.enum] \
                    or list(col.enum or [])
                if allowed:
                    row[v.column] = allowed[0]
                    done["enum"] += 1
            elif v.rule == "unique" and col is not None and col.nullable:
                row[v.column] = None
                done["unique"] += 1
        if any(v.rule == "invariant" for v in left):
            done["invariant"] += _repair_invariants(spec, index, left)
        left = check_semantics(spec, hints)
    notes = [f"repaired {n} {rule} violation(s)" for rule, n in done.items()]
    return spec, notes, left


def _repair_siblings(spec: EnvSpec, t: TableSpec, row: dict[str, Any], columns: str,
                     index: dict[str, dict[Any, dict[str, Any]]]) -> bool:
    """Two references of a row whose records lead to different containers (a monday upload's
    asset of one item, its column of another): the first is moved to a record of the other's
    container, else the second to one of the first's. False when neither has such a record."""
    first, second = columns.split(",", 1)
    r = next((r for r in fk_routes(spec.tables) if r.table == t.name and r.kind == "siblings"
              and {r.column, r.via} == {first, second}), None)
    if r is None:
        return False
    for move, keep in ((first, second), (second, first)):
        kept_target, move_target = _fk_target(t.column(keep)), _fk_target(t.column(move))
        if kept_target is None or move_target is None:
            continue
        kept = index.get(kept_target[0], {}).get(row.get(keep))
        if kept is None:
            continue
        ptable, pk = move_target
        other = next((p for p in spec.rows.get(ptable, [])
                      if p.get(r.parent_column) == kept.get(r.parent_column)), None)
        if other is not None:
            row[move] = other.get(pk)
            return True
    return False


def _created_by(t: TableSpec, row: dict[str, Any], start: str) -> None:
    """A copied start fixed, the row's creation times move back to it where they were later
    (a booking is made before the slot it books starts)."""
    for c in _time_columns(t):
        v = row.get(c.name)
        if _group(c.name) == "create" and isinstance(v, str) and _as_time(v) is not None and \
                _as_time(start) is not None and _before(_as_time(start), _as_time(v)):
            row[c.name] = _like(start, c)


def _end_state(states: list[str], holding: set[str], scheduled: bool) -> str | None:
    """The state a surplus live record is moved to: a double booking is cancelled, a second
    loan of one copy was returned (the ordinary end of a reusable thing's use); else any
    state that does not hold."""
    free = [st for st in states if st not in holding]
    negative = [st for st in free if st in NEGATIVE_ENDS]
    ordinary = [st for st in free if state_rank(st) == 2 and st not in NEGATIVE_ENDS
                and st not in _SOFT_END]
    for pick in ((negative, ordinary) if scheduled else (ordinary, negative)) + (free,):
        if pick:
            return pick[0]
    return None


def free_value(column: ColumnSpec, held: Any) -> Any:
    """The value of a parent no live record holds: false, or its first state that is not the
    held one (``available``, ``published``)."""
    if held is True:
        return False
    states = [st for st in column.enum or [] if st != held]
    initial = [st for st in states if state_rank(st) == 0]
    return (initial or states or [None])[0]


def _repair_invariants(spec: EnvSpec, index: dict[str, dict[Any, dict[str, Any]]],
                       found: list[Violation]) -> int:
    """Make the rows keep the spec's invariants: surplus live records of a parent end
    (cancelled where possible; their lifecycle stamps follow on the next pass), a parent's
    held state follows its live records, a state's field is cleared outside that state, a
    time zone becomes one of the row's country."""
    by = {t.name: t for t in spec.tables}
    bad = {(v.table, v.column, v.row) for v in found if v.rule == "invariant"}
    fixed = 0
    invariants = spec_invariants(spec)
    # a parent's surplus records end first
    for inv in sorted(invariants, key=lambda i: i["kind"] not in SURPLUS_KINDS):
        t = by.get(inv.get("table", ""))
        if t is None:
            continue
        rows = index.get(t.name, {})
        if inv["kind"] in SURPLUS_KINDS:
            holding = set(inv["holding"])
            col = t.column(inv["column"])
            parent = by.get(inv.get("parent", ""))
            end = _end_state(list(col.enum or []), holding,
                             parent is not None and _scheduled(parent))
            for rid in [r for (tb, c, r) in bad if tb == t.name and c == inv["column"]]:
                row = rows.get(rid)
                if row is not None and end is not None and row.get(inv["column"]) in holding:
                    row[inv["column"]] = end
                    fixed += 1
        elif inv["kind"] == "held_iff":
            child = inv["child"]
            holding = set(inv["holding"])
            live = {r.get(inv["fk"]) for r in spec.rows.get(child, [])
                    if r.get(inv["child_column"]) in holding}
            col = t.column(inv["column"])
            for rid in [r for (tb, c, r) in bad if tb == t.name and c == inv["column"]]:
                row = rows.get(rid)
                if row is None:
                    continue
                row[inv["column"]] = inv["value"] if rid in live else \
                    free_value(col, inv["value"])
                fixed += 1
        elif inv["kind"] == "set_only_in" and t.column(inv["column"]).nullable:
            for rid in [r for (tb, c, r) in bad if tb == t.name and c == inv["column"]]:
                if rid in rows:
                    rows[rid][inv["column"]] = None
                    fixed += 1
        elif inv["kind"] == "zone_in_country":
            for rid in [r for (tb, c, r) in bad if tb == t.name and c == inv["column"]]:
                row = rows.get(rid)
                if row is None:
                    continue
                cc = row.get(inv["country_column"]) if inv.get("country_column") else None
                cc = cc or address_country(row.get(inv.get("address_column") or ""))
                zones = country_zones(cc) if isinstance(cc, str) else ()
                if zones:
                    row[inv["column"]] = zones[(rid if isinstance(rid, int) else 0)
                                               % min(3, len(zones))]
                    fixed += 1
    return fixed


def _time_floor(spec: EnvSpec, t: TableSpec, row: dict[str, Any], column: str,
                index: dict[str, dict[Any, dict[str, Any]]]) -> str | None:
    """The latest value `column` must not precede: earlier lifecycle columns of the row and the
    creation of required parents."""
    vals = [row.get(a) for a, b in time_pairs(t) if b == column and isinstance(row.get(a), str)]
    if column == "created_at":
        for c in t.columns:
            if c.foreign_key and (not c.nullable or _containment(c)) and \
                    _fk_target(c)[0] != t.name:  # type: ignore[index]
                parent = index.get(_fk_target(c)[0], {}).get(row.get(c.name))  # type: ignore
                if parent and isinstance(parent.get("created_at"), str):
                    vals.append(parent["created_at"])
    vals = [v for v in vals if _as_time(v) is not None]
    if not vals:
        return None
    return max(vals, key=lambda v: (v if len(v) > 10 else v + "T00:00:00"))
