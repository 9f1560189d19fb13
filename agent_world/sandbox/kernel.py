"""The code runner that lives inside a local sandbox (`python -m agent_world.sandbox.kernel`).

Like a notebook kernel it keeps one namespace across `run` requests. It speaks length-prefixed
JSON frames on its original stdin/stdout, which it moves aside at start-up; every reply echoes
the request's `id`, a random value the host picks per request, so a frame forged by the code
it runs cannot pass for the answer to a later request (the host kills a sandbox whose reply
does not match). Everything here runs confined: the file system, network and process limits
come from the sandbox around this process, not from this module.

Requests: {"id", "op": "run", "code", "timeout", "cpu", "fresh"} | {"id", "op": "write", "path", "data"}
| {"id", "op": "read", "path"} | {"id", "op": "command", "cmd", "timeout"} | {"id", "op": "ping"}
"""

from __future__ import annotations

import ast
import base64
import io
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
import traceback
from typing import Any

_HEADER = 4
DEFAULT_OUTPUT_CAP = 1 << 20


class RunTimeout(BaseException):
    """Raised in the running code when its time is up (BaseException: `except Exception` in the
    code must not swallow it)."""


def read_frame(stream: Any) -> dict[str, Any] | None:
    header = stream.read(_HEADER)
    if len(header) < _HEADER:
        return None
    size = int.from_bytes(header, "big")
    body = stream.read(size)
    if len(body) < size:
        return None
    return json.loads(body)


def write_frame(stream: Any, message: dict[str, Any]) -> None:
    body = json.dumps(message, default=str).encode()
    stream.write(len(body).to_bytes(_HEADER, "big") + body)
    stream.flush()


class CappedText(io.TextIOBase):
    """A text sink that keeps at most `cap` characters and counts the rest."""

    def __init__(self, cap: int):
        self.cap = cap
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        room = self.cap - self.kept
        if room > 0:
            self.parts.append(s[:room])
            self.kept += min(len(s), room)
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def text(self) -> str:
        out = "".join(self.parts)
        if self.dropped:
            out += f"\n[output truncated: {self.dropped} more characters]"
        return out


def _on_alarm(signum: int, frame: Any) -> None:
    raise RunTimeout()


def _json_or_none(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError, RecursionError):
        return None


class Kernel:
    def __init__(self, output_cap: int = DEFAULT_OUTPUT_CAP):
        self.namespace: dict[str, Any] = {"__name__": "__main__"}
        self.output_cap = output_cap

    def run(self, req: dict[str, Any]) -> dict[str, Any]:
        out, err = CappedText(self.output_cap), CappedText(self.output_cap)
        reply: dict[str, Any] = {"ok": True, "results": [], "error": None}
        timeout = float(req.get("timeout") or 0)
        cpu = req.get("cpu")
        if cpu:  # per-call CPU seconds on top of what this process has used so far
            used = resource.getrusage(resource.RUSAGE_SELF)
            soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
            want = int(used.ru_utime + used.ru_stime) + int(cpu) + 1
            if hard != resource.RLIM_INFINITY:
                want = min(want, hard)
            resource.setrlimit(resource.RLIMIT_CPU, (want, hard))
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        if timeout > 0:
            signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            tree = ast.parse(req["code"], "<code>", "exec")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, "<code>", "exec"), self.namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<code>", "eval"),
                             self.namespace)
                if value is not None:
                    reply["results"] = [{"text": repr(value)[: self.output_cap],
                                         "json": _json_or_none(value)}]
        except RunTimeout:
            reply["error"] = {"name": "TimeoutError", "value": f"code exceeded {timeout:g}s",
                              "traceback": ""}
        except BaseException as exc:  # SystemExit and KeyboardInterrupt included: report them
            tb = exc.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != "<code>":
                tb = tb.tb_next
            reply["error"] = {"name": type(exc).__name__, "value": str(exc)[: self.output_cap],
                              "traceback": "".join(traceback.format_exception(
                                  type(exc), exc, tb))[: self.output_cap]}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            sys.stdout, sys.stderr = saved
        reply["stdout"], reply["stderr"] = out.text(), err.text()
        return reply

    def command(self, req: dict[str, Any]) -> dict[str, Any]:
        timeout = req.get("timeout")
        proc = subprocess.Popen(["/bin/sh", "-c", req["cmd"]], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        outs = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
        dropped = 0
        end = None if not timeout else time.monotonic() + float(timeout)
        error = None
        open_fds = set(outs)
        while open_fds:
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                error = f"command exceeded {float(timeout):g}s"
                break
            ready, _, _ = select.select(list(open_fds), [], [], left)
            for fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    open_fds.discard(fd)
                    continue
                buf = outs[fd]
                room = self.output_cap - len(buf)
                buf.extend(chunk[: max(room, 0)])
                dropped += max(0, len(chunk) - max(room, 0))
        if error is not None:
            os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait()
        out_buf, err_buf = outs.values()
        proc.stdout.close()
        proc.stderr.close()
        out_text = out_buf.decode(errors="replace")
        err_text = err_buf.decode(errors="replace")
        if dropped:
            err_text += f"\n[output truncated: {dropped} more bytes]"
        return {"ok": True, "stdout": out_text, "stderr": err_text,
                "exit_code": -9 if error else code, "error": error}


def run_forked(kernel: Kernel, req: dict[str, Any]) -> dict[str, Any]:
    """Run in a forked copy of the kernel: nothing the code defines, imports or patches
    survives the run. The child hands its reply back over a pipe of its own."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            with os.fdopen(write_end, "wb") as out:
                out.write(json.dumps(kernel.run(req), default=str).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as src:
        data = src.read()
    _, status = os.waitpid(pid, 0)
    try:
        return json.loads(data)
    except ValueError:
        how = (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
               else f"exit code {os.waitstatus_to_exitcode(status)}")
        return {"ok": True, "results": [], "stdout": "", "stderr": "",
                "error": {"name": "SandboxKilled", "value": f"the run's process died ({how})",
                          "traceback": ""}}


def main() -> None:
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    signal.signal(signal.SIGALRM, _on_alarm)
    kernel = Kernel(int(os.environ.get("AGENT_WORLD_SANDBOX_OUTPUT_CAP", DEFAULT_OUTPUT_CAP)))
    reader = io.BufferedReader(proto_in)
    while True:
        req = read_frame(reader)
        if req is None:
            return
        op = req.get("op")
        try:
            if op == "run" and req.get("fresh"):
                reply = run_forked(kernel, req)
            elif op == "run":
                reply = kernel.run(req)
            elif op == "write":
                data = base64.b64decode(req["data"])
                with open(req["path"], "wb") as fh:
                    fh.write(data)
                reply = {"ok": True}
            elif op == "read":
                with open(req["path"], "rb") as fh:
                    reply = {"ok": True, "data": base64.b64encode(fh.read()).decode()}
            elif op == "command":
                reply = kernel.command(req)
            elif op == "ping":
                reply = {"ok": True, "pid": os.getpid()}
            else:
                reply = {"ok": False, "message": f"unknown op {op!r}"}
        except RunTimeout:
            reply = {"ok": False, "message": "timed out"}
        except Exception as exc:
            reply = {"ok": False, "message": f"{type(exc).__name__}: {exc}"}
        reply["id"] = req.get("id")
        write_frame(proto_out, reply)


if __name__ == "__main__":
    main()
