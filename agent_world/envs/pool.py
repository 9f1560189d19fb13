"""Warm tool-worker processes, seen from the caller's side.

`WorkerClient` owns one `python -m agent_world.envs.worker` process; `WorkerPool` hands idle
clients to callers (threads may step episodes concurrently). A worker that dies or hangs past
its hard deadline is killed and restarted; the request it was serving gets an error reply and
every other request keeps going on the other workers (or on the restarted one).

Isolation (what holds whether or not a sandbox confines the worker process):
- a worker serves one environment at a time: one that ran environment A's code is killed and
  started afresh before it serves B (idle workers already holding B are preferred);
- every request carries an id (random per worker, then counted) the reply must echo; any
  other reply (a frame forged by tool code) gets the worker killed;
- in a sandboxed runtime a worker holds no database and sees no episode file: the caller keeps
  each episode's connection (`agent_world.envs.hostdb`) and answers the statements a call
  sends (`call(..., serve=...)`), so tool code reaches nothing but its own call's statements;
- a worker whose memory grew past `rss_limit` after a call is recycled, and so is a sandboxed
  worker that runs more processes or threads after a call (or a load) than when it started:
  what tool code leaves running could act during a later call of another episode. Episodes of
  one environment still share its worker process: code of that environment that rewrites the
  worker's own objects can act in its later calls; the boundary against hostile code is the
  environment (a worker never serves two).
With a `confiner` (see `EnvRuntime`) the process runs in the local sandbox.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import secrets
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from agent_world.envs.frames import (
    DEFAULT_SPIN_US,
    MAX_FRAME_BYTES,
    decode_body,
    encode_packed,
    frame_size,
)
from agent_world.errors import WorkerError
from agent_world.sandbox.isolation import share_process_cpus

log = logging.getLogger(__name__)

WORKER_COMMAND = [sys.executable, "-m", "agent_world.envs.worker"]
# How long past the tool's own timeout the caller waits before killing the worker.
HARD_GRACE_S = 2.0
# What a just-started worker's first request may take on top of its own deadline: starting
# the interpreter is not the tool's time (a short tool timeout on a loaded machine would
# otherwise kill every fresh worker before it could answer).
START_GRACE_S = 10.0

class Turns:
    """Threads of one process that step episodes take turns at the CPU: a step holds the turn
    while it runs this process's side of a call (arguments, statements, frames) and gives it
    up only while it waits (for its worker's reply, or for a worker).

    Why: each SQLite statement and each pipe read or write lets go of the interpreter lock for
    a moment. With other stepping threads waiting for that lock on an idle core, every such
    moment wakes one of them (a futex call, a wake-up on the other core) only for it to find
    the lock taken again or to take it and be interrupted in turn: on 2 idle cores that costs
    more CPU than the step. Threads waiting for the turn instead sleep until a step waits."""

    __slots__ = ("_lock", "_local")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()

    def __enter__(self) -> None:
        self._lock.acquire()
        self._local.held = True

    def __exit__(self, *exc: Any) -> None:
        self._local.held = False
        self._lock.release()

    def pause(self) -> bool:
        """Give the turn up for a wait (if this thread holds it): whether it did."""
        if getattr(self._local, "held", False):
            self._local.held = False
            self._lock.release()
            return True
        return False

    def resume(self, paused: bool) -> None:
        if paused:
            self._lock.acquire()
            self._local.held = True


Launcher = Callable[[Sequence[str]], list[str]]
# command -> a confined launch: .popen(**popen_kwargs), .kill(pid), .release()
# (agent_world.sandbox.isolation.Confined)
Confiner = Callable[[list[str]], Any]
# answers one statement frame of a call whose database the caller holds
Serve = Callable[[dict[str, Any]], dict[str, Any]]


class WorkerClient:
    """One worker process and the environment it has compiled."""

    def __init__(self, launcher: Launcher | None = None, confiner: Confiner | None = None,
                 turns: Turns | None = None, spin_us: float = DEFAULT_SPIN_US):
        self.launcher = launcher
        self.confiner = confiner
        self.turns = turns  # given up while this client waits for its worker
        self.spin_us = spin_us  # the worker's --spin-us (frames.InputWaiter)
        self.proc: subprocess.Popen[bytes] | None = None
        self._confined: Any = None
        self.loaded: set[str] = set()
        self.restarts = 0
        self.forget: list[str] = []  # closed episode databases to tell the worker about
        self._inbox = bytearray()  # bytes read from the worker, not yet a whole frame
        self._poll_in: select.poll | None = None
        self._id_prefix = secrets.token_hex(4) + "-"
        self._ids = itertools.count(1)
        # processes + threads of the idle sandbox (counted once after start): more after a
        # call means tool code left something running that could act during the next call
        self.idle_tasks: int | None = None
        self.closed = False  # its pool was closed: it starts no process any more
        self.starting = False  # started, and has not answered a request yet

    def start(self) -> None:
        if self.closed:
            raise WorkerError("worker pool is closed")
        cmd = [*WORKER_COMMAND, "--spin-us", f"{self.spin_us:g}"]
        if self.launcher is not None:
            cmd = self.launcher(cmd)
        confined = None
        if self.confiner is not None:
            confined = self.confiner(cmd)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE,
                 "stderr": subprocess.DEVNULL, "bufsize": 0, "process_group": 0}
        try:
            if confined is not None:
                self.proc = confined.popen(**pipes)
            else:
                self.proc = subprocess.Popen(cmd, env=env, **pipes)
                share_process_cpus(self.proc.pid)
        except OSError as exc:
            if confined is not None:
                confined.release()
            raise WorkerError(f"cannot start tool worker {cmd[0]!r}: {exc}") from exc
        self._confined = confined
        # both pipes non-blocking: every read and write of a request runs under its deadline
        # (tool code that stops reading, or sends half a frame, cannot hang this thread)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        os.set_blocking(self.proc.stdin.fileno(), False)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._inbox = bytearray()
        self._poll_in = None  # made at the first wait: registered on this process's stdout
        self.idle_tasks = None
        self.starting = True
        self.loaded.clear()
        self.forget.clear()

    def stop(self) -> None:
        """Kill the worker and everything it started (its process group; in a sandbox, its
        whole pid namespace and cgroup)."""
        proc, self.proc = self.proc, None
        confined, self._confined = self._confined, None
        if proc is None:
            return
        _kill_tree(proc, confined)
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream:
                stream.close()
        if confined is not None:
            confined.release()
        self.loaded.clear()

    def kill(self) -> None:
        """Kill the worker's processes now, leaving its pipes to the thread that may be reading
        them (it sees the end of the stream; `stop` reaps and closes)."""
        if self.proc is not None:
            _kill_tree(self.proc, self._confined)

    def count_idle(self, timeout_s: float) -> None:
        """Count a fresh confined worker's processes and threads once (after a ping, before it
        ever ran tool code): `left_running` compares with this."""
        if self._confined is None or self.proc is None or self.idle_tasks is not None:
            return
        if self.request({"op": "ping"}, timeout_s).get("ok") and self._confined is not None:
            self.idle_tasks = self._confined.tasks(self.proc.pid)

    def left_running(self) -> bool:
        """Whether a confined worker runs more processes or threads than when it was fresh and
        idle. Unconfined (or not counted yet): never."""
        if self._confined is None or self.proc is None or self.idle_tasks is None:
            return False
        return self._confined.tasks(self.proc.pid) > self.idle_tasks

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def request(self, message: dict[str, Any], deadline_s: float,
                serve: Serve | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply; a dead or hung worker is restarted and the
        reply says so (kind 'worker_crash' or 'timeout'). With `serve`, statement frames the
        call sends first are answered by it (all within the same deadline)."""
        if self.proc is None or self.proc.poll() is not None:
            self.restart() if self.proc is not None else self.start()
        assert self.proc and self.proc.stdin and self.proc.stdout
        if self.forget:
            # swap, then send the old list; a path appended at the very instant of the swap can
            # be missed, and then the worker's bounded LRU of connections closes it later
            pending, self.forget = self.forget, []
            message = {**message, "forget": list(pending)}
        # unique, not secret: tool code in the worker can read the id of its own call anyway;
        # what it cannot do is answer a request it never saw
        message = dict(message, id=f"{self._id_prefix}{next(self._ids)}")
        try:  # marshal: the worker trusts its caller (never the other way round)
            data = encode_packed(message)
        except (TypeError, ValueError) as exc:  # checked before anything was written
            return {"ok": False, "kind": "invalid_arguments", "message": f"cannot send: {exc}"}
        if self.starting:
            deadline_s += START_GRACE_S
        end = time.monotonic() + deadline_s
        hung = {"ok": False, "kind": "timeout",
                "message": f"tool worker hung for {deadline_s:g}s; killed and restarted"}
        for attempt in (0, 1):
            try:
                if not self._send(data, end):
                    self.restart()
                    return hung
                break
            except OSError:
                # no reader left: the worker died since the check above (or while the request
                # was being written) and ran none of it, as it runs whole frames only: a fresh
                # worker gets the whole request, once
                self.restart()
                if attempt:
                    return {"ok": False, "kind": "worker_crash",
                            "message": "tool worker died; restarted"}
        wait_first = True  # a reply cannot be there yet: wait for it before reading
        while True:
            reply = self._receive(end, wait_first)
            wait_first = True
            self.starting = False  # it answered (or is restarted below): it has started
            if reply is _TIMED_OUT:
                self.restart()
                return hung
            if reply is None:  # end of stream, or a frame that is not one (tool code wrote)
                code = self.proc.poll()
                self.restart()
                said = f"exit code {code}" if code is not None else "or broke the protocol"
                return {"ok": False, "kind": "worker_crash",
                        "message": f"tool worker died ({said}); restarted"}
            assert isinstance(reply, dict)
            if reply.get("id") != message["id"]:  # tool code wrote on the protocol channel
                self.restart()
                return {"ok": False, "kind": "worker_crash",
                        "message": "tool worker sent a reply that does not answer the request "
                                   "(forged by tool code?); restarted"}
            if reply.get("op") != "sql":
                return reply
            if serve is None:
                self.restart()
                return {"ok": False, "kind": "worker_crash",
                        "message": "tool worker sent a statement outside a call; restarted"}
            try:
                data = encode_packed(serve(reply))
            except ValueError as exc:  # the answer cannot travel (too large)
                data = encode_packed({"error": "OperationalError", "message": str(exc),
                                      "denied": None})
            try:
                if not self._send(data, end):
                    self.restart()
                    return hung
            except OSError:
                pass  # it died: the next read says so

    def _send(self, data: bytes, end: float) -> bool:
        """Write all of `data` to the worker before `end` (False: it did not read in time)."""
        assert self.proc and self.proc.stdin
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(fd, view):]
                continue
            except BlockingIOError:
                pass
            left = end - time.monotonic()
            if left <= 0:
                return False
            paused = self.turns is not None and self.turns.pause()
            try:
                _wait(fd, select.POLLOUT, left)
            finally:
                if paused:
                    self.turns.resume(paused)  # type: ignore[union-attr]
        return True

    def _receive(self, end: float, wait_first: bool = False) -> dict[str, Any] | None | object:
        """The next frame from the worker: a dict, None (end of stream or not a frame), or
        _TIMED_OUT when none came whole before `end`. `wait_first`: the frame was only just
        asked for, so wait for the pipe before the first read (a read that finds nothing costs
        a syscall, and lets another thread take the interpreter lock for nothing)."""
        assert self.proc and self.proc.stdout
        fd = self.proc.stdout.fileno()
        inbox = self._inbox
        if wait_first and len(inbox) < 4:
            left = end - time.monotonic()
            if left <= 0:
                return _TIMED_OUT
            self._await(fd, left)
        while True:
            want = 1 << 16
            if len(inbox) >= 4:
                size, packed = frame_size(bytes(inbox[:4]))
                if packed or size > MAX_FRAME_BYTES:  # marshal is never read from a worker
                    return None
                if len(inbox) >= 4 + size:
                    body = bytes(inbox[4:4 + size])
                    del inbox[:4 + size]
                    return decode_body(body)
                want = max(want, 4 + size - len(inbox))
            try:
                chunk = os.read(fd, want)
            except BlockingIOError:
                left = end - time.monotonic()
                if left <= 0:
                    return _TIMED_OUT
                self._await(fd, left)
                continue
            if not chunk:
                return None
            inbox += chunk

    def _await(self, fd: int, left: float) -> None:
        """Until the worker's pipe has something to read or `left` seconds passed, the turn
        given up meanwhile."""
        poller = self._poller(fd)
        paused = self.turns is not None and self.turns.pause()
        try:
            poller.poll(max(1, math.ceil(left * 1000)))
        finally:
            if paused:
                self.turns.resume(paused)  # type: ignore[union-attr]

    def _poller(self, fd: int) -> select.poll:
        if self._poll_in is None:  # registered on this process's stdout (reset by start)
            self._poll_in = select.poll()
            self._poll_in.register(fd, select.POLLIN)
        return self._poll_in


