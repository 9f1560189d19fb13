"""The tool worker: a separate process that runs environment tool code against episode databases.

Tool code is written by agents, not by the project, so it never runs in the caller's process.
One warm worker serves many episodes: it compiles each environment's tools once, then answers
`call` requests, each naming the episode's database file, over a persistent connection per
episode (warm page and statement caches). Every call is one transaction that is committed only
if the tool returns normally and changed something; anything else rolls back, so the episode's
state is exactly as before the call. If the worker dies mid-call, SQLite's hot-journal recovery
rolls the half-done transaction back the next time anyone opens the file.

In a sandboxed runtime the worker holds no database at all: the caller keeps each episode's
connection and begins the call's transaction; the call says "remote", and each statement the
tool runs travels to the caller as a frame, is checked by the caller's guard and answered with
its rows; the caller commits or rolls back after the reply. Tool code there can reach no file
and no connection, only statements of its own call.

Protocol: length-prefixed (4-byte big-endian) frames on the process's original stdin and
stdout. Caller to worker: marshal (flagged in the header; exact and fast, and the worker trusts
its caller). Worker to caller: JSON only (the caller never unmarshals what tool code could
write), the envelope encoded with orjson and a tool's result as JSON text after a newline. The
worker moves those descriptors aside at start-up so tool code that prints or reads cannot
corrupt the stream. A sandbox wraps this process by prefixing its command line
(`python -m agent_world.envs.worker`); nothing here assumes it runs unconfined.

Requests:
  {"op": "load", "env": FP, "tools": {name: {"source": str, "mutates": bool}},
   "helpers": str, "timeout": seconds}
  {"op": "call", "env": FP, "db": PATH, "tool": NAME, "args": {...}, "seed": int,
   "step": int, "clock": ISO, "timeout": seconds, "persist": bool (keep the connection),
   "conn": KEY (what the kept connection is filed under; default the path)}
  {"op": "call", ..., "remote": true, "counters": {name: n}} (no "db": the caller holds it;
   while it runs the worker sends {"op": "sql", "id": ID, "sql": str, "params": [...] | {...},
   "many": bool} and reads {"names": [...] | None, "chunks": [marshal rows], "rowcount": n,
   "lastrowid": n} or {"error": EXCEPTION NAME, "message": str, "denied": [action, target]}
   or {"error": "timeout"} (the call's deadline passed);
   the reply carries "issued": {prefix: n} for the caller's id counters; "ahead":
   [[sql, params, answer], ...] are answers the caller ran before the call, taken in order
   while the tool sends exactly those statements, and the reply says "ahead_used": n, as
   does every statement frame ("used"); with "defer": true, writes whose results the tool has
   not read travel as "before": [[sql, params], ...] ahead of a statement frame ("sql" null:
   those alone), answered with "before": [[rowcount, lastrowid], ...] or {"error": "rerun"}
   (one failed: the caller runs the call again without "defer"), and those still queued at
   the end as the reply's "pending")
  {"op": "ping"} / {"op": "forget"}
Any request may carry "forget": [PATH, ...]: episodes closed since, whose connections to drop.
Every request may carry an "id"; the reply echoes it. Call replies also carry "rss" (bytes).
Replies: {"ok": true, "result": ..., "wrote": true (changes committed)} or
{"ok": false, "kind": KIND, "message": str}.
Command line: `--spin-us N`, how long the worker polls for its next frame (`InputWaiter`).
"""

from __future__ import annotations

import argparse
import base64
import builtins
import hashlib
import inspect
import io
import json
import marshal
import math
import os
import random
import re
import select
import signal
import sqlite3
import struct
import sys
import threading
import time
import traceback
from collections import OrderedDict
from datetime import date, datetime, timedelta
from typing import Any

import orjson

MAX_RESULT_BYTES = 1 << 20  # a tool's JSON result; larger is an error and rolls back
# objects and arrays a result may nest: the caller's json and pydantic recurse once a level
MAX_RESULT_DEPTH = 64
MAX_FRAME_BYTES = 64 << 20  # any protocol frame (arguments included)
_RAW_RESULT = "_result_json"  # reply key holding the result already encoded as JSON text
_HEADER = struct.Struct(">I")
_MARSHAL_FLAG = 1 << 31  # header bit: the body is marshal, not JSON
BYTES_KEY = "$bytes"  # a bytes parameter on the wire: {BYTES_KEY: base64}
FLOAT_KEY = "$float"  # inf, -inf or nan on the wire: {FLOAT_KEY: "inf"}

# sqlite3 authorizer action codes (sqlite3.h)
_READ, _INSERT, _UPDATE, _DELETE = 20, 18, 23, 9
_TRANSACTION, _SAVEPOINT, _ATTACH, _DETACH, _PRAGMA = 22, 32, 24, 25, 19
_CONTROL = {_TRANSACTION, _SAVEPOINT, _ATTACH, _DETACH, _PRAGMA}
_DDL = {1, 2, 3, 4, 5, 6, 7, 8,  # CREATE index/table/temp index/temp table/.../view
        10, 11, 12, 13, 14, 15, 16, 17,  # DROP ...
        26, 27, 28, 29, 30}  # ALTER, REINDEX, ANALYZE, CREATE/DROP VTABLE
_ROW_WRITES = {_INSERT, _UPDATE, _DELETE}
_WHAT = {_INSERT: "INSERT INTO", _UPDATE: "UPDATE", _DELETE: "DELETE FROM"}

# The engine's own bookkeeping inside every episode database (built with the template, see
# agent_world.envs.database): tool code never reads or writes these tables directly.
INTERNAL_PREFIX = "_aw_"
COUNTERS_TABLE = "_aw_counters"  # name -> n: id counters per prefix and the write clock
WRITES_COUNTER = "@writes"  # calls that changed the database; drives ctx.now()
MAX_OPEN_DATABASES = 128  # persistent episode connections kept per worker (LRU)
DEFAULT_SPIN_US = 100  # see InputWaiter
_READ_MARK = "\n-- read-only call"


