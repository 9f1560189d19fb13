"""Semantic validation of a mined database: do the rows mean what the source says?

`validate_database` (miner) proves a database *builds*; `check_semantics` proves it makes
sense. Rules, each reported as a `Violation` with the offending table, column and row id:

* ``fk_route`` - foreign-key routes agree. When a table reaches the same parent twice, once
  directly and once through the parent it belongs to (an FK named after its table) that
  carries the same column
  (``appointments.clinician_id`` and ``appointments.slot_id -> slots.clinician_id``), both
  routes name the same row; two parents of one row that both belong to a container
  (``branch_commits``: its branch and its commit each have a ``repository_id``) belong to the
  same one; a self reference stays inside its container (a base branch is in its own
  repository).
* ``time_order`` - time columns follow one lifecycle: birth before creation; creation before
  every later event (updated, cancelled, started, due, ...); start before end (checked out
  before returned, starts before ends); start before due; records are not created after the
  episode clock; a record is not created before a parent it requires.
* ``lifecycle`` - the status agrees with its timestamps: a row in state S has ``S_at`` set;
  a row whose ``S_at`` is set has reached at least S (a loan with ``returned_at`` set is not
  ``active``) and did not end in another terminal state.
* ``enum`` - values within the column's enum and within the enum the source declared.
* ``type`` - values have the column's type; a column keeps the type the source declared
  (a boolean field is not stored as text).
* ``format`` - values match the declared format (email, uri, date, date-time, uuid, time,
  ipv4), pattern and length.
* ``range`` - values within the declared minimum/maximum.
* ``unique`` - unique columns, declared-unique fields and ``unique_together`` groups hold
  no duplicates.
* ``invariant`` - cross-table invariants (`derive_invariants`, declared in
  ``spec.provenance.stats["invariants"]``): a parent is in its held state exactly when a live
  record of the child that holds it exists (a copy is ``on_loan`` iff it has an active loan, a
  slot is booked iff it has a live appointment); a parent holds at most one live record (a
  slot, one live appointment); a field named for a state is set only in that state (a fine's
  ``waived_reason``); a time zone belongs to the row's country (its ``country`` column or the
  country of its postal address). `invariant_violations(spec, db_path)` checks a database
  after writes.

Declared facts come from the field hints the miner stores in
``spec.provenance.stats["field_hints"]`` (``{table: {column: {"type", "format", "enum",
"minimum", "maximum", "unique", ...}}}``); pass ``hints=`` to check against others.
"""

from __future__ import annotations

import json
import re
import sqlite3
import uuid as _uuid
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from faker.providers.address.en_US import Provider as _UsAddress
from faker.providers.geo import Provider as _Geo

from agent_world.envs.spec import ColumnSpec, EnvSpec, TableSpec

__all__ = [
    "NEGATIVE_ENDS", "RULES", "Route", "Violation", "address_country", "check_semantics",
    "country_zones", "declared_type_ok", "known_zones", "zone_offsets", "derive_invariants", "describe_invariant",
    "fk_routes", "holding_states", "invariant_violations", "lifecycle_columns",
    "repair_semantics", "spec_invariants", "state_rank", "summarize", "time_group",
    "time_pairs", "time_stem",
]

RULES = ("fk_route", "time_order", "lifecycle", "enum", "type", "format", "range", "unique",
         "invariant")


@dataclass(frozen=True)
class Violation:
    rule: str
    table: str
    column: str
    row: Any  # the row's primary key (None: the schema itself)
    message: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        where = f"{self.table}.{self.column}" + (f" (row {self.row})" if self.row is not None
                                                 else "")
        return f"[{self.rule}] {where}: {self.message}"


def summarize(violations: list[Violation]) -> dict[str, int]:
    """Violations per rule (every rule present, zero included)."""
    counts = Counter(v.rule for v in violations)
    return {r: counts.get(r, 0) for r in RULES}


# ============================================================================================
# foreign-key routes
# ============================================================================================


@dataclass(frozen=True)
class Route:
    """``table.column`` must equal ``parent(table.via).parent_column`` (kind ``via``), or the
    parents of two columns must share ``parent_column`` (kind ``siblings``: ``column`` and
    ``via`` are the two FK columns of ``table``)."""

    kind: str  # via | siblings
    table: str
    column: str
    via: str
    parent_column: str


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _fk_target(col: ColumnSpec) -> tuple[str, str] | None:
    if not col.foreign_key:
        return None
    t, c = col.foreign_key.split(".")
    return t, c


