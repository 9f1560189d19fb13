"""The lifecycle rule: how far a status has come (`state_rank`: initial, in progress,
terminal), the ends that cut the path short (`NEGATIVE_ENDS`) and the states a scheduled record
reaches only once it started (`ATTENDED`), the timestamp column of each state
(`lifecycle_columns`), and `_check_lifecycle`."""

from __future__ import annotations

import re

from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.semantics.columns import _time_columns, time_stem
from agent_world.mining.semantics.times import _group
from agent_world.mining.semantics.violations import Violation

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


def status_column(table: TableSpec) -> ColumnSpec | None:
    """The table's state column: a `status` or `state` column with an enum."""
    return next((c for c in table.columns if c.name in ("status", "state") and c.enum), None)


def lifecycle_columns(table: TableSpec) -> tuple[str, dict[str, str]] | None:
    """(status column, {state: timestamp column}) for a table whose status enum names states
    that have their own timestamp column."""
    status = status_column(table)
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