class ToolError(Exception):
    """Raised by tool code for an expected, domain-level failure ("flight is full")."""


class ToolTimeout(BaseException):
    """Raised inside tool code when its time is up (BaseException: `except Exception` in the
    tool must not swallow it)."""


class Row(dict):
    """One result row: a dict by column name (JSON-serialisable as an object) that also reads
    by position (`row[0]`) and unpacks to its values (`a, b = row`), like sqlite3.Row."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int | slice):
            return tuple(self.values())[key]
        return dict.__getitem__(self, key)

    def __iter__(self) -> Any:
        return iter(self.values())


class DuplicateColumnError(Exception):
    """A result names the same column twice (SELECT * over a join): alias them."""


def _unique(names: tuple[str, ...]) -> tuple[str, ...]:
    """A result's column names, refused when one repeats (a row is a dict by name)."""
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise DuplicateColumnError(
            f"result has duplicate column name(s) {dupes}; select them under distinct "
            "names (SELECT a.id AS a_id, b.id AS b_id ...)")
    return names


_names_cache: list[Any] = [None, ()]


def _row(cursor: sqlite3.Cursor, values: tuple) -> Row:
    desc = cursor.description
    if desc is not _names_cache[0]:  # once per statement result, not per row
        _names_cache[0], _names_cache[1] = desc, _unique(tuple(d[0] for d in desc))
    return Row(zip(_names_cache[1], values, strict=True))


# A conflict clause OR ROLLBACK (`INSERT OR ROLLBACK ...`) that fires ends the call's
# transaction, rolling back all its changes: later statements of the call are refused (they
# would commit one by one) and the call fails with the state as before it.
ENDED_MESSAGE = ("not authorized: the call's transaction was ended (a conflict clause OR "
                 "ROLLBACK fired); no statement runs after that")
TRANSACTION_ENDED = "the tool ended the transaction itself (an OR ROLLBACK conflict clause)"


def ended(reply: dict[str, Any]) -> dict[str, Any]:
    """The reply of a call whose transaction ended before the engine could settle it: a
    timeout stays one (an interrupted write ends SQLite's transaction); anything else was an
    OR ROLLBACK that fired."""
    if reply.get("kind") == "timeout":
        return reply
    return {"ok": False, "kind": "permission_denied", "message": TRANSACTION_ENDED}


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


# ---------------------------------------------------------------------------------------------
# Calls whose database the caller holds (the sandboxed engine): each statement is one frame to
# the caller, which runs it on the episode's connection under its own Guard. Tool code then has
# no file, no connection and no guard within reach: only statements, checked by the caller.
# ---------------------------------------------------------------------------------------------

_INT64 = (-(1 << 63), 1 << 63)


