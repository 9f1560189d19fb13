"""The ReAct verifier: does an agent that never sees the walk reach the ground truth?

Each run is `run_attempt` — `langchain.agents.create_agent(model, tools)` over the task's tool
view in a fresh episode — checked by `check_task`. The task is kept only if more than
`threshold` of the `runs` pass (default: 5 runs, majority). The model is the "verifier" chat
model when one is configured (`models.chat_model("verifier")`); offline it is the heuristic
baseline agent (`agent_world.agents.baseline.BaselineChatModel`) with a different seed per run,
so the runs are independent attempts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_world.agents.attempt import run_attempt
from agent_world.agents.baseline import BaselineChatModel
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.tasks.model import Task, Trajectory

DEFAULT_RUNS = 5
DEFAULT_THRESHOLD = 0.5


@dataclass
class Verdict:
    passes: int
    runs: int  # configured runs; `ran` may be fewer when stopped early
    threshold: float
    trajectories: list[Trajectory] = field(default_factory=list)

    @property
    def ran(self) -> int:
        return len(self.trajectories)

    @property
    def pass_rate(self) -> float:
        return self.passes / self.ran if self.ran else 0.0

    @property
    def kept(self) -> bool:
        return self.passes > self.threshold * self.runs


def verifier_models(runs: int) -> Callable[[int], Any]:
    """run index -> chat model: the configured verifier model, else the baseline agent."""
    from agent_world.models import chat_model

    model = chat_model("verifier")
    if model is not None:
        return lambda i: model
    return lambda i: BaselineChatModel(seed=i)


def verify_task(task: Task, spec: EnvSpec, runtime: EnvRuntime, runs: int = DEFAULT_RUNS,
                threshold: float = DEFAULT_THRESHOLD,
                models: Callable[[int], Any] | None = None, stop_early: bool = False) -> Verdict:
    """Run the verifier `runs` times; with `stop_early`, stop once the task can no longer
    reach the threshold (a kept task always gets all its runs, so its pass rate is exact)."""
    models = models or verifier_models(runs)
    verdict = Verdict(passes=0, runs=runs, threshold=threshold)
    for i in range(runs):
        traj = run_attempt(task, models(i), spec=spec, runtime=runtime, policy="verifier",
                           role="verifier")
        verdict.trajectories.append(traj)
        verdict.passes += bool(traj.meta.get("passed"))
        left = runs - i - 1
        if stop_early and verdict.passes + left <= threshold * runs:
            break
    return verdict


__all__ = ["DEFAULT_RUNS", "DEFAULT_THRESHOLD", "Verdict", "verifier_models", "verify_task"]
