"""Any arena environment as a Hugging Face OpenEnv environment (`openenv-core`).

    from agent_world.integrations.openenv import create_openenv_app
    app = create_openenv_app(load_example("airline"), tasks)   # a FastAPI app: uvicorn it

    from openenv.core.mcp_client import MCPToolClient           # OpenEnv's own client
    async with MCPToolClient(base_url="http://127.0.0.1:8000") as env:
        first = await env.reset(task_id=tasks[0].id)   # instruction in observation.metadata
        await env.call_tool("get_reservation", reservation_id="MGX7Q2")
        last = await env.step(CallToolAction(tool_name="submit_answer",
                                             arguments={"answer": "..."}))
        last.reward, last.done                         # the task's check, True

What OpenEnv sees:

* an `MCPEnvironment` whose MCP server is the arena's own (`envs/mcp_export.EnvironmentServer`),
  so actions are MCP `ListToolsAction` / `CallToolAction`. With a task, the tools are the task's
  tool view (the names the agent sees, obscured ones included); without one, every tool of the
  environment plus `episode_reset` / `episode_diff`. One extra tool, `submit_answer(answer)`,
  ends the episode. Tool errors come back as the arena's error observations (kind and message).
* `reset(seed, episode_id, task_id=...)`: a fresh episode (its own database copy) for the task
  named, else the task at `seed` modulo the task count, else the next one in turn; with no
  tasks, a free episode of the environment. The first observation's metadata carries the
  instruction and the tool names.
* the rubric (`TaskCheckRubric`) is the arena's one task check (`tasks/check.check_episode`):
  0 for every step until the answer is submitted (or `max_steps` tool calls ran out), then the
  check's score on the episode's final state; its components and detail are in the last
  observation's metadata.
* `state`: episode id, step count, task id, whether the episode is over, the submitted answer,
  the database's state hash and the rows changed since reset.

Each OpenEnv session (WebSocket) gets its own environment instance and episode; the instances
of one app share one tool-worker pool (`EnvRuntime`), so many sessions run at once.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
import uuid
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool
from openenv.core.client_types import StepResult
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.mcp_environment import MCPEnvironment
from openenv.core.env_server.mcp_types import (
    RESERVED_TOOL_NAMES,
    CallToolAction,
    CallToolObservation,
    ToolErrorType,
)
from openenv.core.env_server.mcp_types import ToolError as McpToolError
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from openenv.core.mcp_client import MCPToolClient
from openenv.core.rubrics import Rubric
from pydantic import Field
from uv import find_uv_bin

import agent_world
from agent_world.envs.episode import EnvRuntime, Episode
from agent_world.envs.mcp_export import EnvironmentServer
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError
from agent_world.rollout.toolcall import tool_views
from agent_world.tasks.check import CheckResult, check_episode
from agent_world.tasks.model import Step, Task

SUBMIT_TOOL = "submit_answer"
DEFAULT_MAX_CONCURRENT = 64


class OpenEnvAdapterError(AgentWorldError):
    """An environment or task set that cannot be served as an OpenEnv environment."""


class OpenEnvLockError(OpenEnvAdapterError):
    """An export left without `uv.lock`: no arena wheel to lock against, or `uv lock` failed
    (most often: the package index is unreachable)."""


class ArenaObservation(Observation):
    """What `reset` returns: the task's instruction and the tools the agent may call."""

    env: str
    task_id: str | None = None
    instruction: str = ""
    tool_names: list[str] = Field(default_factory=list)
    episode_id: str = ""


class ArenaToolObservation(CallToolObservation):
    """A tool call's observation; the last one of an episode carries the task check's result
    (`passed`, `components`, `detail`) in `check`."""

    check: dict[str, Any] | None = None


