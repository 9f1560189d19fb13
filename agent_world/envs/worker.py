"""The tool worker: a separate process that runs environment tool code against episode databases.

Tool code is written by agents, not by the project, so it never runs in the caller's process.
One warm worker serves many episodes: it compiles each environment's tools once, then answers
`call` requests, each naming the episode's database file. Every call is one transaction that is
committed only if the tool returns normally; anything else rolls back, so the episode's state is
exactly as before the call. If the worker dies mid-call, SQLite's hot-journal recovery rolls the
half-done transaction back the next time anyone opens the file.

Protocol: length-prefixed (4-byte big-endian) JSON frames on the process's original stdin and
stdout. The worker moves those descriptors aside at start-up so tool code that prints or reads
cannot corrupt the stream. A sandbox wraps this process by prefixing its command line
(`python -m agent_world.envs.worker`); nothing here assumes it runs unconfined.

Requests:
  {"op": "load", "env": FP, "tools": {name: {"source": str, "mutates": bool}},
   "helpers": str, "timeout": seconds}
  {"op": "call", "env": FP, "db": PATH, "tool": NAME, "args": {...}, "seed": int,
   "step": int, "clock": ISO, "timeout": seconds}
  {"op": "ping"}
Every request may carry an "id"; the reply echoes it. Call replies also carry "rss" (bytes).
Replies: {"ok": true, "result": ...} or {"ok": false, "kind": KIND, "message": str}.
"""

from __future__ import annotations

import builtins
import hashlib
import inspect
import io
import json
import os
import random
import signal
import sqlite3
import struct
import sys
import time
import traceback
from datetime import datetime, timedelta
from typing import Any

MAX_RESULT_BYTES = 1 << 20  # a tool's JSON result; larger is an error and rolls back
MAX_FRAME_BYTES = 64 << 20  # any protocol frame (arguments included)
_RAW_RESULT = "_result_json"  # reply key holding the result already encoded as JSON text
_HEADER = struct.Struct(">I")

# sqlite3 authorizer action codes (sqlite3.h); denied while tool code runs.
_TRANSACTION, _SAVEPOINT, _ATTACH, _DETACH, _PRAGMA = 22, 32, 24, 25, 19
_WRITES = {
    18,  # INSERT
    23,  # UPDATE
    9,  # DELETE
    2, 3, 4, 5, 6, 7, 8,  # CREATE index/table/temp.../trigger/view
    10, 11, 12, 13, 14, 15, 16, 17,  # DROP ...
    26, 27, 28, 29, 30,  # ALTER, REINDEX, ANALYZE, CREATE/DROP VTABLE
}


class ToolError(Exception):
    """Raised by tool code for an expected, domain-level failure ("flight is full")."""


class ToolTimeout(BaseException):
    """Raised inside tool code when its time is up (BaseException: `except Exception` in the
    tool must not swallow it)."""


class DB:
    """The database handle tools get as `ctx.db`: statements only, no transaction control."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        return self._conn.execute(sql, params)

    def executemany(self, sql: str, seq: Any) -> sqlite3.Cursor:
        return self._conn.executemany(sql, seq)

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        return self._conn.execute(sql, params).fetchall()

    def one(self, sql: str, params: Any = ()) -> dict[str, Any] | None:
        return self._conn.execute(sql, params).fetchone()

    def scalar(self, sql: str, params: Any = ()) -> Any:
        row = self._conn.execute(sql, params).fetchone()
        return None if row is None else next(iter(row.values()))


class ToolContext:
    """What a tool sees besides its arguments: the database, a clock and id/random sources
    that are deterministic given the episode's seed and step number."""

    def __init__(self, conn: sqlite3.Connection, seed: int, step: int, clock: str):
        self.db = DB(conn)
        self.seed = seed
        self.step = step
        self._clock = datetime.fromisoformat(clock) + timedelta(minutes=step)
        self._ids = 0
        self.rng = random.Random(f"{seed}:{step}")

    def now(self) -> str:
        return self._clock.isoformat(timespec="seconds")

    def today(self) -> str:
        return self._clock.date().isoformat()

    def new_id(self, prefix: str = "") -> str:
        self._ids += 1
        digest = hashlib.sha256(f"{self.seed}:{self.step}:{self._ids}".encode()).hexdigest()
        return f"{prefix}{digest[:8].upper()}"

    # Convenience passthroughs: most tools only query.
    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        return self.db.query(sql, params)

    def one(self, sql: str, params: Any = ()) -> dict[str, Any] | None:
        return self.db.one(sql, params)

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        return self.db.execute(sql, params)


