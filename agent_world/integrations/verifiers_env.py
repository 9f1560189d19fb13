"""Arena environments and tasks as a Prime Intellect `verifiers` environment.

    from agent_world.integrations.verifiers_env import load_environment
    env = load_environment("drill:cancel")      # or tasks, an export directory, a JSONL file
    results = env.evaluate_sync(client, model="...", rollouts_per_example=4)

    # or, from an `agent-world export verifiers DIR` directory on sys.path / pip-installed:
    import verifiers as vf
    env = vf.load_environment("agent-world-arena")

What verifiers sees (its classic environment API: `ToolEnv`, `Rubric`, `load_environment`):

* a dataset with one row per task: `question` (the instruction), `answer` (the reference answer
  as text, when there is one) and `info` = the task id and its `tool_defs`: the tools the
  task's agent sees (obscured names included) with their JSON schemas, offered natively to
  the model through verifiers' client;
* per rollout, state `arena` = a fresh arena episode (its own database copy), opened in
  `setup_state`; every tool call runs on it and returns the observation text (errors as
  `Error (kind): message`, the episode goes on); arguments that are not JSON count as a
  malformed call;
* the rubric: `arena_task_check` (weight 1) = the arena's reward on the episode's final state
  (the one task check minus the format penalty; environment faults score 0), and metrics
  `check_passed` and `env_fault` (weight 0). The episode is closed after scoring.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import verifiers as vf
from datasets import Dataset
from verifiers.types import ToolMessage

from agent_world.envs.episode import EnvRuntime, default_runtime
from agent_world.envs.spec import EnvSpec
from agent_world.integrations.taskfiles import TaskSource, resolve_tasks, write_tasks
from agent_world.rollout.library_attempt import TaskAttempt
from agent_world.rollout.prompts import TOOL_AGENT_PROMPT
from agent_world.rollout.toolcall import tool_views
from agent_world.tasks.model import Task

ENV_ID = "agent-world-arena"


def _field(message: Any, key: str) -> Any:
    # verifiers' messages are Pydantic models, some arrive as plain dicts
    return message.get(key) if isinstance(message, dict) else getattr(message, key, None)


def _last_assistant_text(completion: Any) -> str | None:
    for message in reversed(completion or []):
        if _field(message, "role") != "assistant":
            continue
        if _field(message, "tool_calls"):
            return None  # still calling tools when the rollout ended
        content = _field(message, "content")
        if isinstance(content, list):  # content parts
            content = "".join(_field(p, "text") or "" for p in content)
        return content
    return None


def _attempt(state: Any) -> TaskAttempt | None:
    attempt = state.get("arena")
    return attempt if isinstance(attempt, TaskAttempt) else None


async def arena_task_check(completion: Any, state: Any) -> float:
    """The arena's reward for this rollout (check of the final state minus format penalty)."""
    attempt = _attempt(state)
    if attempt is None:
        return 0.0
    traj = await asyncio.to_thread(attempt.finish, _last_assistant_text(completion))
    return traj.reward


async def check_passed(completion: Any, state: Any) -> float:
    attempt = _attempt(state)
    if attempt is None:
        return 0.0
    traj = await asyncio.to_thread(attempt.finish, _last_assistant_text(completion))
    return float(traj.reward_components.get("check.passed", 0.0) >= 1.0 and not traj.env_fault)


async def env_fault(state: Any) -> float:
    attempt = _attempt(state)
    return float(attempt is not None and attempt.trajectory.env_fault)