def _containment(col: ColumnSpec) -> bool:
    """An FK named after its target (``repository_id`` -> repositories, ``loan_id`` -> loans):
    the record belongs to that parent. Role-named links (``changed_by_id``,
    ``home_branch_id``) are associations, not containment."""
    target = _fk_target(col)
    return bool(target) and col.name == f"{_singular(target[0])}_id"


# columns a contained record shares with its container when both have them: scheduled times
# and identifiers of the thing itself (not created_at, status or names, which are each row's own)
_SCHEDULE_STEMS = frozenset({"start", "starts", "end", "ends", "begin", "begins", "scheduled",
                             "scheduled_for"})
_IDENTITY = frozenset({"url", "uri", "isbn", "sku", "barcode", "mrn"})


def _copied(name: str) -> bool:
    return time_stem(name) in _SCHEDULE_STEMS or name in _IDENTITY


def fk_routes(tables: list[TableSpec]) -> list[Route]:
    """Every route the rows must agree on (see the module docstring)."""
    by = {t.name: t for t in tables}
    routes: list[Route] = []
    for t in tables:
        fks = [c for c in t.columns if c.foreign_key]
        for via in fks:
            ptable = _fk_target(via)[0]  # type: ignore[index]
            parent = by.get(ptable)
            if parent is None:
                continue
            pcols = {c.name: c for c in parent.columns}
            for col in fks:
                if col is via:
                    continue
                pc = pcols.get(col.name)
                if pc is None or pc.foreign_key != col.foreign_key:
                    continue
                if ptable == t.name or not _containment(via):
                    if not (_containment(col) and _containment(pc)):
                        continue  # a role link (an actor, a base branch) only keeps the
                        # record inside its container (a base branch in its own repository)
                routes.append(Route("via", t.name, col.name, via.name, col.name))
            if ptable != t.name and _containment(via):
                # a value the record copies from its container (an appointment's start is its
                # slot's, a fetch's URL its page's)
                for col in t.columns:
                    pc = pcols.get(col.name)
                    if pc is not None and not col.foreign_key and not col.primary_key and \
                            pc.type == col.type and _copied(col.name):
                        routes.append(Route("via", t.name, col.name, via.name, col.name))
        # two parents inside the same container
        for i, a in enumerate(fks):
            for b in fks[i + 1:]:
                ta, tb = _fk_target(a)[0], _fk_target(b)[0]  # type: ignore[index]
                if ta == tb or t.name in (ta, tb) or ta not in by or tb not in by:
                    continue
                acols = {c.name: c for c in by[ta].columns if _containment(c)}
                for c in by[tb].columns:
                    other = acols.get(c.name)
                    if other is not None and _containment(c) and \
                            other.foreign_key == c.foreign_key and \
                            c.name not in {x.name for x in fks}:
                        routes.append(Route("siblings", t.name, a.name, b.name, c.name))
    return routes


def _check_routes(spec: EnvSpec, index: dict[str, dict[Any, dict[str, Any]]]) -> list[Violation]:
    out: list[Violation] = []
    by = {t.name: t for t in spec.tables}
    for r in fk_routes(spec.tables):
        t = by[r.table]
        pk = t.primary_key[0]
        via_parent = _fk_target(t.column(r.via))[0]  # type: ignore[index]
        for row in spec.rows.get(r.table, []):
            if r.kind == "via":
                v, p = row.get(r.column), row.get(r.via)
                if v is None or p is None:
                    continue
                parent = index.get(via_parent, {}).get(p)
                if parent is None or parent.get(r.parent_column) is None:
                    continue
                if parent[r.parent_column] != v:
                    out.append(Violation(
                        "fk_route", r.table, r.column, row.get(pk),
                        f"{r.column}={v!r} but its {r.via} ({via_parent} {p!r}) has "
                        f"{r.parent_column}={parent[r.parent_column]!r}"))
            else:
                a_parent = _fk_target(t.column(r.column))[0]  # type: ignore[index]
                pa = index.get(a_parent, {}).get(row.get(r.column))
                pb = index.get(via_parent, {}).get(row.get(r.via))
                if pa is None or pb is None:
                    continue
                va, vb = pa.get(r.parent_column), pb.get(r.parent_column)
                if va is not None and vb is not None and va != vb:
                    out.append(Violation(
                        "fk_route", r.table, f"{r.column},{r.via}", row.get(pk),
                        f"its {a_parent} row has {r.parent_column}={va!r} but its "
                        f"{via_parent} row has {r.parent_column}={vb!r}"))
    return out