class ArenaEnvClient(MCPToolClient):
    """OpenEnv's MCP tool client, reading the arena's observation fields (the instruction at
    reset, the check at the end) and the whole state, which the generic client drops."""

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Observation]:
        parsed = super()._parse_result(payload)
        data = payload.get("observation", {})
        common = {"done": payload.get("done", False), "reward": payload.get("reward")}
        if "instruction" in data:
            parsed.observation = ArenaObservation(**data, **common)
        elif "tool_name" in data and data.get("check") is not None:
            obs = parsed.observation
            parsed.observation = ArenaToolObservation(
                tool_name=obs.tool_name, result=obs.result, error=obs.error,
                check=data["check"], **common)
        return parsed

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return State(**payload)


class TaskCheckRubric(Rubric):
    """The task's check as an OpenEnv rubric: 0 until the episode is over, then the score of
    `check_episode(task, episode, answer, steps)` (grounded in the episode's calls);
    `last_result` keeps the whole `CheckResult`."""

    def __init__(self, env: ArenaOpenEnv):
        super().__init__()
        self._env = env
        self.last_result: CheckResult | None = None

    def forward(self, action: Any, observation: Any) -> float:
        env = self._env
        if not env.finished or env.task is None or env.episode is None:
            return 0.0
        self.last_result = check_episode(env.task, env.episode, env.answer, steps=env.calls)
        return self.last_result.score

    def reset(self) -> None:
        self.last_result = None


class _EpisodeServer(EnvironmentServer):
    """The arena's MCP server bound to one OpenEnv environment: every call, whatever its MCP
    session, lands in that environment's current episode, under the task's tool names."""

    NAMED_EPISODES = False  # OpenEnv's reset opens episodes
    OUTPUT_SCHEMA = None  # OpenEnv's clients take an object result as the structured value

    def __init__(self, spec: EnvSpec, runtime: EnvRuntime, env: ArenaOpenEnv):
        super().__init__(spec, runtime=runtime, log_level="WARNING")
        self._env = env

    async def list_tools(self) -> list[MCPTool]:
        task = self._env.task
        if task is None:
            tools = await super().list_tools()
        else:
            mutates = {t.name: t.mutates for t in self.spec.tools}
            tools = [MCPTool(name=v["name"], description=v["description"],
                             inputSchema=v["parameters"], annotations=ToolAnnotations(
                                 readOnlyHint=not mutates[task.real_tool(v["name"]) or ""]))
                     for v in tool_views(task, self.spec)]
        tools.append(MCPTool(
            name=SUBMIT_TOOL, description="Give your final answer; this ends the episode.",
            inputSchema={"type": "object", "properties": {"answer": {
                "type": "string", "description": "The final answer (text or JSON)."}},
                "required": ["answer"]}))
        return tools

    def _episode(self) -> Episode:
        if self._env.episode is None:
            raise ToolError("no episode: call reset first")
        return self._env.episode

    async def call_tool(self, name: str, arguments: dict[str, Any]  # type: ignore[override]
                        ) -> Sequence[TextContent] | tuple[Sequence[TextContent], dict[str, Any]]:
        env = self._env
        if env.finished:
            raise ToolError("the episode is over: call reset for a new one")
        if name == SUBMIT_TOOL:
            env.answer = _answer_value((arguments or {}).get("answer"))
            env.finished = True
            return [TextContent(type="text", text="answer recorded; the episode is over")]
        real = env.task.real_tool(name) if env.task is not None else name
        if real is None:
            visible = [v["name"] for v in tool_views(env.task, self.spec)]
            raise ToolError(f"unknown_tool: no tool {name!r} in this task; tools: "
                            f"{', '.join(visible + [SUBMIT_TOOL])}")
        result = await super().call_tool(real, arguments)
        content = result[0] if isinstance(result, tuple) else result
        # structured content too, so OpenEnv's `call_tool` returns the value (not None)
        value = _answer_value(content[0].text)
        return content, value if isinstance(value, dict) else {"result": value}


