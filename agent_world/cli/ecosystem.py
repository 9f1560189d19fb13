"""`agent-world export trl DIR` and `agent-world export verifiers DIR`: arena tasks and
environments packaged for TRL's GRPOTrainer and for Prime Intellect's verifiers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_world.cli.common import console, state
from agent_world.cli.train import DrillOpt, EnvOpt, LimitOpt, TasksOpt, load_tasks

OutArg = Annotated[Path, typer.Argument(help="Directory to write the export to.")]
TurnsOpt = Annotated[int, typer.Option(help="Tool-calling turns per episode.")]


def export_trl_cmd(
    out: OutArg,
    model: Annotated[str, typer.Option(help="Model train_grpo.py trains by default.")
                     ] = "Qwen/Qwen2.5-0.5B-Instruct",
    group_size: Annotated[int, typer.Option(help="Generations per prompt (GRPO group).")] = 8,
    kl: Annotated[float, typer.Option(help="KL coefficient (GRPOConfig.beta).")] = 0.04,
    max_turns: TurnsOpt = 8,
    tasks_file: TasksOpt = None, env: EnvOpt = None, drill: DrillOpt = None,
    limit: LimitOpt = None,
) -> None:
    """Export tasks for TRL: environment_factory module, dataset, reward, GRPO script."""
    from agent_world.integrations.trl import export_trl
    from agent_world.training.api import _specs

    tasks = load_tasks(tasks_file, env, drill, limit)
    path = export_trl(tasks, _specs(tasks, (), state.home), out, model=model,
                      group_size=group_size, max_turns=max_turns, kl_coef=kl)
    console.print(f"exported {len(tasks)} tasks to {path}; import {path / 'arena_trl.py'} "
                  f"or run {path / 'train_grpo.py'}")


def export_verifiers_cmd(
    out: OutArg,
    max_turns: TurnsOpt = 8,
    tasks_file: TasksOpt = None, env: EnvOpt = None, drill: DrillOpt = None,
    limit: LimitOpt = None,
) -> None:
    """Export tasks as a verifiers environment package (load_environment)."""
    from agent_world.integrations.verifiers_env import ENV_ID, export_verifiers
    from agent_world.training.api import _specs

    tasks = load_tasks(tasks_file, env, drill, limit)
    path = export_verifiers(tasks, _specs(tasks, (), state.home), out, max_turns=max_turns)
    console.print(f"exported {len(tasks)} tasks to {path}; `pip install {path}` (or put it on "
                  f"sys.path), then vf.load_environment({ENV_ID!r})")