def _wire_param(value: Any, where: str) -> Any:
    """A statement parameter as JSON: what sqlite3's adapters would bind, computed here."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if not _INT64[0] <= value < _INT64[1]:
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        return value
    if isinstance(value, float):  # JSON has no inf or NaN: they travel as text
        return value if math.isfinite(value) else {FLOAT_KEY: repr(float(value))}
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bytes | bytearray | memoryview):
        return {BYTES_KEY: base64.b64encode(bytes(value)).decode()}
    if isinstance(value, datetime):
        return value.isoformat(" ")
    if isinstance(value, date):
        return value.isoformat()
    raise sqlite3.ProgrammingError(
        f"Error binding parameter {where}: type '{type(value).__name__}' is not supported")


def _wire_params(params: Any) -> Any:
    if isinstance(params, dict):
        return {str(k): _wire_param(v, f":{k}") for k, v in params.items()}
    if isinstance(params, str | bytes) or not hasattr(params, "__iter__"):
        raise sqlite3.ProgrammingError("parameters are of unsupported type")
    return [_wire_param(v, str(i)) for i, v in enumerate(params, start=1)]


class RemoteCursor:
    """What `ctx.db.execute` returns when the caller ran the statement: the rows, rowcount,
    lastrowid and description, read like a sqlite3 cursor. A deferred write's cursor (see
    `HostChannel`) has no rows and no description, like any write's; its rowcount and lastrowid
    are asked of the caller when first read, with every write queued before it."""

    __slots__ = ("_rows", "_pos", "_rowcount", "_lastrowid", "description", "arraysize",
                 "_pending")

    def __init__(self, rows: list[Row], rowcount: int, lastrowid: int | None,
                 description: tuple | None):
        self._rows, self._pos = rows, 0
        self._rowcount, self._lastrowid, self.description = rowcount, lastrowid, description
        self.arraysize = 1
        self._pending: tuple[HostChannel, str] | None = None  # (channel, call id) while queued

    @property
    def rowcount(self) -> int:
        if self._pending is not None:
            self._settle()
        return self._rowcount

    @property
    def lastrowid(self) -> int | None:
        if self._pending is not None:
            self._settle()
        return self._lastrowid

    def _settle(self) -> None:
        channel, call_id = self._pending  # type: ignore[misc]
        channel.flush(call_id)

    def fetchone(self) -> Row | None:
        if self._pos >= len(self._rows):
            return None
        self._pos += 1
        return self._rows[self._pos - 1]

    def fetchmany(self, size: int | None = None) -> list[Row]:
        n = self.arraysize if size is None else size
        out = self._rows[self._pos:self._pos + n]
        self._pos += len(out)
        return out

    def fetchall(self) -> list[Row]:
        out = self._rows[self._pos:]
        self._pos = len(self._rows)
        return out

    def __iter__(self) -> RemoteCursor:
        return self

    def __next__(self) -> Row:
        row = self.fetchone()
        if row is None:
            raise StopIteration
        return row

    def close(self) -> None:
        self._rows, self._pos = [], 0


class Rerun(BaseException):
    """A deferred write failed when the caller ran it: this run of the call is void (the caller
    rolls it back and runs the call again with every statement answered in turn, so the error
    is raised at the line that caused it). BaseException: tool code's `except Exception` must
    not carry on as if nothing happened."""


# Writes a call may defer: plain INSERT/UPDATE/DELETE/REPLACE without RETURNING (whose rows the
# tool might read) and without OR ROLLBACK (which would end the caller's transaction). The word
# ROLLBACK anywhere is enough: SQLite reads a comment as a space (`OR/**/ROLLBACK`).
DEFERRABLE = re.compile(r"\s*(insert|update|delete|replace)\b", re.IGNORECASE)
NOT_DEFERRABLE = re.compile(r"\breturning\b|\brollback\b", re.IGNORECASE)
MAX_DEFERRED = 64  # writes queued before they go to the caller anyway
MAX_DEFERRED_TEXT = 16 << 10  # a statement longer than this (text + parameters) is sent at once


def plain_write(sql: str) -> bool:
    """An INSERT/UPDATE/DELETE/REPLACE whose result has no rows and that cannot end the
    transaction: what may be deferred or run ahead."""
    return DEFERRABLE.match(sql) is not None and NOT_DEFERRABLE.search(sql) is None


def _deferrable(sql: str, wire: Any) -> bool:
    if len(sql) > MAX_DEFERRED_TEXT or not plain_write(sql):
        return False
    size = 0
    for value in (wire.values() if isinstance(wire, dict) else wire):
        if isinstance(value, str):
            size += len(value)
        elif not isinstance(value, int | float | type(None)):  # bytes, inf/nan: sent at once
            return False
    return size <= MAX_DEFERRED_TEXT


class HostChannel:
    """The worker's side of statement frames: send one, wait for its answer. A timeout that
    comes due during the exchange is raised once the answer is in (see `_on_alarm`; the
    caller bounds the statement by the same deadline), so no answer is left unread in the
    stream.

    Deferred writes (a call sent with "defer"): a write whose result the tool has not looked
    at yet is queued instead of sent, and its cursor returned at once. The queue travels, in
    order, ahead of the next statement that needs an answer (any read, or a write the queue
    cannot hold), when the tool reads a queued cursor's rowcount or lastrowid, or with the
    call's reply; the caller runs the queued writes first, so every read sees every earlier
    write. If one of them fails the caller answers `Rerun`, voids this run of the call and
    runs it again without deferring: the tool then meets the error at the very line, as if
    nothing had been deferred. Rerunning is exact because all a call sees is its arguments,
    the episode's seed and committed counters (ids, clock, rng) and the answers to its
    statements, all the same the second time."""

    def __init__(self, inp: Any, out: Any, guard: Guard, waiter: InputWaiter | None = None):
        self.inp, self.out, self.guard, self.waiter = inp, out, guard, waiter
        self.call_id: str | None = None
        self.lock = threading.Lock()
        self.busy = 0  # the thread exchanging a statement now (0: none)
        self.late = False  # the call's time ran out during an exchange
        # answers the caller ran ahead for this call ([sql, params, answer], in order; see
        # agent_world.envs.hostdb.Forecast) and how many the tool took
        self.ahead: list[list[Any]] | None = None
        self.used = 0
        self.had_ahead = False
        self.defer = False  # this call may defer writes
        self.queue: list[tuple[str, Any, RemoteCursor]] = []  # deferred writes, in order
        self.void = False  # a deferred write failed: this run of the call is over

    def begin(self, call_id: str | None, ahead: Any, defer: bool) -> None:
        self.call_id, self.late, self.used = call_id, False, 0
        self.ahead = ahead if isinstance(ahead, list) else None
        self.had_ahead = bool(self.ahead)
        self.defer, self.queue, self.void = defer, [], False

    def end(self) -> list[list[Any]]:
        """The call is over: the writes still queued, for the reply ([[sql, params], ...])."""
        with self.lock:
            pending = [] if self.void else [[sql, wire] for sql, wire, _ in self.queue]
            for _, _, cur in self.queue:
                cur._pending = None  # read after the call: what it holds (nothing more to ask)
            self.call_id = self.ahead = None
            self.queue, self.defer = [], False
        return pending

    def kept(self) -> bool:
        """Whether tool code still holds the cursor of a queued write after its call returned
        (in a module global, say): a later call may read its rowcount or lastrowid, which
        must then be the caller's answers, not the -1 of a write never answered."""
        return any(sys.getrefcount(cur) > 3 for _, _, cur in self.queue)

    def statement(self, sql: Any, params: Any, many: bool) -> RemoteCursor:
        if not isinstance(sql, str):
            raise TypeError(f"execute() argument 1 must be str, not {type(sql).__name__}")
        wire = [_wire_params(p) for p in params] if many else _wire_params(params)
        with self.lock:
            if self.call_id is None:
                raise sqlite3.ProgrammingError("the call this database belonged to is over")
            if self.void:
                raise Rerun()
            ahead = self.ahead
            if ahead is not None:  # taken only as a prefix: the first miss drops the rest
                if not many and self.used < len(ahead):
                    expected, expected_params, answer = ahead[self.used]
                    if expected == sql and _same(expected_params, wire):
                        self.used += 1
                        return self._cursor(answer)
                self.ahead = None
            if self.defer and not many and _deferrable(sql, wire):
                cur = RemoteCursor([], -1, None, None)
                cur._pending = (self, self.call_id)
                self.queue.append((sql, wire, cur))
                if len(self.queue) < MAX_DEFERRED:
                    return cur
                sql = wire = None  # the queue is full: send it now
            reply = self._exchange(sql, wire, many)
        return cur if sql is None else self._cursor(reply)

    def flush(self, call_id: str) -> None:
        """Send the queued writes now (a queued cursor's rowcount or lastrowid was read)."""
        with self.lock:
            if self.call_id != call_id:
                raise sqlite3.ProgrammingError("the call this database belonged to is over")
            if self.void:
                raise Rerun()
            if self.queue:
                self._exchange(None, None, False)

    def _exchange(self, sql: str | None, wire: Any, many: bool) -> dict[str, Any]:
        """One statement frame (the queued writes ahead of it; `sql` None: those alone) and its
        answer. Holds the lock."""
        message: dict[str, Any] = {"op": "sql", "id": self.call_id, "sql": sql,
                                   "params": wire, "many": many}
        queue = self.queue
        if queue:
            message["before"] = [[s, w] for s, w, _ in queue]
        if self.had_ahead:  # where the tool left them: the caller undoes writes it did not take
            message["used"] = self.used
        frame = encode_frame(message, strict=True)
        # busy until the queue is settled too: a timeout raised between the answer and that
        # would leave writes the caller already ran in the queue, sent again with the reply
        self.busy = threading.get_ident()
        try:
            self.out.write(frame)
            self.out.flush()
            if self.waiter is not None:
                self.waiter.wait()
            reply = read_frame(self.inp, trusted=True)
            if reply is None:  # the caller is gone: nothing left to serve
                os._exit(0)
            if queue:
                self.queue = []
                results = reply.get("before")
                if reply.get("error") == "rerun" or not isinstance(results, list) or len(
                        results) != len(queue):
                    self.void = True
                    for _, _, cur in queue:
                        cur._pending = None
                    raise Rerun()
                for (_, _, cur), (rowcount, lastrowid) in zip(queue, results, strict=True):
                    cur._rowcount, cur._lastrowid, cur._pending = rowcount, lastrowid, None
        finally:
            self.busy = 0
            if self.late:  # the time ran out during the exchange (see _on_alarm)
                self.late = False
                raise ToolTimeout()  # (a pending Rerun gives way: the call is over anyway)
        return reply

    def _cursor(self, reply: dict[str, Any]) -> RemoteCursor:
        if "error" in reply:
            if reply["error"] == "timeout":  # the caller stopped the statement at the deadline
                raise ToolTimeout()
            if reply.get("denied"):
                self.guard.denied = tuple(reply["denied"])
            kind = reply["error"]
            exc = getattr(sqlite3, kind, None) if kind in _SQLITE_ERRORS else None
            if kind == "DuplicateColumnError":
                raise DuplicateColumnError(reply["message"])
            raise (exc or sqlite3.DatabaseError)(reply["message"])
        names = reply["names"]
        if names is None:
            return RemoteCursor([], reply["rowcount"], reply["lastrowid"], None)
        names = tuple(names)
        description = _descriptions.get(names)
        if description is None:  # once per distinct result shape: a tool sends the same few
            description = tuple((n, *(None,) * 6) for n in _unique(names))
            if len(_descriptions) >= 1024:
                _descriptions.clear()
            _descriptions[names] = description
        rows: list[Row] = []
        for chunk in reply["chunks"]:
            rows.extend(Row(zip(names, values, strict=True)) for values in marshal.loads(chunk))
        return RemoteCursor(rows, reply["rowcount"], reply["lastrowid"], description)


