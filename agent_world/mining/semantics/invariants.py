"""Cross-table invariants: `derive_invariants` reads them from a schema (a parent held iff a
live child holds it, at most one live record per parent, one record per parent in a state only
one holds (a repository's checked-out branch), a field set only in its state, a time
zone of the row's country), `describe_invariant` says one as a sentence, `spec_invariants`
gives a spec's own, and `_check_invariants` / `invariant_violations` check rows or a database."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.semantics.columns import (
    _containment,
    _fk_target,
    _singular,
    _time_columns,
    time_stem,
)
from agent_world.mining.semantics.lifecycle_rule import (
    _SOFT_END,
    NEGATIVE_ENDS,
    _state_of,
    state_rank,
    status_column,
)
from agent_world.mining.semantics.violations import Violation
from agent_world.mining.semantics.zones import address_country, country_zones

# A parent state that means "held by one live record of a child", with the child nouns that
# hold it: a copy is on loan by a loan, a slot is booked by an appointment, a bike is in use
# by a trip. A parent state without a matching child (a title "checked_out") couples nothing.
_LENDING = frozenset({"loan", "borrowing", "checkout", "lending", "rental"})
_BOOKING = frozenset({"appointment", "booking", "reservation", "visit"})
OCCUPANCY: dict[str, frozenset[str]] = {
    "on_loan": _LENDING, "loaned": _LENDING, "lent": _LENDING, "borrowed": _LENDING,
    "checked_out": _LENDING, "booked": _BOOKING, "reserved": _BOOKING,
    "in_use": frozenset({"trip", "ride", "rental", "session", "lease", "hire", "use"}),
    "rented": frozenset({"rental", "lease", "hire", "trip", "ride"}),
    "charging": frozenset({"session", "charge"}),
    "occupied": frozenset({"stay", "booking", "reservation", "occupancy", "tenancy", "lease",
                           "assignment"}),
    "assigned": frozenset({"assignment"}),
}
# fields named for a state: "<state>_reason", "cancellation_reason", "waived_by", ...
_STATE_FIELD_SUFFIX = ("reason", "by", "by_id", "note", "notes", "comment", "comments")
_NOMINAL = {"cancellation": "cancelled", "rejection": "rejected", "suspension": "suspended",
            "refund": "refunded", "waiver": "waived", "closure": "closed",
            "resolution": "resolved", "denial": "declined", "termination": "terminated"}


def _scheduled(table: TableSpec) -> bool:
    """A record with its own time window (a slot's starts_at/ends_at) is used up by a
    completed booking; a reusable one (a copy, a bike) is freed by the end of its use."""
    groups = {time_stem(c.name) for c in _time_columns(table)}
    return bool(groups & {"start", "starts", "begin", "begins"}) and bool(
        groups & {"end", "ends"})


# the kinds that bound how many live records a parent holds (their surplus ends)
SURPLUS_KINDS = ("capacity", "one_per_parent")


def _one_per_parent(state: str, noun: str) -> bool:
    """A state one record per parent holds: a repository's checked-out branch (git had
    seven checked out at once), an account's current or primary one; a library's copies
    are all checked out at once."""
    return state in ("current", "primary", "default") or \
        state == "checked_out" and noun in ("branch", "worktree")


def holding_states(child_states: list[str], parent: TableSpec) -> list[str]:
    """The child states that hold the parent: every state not yet ended (and states this
    vocabulary does not rank); for a scheduled parent also the ends that used it up."""
    out = []
    for st in child_states:
        rank = state_rank(st)
        if rank != 2:
            out.append(st)
        elif _scheduled(parent) and st not in NEGATIVE_ENDS and st not in _SOFT_END:
            out.append(st)
    return out


def _timezone_column(table: TableSpec) -> ColumnSpec | None:
    return next((c for c in table.columns if c.type == "text" and (
        c.name in ("timezone", "time_zone", "tz", "tz_name", "iana_timezone")
        or c.name.endswith(("_timezone", "_time_zone")))), None)


def derive_invariants(tables: list[TableSpec]) -> list[dict[str, Any]]:
    """The cross-table invariants the schema implies (JSON records for
    ``spec.provenance.stats["invariants"]``; `describe_invariant` reads one as a sentence)."""
    by = {t.name: t for t in tables}
    out: list[dict[str, Any]] = []
    for child in tables:
        cstatus = status_column(child)
        if cstatus is None:
            continue
        noun = _singular(child.name).split("_")[-1]
        for fk in child.columns:
            target = _fk_target(fk)
            if target is None or not _containment(fk) or target[0] == child.name or \
                    target[0] not in by:
                continue
            parent = by[target[0]]
            single = [st for st in cstatus.enum or [] if _one_per_parent(st, noun)]
            if single and len(single) < len(cstatus.enum or []):
                out.append({"kind": "one_per_parent", "table": child.name, "fk": fk.name,
                            "parent": parent.name, "column": cstatus.name,
                            "holding": single, "limit": 1})
            holding = holding_states(list(cstatus.enum or []), parent)
            if not holding or len(holding) == len(cstatus.enum or []):
                continue
            coupled = False
            pstatus = status_column(parent)
            for st in pstatus.enum if pstatus is not None and pstatus.enum else []:
                if noun in OCCUPANCY.get(st, ()):
                    out.append({"kind": "held_iff", "table": parent.name,
                                "column": pstatus.name, "value": st, "child": child.name,
                                "fk": fk.name, "child_column": cstatus.name,
                                "holding": holding})
                    coupled = True
            for c in parent.columns:
                flag = c.name.removeprefix("is_")
                if c.type == "boolean" and noun in OCCUPANCY.get(flag, ()):
                    out.append({"kind": "held_iff", "table": parent.name, "column": c.name,
                                "value": True, "child": child.name, "fk": fk.name,
                                "child_column": cstatus.name, "holding": holding})
                    coupled = True
            if coupled or (_scheduled(parent) and noun in _BOOKING):
                out.append({"kind": "capacity", "table": child.name, "fk": fk.name,
                            "parent": parent.name, "column": cstatus.name,
                            "holding": holding, "limit": 1})
    for t in tables:
        status = status_column(t)
        if status is not None:
            states = list(status.enum or [])
            for c in t.columns:
                if c.primary_key or c is status or c.type in ("date", "datetime") or \
                        not c.nullable:
                    continue
                suffix = next((x for x in _STATE_FIELD_SUFFIX if c.name.endswith("_" + x)),
                              None)
                if suffix is None:
                    continue
                word = c.name[: -len(suffix) - 1]
                word = _NOMINAL.get(word, word)
                found = [st for st in states if st == word or st.endswith("_" + word)
                         or _state_of(word, {st}) == st]
                if found:
                    out.append({"kind": "set_only_in", "table": t.name, "column": c.name,
                                "status_column": status.name, "states": found})
        tz = _timezone_column(t)
        if tz is not None:
            country = next((c.name for c in t.columns if c.type == "text" and c.name in (
                "country", "country_code")), None)
            address = next((c.name for c in t.columns if c.type == "text" and c.name in (
                "address", "street_address", "postal_address")), None)
            if country or address:
                out.append({"kind": "zone_in_country", "table": t.name, "column": tz.name,
                            "country_column": country, "address_column": address})
    return out


def describe_invariant(inv: dict[str, Any]) -> str:
    """One invariant as a sentence a researcher reads."""
    def a(noun: str) -> str:
        noun = _singular(noun).replace("_", " ")
        return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"

    one = a(inv["table"])
    if inv["kind"] == "held_iff":
        child = a(inv["child"])
        held = f"{inv['column']} is {inv['value']!r}" if inv["value"] is not True else \
            f"{inv['column']} is true"
        return (f"{one}'s {held} iff it has {child} in {'|'.join(inv['holding'])} "
                f"({inv['child']}.{inv['fk']})")
    if inv["kind"] in SURPLUS_KINDS:
        return (f"{a(inv['parent'])} holds at most {inv['limit']} "
                f"{_singular(inv['table']).replace('_', ' ')} in "
                f"{'|'.join(inv['holding'])} ({inv['table']}.{inv['fk']})")
    if inv["kind"] == "set_only_in":
        return (f"{one}'s {inv['column']} is set only when its {inv['status_column']} is "
                f"{'|'.join(inv['states'])}")
    src = inv.get("country_column") or f"the country of its {inv.get('address_column')}"
    return f"{one}'s {inv['column']} is a time zone of {src}"


def spec_invariants(spec: EnvSpec) -> list[dict[str, Any]]:
    """The invariants the spec declares (``provenance.stats["invariants"]``), else those its
    schema implies."""
    declared = spec.provenance.stats.get("invariants")
    if isinstance(declared, list):
        return [i for i in declared if isinstance(i, dict) and "kind" in i]
    return derive_invariants(spec.tables)


def _truthy(v: Any) -> bool:
    return v is True or v == 1


def _check_invariants(tables: dict[str, TableSpec], rows: dict[str, list[dict[str, Any]]],
                      invariants: list[dict[str, Any]]) -> list[Violation]:
    out: list[Violation] = []
    for inv in invariants:
        kind, tname = inv.get("kind"), inv.get("table")
        t = tables.get(tname)  # type: ignore[arg-type]
        if t is None:
            continue
        pk = t.primary_key[0]
        text = describe_invariant(inv)
        if kind == "held_iff" or kind in SURPLUS_KINDS:
            child = inv["child"] if kind == "held_iff" else tname
            if child not in tables:
                continue
            holding = set(inv["holding"])
            live: dict[Any, list[Any]] = defaultdict(list)
            cpk = tables[child].primary_key[0]
            for r in rows.get(child, []):
                if r.get(inv["child_column"] if kind == "held_iff" else inv["column"]) in \
                        holding and r.get(inv["fk"]) is not None:
                    live[r[inv["fk"]]].append(r.get(cpk))
            if kind != "held_iff":
                for parent_id, ids in live.items():
                    if len(ids) > inv["limit"]:
                        for rid in sorted(ids, key=str)[inv["limit"]:]:
                            out.append(Violation(
                                "invariant", tname, inv["column"], rid,
                                f"{inv['parent']} {parent_id!r} already has "
                                f"{len(ids) - 1} other live {tname} ({text})"))
                continue
            for r in rows.get(tname, []):
                v = r.get(inv["column"])
                is_held = _truthy(v) if inv["value"] is True else v == inv["value"]
                has_live = bool(live.get(r.get(pk)))
                if is_held and not has_live:
                    out.append(Violation("invariant", tname, inv["column"], r.get(pk),
                                         f"{inv['column']}={v!r} but no {child} in "
                                         f"{'|'.join(inv['holding'])} ({text})"))
                elif has_live and not is_held:
                    out.append(Violation("invariant", tname, inv["column"], r.get(pk),
                                         f"{inv['column']}={v!r} but {child} "
                                         f"{live[r.get(pk)]} hold it ({text})"))
        elif kind == "set_only_in":
            states = set(inv["states"])
            for r in rows.get(tname, []):
                if r.get(inv["column"]) is not None and r.get(inv["status_column"]) not in states:
                    out.append(Violation("invariant", tname, inv["column"], r.get(pk),
                                         f"set while {inv['status_column']}="
                                         f"{r.get(inv['status_column'])!r} ({text})"))
        elif kind == "zone_in_country":
            for r in rows.get(tname, []):
                zone = r.get(inv["column"])
                if not isinstance(zone, str):
                    continue
                cc = r.get(inv["country_column"]) if inv.get("country_column") else None
                if not cc and inv.get("address_column"):
                    cc = address_country(r.get(inv["address_column"]))
                zones = country_zones(cc) if isinstance(cc, str) else ()
                if zones and zone not in zones:
                    out.append(Violation("invariant", tname, inv["column"], r.get(pk),
                                         f"{zone!r} is not a time zone of {cc} ({text})"))
    return out


def invariant_violations(spec: EnvSpec, db_path: str | Path,
                         invariants: list[dict[str, Any]] | None = None) -> list[Violation]:
    """The spec's cross-table invariants checked on a database (an episode's, after writes):
    the rows are read from ``db_path``, not from the spec."""
    invariants = spec_invariants(spec) if invariants is None else invariants
    tables = {t.name: t for t in spec.tables}
    needed = {i.get(k) for i in invariants for k in ("table", "child", "parent")} & tables.keys()
    rows: dict[str, list[dict[str, Any]]] = {}
    conn = sqlite3.connect(f"file:{Path(db_path)}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        for name in needed:
            rows[name] = [dict(r) for r in conn.execute(f'SELECT * FROM "{name}"')]
    finally:
        conn.close()
    return _check_invariants(tables, rows, invariants)
