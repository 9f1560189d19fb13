"""Calls whose database the caller holds (the sandboxed engine): the worker's side.

Each statement is one frame to the caller, which runs it on the episode's connection under its
own Guard (`agent_world.envs.hostdb`). Tool code then has no file, no connection and no guard
within reach: only statements, checked by the caller. Writes may be deferred and answers taken
from those the caller ran ahead (see `HostChannel`).
"""

from __future__ import annotations

import marshal
import os
import re
import sqlite3
import sys
import threading
from typing import Any

from agent_world.envs.frames import InputWaiter, _wire_params, encode_frame, read_frame
from agent_world.envs.tool_sql import DuplicateColumnError, Guard, Row, ToolTimeout, _unique


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
    comes due during the exchange is raised once the answer is in (see `worker._on_alarm`; the
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
        # agent_world.envs.forecast.Forecast) and how many the tool took
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
            if self.late:  # the time ran out during the exchange (see worker._on_alarm)
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
