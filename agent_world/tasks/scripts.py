"""Running a programmatic task's generated code (verification scripts, solutions) isolated.

Generated code is not the project's own, so it never runs in the caller's process. Everything
starts through `_spawn()`: an isolated interpreter (`python -I`) confined by the project
sandbox (`agent_world.sandbox.confine`: bubblewrap, no network, a read-only system, its
work dir the only writable place, rlimits, a process limit) under a wall-clock timeout.

Two shapes of script:
- a verification script defines `verify(initial_db, final_db, answer) -> bool | float`; the two
  databases arrive as read-only `Database` handles (`query`, `one`, `scalar`, `count`). Its
  score is True (1.0), False (0.0) or a finite number (int or float) in [0, 1]; anything else
  (NaN, an infinity, 1.5, a string, None) fails the script rather than being clamped: a NaN
  computed from an agent's answer would otherwise clamp to full marks.
- a solution defines `solve(env) -> answer`; `env.call(tool, **arguments)` steps the task's
  episode through the parent (one JSON line each way) and returns the result, raising
  `ToolCallError` on an error observation. A line that is neither a call (`{"call": name,
  "arguments": {...}}`) nor an answer (`{"answer": ...}`), or one longer than 1 MiB, fails
  the solution with a one-line `ScriptError`.

Both scripts' prints go to their stderr, never into the protocol stream.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_world.errors import AgentWorldError
from agent_world.sandbox import Limits, confine

DEFAULT_TIMEOUT_S = 20.0
MAX_LINE_BYTES = 1 << 20  # a solution's longest protocol line (one call or its answer)
_STDERR_TAIL = 64 << 10  # what is kept of a solution's stderr, for the reason it failed
_SCORE_RULE = "a score is True, False or a finite number in [0, 1]"


def _limits() -> Any:
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
_out = sys.stdout
sys.stdout = sys.stderr  # prints of the script never reach the result line
_req = json.loads(sys.stdin.readline())
_ns = {"__name__": "verification", "Database": Database}
exec(compile(_req["source"], "<verify>", "exec"), _ns)
_score = _ns["verify"](Database(_req["initial_db"]), Database(_req["final_db"]), _req["answer"])
# NaN fails the comparison, so it fails here too
if not isinstance(_score, (bool, int, float)) or not 0 <= _score <= 1:
    raise ValueError(f"verify returned {_score!r:.80}: " + _SCORE_RULE)
_out.write(json.dumps({"result": float(_score)}) + "\n")
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
    """Run a verification script; its score as a float (True = 1.0). ScriptError if it fails or
    scores anything but a bool or a finite number in [0, 1]."""
    # the sandbox sees copies of the two states in its work dir, nothing else of the host
    request = {"source": source, "initial_db": "initial.sqlite", "final_db": "final.sqlite",
               "answer": answer}
    with tempfile.TemporaryDirectory(prefix="aw-verify-") as tmp:
        shutil.copyfile(initial_db, Path(tmp) / "initial.sqlite")
        shutil.copyfile(final_db, Path(tmp) / "final.sqlite")
        program = _DB_PRELUDE + f"_SCORE_RULE = {_SCORE_RULE!r}\n" + _VERIFY_MAIN
        with _spawn(program, Path(tmp)) as proc:
            try:
                out, err = proc.communicate(json.dumps(request, default=str) + "\n",
                                            timeout=timeout_s)
            except subprocess.TimeoutExpired:
                raise ScriptError(f"verification script exceeded {timeout_s:g}s") from None
    if proc.returncode != 0:
        raise ScriptError(f"verification script failed: {_last_line(err)}")
    return _score(_last_line(out))


def _score(line: str) -> float:
    """The score on a verification script's result line, checked here as well: the script
    may have written the line itself."""
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    score = message.get("result") if isinstance(message, dict) else None
    if type(score) not in (int, float) or not 0 <= score <= 1:
        raise ScriptError(f"verification script gave no score: {line[:100]!r} ({_SCORE_RULE})")
    return float(score)


def run_solution(source: str, call: Callable[[str, dict[str, Any]], dict[str, Any]],
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_calls: int = 200) -> Any:
    """Run a solution; `call(tool, arguments)` steps the episode and returns
    {"ok", "result"} or {"ok": False, "kind", "message"}. Returns the solution's answer."""
    deadline = time.monotonic() + timeout_s
    with tempfile.TemporaryDirectory(prefix="aw-solve-") as tmp, \
            _spawn(_DB_PRELUDE + _SOLVE_MAIN, Path(tmp)) as proc:
        assert proc.stdin and proc.stdout and proc.stderr
        output = _Output(proc.stdout.fileno(), proc.stderr.fileno(), deadline, timeout_s)
        try:
            _send(proc, {"source": source})
            calls = 0
            while True:
                line = output.line()
                if line is None:
                    output.finish(proc)
                    raise ScriptError(f"solution failed: {_last_line(output.stderr())}")
                msg = _message(line)
                if "answer" in msg:
                    return msg["answer"]
                calls += 1
                if calls > max_calls:
                    raise ScriptError(f"solution made more than {max_calls} tool calls")
                _send(proc, call(msg["call"], msg["arguments"]))
        finally:
            output.close()


