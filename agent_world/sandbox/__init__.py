"""Sandboxes for code the project did not write: one interface (modelled on E2B's code
interpreter), two backends — E2B, and a local bubblewrap sandbox.

    from agent_world.sandbox import get_sandbox
    with get_sandbox() as sbx:                       # E2B if E2B_API_KEY works, else local
        sbx.files.write("initial.sqlite", initial_bytes)
        ok = sbx.evaluate("verify('initial.sqlite', 'final.sqlite')")   # a JSON value

`confine` wraps any command line in the local sandbox (the environment engine's tool workers
use it). This package imports only `agent_world.config` and `agent_world.errors`, so every
layer, the engine included, may use it.
"""

from agent_world.sandbox.e2b import E2BSandbox
from agent_world.sandbox.factory import get_sandbox
from agent_world.sandbox.interface import (
    CommandResult,
    Execution,
    ExecutionError,
    Logs,
    Result,
    Sandbox,
    SandboxExecutionFailed,
)
from agent_world.sandbox.isolation import (
    UNSAFE_ENV,
    Confined,
    Limits,
    check_isolation,
    confine,
    unsafe_requested,
)
from agent_world.sandbox.local import LocalSandbox

__all__ = [
    "CommandResult", "Confined", "E2BSandbox", "Execution", "ExecutionError", "Limits",
    "LocalSandbox", "Logs", "Result", "Sandbox", "SandboxExecutionFailed", "UNSAFE_ENV",
    "check_isolation", "confine", "get_sandbox", "unsafe_requested",
]
