"""The time_order rule: the lifecycle group of a time column (birth, create, start, end, due,
later), the (earlier, later) column pairs a table's lifecycle orders, and `_check_times`."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import TableSpec
from agent_world.mining.semantics.columns import (
    _as_time,
    _before,
    _containment,
    _fk_target,
    _time_columns,
    time_stem,
)
from agent_world.mining.semantics.violations import Violation

BIRTH = frozenset({"birth", "dob", "birthday", "born", "date_of_birth"})
CREATE = frozenset({
    "created", "registered", "joined", "placed", "booked", "requested", "submitted", "ordered",
    "opened", "reported", "signed_up", "enrolled", "applied", "uploaded", "posted", "filed",
    "added", "committed", "authored", "recorded", "logged", "fetched", "received", "tagged",
    "changed", "executed", "run", "converted", "staged", "written", "inserted", "detected",
    "observed", "captured", "scanned", "noticed",
})
START = frozenset({
    "start", "starts", "started", "begin", "begins", "checked_out", "check_out", "departure",
    "departs", "shipped", "approved", "confirmed", "issued", "dispatched", "picked_up",
    "borrowed", "lent", "loaned", "activated", "valid_from", "effective",
})
END = frozenset({
    "end", "ends", "ended", "returned", "completed", "closed", "resolved", "delivered",
    "finished", "arrival", "arrives", "collected", "fulfilled", "settled",
})
DUE = frozenset({"due", "deadline", "expires", "expiry", "expiration", "until",
                 "ready_until", "valid_until", "expected_return"})
LATER = frozenset({
    "updated", "modified", "cancelled", "canceled", "deleted", "archived", "revoked", "paid",
    "waived", "refunded", "rejected", "checked_in", "check_in", "last_seen", "last_login",
    "last_modified", "suspended", "retired", "rescheduled",
}) | START | END | DUE


def time_group(name: str) -> str | None:
    """The lifecycle group of a time column: birth, create, start, end, due, later or None."""
    return _group(name)


@lru_cache(maxsize=4096)
def _group(name: str) -> str | None:
    stem = time_stem(name)
    words = stem.split("_")
    for group, vocab in (("birth", BIRTH), ("create", CREATE), ("start", START),
                         ("end", END), ("due", DUE)):
        if stem in vocab or words[-1] in vocab or words[0] in vocab:
            return group
    if stem in LATER or words[0] in LATER or words[-1] in LATER:
        return "later"
    return None


def time_pairs(table: TableSpec) -> list[tuple[str, str]]:
    """(earlier, later) column pairs the lifecycle orders."""
    cols = _time_columns(table)
    groups = {c.name: _group(c.name) for c in cols}
    order = {("birth", "create"), ("birth", "start"), ("birth", "end"), ("birth", "later"),
             ("create", "later"), ("create", "start"), ("create", "end"), ("create", "due"),
             ("start", "end"), ("start", "due")}
    pairs = []
    for a in cols:
        for b in cols:
            if a is b:
                continue
            if (groups[a.name], groups[b.name]) in order:
                pairs.append((a.name, b.name))
    return pairs


def _check_times(spec: EnvSpec, index: dict[str, dict[Any, dict[str, Any]]]) -> list[Violation]:
    out: list[Violation] = []
    clock = datetime.fromisoformat(spec.clock_start) if spec.clock_start else None
    for t in spec.tables:
        pk = t.primary_key[0]
        pairs = time_pairs(t)
        created = [c.name for c in _time_columns(t) if _group(c.name) == "create"]
        # the parents a record requires or belongs to exist before it; role pointers (a
        # branch's head commit) may point at newer records
        parents = [(c.name, _fk_target(c)[0]) for c in t.columns  # type: ignore[index]
                   if c.foreign_key and (not c.nullable or _containment(c))
                   and _fk_target(c)[0] != t.name]  # type: ignore[index]
        for row in spec.rows.get(t.name, []):
            times = {c.name: _as_time(row.get(c.name)) for c in _time_columns(t)}
            for a, b in pairs:
                ta, tb = times.get(a), times.get(b)
                if ta is not None and tb is not None and not _before(ta, tb):
                    out.append(Violation("time_order", t.name, b, row.get(pk),
                                         f"{b}={row[b]} is before {a}={row[a]}"))
            for c in created:
                tc = times.get(c)
                if clock is not None and tc is not None and not _before(tc, clock):
                    out.append(Violation("time_order", t.name, c, row.get(pk),
                                         f"{c}={row[c]} is after the clock {spec.clock_start}"))
            if "created_at" in times and times["created_at"] is not None:
                for fk, ptable in parents:
                    parent = index.get(ptable, {}).get(row.get(fk))
                    pt = _as_time(parent.get("created_at")) if parent else None
                    if pt is not None and not _before(pt, times["created_at"]):  # type: ignore
                        out.append(Violation(
                            "time_order", t.name, "created_at", row.get(pk),
                            f"created_at={row['created_at']} is before its {ptable} row "
                            f"{row.get(fk)!r} was created ({parent['created_at']})"))
    return out
