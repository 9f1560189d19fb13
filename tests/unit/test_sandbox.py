"""The sandbox interface: one contract for both backends, the E2B fallback, the unsafe opt-out.

The E2B backend is exercised through a stand-in for the SDK's client object: it answers with the
SDK's own model classes (Execution, Result, Logs, ExecutionError) and raises the SDK's own
exceptions, running the code in a local sandbox underneath.
"""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import pytest
from e2b import AuthenticationException, CommandExitException
from e2b_code_interpreter import models as e2b_models

from agent_world import sandbox as sb
from agent_world.errors import SandboxUnavailable
from agent_world.sandbox import isolation

try:
    sb.check_isolation()
    NO_ISOLATION = ""
except SandboxUnavailable as exc:
    NO_ISOLATION = str(exc)

needs_bwrap = pytest.mark.skipif(bool(NO_ISOLATION), reason=f"no local sandbox: {NO_ISOLATION}")


class FakeE2BClient:
    """Duck-types `e2b_code_interpreter.Sandbox`: run_code, files, commands, kill."""

    def __init__(self):
        self.inner = sb.LocalSandbox()
        self.files = self
        self.commands = self
        self.killed = False
        self.contexts: list[str] = []  # removed code contexts

    @staticmethod
    def _local(path: str) -> str:
        assert path.startswith("/home/user/"), path  # the backend hands E2B absolute paths
        return path.removeprefix("/home/user/")

    def create_code_context(self, cwd=None):
        assert cwd == "/home/user"
        return e2b_models.Context(context_id=f"ctx{len(self.contexts)}", language="python",
                                  cwd=cwd)

    def remove_code_context(self, context):
        self.contexts.append(context.id)

    def run_code(self, code, timeout=None, context=None):
        # a fresh context is emulated by a fresh run underneath
        ex = self.inner.run_code(code, timeout=timeout, fresh=context is not None)
        if ex.error is not None and ex.error.name == "TimeoutError":
            from e2b import TimeoutException

            raise TimeoutException("Execution timed out")
        # E2B's kernel reports a plain value as text only (json is for display objects)
        results = [e2b_models.Result(text=r.text, is_main_result=True) for r in ex.results]
        error = (e2b_models.ExecutionError(ex.error.name, ex.error.value, ex.error.traceback)
                 if ex.error else None)
        return e2b_models.Execution(results=results, error=error, logs=e2b_models.Logs(
            stdout=ex.logs.stdout, stderr=ex.logs.stderr))

    def write(self, path, data):
        self.inner.files.write(self._local(path), data)

    def read(self, path, format="text"):
        return self.inner.files.read(self._local(path), format=format)

    def run(self, cmd, timeout=60, cwd=None):
        res = self.inner.commands.run(cmd, timeout=timeout)
        if res.exit_code != 0:
            raise CommandExitException(res.stderr, res.stdout, res.exit_code, res.error)
        return res

    def kill(self):
        self.killed = True
        self.inner.kill()


@pytest.fixture(params=["local", "e2b"], scope="module")
def sandbox(request):
    if NO_ISOLATION:
        pytest.skip(f"no local sandbox (the E2B stand-in runs on it too): {NO_ISOLATION}")
    if request.param == "local":
        box = sb.get_sandbox("local", timeout=10)
    else:
        box = sb.get_sandbox("e2b", timeout=10, e2b_factory=lambda t: FakeE2BClient())
    with box:
        yield box


def test_contract_trailing_expression_output_and_state(sandbox):
    ex = sandbox.run_code("import math\nprint('hello')\nanswer = {'pi': round(math.pi, 2)}\nanswer")
    assert ex.error is None
    assert "".join(ex.logs.stdout) == "hello\n"
    assert ex.value == {"pi": 3.14}
    assert sandbox.run_code("answer['pi'] * 2").value == 6.28  # names persist across calls


def test_contract_errors_come_back_with_name_value_traceback(sandbox):
    ex = sandbox.run_code("def f():\n    return 1 / 0\nf()")
    assert ex.error.name == "ZeroDivisionError"
    assert "division by zero" in ex.error.value
    assert "line 2" in ex.error.traceback
    assert sandbox.run_code("1 + 1").value == 2  # the sandbox survives


def test_contract_files_and_evaluate_over_two_databases(sandbox, tmp_path):
    blobs = {}
    for name, n in (("initial.sqlite", 2), ("final.sqlite", 3)):
        path = tmp_path / name
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE t (id INTEGER)")
            conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(n)])
        blobs[name] = path.read_bytes()
    code = ("import sqlite3\n"
            "def rows(p):\n"
            "    return sqlite3.connect(p).execute('SELECT count(*) FROM t').fetchone()[0]\n"
            "{'added': rows('final.sqlite') - rows('initial.sqlite'), 'ok': True}")
    assert sandbox.evaluate(code, files=blobs) == {"added": 1, "ok": True}
    sandbox.files.write("note.txt", "café")
    assert sandbox.files.read("note.txt") == "café"
    assert sandbox.files.read("initial.sqlite", format="bytes") == blobs["initial.sqlite"]
    with pytest.raises(sb.SandboxExecutionFailed, match="NameError"):
        sandbox.evaluate("undefined_name")


def test_contract_fresh_runs_share_nothing_but_files(sandbox):
    sandbox.run_code("kept = 'warm state'")
    patch = "import json\njson.dumps = lambda *a, **k: 'PATCHED'\nleaked = 1\n'patched'"
    assert sandbox.run_code(patch, fresh=True).value == "patched"
    after = sandbox.run_code("import json\n[json.dumps(1), 'leaked' in globals(), kept]")
    assert after.value == ["1", False, "warm state"]
    assert sandbox.evaluate("kept", fresh=True) == "warm state"  # a copy of the warm state
    sandbox.run_code("open('shared.txt', 'w').write('from a fresh run')", fresh=True)
    assert sandbox.files.read("shared.txt") == "from a fresh run"
    died = sandbox.run_code("import os\nos._exit(3)", fresh=True)
    assert died.error is not None
    assert sandbox.run_code("kept").value == "warm state"  # the warm kernel never died


