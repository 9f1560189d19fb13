"""Episodes: isolated, resettable instances of an environment, stepped by tool calls.

    from agent_world.envs import open_episode, load_example
    with open_episode(load_example("airline"), seed=7) as ep:
        obs = ep.step("search_flights", {"origin": "SFO", "destination": "JFK"})
        ep.diff()   # rows inserted/updated/deleted since reset

An `EnvRuntime` owns the shared pieces: a warm worker pool, a working directory for episode
databases and one template database per spec fingerprint. Each episode is one SQLite file,
copied from the template when it first opens; `reset()` then undoes the logged changes on the
episode's own connection. A closed episode's file and warm connection go back to the runtime,
and the next `open` of that environment takes them (reset the same way, renewed for its seed)
instead of copying the template and compiling every statement again. Argument checks happen
here (fast, trusted); tool code runs only in the worker, which in a sandboxed runtime sends
every statement back here (`hostdb`).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sqlite3
import tempfile
import threading
import time
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent_world import stop
from agent_world.config import protect
from agent_world.envs.arguments import CompiledArguments, argument_problem, clip
from agent_world.envs.database import (
    StateDiff,
    build_template,
    diff_databases,
    dump_tables,
    read_rows,
    state_hash,
)
from agent_world.envs.forecast import Forecast
from agent_world.envs.frames import DEFAULT_SPIN_US
from agent_world.envs.hostdb import EpisodeDB
from agent_world.envs.pool import Launcher, Turns, WorkerPool
from agent_world.envs.spec import EnvSpec
from agent_world.errors import EpisodeClosed
from agent_world.sandbox.isolation import (
    Limits,
    check_isolation,
    confine,
    unsafe_requested,
    warn_unsafe,
)

DEFAULT_TOOL_TIMEOUT_S = 5.0
# A sandboxed worker: 1 GiB of address space bounds any one call; a worker still holding more
# than WORKER_RSS_LIMIT after a call is recycled so a call cannot hoard memory for the next.
WORKER_LIMITS = Limits(memory_bytes=1 << 30, processes=16, file_bytes=1 << 30)
WORKER_RSS_LIMIT = 256 << 20
# closed episodes a runtime keeps for reuse (one training batch of the rollout benchmark), and
# the most their files may take together (their page caches take at most as much again)
KEEP_CLOSED = 1024
KEEP_CLOSED_BYTES = 1 << 30

# Error kinds an observation can carry. Agent faults: the call itself was wrong.
AGENT_FAULTS = frozenset({"unknown_tool", "invalid_arguments", "tool_error",
                          "constraint_violation"})
# Environment faults: the tool or its worker misbehaved (permission_denied: the tool's code did
# what its declaration or the engine forbids; no argument makes a correct tool do that).
ENV_FAULTS = frozenset({"tool_exception", "permission_denied", "timeout", "worker_crash",
                        "worker_error"})
# Replies after which the worker's fate is unknown: the episode may hold a rolled-back journal.
_UNCERTAIN = frozenset({"timeout", "worker_crash", "worker_error"})


class ObservationError(BaseModel):
    kind: str
    message: str

    @property
    def fault(self) -> str:
        return "agent" if self.kind in AGENT_FAULTS else "environment"


class Observation(BaseModel):
    step: int
    tool: str
    arguments: Any
    ok: bool
    result: Any = None
    error: ObservationError | None = None
    elapsed_ms: float = 0.0

    def to_text(self) -> str:
        """What a policy reads back: the result (JSON unless it is plain text), or the error
        with its kind."""
        if self.ok:  # plain text stays text (a user id arrives without quotes)
            if isinstance(self.result, str):
                return self.result
            return json.dumps(self.result, ensure_ascii=False, default=str)
        assert self.error is not None
        return f"Error ({self.error.kind}): {self.error.message}"


WORKDIR_ENV = "AGENT_WORLD_WORKDIR"  # where runtimes make their working directories


def _raise_open_file_limit() -> None:
    """Every stepped episode keeps a connection (an open file) in this process: lift the soft
    limit on open files to the hard one (1,024 on many systems would stop ~1,000 episodes)."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard == resource.RLIM_INFINITY or hard > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass


def _default_workdir() -> Path:
    # RAM-backed when available: resets are file copies, so the disk is the hot path.
    # $AGENT_WORLD_WORKDIR overrides (a test session gathers everything it makes in one place).
    chosen = os.environ.get(WORKDIR_ENV)
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="agent-world-", dir=chosen))
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="agent-world-", dir=base))


