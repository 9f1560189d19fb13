"""Warm tool-worker processes, seen from the caller's side.

`WorkerClient` owns one `python -m agent_world.envs.worker` process; `WorkerPool` hands idle
clients to callers (threads may step episodes concurrently). A worker that dies or hangs past
its hard deadline is killed and restarted; the request it was serving gets an error reply and
every other request keeps going on the other workers (or on the restarted one).
"""

from __future__ import annotations

import logging
import os
import queue
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from agent_world.envs.worker import read_frame, write_frame
from agent_world.errors import WorkerError

log = logging.getLogger(__name__)

WORKER_COMMAND = [sys.executable, "-m", "agent_world.envs.worker"]
# How long past the tool's own timeout the caller waits before killing the worker.
HARD_GRACE_S = 2.0

Launcher = Callable[[Sequence[str]], list[str]]


class WorkerClient:
    """One worker process and the environments it has compiled."""

    def __init__(self, launcher: Launcher | None = None):
        self.launcher = launcher
        self.proc: subprocess.Popen[bytes] | None = None
        self.loaded: set[str] = set()
        self.restarts = 0

    def start(self) -> None:
        cmd = list(WORKER_COMMAND)
        if self.launcher is not None:
            cmd = self.launcher(cmd)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, env=env, bufsize=0)
        except OSError as exc:
            raise WorkerError(f"cannot start tool worker {cmd[0]!r}: {exc}") from exc
        self.loaded.clear()

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream:
                stream.close()

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def request(self, message: dict[str, Any], deadline_s: float) -> dict[str, Any]:
        """Send one request and wait for its reply; a dead or hung worker is restarted and the
        reply says so (kind 'worker_crash' or 'timeout')."""
        if self.proc is None or self.proc.poll() is not None:
            self.restart() if self.proc is not None else self.start()
        assert self.proc and self.proc.stdin and self.proc.stdout
        try:
            write_frame(self.proc.stdin, message)
        except (TypeError, ValueError) as exc:  # checked before anything was written
            return {"ok": False, "kind": "invalid_arguments", "message": f"cannot send: {exc}"}
        except (BrokenPipeError, OSError):
            self.restart()
            return {"ok": False, "kind": "worker_crash", "message": "tool worker died; restarted"}
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + deadline_s
        while True:
            left = end - time.monotonic()
            if left <= 0:
                self.restart()
                return {"ok": False, "kind": "timeout",
                        "message": f"tool worker hung for {deadline_s:g}s; killed and restarted"}
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                break
        reply = read_frame(self.proc.stdout)
        if reply is None:
            try:
                code = self.proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
            self.restart()
            return {"ok": False, "kind": "worker_crash",
                    "message": f"tool worker died (exit code {code}); restarted"}
        return reply


class WorkerPool:
    """A fixed number of warm workers shared by every episode of a runtime."""

    def __init__(self, size: int = 1, launcher: Launcher | None = None):
        if size < 1:
            raise ValueError("worker pool size must be at least 1")
        self.size = size
        self.launcher = launcher
        self._clients = [WorkerClient(launcher) for _ in range(size)]
        self._idle: queue.SimpleQueue[WorkerClient] = queue.SimpleQueue()
        for c in self._clients:
            self._idle.put(c)
        self._envs: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def register(self, fingerprint: str, tools: dict[str, dict[str, Any]],
                 helpers: str = "") -> None:
        """Make an environment's tools (and shared helpers source) known; workers compile them
        on first use."""
        with self._lock:
            self._envs[fingerprint] = {"tools": tools, "helpers": helpers}

    def call(self, message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        if self._closed:
            raise WorkerError("worker pool is closed")
        client = self._idle.get()
        try:
            fp = message["env"]
            if fp not in client.loaded:
                failed = self._load(client, fp, timeout_s)
                if failed is not None:
                    return failed
            reply = client.request(message, timeout_s + HARD_GRACE_S)
            if reply.get("kind") == "env_not_loaded":  # worker restarted between load and call
                failed = self._load(client, fp, timeout_s)
                if failed is not None:
                    return failed
                reply = client.request(message, timeout_s + HARD_GRACE_S)
            return reply
        finally:
            self._idle.put(client)

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
        client.loaded.add(fp)
        return None

    @property
    def pids(self) -> list[int | None]:
        return [c.pid for c in self._clients]

    @property
    def restarts(self) -> int:
        return sum(c.restarts for c in self._clients)

    def close(self) -> None:
        self._closed = True
        for c in self._clients:
            c.stop()


__all__ = ["WorkerClient", "WorkerPool", "WORKER_COMMAND"]
