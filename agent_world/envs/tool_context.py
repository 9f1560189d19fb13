"""What tool code sees: `ctx` (a `ToolContext`), its database handle `ctx.db`, and `ToolError`.

The clock, ids and random numbers a context gives depend only on the episode's seed and its
committed writes (see `ToolContext`).
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
from datetime import datetime, timedelta
from typing import Any

from agent_world.envs.host_channel import RemoteCursor, RemoteDB
from agent_world.envs.tool_sql import ENDED_MESSAGE, WRITES_COUNTER, Row

_READ_MARK = "\n-- read-only call"


class ToolError(Exception):
    """Raised by tool code for an expected, domain-level failure ("flight is full")."""


class DB:
    """The database handle tools get as `ctx.db`: statements only, no transaction control.
    Rows are `Row`s; JSON columns come back decoded, and dicts/lists bind as JSON text."""

    __slots__ = ("_conn", "_mark")

    def __init__(self, conn: sqlite3.Connection, read_only: bool = False):
        self._conn = conn
        # The authorizer runs when a statement is prepared, and prepared statements are cached
        # by their text: a read tool's statements carry a mark so they are never one that a
        # write tool prepared (and they are refused any write when prepared).
        self._mark = _READ_MARK if read_only else ""

    def _live(self) -> sqlite3.Connection:
        conn = self._conn
        if not conn.in_transaction:  # an INSERT OR ROLLBACK that failed ended it
            raise sqlite3.OperationalError(ENDED_MESSAGE)
        return conn

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor | RemoteCursor:
        cur = self._live().execute(sql + self._mark, params)
        if cur.description is None:
            return cur
        # the rows as of now, as a sandboxed call gets them: a cursor read after the call's
        # later writes must not see those (SQLite steps a plain cursor lazily)
        return RemoteCursor(cur.fetchall(), cur.rowcount, cur.lastrowid, cur.description)

    def executemany(self, sql: str, seq: Any) -> sqlite3.Cursor:
        return self._live().executemany(sql + self._mark, seq)

    def query(self, sql: str, params: Any = ()) -> list[Row]:
        return self._live().execute(sql + self._mark, params).fetchall()

    def one(self, sql: str, params: Any = ()) -> Row | None:
        return self._live().execute(sql + self._mark, params).fetchone()

    def scalar(self, sql: str, params: Any = ()) -> Any:
        row = self._live().execute(sql + self._mark, params).fetchone()
        return None if row is None else next(iter(row.values()))


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def issued_id(seed: int, prefix: str, n: int) -> str:
    """The n-th id of `prefix` in an episode of `seed` (what `ctx.new_id` returns)."""
    digest = hashlib.sha256(f"{seed}:{prefix}:{n}".encode()).hexdigest()
    return f"{prefix}{digest[:8].upper()}"


def call_clock(clock_start: str, writes: int) -> datetime:
    """`ctx.clock` of a call after `writes` committed writes."""
    return datetime.fromisoformat(clock_start) + timedelta(minutes=writes + 1)


class ToolContext:
    """What a tool sees besides its arguments: the database, a clock, and id/random sources.

    The clock and ids depend only on the episode's seed and its committed writes, never on how
    many reads or failed calls came before: `now()` is `clock_start` plus one minute per call
    that changed the database (plus one: the moment of the next write); `new_id(prefix)` counts
    per prefix, and the counters advance only when the call's changes are committed. So two
    trajectories that make the same writes in the same order end in the same state.
    """

    def __init__(self, conn: sqlite3.Connection | RemoteDB, seed: int, step: int, clock: str,
                 counters: dict[str, int], read_only: bool = False):
        self.db = conn if isinstance(conn, RemoteDB) else DB(conn, read_only)
        self.seed = seed
        self.step = step  # index of this call in the episode (informational)
        self.counters = counters
        self.writes = counters.get(WRITES_COUNTER, 0)
        self._start = clock
        self._clock: datetime | None = None  # parsed when first asked (most calls never do)
        self._rng: random.Random | None = None
        self.issued: dict[str, int] = {}  # prefix -> ids issued by this call

    @property
    def rng(self) -> random.Random:
        """Random numbers seeded by the episode's seed and its number of committed writes."""
        if self._rng is None:
            self._rng = random.Random(f"{self.seed}:{self.writes}")
        return self._rng

    @property
    def clock(self) -> datetime:
        """The moment of this call's write: `clock_start` plus one minute per committed write,
        plus one."""
        if self._clock is None:
            self._clock = call_clock(self._start, self.writes)
        return self._clock

    def now(self) -> str:
        return self.clock.isoformat(timespec="seconds")

    def today(self) -> str:
        return self.clock.date().isoformat()

    def new_id(self, prefix: str = "") -> str:
        n = self.counters.get(prefix, 0) + self.issued.get(prefix, 0) + 1
        self.issued[prefix] = self.issued.get(prefix, 0) + 1
        return issued_id(self.seed, prefix, n)

    # Convenience passthroughs: most tools only query.
    def query(self, sql: str, params: Any = ()) -> list[Row]:
        return self.db.query(sql, params)

    def one(self, sql: str, params: Any = ()) -> Row | None:
        return self.db.one(sql, params)

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        return self.db.execute(sql, params)

    def get_or_fail(self, table: str, message: str | None = None, **where: Any) -> Row:
        """The one row of `table` matching `where` (column=value), or a ToolError the agent
        sees: `ctx.get_or_fail("users", id=user_id)` -> "no users row with id=7"."""
        if not where:
            raise ValueError("get_or_fail needs at least one column=value condition")
        cond = " AND ".join(f"{_quote(k)} = ?" for k in where)
        row = self.db.one(f"SELECT * FROM {_quote(table)} WHERE {cond}", tuple(where.values()))
        if row is None:
            shown = ", ".join(f"{k}={v!r}" for k, v in where.items())
            raise ToolError(message or f"no {table} row with {shown}")
        return row

    def one_or_fail(self, sql: str, params: Any = (), message: str = "not found") -> Row:
        """Like `one`, but a missing row is a ToolError with `message` (the agent's fault)."""
        row = self.db.one(sql, params)
        if row is None:
            raise ToolError(message)
        return row