def _sql_bool(value: bytes) -> bool:
    return value not in (b"0", b"", b"0.0", b"false", b"False")


# Columns declared BOOLEAN (EnvSpec type "boolean") read back as True/False, not 1/0; callers
# connect with detect_types=sqlite3.PARSE_DECLTYPES to get this.
sqlite3.register_converter("BOOLEAN", _sql_bool)


def _dict_row(cursor: sqlite3.Cursor, row: tuple) -> dict[str, Any]:
    return {d[0]: v for d, v in zip(cursor.description, row, strict=False)}


class Worker:
    def __init__(self) -> None:
        self.envs: dict[str, dict[str, tuple[Any, bool, inspect.Signature | None]]] = {}
        self.guard = False
        self.read_only = False
        self.deadline = 0.0

    # -- authorizer: the tool may read/write rows, never end the transaction or attach files --
    def _authorize(self, action: int, *_: Any) -> int:
        if not self.guard:
            return sqlite3.SQLITE_OK
        if action in (_TRANSACTION, _SAVEPOINT, _ATTACH, _DETACH, _PRAGMA):
            return sqlite3.SQLITE_DENY
        if self.read_only and action in _WRITES:
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def _progress(self) -> int:
        # Interrupts a long-running SQL statement once the tool's time is up.
        return 1 if self.guard and time.monotonic() > self.deadline else 0

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
        compiled: dict[str, tuple[Any, bool, inspect.Signature | None]] = {}
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
                try:
                    signature = inspect.signature(fn)
                except (TypeError, ValueError):
                    signature = None
                compiled[name] = (fn, mutates, signature)
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
        args = req.get("args", {})
        if signature is not None:
            try:  # a missing or unexpected argument is the caller's fault, not the tool's
                signature.bind(None, **args)
            except TypeError as exc:
                return {"ok": False, "kind": "invalid_arguments", "message": str(exc)}
        # cached_statements=0: a cached BEGIN/COMMIT would skip the authorizer check
        conn = sqlite3.connect(req["db"], isolation_level=None, cached_statements=0,
                               check_same_thread=False, detect_types=sqlite3.PARSE_DECLTYPES)
        try:
            conn.row_factory = _dict_row
            conn.execute("PRAGMA foreign_keys=ON")
            conn.set_authorizer(self._authorize)
            conn.set_progress_handler(self._progress, 2000)
            conn.execute("BEGIN IMMEDIATE" if mutates else "BEGIN")
            ctx = ToolContext(conn, int(req.get("seed", 0)), int(req.get("step", 0)),
                              req.get("clock", "2026-01-15T09:00:00"))
            reply = self._run(fn, ctx, req, mutates)
            if reply["ok"] and conn.in_transaction:
                conn.execute("COMMIT")
            elif conn.in_transaction:
                conn.execute("ROLLBACK")
            return reply
        finally:
            conn.close()

    def _run(self, fn: Any, ctx: ToolContext, req: dict[str, Any], mutates: bool) -> dict:
        timeout = float(req.get("timeout", 5.0))
        self.deadline = time.monotonic() + timeout
        self.read_only = not mutates
        self.guard = True
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            result = fn(ctx, **req.get("args", {}))
        except ToolTimeout:
            return {"ok": False, "kind": "timeout", "message": f"tool exceeded {timeout:g}s"}
        except ToolError as exc:
            return {"ok": False, "kind": "tool_error", "message": str(exc)}
        except sqlite3.IntegrityError as exc:
            return {"ok": False, "kind": "constraint_violation", "message": str(exc)}
        except sqlite3.DatabaseError as exc:
            msg = str(exc)
            if "interrupted" in msg and time.monotonic() > self.deadline:
                return {"ok": False, "kind": "timeout", "message": f"tool exceeded {timeout:g}s"}
            kind = "permission_denied" if "not authorized" in msg else "tool_exception"
            return {"ok": False, "kind": kind, "message": f"{type(exc).__name__}: {msg}"}
        except BaseException as exc:  # SystemExit too: a tool must not end the worker
            return {"ok": False, "kind": "tool_exception", "message": _describe(exc)}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.guard = False
        return encode_result(result)


