"""Arena environments as OpenEnv environments, against the installed `openenv-core`: the
environment in-process (reset/step/state, the task check as the rubric), and an exported
directory served the way OpenEnv runs one locally (`python -m server.app`), validated by
OpenEnv's own validators and driven by OpenEnv's own client over its WebSocket protocol."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import pytest

pytest.importorskip("openenv.core", reason="openenv-core is not installed (see the README)")
pytest.importorskip("uv", reason="uv is not installed: pip install -e .[openenv]")

from openenv.cli.__main__ import app as openenv_cli  # noqa: E402
from openenv.cli._validation import (  # noqa: E402
    validate_multi_mode_deployment,
    validate_running_environment,
)
from openenv.core.env_server.mcp_types import (  # noqa: E402
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
)
from openenv.core.mcp_client import MCPToolClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402
from uv import find_uv_bin  # noqa: E402

from agent_world.cli import app  # noqa: E402
from agent_world.envs import load_example  # noqa: E402
from agent_world.envs.episode import EnvRuntime  # noqa: E402
from agent_world.integrations.openenv import (  # noqa: E402
    SUBMIT_TOOL,
    ArenaEnvClient,
    ArenaObservation,
    ArenaOpenEnv,
    OpenEnvAdapterError,
)
from agent_world.integrations.openenv_export import export_openenv  # noqa: E402
from agent_world.tasks.check import check_task  # noqa: E402
from agent_world.training.drills import drill_tasks  # noqa: E402
from tests.integration.served import listening_hosts  # noqa: E402

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runtime():
    with EnvRuntime(workers=2) as rt:
        yield rt


def _gold(env: ArenaOpenEnv, task) -> list:
    return [env.step(CallToolAction(tool_name=c.tool, arguments=c.arguments))
            for c in task.chain]


def test_reset_step_state_and_the_check_as_rubric(runtime):
    airline = load_example("airline")
    tasks = drill_tasks("lookup", limit=3) + drill_tasks("cancel", limit=1)
    env = ArenaOpenEnv(airline, tasks, runtime=runtime)
    try:
        lookup, cancel = tasks[0], tasks[-1]
        first = env.reset(task_id=lookup.id)
        assert isinstance(first, ArenaObservation) and not first.done
        assert first.instruction == lookup.instruction
        assert first.tool_names == [*lookup.tool_view, SUBMIT_TOOL]
        listed = env.step(ListToolsAction())
        assert [t.name for t in listed.tools] == first.tool_names
        for obs in _gold(env, lookup):
            assert obs.error is None and obs.reward == 0.0 and not obs.done
        bad = env.step(CallToolAction(tool_name="search_flights", arguments={}))
        assert bad.error is not None and "unknown_tool" in bad.error.message  # not in the view
        last = env.step(CallToolAction(tool_name=SUBMIT_TOOL, arguments={
            "answer": json.dumps(lookup.reference_answer)}))
        assert last.done and last.reward == 1.0 and last.check["passed"]
        state = env.state
        assert state.done and state.task_id == lookup.id and state.step_count == \
            len(lookup.chain) + 2 and state.changes == {}
        after = env.step(CallToolAction(tool_name=lookup.chain[0].tool,
                                        arguments=lookup.chain[0].arguments))
        assert after.done and "over" in after.error.message

        # a wrong answer: the rubric gives exactly what the task check gives
        env.reset(task_id=lookup.id)
        _gold(env, lookup)
        last = env.step(CallToolAction(tool_name=SUBMIT_TOOL, arguments={"answer": "no idea"}))
        expected = check_task(lookup, env.episode.template, env.episode.path, "no idea")
        assert last.done and last.reward == expected.score < 1.0
        assert last.check["components"] == {**expected.components, "grounded": 1.0,
                                            "efficiency": 1.0}

        # the right answer without a call of the task's tools: a guess, no reward
        env.reset(task_id=lookup.id)
        last = env.step(CallToolAction(tool_name=SUBMIT_TOOL, arguments={
            "answer": json.dumps(lookup.reference_answer)}))
        assert last.done and last.reward == 0.0 and last.check["components"]["grounded"] == 0.0

        # a write task: the check reads the final state (nothing done: state component 0)
        env.reset(task_id=cancel.id)
        last = env.step(CallToolAction(tool_name=SUBMIT_TOOL, arguments={"answer": "done"}))
        assert last.reward == 0.0 and last.check["components"] == {
            "state": 0.0, "grounded": 0.0, "efficiency": 1.0}
        env.reset(task_id=cancel.id)
        _gold(env, cancel)
        assert env.state.changes["reservations"]["updated"] == 1
        last = env.step(CallToolAction(tool_name=SUBMIT_TOOL, arguments={"answer": "done"}))
        assert last.reward == 1.0

        assert env.reset(seed=5).task_id == tasks[5 % len(tasks)].id  # seed picks the task
        with pytest.raises(OpenEnvAdapterError, match="unknown task"):
            env.reset(task_id="t-nope")
    finally:
        env.close()


def test_free_episode_limits_and_refusals(runtime):
    airline = load_example("airline")
    env = ArenaOpenEnv(airline, runtime=runtime, max_steps=2)
    try:
        first = env.reset(seed=3)
        assert first.task_id is None and "episode_reset" not in first.tool_names
        names = [t.name for t in env.step(ListToolsAction()).tools]
        assert {"episode_reset", "episode_diff", SUBMIT_TOOL} <= set(names)
        obs = env.step(CallToolAction(tool_name="get_reservation",
                                      arguments={"reservation_id": "NOPE00"}))
        assert obs.error is not None and "tool_error" in obs.error.message and not obs.done
        obs = env.step(CallToolAction(tool_name="episode_diff", arguments={}))
        assert obs.done and obs.reward == 0.0  # max_steps reached; no task, nothing to check
    finally:
        env.close()
    ecommerce = load_example("ecommerce")
    with pytest.raises(OpenEnvAdapterError, match="other environments"):
        ArenaOpenEnv(ecommerce, drill_tasks("lookup", limit=1), runtime=runtime)
    raw = json.loads(airline.to_json())
    old = raw["tools"][0]["name"]
    raw["tools"][0]["name"] = "step"
    raw["tools"][0]["source"] = raw["tools"][0]["source"].replace(f"def {old}(", "def step(")
    raw["tests"] = [t for t in raw.get("tests", []) if t.get("tool") != old]
    renamed = type(airline).model_validate(raw)
    with pytest.raises(OpenEnvAdapterError, match="reserved"):
        ArenaOpenEnv(renamed, runtime=runtime)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _episode(url: str, task) -> tuple[float, ArenaObservation, dict]:
    async with ArenaEnvClient(base_url=url) as env:
        first = (await env.reset(task_id=task.id)).observation
        results = [await env.call_tool(c.tool, **c.arguments) for c in task.chain]
        last = await env.step(CallToolAction(tool_name=SUBMIT_TOOL, arguments={
            "answer": json.dumps(task.reference_answer)}))
        state = await env.state()
        assert last.done and last.observation.check["passed"]
        return last.reward, first, {"results": results, "state": state}


def test_export_served_validated_and_driven_by_openenv_client(tmp_path):
    out = tmp_path / "airline_openenv"
    # no package index (a closed loopback port): the export is whole but for its lock
    index = f"http://127.0.0.1:{_port()}/simple"
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "export", "openenv",
                                      str(out), "--drill", "lookup", "--limit", "4",
                                      "--max-concurrent", "8"], env={
        "UV_DEFAULT_INDEX": index, "UV_INDEX_URL": index, "UV_HTTP_RETRIES": "0"})
    assert result.exit_code == 0, result.output
    for name in ("openenv.yaml", "pyproject.toml", "server/app.py", "client.py", "env.json",
                 "tasks.jsonl", "README.md"):
        assert (out / name).is_file(), name
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].startswith("warning: no uv.lock: uv lock failed (")
    assert index in warnings[0] and warnings[0].endswith("once the package index is reachable")
    assert not (out / "uv.lock").exists()
    [wheel] = (out / "wheels").glob("agent_world-*.whl")  # the image installs it
    assert f"ARG AGENT_WORLD=wheels/{wheel.name}" in (out / "server" / "Dockerfile").read_text()
    ok, issues = validate_multi_mode_deployment(out)
    # everything OpenEnv checks is there except the lock, which needs the index
    assert issues == ["Missing uv.lock - run 'uv lock' to generate it"]
    tasks = [t for t in drill_tasks("lookup", limit=4)]

    port = _port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")])}
    with log.open("w") as err:
        # no --host: the exported server's default (was 0.0.0.0: every interface)
        proc = subprocess.Popen([sys.executable, "-m", "server.app",
                                 "--port", str(port)], cwd=out, env=env,
                                start_new_session=True, stdout=err, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        assert listening_hosts(port) == {"127.0.0.1"}
        report = validate_running_environment(url, timeout_s=30)
        assert report["passed"], report["summary"]

        async def drive() -> list:
            # two sessions at once: each its own environment instance and episode
            both = await asyncio.gather(_episode(url, tasks[0]), _episode(url, tasks[1]))
            async with MCPToolClient(base_url=url) as plain:  # the generic client works too
                await plain.reset(task_id=tasks[2].id)
                names = [t.name for t in await plain.list_tools()]
                step = await plain.step(CallToolAction(tool_name="get_reservation",
                                                       arguments={"reservation_id": "ZZZ999"}))
                return [*both, (names, step)]

        (r1, first1, d1), (r2, first2, _), (names, step) = asyncio.run(drive())
        assert r1 == r2 == 1.0
        assert first1.instruction == tasks[0].instruction != first2.instruction
        assert d1["state"].task_id == tasks[0].id and d1["state"].done
        assert isinstance(d1["results"][0], dict)  # tool results come back as values
        assert SUBMIT_TOOL in names and "get_reservation" in names
        assert isinstance(step.observation, CallToolObservation)
        assert step.observation.error is not None and "tool_error" in \
            step.observation.error.message and step.reward == 0.0
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_export_writes_a_dockerfile_that_serves_on_loopback_unless_told(tmp_path):
    """The image installs the arena and the exported package and runs the exported server
    with the server's own defaults: 127.0.0.1, the export's port, `--host` to open it."""
    tasks = drill_tasks("lookup", limit=2)
    out = export_openenv(load_example(tasks[0].env_name), tasks, tmp_path / "env", port=8123)
    docker = (out / "server" / "Dockerfile").read_text()
    lines = [line.strip() for line in docker.splitlines() if line.strip()
             and not line.startswith("#")]
    instruction = {line.split()[0]: line.split(maxsplit=1)[1] for line in lines
                   if line.split()[0].isupper()}
    assert instruction["FROM"].startswith("python:3.11")
    assert 'pip install "$AGENT_WORLD" && pip install /app/env' in instruction["RUN"]
    assert instruction["EXPOSE"] == "8123"
    command = json.loads(instruction["ENTRYPOINT"]) + json.loads(instruction["CMD"])
    assert command == ["python", "-m", "server.app", "--port", "8123", "--host", "127.0.0.1"]
    assert "0.0.0.0" not in "\n".join(lines)  # only the documented `docker run` says it
    assert "openenv-airline --host 0.0.0.0" in docker and "-p 127.0.0.1:8123:8123" in docker
    app_source = (out / "server" / "app.py").read_text()
    assert 'add_argument("--host", default="127.0.0.1"' in app_source
    assert "server/Dockerfile" in (out / "README.md").read_text()


def _uv_index() -> str:
    """The index `uv lock` resolves from (uv's own settings, else PyPI); skips the test when it
    does not answer."""
    index = (os.environ.get("UV_DEFAULT_INDEX") or os.environ.get("UV_INDEX_URL")
             or "https://pypi.org/simple").rstrip("/")
    try:
        httpx.get(f"{index}/uv/", timeout=10, follow_redirects=True).raise_for_status()
    except httpx.HTTPError as exc:
        pytest.skip(f"the package index {index} is unreachable ({exc}): uv lock needs it")
    return index


def test_export_locks_its_dependencies_and_passes_openenv_validate(tmp_path):
    """With the index, the export pins everything in uv.lock (`uv lock`, against a wheel of
    this arena in the directory) and `openenv validate` passes."""
    _uv_index()
    out = tmp_path / "airline_openenv"
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "export", "openenv",
                                      str(out), "--drill", "lookup", "--limit", "2"])
    assert result.exit_code == 0 and "warning" not in result.output, result.output
    validated = CliRunner().invoke(openenv_cli, ["validate", str(out)])
    assert validated.exit_code == 0, validated.output
    assert "[OK] airline_openenv: Ready for multi-mode deployment" in validated.output
    lock = tomllib.loads((out / "uv.lock").read_text())
    packages = {p["name"]: p for p in lock["package"]}
    [wheel] = (out / "wheels").glob("agent_world-*.whl")
    arena = packages["agent-world"]
    assert arena["source"] == {"path": f"wheels/{wheel.name}"}
    assert arena["wheels"][0]["hash"] == "sha256:" + hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert {"openenv-core", "mcp", "langgraph", "torch", "sqlalchemy"} <= set(packages)
    assert all("version" in p for p in lock["package"])
    # uv's own check that the lock is the current one for the exported pyproject.toml
    checked = subprocess.run([find_uv_bin(), "lock", "--check", "--offline", "--directory",
                              str(out), "--python", sys.executable], capture_output=True,
                             text=True)
    assert checked.returncode == 0, checked.stderr