# result column names -> their cursor description (checked for duplicates once)
_descriptions: dict[tuple[str, ...], tuple] = {}


def _same(a: Any, b: Any) -> bool:
    """The same parameters, types included (1, 1.0 and True bind differently)."""
    if type(a) is not type(b) or len(a) != len(b):
        return False
    if isinstance(a, dict):
        return all(k in b and _same_value(v, b[k]) for k, v in a.items())
    return all(_same_value(x, y) for x, y in zip(a, b, strict=True))


def _same_value(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


_SQLITE_ERRORS = frozenset({"Warning", "Error", "InterfaceError", "DatabaseError", "DataError",
                            "OperationalError", "IntegrityError", "InternalError",
                            "ProgrammingError", "NotSupportedError"})


class RemoteDB:
    """`ctx.db` in a call whose database the caller holds: the same methods as `DB`."""

    __slots__ = ("_channel",)

    def __init__(self, channel: HostChannel):
        self._channel = channel

    def execute(self, sql: str, params: Any = ()) -> RemoteCursor:
        return self._channel.statement(sql, params, False)

    def executemany(self, sql: str, seq: Any) -> RemoteCursor:
        return self._channel.statement(sql, list(seq), True)

    def query(self, sql: str, params: Any = ()) -> list[Row]:
        return self._channel.statement(sql, params, False).fetchall()

    def one(self, sql: str, params: Any = ()) -> Row | None:
        return self._channel.statement(sql, params, False).fetchone()

    def scalar(self, sql: str, params: Any = ()) -> Any:
        row = self._channel.statement(sql, params, False).fetchone()
        return None if row is None else next(iter(row.values()))


def _sql_bool(value: bytes) -> bool:
    return value not in (b"0", b"", b"0.0", b"false", b"False")


_LONG_DIGITS = re.compile(rb"\d{19}")


def loads_json(data: bytes) -> Any:
    """JSON text as `json.loads` reads it, through orjson (several times faster) wherever that
    reads the same: not for integers past 64 bits (orjson makes them floats) nor for what it
    refuses (NaN, lone surrogates), which json reads instead. ValueError if it is not JSON."""
    if _LONG_DIGITS.search(data) is None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data.decode())


def _sql_json(value: bytes) -> Any:
    try:
        return loads_json(value)
    except ValueError:  # not JSON after all (written around the CHECK): the text as stored
        return value.decode(errors="replace")


# Columns declared BOOLEAN (EnvSpec type "boolean") read back as True/False, not 1/0, and
# columns declared JSONTEXT (type "json") as decoded JSON; callers connect with
# detect_types=sqlite3.PARSE_DECLTYPES to get this. Dicts and lists bind as JSON text.
sqlite3.register_converter("BOOLEAN", _sql_bool)
sqlite3.register_converter("JSONTEXT", _sql_json)
sqlite3.register_adapter(dict, lambda v: json.dumps(v, ensure_ascii=False))
sqlite3.register_adapter(list, lambda v: json.dumps(v, ensure_ascii=False))


