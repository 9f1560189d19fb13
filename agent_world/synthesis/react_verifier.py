"""The ReAct verifier: does an agent that never sees the walk reach the ground truth?

Each run is `run_attempt` — `langchain.agents.create_agent(model, tools)` over the task's tool
view in a fresh episode — checked by `check_task`. With a "verifier" chat model
configured (`models.chat_model("verifier")`) the runs are a **filter**: the task is kept only
if more than `threshold` of the `runs` pass (default: 5 runs, majority). Offline they are a
**measurement**: the heuristic baseline agent (`agent_world.rollout.baseline_agent.BaselineChatModel`,
a different seed per run) attempts every task and its pass rate is recorded on the task, but it
decides nothing. A word-overlap heuristic as the filter kept only the tasks it could solve
(survival fell from 77 % at level 1 to 7 % at level 5); offline, what keeps a task honest is
the solvability gate (`agent_world.synthesis.gates.gate_solvable`) and the other trust gates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.models import chat_model
from agent_world.rollout.baseline_agent import BaselineChatModel
from agent_world.rollout.react_attempt import run_attempt
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


def configured_verifier() -> Any:
    """The configured "verifier" chat model, or None offline."""
    return chat_model("verifier")


def verifier_models(runs: int, model: Any = None) -> Callable[[int], Any]:
    """run index -> chat model: `model` or the configured verifier model, else the baseline
    agent (a different seed per run)."""
    model = model if model is not None else configured_verifier()
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


__all__ = ["DEFAULT_RUNS", "DEFAULT_THRESHOLD", "Verdict", "configured_verifier",
           "verifier_models", "verify_task"]