# ============================================================================================
# time order
# ============================================================================================

BIRTH = frozenset({"birth", "dob", "birthday", "born", "date_of_birth"})
CREATE = frozenset({
    "created", "registered", "joined", "placed", "booked", "requested", "submitted", "ordered",
    "opened", "reported", "signed_up", "enrolled", "applied", "uploaded", "posted", "filed",
    "added", "committed", "authored", "recorded", "logged", "fetched", "received", "tagged",
    "changed", "executed", "run", "converted", "staged", "written", "inserted",
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

_STEM_SUFFIX = re.compile(r"_(at|on|date|time|ts|timestamp|datetime|day)$")


@lru_cache(maxsize=4096)
def time_stem(name: str) -> str:
    """``checked_out_at`` -> ``checked_out``; ``starts_at`` -> ``starts``; ``due_on`` -> ``due``."""
    n = name.lower()
    stem = _STEM_SUFFIX.sub("", n)
    return stem or n


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


def _time_columns(table: TableSpec) -> list[ColumnSpec]:
    return [c for c in table.columns if c.type in ("date", "datetime")]


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


def _as_time(v: Any) -> datetime | date | None:
    if not isinstance(v, str) or len(v) < 10:
        return None
    try:
        if len(v) == 10:
            return date.fromisoformat(v)
        return datetime.fromisoformat(v.replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        return None


def _before(a: datetime | date, b: datetime | date) -> bool:
    """a <= b, comparing by day when either is a date."""
    if isinstance(a, datetime) and isinstance(b, datetime):
        return a <= b
    da = a.date() if isinstance(a, datetime) else a
    db = b.date() if isinstance(b, datetime) else b
    return da <= db


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


# ============================================================================================
# lifecycle
# ============================================================================================

_RANK0 = {"draft", "pending", "new", "requested", "scheduled", "booked", "placed", "waiting",
          "open", "todo", "active", "available", "published", "unpaid", "queued", "proposed",
          "submitted", "received", "created", "reserved", "planned", "enabled", "staged",
          "tentative", "needs_action"}
_RANK1 = {"confirmed", "approved", "checked_in", "checked_out", "in_progress", "on_loan",
          "shipped", "ready", "renewed", "running", "overdue", "assigned", "in_review",
          "on_hold", "processing", "accepted", "started", "borrowed", "in_transit", "issued",
          "partially_paid", "suspended", "paused", "blocked"}
_TERMINAL = {"completed", "returned", "closed", "resolved", "delivered", "collected", "paid",
             "waived", "cancelled", "no_show", "expired", "archived", "rejected", "refunded",
             "failed", "succeeded", "retired", "lost", "deleted", "late_cancelled", "done",
             "fulfilled", "declined", "withdrawn", "merged", "written_off", "discharged",
             "void", "voided", "released", "abandoned", "ended"}
_SOFT_END = {"archived", "expired", "deleted"}  # housekeeping ends, after any other end
# ends that cut the path short: a cancelled appointment was never checked in
NEGATIVE_ENDS = frozenset({"cancelled", "no_show", "rejected", "failed", "declined",
                           "withdrawn", "expired", "lost", "late_cancelled", "refunded",
                           "revoked", "void", "voided", "abandoned"})


# states a scheduled record (an appointment, a session, a trip) reaches only once its start
# has passed: none of them lies in the future
ATTENDED = frozenset({"checked_in", "in_progress", "started", "running", "completed", "no_show",
                      "done", "attended", "discharged", "finished", "ended", "fulfilled",
                      "boarded", "departed", "arrived"})


def state_rank(state: str) -> int | None:
    """0 initial, 1 in progress, 2 terminal; None for a state this vocabulary does not know."""
    s = state.lower().replace("canceled", "cancelled")
    if s in _RANK0:
        return 0
    if s in _RANK1:
        return 1
    if s in _TERMINAL:
        return 2
    return None


def _state_of(stem: str, states: set[str]) -> str | None:
    stem = stem.replace("canceled", "cancelled")
    for cand in (stem, stem + "ed", stem + "d", re.sub(r"e?d$", "", stem) + "ed",
                 re.sub(r"ed$", "", stem)):  # voided_at -> void
        if cand in states:
            return cand
    if stem.startswith("check_"):
        cand = "checked_" + stem[6:]
        if cand in states:
            return cand
    return None


def lifecycle_columns(table: TableSpec) -> tuple[str, dict[str, str]] | None:
    """(status column, {state: timestamp column}) for a table whose status enum names states
    that have their own timestamp column."""
    status = next((c for c in table.columns if c.name in ("status", "state") and c.enum), None)
    if status is None:
        return None
    states = set(status.enum or [])
    found: dict[str, str] = {}
    for c in _time_columns(table):
        st = _state_of(time_stem(c.name), states)
        if st and _group(c.name) != "create" and st not in found:
            found[st] = c.name
    return (status.name, found) if found else None


def _check_lifecycle(spec: EnvSpec) -> list[Violation]:
    out: list[Violation] = []
    for t in spec.tables:
        lc = lifecycle_columns(t)
        if lc is None:
            continue
        scol, stamps = lc
        pk = t.primary_key[0]
        for row in spec.rows.get(t.name, []):
            status = row.get(scol)
            if status is None:
                continue
            col = stamps.get(status)
            if col is not None and row.get(col) is None:
                out.append(Violation("lifecycle", t.name, col, row.get(pk),
                                     f"{scol}={status!r} but {col} is not set"))
            rank = state_rank(status)
            for st, c in stamps.items():
                if st == status or row.get(c) is None:
                    continue
                srank = state_rank(st)
                if rank is None or srank is None:
                    continue
                if rank < srank:
                    out.append(Violation("lifecycle", t.name, c, row.get(pk),
                                         f"{c} is set but {scol}={status!r} has not reached "
                                         f"{st!r}"))
                elif rank == 2 and srank == 2 and status not in _SOFT_END and \
                        st not in _SOFT_END:
                    out.append(Violation("lifecycle", t.name, c, row.get(pk),
                                         f"{c} is set but the row ended as {status!r}, "
                                         f"not {st!r}"))
    return out


# ============================================================================================
# values: enum, type, format, range, unique
# ============================================================================================

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$")
_IPV4 = re.compile(r"^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$")


def _type_ok(ctype: str, v: Any) -> bool:
    if ctype == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if ctype == "real":
        return isinstance(v, int | float) and not isinstance(v, bool)
    if ctype == "boolean":
        return isinstance(v, bool) or v in (0, 1)
    if ctype == "text":
        return isinstance(v, str)
    if ctype == "date":
        return isinstance(v, str) and len(v) == 10 and _as_time(v) is not None
    if ctype == "datetime":
        return isinstance(v, str) and len(v) > 10 and _as_time(v) is not None
    return True  # json


# declared JSON types -> the column types that keep them
_KEEPS = {"boolean": {"boolean"}, "integer": {"integer"}, "number": {"real", "integer"},
          "string": {"text", "date", "datetime"}, "array": {"json", "text"},
          "object": {"json"}}
_FORMAT_TYPES = {"date": {"date"}, "date-time": {"datetime"}}


def declared_type_ok(hint: dict[str, Any], ctype: str) -> bool:
    """Whether a column of type ``ctype`` keeps the type (and date format) the source declared."""
    fmt = hint.get("format")
    if fmt in _FORMAT_TYPES:
        return ctype in _FORMAT_TYPES[fmt]
    jt = hint.get("type")
    return jt not in _KEEPS or ctype in _KEEPS[jt]


def _format_ok(fmt: str, v: Any) -> bool:
    if not isinstance(v, str):
        return True  # the type rule reports it
    if fmt == "email":
        return bool(_EMAIL.match(v))
    if fmt in ("uri", "url", "uri-reference", "iri"):
        p = urlparse(v)
        return bool(p.scheme and (p.netloc or p.scheme in ("mailto", "urn", "file")))
    if fmt == "date":
        return len(v) == 10 and _as_time(v) is not None
    if fmt == "date-time":
        return len(v) > 10 and _as_time(v) is not None
    if fmt == "uuid":
        try:
            _uuid.UUID(v)
        except ValueError:
            return False
        return True
    if fmt == "time":
        return bool(_HHMM.match(v))
    if fmt == "ipv4":
        return bool(_IPV4.match(v))
    return True


def _check_values(spec: EnvSpec, hints: dict[str, dict[str, dict[str, Any]]]) -> list[Violation]:
    out: list[Violation] = []
    for t in spec.tables:
        pk = t.primary_key[0]
        rows = spec.rows.get(t.name, [])
        thints = hints.get(t.name) or {}
        for c in t.columns:
            h = thints.get(c.name) or {}
            if h and not declared_type_ok(h, c.type):
                declared = h.get("format") if h.get("format") in _FORMAT_TYPES else h.get("type")
                out.append(Violation("type", t.name, c.name, None,
                                     f"the source declares {declared}, the column is {c.type}"))
            enum = set(c.enum) if c.enum else None
            declared_enum = {str(e) for e in h["enum"]} if h.get("enum") else None
            fmt, pattern = h.get("format"), h.get("pattern")
            rx = None
            if isinstance(pattern, str):
                try:
                    rx = re.compile(pattern)
                except re.error:
                    rx = None
            lo, hi = h.get("minimum"), h.get("maximum")
            xlo, xhi = h.get("exclusiveMinimum"), h.get("exclusiveMaximum")
            minlen, maxlen = h.get("minLength"), h.get("maxLength")
            for row in rows:
                v = row.get(c.name)
                if v is None:
                    continue
                rid = row.get(pk)
                if not _type_ok(c.type, v):
                    out.append(Violation("type", t.name, c.name, rid,
                                         f"{v!r} is not a {c.type}"))
                    continue
                if enum is not None and str(v) not in enum:
                    out.append(Violation("enum", t.name, c.name, rid,
                                         f"{v!r} is not one of {sorted(enum)}"))
                elif declared_enum is not None and str(v) not in declared_enum:
                    out.append(Violation("enum", t.name, c.name, rid,
                                         f"{v!r} is not one of the declared "
                                         f"{sorted(declared_enum)}"))
                if fmt and not _format_ok(str(fmt), v):
                    out.append(Violation("format", t.name, c.name, rid,
                                         f"{v!r} is not a valid {fmt}"))
                elif rx is not None and isinstance(v, str) and not rx.search(v):
                    out.append(Violation("format", t.name, c.name, rid,
                                         f"{v!r} does not match {pattern!r}"))
                elif isinstance(v, str) and ((isinstance(minlen, int) and len(v) < minlen) or
                                             (isinstance(maxlen, int) and len(v) > maxlen)):
                    out.append(Violation("format", t.name, c.name, rid,
                                         f"length {len(v)} outside [{minlen}, {maxlen}]"))
                if isinstance(v, int | float) and not isinstance(v, bool):
                    bad = ((isinstance(lo, int | float) and v < lo)
                           or (isinstance(hi, int | float) and v > hi)
                           or (isinstance(xlo, int | float) and v <= xlo)
                           or (isinstance(xhi, int | float) and v >= xhi))
                    if bad:
                        out.append(Violation("range", t.name, c.name, rid,
                                             f"{v!r} outside the declared range "
                                             f"[{lo if lo is not None else xlo}, "
                                             f"{hi if hi is not None else xhi}]"))
        groups = [(c.name,) for c in t.columns
                  if (c.unique or (thints.get(c.name) or {}).get("unique")) and not c.primary_key]
        groups += [tuple(t.primary_key)] + [tuple(g) for g in t.unique_together]
        for g in dict.fromkeys(groups):
            seen: dict[tuple, Any] = {}
            for row in rows:
                # a JSON value (object/array) compares by its canonical text: dicts don't hash
                key = tuple(json.dumps(v, sort_keys=True, default=str)
                            if isinstance(v, dict | list) else v
                            for v in (row.get(c) for c in g))
                if any(k is None for k in key):
                    continue
                if key in seen:
                    out.append(Violation("unique", t.name, ",".join(g), row.get(pk),
                                         f"{dict(zip(g, key, strict=True))} repeats row "
                                         f"{seen[key]!r}"))
                else:
                    seen[key] = row.get(pk)
    return out



# ============================================================================================
# cross-table invariants
# ============================================================================================

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


def _status_column(table: TableSpec) -> ColumnSpec | None:
    return next((c for c in table.columns if c.name in ("status", "state") and c.enum), None)


def _scheduled(table: TableSpec) -> bool:
    """A record with its own time window (a slot's starts_at/ends_at) is used up by a
    completed booking; a reusable one (a copy, a bike) is freed by the end of its use."""
    groups = {time_stem(c.name) for c in _time_columns(table)}
    return bool(groups & {"start", "starts", "begin", "begins"}) and bool(
        groups & {"end", "ends"})


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
        cstatus = _status_column(child)
        if cstatus is None:
            continue
        noun = _singular(child.name).split("_")[-1]
        for fk in child.columns:
            target = _fk_target(fk)
            if target is None or not _containment(fk) or target[0] == child.name or \
                    target[0] not in by:
                continue
            parent = by[target[0]]
            holding = holding_states(list(cstatus.enum or []), parent)
            if not holding or len(holding) == len(cstatus.enum or []):
                continue
            coupled = False
            pstatus = _status_column(parent)
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
        status = _status_column(t)
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
    if inv["kind"] == "capacity":
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


@lru_cache(maxsize=1)
def _zone_table() -> dict[str, tuple[str, ...]]:
    """ISO 3166 country code -> its IANA zones (tzdata's zone.tab and zone1970.tab), ordered
    by how many real places Faker's geo data has in each (the populous zones first)."""
    zones: dict[str, set[str]] = defaultdict(set)
    base = resources.files("tzdata").joinpath("zoneinfo")
    for name in ("zone.tab", "zone1970.tab"):
        for line in base.joinpath(name).read_text(encoding="utf-8").splitlines():
            if line.startswith("#") or not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) >= 3:
                for cc in parts[0].split(","):
                    zones[cc].add(parts[2])
    places = Counter((p[3], p[4]) for p in _Geo.land_coords)
    return {cc: tuple(sorted(zs, key=lambda z, cc=cc: (-places[(cc, z)], z)))
            for cc, zs in zones.items()}


def country_zones(country: str) -> tuple[str, ...]:
    """The IANA zones of an ISO 3166 alpha-2 country (the populous ones first); () unknown."""
    return _zone_table().get(country.upper(), ()) if isinstance(country, str) else ()


def zone_offsets(zone: str) -> tuple[str, bool]:
    """(standard UTC offset, observes DST) of an IANA zone, from the system's tzdata."""
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return "", False
    jan = datetime(2026, 1, 15, 12, tzinfo=tz).utcoffset() or timedelta(0)
    jul = datetime(2026, 7, 15, 12, tzinfo=tz).utcoffset() or timedelta(0)
    std = min(jan, jul)
    minutes = int(std.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}", jan != jul


def known_zones(like: str | None = None) -> tuple[str, ...]:
    """The IANA zones of tzdata's zone tables, sorted (the shipped package, not the machine's
    own tz database); `like`: only those with its standard offset and daylight saving."""
    zones = sorted({z for zs in _zone_table().values() for z in zs})
    if like is not None:
        want = zone_offsets(like)
        zones = [z for z in zones if zone_offsets(z) == want] if want[0] else []
    return tuple(zones)


_US_STATES = frozenset(_UsAddress.states_abbr)
_US_TERRITORIES = frozenset(getattr(_UsAddress, "territories_abbr", ()))  # own ISO codes
_POSTAL_TAIL = re.compile(r",\s*([A-Z]{2})\s+\d{5}(?:-\d{4})?\s*$")


def address_country(address: Any) -> str | None:
    """The country of a US-style postal address ("..., WA 98101"): US for a state, the
    territory's own ISO code (GU, PR, ...) for a territory; None when it cannot be told."""
    if not isinstance(address, str):
        return None
    m = _POSTAL_TAIL.search(address)
    if m is None:
        return None
    code = m.group(1)
    if code in _US_TERRITORIES:
        return code
    return "US" if code in _US_STATES else None


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
        if kind in ("held_iff", "capacity"):
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
            if kind == "capacity":
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


# ============================================================================================
# entry point
# ============================================================================================


def check_semantics(spec: EnvSpec, hints: dict[str, dict[str, dict[str, Any]]] | None = None
                    ) -> list[Violation]:
    """Every semantic violation in the spec's rows (empty: the database means what it says)."""
    if hints is None:
        hints = spec.provenance.stats.get("field_hints") or {}
    index: dict[str, dict[Any, dict[str, Any]]] = defaultdict(dict)
    for t in spec.tables:
        pk = t.primary_key
        if len(pk) != 1:
            continue
        index[t.name] = {r.get(pk[0]): r for r in spec.rows.get(t.name, [])}
    return [*_check_values(spec, hints), *_check_routes(spec, index),
            *_check_times(spec, index), *_check_lifecycle(spec),
            *_check_invariants({t.name: t for t in spec.tables}, spec.rows,
                               spec_invariants(spec))]


# ============================================================================================
# repair
# ============================================================================================


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
            if v.rule == "fk_route" and col is not None:
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
    for inv in sorted(invariants, key=lambda i: i["kind"] != "capacity"):  # capacity first
        t = by.get(inv.get("table", ""))
        if t is None:
            continue
        rows = index.get(t.name, {})
        if inv["kind"] == "capacity":
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
