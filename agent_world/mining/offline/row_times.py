"""Times of generated rows: the window they start in (`WINDOW_START`), ISO text helpers, and
`RowTimes`, the part of `RowFactory` that gives each row one consistent lifecycle (created
after its parents, start before end, scheduled times past once attended) and orders a new
row's columns so that what a value depends on is chosen first."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.column_semantics import column_semantic
from agent_world.mining.offline.record_bodies import BODY_KINDS, file_record_body
from agent_world.mining.semantics.columns import time_stem
from agent_world.mining.semantics.lifecycle_rule import (
    ATTENDED,
    NEGATIVE_ENDS,
    lifecycle_columns,
    state_rank,
    status_column,
)
from agent_world.mining.semantics.times import time_group

WINDOW_START = datetime(2023, 1, 1, 8, 0, 0)


def to_iso(dt: datetime) -> str:
    return dt.replace(microsecond=0).isoformat()


def parse_iso(v: Any) -> datetime | None:
    if not isinstance(v, str):
        return None
    try:
        return datetime.fromisoformat(v[:19]) if "T" in v or len(v) > 10 else \
            datetime.fromisoformat(v + "T00:00:00")
    except ValueError:
        return None


class RowTimes:
    """Time values and column order of a new row; mixed into `RowFactory`, whose tables, rows,
    clock, cache, routes and parents it reads."""

    tables: dict[str, TableSpec]
    rng: random.Random
    clock: datetime
    _cache: dict[tuple[str, str], Any]

    def _rand_time(self, lo: datetime, hi: datetime) -> datetime:
        if hi <= lo:
            return lo
        span = int((hi - lo).total_seconds())
        return lo + timedelta(seconds=self.rng.randint(0, span))

    # ---- times: one lifecycle per row ------------------------------------------------------
    _SCHEDULED_START = {"start", "starts", "begin", "begins", "departure", "departs"}
    _SCHEDULED = _SCHEDULED_START | {"end", "ends", "arrival", "arrives"}

    def _scheduled_start(self, table: str, row: dict[str, Any]) -> datetime | None:
        """The row's scheduled start, when already chosen (copied from its slot)."""
        for c in self.tables[table].columns:
            if time_stem(c.name) in self._SCHEDULED_START and isinstance(row.get(c.name), str):
                return parse_iso(row[c.name])
        return None

    def _upcoming(self, table: str, row: dict[str, Any]) -> bool:
        """Whether the row's scheduled start (already chosen: copied from its slot) is after
        the clock."""
        t = self._scheduled_start(table, row)
        return t is not None and t > self.clock

    def _long_past(self, table: str, row: dict[str, Any]) -> bool:
        """Whether the row's scheduled start (already chosen) lies more than half a day before
        the clock: a visit that long ago was attended, missed or cancelled, not still booked."""
        t = self._scheduled_start(table, row)
        return t is not None and t < self.clock - timedelta(hours=12)

    def _attendable(self, table: str) -> str | None:
        """The status column of a record that is attended once its start passes (an
        appointment: its states include checked_in or completed), if the table is one."""
        col = status_column(self.tables[table])
        return col.name if col is not None and ATTENDED & set(col.enum or []) else None

    _ARRIVAL = {"checked_in", "arrived", "boarded", "attended"}

    def _attended_stamp(self, table: str, col: ColumnSpec) -> str | None:
        """"arrive" for the stamp of an attended state reached on arrival (checked_in_at),
        "finish" for one reached after the start (completed_at), of a record with a
        scheduled start; None for any other column."""
        lc = self._lifecycle(table)
        state = next((st for st, c in (lc[1] if lc else {}).items() if c == col.name), None)
        if state not in ATTENDED or not any(time_stem(c.name) in self._SCHEDULED_START
                                            for c in self.tables[table].columns):
            return None
        return "arrive" if state in self._ARRIVAL else "finish"

    def _daytime(self, dt: datetime, lo: datetime, hi: datetime) -> datetime:
        """A scheduled time of day within opening hours (08:00-17:45: a visit, a class, a
        pickup, not 02:30), the same draw moved within its day or the next one inside
        [lo, hi]; the draw itself when no day allows it."""
        for day in (0, 1, -1):
            t = (dt + timedelta(days=day)).replace(hour=8 + dt.hour % 10)
            if lo <= t <= hi:
                return t
        return dt

    def _lifecycle(self, table: str) -> tuple[str, dict[str, str]] | None:
        key = ("lifecycle", table)
        if key not in self._cache:
            self._cache[key] = lifecycle_columns(self.tables[table])
        return self._cache[key]

    def _floor(self, table: str, row: dict[str, Any]) -> datetime:
        """A record is created after every parent it belongs to."""
        floor = WINDOW_START
        for c in self.tables[table].columns:
            if c.foreign_key and row.get(c.name) is not None:
                parent = self.parent_row(c, row[c.name])
                if parent:
                    pt = parse_iso(parent.get("created_at"))
                    if pt and pt > floor:
                        floor = pt
        return floor

    def _stamp_needed(self, table: str, col: ColumnSpec, row: dict[str, Any]) -> bool | None:
        """Whether the row's status says this state timestamp is set (None: no opinion)."""
        lc = self._lifecycle(table)
        if lc is None:
            return None
        scol, stamps = lc
        state = next((st for st, c in stamps.items() if c == col.name), None)
        status = row.get(scol)
        if state is None or status is None:
            return None
        if status == state:
            return True
        rank, srank = state_rank(status), state_rank(state)
        if rank is None or srank is None or rank <= srank or srank == 2:
            return False
        return status not in NEGATIVE_ENDS  # reached by the normal path

    def _time_value(self, table: str, col: ColumnSpec, row: dict[str, Any], sem: str) -> Any:
        kind = sem.split(":")[0]
        r = self.rng
        group = time_group(col.name)
        stem = time_stem(col.name)
        tcols = [c for c in self.tables[table].columns
                 if c.type in ("date", "datetime") and c.name != col.name]
        done = {c.name: parse_iso(row.get(c.name)) for c in tcols if row.get(c.name)}
        by_group: dict[str | None, list[datetime]] = {}
        for c in tcols:
            if done.get(c.name) is not None:
                by_group.setdefault(time_group(c.name), []).append(done[c.name])  # type: ignore
        created = max(by_group.get("create", []), default=None)
        starts = max(by_group.get("start", []), default=None)
        needed = self._stamp_needed(table, col, row)
        if needed is False and col.nullable:
            return None
        floor = max(self._floor(table, row), created or WINDOW_START)
        clock = self.clock
        if group == "birth":
            dt = self._rand_time(datetime(1940, 1, 1), datetime(2008, 12, 31))
        elif group == "create":
            if created is not None:  # booked_at and created_at of one record: the same moment
                dt = created
            else:  # before a start copied from its container (booked before the slot)
                hi = min(clock - timedelta(hours=1), starts - timedelta(hours=1)) \
                    if starts is not None else clock - timedelta(hours=1)
                dt = self._rand_time(self._floor(table, row), max(self._floor(table, row), hi))
        elif group == "start":
            if stem in self._SCHEDULED:  # a scheduled time: past or upcoming (past once
                # attended: a completed visit or a no-show lies before the clock; ahead while
                # an attendable record still waits: a booked visit)
                status = row.get(getattr(status_column(self.tables[table]), "name", ""))
                lo = max(floor, clock - timedelta(days=150))
                hi = clock - timedelta(hours=1) if status in ATTENDED else \
                    clock + timedelta(days=75)
                if status not in ATTENDED and self._attendable(table) and \
                        state_rank(str(status)) in (0, 1):
                    lo = max(floor, clock + timedelta(hours=1))
                dt = self._rand_time(lo, max(lo, hi))
                dt = dt.replace(minute=(dt.minute // 15) * 15, second=0)
                if kind == "datetime":
                    dt = self._daytime(dt, lo, max(lo, hi))
            else:  # an event that happened
                dt = self._rand_time(floor, max(floor, clock - timedelta(minutes=5)))
        elif group == "end":
            base = starts or floor
            if stem in self._SCHEDULED:
                dt = base + (timedelta(days=r.randint(1, 14)) if kind == "date"
                             else timedelta(minutes=r.choice([30, 45, 60, 90, 120])))
            else:
                hi = min(clock, base + timedelta(days=45))
                dt = self._rand_time(base, max(base, hi))
        elif group == "due":
            base = starts or created or floor
            dt = base + timedelta(days=r.choice([7, 14, 14, 21, 28]))
        elif (at := self._attended_stamp(table, col)) and starts is not None:
            # a visit is checked in on arrival, shortly before its start, and completed after
            dt = starts - timedelta(minutes=r.randint(0, 30)) if at == "arrive" else \
                starts + timedelta(minutes=r.choice([20, 30, 45, 60, 90]))
        else:  # updated, cancelled, archived, ...: after the record's past events
            if needed is None and stem.startswith(("deleted", "archived", "revoked")) and \
                    col.nullable and r.random() < 0.85:
                return None
            past = [v for v in done.values() if v is not None and v <= clock]
            base = max([floor, *past])
            if stem.startswith(("updated", "modified", "last")):
                dt = self._rand_time(base, max(base, min(clock, base + timedelta(days=120))))
            else:
                dt = self._rand_time(base, max(base, clock))
        if needed is None and col.nullable and group == "end" and stem not in self._SCHEDULED \
                and r.random() < 0.3:
            return None  # not returned yet (a scheduled period always has its end)
        return dt.date().isoformat() if kind == "date" else to_iso(dt)

    _TIME_ORDER = {"birth": 3, "create": 3, "start": 4, "due": 5, "end": 5, None: 6,
                   "later": 7}

    def _ordered(self, table: TableSpec) -> list[ColumnSpec]:
        key = ("order", table.name)
        if key not in self._cache or self._cache[key][0] is not table:
            self._cache[key] = (table, self._order(table))
        return self._cache[key][1]

    def _order(self, table: TableSpec) -> list[ColumnSpec]:
        vias = {r.via for r in self._routes(table.name)} | {
            r.column for r in self._routes(table.name) if r.kind == "siblings"}
        copied = {r.column for r in self._routes(table.name)
                  if r.kind == "via" and not table.column(r.column).foreign_key}

        def key(c: ColumnSpec) -> tuple[int, int]:
            if c.primary_key:
                return (0, 0)
            if c.foreign_key:
                return (1, 0 if c.name in vias else 1)
            if c.name in copied:  # from the container, before the times ordered after it
                return (1, 2)
            if c.type in ("date", "datetime"):
                return (self._TIME_ORDER[time_group(c.name)], 0)
            if c.name in ("status", "state") and c.enum:
                return (2, -1)  # the fields named for a state follow it
            if column_semantic(table.name, c) == "timezone":
                return (2, 1)  # after the country or address it belongs to
            if file_record_body(table, c, column_semantic(table.name, c)) in BODY_KINDS:
                return (2, 2)  # after the title or file name it agrees with
            return (2, 0)
        return sorted(table.columns, key=key)
