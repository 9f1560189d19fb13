"""A process-wide stop request. The CLI sets it on SIGTERM; long loops (GRPO steps, supervised
steps) check it between units of work. LangGraph runs a graph's nodes in worker threads, where
the signal's SystemExit never arrives, so without this a terminated `evolve` kept training
until the stage ended. The last finished unit's checkpoint stays; `--resume` continues."""

from __future__ import annotations

import threading

requested = threading.Event()


class StopRequested(SystemExit):
    """Raised by `check()` once a stop was requested (exit status 143, as for SIGTERM)."""


def check() -> None:
    if requested.is_set():
        raise StopRequested(143)


__all__ = ["StopRequested", "check", "requested"]
