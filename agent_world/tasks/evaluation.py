"""Scoring a policy on tasks: why each attempt failed, and pass rates sliced every useful way.

An **attempt** is one (Task, Trajectory) pair. `classify_failure` names the error class of a
failed attempt from its steps and the task's gold chain:

| class | when |
|---|---|
| `format` | the agent's output could not be read as a tool call or an answer |
| `wrong_tool` | it called a tool that does not exist or one the solution never needs |
| `wrong_arguments` | right tool, but the call was refused or its arguments differ from the gold ones |
| `gave_up` | it stopped without an answer, or answered without the calls the task needs |
| `state_not_tracked` | every call was right, yet the answer or the final state was wrong |
| `environment` | an environment fault (crash, timeout): not the agent's error, never trained on |

`score(...)` aggregates attempts into an `EvalReport`: pass rate overall and per environment,
tool, difficulty level, task kind and error class, with the trajectory ids behind each cell so
the diagnoser can cite its evidence.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent_world.tasks.model import Task, Trajectory

ErrorClass = Literal["format", "wrong_tool", "wrong_arguments", "gave_up", "state_not_tracked",
                     "environment"]
ERROR_CLASSES: tuple[str, ...] = ("format", "wrong_tool", "wrong_arguments", "gave_up",
                                  "state_not_tracked", "environment")
AGENT_ERROR_CLASSES: tuple[str, ...] = ERROR_CLASSES[:-1]

PASS_THRESHOLD = 0.999  # a reward at or above this is a pass (rewards are in [0, 1])
FORMAT_KINDS = {"format", "format_error", "parse_error", "bad_format", "no_tool_call",
                "malformed_tool_call"}
WRONG_TOOL_KINDS = {"unknown_tool", "tool_not_in_view"}
WRONG_ARGUMENT_KINDS = {"invalid_arguments", "tool_error", "constraint_violation",
                        "permission_denied"}


def passed(traj: Trajectory) -> bool:
    """The arena's reward (`rollout.reward.score`): the check passed and no format penalty
    (extra calls lower the reward of a pass, they do not undo it); a reward without the
    check's verdict: at PASS_THRESHOLD."""
    comps = traj.reward_components
    if "check.passed" in comps:
        return comps["check.passed"] >= 1.0 and comps.get("format_penalty", 0.0) == 0.0
    return traj.reward >= PASS_THRESHOLD


def _real(task: Task, visible: str | None) -> str | None:
    return task.real_tool(visible) if visible else None


def classify_failure(task: Task, traj: Trajectory) -> ErrorClass | None:
    """The error class of a failed attempt (None when it passed)."""
    if passed(traj):
        return None
    if traj.env_fault or any(s.fault == "environment" for s in traj.steps):
        return "environment"
    kinds = {s.error_kind for s in traj.steps if s.error_kind}
    calls = [s for s in traj.steps if s.tool]
    if kinds & FORMAT_KINDS or traj.meta.get("format_error"):
        return "format"
    if not calls and not traj.finished and any(s.text.strip() for s in traj.steps):
        return "format"  # it talked, but never produced a readable call or answer
    gold_tools = {c.tool for c in task.chain}
    used = [_real(task, s.tool) for s in calls]
    if kinds & WRONG_TOOL_KINDS or any(u is None for u in used):
        return "wrong_tool"
    if gold_tools and any(u not in gold_tools for u in used):
        return "wrong_tool"
    if kinds & WRONG_ARGUMENT_KINDS:
        return "wrong_arguments"
    if not traj.finished or traj.final_answer in (None, ""):
        return "gave_up"
    if gold_tools and not gold_tools <= set(used):
        return "gave_up"  # answered before making the calls the task needs
    gold_args = [(c.tool, _norm(c.arguments)) for c in task.chain]
    got_args = {(u, _norm(s.arguments)) for u, s in zip(used, calls, strict=True)}
    if any(g not in got_args for g in gold_args):  # gold arguments are fixed by the chain
        return "wrong_arguments"
    return "state_not_tracked"


def _norm(args: Any) -> str:
    return json.dumps(args or {}, sort_keys=True, default=str)


def failing_tool(task: Task, traj: Trajectory) -> str | None:
    """The real tool where the attempt went wrong: the first refused or foreign call, else the
    first gold tool it did not call, else the last gold tool."""
    gold = [c.tool for c in task.chain]
    for s in traj.steps:
        real = _real(task, s.tool)
        if s.tool and (s.ok is False or (gold and real not in gold)):
            return real or s.tool
    used = {_real(task, s.tool) for s in traj.steps if s.tool}
    for tool in gold:
        if tool not in used:
            return tool
    return gold[-1] if gold else None