class ArenaToolEnv(vf.ToolEnv):
    """A verifiers `ToolEnv` whose tools run on one arena episode per rollout."""

    def __init__(self, tasks: list[Task], specs: dict[str, EnvSpec], max_turns: int = 8,
                 runtime: EnvRuntime | None = None, **kwargs: Any):
        self.arena_tasks = {t.id: t for t in tasks}
        self.arena_specs = specs
        self.arena_runtime = runtime
        rows = [{"question": t.instruction,
                 "answer": "" if t.reference_answer is None else (
                     t.reference_answer if isinstance(t.reference_answer, str)
                     else json.dumps(t.reference_answer)),
                 "info": json.dumps({"task_id": t.id, "env": t.env_name,
                                     "tool_defs": tool_views(t, specs[t.env_fingerprint])})}
                for t in tasks]
        rubric = vf.Rubric(funcs=[arena_task_check, check_passed, env_fault],
                           weights=[1.0, 0.0, 0.0])
        rubric.add_cleanup_handler(self._close_episode)
        kwargs.setdefault("system_prompt", TOOL_AGENT_PROMPT)
        super().__init__(tools=[], max_turns=max_turns, dataset=Dataset.from_list(rows),
                         rubric=rubric, **kwargs)

    async def setup_state(self, state: Any) -> Any:
        info = state["info"]
        task = self.arena_tasks[info["task_id"]]
        runtime = self.arena_runtime or default_runtime()
        state["arena"] = await asyncio.to_thread(
            TaskAttempt.open, task, self.arena_specs[task.env_fingerprint], runtime,
            "verifiers")
        return state

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
        attempt = _attempt(state)
        assert attempt is not None, "env_response before setup_state"
        out = []
        for call in messages[-1].tool_calls or []:
            try:
                arguments = json.loads(call.arguments or "{}")
                if not isinstance(arguments, dict):
                    raise ValueError("tool call arguments must be a JSON object")
            except ValueError as exc:
                text = attempt.malformed(call.name, f"arguments are not a JSON object ({exc})")
            else:
                text = await asyncio.to_thread(attempt.call, call.name, arguments)
            out.append(ToolMessage(role="tool", content=text, tool_call_id=call.id))
        return out

    async def _close_episode(self, state: Any) -> None:
        attempt = _attempt(state)
        if attempt is not None:
            await asyncio.to_thread(attempt.close)
            state["arena"] = None


def load_environment(source: TaskSource = "drill:cancel", specs: Iterable[EnvSpec] = (),
                     limit: int | None = None, max_turns: int = 8,
                     runtime: EnvRuntime | None = None, **kwargs: Any) -> ArenaToolEnv:
    """A verifiers environment over the tasks of `source` (see `taskfiles.resolve_tasks`):
    an export directory, a tasks JSONL file, `drill:NAME` or a list of tasks."""
    tasks, index = resolve_tasks(source, specs, limit)
    env = ArenaToolEnv(tasks, index, max_turns=max_turns, runtime=runtime, **kwargs)
    env.env_id = ENV_ID
    return env


MODULE_NAME = ENV_ID.replace("-", "_")

MODULE_FILE = '''"""Arena tasks as a verifiers environment (`agent-world export verifiers`).

    import verifiers as vf
    env = vf.load_environment("agent-world-arena")  # the export dir on sys.path, or pip-installed
"""

from pathlib import Path

from agent_world.integrations.verifiers_env import load_environment as _load

HERE = Path(__file__).resolve().parent


def load_environment(max_turns: int = {max_turns}, limit: int | None = None, **kwargs):
    """The exported tasks (tasks.jsonl, envs/) with their tools, episodes and checks."""
    return _load(HERE, limit=limit, max_turns=max_turns, **kwargs)
'''

PYPROJECT_FILE = '''[project]
name = "{env_id}"
version = "0.1.0"
description = "Agent-World arena tasks as a verifiers environment"
requires-python = ">=3.11"
dependencies = ["agent-world", "verifiers"]

[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[tool.setuptools]
packages = ["{module}"]

[tool.setuptools.package-data]
{module} = ["tasks.jsonl", "envs/*.json"]
'''


def export_verifiers(tasks: list[Task], specs: dict[str, EnvSpec], out: str | Path,
                     max_turns: int = 8) -> Path:
    """Write the package DIR/agent_world_arena/ (`load_environment()` in its __init__.py, the
    tasks in tasks.jsonl, their environments in envs/) and DIR/pyproject.toml, so
    `vf.load_environment("agent-world-arena")` finds it once DIR is on the path or
    pip-installed (`pip install DIR`)."""
    out = Path(out)
    package = write_tasks(tasks, specs, out / MODULE_NAME)
    (package / "__init__.py").write_text(MODULE_FILE.format(max_turns=max_turns))
    (out / "pyproject.toml").write_text(PYPROJECT_FILE.format(env_id=ENV_ID, module=MODULE_NAME))
    return out


__all__ = ["ArenaToolEnv", "ENV_ID", "MODULE_NAME", "arena_task_check", "check_passed",
           "env_fault", "export_verifiers", "load_environment"]
