"""Choosing a backend: E2B when a key is set and E2B answers, else the local sandbox."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any, Literal

import httpx

from agent_world.sandbox.e2b import E2BSandbox
from agent_world.sandbox.interface import Sandbox
from agent_world.sandbox.isolation import Limits
from agent_world.sandbox.local import LocalSandbox

log = logging.getLogger(__name__)

Backend = Literal["auto", "e2b", "local"]


def _e2b_create(timeout: float) -> Any:
    from e2b_code_interpreter import Sandbox as E2BClient

    return E2BClient.create(timeout=max(int(timeout) * 10, 300))


def _unreachable(exc: BaseException) -> bool:
    """An authentication failure or a connection failure: E2B cannot be used from here."""
    from e2b import AuthenticationException

    return isinstance(exc, AuthenticationException | httpx.ConnectError | httpx.ConnectTimeout)


def get_sandbox(backend: Backend = "auto", *, limits: Limits | None = None,
                timeout: float = 60.0, e2b_factory: Callable[[float], Any] | None = None
                ) -> Sandbox:
    """A sandbox for untrusted code. `auto`: E2B when `E2B_API_KEY` is set, falling back to the
    local bubblewrap sandbox with a logged warning if E2B rejects the key or cannot be reached;
    otherwise local. `e2b` never falls back. The local sandbox raises `SandboxUnavailable` on a
    machine where it cannot isolate (unless AGENT_WORLD_UNSAFE_NO_SANDBOX=1)."""
    if backend not in ("auto", "e2b", "local"):
        raise ValueError(f"unknown sandbox backend {backend!r} (auto, e2b or local)")
    if backend == "e2b" or (backend == "auto" and os.environ.get("E2B_API_KEY")):
        create = e2b_factory or _e2b_create
        try:
            return E2BSandbox(create(timeout), timeout=timeout)
        except Exception as exc:
            if backend == "e2b" or not _unreachable(exc):
                raise
            log.warning("E2B sandbox unavailable (%s: %s); falling back to the local sandbox",
                        type(exc).__name__, exc)
    sbx = LocalSandbox(limits=limits, timeout=timeout)
    sbx.start()
    return sbx