def _answer_value(raw: Any) -> Any:
    """A submitted answer: JSON when it parses as JSON (numbers, lists), else the text."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


class ArenaOpenEnv(MCPEnvironment):
    """One arena environment (and optionally its tasks) as an OpenEnv `MCPEnvironment`."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each instance has its own episode

    def __init__(self, spec: EnvSpec, tasks: Sequence[Task] = (), runtime: EnvRuntime | None = None,
                 max_steps: int | None = None):
        _check_servable(spec, tasks, runtime.fingerprint(spec) if runtime else spec.fingerprint)
        self.spec = spec
        self.runtime = runtime or EnvRuntime(workers=2)
        self._own_runtime = runtime is None
        self.tasks = list(tasks)
        self._by_id = {t.id: t for t in self.tasks}
        self.max_steps = max_steps
        self.task: Task | None = None
        self.episode: Episode | None = None
        self.answer: Any = None
        self.finished = False
        self._episode_id: str | None = None
        self._steps = 0
        self.calls: list[Step] = []  # this episode's tool calls: the check's grounding
        self._turn = 0
        super().__init__(_EpisodeServer(spec, self.runtime, self))
        self.rubric = TaskCheckRubric(self)

    # -- reset / step / state ------------------------------------------------------------------
    def _pick(self, seed: int | None, task_id: str | None) -> Task | None:
        if task_id is not None:
            if task_id not in self._by_id:
                raise OpenEnvAdapterError(f"unknown task {task_id!r} for {self.spec.name} "
                                          f"({len(self.tasks)} tasks)")
            return self._by_id[task_id]
        if not self.tasks:
            return None
        if seed is not None:
            return self.tasks[seed % len(self.tasks)]
        self._turn += 1
        return self.tasks[(self._turn - 1) % len(self.tasks)]

    def reset(self, seed: int | None = None, episode_id: str | None = None,
              task_id: str | None = None, **kwargs: Any) -> Observation:
        task = self._pick(seed, task_id)
        self._close_episode()
        self.task = task
        self.episode = self.runtime.open(self.spec, seed=task.seed if task else (seed or 0))
        self.answer, self.finished, self._steps, self.calls = None, False, 0, []
        self._episode_id = episode_id or uuid.uuid4().hex[:12]
        self._reset_rubric()
        names = ([v["name"] for v in tool_views(task, self.spec)] if task
                 else [t.name for t in self.spec.tools])
        return ArenaObservation(
            done=False, reward=None, env=self.spec.name, task_id=task.id if task else None,
            instruction=task.instruction if task else self.spec.theme.description,
            tool_names=[*names, SUBMIT_TOOL], episode_id=self._episode_id)

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        if (early := self._refuse(action)) is not None:
            return early
        return self._after(action, super().step(action, timeout_s=timeout_s, **kwargs))

    async def step_async(self, action: Action, timeout_s: float | None = None,
                         **kwargs: Any) -> Observation:
        if (early := self._refuse(action)) is not None:
            return early
        obs = await super().step_async(action, timeout_s=timeout_s, **kwargs)
        # the check reads two databases (or runs a verification script): off the event loop
        return await asyncio.to_thread(self._after, action, obs)

    def _refuse(self, action: Action) -> Observation | None:
        if self.episode is None:
            return Observation(done=False, reward=None,
                               metadata={"error": "no episode: call reset first"})
        if self.finished and isinstance(action, CallToolAction):
            return CallToolObservation(tool_name=action.tool_name, done=True, reward=None,
                                       error=McpToolError(
                                           error_type=ToolErrorType.EXECUTION_ERROR,
                                           message="the episode is over: call reset"))
        return None

    def _after(self, action: Action, obs: Observation) -> Observation:
        if isinstance(action, CallToolAction):
            self._steps += 1
            if action.tool_name != SUBMIT_TOOL:
                # with the value it returned: grounding looks for the answer in it
                shown = getattr(getattr(obs, "result", None), "structured_content", None)
                self.calls.append(Step(tool=action.tool_name, arguments=action.arguments,
                                       ok=getattr(obs, "error", None) is None, result=shown))
            if self.max_steps is not None and self._steps >= self.max_steps:
                self.finished = True
        obs.reward = self._apply_rubric(action, obs)
        obs.done = self.finished
        result = self.rubric.last_result if self.finished else None
        if result is not None and isinstance(obs, CallToolObservation):
            return ArenaToolObservation(
                tool_name=obs.tool_name, result=obs.result, error=obs.error, done=obs.done,
                reward=obs.reward, metadata=obs.metadata, check={
                    "passed": result.passed, "components": result.components,
                    "detail": result.detail})
        return obs

    def _step_impl(self, action: Action, timeout_s: float | None = None,
                   **kwargs: Any) -> Observation:
        return Observation(done=self.finished, reward=None, metadata={
            "error": f"unsupported action {type(action).__name__}: send ListToolsAction or "
                     "CallToolAction"})

    @property
    def state(self) -> State:
        ep = self.episode
        extra: dict[str, Any] = {}
        if ep is not None:
            extra = {"state_hash": ep.state_hash(), "changes": ep.diff().counts()}
        return State(episode_id=self._episode_id, step_count=self._steps, env=self.spec.name,
                     task_id=self.task.id if self.task else None, done=self.finished,
                     answer=self.answer, **extra)

    def get_metadata(self) -> EnvironmentMetadata:
        theme = self.spec.theme
        return EnvironmentMetadata(
            name=self.spec.name, version=str(self.spec.version),
            description=(theme.description or theme.name or self.spec.name) +
            f" ({len(self.spec.tools)} tools, {len(self.tasks)} tasks; agent-world)")

    # -- lifetime ------------------------------------------------------------------------------
    def _close_episode(self) -> None:
        if self.episode is not None:
            self.episode.close()
            self.episode = None

    def close(self) -> None:
        self._close_episode()
        super().close()
        if self._own_runtime:
            self.runtime.close()