class Guard:
    """The SQLite authorizer and progress handler of a connection that runs tool SQL: rows
    only; no DDL, no transaction control, no attached files or pragmas, no writes from read
    tools, no access to the engine's bookkeeping tables, and no statement past the deadline.
    Inactive (everything allowed) while the engine runs its own statements."""

    __slots__ = ("active", "read_only", "deadline", "denied")

    def __init__(self) -> None:
        self.active = False
        self.read_only = False
        self.deadline = 0.0
        self.denied: tuple[int, str] | None = None  # the last statement refused, for messages

    def install(self, conn: sqlite3.Connection) -> None:
        conn.set_authorizer(self.authorize)
        conn.set_progress_handler(self.progress, 10000)  # ~0.1 ms of SQL between checks

    def authorize(self, action: int, arg1: Any, arg2: Any, db: Any, trigger: Any) -> int:
        if not self.active:
            return sqlite3.SQLITE_OK
        if action in _CONTROL or action in _DDL:
            self.denied = (action, arg1 or "")
            return sqlite3.SQLITE_DENY
        if action in _ROW_WRITES or action == _READ:
            if arg1 and arg1.startswith(INTERNAL_PREFIX) and not (
                    trigger and trigger.startswith(INTERNAL_PREFIX)):
                self.denied = (action, arg1)
                return sqlite3.SQLITE_DENY
            if self.read_only and action in _ROW_WRITES and not trigger:
                self.denied = (action, arg1 or "")
                return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def progress(self) -> int:
        # Interrupts a long-running SQL statement once the tool's time is up.
        return 1 if self.active and time.monotonic() > self.deadline else 0


class _Parameters:
    """A tool's keyword parameters, checked against a call's arguments without binding them
    (`inspect.Signature.bind` costs ~10 us a call); only a mismatch asks `bind` for its words."""

    __slots__ = ("signature", "names", "required", "any_keyword")

    def __init__(self, signature: inspect.Signature):
        self.signature = signature
        params = list(signature.parameters.values())[1:]  # the first one is ctx
        kinds = inspect.Parameter
        self.names = frozenset(p.name for p in params
                               if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY))
        self.required = frozenset(p.name for p in params if p.name in self.names
                                  and p.default is inspect.Parameter.empty)
        self.any_keyword = any(p.kind is kinds.VAR_KEYWORD for p in params)

    @classmethod
    def of(cls, fn: Any) -> _Parameters | None:
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):
            return None
        kinds = inspect.Parameter
        params = list(signature.parameters.values())
        if not params or params[0].kind not in (kinds.POSITIONAL_ONLY,
                                                kinds.POSITIONAL_OR_KEYWORD) or any(
                p.kind in (kinds.POSITIONAL_ONLY, kinds.VAR_POSITIONAL) for p in params[1:]):
            return _Slow(signature)  # unusual shapes: leave every check to bind()
        return cls(signature)

    def problem(self, args: dict[str, Any]) -> str | None:
        keys = args.keys()
        if self.required <= keys and (self.any_keyword or keys <= self.names):
            return None
        try:
            self.signature.bind(None, **args)
        except TypeError as exc:
            return str(exc)
        return None


class _Slow(_Parameters):
    def __init__(self, signature: inspect.Signature):
        self.signature = signature

    def problem(self, args: dict[str, Any]) -> str | None:
        try:
            self.signature.bind(None, **args)
        except TypeError as exc:
            return str(exc)
        return None


