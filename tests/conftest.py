from __future__ import annotations

import atexit
import multiprocessing.util
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.pop("AGENT_WORLD_MODEL", None)
# the stages' per-environment work runs in the test's own process, where tests swap functions
# and models; tests/unit/test_scaleout.py runs it on a process pool and on Ray
os.environ["AGENT_WORLD_WORKERS"] = "1"

# Everything this session (and the processes it starts, even killed ones) writes outside
# pytest's tmp_path goes to two folders removed when the session ends: episode work dirs
# (RAM-backed where /dev/shm is) and temporary files (server logs, ...). Readable by others:
# pgserver runs postgres as its own user.
_SESSION_ENV = "AGENT_WORLD_TEST_SESSION_DIRS"
_OWNER = _SESSION_ENV not in os.environ  # a process a test started reuses its parent's dirs
if _OWNER:
    _SHM = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else None
    _SESSION_DIRS = [Path(tempfile.mkdtemp(prefix="aw-tests-", dir=_SHM)),
                     Path(tempfile.mkdtemp(prefix="aw-tests-tmp-"))]
    for _d in _SESSION_DIRS:
        _d.chmod(0o755)
    os.environ[_SESSION_ENV] = os.pathsep.join(map(str, _SESSION_DIRS))
else:
    _SESSION_DIRS = [Path(p) for p in os.environ[_SESSION_ENV].split(os.pathsep)]
os.environ["AGENT_WORLD_WORKDIR"] = str(_SESSION_DIRS[0])
os.environ["TMPDIR"] = str(_SESSION_DIRS[1])
tempfile.tempdir = None  # re-read TMPDIR


def _remove_session_dirs() -> None:
    if _OWNER:
        for d in _SESSION_DIRS:
            shutil.rmtree(d, ignore_errors=True)


def pytest_sessionfinish(session, exitstatus):
    _remove_session_dirs()


# Unit modules that train, synthesize whole examples or start many worker processes (each
# takes tens of seconds on 2 cores); with tests/integration/ they are the `slow` ones, so
# `pytest -m "not slow"` is a quick pass while editing. `pytest -q` still runs everything.
SLOW_UNIT_MODULES = frozenset({
    "test_agent_graphs.py", "test_catalog_concurrency.py", "test_cli_synthesize.py",
    "test_contract_design.py", "test_deferral_attacks.py", "test_evolve_graph.py",
    "test_git_diff_target.py", "test_harvest.py",
    "test_mine_repeatability.py", "test_task_phrasing.py", "test_task_synthesis.py",
    "test_tool_contracts.py", "test_training_learning.py", "test_training_warm_start.py",
})


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "integration" in item.path.parts or item.path.name in SLOW_UNIT_MODULES:
            item.add_marker(pytest.mark.slow)


atexit.register(_remove_session_dirs)  # again at exit: late writers (platformdirs' runtime dir)


FIXTURES = Path(__file__).parent / "fixtures"


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str,
              make: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `make(folder)` once per test run: with pytest-xdist, the
    first worker to ask makes it and the others wait for it (a file lock in the folder the
    workers share), so a session fixture that takes a minute is not computed on every
    worker. Callers copy or load what they need from it; nobody writes into it after."""
    worker_root = tmp_path_factory.getbasetemp()
    root = worker_root.parent if os.environ.get("PYTEST_XDIST_WORKER") else worker_root
    folder = root / name
    with FileLock(str(root / f"{name}.lock")):
        if not (folder / ".made").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / ".made").touch()
    return folder


@pytest.fixture(scope="session")
def pool_files_outside_session_dirs() -> None:
    """The fork server's socket folder is removed by multiprocessing when the interpreter
    exits, after the session's temporary folders are gone: make it elsewhere. For tests that
    start a process pool in this process (`scaleout.ProcessPool`)."""
    saved = tempfile.tempdir
    tempfile.tempdir = str(Path(tempfile.gettempdir()).parent)
    try:
        multiprocessing.util.get_temp_dir()
    finally:
        tempfile.tempdir = saved


def built_offline(mined: Any) -> Any:
    """`mined` (an EnvSpec) with the tools the offline designer writes for it that pass
    cross-validation in the sandbox (None: the environment was dropped)."""
    # imported here: the settings above must be in place before the package is
    from agent_world.design.cross_validation import (
        SandboxCompiler,
        cross_validate,
        validation_runtime,
    )
    from agent_world.design.tool_designer import design_tools

    compiler, runtime = SandboxCompiler(), validation_runtime()
    try:
        _, spec, _ = cross_validate(mined, design_tools(mined, model=None), compiler=compiler,
                                    runtime=runtime)
    finally:
        compiler.close()
        runtime.close()
    return spec


@pytest.fixture(scope="session")
def notes_spec():
    from agent_world.envs.spec import EnvSpec

    return EnvSpec.load(FIXTURES / "notes_env.json")


@pytest.fixture(scope="module")
def runtime():
    from agent_world.envs.episode import EnvRuntime

    # short, for the tests of runaway tools; long enough that a loaded machine (the suite
    # beside a main job) does not time out a plain query
    rt = EnvRuntime(tool_timeout_s=2.5)
    yield rt
    rt.close()


@pytest.fixture()
def home(tmp_path, monkeypatch):
    """An empty arena home for CLI/catalog tests."""
    monkeypatch.setenv("AGENT_WORLD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_WORLD_CATALOG_URL", raising=False)
    return tmp_path / "home"
