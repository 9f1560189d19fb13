"""The sandbox interface every backend implements, modelled on E2B's code interpreter.

    with get_sandbox() as sbx:
        sbx.files.write("before.sqlite", data)
        execution = sbx.run_code("import sqlite3\\nlen(sqlite3.connect('before.sqlite')...)")
        execution.logs.stdout, execution.error, execution.results[-1].json

`run_code` is stateful like a notebook kernel: names defined by one call are visible to the
next. The value of a trailing expression is the call's result (`Result.text` is its repr,
`Result.json` the value itself when it is JSON-serializable). An exception in the code is not
raised on the host: it comes back as `Execution.error` (name, value, traceback).
Paths given to `files` and `commands` are relative to the sandbox's work directory
(`Sandbox.workdir`), which is also the code's current directory.
"""

from __future__ import annotations

import ast
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_world.errors import SandboxError


@dataclass
class Logs:
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)


@dataclass
class ExecutionError:
    """An exception raised by the sandboxed code (`name` is its class, e.g. 'ZeroDivisionError';
    'TimeoutError' when the code ran past its time, 'SandboxKilled' when the sandbox died)."""

    name: str
    value: str
    traceback: str = ""


@dataclass
class Result:
    """One result of a run: the value of the code's trailing expression."""

    text: str | None = None
    json: Any = None
    is_main_result: bool = True


@dataclass
class Execution:
    results: list[Result] = field(default_factory=list)
    logs: Logs = field(default_factory=Logs)
    error: ExecutionError | None = None

    @property
    def text(self) -> str | None:
        for r in self.results:
            if r.is_main_result:
                return r.text
        return None

    @property
    def value(self) -> Any:
        """The trailing expression's value as a JSON value (None when there is none)."""
        for r in self.results:
            if r.is_main_result:
                if r.json is not None:
                    return r.json
                if r.text is None:
                    return None
                try:  # a backend that only reports repr(): dicts, lists, numbers, strings
                    return ast.literal_eval(r.text)
                except (ValueError, SyntaxError):
                    return r.text
        return None


@dataclass
class CommandResult:
    stdout: str
    stderr: str
    exit_code: int
    error: str | None = None


class SandboxExecutionFailed(SandboxError):
    """`Sandbox.evaluate` ran code that raised; carries the sandbox's ExecutionError."""

    def __init__(self, error: ExecutionError):
        super().__init__(f"{error.name}: {error.value}")
        self.error = error


class Files(ABC):
    @abstractmethod
    def write(self, path: str, data: str | bytes) -> None: ...

    @abstractmethod
    def read(self, path: str, format: Literal["text", "bytes"] = "text") -> str | bytes: ...


class Commands(ABC):
    @abstractmethod
    def run(self, cmd: str, timeout: float | None = 60) -> CommandResult:
        """Run a shell command in the work directory; a non-zero exit is a result, not an
        exception."""


class Sandbox(ABC):
    """One isolated code-execution session. Use as a context manager or call `kill()`."""

    backend: str = "?"
    workdir: str = "."
    files: Files
    commands: Commands

    @abstractmethod
    def run_code(self, code: str, timeout: float | None = None,
                 fresh: bool = False) -> Execution:
        """Run Python code. `fresh`: in a clean copy of the interpreter (local: a fork of the
        warm kernel; E2B: a new code context), so nothing earlier runs defined or patched is
        seen and nothing this run does is kept; files in the work dir are shared either way."""

    @abstractmethod
    def kill(self) -> None: ...

    def evaluate(self, code: str, files: dict[str, str | bytes] | None = None,
                 timeout: float | None = None, fresh: bool = True) -> Any:
        """Write `files`, run `code` (by default `fresh`: one untrusted script cannot tamper
        with the next), return its trailing expression's JSON value; raise
        `SandboxExecutionFailed` if the code raised or timed out. The quick path for
        verification scripts over database files."""
        for path, data in (files or {}).items():
            self.files.write(path, data)
        execution = self.run_code(code, timeout=timeout, fresh=fresh)
        if execution.error is not None:
            raise SandboxExecutionFailed(execution.error)
        return execution.value

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()