def test_contract_commands_report_exit_codes(sandbox):
    ok = sandbox.commands.run("echo out; echo err >&2")
    assert (ok.stdout, ok.stderr, ok.exit_code) == ("out\n", "err\n", 0)
    bad = sandbox.commands.run("exit 3")
    assert bad.exit_code == 3


def test_contract_timeout_is_an_execution_error(sandbox):
    ex = sandbox.run_code("while True:\n    pass", timeout=1)
    assert ex.error is not None and ex.error.name == "TimeoutError"
    assert sandbox.run_code("'alive'").value == "alive"


@pytest.mark.parametrize("failure", [
    AuthenticationException("Invalid API key"),
    httpx.ConnectError("[Errno -3] Temporary failure in name resolution"),
])
@needs_bwrap
def test_auto_falls_back_to_local_when_e2b_is_unreachable(failure, monkeypatch, caplog):
    monkeypatch.setenv("E2B_API_KEY", "e2b_test_key")

    def create(timeout):
        raise failure

    with caplog.at_level(logging.WARNING, logger="agent_world.sandbox.factory"):
        with sb.get_sandbox(e2b_factory=create) as box:
            assert box.backend == "local"
            assert box.run_code("6 * 7").value == 42
    assert any("falling back to the local sandbox" in r.getMessage()
               and type(failure).__name__ in r.getMessage() for r in caplog.records)


def test_e2b_backend_is_chosen_with_a_key_and_never_falls_back_when_asked_for(monkeypatch):
    monkeypatch.setenv("E2B_API_KEY", "e2b_test_key")
    made = []

    class Client:
        def kill(self):
            made.append("killed")

    with sb.get_sandbox(e2b_factory=lambda t: Client()) as box:
        assert box.backend == "e2b"
    assert made == ["killed"]

    def refuse(timeout):
        raise AuthenticationException("Invalid API key")

    with pytest.raises(AuthenticationException):
        sb.get_sandbox("e2b", e2b_factory=refuse)

    def broken(timeout):
        raise ValueError("a bug, not an outage")

    with pytest.raises(ValueError):  # only auth/connection failures fall back
        sb.get_sandbox(e2b_factory=broken)


def test_no_isolation_is_a_clear_error(monkeypatch):
    monkeypatch.delenv(sb.UNSAFE_ENV, raising=False)
    monkeypatch.setattr(isolation, "bwrap_binary", lambda: None)
    monkeypatch.setattr(isolation, "_probe_result", None)
    with pytest.raises(SandboxUnavailable, match="bubblewrap.*AGENT_WORLD_UNSAFE_NO_SANDBOX"):
        sb.LocalSandbox().run_code("1")
    monkeypatch.setattr(isolation, "_probe_result", None)  # forget the failed probe


def test_unsafe_opt_out_runs_unconfined_and_warns_every_time(monkeypatch, caplog):
    monkeypatch.setenv(sb.UNSAFE_ENV, "1")
    monkeypatch.setattr(isolation, "bwrap_binary", lambda: None)
    with caplog.at_level(logging.WARNING, logger="agent_world.sandbox.isolation"):
        with sb.LocalSandbox() as box:
            assert box.run_code("import os\nos.getcwd()").value == box.workdir
            assert box.run_code("2").value == 2
    warnings = [r for r in caplog.records if "WITHOUT a sandbox" in r.getMessage()]
    assert len(warnings) >= 3  # the start and each of the two runs


@needs_bwrap
def test_process_limit_without_a_pids_cgroup_falls_to_the_watchdog(monkeypatch):
    """Where no pids cgroup is writable, the watchdog kills a sandbox whose process tree grows
    past the limit (RLIMIT_NPROC would not bind root)."""
    monkeypatch.setattr(isolation, "_new_cgroup", lambda processes: None)
    with sb.LocalSandbox(limits=sb.Limits(processes=8), timeout=20) as box:
        ex = box.run_code("import os, time\nfor _ in range(40):\n    if os.fork() == 0:\n"
                          "        time.sleep(60)\n        os._exit(0)\ntime.sleep(60)")
        assert ex.error is not None and ex.error.name == "SandboxKilled"
        assert box.run_code("'back'").value == "back"  # a fresh kernel


@needs_bwrap
def test_import_path_under_tmp_stays_visible_inside(monkeypatch):
    """A checkout (or virtual environment) under /tmp is importable by confined code: the
    sandbox's private /tmp must not cover the directories bound into it. The rest of the
    host's /tmp stays out of sight."""
    with tempfile.TemporaryDirectory(dir="/tmp") as checkout, \
            tempfile.TemporaryDirectory(dir="/tmp") as other:
        Path(checkout, "probe_under_tmp.py").write_text("WHERE = 'bound'\n")
        secret = Path(other, "secret")
        secret.write_text("host file")
        monkeypatch.setenv("PYTHONPATH", checkout)
        confined = isolation.confine([sys.executable, "-c", (
            "import os, probe_under_tmp; "
            f"print(probe_under_tmp.WHERE, os.path.exists({str(secret)!r}))")])
        try:
            proc = confined.popen(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = proc.communicate(timeout=60)
        finally:
            confined.release()
    assert proc.returncode == 0, err.decode()[-2000:]
    assert out.decode().split() == ["bound", "False"]
