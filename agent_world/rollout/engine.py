"""The rollout engine: a policy acts in many episodes at once, multi-turn, until it answers.

    results = run_rollouts(policy, tasks, specs=spec_index(tasks), group_size=4)
    for r in results:
        r.trajectory.reward, r.trajectory.steps, r.state.trace  # trace: token policies only

Each turn the policy answers every live episode in one batch; the replies are parsed
(`toolcall.parse_reply`), checked against the task's tool view (the names the agent sees) and
executed on the episode — the episode validates arguments against the tool's JSON schema. A
malformed call, an unknown tool or bad arguments become an error observation and the episode
goes on; an episode ends on an answer, on `max_turns`, or when the token budget runs out. The
reward is computed on the live episode (final state) before it is closed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from agent_world.envs.episode import EnvRuntime, Episode
from agent_world.envs.examples import example_names, load_example
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError
from agent_world.rollout.policy import EpisodeState, Policy
from agent_world.rollout.reward import score
from agent_world.rollout.toolcall import parse_reply, system_prompt, tool_views
from agent_world.tasks.model import Step, Task, Trajectory

RewardFn = Callable[[Task, Trajectory, Episode], None]


@dataclass
class RolloutConfig:
    # replies per attempt; a task whose gold solution needs more (its calls, then the answer)
    # gets those: a turn limit below them would make the task impossible, not hard
    max_turns: int = 8
    group_size: int = 1  # attempts per task (GRPO groups)
    step_threads: int = 4  # threads stepping episodes (tool calls run in worker processes)
    compact_tools: bool = False  # short tool listing (small models)


@dataclass
class Rollout:
    task: Task
    trajectory: Trajectory
    state: EpisodeState
    group: int  # index of the task in the input list: attempts of one task share it


def spec_index(tasks: Iterable[Task], specs: Iterable[EnvSpec] = (),
               catalog: Any = None) -> dict[str, EnvSpec]:
    """Fingerprint -> EnvSpec for every task: given specs first, then the catalog, then the
    bundled examples. A task whose environment is nowhere is a clear error."""
    index = {s.fingerprint: s for s in specs}
    for task in tasks:
        fp = task.env_fingerprint
        if fp in index:
            continue
        found = catalog.find_env(fp) if catalog is not None else None
        if found is None and task.env_name in example_names():
            example = load_example(task.env_name)
            found = example if example.fingerprint == fp else None
        if found is None:
            raise AgentWorldError(f"task {task.id or task.instruction[:40]!r}: environment "
                                  f"{task.env_name!r} ({fp[:12]}) is not in the catalog")
        index[fp] = found
    return index


def observe_reply(episode: Episode, task: Task, visible: list[str], text: str) -> Step:
    """Parse one reply and, for a call by one of the `visible` tool names, execute it: the
    step record (observation inside)."""
    parsed = parse_reply(text)
    if parsed.kind == "malformed":
        return Step(text=text, tool=parsed.name, ok=False, error_kind="malformed_tool_call",
                    error_message=parsed.error, fault="agent")
    if parsed.kind == "answer":
        return Step(text=text, result=parsed.answer)
    return observe_call(episode, task, visible, parsed.name, parsed.arguments, text)


def observe_call(episode: Episode, task: Task, visible: list[str], name: str | None,
                 arguments: Any, text: str = "") -> Step:
    """Execute one call by a `visible` tool name (already parsed, e.g. a native tool call of
    another library): the step record (observation inside). A name outside the task's view
    is an `unknown_tool` error observation."""
    real = task.real_tool(name or "") if name in visible else None
    if real is None:
        return Step(text=text, tool=name, arguments=arguments, ok=False,
                    error_kind="unknown_tool", fault="agent",
                    error_message=f"unknown tool {name!r}; available: {', '.join(visible)}")
    obs = episode.step(real, arguments)
    return Step(text=text, tool=name, arguments=arguments, ok=obs.ok,
                result=obs.result if obs.ok else None,
                error_kind=obs.error.kind if obs.error else None,
                error_message=visible_text(obs.error.message, task) if obs.error else None,
                fault=obs.error.fault if obs.error else None)  # type: ignore[arg-type]


def visible_text(text: str, task: Task) -> str:
    """Text with real tool names replaced by the names the agent sees (obscured views)."""
    for visible, real in task.tool_view.items():
        if visible != real:
            text = re.sub(rf"\b{re.escape(real)}\b", visible, text)
    return text


def turn_limit(task: Task, max_turns: int) -> int:
    """Replies an attempt at `task` gets: `max_turns`, or the gold chain's calls and the
    answer when they are more."""
    return max(max_turns, len(task.chain) + 1)


def observation_text(step: Step, task: Task | None = None) -> str:
    """What the agent reads back after a step: the result (JSON, unless it is plain text: a
    user id arrives without quotes), or the error with its kind; under the names the agent
    sees when `task` is given. Every rollout, attempt and warm-start conversation reads this."""
    if step.ok:
        # compact JSON: a listing's ", " and ": " are an eighth of its tokens, paid in every
        # turn that reads it (training conversations, evaluation prompts)
        text = step.result if isinstance(step.result, str) else \
            json.dumps(step.result, ensure_ascii=False, default=str, separators=(",", ":"))
    else:
        text = f"Error ({step.error_kind}): {step.error_message}"
    return visible_text(text, task) if task is not None else text


def each(pool: ThreadPoolExecutor, threads: int, fn: Callable[[Any], Any],
         items: Sequence[Any]) -> list[Any]:
    """`fn` over `items` on `threads` of the pool, results in order. Each thread takes the
    next item itself: one future per thread, not one per item (1,024 futures a turn cost the
    thread that makes them, while the stepping threads want the interpreter lock)."""
    out: list[Any] = [None] * len(items)
    order = iter(range(len(items)))  # next() on it is atomic under the interpreter lock

    def run() -> None:
        for i in order:
            out[i] = fn(items[i])

    for future in [pool.submit(run) for _ in range(max(1, min(threads, len(items))))]:
        future.result()
    return out


def run_rollouts(policy: Policy, tasks: list[Task], specs: Mapping[str, EnvSpec],
                 config: RolloutConfig | None = None, reward: RewardFn | None = None,
                 runtime: EnvRuntime | None = None,
                 on_turn: Callable[[int, int], None] | None = None) -> list[Rollout]:
    """Run `group_size` attempts of every task at once; rollouts come back in task order.

    `reward(task, trajectory, episode)` fills the trajectory's reward on the final state
    (default: `rollout.reward.score`); it is called from several threads at once, one
    episode each. `on_turn(turn, live)` reports progress.
    """
    config = config or RolloutConfig()
    reward = reward or score
    own_runtime = runtime is None
    runtime = runtime or EnvRuntime(workers=2)
    rollouts: list[Rollout] = []
    episodes: list[Episode] = []
    try:
        with ThreadPoolExecutor(config.step_threads) as pool:
            wanted: list[tuple[EnvSpec, int]] = []
            for g, task in enumerate(tasks):
                spec = specs[task.env_fingerprint]
                prompt = system_prompt(task, spec, compact=config.compact_tools)
                for _ in range(config.group_size):
                    state = EpisodeState(task=task, tools=tool_views(task, spec), messages=[
                        {"role": "system", "content": prompt},
                        {"role": "user", "content": task.instruction}])
                    traj = Trajectory(task_id=task.id, policy=policy.name)
                    rollouts.append(Rollout(task, traj, state, g))
                    wanted.append((spec, task.seed))

            def open_one(item: tuple[EnvSpec, int]) -> Episode | Exception:
                try:
                    return runtime.open(item[0], seed=item[1])
                except Exception as exc:  # kept: the others opened are closed below
                    return exc

            # opened on the stepping threads: a reused episode's reset is SQLite work
            opened = each(pool, config.step_threads, open_one, wanted)
            episodes.extend(e for e in opened if isinstance(e, Episode))
            failed = next((e for e in opened if isinstance(e, Exception)), None)
            if failed is not None:
                raise failed
            live = list(range(len(rollouts)))
            visible = [[t["name"] for t in r.state.tools] for r in rollouts]

            def observe(item: tuple[int, str]) -> tuple[Step, str]:
                # the step and its observation text, on a stepping thread (not serially after)
                i, text = item
                step = observe_reply(episodes[i], rollouts[i].task, visible[i], text)
                answered = step.tool is None and step.error_kind is None
                return step, "" if answered else observation_text(step, rollouts[i].task)

            limits = [turn_limit(r.task, config.max_turns) for r in rollouts]
            for turn in range(max(limits, default=0)):
                if not live:
                    break
                if on_turn:
                    on_turn(turn, len(live))
                texts = policy.act([rollouts[i].state for i in live])
                observed = each(pool, config.step_threads, observe,
                                list(zip(live, texts, strict=True)))
                still = []
                for i, text, (step, shown) in zip(live, texts, observed, strict=True):
                    r = rollouts[i]
                    if r.state.out_of_budget:
                        r.trajectory.meta["stop"] = "token_budget"
                        continue
                    r.trajectory.steps.append(step)
                    native = r.state.native_call
                    r.state.native_call = None
                    r.state.messages.append({"role": "assistant", "content": text,
                                             "tool_calls": [native] if native else []})
                    if step.tool is None and step.error_kind is None:  # an answer
                        r.trajectory.final_answer = step.result
                        r.trajectory.finished = True
                        continue
                    if step.fault == "environment":
                        r.trajectory.env_fault = True
                    r.state.messages.append({"role": "tool", "content": shown,
                                             "tool_call_id": native["id"] if native else None})
                    if turn + 1 < limits[i]:
                        still.append(i)
                    else:
                        r.trajectory.meta["stop"] = "max_turns"
                live = still
            for i in live:
                rollouts[i].trajectory.meta.setdefault("stop", "max_turns")

            def finish(k: int) -> None:
                r = rollouts[k]
                r.trajectory.messages = r.state.messages
                r.trajectory.meta["turns"] = len(r.trajectory.steps)
                if r.state.trace is not None:
                    r.trajectory.meta["policy_tokens"] = sum(r.state.trace.mask)
                reward(r.task, r.trajectory, episodes[k])

            # scored on the stepping threads: the check's SQLite work releases the GIL
            each(pool, config.step_threads, finish, range(len(rollouts)))
        return rollouts
    finally:
        forget = getattr(policy, "forget", None)  # a policy's per-episode state (KV caches)
        if forget is not None:
            forget()
        for ep in episodes:
            ep.close()
        if own_runtime:
            runtime.close()


__all__ = ["RewardFn", "Rollout", "RolloutConfig", "each", "observation_text", "turn_limit", "observe_call",
           "observe_reply", "run_rollouts", "spec_index", "visible_text"]
