"""Episode databases held by the caller's process, for sandboxed tool workers.

In a sandboxed runtime the worker that runs an environment's tool code holds no database and
sees no episode file. Each episode keeps one persistent connection here (warm page and
statement caches, reused by `reset()`'s undo log); a call begins its transaction here, the
worker sends each statement the tool runs as a frame, `serve` runs it under a `Guard` (the
same rules the unsandboxed worker applies to itself) and answers with the rows, and `finish`
commits or rolls back when the reply comes. So tool code cannot open another episode, lift the
guard, commit half a call or touch the engine's bookkeeping: it has statements, nothing else.

Every tool statement gets a suffix with a per-process random tag and the call's mode: prepared
statements are cached by their text, and the authorizer only runs when a statement is
prepared, so a tool's statement must never be one the engine prepared with the guard off, nor
one a write call prepared when a read call runs it. The statements a call is expected to begin
with are run ahead and sent with the request (`agent_world.envs.forecast`).
"""

from __future__ import annotations

import functools
import marshal
import os
import sqlite3
import time
import urllib.parse
from pathlib import Path
from typing import Any

from agent_world.envs.database import undo_changes
from agent_world.envs.forecast import (
    AHEAD_SHARE,
    MAX_AHEAD,
    MAX_AHEAD_BYTES,
    CallValues,
    Forecast,
    _computed,
    _fill,
    _is_select,
)
from agent_world.envs.frames import MAX_FRAME_BYTES, _params
from agent_world.envs.host_channel import MAX_DEFERRED, plain_write
from agent_world.envs.spec import EnvSpec
from agent_world.envs.tool_sql import COUNTERS_TABLE, ENDED_MESSAGE, WRITES_COUNTER, Guard, ended

_TAG = os.urandom(8).hex()
_TOOL_MARK = {True: f"\n-- aw tool write {_TAG}", False: f"\n-- aw tool read {_TAG}"}
_BEGIN = {True: f"BEGIN IMMEDIATE /* {_TAG} */", False: f"BEGIN /* {_TAG} */"}
_COUNTERS = f"SELECT name, n FROM {COUNTERS_TABLE} /* {_TAG} */"
_ROLLBACK = f"ROLLBACK /* {_TAG} */"
# what puts last_insert_rowid() back after writes run ahead were undone (a rollback keeps it)
_ROWID_TABLE = f"CREATE TEMP TABLE IF NOT EXISTS _aw_rowid (x) /* {_TAG} */"
_ROWID_SET = f"INSERT INTO temp._aw_rowid (rowid) VALUES (?) /* {_TAG} */"
_ROWID_CLEAR = f"DELETE FROM temp._aw_rowid /* {_TAG} */"
BUMP_ROWS = 4  # counters set per statement: a commit's write counter and its id prefixes


@functools.cache
def _bump(k: int) -> str:
    """The statement that sets `k` id/clock counters at once."""
    rows = ", ".join(["(?, ?)"] * k)
    return (f"INSERT INTO {COUNTERS_TABLE} (name, n) VALUES {rows} ON CONFLICT(name) "
            f"DO UPDATE SET n = excluded.n /* {_TAG} */")

CHUNK_ROWS = 512  # rows per marshal chunk of an answer
MAX_ANSWER_BYTES = MAX_FRAME_BYTES // 2  # one statement's rows; more is an error of the tool
MAX_VALUE_BYTES = 32 << 20  # longest string or blob a statement may build (SQLITE_LIMIT_LENGTH)
_MAX_ISSUED = 1_000_000


class AnswerTooLarge(Exception):
    pass


_RERUN = {"error": "rerun", "message": "a deferred write failed; the call runs again"}


