"""The local backend: a warm Python kernel inside bubblewrap (see `isolation.confine`)."""

from __future__ import annotations

import base64
import json
import logging
import math
import secrets
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Literal

from agent_world.errors import SandboxError
from agent_world.sandbox import kernel
from agent_world.sandbox.interface import (
    CommandResult,
    Commands,
    Execution,
    ExecutionError,
    Files,
    Logs,
    Result,
    Sandbox,
)
from agent_world.sandbox.isolation import (
    SANDBOX_WORKDIR,
    Confined,
    Limits,
    confine,
    unsafe_requested,
    warn_unsafe,
)

log = logging.getLogger(__name__)

KERNEL_SCRIPT = Path(kernel.__file__).resolve()
# Past its own timeout a run gets this long before the host kills the sandbox.
HARD_GRACE_S = 2.0
DEFAULT_RUN_TIMEOUT_S = 60.0
_MAX_FRAME = 1 << 30


class LocalSandbox(Sandbox):
    """A bubblewrap sandbox holding one warm Python kernel. The kernel starts on first use and
    again after it was killed (timeout, crash, limit): its variables are then gone, its work
    directory's files are not (unless `kill()` ended the sandbox)."""

    backend = "local"

    def __init__(self, limits: Limits | None = None, timeout: float = DEFAULT_RUN_TIMEOUT_S,
                 envs: dict[str, str] | None = None):
        self.limits = limits or Limits()
        self.default_timeout = timeout
        self.envs = dict(envs or {})
        self.unsafe = unsafe_requested()
        self._host_dir = Path(tempfile.mkdtemp(prefix="agent-world-sbx-"))
        self.workdir = str(self._host_dir) if self.unsafe else SANDBOX_WORKDIR
        self._proc: subprocess.Popen[bytes] | None = None
        self._confined: Confined | None = None
        self._lock = threading.RLock()
        self._killed = False
        self.starts = 0
        self.files: Files = _LocalFiles(self)
        self.commands: Commands = _LocalCommands(self)

    # -- process ---------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the kernel now (otherwise the first call does)."""
        with self._lock:
            if self._killed:
                raise SandboxError("sandbox was killed")
            if self._proc is not None and self._proc.poll() is None:
                return
            self._stop_process()
            cmd = [sys.executable, "-I", "-B", str(KERNEL_SCRIPT)]
            env = dict(self.envs, AGENT_WORLD_SANDBOX_OUTPUT_CAP=str(self.limits.output_bytes))
            confined = confine(cmd, workdir=self._host_dir, limits=self.limits, env=env,
                               what="sandbox code")
            try:
                proc = confined.popen(stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, cwd=self._host_dir, bufsize=0,
                                      process_group=0)
            except OSError as exc:
                confined.release()
                raise SandboxError(f"cannot start the sandbox: {exc}") from exc
            self._proc, self._confined = proc, confined
            self.starts += 1

    def _stop_process(self) -> None:
        proc, confined = self._proc, self._confined
        self._proc = self._confined = None
        if proc is None:
            return
        if confined is not None:
            confined.kill(proc.pid)
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream:
                stream.close()
        if confined is not None:
            confined.release()

    def kill(self) -> None:
        with self._lock:
            self._killed = True
            self._stop_process()
            shutil.rmtree(self._host_dir, ignore_errors=True)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def request(self, message: dict[str, Any], deadline_s: float) -> dict[str, Any] | None:
        """Send one request to the kernel; None if it died or hung (it is then stopped)."""
        with self._lock:
            self.start()
            proc = self._proc
            assert proc is not None and proc.stdin and proc.stdout
            message = dict(message, id=secrets.token_hex(8))
            try:
                kernel.write_frame(proc.stdin, message)
            except OSError:
                self._stop_process()
                return None
            fd = proc.stdout.fileno()
            end = time.monotonic() + deadline_s
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    self._stop_process()
                    return None
                # poll, not select: the caller may hold more than 1,024 file descriptors
                poller = select.poll()
                poller.register(fd, select.POLLIN)
                if poller.poll(max(1, math.ceil(left * 1000))):
                    break
            reply = _read_frame(proc.stdout)
            if reply is None or reply.get("id") != message["id"]:
                # a dead kernel, or a frame the sandboxed code forged: trust nothing more
                self._stop_process()
                return None
            return reply

    # -- the interface ---------------------------------------------------------------------------
    def run_code(self, code: str, timeout: float | None = None,
                 fresh: bool = False) -> Execution:
        timeout = self.default_timeout if timeout is None else float(timeout)
        if self.unsafe:
            warn_unsafe("run_code")
        start = time.monotonic()
        reply = self.request({"op": "run", "code": code, "timeout": timeout, "fresh": fresh,
                              "cpu": max(1, int(timeout) + 1)}, timeout + HARD_GRACE_S)
        if reply is None:
            if time.monotonic() - start >= timeout:
                return Execution(error=ExecutionError(
                    "TimeoutError", f"code exceeded {timeout:g}s; the sandbox was killed and "
                    "its variables are lost"))
            return Execution(error=ExecutionError(
                "SandboxKilled", "the sandbox died (a limit was exceeded, or its output was "
                "not a valid reply); its variables are lost"))
        if not reply.get("ok"):
            raise SandboxError(reply.get("message", "sandbox request failed"))
        error = reply.get("error")
        return Execution(
            results=[Result(text=r.get("text"), json=r.get("json")) for r in reply["results"]],
            logs=Logs(stdout=[reply["stdout"]] if reply.get("stdout") else [],
                      stderr=[reply["stderr"]] if reply.get("stderr") else []),
            error=ExecutionError(**error) if error else None)

    def __enter__(self) -> LocalSandbox:
        return self

    def __del__(self) -> None:  # a dropped sandbox does not leave a process behind
        try:
            if not self._killed:
                self.kill()
        except Exception:
            pass


