"""Running a programmatic task's generated code (verification scripts, solutions) isolated.

Generated code is not the project's own, so it never runs in the caller's process. Everything
starts through `_spawn()`: an isolated interpreter (`python -I`) confined by the project
sandbox (`agent_world.tools.sandbox.confine`: bubblewrap, no network, a read-only system, its
work dir the only writable place, rlimits, a process limit) under a wall-clock timeout.

Two shapes of script:
- a verification script defines `verify(initial_db, final_db, answer) -> bool | float`; the two
  databases arrive as read-only `Database` handles (`query`, `one`, `scalar`, `count`).
- a solution defines `solve(env) -> answer`; `env.call(tool, **arguments)` steps the task's
  episode through the parent (one JSON line each way) and returns the result, raising
  `ToolCallError` on an error observation.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_world.errors import AgentWorldError

DEFAULT_TIMEOUT_S = 20.0


def _limits() -> Any:
    from agent_world.tools.sandbox import Limits

    return Limits(memory_bytes=1 << 30, cpu_s=60, file_bytes=64 << 20, processes=16)


class ScriptError(AgentWorldError):
    """Generated code that failed to run (syntax error, exception, timeout, bad output)."""


# Shared by both script shapes: read-only database handles.
_DB_PRELUDE = r'''
import json, sqlite3, sys

class Database:
    """A read-only view of one database state."""

    def __init__(self, path):
        self._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self._conn.row_factory = lambda c, r: {d[0]: v for d, v in zip(c.description, r)}

    def query(self, sql, params=()):
        return self._conn.execute(sql, params).fetchall()

    def one(self, sql, params=()):
        return self._conn.execute(sql, params).fetchone()

    def scalar(self, sql, params=()):
        row = self._conn.execute(sql, params).fetchone()
        return None if row is None else next(iter(row.values()))

    def count(self, table, where="1=1", params=()):
        return self.scalar(f'SELECT COUNT(*) AS n FROM "{table}" WHERE {where}', params)
'''

_VERIFY_MAIN = r'''
_req = json.loads(sys.stdin.readline())
_ns = {"__name__": "verification", "Database": Database}
exec(compile(_req["source"], "<verify>", "exec"), _ns)
_out = _ns["verify"](Database(_req["initial_db"]), Database(_req["final_db"]), _req["answer"])
if not isinstance(_out, (bool, int, float)):
    raise TypeError(f"verify returned {type(_out).__name__}, expected bool or float")
sys.__stdout__.write(json.dumps({"result": float(_out)}) + "\n")
'''

_SOLVE_MAIN = r'''
class ToolCallError(Exception):
    """The environment answered a call with an error observation."""

class Env:
    def call(self, tool, **arguments):
        _out.write(json.dumps({"call": tool, "arguments": arguments}) + "\n")
        _out.flush()
        reply = json.loads(_in.readline())
        if not reply["ok"]:
            raise ToolCallError(f"{reply['kind']}: {reply['message']}")
        return reply["result"]

_in, _out = sys.stdin, sys.__stdout__
sys.stdout = sys.stderr  # prints of the solution never reach the protocol stream
_req = json.loads(_in.readline())
_ns = {"__name__": "solution", "ToolCallError": ToolCallError}
exec(compile(_req["source"], "<solution>", "exec"), _ns)
_answer = _ns["solve"](Env())
_out.write(json.dumps({"answer": _answer}, default=str) + "\n")
_out.flush()
'''


@contextmanager
def _spawn(program: str, workdir: Path) -> Iterator[subprocess.Popen[str]]:
    """The script's interpreter, confined by the project sandbox (bubblewrap: no network,
    read-only system, `workdir` its only writable directory, rlimits, a process limit)."""
    from agent_world.tools.sandbox import confine

    confined = confine([sys.executable, "-I", "-c", program], workdir=workdir,
                       limits=_limits(), what="a task script")
    proc = confined.popen(cwd=workdir, text=True, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            confined.kill(proc.pid)
        proc.communicate()
        confined.release()


def run_verify(source: str, initial_db: str | Path, final_db: str | Path, answer: Any,
               timeout_s: float = DEFAULT_TIMEOUT_S) -> float:
    """Run a verification script; its result as a float (True = 1.0). ScriptError if it fails."""
    # the sandbox sees copies of the two states in its work dir, nothing else of the host
    request = {"source": source, "initial_db": "initial.sqlite", "final_db": "final.sqlite",
               "answer": answer}
    with tempfile.TemporaryDirectory(prefix="aw-verify-") as tmp:
        shutil.copyfile(initial_db, Path(tmp) / "initial.sqlite")
        shutil.copyfile(final_db, Path(tmp) / "final.sqlite")
        with _spawn(_DB_PRELUDE + _VERIFY_MAIN, Path(tmp)) as proc:
            try:
                out, err = proc.communicate(json.dumps(request, default=str) + "\n",
                                            timeout=timeout_s)
            except subprocess.TimeoutExpired:
                raise ScriptError(f"verification script exceeded {timeout_s:g}s") from None
    if proc.returncode != 0:
        raise ScriptError(f"verification script failed: {_last_line(err)}")
    try:
        return max(0.0, min(1.0, float(json.loads(out.strip().splitlines()[-1])["result"])))
    except (ValueError, KeyError, IndexError) as exc:
        raise ScriptError(f"verification script gave no result: {exc}") from None


def run_solution(source: str, call: Callable[[str, dict[str, Any]], dict[str, Any]],
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_calls: int = 200) -> Any:
    """Run a solution; `call(tool, arguments)` steps the episode and returns
    {"ok", "result"} or {"ok": False, "kind", "message"}. Returns the solution's answer."""
    import selectors
    import time

    deadline = time.monotonic() + timeout_s
    with tempfile.TemporaryDirectory(prefix="aw-solve-") as tmp, \
            _spawn(_DB_PRELUDE + _SOLVE_MAIN, Path(tmp)) as proc:
        assert proc.stdin and proc.stdout and proc.stderr
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        try:
            proc.stdin.write(json.dumps({"source": source}) + "\n")
            proc.stdin.flush()
            calls = 0
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise ScriptError(f"solution exceeded {timeout_s:g}s")
                line = proc.stdout.readline()
                if not line:
                    proc.wait(timeout=5)
                    raise ScriptError(f"solution failed: {_last_line(proc.stderr.read())}")
                msg = json.loads(line)
                if "answer" in msg:
                    return msg["answer"]
                calls += 1
                if calls > max_calls:
                    raise ScriptError(f"solution made more than {max_calls} tool calls")
                reply = call(msg["call"], msg.get("arguments") or {})
                proc.stdin.write(json.dumps(reply, default=str) + "\n")
                proc.stdin.flush()
        finally:
            sel.close()


def _last_line(text: str) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "no output"


__all__ = ["ScriptError", "run_solution", "run_verify"]