class Worker:
    def __init__(self, channel: HostChannel | None = None) -> None:
        self.envs: dict[str, dict[str, tuple[Any, bool, _Parameters | None]]] = {}
        self.guard = Guard()
        self.channel = channel  # to the caller, for calls whose database it holds ("remote")
        self.databases: OrderedDict[str, sqlite3.Connection] = OrderedDict()
        # The worker's own statements carry a per-process marker so a tool's identical text
        # can never reuse them from the statement cache (the authorizer runs at prepare time).
        tag = f" /* aw {os.urandom(8).hex()} */"
        self.sql_counters = f"SELECT name, n FROM {COUNTERS_TABLE}{tag}"
        self.sql_bump = (f"INSERT INTO {COUNTERS_TABLE} (name, n) VALUES (?, ?) ON CONFLICT"
                         f"(name) DO UPDATE SET n = excluded.n{tag}")
        self.sql_begin_write = f"BEGIN IMMEDIATE{tag}"
        self.sql_begin_read = f"BEGIN{tag}"

    def _connection(self, path: str, key: str | None = None) -> sqlite3.Connection:
        """The persistent connection to an episode database: its page and statement caches
        stay warm between calls. A reset by the caller changes the file through SQLite, which
        the connection notices at its next transaction (SQLite's change counter)."""
        key = key or path
        conn = self.databases.get(key)
        if conn is not None:
            self.databases.move_to_end(key)
            return conn
        conn = self.databases[key] = self._open(path)
        while len(self.databases) > MAX_OPEN_DATABASES:
            self.databases.popitem(last=False)[1].close()
        return conn

    def _open(self, path: str) -> sqlite3.Connection:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                               detect_types=sqlite3.PARSE_DECLTYPES, cached_statements=256)
        conn.row_factory = _row
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA recursive_triggers=ON")  # REPLACE deletes reach the undo log
        self.guard.install(conn)
        return conn

    def forget(self, paths: list[str]) -> None:
        for path in paths:
            conn = self.databases.pop(path, None)
            if conn is not None:
                conn.close()

    def load(self, req: dict[str, Any]) -> dict[str, Any]:
        """Compile an environment: its helpers once, then each tool in a namespace that starts
        as a copy of the helpers' globals. Module-level code runs under the tool time limit;
        a failure is kept and reported by every call it affects, never fatal to the worker."""
        timeout = float(req.get("timeout", 5.0))
        base: dict[str, Any] = {"__builtins__": builtins, "ToolError": ToolError,
                                "__name__": "agent_world_env_helpers"}
        failure = None
        if req.get("helpers"):
            failure = _exec_module(req["helpers"], "<helpers>", base, timeout)
            if failure is not None:
                failure = f"environment helpers failed to load: {failure}"
        compiled: dict[str, tuple[Any, bool, _Parameters | None]] = {}
        for name, tool in req["tools"].items():
            mutates = bool(tool.get("mutates", True))
            if failure is not None:
                compiled[name] = (failure, mutates, None)
                continue
            namespace = dict(base, __name__=f"agent_world_tool_{name}")
            problem = _exec_module(tool["source"], f"<tool {name}>", namespace, timeout)
            fn = namespace.get(name)
            if problem is None and not callable(fn):
                problem = f"source defines no function {name!r}"
            if problem is None:
                compiled[name] = (fn, mutates, _Parameters.of(fn))
            else:
                compiled[name] = (f"tool failed to load: {problem}", mutates, None)
        self.envs[req["env"]] = compiled
        return {"ok": True, "tools": len(compiled)}

    def call(self, req: dict[str, Any]) -> dict[str, Any]:
        env = self.envs.get(req["env"])
        if env is None:
            return {"ok": False, "kind": "env_not_loaded", "message": req["env"]}
        entry = env.get(req["tool"])
        if entry is None:
            return {"ok": False, "kind": "unknown_tool", "message": f"unknown tool {req['tool']!r}"}
        fn, mutates, signature = entry
        if isinstance(fn, str):  # the tool (or the environment's helpers) failed to load
            return {"ok": False, "kind": "tool_exception", "message": fn}
        args = req.get("args") or {}
        if signature is not None:  # a missing or unexpected argument is the caller's fault
            problem = signature.problem(args)
            if problem is not None:
                return {"ok": False, "kind": "invalid_arguments", "message": problem}
        if req.get("remote"):
            return self._call_remote(req, fn, mutates, args)
        path = req["db"]
        # persist: the path is the episode's own file for its lifetime (not a per-call copy)
        persist = bool(req.get("persist"))
        key = req.get("conn") or path
        conn = self._connection(path, key) if persist else self._open(path)
        try:
            conn.execute(self.sql_begin_write if mutates else self.sql_begin_read)
            counters = dict(tuple(r) for r in conn.execute(self.sql_counters).fetchall())
            before = conn.total_changes
            ctx = ToolContext(conn, int(req.get("seed", 0)), int(req.get("step", 0)),
                              req.get("clock", "2026-01-15T09:00:00"), counters,
                              read_only=not mutates)
            reply = self._run(fn, ctx, args, float(req.get("timeout", 5.0)), mutates)
            if not conn.in_transaction:  # OR ROLLBACK fired, or a write hit the deadline
                # (SQLite ends the transaction of an interrupted write): never commit
                return ended(reply)
            changed = conn.total_changes != before
            if reply["ok"] and changed:
                # ids and the clock advance only with committed changes
                conn.execute(self.sql_bump, (WRITES_COUNTER, ctx.writes + 1))
                for prefix, n in ctx.issued.items():
                    conn.execute(self.sql_bump, (prefix, counters.get(prefix, 0) + n))
                conn.commit()
                reply["wrote"] = True
            else:
                conn.rollback()
            return reply
        except BaseException:
            persist = False  # a connection in an unknown state is not reused
            raise
        finally:
            if not persist:
                self.forget([key])
                conn.close()

    def _call_remote(self, req: dict[str, Any], fn: Any, mutates: bool,
                     args: dict[str, Any]) -> dict[str, Any]:
        """A call whose database the caller holds (and has begun a transaction on): statements
        travel as frames; the caller commits or rolls back after the reply, which carries the
        ids this call issued."""
        if self.channel is None:
            return {"ok": False, "kind": "worker_error", "message": "no channel to the caller"}
        counters = req.get("counters") or {}
        ctx = ToolContext(RemoteDB(self.channel), int(req.get("seed", 0)),
                          int(req.get("step", 0)), req.get("clock", "2026-01-15T09:00:00"),
                          counters, read_only=not mutates)
        channel = self.channel
        ahead = req.get("ahead")
        channel.begin(req.get("id"), ahead, bool(req.get("defer")))
        pending: list[list[Any]] = []
        try:
            reply = self._run(fn, ctx, args, float(req.get("timeout", 5.0)), mutates)
            if reply["ok"] and channel.kept():
                try:  # a queued write's cursor outlives the call: its answers come now
                    channel.flush(channel.call_id)
                except Rerun:
                    reply = {"ok": False, "kind": "rerun", "message": "a deferred write failed"}
        finally:
            pending = channel.end()
        if reply["ok"]:
            reply["issued"] = ctx.issued
        if ahead:
            reply["ahead_used"] = channel.used
        if pending:  # deferred writes the caller runs before it settles the call
            reply["pending"] = pending
        return reply

    def _run(self, fn: Any, ctx: ToolContext, args: dict[str, Any], timeout: float,
             mutates: bool) -> dict:
        guard = self.guard
        guard.deadline = time.monotonic() + timeout
        guard.read_only = not mutates
        guard.denied = None
        guard.active = True
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            result = fn(ctx, **args)
        except ToolTimeout:
            return {"ok": False, "kind": "timeout", "message": f"tool exceeded {timeout:g}s"}
        except Rerun as exc:  # a deferred write failed: the caller runs the call again
            if self.channel is None or not self.channel.void:  # raised by tool code itself
                return {"ok": False, "kind": "tool_exception", "message": _describe(exc)}
            return {"ok": False, "kind": "rerun", "message": "a deferred write failed"}
        except ToolError as exc:
            return {"ok": False, "kind": "tool_error", "message": str(exc)}
        except sqlite3.IntegrityError as exc:
            return {"ok": False, "kind": "constraint_violation", "message": str(exc)}
        except sqlite3.DatabaseError as exc:
            msg = str(exc)
            if "interrupted" in msg and time.monotonic() > guard.deadline:
                return {"ok": False, "kind": "timeout", "message": f"tool exceeded {timeout:g}s"}
            if "not authorized" in msg or "prohibited" in msg:
                return {"ok": False, "kind": "permission_denied",
                        "message": self._denial(fn.__name__, mutates, msg)}
            return {"ok": False, "kind": "tool_exception", "message": _describe(exc)}
        except BaseException as exc:  # SystemExit too: a tool must not end the worker
            return {"ok": False, "kind": "tool_exception", "message": _describe(exc)}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            guard.active = False
        return encode_result(result)

    def _denial(self, tool: str, mutates: bool, msg: str) -> str:
        """Why a statement was refused, naming the rule (and the declaration) behind it."""
        action, target = self.guard.denied or (None, "")
        if action in _DDL:
            return (f"{msg}: tools may not change the schema (CREATE, DROP, ALTER, ...); "
                    "the tables are the environment's")
        if action in _CONTROL:
            return (f"{msg}: tools may not control transactions, attach databases or run "
                    "pragmas; each call is one transaction the engine commits or rolls back")
        if target.startswith(INTERNAL_PREFIX):
            return f"{msg}: {target} is the engine's own bookkeeping"
        if not mutates:
            what = f"{_WHAT[action]} {target}" if action in _WHAT else "a write"
            return (f"tool {tool!r} is declared read-only (mutates: false) but tried {what}; "
                    "declare it with mutates: true if it is meant to write")
        return msg