def _read_frame(stream: Any) -> dict[str, Any] | None:
    header = stream.read(4)
    if len(header) < 4:
        return None
    size = int.from_bytes(header, "big")
    if size > _MAX_FRAME:
        return None
    chunks, left = [], size
    while left:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return None


class _LocalFiles(Files):
    def __init__(self, sbx: LocalSandbox):
        self.sbx = sbx

    def _ask(self, message: dict[str, Any]) -> dict[str, Any]:
        reply = self.sbx.request(message, 60.0)
        if reply is None:
            raise SandboxError("the sandbox died during a file operation")
        if not reply.get("ok"):
            raise SandboxError(f"{message['op']} {message['path']!r}: {reply.get('message')}")
        return reply

    def write(self, path: str, data: str | bytes) -> None:
        raw = data.encode() if isinstance(data, str) else bytes(data)
        self._ask({"op": "write", "path": str(path), "data": base64.b64encode(raw).decode()})

    def read(self, path: str, format: Literal["text", "bytes"] = "text") -> str | bytes:
        raw = base64.b64decode(self._ask({"op": "read", "path": str(path)})["data"])
        return raw if format == "bytes" else raw.decode()


class _LocalCommands(Commands):
    def __init__(self, sbx: LocalSandbox):
        self.sbx = sbx

    def run(self, cmd: str, timeout: float | None = 60) -> CommandResult:
        wait = (timeout or 3600.0) + HARD_GRACE_S
        reply = self.sbx.request({"op": "command", "cmd": cmd, "timeout": timeout}, wait)
        if reply is None:
            return CommandResult("", "", -9, "the sandbox died or hung; it was killed")
        if not reply.get("ok"):
            raise SandboxError(reply.get("message", "command failed"))
        return CommandResult(reply["stdout"], reply["stderr"], reply["exit_code"],
                             reply.get("error"))


__all__ = ["LocalSandbox"]
