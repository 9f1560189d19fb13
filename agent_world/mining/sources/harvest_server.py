"""Reading an installed MCP server: start it confined (``sandbox.isolation``), speak MCP over
its stdio (``initialize``, every page of ``tools/list``, declared resources and prompts) within
one time limit, and check the tools it lists."""

from __future__ import annotations

import json
import queue
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from mcp import types as mcp_types
from pydantic import ValidationError

from agent_world.mining.sources.harvest_models import HarvestEntry, _Failed, _tail
from agent_world.sandbox.isolation import SANDBOX_WORKDIR, Limits, confine
from agent_world.version import __version__

_MAX_STDOUT = 32 * 1024 * 1024  # what one server may print before the read stops
_GARBAGE_SAMPLES = 3
# Servers started under isolation: node's V8 reserves far more address space than it uses
# (each WebAssembly memory, undici's HTTP parser among them, reserves a 10 GiB cage), so the
# address-space limit is loose; both runtimes start worker threads.
_LIMITS = Limits(memory_bytes=256 << 30, cpu_s=300, processes=256, tmp_bytes=128 << 20)
_PROTOCOL = mcp_types.LATEST_PROTOCOL_VERSION


class _Stdio:
    """A minimal MCP client over a child's stdio: JSON-RPC lines, with a deadline per read.
    Anything on stdout that is not a JSON-RPC message is counted and quoted (servers that
    print banners or logs there).

    Not the MCP SDK's `stdio_client` (which `mcp.py` uses for trusted servers): a harvested
    server is untrusted code that must start inside `sandbox.isolation.confine` (its own
    process wrapper, rlimits, no network, killed by the sandbox), its stdout must be read with
    a byte cap, and its non-protocol lines are the diagnosis the ledger quotes; the SDK spawns
    the process itself and drops such lines as parse errors."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc = proc
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.garbage: list[str] = []
        self.garbage_count = 0
        self._next_id = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        total = 0
        for line in self.proc.stdout:
            total += len(line)
            if total > _MAX_STDOUT:
                break
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it exited: the read sees end of output and says so

    def request(self, method: str, params: dict[str, Any], deadline: float) -> dict[str, Any]:
        self._next_id += 1
        rid = self._next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Failed("start" if method == "initialize" else "list",
                              f"no answer to {method} in time")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                code = self.proc.wait(timeout=5) if self.proc.poll() is None else self.proc.poll()
                raise _Failed("start" if method == "initialize" else "list",
                              f"it closed its output (exit code {code}) before answering "
                              f"{method}")
            message = self._parse(line)
            if message is None:
                continue
            if "method" in message:  # a request or notification from the server
                if "id" in message:
                    self._answer(message)
                continue
            if message.get("id") != rid:
                continue
            if "error" in message:
                err = message["error"]
                text = err.get("message") if isinstance(err, dict) else err
                raise _Failed("start" if method == "initialize" else "list",
                              f"{method} answered with an error: {text}")
            result = message.get("result")
            if not isinstance(result, dict):
                raise _Failed("list", f"{method} answered with a {type(result).__name__}, "
                                      "not an object")
            return result

    def _parse(self, line: bytes) -> dict[str, Any] | None:
        text = line.decode("utf-8", errors="replace").strip()
        if not text:
            return None
        try:
            message = json.loads(text)
        except json.JSONDecodeError:
            message = None
        if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
            return message
        self.garbage_count += 1
        if len(self.garbage) < _GARBAGE_SAMPLES:
            self.garbage.append(text[:120])
        return None

    def _answer(self, request: dict[str, Any]) -> None:
        method = request.get("method")
        if method == "ping":
            self.send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
        elif method == "roots/list":
            self.send({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}})
        else:
            self.send({"jsonrpc": "2.0", "id": request["id"],
                       "error": {"code": -32601, "message": f"method {method!r} not offered"}})

    def garbage_note(self) -> str:
        if not self.garbage_count:
            return ""
        shown = "; ".join(repr(g) for g in self.garbage)
        return (f"; its stdout had {self.garbage_count} line(s) that are not JSON-RPC "
                f"(MCP servers print only protocol messages there), such as {shown}")


def _list_all(client: _Stdio, method: str, key: str, deadline: float) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(100):  # pagination guard
        result = client.request(method, {"cursor": cursor} if cursor else {}, deadline)
        page = result.get(key)
        if not isinstance(page, list):
            raise _Failed("list", f"{method} answer has no '{key}' list")
        items.extend(page)
        cursor = result.get("nextCursor")
        if not cursor:
            break
    return items


def _fill(text: str, prefix: Path) -> str:
    return text.replace("{workdir}", SANDBOX_WORKDIR).replace("{prefix}", str(prefix))


def _read(entry: HarvestEntry, executable: str, prefix: Path, timeout: float
          ) -> dict[str, Any]:
    """Start the installed server confined, read what it serves, stop it."""
    with tempfile.TemporaryDirectory(prefix="aw-harvest-") as scratch:
        work = Path(scratch) / "work"
        work.mkdir()
        for name, content in entry.files.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(_fill(content, prefix), encoding="utf-8")
        env = {"PYTHONPATH": "", "NO_COLOR": "1", "NODE_ENV": "production",
               **{k: _fill(v, prefix) for k, v in entry.env.items()}}
        argv = [executable, *(_fill(a, prefix) for a in entry.args)]
        confined = confine(argv, workdir=work, limits=_LIMITS, env=env, ro_paths=[prefix],
                           what=f"MCP server {entry.package}")
        errlog = (Path(scratch) / "stderr.log").open("w+b")
        proc = confined.popen(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog)
        client = _Stdio(proc)
        deadline = time.monotonic() + timeout
        try:
            try:
                init = client.request("initialize", {
                    "protocolVersion": _PROTOCOL, "capabilities": {},
                    "clientInfo": {"name": "agent-world-harvest", "version": __version__}},
                    deadline)
                client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                tools = _list_all(client, "tools/list", "tools", deadline)
                caps = init.get("capabilities") if isinstance(init.get("capabilities"),
                                                              dict) else {}
                extra: dict[str, list[dict[str, Any]]] = {}
                for cap, method in (("resources", "resources/list"),
                                    ("prompts", "prompts/list")):
                    if cap in caps:
                        try:
                            extra[cap] = _list_all(client, method, cap, deadline)
                        except _Failed:  # declared but not served offline: the tools stand
                            extra[cap] = []
            except _Failed as exc:
                reason = exc.reason
                if "in time" in reason:
                    reason = reason.replace("in time", f"within {timeout:g} s")
                raise _Failed(exc.stage, reason + client.garbage_note()
                              + _stderr(errlog)) from None
        finally:
            confined.kill(proc.pid)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            confined.release()
            errlog.close()
    return {"init": init, "tools": tools, **extra}


def _stderr(errlog: Any) -> str:
    errlog.flush()
    errlog.seek(0)
    text = errlog.read().decode("utf-8", errors="replace").strip()
    return f"\n--- server stderr ---\n{_tail(text)}" if text else ""


def _check_tools(tools: list[Any]) -> None:
    if not tools:
        raise _Failed("list", "it lists no tools")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        try:
            parsed = mcp_types.Tool.model_validate(tool)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise _Failed("list", f"tools/list tool #{i + 1} is malformed ({where}: "
                                  f"{first['msg']})") from None
        if parsed.name in names:
            raise _Failed("list", f"tools/list names tool {parsed.name!r} twice")
        names.add(parsed.name)
