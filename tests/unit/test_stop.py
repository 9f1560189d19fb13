"""`agent_world.stop.at_exit`: clean-up registered in a process pool's worker runs when the
worker ends (`atexit` does not: the worker leaves with `os._exit`), as in the main process."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from agent_world import stop


def _register(marker: str) -> int:
    stop.at_exit(lambda: Path(marker).write_text("cleaned"))
    return 1


def test_at_exit_runs_when_a_pool_worker_ends(tmp_path: Path) -> None:
    marker = tmp_path / "worker"
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver")) as pool:
        assert pool.submit(_register, str(marker)).result() == 1
        assert not marker.exists()  # not before the worker ends
    assert marker.read_text() == "cleaned"


def test_at_exit_runs_when_the_main_process_ends(tmp_path: Path) -> None:
    marker = tmp_path / "main"
    code = ("from pathlib import Path\nfrom agent_world import stop\n"
            f"stop.at_exit(lambda: Path({str(marker)!r}).write_text('cleaned'))\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert marker.read_text() == "cleaned"


def test_sigterm_is_a_normal_exit_that_cleans_up(tmp_path: Path) -> None:
    """With `handle_sigterm` a terminated process runs its clean-up (a killed benchmark left
    its pool's workers and their sandboxes running) and exits with status 143."""
    marker = tmp_path / "terminated"
    code = ("import os, signal, time\nfrom pathlib import Path\nfrom agent_world import stop\n"
            "stop.handle_sigterm()\n"
            f"stop.at_exit(lambda: Path({str(marker)!r}).write_text('cleaned'))\n"
            "os.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(30)\n")
    done = subprocess.run([sys.executable, "-c", code], timeout=60)
    assert done.returncode == 143
    assert marker.read_text() == "cleaned"
