"""The pipeline stages the evolve graph calls, one function each — the seams to the stage modules.
Build and synthesis run their stage graphs as subgraphs of the calling node (`within`).

    build_environments(names, home, seed)                     mined → built (validated tools)
    synthesize_tasks(names, home, per_env, seed, guidelines)  environments → task ids (gated)
    run_policy(policy, tasks, home, seed)                     the policy's attempts → Trajectories
    train_policy(policy, tasks, out_dir, steps, seed, home)   GRPO → checkpoint + reward curve
    finish_training(out_dir)                                  drop what only a resume needs
    default_policy()                                          the embedded default policy reference

The GRPO trainer (`finish_training`) is imported when called: it brings torch and
transformers, which importing the evolve graph should not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from agent_world.graphs import build_graph, synthesize_graph
from agent_world.tasks.model import Task, Trajectory
from agent_world.training import api as training_api
from agent_world.training.api import TrainResult

Progress = Callable[[dict[str, Any]], None]  # a stage reports how far it is


def build_environments(names: list[str], home: str | Path, seed: int = 0,
                       scale: dict[str, Any] | None = None,
                       within: RunnableConfig | None = None) -> list[str]:
    """Build (tool designer + cross-validation) the mined environments `names`; returns the
    names of those that now have a `built` version with at least one tool. `scale`: where the
    per-environment work runs (`workers`, `ray_address`: `agent_world.scaleout`). `within`:
    the calling node's config, to run the build graph as its subgraph."""
    return list(build_graph.build_environments(names, home=home, seed=seed, context=scale,
                                               within=within))


def synthesize_tasks(names: list[str], home: str | Path, per_env: int, seed: int = 0,
                     guidelines: dict[str, Any] | None = None, tag: str = "",
                     scale: dict[str, Any] | None = None,
                     within: RunnableConfig | None = None) -> list[str]:
    """Synthesize up to `per_env` gated tasks per environment (guided by a diagnosis'
    `guidelines` when given), store them in the catalog, return their ids. `scale`, `within`:
    as for `build_environments`; `tag` names the run."""
    return list(synthesize_graph.synthesize_tasks(names, home=home, per_env=per_env, seed=seed,
                                                  guidelines=guidelines, tag=tag, context=scale,
                                                  within=within))


def default_policy() -> str:
    """The policy the main job trains (SmolLM2-135M-Instruct)."""
    return training_api.default_policy()


def run_policy(policy: str, tasks: list[Task], home: str | Path, seed: int = 0,
               max_turns: int = 8, progress: Progress | None = None) -> list[Trajectory]:
    """One attempt of `policy` (a checkpoint directory or policy reference) at each task;
    `progress` hears {"turn", "live"} after every turn."""
    on_turn = (lambda turn, live: progress({"turn": turn, "live": live})) if progress else None
    return list(training_api.evaluate(policy, tasks, home=home, seed=seed, max_turns=max_turns,
                                      on_turn=on_turn))


def train_policy(policy: str, tasks: list[Task], out_dir: str | Path, steps: int,
                 seed: int = 0, home: str | Path | None = None,
                 progress: Progress | None = None, warm_start_steps: int | None = 0
                 ) -> TrainResult:
    """Continue training `policy` with GRPO on `tasks` for `steps` steps; checkpoints land in
    `out_dir`, and a killed run resumes from the latest one there. `warm_start_steps` None:
    the policy model's default (`training.api.training_sizes`). `progress` hears
    {"step", "steps", "reward"} after every GRPO step and {"warm": True, "step", "steps",
    "loss"} after every supervised warm-start step."""
    heard: dict[int, float] = {}  # step → call rate, for the report's training curves

    def on_step(st: Any) -> None:
        heard[st.step] = float(getattr(st, "call_rate", 0.0))
        if progress:
            progress({"step": st.step, "steps": steps, "reward": st.reward_mean})

    on_warm = (lambda i, n, loss: progress({"warm": True, "step": i, "steps": n, "loss": loss})
               ) if progress else None
    out = training_api.train(policy, tasks, out_dir=out_dir, steps=steps, seed=seed, home=home,
                             on_step=on_step, warm_start_steps=warm_start_steps,
                             on_warm_step=on_warm)
    # the call rate each step was heard with joins its point of the reward curve
    return replace(out, curve=[{**p, "call_rate": heard[p["step"]]} if p.get("step") in heard
                               else dict(p) for p in out.curve])


def finish_training(out_dir: str | Path) -> int:
    """Remove the optimizer states and frozen reference of a finished `train_policy` run in
    `out_dir` (its checkpoints stay loadable); the bytes freed."""
    from agent_world.training.grpo import GRPOTrainer  # torch: see the module docstring
    return GRPOTrainer.prune(out_dir)


__all__ = ["build_environments", "default_policy", "finish_training",
           "run_policy", "synthesize_tasks", "train_policy"]
