"""Each escape attempt against the sandboxed engine is contained, and the host, the catalog and
the other episodes and environments stay intact (attempts in escape_attempts.py)."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from agent_world.envs.episode import EnvRuntime
from agent_world.errors import SandboxUnavailable
from agent_world.sandbox import check_isolation
from agent_world.sandbox.isolation import _tree_pids
from tests.integration.escape_attempts import ATTEMPTS, Arena

pytestmark = pytest.mark.integration

try:
    check_isolation()
except SandboxUnavailable as exc:
    pytest.skip(f"no local sandbox on this machine: {exc}", allow_module_level=True)


@pytest.fixture(scope="module")
def arena():
    a = Arena()
    yield a
    a.close()


@pytest.mark.parametrize("name,attempt", ATTEMPTS, ids=[n for n, _ in ATTEMPTS])
def test_escape_attempt_is_contained(arena, name, attempt):
    outcome = attempt(arena)
    assert outcome.contained, f"{name}: {outcome.host_saw}"


@pytest.mark.parametrize("target", ["worker", "sandbox"])
def test_kill_9_of_a_sandboxed_worker_mid_step(arena, target):
    """Killed mid-call (the worker process inside, or the sandbox process the host started):
    that step fails, its episode is as before, the others go on."""
    ep = arena.attacker
    before = ep.state_hash()
    result = {}

    def slow_write():
        result["obs"] = ep.step("run", {"code": (
            "ctx.db.execute(\"UPDATE users SET name = 'half'\").rowcount\n"  # sent now
            "import time\ntime.sleep(30)")})

    conn = ep._database().conn  # the episode's connection lives in this process
    changes = conn.total_changes
    t = threading.Thread(target=slow_write)
    t.start()
    client = arena.runtime.pool.clients_of(ep.fingerprint)[0]
    deadline = time.monotonic() + 10
    worker = None
    # the tool's UPDATE ran (or was run ahead for it) and the worker is in the call
    while conn.total_changes == changes or worker is None:
        assert time.monotonic() < deadline, "the write never started"
        time.sleep(0.01)
        worker = next((p for p in _tree_pids(client.pid)  # the worker inside the sandbox
                       if b"agent_world.envs.worker" in _cmdline(p)
                       and b"bwrap" not in _cmdline(p)), None) if client.pid else None
    time.sleep(0.2)  # into the tool's sleep
    os.kill(worker if target == "worker" else client.pid, signal.SIGKILL)
    t.join(20)
    assert result["obs"].error.kind == "worker_crash"  # seen as a death, not a hang
    assert ep.state_hash() == before
    assert ep.step("list_notes", {"user_id": 1}).ok
    assert arena.victim.step("list_notes", {"user_id": 1}).ok
    assert arena.intact() == (True, "")


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone meanwhile
        return b""


def test_reads_follow_writes_resets_and_episodes(notes_spec):
    """Reads stay correct across writes, resets and episodes taking turns on one worker
    (keep_read_connections is accepted and has no effect)."""
    with EnvRuntime(workers=1, sandbox=True, keep_read_connections=True) as rt:
        a, b = rt.open(notes_spec, seed=1), rt.open(notes_spec, seed=2)

        def bodies(ep):
            return [n["body"] for n in ep.step("list_notes", {"user_id": 1}).result]

        assert bodies(a) == bodies(b) == ["hello"]
        assert a.step("add_note", {"user_id": 1, "body": "only in a"}).ok
        assert bodies(a) == ["hello", "only in a"] and bodies(b) == ["hello"]
        assert b.step("add_note", {"user_id": 1, "body": "only in b"}).ok
        assert bodies(a) == ["hello", "only in a"] and bodies(b) == ["hello", "only in b"]
        a.reset()
        assert bodies(a) == ["hello"] and bodies(b) == ["hello", "only in b"]
        assert a.step("peek").error.kind == "permission_denied"  # still read-only