class Attempt(BaseModel):
    """One scored attempt, as stored in the catalog's evaluation records."""

    trajectory_id: str
    task_id: str
    env_name: str
    kind: str
    level: int
    tools: list[str] = Field(default_factory=list)  # the real tools the task's solution uses
    passed: bool
    reward: float
    error_class: ErrorClass | None = None
    failing_tool: str | None = None
    steps: int = 0


def attempt(task: Task, traj: Trajectory, trajectory_id: str | None = None) -> Attempt:
    ok = passed(traj)
    return Attempt(
        trajectory_id=trajectory_id or traj.meta.get("id") or f"{task.id}:{traj.policy}",
        task_id=task.id, env_name=task.env_name, kind=task.kind, level=task.difficulty.level,
        tools=sorted({c.tool for c in task.chain}), passed=ok, reward=traj.reward,
        error_class=None if ok else classify_failure(task, traj),
        failing_tool=None if ok else failing_tool(task, traj), steps=len(traj.steps))


class Cell(BaseModel):
    """Pass rate of one slice, with the failing trajectory ids as evidence."""

    attempts: int = 0
    passes: int = 0
    failures: list[str] = Field(default_factory=list)

    @property
    def pass_rate(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0

    def to_row(self) -> dict[str, Any]:
        return {"attempts": self.attempts, "passes": self.passes,
                "pass_rate": round(self.pass_rate, 4)}


class EvalReport(BaseModel):
    """Pass rates of one evaluation, sliced; `errors` counts failures by error class."""

    attempts: int = 0
    passes: int = 0
    by_env: dict[str, Cell] = Field(default_factory=dict)
    by_tool: dict[str, Cell] = Field(default_factory=dict)  # tool → "env/tool"
    by_level: dict[str, Cell] = Field(default_factory=dict)
    by_kind: dict[str, Cell] = Field(default_factory=dict)
    errors: dict[str, list[str]] = Field(default_factory=dict)  # class → trajectory ids
    errors_by_env: dict[str, dict[str, int]] = Field(default_factory=dict)
    errors_by_tool: dict[str, dict[str, int]] = Field(default_factory=dict)

    @property
    def pass_rate(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0

    def error_counts(self) -> dict[str, int]:
        return {c: len(self.errors.get(c, [])) for c in ERROR_CLASSES}

    def error_share(self, error_class: str) -> float:
        """Share of all attempts that failed with `error_class`."""
        return len(self.errors.get(error_class, [])) / self.attempts if self.attempts else 0.0

    def summary(self) -> dict[str, Any]:
        """A small JSON-able summary (graph state and round records hold this)."""
        return {"attempts": self.attempts, "passes": self.passes,
                "pass_rate": round(self.pass_rate, 4),
                "by_env": {k: v.to_row() for k, v in sorted(self.by_env.items())},
                "by_level": {k: v.to_row() for k, v in sorted(self.by_level.items())},
                "by_kind": {k: v.to_row() for k, v in sorted(self.by_kind.items())},
                "by_tool": {k: v.to_row() for k, v in sorted(self.by_tool.items())},
                "errors": self.error_counts()}


def score(attempts: Iterable[Attempt]) -> EvalReport:
    by_env: dict[str, Cell] = defaultdict(Cell)
    by_tool: dict[str, Cell] = defaultdict(Cell)
    by_level: dict[str, Cell] = defaultdict(Cell)
    by_kind: dict[str, Cell] = defaultdict(Cell)
    errors: dict[str, list[str]] = defaultdict(list)
    errors_by_env: dict[str, Counter[str]] = defaultdict(Counter)
    errors_by_tool: dict[str, Counter[str]] = defaultdict(Counter)
    total = ok = 0
    for a in attempts:
        cells = [by_env[a.env_name], by_level[str(a.level)], by_kind[a.kind]]
        cells += [by_tool[f"{a.env_name}/{t}"] for t in a.tools]
        total += 1
        ok += a.passed
        for c in cells:
            c.attempts += 1
            if a.passed:
                c.passes += 1
            else:
                c.failures.append(a.trajectory_id)
        if not a.passed and a.error_class:
            errors[a.error_class].append(a.trajectory_id)
            errors_by_env[a.env_name][a.error_class] += 1
            if a.failing_tool:
                errors_by_tool[f"{a.env_name}/{a.failing_tool}"][a.error_class] += 1
    return EvalReport(attempts=total, passes=ok, by_env=dict(by_env), by_tool=dict(by_tool),
                      by_level=dict(by_level), by_kind=dict(by_kind), errors=dict(errors),
                      errors_by_env={k: dict(v) for k, v in errors_by_env.items()},
                      errors_by_tool={k: dict(v) for k, v in errors_by_tool.items()})


__all__ = ["AGENT_ERROR_CLASSES", "ERROR_CLASSES", "Attempt", "Cell", "ErrorClass",
           "EvalReport", "attempt", "classify_failure", "failing_tool", "passed", "score"]
