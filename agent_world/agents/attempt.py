"""One attempt at a task: a chat model as a ReAct agent in a fresh episode → a Trajectory.

    traj = run_attempt(task, model, spec=spec, runtime=runtime, seed=0)
    traj.final_answer, traj.steps, traj.reward, traj.reward_components, traj.env_fault

The agent is always `langchain.agents.create_agent(model, tools)`; the tools are the task's
tool view (the names the agent sees, possibly obscured, with the real tools' descriptions and
argument schemas). Every call steps the episode and becomes a `Step` with its error kind and
fault; the final answer is the last message without tool calls. The attempt is then scored
by the one reward of training rollouts (`agent_world.training.reward.score`: the task check
`check_episode` with its steps, minus format penalties; `meta["passed"]` is the check's
verdict). Evaluation and the verifier use this function.
"""

from __future__ import annotations

import re
import time
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.errors import GraphRecursionError

from agent_world.envs.episode import EnvRuntime, Episode, default_runtime
from agent_world.envs.spec import EnvSpec
from agent_world.tasks.model import Step, Task, Trajectory
from agent_world.training.reward import score

DEFAULT_MAX_TURNS = 12
SYSTEM_PROMPT = ("You are a careful assistant with tools over a live system. Use the tools to "
                 "do what the user asks, then reply with a short final answer that states the "
                 "requested value(s). Do not invent values you have not seen.")


def visible_text(text: str, task: Task) -> str:
    """Text with real tool names replaced by the names the agent sees (obscured views)."""
    for visible, real in task.tool_view.items():
        if visible != real:
            text = re.sub(rf"\b{re.escape(real)}\b", visible, text)
    return text


def task_tools(task: Task, spec: EnvSpec, episode: Episode,
               steps: list[Step]) -> list[StructuredTool]:
    """LangChain tools of the task's view, stepping `episode` and recording `steps`."""
    view = task.tool_view or {t.name: t.name for t in spec.tools}
    out = []
    for visible, real in view.items():
        tool = spec.tool(real)

        def call(_real: str = real, _visible: str = visible, **arguments: Any) -> str:
            obs = episode.step(_real, arguments)
            err = obs.error
            steps.append(Step(tool=_visible, arguments=arguments, ok=obs.ok,
                              result=obs.result if obs.ok else None,
                              error_kind=err.kind if err else None,
                              error_message=visible_text(err.message, task) if err else None,
                              fault=err.fault if err else None))  # type: ignore[arg-type]
            return visible_text(obs.to_text(), task)

        out.append(StructuredTool.from_function(
            func=call, name=visible, description=visible_text(tool.description, task),
            args_schema=tool.parameters, infer_schema=False))
    return out


def run_attempt(task: Task, model: Any, spec: EnvSpec | None = None,
                runtime: EnvRuntime | None = None, seed: int | None = None,
                max_turns: int = DEFAULT_MAX_TURNS, policy: str = "",
                role: str = "policy", judge: Any = "auto") -> Trajectory:
    """Run `model` on `task` in a fresh episode and score the outcome (`judge`: as
    `training.reward.score` takes it). `role` (policy, verifier, ...) names the run in traces
    (LangSmith), with the task and environment."""
    if spec is None:
        from agent_world.envs.catalog import Catalog

        spec = Catalog.open().find_env(task.env_fingerprint)
        if spec is None:
            from agent_world.errors import CatalogError

            raise CatalogError(f"task {task.id}: no environment with fingerprint "
                               f"{task.env_fingerprint} in the catalog")
    runtime = runtime or default_runtime()
    episode = runtime.open(spec, seed=task.seed if seed is None else seed)
    steps: list[Step] = []
    started = time.perf_counter()
    try:
        agent = create_agent(model, task_tools(task, spec, episode, steps),
                             system_prompt=SYSTEM_PROMPT)
        finished = True
        try:
            state = agent.invoke({"messages": [HumanMessage(task.instruction)]},
                                 {"recursion_limit": 2 * max_turns + 1,
                                  **trace_config(task, spec, model, role, policy)})
            messages = state["messages"]
        except GraphRecursionError:
            finished, messages = False, []
        answer = None
        if messages and isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls:
            answer = _text(messages[-1].content)
        else:
            finished = False
        steps = _with_unknown_calls(messages, steps)
        traj = Trajectory(
            task_id=task.id, policy=policy or type(model).__name__, steps=steps,
            final_answer=answer, finished=finished,
            env_fault=any(s.fault == "environment" for s in steps),
            messages=[m.model_dump(mode="json", include={"type", "content", "tool_calls",
                                                         "tool_call_id", "name"})
                      for m in messages],
            meta={"seed": episode.seed})
        result = score(task, traj, episode, judge=judge)
        traj.meta.update(passed=bool(result is not None and result.passed),
                         check=result.detail if result is not None else "environment fault",
                         seconds=round(time.perf_counter() - started, 3))
        return traj
    finally:
        episode.close()


def model_name(model: Any) -> str:
    """The model's id as providers name it (`model_name`/`model`), else its class name."""
    for attr in ("model_name", "model", "model_id"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def trace_config(task: Task, spec: EnvSpec, model: Any, role: str,
                 policy: str = "") -> dict[str, Any]:
    """Run name, tags and metadata of one attempt: what a LangSmith trace is filtered by."""
    model_id = model_name(model)
    return {
        "run_name": f"{role}:{task.id}",
        "tags": [f"role:{role}", f"env:{spec.name}", f"task:{task.id}"],
        "metadata": {"role": role, "task_id": task.id, "env_name": spec.name,
                     "env_fingerprint": task.env_fingerprint, "model": model_id,
                     "policy": policy or model_id},
    }


def _text(content: Any) -> str:
    if isinstance(content, list):  # content blocks
        return " ".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
    return str(content)


def _with_unknown_calls(messages: list[Any], steps: list[Step]) -> list[Step]:
    """Calls of tools outside the view never reach the episode; record them as agent faults."""
    errors = [m for m in messages if isinstance(m, ToolMessage) and m.status == "error"
              and "is not a valid tool" in _text(m.content)]
    if not errors:
        return steps
    names = {tc["id"]: tc["name"] for m in messages if isinstance(m, AIMessage)
             for tc in m.tool_calls}
    return steps + [Step(tool=names.get(m.tool_call_id, m.name), ok=False,
                         error_kind="unknown_tool", error_message=_text(m.content)[:300],
                         fault="agent") for m in errors]


__all__ = ["model_name", "run_attempt", "task_tools", "trace_config", "visible_text"]