class EnvRuntime:
    """Shared machinery for many episodes: worker pool, templates, working directory."""

    def __init__(self, workers: int = 1, workdir: str | Path | None = None,
                 launcher: Launcher | None = None,
                 tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
                 sandbox: bool | None = None, worker_limits: Limits | None = None,
                 keep_read_connections: bool = False, max_workers: int | None = None,
                 take_turns: bool | None = None, keep_closed: int = KEEP_CLOSED,
                 keep_closed_bytes: int = KEEP_CLOSED_BYTES,
                 worker_spin_us: float = DEFAULT_SPIN_US):
        """`sandbox`: run tool workers in the local sandbox (None: yes, unless
        AGENT_WORLD_UNSAFE_NO_SANDBOX=1; `SandboxUnavailable` where no isolation is possible).
        `launcher` prefixes the worker's command line (inside the sandbox when there is one).
        `workers`: warm workers per environment; `max_workers`: in all (default the larger
        of `workers` and 8), so episodes of several environments do not take turns
        restarting one worker (a worker serves one environment; see `WorkerPool`).
        `worker_limits`: memory (per call and per worker), CPU, file size, processes.
        `take_turns`: threads stepping episodes of this runtime take turns at the CPU, each
        giving its turn up while it waits for a worker (`pool.Turns`; default: when
        sandboxed, where every statement runs in this process).
        `worker_spin_us`: how long a worker stays awake polling for its next request (or a
        statement's answer) before it sleeps: waking a sleeping process costs more than a
        step on a virtual machine (`worker.InputWaiter`); 0 where workers outnumber idle
        cores and should never poll.
        `keep_read_connections`: no longer has an effect (kept for compatibility): a
        sandboxed runtime always keeps each episode's connection, in this process, and the
        worker sends it the tool's statements (see `agent_world.envs.hostdb`).
        `keep_closed`: how many closed episodes (file and warm connection) the runtime keeps
        for the next `open` of their environment, the least recently closed given up first
        (0: none), and `keep_closed_bytes` the most their files may take (in RAM where
        /dev/shm is). A runtime never holds more files of an environment than it had open at
        once: a closed one is taken before a new one is made."""
        self._own_dir = workdir is None
        self.workdir = Path(workdir) if workdir else _default_workdir()
        self.workdir.mkdir(parents=True, exist_ok=True)
        protect(self.workdir)  # templates and every episode's state: no sandbox shows them
        _raise_open_file_limit()
        limits = worker_limits or WORKER_LIMITS
        if sandbox is None:
            sandbox = not unsafe_requested()
        self.sandboxed = sandbox
        self.turns = Turns() if (sandbox if take_turns is None else take_turns) else None
        if sandbox:
            check_isolation()
            # the worker gets a private tmpfs and no episode file: it sends statements here
            self.pool = WorkerPool(
                workers, launcher,
                confiner=lambda cmd: confine(cmd, limits=limits, what="tool worker"),
                rss_limit=WORKER_RSS_LIMIT, max_size=max_workers, turns=self.turns,
                spin_us=worker_spin_us)
        else:
            warn_unsafe("environment tool code")
            self.pool = WorkerPool(workers, launcher, max_size=max_workers, turns=self.turns,
                                   spin_us=worker_spin_us)
        self.tool_timeout_s = tool_timeout_s
        self._templates: dict[str, Path] = {}
        # id(spec) -> (spec, fingerprint): hashing a 1,000-row spec costs ~2 ms, an open 0.05 ms
        self._fingerprints: dict[int, tuple[EnvSpec, str]] = {}
        self._validators: dict[tuple[str, str], Any] = {}
        # per environment and tool: the reads its calls begin with, answered ahead (hostdb)
        self._forecasts: dict[tuple[str, str], Forecast] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._closed = False
        # closed episodes kept for reuse: per fingerprint (last closed on top), and all of
        # them oldest first (what goes when there are more than keep_closed)
        self.keep_closed, self.keep_closed_bytes = keep_closed, keep_closed_bytes
        self._kept_bytes = 0
        self._kept: dict[str, list[_Kept]] = {}
        self._kept_order: OrderedDict[_Kept, None] = OrderedDict()
        # a runtime dropped without close() still removes its episode files (they may be in RAM)
        self._cleanup = weakref.finalize(self, _cleanup, self.pool,
                                         self.workdir if self._own_dir else None,
                                         self._kept_order)

    # -- per-spec preparation (once per fingerprint) -------------------------------------------
    def fingerprint(self, spec: EnvSpec) -> str:
        """The spec's fingerprint, computed once per spec object (treat specs as immutable)."""
        known = self._fingerprints.get(id(spec))
        if known is not None and known[0] is spec:
            return known[1]
        fp = spec.fingerprint
        self._fingerprints[id(spec)] = (spec, fp)
        return fp

    def prepare(self, spec: EnvSpec) -> Path:
        fp = self.fingerprint(spec)
        with self._lock:
            path = self._templates.get(fp)
            if path is None:
                path = build_template(spec, self.workdir / "templates" / f"{fp}.sqlite")
                self.pool.register(fp, {t.name: {"source": t.source, "mutates": t.mutates}
                                        for t in spec.tools}, spec.helpers)
                for t in spec.tools:
                    self._validators[(fp, t.name)] = CompiledArguments(t.arguments_schema)
                    self._forecasts[(fp, t.name)] = Forecast()
                self._templates[fp] = path
        return path

    def validator(self, fp: str, tool: str) -> Any:
        return self._validators[(fp, tool)]

    def open(self, spec: EnvSpec, seed: int = 0) -> Episode:
        """A reset episode of `spec` whose ids and clock derive from `seed`: a closed one of
        the same environment when the runtime kept one (see `keep_closed`), indistinguishable
        from a new one (same state, ids, clock and observations), else a new file."""
        if self._closed:
            raise RuntimeError("runtime is closed")
        template = self.prepare(spec)
        fp = self.fingerprint(spec)
        kept = self._take(fp)
        if kept is not None:
            ep = Episode(self, spec, fp, template, kept.path, seed, kept)
            try:
                ep.reset()
                return ep
            except (sqlite3.Error, OSError):  # not worth keeping: a new file instead
                ep._closed = True
                _remove(kept.path, ep._db)
        path = self.workdir / "episodes" / f"ep{next(self._ids):06d}.sqlite"
        path.parent.mkdir(exist_ok=True)
        ep = Episode(self, spec, fp, template, path, seed)
        ep.reset()
        return ep

    @property
    def kept(self) -> int:
        """Closed episodes held for reuse now."""
        return len(self._kept_order)

    def _keep(self, fp: str, path: Path, db: EpisodeDB | None, dirty: bool) -> bool:
        """Hold a closed episode's file and connection for the next `open` of its environment;
        False when the runtime will not (then the caller removes them)."""
        if self.keep_closed <= 0 or (db is not None and db.conn.in_transaction):
            return False  # in a transaction: a step was cut short, nothing to trust
        try:
            size = path.stat().st_size
        except OSError:
            return False
        if size > self.keep_closed_bytes:
            return False
        kept = _Kept(fp, path, db, dirty, size)
        evicted = []
        with self._lock:
            if self._closed:
                return False
            self._kept.setdefault(fp, []).append(kept)
            self._kept_order[kept] = None
            self._kept_bytes += size
            while (len(self._kept_order) > self.keep_closed
                   or self._kept_bytes > self.keep_closed_bytes):
                old, _ = self._kept_order.popitem(last=False)
                self._kept[old.fingerprint].remove(old)
                self._kept_bytes -= old.size
                evicted.append(old)
        for old in evicted:
            _remove(old.path, old.db)
        return True

    def _take(self, fp: str) -> _Kept | None:
        with self._lock:
            stack = None if self._closed else self._kept.get(fp)
            if not stack:
                return None
            kept = stack.pop()  # the last closed: its pages are the warmest
            del self._kept_order[kept]
            self._kept_bytes -= kept.size
            return kept

    def close(self) -> None:
        with self._lock:  # nothing is kept or taken from here on
            if self._closed:
                return
            self._closed = True
            self._kept.clear()
        self._cleanup()  # removes the kept episodes too, as for a runtime never closed

    def __enter__(self) -> EnvRuntime:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Kept:
    """A closed episode's file and connection, held by its runtime for the next `open`."""

    __slots__ = ("fingerprint", "path", "db", "dirty", "size")

    def __init__(self, fingerprint: str, path: Path, db: EpisodeDB | None, dirty: bool,
                 size: int):
        self.fingerprint, self.path, self.db, self.dirty = fingerprint, path, db, dirty
        self.size = size


