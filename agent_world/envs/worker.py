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

This module is the process (`Worker`, `main`); the frames live in `frames`, what tool code sees
in `tool_context`, the guard and rows in `tool_sql`, and remote calls in `host_channel`.
"""

from __future__ import annotations

import argparse
import builtins
import inspect
import io
import os
import signal
import sqlite3
import sys
import threading
import time
import traceback
from collections import OrderedDict
from typing import Any

from agent_world.envs.frames import (
    DEFAULT_SPIN_US,
    InputWaiter,
    encode_result,
    read_frame,
    write_frame,
)
from agent_world.envs.host_channel import HostChannel, RemoteDB, Rerun
from agent_world.envs.tool_context import ToolContext, ToolError
from agent_world.envs.tool_sql import (
    _CONTROL,
    _DDL,
    _WHAT,
    COUNTERS_TABLE,
    INTERNAL_PREFIX,
    WRITES_COUNTER,
    Guard,
    ToolTimeout,
    _row,
    ended,
)

MAX_OPEN_DATABASES = 128  # persistent episode connections kept per worker (LRU)


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
    # Run as `python -m`, this module is __main__: tool code that imports it must get this
    # running module (its `_channel`), not a second copy.
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
