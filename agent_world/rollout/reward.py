"""Structured verifiable rewards for trajectories, each component logged: the one reward of
training rollouts, evaluation and the verifier's attempts (`rollout.react_attempt.run_attempt`).

- every task: the one deterministic task check (`agent_world.tasks.check.check_episode` with
  the attempt's steps: typed exact answer, exact state, grounded in the call that produced the
  answer, extra calls lowering the score down to a floor); components `check.*`, its verdict
  `check.passed`;
- graph tasks with a rubric-conditioned LLM judge configured (`models.chat_model("judge")`):
  the judge refines a deterministic pass (task score = check × (1 − JUDGE_WEIGHT × (1 −
  judge))) and is not asked about a fail, which it could never overturn;
- a format penalty for malformed tool calls, for repeating a call that already failed (same
  tool, same arguments), for not answering at all, and for answering a
  task whose gold solution calls tools without a single readable call (the largest penalty:
  giving up on tools never scores better than any attempt that calls one);
- environment faults (worker crash, tool exception, timeout) mark the trajectory `env_fault`:
  it is dropped from training batches instead of being punished for the environment's bug.

reward = task score - format penalty, components in `trajectory.reward_components`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agent_world.envs.episode import Episode
from agent_world.models import chat_model
from agent_world.plain_chat import content_text
from agent_world.rollout.prompts import JUDGE_PROMPT
from agent_world.tasks.check import check_episode
from agent_world.tasks.model import Task, Trajectory

MALFORMED_PENALTY = 0.1  # per malformed tool call
UNFINISHED_PENALTY = 0.1  # no answer before the turn/token limit
# per call that repeats an earlier refused or failed call exactly (same tool, same arguments):
# the error already said it fails, and a greedy policy that learned nothing from it loops until
# the turn limit; without it, an attempt that tries something else after an error and one that
# loops score alike, so a group of failures carries no signal against looping
REPEAT_PENALTY = 0.1
MAX_FORMAT_PENALTY = 0.3
# a task that needs tools, no readable tool call in the attempt: as bad as the worst format,
# so giving up on tools never beats trying (at 0.1 a tiny policy whose calls were often
# malformed, -0.2 or -0.3, learned within 25 steps to answer without calling)
NO_CALL_PENALTY = MAX_FORMAT_PENALTY
# how much a judge's verdict can take off a deterministic pass (a pass it calls worthless
# keeps half its score)
JUDGE_WEIGHT = 0.5
_SCORE = re.compile(r"\"?score\"?\s*[:=]\s*\"?([01](?:\.\d+)?|\.\d+)\b", re.I)
_BARE_SCORE = re.compile(r"([01](?:\.\d+)?|\.\d+)")

Checker = Callable[[Task, Episode, Any], Any]


def _repeats(traj: Trajectory) -> int:
    """Calls that repeat an earlier failed call of the attempt exactly."""
    failed: set[str] = set()
    count = 0
    for s in traj.steps:
        if s.tool is None or s.error_kind == "malformed_tool_call":
            continue
        key = json.dumps([s.tool, s.arguments], sort_keys=True, default=str)
        count += key in failed
        if not s.ok:
            failed.add(key)
    return count


def format_parts(traj: Trajectory, task: Task | None = None) -> dict[str, float]:
    """The format penalty's parts (positive numbers): malformed calls, repeats of a failed
    call, no answer, and no readable call at all on a task whose gold chain calls tools
    (`task` given)."""
    malformed = sum(1 for s in traj.steps if s.error_kind == "malformed_tool_call")
    called = any(s.tool is not None and s.error_kind != "malformed_tool_call"
                 for s in traj.steps)
    return {"malformed": MALFORMED_PENALTY * malformed, "repeat": REPEAT_PENALTY * _repeats(traj),
            "unfinished": 0.0 if traj.finished else UNFINISHED_PENALTY,
            "no_call": NO_CALL_PENALTY if task is not None and task.chain and not called
            else 0.0}


def format_penalty(traj: Trajectory, task: Task | None = None) -> float:
    return min(MAX_FORMAT_PENALTY, sum(format_parts(traj, task).values()))


def _trace_text(traj: Trajectory, limit: int = 4000) -> str:
    lines = []
    for s in traj.steps:
        if s.tool is None and s.error_kind is None:
            continue
        outcome = json.dumps(s.result, default=str) if s.ok else f"error {s.error_kind}"
        lines.append(f"{s.tool}({json.dumps(s.arguments, default=str)}) -> {outcome}")
    text = "\n".join(lines)
    return text[:limit]


def judge_score(judge: Any, task: Task, traj: Trajectory) -> float:
    """Ask the judge model for a 0..1 score given the rubric and the reference answer."""
    prompt = JUDGE_PROMPT.format(
        instruction=task.instruction, rubric="\n".join(f"- {r}" for r in task.rubric) or "-",
        reference=json.dumps(task.reference_answer, default=str),
        answer=json.dumps(traj.final_answer, default=str), trace=_trace_text(traj))
    # a plain text request, so any chat model can judge (no tool calling needed); the score
    # is read from the JSON asked for, a "score: x" line, or a reply that is only a number,
    # never from a number somewhere in prose ("1 of the 2 values")
    text = content_text(judge.invoke(prompt)).strip()
    match = _SCORE.search(text) or _BARE_SCORE.fullmatch(text)
    if match is None:
        raise ValueError(f"judge reply has no score: {text[:200]!r}")
    return max(0.0, min(1.0, float(match.group(1))))


def _check_components(result: Any) -> tuple[float, bool, dict[str, float]]:
    """Score, verdict and components of a check result (a `CheckResult`, or a bare score from
    a custom checker: a pass at 1)."""
    score = float(getattr(result, "score", result))
    passed = bool(getattr(result, "passed", score >= 1.0 - 1e-9))
    parts = getattr(result, "components", None) or {}
    return score, passed, {f"check.{k}": float(v) for k, v in parts.items()
                           if isinstance(v, int | float | bool)}


def score(task: Task, traj: Trajectory, episode: Episode, checker: Checker | None = None,
          judge: Any = "auto") -> Any:
    """Fill `traj.reward` and `traj.reward_components` from the episode's final state; returns
    the check's result (None for an environment fault)."""
    components: dict[str, float] = {}
    if any(s.fault == "environment" for s in traj.steps):
        traj.env_fault = True
    if traj.env_fault:
        traj.reward, traj.reward_components = 0.0, {"env_fault": 1.0}
        return None
    if checker is None:  # the one task check, grounded in the attempt's calls
        result = check_episode(task, episode, traj.final_answer, steps=traj.steps)
    else:
        result = checker(task, episode, traj.final_answer)
    task_score, passed, parts = _check_components(result)
    components.update(parts)
    components["check"] = task_score
    components["check.passed"] = float(passed)
    if passed and task.kind == "graph":
        if judge == "auto":
            judge = chat_model("judge")
        if judge is not None:
            try:
                verdict = judge_score(judge, task, traj)
                components["judge"] = verdict
                task_score *= 1.0 - JUDGE_WEIGHT * (1.0 - verdict)
            except Exception as exc:  # unreachable judge or unreadable verdict: the check
                traj.meta["judge_error"] = f"{type(exc).__name__}: {exc}"[:300]
    parts = format_parts(traj, task)
    penalty = min(MAX_FORMAT_PENALTY, sum(parts.values()))
    components.update({f"format.{k}": -v for k, v in parts.items()})
    components["format_penalty"] = -penalty
    traj.reward = task_score - penalty
    components["total"] = traj.reward
    traj.reward_components = components
    return result


__all__ = ["JUDGE_WEIGHT", "Checker", "format_parts", "format_penalty", "judge_score", "score"]