def env_factory(spec: EnvSpec, tasks: Sequence[Task] = (), runtime: EnvRuntime | None = None,
                max_steps: int | None = None) -> Callable[[], ArenaOpenEnv]:
    """A factory OpenEnv calls once per session; its instances share one runtime."""
    shared = runtime or EnvRuntime(workers=2)
    tasks = list(tasks)

    def make() -> ArenaOpenEnv:
        return ArenaOpenEnv(spec, tasks, runtime=shared, max_steps=max_steps)

    make.__name__ = f"{spec.name}_openenv"
    make.runtime = shared  # type: ignore[attr-defined]
    return make


def create_openenv_app(spec: EnvSpec, tasks: Sequence[Task] = (),
                       max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT,
                       max_steps: int | None = None, runtime: EnvRuntime | None = None) -> Any:
    """OpenEnv's FastAPI app (`/ws` sessions, `/reset`, `/step`, `/state`, `/schema`, `/mcp`,
    `/health`, `/metadata`) over arena episodes; serve it with uvicorn."""
    factory = env_factory(spec, tasks, runtime=runtime, max_steps=max_steps)
    app = create_app(factory, CallToolAction, ArenaToolObservation, env_name=spec.name,
                     max_concurrent_envs=max_concurrent_envs)
    app.state.arena_runtime = factory.runtime  # type: ignore[attr-defined]
    if runtime is None:  # the app's own workers and episode files go with the server
        app.router.on_shutdown.append(factory.runtime.close)  # type: ignore[attr-defined]
    return app


# -- exported directories (`agent-world export openenv DIR`) -----------------------------------
def load_export(directory: str | Path) -> tuple[EnvSpec, list[Task], dict[str, Any]]:
    """The environment, tasks and settings an exported directory holds."""
    root = Path(directory)
    settings = json.loads((root / "settings.json").read_text())
    spec = EnvSpec.load(root / settings["env_file"])
    tasks_file = root / "tasks.jsonl"
    tasks = [Task.model_validate_json(line) for line in tasks_file.read_text().splitlines()
             if line.strip()] if tasks_file.exists() else []
    return spec, tasks, settings


def create_app_from_export(directory: str | Path) -> Any:
    """The app an exported directory's `server/app.py` serves."""
    spec, tasks, settings = load_export(directory)
    return create_openenv_app(spec, tasks, max_concurrent_envs=settings.get(
        "max_concurrent_envs", DEFAULT_MAX_CONCURRENT), max_steps=settings.get("max_steps"))