_TIMED_OUT = object()


def _kill_tree(proc: Any, confined: Any) -> None:
    """SIGKILL a worker and everything it started: its sandbox (pid namespace and cgroup), or
    its process group when it runs unconfined."""
    if confined is not None:
        confined.kill(proc.pid)
    elif proc.poll() is None:
        try:
            os.killpg(proc.pid, 9)
        except OSError:
            proc.kill()


def _wait(fd: int, events: int, timeout_s: float) -> None:
    """Until `fd` is ready or `timeout_s` passed. poll, not select: a runtime with a thousand
    open episodes has file descriptors past select's limit of 1,024."""
    poller = select.poll()
    poller.register(fd, events)
    poller.poll(max(1, math.ceil(timeout_s * 1000)))


class WorkerPool:
    """Warm workers for every episode of a runtime; each serves one environment at a time (see
    the module docstring). Up to `size` workers per environment, `max_size` in all: a step of
    an environment no idle worker holds gets a new worker while there is room, so episodes of
    several environments taking turns do not recycle (restart) a worker at every turn; past
    `max_size` the least recently used idle worker of another environment is recycled.
    `spin_us`: how long each worker polls for its next frame before it sleeps
    (`frames.InputWaiter`; 0: never)."""

    def __init__(self, size: int = 1, launcher: Launcher | None = None,
                 confiner: Confiner | None = None, rss_limit: int | None = None,
                 max_size: int | None = None, turns: Turns | None = None,
                 spin_us: float = DEFAULT_SPIN_US):
        if spin_us < 0:
            raise ValueError("worker spin must be >= 0 microseconds")
        if size < 1:
            raise ValueError("worker pool size must be at least 1")
        self.size = size
        self.max_size = max(size, max_size if max_size is not None else 8)
        self.launcher = launcher
        self.confiner = confiner
        self.rss_limit = rss_limit
        self.turns = turns  # see Turns: callers that hold it give it up while they wait
        self.spin_us = spin_us
        self.recycled = 0
        self._clients = [WorkerClient(launcher, confiner, turns, spin_us) for _ in range(size)]
        self._env_of: dict[int, str | None] = {id(c): None for c in self._clients}
        self._idle: list[WorkerClient] = list(self._clients)  # least recently used first
        self._cond = threading.Condition()
        self._envs: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def register(self, fingerprint: str, tools: dict[str, dict[str, Any]],
                 helpers: str = "") -> None:
        """Make an environment's tools (and shared helpers source) known; workers compile them
        on first use."""
        with self._lock:
            self._envs[fingerprint] = {"tools": tools, "helpers": helpers}

    def _acquire(self, fp: str) -> WorkerClient:
        with self._cond:
            while True:
                if self._closed:
                    raise WorkerError("worker pool is closed")
                pick = self._pick(fp)
                if pick is not None:
                    break
                paused = self.turns is not None and self.turns.pause()
                self._cond.wait()
                if paused:  # the turn is taken only without the condition's lock held
                    self._cond.release()
                    try:
                        self.turns.resume(paused)  # type: ignore[union-attr]
                    finally:
                        self._cond.acquire()
            if pick in self._idle:
                self._idle.remove(pick)
        held = self._env_of[id(pick)]
        if held is not None and held != fp:  # it ran another environment's code: recycle
            pick.stop()
            self.recycled += 1
        self._env_of[id(pick)] = fp
        return pick

    def _pick(self, fp: str) -> WorkerClient | None:
        """The worker for a step of `fp` (None: wait for one). Holds the condition's lock."""
        env_of = self._env_of
        pick = next((c for c in self._idle if env_of[id(c)] == fp), None)
        if pick is None:
            pick = next((c for c in self._idle if env_of[id(c)] is None), None)
        if pick is not None:
            return pick
        own = sum(1 for c in self._clients if env_of[id(c)] == fp)
        if own < self.size and len(self._clients) < self.max_size:  # room for one more
            pick = WorkerClient(self.launcher, self.confiner, self.turns, self.spin_us)
            self._clients.append(pick)
            env_of[id(pick)] = None
            return pick
        if own >= self.size and own > 0:  # its share is busy: wait for one of them
            return None
        return self._idle[0] if self._idle else None  # recycle the least recently used

    def clients_of(self, fp: str) -> list[WorkerClient]:
        """The workers holding environment `fp` now."""
        return [c for c in list(self._clients) if self._env_of.get(id(c)) == fp]

    def _release(self, client: WorkerClient) -> None:
        if client.proc is None:  # stopped (recycled or crashed and not restarted): unbound
            self._env_of[id(client)] = None
        with self._cond:
            closed = self._closed
            if not closed:
                self._idle.append(client)
                self._cond.notify()
        if closed:  # closed while this call ran: its worker was killed; reap it
            client.stop()

    def call(self, message: dict[str, Any], timeout_s: float,
             serve: Serve | None = None) -> dict[str, Any]:
        """One request on a worker that holds (or is given) the message's environment;
        `serve` answers the statements of a call whose database the caller holds."""
        if self._closed:
            raise WorkerError("worker pool is closed")
        fp = message["env"]
        client = self._acquire(fp)
        try:
            if client.proc is None:
                client.start()
            client.count_idle(timeout_s)
            if fp not in client.loaded:
                failed = self._load(client, fp, timeout_s)
                if failed is not None:
                    return failed
            reply = client.request(message, timeout_s + HARD_GRACE_S, serve)
            if reply.get("kind") == "env_not_loaded":  # worker restarted between load and call
                failed = self._load(client, fp, timeout_s)
                if failed is not None:
                    return failed
                reply = client.request(message, timeout_s + HARD_GRACE_S, serve)
            rss = reply.pop("rss", None)
            if self.rss_limit and isinstance(rss, int) and rss > self.rss_limit:
                client.stop()  # memory held past the call: start afresh next time
                self.recycled += 1
            elif client.left_running():
                # a thread or process the tool left behind could send statements into a
                # later call of another episode: that worker is not used again
                client.stop()
                self.recycled += 1
            return reply
        finally:
            self._release(client)

    def _load(self, client: WorkerClient, fp: str, timeout_s: float) -> dict[str, Any] | None:
        """Compile an environment in a worker: None, or the error reply for the pending call
        (module-level code of a tool may kill or hang the worker; that is the tool's fault)."""
        env = self._envs.get(fp)
        if env is None:
            raise WorkerError(f"environment {fp} was not registered with the worker pool")
        # each module (helpers, every tool) runs under the tool time limit in the worker
        deadline = timeout_s * (len(env["tools"]) + 1) + HARD_GRACE_S
        reply = client.request({"op": "load", "env": fp, **env, "timeout": timeout_s}, deadline)
        if not reply.get("ok"):
            return {"ok": False, "kind": reply.get("kind", "worker_error"),
                    "message": "loading the environment's tools failed (module-level code of "
                               f"a tool or of the helpers): {reply.get('message')}"}
        if client.left_running():
            client.stop()
            self.recycled += 1
            return {"ok": False, "kind": "tool_exception",
                    "message": "loading the environment's tools left a thread or process "
                               "running (module-level code of a tool or of the helpers); "
                               "the worker was recycled"}
        client.loaded.add(fp)
        return None

    def forget(self, db_path: str) -> None:
        """An episode database is gone: each worker drops its connection with its next
        request."""
        with self._lock:
            for c in list(self._clients):
                if c.proc is not None:
                    c.forget.append(db_path)

    @property
    def pids(self) -> list[int | None]:
        return [c.pid for c in list(self._clients)]

    @property
    def restarts(self) -> int:
        return sum(c.restarts for c in list(self._clients))

    def close(self) -> None:
        """Stop every worker. A call in flight in another thread ends with its worker killed
        now (its thread reaps it); waiting callers and later calls raise WorkerError."""
        with self._cond:
            self._closed = True
            idle = list(self._idle)
            self._idle.clear()
            busy = [c for c in self._clients if c not in idle]
            for c in self._clients:
                c.closed = True
            self._cond.notify_all()
        for c in idle:
            c.stop()
        for c in busy:
            c.kill()


__all__ = ["Turns", "WorkerClient", "WorkerPool", "WORKER_COMMAND"]
