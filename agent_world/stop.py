"""A process-wide stop request. The CLI sets it on SIGTERM; long loops (GRPO steps, supervised
steps) check it between units of work. LangGraph runs a graph's nodes in worker threads, where
the signal's SystemExit never arrives, so without this a terminated `evolve` kept training
until the stage ended. The last finished unit's checkpoint stays; `--resume` continues.

`at_exit` registers clean-up that also runs when a pool's worker process ends;
`handle_sigterm` makes SIGTERM a normal exit, so that clean-up runs (a benchmark killed
without it left its process pool's workers and their sandboxes running)."""

from __future__ import annotations

import signal
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


def _terminate(signum: int, _frame: object) -> None:
    requested.set()  # stages running in a graph's worker threads stop at their next step
    raise SystemExit(128 + signum)  # unwinds: runs are closed, temporary files removed


def handle_sigterm() -> None:
    """On SIGTERM, request a stop and leave the main thread with status 143 (call from the
    main thread of a command or script)."""
    signal.signal(signal.SIGTERM, _terminate)


__all__ = ["StopRequested", "at_exit", "check", "handle_sigterm", "requested"]