def _remove(path: Path, db: EpisodeDB | None) -> None:
    if db is not None:
        db.close()
    path.unlink(missing_ok=True)
    Path(f"{path}-journal").unlink(missing_ok=True)


def _cleanup(pool: WorkerPool, workdir: Path | None, kept: OrderedDict[_Kept, None]) -> None:
    pool.close()
    while kept:
        k, _ = kept.popitem()
        _remove(k.path, k.db)
    if workdir is not None:
        shutil.rmtree(workdir, ignore_errors=True)


class Episode:
    """One isolated database instance of an environment. Not thread-safe per episode; many
    episodes may be stepped from many threads at once. Once closed it cannot be used again
    (`EpisodeClosed`): its file may already serve another episode."""

    def __init__(self, runtime: EnvRuntime, spec: EnvSpec, fingerprint: str, template: Path,
                 path: Path, seed: int, kept: _Kept | None = None):
        self.runtime = runtime
        self.spec = spec
        self.fingerprint = fingerprint
        self.template = template
        # the episode's SQLite file: read it between calls with a connection opened after the
        # call (sandboxed, this process's connection does not bump SQLite's change counter)
        self.path = path
        self.seed = seed
        self.steps = 0
        self._tools = {t.name for t in spec.tools}
        self._mutates = {t.name: t.mutates for t in spec.tools}
        # the file exists: a copy of the template, changed only through the undo log since
        self._fresh = kept is not None
        # changes may have been committed since the last reset
        self._dirty = True if kept is None else kept.dirty
        # this process's connection, kept open (warm schema and pages): reset's undo log, and
        # in a sandboxed runtime every statement of every tool call
        self._db: EpisodeDB | None = None if kept is None else kept.db
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise EpisodeClosed(f"episode of {self.spec.name!r} (seed {self.seed}) is closed; "
                                "open a new one")

    def reset(self) -> None:
        """Back to the seed state. The first reset copies the prepared template; later ones
        undo the rows changed since (the database keeps an undo log), so a reset costs the
        number of changes, not the size of the database, and nothing when there were none."""
        self._check_open()
        if not self._fresh:
            shutil.copyfile(self.template, self.path)
            self._fresh = True
            if self.runtime.sandboxed:  # every call needs it: parse the schema now, not mid-step
                if self._db is not None:  # a connection to a file just replaced
                    self._db.close()
                    self._db = None
                self._database(fresh=True)
        elif self._dirty:
            self._database().undo(self.spec, self.path)
        if self._db is not None:  # the connection as a new one: the seed, lastrowid, changes()
            self._db.renew(self.seed)
        if self.steps and not self.runtime.sandboxed:  # the worker's: a new one, to be sure
            self.runtime.pool.forget(str(self.path))
        self._dirty = False
        self.steps = 0

    def step(self, tool: str, arguments: Any = None) -> Observation:
        """Call one tool. Never raises for anything the agent sends: every failure is an
        observation with an error kind, and the state is then exactly as before the call.
        Threads stepping at once take turns (see `EnvRuntime(take_turns=...)`). A closed
        episode raises `EpisodeClosed` (a caller's bug, not an observation)."""
        if self._closed:
            self._check_open()
        turns = self.runtime.turns
        if turns is None:
            return self._step(tool, arguments)
        with turns:
            return self._step(tool, arguments)

    def _step(self, tool: str, arguments: Any) -> Observation:
        start = time.perf_counter()
        index = self.steps
        self.steps += 1
        arguments = {} if arguments is None else arguments
        name = tool if isinstance(tool, str) else clip(repr(tool), 100)

        def error(kind: str, message: str) -> Observation:
            return Observation(step=index, tool=name, arguments=arguments, ok=False,
                               error=ObservationError(kind=kind, message=message),
                               elapsed_ms=(time.perf_counter() - start) * 1e3)

        if not isinstance(tool, str) or tool not in self._tools:
            names = ", ".join(sorted(self._tools)) or "(none)"
            return error("unknown_tool", f"unknown tool {clip(repr(tool), 100)}; "
                                         f"available: {names}")
        if not isinstance(arguments, dict):
            return error("invalid_arguments",
                         f"arguments must be a JSON object, got {type(arguments).__name__}")
        problem = argument_problem(self.runtime.validator(self.fingerprint, tool), arguments)
        if problem is not None:
            return error("invalid_arguments", problem)
        runtime = self.runtime
        message = {"op": "call", "env": self.fingerprint, "tool": tool, "args": arguments,
                   "seed": self.seed, "step": index, "clock": self.spec.clock_start,
                   "timeout": runtime.tool_timeout_s}
        if runtime.sandboxed:  # the worker sends the tool's statements to this process
            db = self._database()
            mutates = self._mutates[tool]
            forecast = runtime._forecasts[(self.fingerprint, tool)]
            defer = mutates and forecast.defer  # writes go with the next read or the reply
            message["counters"] = db.begin(mutates, runtime.tool_timeout_s, defer)
            message["remote"] = True
            reply: dict[str, Any] = {}
            try:
                ahead = db.answer_ahead(forecast, arguments)
                if ahead:
                    message["ahead"] = ahead
                if defer:
                    message["defer"] = True
                    forecast.deferred += 1
                reply = runtime.pool.call(message, runtime.tool_timeout_s, serve=db.serve)
                if message.get("defer") and db.settle(reply):
                    # a deferred write failed: run the call again, every statement in turn,
                    # so the tool meets the error where it happens (hostdb, host_channel.HostChannel)
                    forecast.reruns += 1
                    db.rollback()
                    message["counters"] = db.begin(mutates, runtime.tool_timeout_s)
                    message.pop("defer")
                    message.pop("ahead", None)
                    reply = runtime.pool.call(message, runtime.tool_timeout_s, serve=db.serve)
            finally:
                reply = db.finish(reply, forecast, arguments)
        else:
            reply = runtime.pool.call(dict(message, db=str(self.path), persist=True),
                                      runtime.tool_timeout_s)
        if reply.get("wrote") or reply.get("kind") in _UNCERTAIN:
            self._dirty = True
        if not reply.get("ok"):
            return error(reply.get("kind", "worker_error"), reply.get("message", ""))
        return Observation(step=index, tool=tool, arguments=arguments, ok=True,
                           result=reply.get("result"),
                           elapsed_ms=(time.perf_counter() - start) * 1e3)

    def diff(self) -> StateDiff:
        self._check_open()
        return diff_databases(self.spec, self.path, self.template)

    def state_hash(self, ignore: dict[str, list[str]] | None = None) -> str:
        """A 16-hex-digit hash of every table's rows: equal hashes, equal states. `ignore`
        ({table: [column, ...]}) leaves columns out, e.g. generated ids a task does not fix."""
        self._check_open()
        return state_hash(self.spec, self.path, ignore, base=self.template)

    def dump(self, ignore: dict[str, list[str]] | None = None) -> dict[str, list[dict[str, Any]]]:
        """All tables (spec order), rows in primary-key order: the whole state as data."""
        self._check_open()
        return dump_tables(self.spec, self.path, ignore)

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        """Read-only SQL over the episode's current state (verifiers, reports)."""
        self._check_open()
        return read_rows(self.path, sql, params)

    def _database(self, fresh: bool = False) -> EpisodeDB:
        if self._db is None:
            # sandboxed, only this process writes the file; else the worker does too
            self._db = EpisodeDB(self.path, self.seed, self.spec.clock_start, fresh=fresh,
                                 sole=self.runtime.sandboxed)
        return self._db

    def close(self) -> None:
        """Done with the episode: its file and connection go back to the runtime for the next
        episode of this environment (or are removed); this object cannot be used again."""
        if self._closed:
            return
        self._closed = True
        db, self._db = self._db, None
        runtime = self.runtime
        if not runtime.sandboxed:  # the worker's own connection to it
            runtime.pool.forget(str(self.path))
        if self._fresh and runtime._keep(self.fingerprint, self.path, db, self._dirty):
            return
        _remove(self.path, db)

    def __enter__(self) -> Episode:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


_default: EnvRuntime | None = None
_default_lock = threading.Lock()


def default_runtime() -> EnvRuntime:
    """The process-wide runtime `open_episode` uses when none is given (closed at exit)."""
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            _default = EnvRuntime()
            stop.at_exit(_default.close)
        return _default


def open_episode(spec: EnvSpec, seed: int = 0, runtime: EnvRuntime | None = None) -> Episode:
    """A fresh, reset episode of `spec`; deterministic clock and ids given `seed`."""
    return (runtime or default_runtime()).open(spec, seed=seed)