# json's own encoder, made once: it defines what a result may be (orjson would turn NaN into
# null and dates into text, both silent changes of what the tool returned)
_encode_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def encode_result(result: Any) -> dict[str, Any]:
    """The reply for a tool's return value, encoded once: the JSON text travels as is after the
    reply frame's envelope. Values JSON cannot carry (sets, bytes, dates, NaN, lone
    surrogates) are an error of the tool, not silently changed; so is nesting past
    MAX_RESULT_DEPTH."""
    try:
        payload = _encode_json(result).encode()
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        return {"ok": False, "kind": "tool_exception",
                "message": f"result is not JSON: {exc} (return dicts, lists, str, int, "
                           "float, bool or None)"}
    except RecursionError:
        return _too_deep()
    if len(payload) > MAX_RESULT_BYTES:
        return {"ok": False, "kind": "tool_exception",
                "message": f"result too large ({len(payload):,} bytes; the limit is "
                           f"{MAX_RESULT_BYTES:,}): return fewer rows"}
    # nesting needs as many brackets: most results have too few to be worth walking
    if (payload.count(b"[") + payload.count(b"{") > MAX_RESULT_DEPTH
            and _nests_deeper(result, MAX_RESULT_DEPTH)):
        return _too_deep()
    return {"ok": True, _RAW_RESULT: payload}


def _too_deep() -> dict[str, Any]:
    return {"ok": False, "kind": "tool_exception",
            "message": f"result nests objects and arrays more than {MAX_RESULT_DEPTH} levels "
                       "deep: return flatter data"}


def _nests_deeper(value: Any, limit: int) -> bool:
    """Whether objects and arrays (lists, tuples, dicts) in `value` nest past `limit`. The
    base classes' own iterators, as json's encoder uses: a subclass's methods are tool code."""
    stack = [(value, 1)] if isinstance(value, dict | list | tuple) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = (dict.values(node) if isinstance(node, dict) else list.__iter__(node)
                    if isinstance(node, list) else tuple.__iter__(node))
        for child in children:
            if isinstance(child, dict | list | tuple):
                stack.append((child, depth + 1))
    return False