def encode_result(result: Any) -> dict[str, Any]:
    """The reply for a tool's return value, encoded once: the JSON text travels as is inside
    the reply frame. Values JSON cannot carry (sets, bytes, dates, NaN) are an error of the
    tool, not silently changed."""
    try:
        payload = json.dumps(result, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return {"ok": False, "kind": "tool_exception",
                "message": f"result is not JSON: {exc} (return dicts, lists, str, int, "
                           "float, bool or None)"}
    if len(payload) > MAX_RESULT_BYTES:
        return {"ok": False, "kind": "tool_exception",
                "message": f"result too large ({len(payload):,} bytes; the limit is "
                           f"{MAX_RESULT_BYTES:,}): return fewer rows"}
    return {"ok": True, _RAW_RESULT: payload}


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


def _on_alarm(signum: int, frame: Any) -> None:
    raise ToolTimeout()


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


def read_frame(stream: Any) -> dict[str, Any] | None:
    """One frame, or None at end of stream (or when the frame is cut short or oversized)."""
    header = _read_exact(stream, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME_BYTES:
        return None
    body = _read_exact(stream, size)
    return None if body is None else json.loads(body)


def write_frame(stream: Any, message: dict[str, Any]) -> None:
    raw = message.pop(_RAW_RESULT, None)
    body = json.dumps(message, ensure_ascii=False)
    if raw is not None:  # splice the already-encoded result in instead of encoding it twice
        body = f'{body[:-1]}, "result": {raw}}}' if len(body) > 2 else f'{{"result": {raw}}}'
    data = body.encode()
    if len(data) > MAX_FRAME_BYTES:
        raise ValueError(f"message too large ({len(data):,} bytes; the limit is "
                         f"{MAX_FRAME_BYTES:,})")
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _rss_bytes() -> int:
    """This process's resident memory now (the caller recycles a worker that holds too much)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def main() -> None:
    # Keep the protocol streams private; tool code gets /dev/null and stderr instead.
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    signal.signal(signal.SIGALRM, _on_alarm)
    worker = Worker()
    buffered_in = io.BufferedReader(proto_in)
    while True:
        req = read_frame(buffered_in)
        if req is None:
            return
        op = req.get("op")
        try:
            if op == "call":
                reply = worker.call(req)
            elif op == "load":
                reply = worker.load(req)
            elif op == "ping":
                reply = {"ok": True, "pid": os.getpid()}
            else:
                reply = {"ok": False, "kind": "bad_request", "message": f"unknown op {op!r}"}
        except ToolTimeout:
            reply = {"ok": False, "kind": "timeout", "message": "tool exceeded its time"}
        except Exception as exc:  # the worker itself must survive any single bad request
            reply = {"ok": False, "kind": "worker_error", "message": f"{type(exc).__name__}: {exc}"}
        reply["id"] = req.get("id")  # the caller drops the worker on any reply without it
        if op == "call":
            reply["rss"] = _rss_bytes()
        write_frame(proto_out, reply)


if __name__ == "__main__":
    main()
