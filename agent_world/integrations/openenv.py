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
`openenv_export.py` writes the directories `agent-world export openenv` makes; their server
serves `create_app_from_export` (here).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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


# -- serving an exported directory (`openenv_export.export_openenv` writes them) ----------------
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


__all__ = ["SUBMIT_TOOL", "ArenaEnvClient", "ArenaObservation", "ArenaOpenEnv",
           "ArenaToolObservation", "OpenEnvAdapterError", "TaskCheckRubric",
           "create_app_from_export", "create_openenv_app", "env_factory", "load_export"]
