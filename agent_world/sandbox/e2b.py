"""The E2B backend: the same interface over an `e2b_code_interpreter.Sandbox`."""

from __future__ import annotations

from typing import Any, Literal

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

E2B_WORKDIR = "/home/user"


class E2BSandbox(Sandbox):
    """Wraps a created E2B code-interpreter sandbox (`Sandbox.create(...)` or a stand-in with the
    same methods). Relative paths are taken from E2B's home directory, the kernel's cwd."""

    backend = "e2b"
    workdir = E2B_WORKDIR

    def __init__(self, client: Any, timeout: float = 60.0):
        self.client = client
        self.default_timeout = timeout
        self.files: Files = _E2BFiles(client)
        self.commands: Commands = _E2BCommands(client)

    def run_code(self, code: str, timeout: float | None = None,
                 fresh: bool = False) -> Execution:
        timeout = self.default_timeout if timeout is None else float(timeout)
        context = self.client.create_code_context(cwd=E2B_WORKDIR) if fresh else None
        try:
            raw = self.client.run_code(code, timeout=timeout, context=context)
        except Exception as exc:  # e2b raises TimeoutException when the cell runs too long
            if type(exc).__name__ == "TimeoutException":
                return Execution(error=ExecutionError("TimeoutError",
                                                      f"code exceeded {timeout:g}s"))
            raise
        finally:
            if context is not None:
                self.client.remove_code_context(context)
        results = []
        for r in raw.results or []:
            value = getattr(r, "json", None)
            results.append(Result(text=getattr(r, "text", None), json=value,
                                  is_main_result=bool(getattr(r, "is_main_result", True))))
        err = raw.error
        return Execution(
            results=results,
            logs=Logs(stdout=list(raw.logs.stdout), stderr=list(raw.logs.stderr)),
            error=ExecutionError(err.name, err.value, err.traceback) if err else None)

    def kill(self) -> None:
        self.client.kill()


def _absolute(path: str) -> str:
    return path if path.startswith("/") else f"{E2B_WORKDIR}/{path}"


class _E2BFiles(Files):
    def __init__(self, client: Any):
        self.client = client

    def write(self, path: str, data: str | bytes) -> None:
        self.client.files.write(_absolute(path), data)

    def read(self, path: str, format: Literal["text", "bytes"] = "text") -> str | bytes:
        data = self.client.files.read(_absolute(path), format=format)
        return bytes(data) if format == "bytes" else data


class _E2BCommands(Commands):
    def __init__(self, client: Any):
        self.client = client

    def run(self, cmd: str, timeout: float | None = 60) -> CommandResult:
        try:
            raw = self.client.commands.run(cmd, timeout=timeout, cwd=E2B_WORKDIR)
        except Exception as exc:
            # E2B raises CommandExitException (itself a CommandResult) on a non-zero exit
            if hasattr(exc, "exit_code") and hasattr(exc, "stdout"):
                raw = exc
            else:
                raise
        return CommandResult(raw.stdout, raw.stderr, raw.exit_code, getattr(raw, "error", None))
