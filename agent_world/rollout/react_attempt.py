"""One attempt at a task: a chat model as a ReAct agent in a fresh episode → a Trajectory.

    traj = run_attempt(task, model, spec=spec, runtime=runtime, seed=0)
    traj.final_answer, traj.steps, traj.reward, traj.reward_components, traj.env_fault

The agent is `langchain.agents.create_agent(model, tools)`; the tools are the task's tool view
(the names the agent sees, possibly obscured, with the real tools' descriptions and argument
schemas). Every call steps the episode and becomes a `Step` with its error kind and fault; the
final answer is the last message without tool calls. A chat model without tool calling (its
server refuses the tools: the attempt restarts in a fresh episode, and the switch is logged
once; or declared in AGENT_WORLD_PLAIN_CHAT) runs the same loop as text: tools listed in the
system prompt, one `<tool_call>{...}</tool_call>` or `<answer>…</answer>` per reply, read by
the training rollout's parser. The attempt is then scored
by the one reward of training rollouts (`agent_world.rollout.reward.score`: the task check
`check_episode` with its steps, minus format penalties; `meta["passed"]` is the check's
verdict). Evaluation and the verifier use this function.
"""

from __future__ import annotations

import time
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.errors import GraphRecursionError

from agent_world.envs.catalog import Catalog
from agent_world.envs.episode import EnvRuntime, Episode, default_runtime
from agent_world.envs.spec import EnvSpec
from agent_world.errors import CatalogError
from agent_world.models import plain_chat, use_plain_chat
from agent_world.plain_chat import refuses_tools
from agent_world.rollout.engine import (
    observation_text,
    observe_call,
    observe_reply,
    turn_limit,
    visible_text,
)
from agent_world.rollout.reward import score
from agent_world.rollout.toolcall import system_prompt, tool_views
from agent_world.tasks.model import Step, Task, Trajectory

DEFAULT_MAX_TURNS = 12
SYSTEM_PROMPT = ("You are a careful assistant with tools over a live system. Use the tools to "
                 "do what the user asks, then reply with a short final answer that states the "
                 "requested value(s). Do not invent values you have not seen.")


def task_tools(task: Task, spec: EnvSpec, episode: Episode,
               steps: list[Step]) -> list[StructuredTool]:
    """LangChain tools of the task's view, stepping `episode` and recording `steps`."""
    view = task.tool_view or {t.name: t.name for t in spec.tools}
    names = list(view)
    out = []
    for visible, real in view.items():
        tool = spec.tool(real)

        def call(_visible: str = visible, **arguments: Any) -> str:
            step = observe_call(episode, task, names, _visible, arguments)  # the one step
            steps.append(step)
            return observation_text(step, task)

        out.append(StructuredTool.from_function(
            func=call, name=visible, description=visible_text(tool.description, task),
            args_schema=tool.parameters, infer_schema=False))
    return out


def run_attempt(task: Task, model: Any, spec: EnvSpec | None = None,
                runtime: EnvRuntime | None = None, seed: int | None = None,
                max_turns: int = DEFAULT_MAX_TURNS, policy: str = "",
                role: str = "policy", judge: Any = "auto") -> Trajectory:
    """Run `model` on `task` in a fresh episode and score the outcome (`judge`: as
    `rollout.reward.score` takes it). `role` (policy, verifier, ...) names the run in traces
    (LangSmith), with the task and environment."""
    if spec is None:
        spec = Catalog.open().find_env(task.env_fingerprint)
        if spec is None:
            raise CatalogError(f"task {task.id}: no environment with fingerprint "
                               f"{task.env_fingerprint} in the catalog")
    runtime = runtime or default_runtime()
    seed = task.seed if seed is None else seed
    max_turns = turn_limit(task, max_turns)  # never fewer than the gold solution needs
    episode = runtime.open(spec, seed=seed)
    steps: list[Step] = []
    started = time.perf_counter()
    config = trace_config(task, spec, model, role, policy)
    try:
        if plain_chat(model):
            messages, answer, finished = _text_protocol(task, spec, model, episode, steps,
                                                        max_turns, config)
        else:
            try:
                messages, answer, finished = _native(task, spec, model, episode, steps,
                                                     max_turns, config)
            except Exception as exc:
                if steps or not refuses_tools(exc):
                    raise
                # the model's server cannot take tools: the text protocol, in a fresh episode
                episode.close()
                episode = runtime.open(spec, seed=seed)
                messages, answer, finished = _text_protocol(
                    task, spec, model, episode, steps, max_turns, config,
                    refused=f"tool calling refused ({type(exc).__name__}: {exc})"[:300])
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


def _native(task: Task, spec: EnvSpec, model: Any, episode: Episode, steps: list[Step],
            max_turns: int, config: dict[str, Any]) -> tuple[list[Any], Any, bool]:
    """The `create_agent` ReAct loop with native tool calls: (messages, answer, finished)."""
    agent = create_agent(model, task_tools(task, spec, episode, steps),
                         system_prompt=SYSTEM_PROMPT)
    finished = True
    try:
        state = agent.invoke({"messages": [HumanMessage(task.instruction)]},
                             {"recursion_limit": 2 * max_turns + 1, **config})
        messages = state["messages"]
    except GraphRecursionError:
        finished, messages = False, []
    answer = None
    if messages and isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls:
        answer = _text(messages[-1].content)
    else:
        finished = False
    return messages, answer, finished


def _text_protocol(task: Task, spec: EnvSpec, model: Any, episode: Episode, steps: list[Step],
                   max_turns: int, config: dict[str, Any], refused: str = ""
                   ) -> tuple[list[Any], Any, bool]:
    """The ReAct loop for a chat model without tool calling: the tools listed in the system
    prompt and calls read from the reply text, as training rollouts do (`toolcall`'s
    `<tool_call>` / `<answer>` format, parsed and executed by `rollout.observe_reply`)."""
    visible = [v["name"] for v in tool_views(task, spec)]
    messages: list[Any] = [
        SystemMessage(visible_text(f"{SYSTEM_PROMPT}\n\n{system_prompt(task, spec)}", task)),
        HumanMessage(task.instruction)]
    for _ in range(max_turns):
        text = _text(model.invoke(messages, config).content)
        if refused:  # the text request worked: the model is plain, not unreachable
            use_plain_chat(model, refused)
            refused = ""
        messages.append(AIMessage(text))
        step = observe_reply(episode, task, visible, text)
        if step.tool is None and step.error_kind is None:  # an answer
            return messages, step.result, True
        steps.append(step)
        messages.append(HumanMessage(f"Tool result:\n{observation_text(step, task)}"))
    return messages, None, False


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