def _check_servable(spec: EnvSpec, tasks: Sequence[Task], fingerprint: str) -> None:
    strangers = sorted({t.env_name for t in tasks if t.env_fingerprint != fingerprint})
    if strangers:
        raise OpenEnvAdapterError(
            f"tasks of other environments ({', '.join(strangers)}) given for {spec.name} "
            f"(fingerprint {fingerprint}); one environment per OpenEnv server")
    clash = {t.name for t in spec.tools} & (RESERVED_TOOL_NAMES | {SUBMIT_TOOL})
    if clash:
        raise OpenEnvAdapterError(f"{spec.name}: tool names {sorted(clash)} are reserved by "
                                  "OpenEnv (reset, step, state, close) or the adapter")


def _package_name(env_name: str) -> str:
    name = "".join(c if c.isalnum() else "_" for c in env_name.lower()).strip("_") or "env"
    return name if name[0].isalpha() else f"env_{name}"


def export_openenv(spec: EnvSpec, tasks: Sequence[Task], out: str | Path, port: int = 8000,
                   max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT,
                   max_steps: int | None = None, arena: str | Path | None = None) -> Path:
    """Write an OpenEnv environment directory for `spec` and its tasks: `openenv.yaml`,
    `pyproject.toml` (the `server` entry point), `server/app.py` (the FastAPI app and
    `main()`), `server/Dockerfile` (the image `openenv build` makes: the package installed,
    the server on 127.0.0.1 unless run with `--host`), `client.py` (OpenEnv's MCP tool
    client), the environment, the tasks and a README with the local and container recipes.
    `arena`: a wheel of agent-world (`arena_wheel`), copied to `wheels/` and named as the
    arena's source in `pyproject.toml` (for `uv lock`, `lock_export`) and the image's default
    `AGENT_WORLD`; without one, both name `agent-world` on the package index.
    Returns the directory."""
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise OpenEnvAdapterError(f"{root}: exists and is not a directory")
    fp = spec.fingerprint
    _check_servable(spec, tasks, fp)
    pkg = _package_name(spec.name)
    (root / "server").mkdir(parents=True, exist_ok=True)
    spec.save(root / "env.json")
    (root / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    (root / "settings.json").write_text(json.dumps({
        "env_file": "env.json", "env": spec.name, "fingerprint": fp, "tasks": len(tasks),
        "max_concurrent_envs": max_concurrent_envs, "max_steps": max_steps, "port": port},
        indent=2) + "\n")
    fill = {"name": pkg, "env": spec.name, "port": port, "tools": len(spec.tools),
            "tasks": len(tasks), "first": tasks[0].id if tasks else "", "arena": "agent-world",
            "uv_sources": ""}
    if arena is not None:
        wheel = Path(arena)
        if wheel.suffix != ".whl" or not wheel.is_file():
            raise OpenEnvAdapterError(f"{wheel}: not a wheel file (agent_world-*.whl)")
        (root / "wheels").mkdir(exist_ok=True)
        shutil.copyfile(wheel, root / "wheels" / wheel.name)
        fill["arena"] = f"wheels/{wheel.name}"
        fill["uv_sources"] = (
            "\n[tool.uv.sources]\n# the arena this directory was exported with (uv.lock and "
            f"the image install it)\nagent-world = {{ path = \"wheels/{wheel.name}\" }}\n")
    for rel, template in _TEMPLATES.items():
        (root / rel).write_text(template.format(**fill))
    return root


def arena_wheel(out_dir: str | Path) -> Path | None:
    """This arena as a wheel in `out_dir`, for an export's lock and image: built (an sdist, then
    the wheel from it, with the running interpreter's setuptools: no index needed) when it runs
    from a source tree (a checkout, an editable install), the wheel it was installed from when
    that was a local file, None when it came from a package index (the lock then names the
    index's agent-world)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    source = Path(agent_world.__file__).resolve().parent.parent
    project = source / "pyproject.toml"
    if project.is_file() and tomllib.loads(project.read_text()).get(
            "project", {}).get("name") == "agent-world":
        with tempfile.TemporaryDirectory(prefix="agent-world-wheel-") as tmp:
            # through an sdist: a build from the tree directly would reuse its build/ folder,
            # files deleted from the source included
            done = subprocess.run(
                [find_uv_bin(), "build", "--no-build-isolation", "--python", sys.executable,
                 "--out-dir", tmp, str(source)], capture_output=True, text=True)
            wheels = sorted(Path(tmp).glob("agent_world-*.whl"))
            if done.returncode != 0 or not wheels:
                raise OpenEnvLockError(f"building the arena's wheel from {source} failed: "
                                       f"{_uv_reason(done.stderr)}")
            return Path(shutil.copy2(wheels[0], out / wheels[0].name))
    raw = metadata.distribution("agent-world").read_text("direct_url.json")
    if raw is None:
        return None
    url = json.loads(raw)["url"]
    parsed = urlparse(url)
    wheel = Path(unquote(parsed.path))
    if parsed.scheme == "file" and wheel.suffix == ".whl" and wheel.is_file():
        return Path(shutil.copy2(wheel, out / wheel.name))
    raise OpenEnvLockError(f"agent-world was installed from {url}: no wheel to lock the export "
                           "against (install it from a source tree or a wheel)")


def lock_export(root: str | Path) -> Path:
    """`uv lock` in an exported directory (what `openenv validate` asks for): every dependency
    pinned, from the package index and the arena's wheel in `wheels/`. Needs the index; raises
    `OpenEnvLockError` with uv's reason when it fails. Returns the lock file."""
    root = Path(root)
    done = subprocess.run([find_uv_bin(), "lock", "--directory", str(root), "--python",
                           sys.executable], capture_output=True, text=True)
    lock = root / "uv.lock"
    if done.returncode != 0 or not lock.is_file():
        raise OpenEnvLockError(f"uv lock failed ({_uv_reason(done.stderr)}); run `uv lock` in "
                               f"{root} once the package index is reachable")
    return lock


def _uv_reason(text: str) -> str:
    """What went wrong, from uv's stderr, on one line: its `error:` line, the first cause (what
    it was doing) and the last (why it failed)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = next((i for i, line in enumerate(lines) if line.startswith("error:")), None)
    if first is None:
        return lines[-1] if lines else "no output"
    causes = [line.removeprefix("cause:").strip() for line in lines[first + 1:]
              if line.startswith("cause:")]
    return ": ".join([lines[first].removeprefix("error:").strip(), *causes[:1], *causes[1:][-1:]])


_TEMPLATES = {
    "openenv.yaml": """spec_version: 1
name: {name}
type: space
runtime: fastapi
app: server.app:app
port: {port}
""",
    "pyproject.toml": """[build-system]
requires = ["setuptools>=45", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "openenv-{name}"
version = "0.1.0"
description = "The agent-world environment {env} as an OpenEnv environment"
requires-python = ">=3.11"
dependencies = [
    "openenv-core[core]>=0.2.2",
    "agent-world",
]

[project.scripts]
server = "{name}.server.app:main"

[tool.setuptools]
include-package-data = true
packages = ["{name}", "{name}.server"]
package-dir = {{ "{name}" = ".", "{name}.server" = "server" }}

[tool.setuptools.package-data]
"{name}" = ["env.json", "tasks.jsonl", "settings.json", "openenv.yaml"]
{uv_sources}""",
    "__init__.py": '''"""The agent-world environment {env} as an OpenEnv environment."""

from .client import ArenaEnvClient

__all__ = ["ArenaEnvClient"]
''',
    "client.py": '''"""Client of the {env} environment: OpenEnv's MCP tool client (reset, list_tools, call_tool,
step(CallToolAction(...)), state) reading the instruction at reset and the task check at the
end. `async with ArenaEnvClient(base_url="http://127.0.0.1:{port}") as env: ...`"""

from agent_world.integrations.openenv import ArenaEnvClient

__all__ = ["ArenaEnvClient"]
''',
    "server/__init__.py": "",
    "server/app.py": '''"""OpenEnv server of the agent-world environment {env} (`agent-world export openenv`).

    python -m server.app --port {port}          # from this directory
    uv run --project . server --port {port}     # OpenEnv's local recipe
    uvicorn server.app:app --port {port}

It listens on 127.0.0.1 only; `--host 0.0.0.0` opens it to the network, where anyone who
reaches the port can play its episodes (there is no authentication).
"""

import argparse
from pathlib import Path

import uvicorn

from agent_world.integrations.openenv import create_app_from_export

app = create_app_from_export(Path(__file__).resolve().parent.parent)


def main(argv: list[str] | None = None) -> None:
    """Serve the app; the `server` script and `python -m server.app` both read the options."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1",
                        help="bind address (default: loopback only)")
    parser.add_argument("--port", type=int, default={port})
    args = parser.parse_args(argv)
    uvicorn.run(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
''',
    "server/Dockerfile": """# The agent-world environment {env} as an OpenEnv container (`agent-world export openenv`).
#
#   docker build -t openenv-{name} -f server/Dockerfile .
#   docker run --rm -p 127.0.0.1:{port}:{port} openenv-{name} --host 0.0.0.0
#
# The server binds 127.0.0.1 unless told otherwise (`--host`): as built, it answers only from
# inside the container. Docker forwards a published port to the container's own interface, so
# serving it takes `--host 0.0.0.0` after the image name; publish it on the host's loopback
# (127.0.0.1:{port}:{port}) unless the network may play its episodes (there is no
# authentication). AGENT_WORLD: where pip gets the arena from (a version, a wheel copied into
# the build context, a git URL; default: the one the export was made with).
FROM python:3.11-slim

ARG AGENT_WORLD={arena}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1

WORKDIR /app/env
COPY . /app/env
RUN pip install "$AGENT_WORLD" && pip install /app/env

EXPOSE {port}
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \\
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}/health')"

ENTRYPOINT ["python", "-m", "server.app", "--port", "{port}"]
CMD ["--host", "127.0.0.1"]
""",
    "README.md": """# {env} (agent-world) as an OpenEnv environment

{tools} tools, {tasks} tasks. Actions are MCP tool calls (`ListToolsAction`, `CallToolAction`);
`submit_answer(answer)` ends an episode and the task's check scores it (the rubric).

Run it locally, no Docker: `pip install {arena} openenv-core`, then from this directory

    python -m server.app --port {port}

or in the environment `uv.lock` pins (`agent-world export` writes it when the package index is
reachable; `uv lock` makes it later): `uv run --project . server --port {port}`.

Or in a container (`server/Dockerfile`; the server binds 127.0.0.1 unless given `--host`,
and Docker's published ports need `--host 0.0.0.0` inside the container):

    docker build -t openenv-{name} -f server/Dockerfile .
    docker run --rm -p 127.0.0.1:{port}:{port} openenv-{name} --host 0.0.0.0

Drive it with OpenEnv's client:

    from openenv.core.mcp_client import MCPToolClient
    from openenv.core.env_server.mcp_types import CallToolAction

    async with MCPToolClient(base_url="http://127.0.0.1:{port}") as env:
        first = await env.reset(task_id="{first}")      # or reset(seed=N)
        print(first.observation.metadata["instruction"])
        tools = await env.list_tools()
        last = await env.step(CallToolAction(tool_name="submit_answer",
                                             arguments={{"answer": "..."}}))
        print(last.reward, last.done)
""",
}


__all__ = ["SUBMIT_TOOL", "ArenaEnvClient", "ArenaObservation", "ArenaOpenEnv",
           "ArenaToolObservation", "OpenEnvAdapterError", "OpenEnvLockError", "TaskCheckRubric",
           "arena_wheel", "create_app_from_export", "create_openenv_app", "env_factory",
           "export_openenv", "load_export", "lock_export"]