def _send(proc: subprocess.Popen[str], message: Any) -> None:
    assert proc.stdin
    try:
        proc.stdin.write(json.dumps(message, default=str) + "\n")
        proc.stdin.flush()
    except BrokenPipeError:  # it stopped reading: what it says (or its exit) comes next
        pass


def _message(line: bytes) -> dict[str, Any]:
    """A solution's line: its answer, or a tool call with its arguments (an object)."""
    try:
        msg = json.loads(line.decode())
    except ValueError:  # not UTF-8, not JSON
        msg = None
    if isinstance(msg, dict):
        if "answer" in msg:
            return msg
        arguments = {} if msg.get("arguments") is None else msg["arguments"]
        if isinstance(msg.get("call"), str) and isinstance(arguments, dict):
            return {"call": msg["call"], "arguments": arguments}
    text = line.decode(errors="replace")
    raise ScriptError(f"solution broke the protocol: {text[:100]!r} is neither a tool call "
                      "nor an answer")


class _Output:
    """A solution's stdout, read line by line under its deadline, and its stderr, drained all
    the while (its prints go there: a full pipe would stall it) with the last 64 KiB kept.
    Reads are of what the pipes hold, so a half-written line cannot block past the deadline."""

    def __init__(self, out: int, err: int, deadline: float, timeout_s: float):
        self._out, self._err = out, err
        self._deadline, self._timeout_s = deadline, timeout_s
        self._sel = selectors.DefaultSelector()
        self._sel.register(out, selectors.EVENT_READ)
        self._sel.register(err, selectors.EVENT_READ)
        self._buf = bytearray()
        self._err_tail = bytearray()
        self._out_open = True

    def line(self) -> bytes | None:
        """The next line without its newline; None at the end of the output."""
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[:end + 1]
                return line
            if len(self._buf) > MAX_LINE_BYTES:
                raise ScriptError(f"solution broke the protocol: a line longer than "
                                  f"{MAX_LINE_BYTES >> 20} MiB")
            if not self._out_open:
                line, self._buf = bytes(self._buf), bytearray()
                return line or None  # a last line without its newline still counts
            self._wait(self._deadline)

    def finish(self, proc: subprocess.Popen[str]) -> None:
        """At the end of its output: wait for the solution to exit, then read its stderr."""
        try:
            proc.wait(timeout=max(0.1, min(5.0, self._deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            raise ScriptError("solution closed its output and went on running") from None
        end = time.monotonic() + 1.0
        while self._sel.get_map() and time.monotonic() < end:
            self._wait(end, timeout_is_error=False)

    def stderr(self) -> str:
        return self._err_tail.decode(errors="replace")

    def close(self) -> None:
        self._sel.close()

    def _wait(self, until: float, timeout_is_error: bool = True) -> None:
        left = until - time.monotonic()
        ready = self._sel.select(left) if left > 0 else []
        if not ready and timeout_is_error:
            raise ScriptError(f"solution exceeded {self._timeout_s:g}s")
        for key, _ in ready:
            data = os.read(key.fd, 1 << 16)
            if not data:
                self._sel.unregister(key.fd)
            if key.fd == self._out:
                self._out_open = bool(data)
                self._buf += data
            else:
                self._err_tail += data
                del self._err_tail[:-_STDERR_TAIL]


def _last_line(text: str) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "no output"


__all__ = ["ScriptError", "run_solution", "run_verify"]
