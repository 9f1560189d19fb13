"""Arena data stays out of every sandbox, however its home was given.

The sandbox binds the import path read-only (the working directory of `python -m`, PYTHONPATH
entries, the virtual environment). An arena home inside one of them — chosen with `--home`, an
API `home=` argument, $AGENT_WORLD_HOME, or a home this process never opened — must stay
invisible to tool code, task solutions and verification scripts: its catalog holds every
task's gold answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_world import sandbox as sb
from agent_world.cli.common import State
from agent_world.config import HOME_ENV
from agent_world.envs.catalog import Catalog
from agent_world.envs.episode import EnvRuntime
from agent_world.errors import SandboxUnavailable
from agent_world.sandbox import isolation
from agent_world.tasks.scripts import run_solution, run_verify

try:
    sb.check_isolation()
except SandboxUnavailable as exc:
    pytest.skip(f"no local sandbox on this machine: {exc}", allow_module_level=True)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SECRET = b"GOLD-ANSWER-42"
# Reads each path; prints what it could see ("READ" or the error's name), one JSON object.
_PROBE = ("import json\nseen = {{}}\nfor p in {paths!r}:\n"
          "    try:\n        data = open(p, 'rb').read()\n"
          "        seen[p] = 'READ' if data else 'EMPTY'\n"
          "    except OSError as e:\n        seen[p] = type(e).__name__\n")


def _make_home(how: str, home: Path, monkeypatch) -> Path:
    """Make `home` an arena home the way `how` says; the file that holds its secrets."""
    home.mkdir(parents=True)
    if how == "cli flag":  # what `agent-world --home DIR` does
        State().set_home(home)
    elif how == "env var":
        monkeypatch.setenv(HOME_ENV, str(home))
    elif how == "api argument":
        Catalog.open(home)
        return home / "catalog.sqlite"  # a real catalog: readable bytes
    elif how == "catalog url":
        Catalog(f"sqlite:///{home / 'catalog.sqlite'}")
        return home / "catalog.sqlite"
    elif how == "runtime workdir":  # environment templates and episode files
        spec_path = FIXTURES / "notes_env.json"
        from agent_world.envs.spec import EnvSpec

        rt = EnvRuntime(workdir=home)
        try:
            return rt.prepare(EnvSpec.load(spec_path))
        finally:
            rt.close()
    elif how != "never opened":  # "never opened": another process's home, a copy
        raise AssertionError(how)
    catalog = home / "catalog.sqlite"
    catalog.write_bytes(SECRET)
    return catalog


HOW = ["cli flag", "api argument", "env var", "catalog url", "never opened", "runtime workdir"]


@pytest.fixture()
def on_import_path(tmp_path, monkeypatch):
    """A directory on sys.path and PYTHONPATH (as the working directory of `python -m` or
    PYTHONPATH=. puts it): the sandbox binds it read-only."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "probe_module.py").write_text("WHERE = 'lib'\n")
    monkeypatch.syspath_prepend(str(lib))
    monkeypatch.setenv("PYTHONPATH", str(lib))
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "elsewhere"))  # not the home under test
    return lib


def _confined(code: str, **kwargs) -> tuple[int, str, str]:
    confined = isolation.confine([sys.executable, "-c", code], **kwargs)
    try:
        proc = confined.popen(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=60)
    finally:
        confined.release()
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("how", HOW)
def test_confined_code_cannot_read_a_home_on_the_import_path(how, on_import_path, monkeypatch):
    secret = _make_home(how, on_import_path / "arena", monkeypatch)
    assert secret.read_bytes()  # the host sees it
    rc, out, err = _confined(_PROBE.format(paths=[str(secret)]) + (
        "import agent_world\nprint(json.dumps(seen))\n"))
    assert rc == 0, err[-2000:]  # the sandbox still runs the project's code
    assert json.loads(out) == {str(secret): "FileNotFoundError"}


@pytest.mark.parametrize("how", ["cli flag", "never opened"])
def test_a_home_inside_a_directory_bound_whole_is_covered(how, tmp_path, monkeypatch):
    """A directory bound whole (here a caller's read-only bind; /usr, the work dir) shows the
    rest of its files, and an empty, read-only folder where the home is."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "visible.txt").write_text("ok")
    _make_home(how, data / "arena", monkeypatch)
    code = ("import json, os\nseen = {'listing': os.listdir('/data/arena'),\n"
            "        'visible': open('/data/visible.txt').read()}\n"
            "try:\n    open('/data/arena/planted', 'w').write('x')\n    seen['write'] = 'ok'\n"
            "except OSError as e:\n    seen['write'] = type(e).__name__\n"
            "print(json.dumps(seen))\n")
    rc, out, err = _confined(code, ro_binds=[(data, "/data")])
    assert rc == 0, err[-2000:]
    assert json.loads(out) == {"listing": [], "visible": "ok", "write": "OSError"}
    assert sorted(p.name for p in (data / "arena").iterdir()) == ["catalog.sqlite"]


@pytest.mark.parametrize("how", ["cli flag", "api argument", "never opened"])
def test_verification_script_cannot_read_the_catalog(how, on_import_path, monkeypatch,
                                                     tmp_path):
    secret = _make_home(how, on_import_path / "arena", monkeypatch)
    db = tmp_path / "state.sqlite"
    db.write_bytes(b"")
    source = ("def verify(initial_db, final_db, answer):\n"
              f"    try:\n        open({str(secret)!r}, 'rb').read()\n"
              "    except OSError:\n        return 0.0\n"
              "    return 1.0\n")
    assert run_verify(source, db, db, None) == 0.0


@pytest.mark.parametrize("how", ["cli flag", "api argument", "never opened"])
def test_task_solution_cannot_read_the_catalog(how, on_import_path, monkeypatch):
    secret = _make_home(how, on_import_path / "arena", monkeypatch)
    source = ("def solve(env):\n" + "\n".join(
        "    " + line for line in _PROBE.format(paths=[str(secret)]).splitlines())
        + "\n    return seen\n")
    answer = run_solution(source, lambda tool, arguments: {"ok": True, "result": None})
    assert answer == {str(secret): "FileNotFoundError"}
