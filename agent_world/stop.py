"""A process-wide stop request. The CLI sets it on SIGTERM; long loops (GRPO steps, supervised
steps) check it between units of work. LangGraph runs a graph's nodes in worker threads, where
the signal's SystemExit never arrives, so without this a terminated `evolve` kept training
until the stage ended. The last finished unit's checkpoint stays; `--resume` continues.

`at_exit` registers clean-up that also runs when a pool's worker process ends."""

from __future__ import annotations

import threading
from collections.abc import Callable
from multiprocessing import util as mp_util

requested = threading.Event()


class StopRequested(SystemExit):
    """Raised by `check()` once a stop was requested (exit status 143, as for SIGTERM)."""


def check() -> None:
    if requested.is_set():
        raise StopRequested(143)


def at_exit(fn: Callable[[], object]) -> None:
    """Run `fn` when this process ends normally. `atexit` is not enough: a worker of a
    `ProcessPoolExecutor` leaves with `os._exit`, which skips it (a build's pool workers left
    their compiling sandbox's directory behind), but runs multiprocessing's finalizers, which
    the main process runs at exit too."""
    mp_util.Finalize(None, fn, exitpriority=10)


__all__ = ["StopRequested", "at_exit", "check", "requested"]