class EpisodeDB:
    """One episode's connection in the caller's process; not thread-safe (one call at a time,
    like the episode itself)."""

    def __init__(self, path: Path, seed: int = 0, clock_start: str = "2026-01-15T09:00:00",
                 fresh: bool = False, sole: bool = False):
        """`fresh`: the file is a copy of its template, whose id/clock counters are empty
        (nothing committed yet), so the first call need not read them. `sole`: these are the
        only connections that write the file (a sandboxed runtime; see `_connect`)."""
        self.seed, self.clock_start = seed, clock_start
        self.sole = sole
        conn = _connect(path, sole)
        conn.execute("PRAGMA foreign_keys=ON")
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        # made before any statement is prepared: what `renew` and `_undo_from` use
        conn.execute(_ROWID_TABLE)
        self.guard = Guard()
        self.guard.install(conn)
        self.conn = conn
        self._mutates = False
        self._before = 0
        # the id/clock counters as last committed: only this connection writes the episode
        self._counters: dict[str, int] | None = {} if fresh else None
        self._mark = _TOOL_MARK[False]
        # this call's answers sent ahead ([sql, params, answer, first row]), and the leading
        # reads the tool sent itself (until it sent anything else)
        self._ahead: list[list[Any]] = []
        # writes run ahead: (index in _ahead, total_changes and last_insert_rowid before it)
        # with a savepoint each; settled once the worker says how many answers the tool took
        self._ahead_writes: list[tuple[int, int, int]] = []
        self._trace: list[tuple[str, Any, tuple | None]] = []
        self._tracing = True
        self._timeout = 0.0
        self.void = False  # a write the tool deferred failed: this run of the call is void
        self._defer = False  # this call may defer writes
        self._used = False  # a call ran since the connection opened or was renewed
        # the undo log's own connection (foreign keys off), sharing this one's page cache
        self._undo: sqlite3.Connection | None = None

    def begin(self, mutates: bool, timeout_s: float, defer: bool = False) -> dict[str, int]:
        """Open the call's transaction; the id/clock counters the call starts from. `defer`:
        the call may defer writes (see `serve` and `settle`)."""
        conn = self.conn
        conn.execute(_BEGIN[mutates])
        self._used = True
        if self._counters is None:
            self._counters = dict(conn.execute(_COUNTERS).fetchall())
        self._before = conn.total_changes
        self._mutates = mutates
        self._mark = _TOOL_MARK[mutates]
        guard = self.guard
        guard.read_only = not mutates
        guard.deadline = time.monotonic() + timeout_s
        guard.denied = None
        self._timeout = timeout_s
        self._ahead, self._trace, self._tracing = [], [], True
        self.void, self._defer = False, defer
        self._ahead_writes = []
        return self._counters

    def serve(self, frame: dict[str, Any]) -> dict[str, Any]:
        """Run one statement the tool sent, after the writes it deferred (if any); the answer
        frame (rows or the error, and [rowcount, lastrowid] of each deferred write)."""
        if self.void:  # a deferred write failed: nothing more runs in this run of the call
            return _RERUN
        if self._ahead_writes:  # the first frame: undo the writes run ahead the tool did not take
            self._drop_unused(frame.get("used"))
        before = frame.get("before")
        done = None
        if before is not None:
            done = self._run_deferred(before)
            if done is None:
                return _RERUN
        sql, wire, many = frame.get("sql"), frame.get("params"), bool(frame.get("many"))
        if sql is None and done is not None:  # the deferred writes alone
            return {"before": done}
        answer, first = self._run(sql, wire, many, self.guard.read_only)
        if done is not None:
            answer["before"] = done
        if self._tracing:  # still in the call's leading statements: what the forecast learns
            if (many or "error" in answer or not isinstance(sql, str)
                    or not (_is_select(sql) or self._mutates and plain_write(sql))
                    or len(self._trace) >= MAX_AHEAD
                    or sum(len(c) for c in answer["chunks"]) > MAX_AHEAD_BYTES):
                self._tracing = False  # big answers are not worth running ahead either
            else:
                self._trace.append((sql, wire, first if answer["names"] is not None
                                    else (answer["lastrowid"],)))
        return answer

    def _run_deferred(self, writes: Any) -> list[list[Any]] | None:
        """Run writes the tool deferred, in order, under the guard: [[rowcount, lastrowid],
        ...], or None (and this run of the call void) when one fails or the list is not one
        of writes; the caller then runs the call again without deferring (see
        `agent_world.envs.host_channel.HostChannel`)."""
        done = []
        if not self._defer or not isinstance(writes, list) or len(writes) > MAX_DEFERRED:
            self.void = True
            return None
        for item in writes:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                    and plain_write(item[0])):
                self.void = True
                return None
            answer, _ = self._run(item[0], item[1], False, self.guard.read_only)
            if "error" in answer or answer["names"] is not None:
                self.void = True
                return None
            done.append([answer["rowcount"], answer["lastrowid"]])
            if self._tracing:
                if len(self._trace) >= MAX_AHEAD:
                    self._tracing = False
                else:
                    self._trace.append((item[0], item[1], (answer["lastrowid"],)))
        return done

    def settle(self, reply: dict[str, Any]) -> bool:
        """After a call that deferred writes: run those still pending with its reply. True
        when this run of the call is void (a deferred write failed): roll back and run the
        call again without deferring."""
        pending = reply.pop("pending", None)
        if self._ahead_writes:
            self._drop_unused(reply.get("ahead_used", 0))
        if not self.void and pending is not None:
            if time.monotonic() > self.guard.deadline:  # a timeout reply: a fresh deadline
                self.guard.deadline = time.monotonic() + self._timeout
            self._run_deferred(pending)
        return self.void

    def _run(self, sql: Any, wire: Any, many: bool,
             read_only: bool) -> tuple[dict[str, Any], tuple | None]:
        """Run one tool statement under the guard: the answer, and its first row (or None)."""
        guard = self.guard
        first = None
        try:
            if not isinstance(sql, str):
                raise sqlite3.ProgrammingError("the statement must be a string")
            try:
                params = _params(wire, many)
            except (ValueError, TypeError) as exc:
                raise sqlite3.ProgrammingError(str(exc)) from None
            if not self.conn.in_transaction:  # an OR ROLLBACK ended it (see tool_context.DB)
                raise sqlite3.OperationalError(ENDED_MESSAGE)
            guard.denied = None
            guard.read_only = read_only
            guard.active = True
            try:
                cur = (self.conn.executemany(sql + self._mark, params) if many
                       else self.conn.execute(sql + self._mark, params))
                names = None if cur.description is None else [d[0] for d in cur.description]
                chunks: list[bytes] = []
                size = 0
                if names is not None:
                    while rows := cur.fetchmany(CHUNK_ROWS):
                        if first is None:
                            first = rows[0]
                        chunk = marshal.dumps(rows)
                        size += len(chunk)
                        if size > MAX_ANSWER_BYTES:
                            raise AnswerTooLarge(
                                f"the statement's rows exceed {MAX_ANSWER_BYTES:,} bytes; "
                                "select fewer rows or columns")
                        chunks.append(chunk)
                        if len(rows) < CHUNK_ROWS:  # that was the last of them
                            break
            finally:
                guard.active = False
                guard.read_only = not self._mutates
            return {"names": names, "chunks": chunks, "rowcount": cur.rowcount,
                    "lastrowid": cur.lastrowid}, first
        except sqlite3.Error as exc:
            if time.monotonic() > guard.deadline:  # interrupted by the call's deadline
                return {"error": "timeout", "message": "the call's time ran out"}, None
            return {"error": type(exc).__name__, "message": str(exc),
                    "denied": list(guard.denied) if guard.denied else None}, None
        except AnswerTooLarge as exc:
            return {"error": "OperationalError", "message": str(exc), "denied": None}, None
        except (ValueError, TypeError, OverflowError, MemoryError) as exc:
            return {"error": "DatabaseError", "message": f"{type(exc).__name__}: {exc}",
                    "denied": None}, None

    def answer_ahead(self, forecast: Forecast, args: dict[str, Any]) -> list[list[Any]]:
        """Run the statements the forecast expects this call to start with (right after
        `begin`, as the tool itself would), each under the guard with the call's rules, a write
        behind its own savepoint: [[sql, params, answer], ...] for the worker, which uses an
        answer only when the tool sends exactly that statement, in that order. Stops at the
        first statement it cannot fill in."""
        self._ahead = []
        if forecast.off or not forecast.plan:
            return self._ahead
        # a slow statement run ahead must not take the call's time (the tool may not send it):
        # its own share of the limit, and the call's full limit from when the worker has it
        guard = self.guard
        guard.deadline = min(guard.deadline, time.monotonic() + self._timeout * AHEAD_SHARE)
        try:
            self._run_ahead(forecast, args)
        finally:
            guard.deadline = time.monotonic() + self._timeout
        forecast.sent += len(self._ahead)
        return [a[:3] for a in self._ahead]

    def _run_ahead(self, forecast: Forecast, args: dict[str, Any]) -> None:
        firsts: list[tuple | None] = []
        budget = MAX_AHEAD_BYTES
        known = self._known()
        conn = self.conn
        for sql, recipe in forecast.plan:
            wire = _fill(recipe, args, firsts, known)
            if wire is None:
                break
            write = not _is_select(sql)
            if write:
                if not (self._mutates and plain_write(sql)):
                    break
                rowid = conn.execute(f"SAVEPOINT aw_{_TAG}_{len(self._ahead)}").lastrowid
                self._ahead_writes.append((len(self._ahead), conn.total_changes, rowid))
            answer, first = self._run(sql, wire, False, not self._mutates)
            if not conn.in_transaction or answer.get("error") == "timeout":
                # too slow to run ahead (an interrupted write ends SQLite's transaction: then
                # nothing run ahead stands, and the call begins again)
                forecast.plan = forecast.plan[:len(self._ahead)]
                if not conn.in_transaction:
                    conn.execute(_BEGIN[self._mutates])
                    self._before = conn.total_changes
                    self._ahead, self._ahead_writes = [], []
                elif write:
                    self._undo_from(len(self._ahead_writes) - 1)
                break
            if "error" in answer or (write and answer["names"] is not None):
                if write:
                    self._undo_from(len(self._ahead_writes) - 1)
                break
            budget -= sum(len(c) for c in answer["chunks"])
            if budget < 0:  # not worth sending (nor running again): the plan ends before it
                forecast.plan = forecast.plan[:len(self._ahead)]
                if write:
                    self._undo_from(len(self._ahead_writes) - 1)
                break
            if write:
                first = (answer["lastrowid"],)
            firsts.append(first)
            self._ahead.append([sql, wire, answer, first, recipe])

    def _known(self) -> CallValues:
        return CallValues(self.seed, self.clock_start, self._counters or {})

    def _undo_from(self, k: int) -> None:
        """Roll back to the savepoint of the k-th write run ahead (it and all after it); the
        call's count of changes forgets them."""
        if not self.conn.in_transaction:  # ended by OR ROLLBACK: nothing left to undo
            self._ahead_writes = []
            return
        conn = self.conn
        index, changes, rowid = self._ahead_writes[k]
        undone = conn.total_changes - changes
        if conn.execute(f"ROLLBACK TO aw_{_TAG}_{index}").lastrowid != rowid:
            # an insert run ahead and undone: last_insert_rowid() (and the lastrowid of the
            # tool's next UPDATE) must not show it
            conn.execute(_ROWID_TABLE)
            conn.execute(_ROWID_SET, (rowid,))
            conn.execute(_ROWID_CLEAR)
            undone = conn.total_changes - changes
        self._before += undone
        del self._ahead_writes[k:]

    def _drop_unused(self, used: Any) -> None:
        """The tool took the first `used` answers sent ahead: undo the writes run ahead after
        those (once per call; an unreadable count undoes them all)."""
        if type(used) is not int or used < 0:
            used = 0
        k = next((k for k, (index, _, _) in enumerate(self._ahead_writes) if index >= used),
                 None)
        if k is not None:
            self._undo_from(k)
        self._ahead_writes = []

    def finish(self, reply: dict[str, Any], forecast: Forecast | None = None,
               args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Commit the call's changes if the tool returned normally and changed something (the
        id counters and the write clock advance with them); otherwise roll back. The
        forecast learns how this call began."""
        issued = reply.pop("issued", None)
        used = reply.pop("ahead_used", 0)
        if self._ahead_writes:  # no statement frame came: the reply says how many it took
            self._drop_unused(used)
        if forecast is not None:
            ahead = self._ahead
            used = used if type(used) is int and 0 <= used <= len(ahead) else 0
            forecast.used += used
            trace = self._trace
            if used < len(ahead) and trace and _computed(ahead[used], trace[0]):
                forecast.missed.add(trace[0][0])
            # the worker takes answers sent ahead only as a prefix: the tool's own statements
            # come after them. A call that took the whole plan and sent nothing it could add
            # leaves the plan as it is.
            if not (used == len(ahead) == len(forecast.plan) and (
                    not trace or trace[0][0] in forecast.missed or used >= MAX_AHEAD)):
                forecast.learn([(a[0], a[1], a[3]) for a in ahead[:used]] + trace,
                               args or {}, self._known())
        self._ahead, self._trace = [], []
        conn = self.conn
        if not conn.in_transaction:  # an OR ROLLBACK or an interrupted write ended it
            self._ahead_writes = []
            return ended(reply)
        if reply.get("kind") == "rerun":  # not after a deferred write failed: tool code said so
            self.rollback()
            return {"ok": False, "kind": "worker_error",
                    "message": "the worker asked to run the call again unprompted"}
        if self.void:  # only a call run again ends here void: its worker broke the protocol
            self.rollback()
            return {"ok": False, "kind": "worker_error",
                    "message": "the call sent deferred writes it was not allowed to defer"}
        if not (reply.get("ok") and self._mutates and conn.total_changes != self._before):
            self.rollback()
            return reply
        if not isinstance(issued, dict) or not all(
                isinstance(k, str) and len(k) <= 200 and type(v) is int and 0 < v <= _MAX_ISSUED
                for k, v in issued.items()) or len(issued) > 1000:
            self.rollback()
            return {"ok": False, "kind": "worker_error",
                    "message": "the worker's reply carried malformed id counters"}
        counters = dict(self._counters or {})
        counters[WRITES_COUNTER] = counters.get(WRITES_COUNTER, 0) + 1
        for prefix, n in issued.items():
            counters[prefix] = counters.get(prefix, 0) + n
        names = (WRITES_COUNTER, *issued)
        try:  # one statement for the usual commit; a few rows each, within variable limits
            for i in range(0, len(names), BUMP_ROWS):
                part = names[i:i + BUMP_ROWS]
                conn.execute(_bump(len(part)), [x for name in part for x in (name, counters[name])])
            conn.commit()
        except sqlite3.IntegrityError as exc:  # a deferred constraint, checked at commit
            self.rollback()
            return {"ok": False, "kind": "constraint_violation", "message": str(exc)}
        self._counters = counters
        reply["wrote"] = True
        return reply

    def undo(self, spec: EnvSpec, path: Path) -> int:
        """Back to the template state through the undo log (`undo_changes`), with foreign
        keys off as that needs (the log already holds every cascaded change). It runs on a
        second connection that shares this one's page cache (SQLite's shared-cache mode):
        turning foreign keys off and on here would expire every statement this connection
        has prepared, and the next calls would compile them all again (~2x slower)."""
        self._counters = None  # read again at the next call if the undo fails
        if self._undo is None:
            self._undo = _connect(path, self.sole)  # foreign keys stay off on this one
        try:
            undone = undo_changes(spec, path, self._undo)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc):
                raise
            # a statement of this connection still reads (its table is locked against the
            # other connection): undo here, at the cost of expiring the prepared statements
            self.conn.execute("PRAGMA foreign_keys=OFF")
            try:
                undone = undo_changes(spec, path, self.conn)
            finally:
                self.conn.execute("PRAGMA foreign_keys=ON")
        self._counters = {}  # the undo cleared them with everything else
        return undone

    def renew(self, seed: int) -> None:
        """Make the connection look, to the next call, as a newly opened one would: the seed
        its ids derive from, `last_insert_rowid()` (a cursor's `lastrowid`, even a SELECT's)
        and `changes()` back to 0. For a reset or a reused episode (see `EnvRuntime.open`);
        the database itself is reset by `undo`."""
        self.seed = seed
        if self._used:
            conn = self.conn
            conn.execute(_ROWID_SET, (0,))
            conn.execute(_ROWID_CLEAR)  # changes() == 1 (that row) ...
            conn.execute(_ROWID_CLEAR)  # ... and 0 after deleting nothing
            self._used = False

    def rollback(self) -> None:
        if self.conn.in_transaction:
            # a statement, not conn.rollback(): that also resets every cached statement of the
            # connection (~15 us with a warm cache, on every read call)
            self.conn.execute(_ROLLBACK)

    def close(self) -> None:
        if self._undo is not None:
            self._undo.close()
        self.conn.close()


def _connect(path: Path, sole: bool = False) -> sqlite3.Connection:
    """A connection to an episode file in shared-cache mode (an episode's connections share
    one page cache and parsed schema; see `EpisodeDB.undo`).

    `sole`: no other connection ever writes the file (the sandboxed engine: tool code reaches
    the database only through this process). The page cache is then kept across calls without
    SQLite checking, at the start of every transaction, whether another process changed the
    file (locking_mode=EXCLUSIVE: ~8 syscalls less per call, 10-20 % of a step after an idle
    gap), and without file locks (the unix-none VFS), so anything may still read the file
    between calls, with a connection opened after the call: in this mode SQLite leaves the
    file's change counter alone, and a connection kept open across calls may not see them."""
    uri = f"file:{urllib.parse.quote(str(path))}?cache=shared"
    try:
        conn = sqlite3.connect(uri + "&vfs=unix-none" if sole else uri, uri=True,
                               isolation_level=None, check_same_thread=False,
                               detect_types=sqlite3.PARSE_DECLTYPES, cached_statements=256)
    except sqlite3.OperationalError:
        if not sole:
            raise
        return _connect(path)  # no such VFS (not a unix build): the usual locks
    conn.execute("PRAGMA recursive_triggers=ON")  # REPLACE deletes reach the undo log
    # Only this process writes through these connections, and the episode file lives and
    # dies with them: no journal file to create and delete, no fsync, per committed call.
    conn.execute("PRAGMA journal_mode=MEMORY")
    conn.execute("PRAGMA synchronous=OFF")
    if sole:
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")
    return conn
