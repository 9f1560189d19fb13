"""Shortcut attempts: trajectories built to earn a task's reward without doing the task.

Each is made from the task's own gold chain, replayed in a fresh episode, and scored by the one
reward (`rollout.reward.score`), so what it measures is what training and evaluation pay:

- `number_spray`: the gold calls, then "0 1 2 ... 119" (a count is among them);
- `candidate_list`: the gold calls, then every value the calls showed;
- `clock_time`: the gold calls, then the engine clock (digits that hold 0, 9, 2026);
- `generic_sentence`: the gold calls, then "I could not find it." (holds "I", "not");
- `first_call_only`: the first gold call, then the reference answer (a guess grounded in a
  call that does not show it);
- `wrong_target_write`: the gold calls with a write aimed at another record it accepts (the
  first such write: `tasks.retarget`), then the reference answer (or the status the request
  names);
- `repeated_reads`: eighteen unrelated reads, then the gold calls and the reference answer
  (passes when it costs nothing);
- `yes_judge`: the wrong-target write, scored with a judge that says yes to anything.

A shortcut passes when the reward's check passes it (`repeated_reads`: when it also earns the
full reward). `benchmarks/task_quality.py` runs the suite over every emitted task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.rollout.reward import score
from agent_world.tasks.model import Step, Task, ToolCall, Trajectory
from agent_world.tasks.retarget import retargeted

SHORTCUTS = ("number_spray", "candidate_list", "clock_time", "generic_sentence",
             "first_call_only", "wrong_target_write", "repeated_reads", "yes_judge")
SPREE = 18  # unrelated reads before the gold calls
SPRAY = " ".join(str(i) for i in range(120))
MAX_CANDIDATES = 200


@dataclass
class ShortcutResult:
    name: str
    passed: bool
    reward: float
    detail: str = ""


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _scalars(value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        for v in value.values():
            _scalars(v, out)
    elif isinstance(value, list):
        for v in value:
            _scalars(v, out)
    elif value is not None and len(out) < MAX_CANDIDATES and str(value) not in out:
        out.append(str(value))


def replay(task: Task, spec: EnvSpec, runtime: EnvRuntime, calls: list[ToolCall], answer: Any,
           judge: Any = None) -> Trajectory:
    """`calls` made in a fresh episode of `task`, then `answer`, scored by the one reward."""
    # steps name tools as the agent sees them (obscured names included)
    visible = {real: shown for shown, real in (task.tool_view or {}).items()}
    ep = runtime.open(spec, seed=task.seed)
    try:
        steps = []
        for call in calls:
            obs = ep.step(call.tool, call.arguments)
            steps.append(Step(tool=visible.get(call.tool, call.tool), arguments=call.arguments,
                              ok=obs.ok, result=obs.result if obs.ok else None,
                              error_kind=obs.error.kind if obs.error else None))
        traj = Trajectory(task_id=task.id, steps=steps, final_answer=answer, finished=True)
        score(task, traj, ep, judge=judge)
        return traj
    finally:
        ep.close()


def _unrelated_read(task: Task, spec: EnvSpec) -> ToolCall | None:
    """A read the task does not need: a tool outside its chain that takes no arguments."""
    used = {c.tool for c in task.chain}
    for t in spec.tools:
        if not t.mutates and t.name not in used and not t.parameters.get("required"):
            return ToolCall(tool=t.name, arguments={})
    return None


def shortcut_attempts(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> list[ShortcutResult]:
    """The shortcuts that apply to `task`, each scored (see the module docstring)."""
    ref = task.reference_answer
    chain = list(task.chain)

    def run(calls: list[ToolCall], answer: Any, judge: Any = None) -> Trajectory:
        return replay(task, spec, runtime, calls, answer, judge)
    out: list[ShortcutResult] = []

    def add(name: str, traj: Trajectory, full: bool = False) -> None:
        passed = traj.reward_components.get("check.passed") == 1.0
        if full:
            passed = passed and traj.reward >= 1.0 - 1e-9
        checked = {k.removeprefix("check."): v for k, v in traj.reward_components.items()
                   if k.startswith("check.")}
        out.append(ShortcutResult(name, passed, traj.reward,
                                  f"answer {str(traj.final_answer)[:60]!r}, "
                                  f"{len(traj.steps)} calls, check {checked}"))

    if ref is not None and chain:
        if _number(ref):
            add("number_spray", run(chain, SPRAY))
        clock = run(chain, spec.clock_start)
        shown: list[str] = []  # every value the gold calls show
        for s in clock.steps:
            _scalars(s.result, shown)
        if len(shown) > 1:
            add("candidate_list", run(chain, ", ".join(shown)))
        add("clock_time", clock)
        add("generic_sentence", run(chain, "I could not find it."))
    if len(chain) >= 2:
        add("first_call_only", run(chain[:1], ref if ref is not None else "Done."))
    moved = next((chain for _, _, chain in retargeted(task, spec, runtime)), None)
    if moved is not None:
        answer = ref if ref is not None else "Done."
        add("wrong_target_write", run(moved, answer))
        yes = FakeListChatModel(responses=['{"score": 1.0}'] * 4)
        add("yes_judge", run(moved, answer, judge=yes))
    read = _unrelated_read(task, spec)
    if read is not None and chain:
        add("repeated_reads", run([read] * SPREE + chain,
                                      ref if ref is not None else "Done."), full=True)
    return out


__all__ = ["SHORTCUTS", "ShortcutResult", "replay", "shortcut_attempts"]