def _describe(exc: BaseException) -> str:
    """'KeyError: 'x' (line 3 of <tool get_user>)': the innermost frame of environment code."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = next((f" (line {f.lineno} of {f.filename})" for f in reversed(tb)
                  if f.filename.startswith(("<tool", "<helpers"))), "")
    return f"{type(exc).__name__}: {exc}{where}"


def _exec_module(source: str, filename: str, namespace: dict[str, Any],
                 timeout: float) -> str | None:
    """Run module-level environment code under a time limit: None, or what went wrong."""
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        exec(compile(source, filename, "exec"), namespace)
    except ToolTimeout:
        return f"module-level code exceeded {timeout:g}s"
    except BaseException as exc:  # SystemExit included: module code must not end the worker
        return _describe(exc)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return None


_channel: HostChannel | None = None  # the worker's, once main() made it


def _on_alarm(signum: int, frame: Any) -> None:
    channel = _channel
    if channel is not None and channel.busy == threading.get_ident():
        # mid-exchange: raising now would leave an answer unread in the stream; the
        # exchange raises the timeout once the answer is in (the caller bounds the statement
        # by the same deadline)
        channel.late = True
        return
    raise ToolTimeout()


class InputWaiter:
    """Keeps the worker awake for `spin_s` after it sent a frame, polling for the caller's
    next one, before it sleeps in `read`.

    Why: on a virtual machine, waking a process that sleeps on the other core can cost more
    than the work of a step (the interrupt between cores goes through the hypervisor; figures
    in docs/environments.md). A caller stepping many episodes sends the next
    request (or a statement's answer) well within that window, so the worker takes it without
    being woken. Bounded: an idle worker polls for `spin_s` once per frame, then sleeps; it
    yields the core to any other task that is ready meanwhile."""

    def __init__(self, fd: int, spin_s: float):
        self.spin_s = spin_s
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def wait(self) -> None:
        """Return when the input has something to read or `spin_s` passed (the read that
        follows blocks as before). Frames strictly alternate, so nothing is ever left in the
        reader's buffer that this poll of the descriptor would miss."""
        if self.spin_s <= 0:
            return
        poll, clock, yield_core = self._poll.poll, time.perf_counter, os.sched_yield
        end = clock() + self.spin_s
        while not poll(0) and clock() < end:
            yield_core()


def _read_exact(stream: Any, size: int) -> bytes | None:
    # A pipe returns at most its buffer (64 KiB) per read: loop until the frame is whole.
    chunks = []
    while size > 0:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(stream: Any, trusted: bool = False) -> dict[str, Any] | None:
    """One frame, or None at end of stream (or when the frame is cut short, oversized or not a
    JSON object). Only a `trusted` reader (the worker, reading its caller) accepts marshal
    frames: marshal is fast and carries bytes, but must never read what tool code wrote."""
    header = _read_exact(stream, _HEADER.size)
    if header is None:
        return None
    size, packed = frame_size(header)
    if size > MAX_FRAME_BYTES or (packed and not trusted):
        return None
    body = _read_exact(stream, size)
    return None if body is None else decode_body(body, packed)


def frame_size(header: bytes) -> tuple[int, bool]:
    """(body size, whether the body is marshal) from a frame's 4-byte header."""
    (size,) = _HEADER.unpack(header)
    return size & ~_MARSHAL_FLAG, bool(size & _MARSHAL_FLAG)


def decode_body(body: bytes, packed: bool = False) -> dict[str, Any] | None:
    """A frame's message, or None when it is not one. A JSON frame may end with a newline and
    a tool's result as JSON text (`loads_json`: exact as json reads it); the envelope is read
    with orjson (safe and fast on what the worker sends; JSON encoders never write a raw
    newline)."""
    try:
        if packed:
            message = marshal.loads(body)
        else:
            cut = body.find(b"\n")
            message = orjson.loads(body if cut < 0 else body[:cut])
            if cut >= 0 and isinstance(message, dict):
                message["result"] = loads_json(body[cut + 1:])
    except (ValueError, EOFError, TypeError):  # orjson.JSONDecodeError is a ValueError
        return None
    return message if isinstance(message, dict) else None


def encode_packed(message: dict[str, Any]) -> bytes:
    """A marshal frame (caller -> worker only: requests and statement answers). marshal is
    exact for every value JSON can carry and then some (bytes); a value it cannot carry goes
    through JSON first, as the JSON protocol would have sent it."""
    try:
        data = marshal.dumps(message)
    except ValueError:  # e.g. a str subclass among the arguments
        data = marshal.dumps(json.loads(json.dumps(message, ensure_ascii=False)))
    if len(data) > MAX_FRAME_BYTES:
        raise ValueError(f"message too large ({len(data):,} bytes; the limit is "
                         f"{MAX_FRAME_BYTES:,})")
    return _HEADER.pack(len(data) | _MARSHAL_FLAG) + data


def encode_frame(message: dict[str, Any], strict: bool = False) -> bytes:
    """A JSON frame (worker -> caller): orjson for the envelope, then the result's JSON text
    from `encode_result` after a newline. A message orjson cannot encode (a lone surrogate
    in an error message, an integer past 64 bits) goes through json, with unencodable
    characters replaced unless `strict` (statements: those are the tool's error)."""
    raw = message.pop(_RAW_RESULT, None)
    try:
        data = orjson.dumps(message)
    except TypeError:
        text = json.dumps(message, ensure_ascii=False)
        data = text.encode() if strict else text.encode("utf-8", "replace")
    if raw is not None:
        data = b"%b\n%b" % (data, raw)
    if len(data) > MAX_FRAME_BYTES:
        raise ValueError(f"message too large ({len(data):,} bytes; the limit is "
                         f"{MAX_FRAME_BYTES:,})")
    return _HEADER.pack(len(data)) + data


def write_frame(stream: Any, message: dict[str, Any], strict: bool = False) -> None:
    stream.write(encode_frame(message, strict))
    stream.flush()


_statm: list[int] = []  # /proc/self/statm, opened once: one pread per call


def _rss_bytes() -> int:
    """This process's resident memory now (the caller recycles a worker that holds too much)."""
    try:
        if not _statm:
            _statm.append(os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC))
        return int(os.pread(_statm[0], 128, 0).split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m agent_world.envs.worker")
    ap.add_argument("--spin-us", type=float, default=DEFAULT_SPIN_US,
                    help="how long to poll for the next frame before sleeping (0: never)")
    opts = ap.parse_args(argv)
    # Run as `python -m`, this module is __main__: make `from agent_world.envs import ToolError`
    # in tool code give the very class the worker catches.
    sys.modules.setdefault("agent_world.envs.worker", sys.modules[__name__])
    # Keep the protocol streams private; tool code gets /dev/null and stderr instead.
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    signal.signal(signal.SIGALRM, _on_alarm)
    buffered_in = io.BufferedReader(proto_in)
    waiter = InputWaiter(proto_in.fileno(), max(0.0, opts.spin_us) / 1e6)
    worker = Worker()
    global _channel
    worker.channel = _channel = HostChannel(buffered_in, proto_out, worker.guard, waiter)
    while True:
        waiter.wait()
        req = read_frame(buffered_in, trusted=True)
        if req is None:
            return
        op = req.get("op")
        try:
            if req.get("forget"):  # episodes closed since the last request
                worker.forget(req["forget"])
            if op == "call":
                reply = worker.call(req)
            elif op == "load":
                reply = worker.load(req)
            elif op == "ping":
                reply = {"ok": True, "pid": os.getpid()}
            elif op == "forget":
                reply = {"ok": True}
            else:
                reply = {"ok": False, "kind": "bad_request", "message": f"unknown op {op!r}"}
        except ToolTimeout:  # the alarm came as the call ended: the same words as in it
            reply = {"ok": False, "kind": "timeout",
                     "message": f"tool exceeded {float(req.get('timeout', 5.0)):g}s"}
        except Exception as exc:  # the worker itself must survive any single bad request
            reply = {"ok": False, "kind": "worker_error", "message": f"{type(exc).__name__}: {exc}"}
        reply["id"] = req.get("id")  # the caller drops the worker on any reply without it
        if op == "call":
            reply["rss"] = _rss_bytes()
        write_frame(proto_out, reply)


if __name__ == "__main__":
    main()
