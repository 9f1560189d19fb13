"""`agent-world export openrlhf|openenv|trl|verifiers DIR`: arena tasks (and environments)
packaged for other trainers: OpenRLHF's agent mode, a Hugging Face OpenEnv environment directory,
TRL's GRPOTrainer, Prime Intellect's verifiers."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agent_world.cli.common import console, err_console, state
from agent_world.cli.train import DrillOpt, EnvOpt, LimitOpt, TasksOpt, load_tasks
from agent_world.errors import AgentWorldError
from agent_world.integrations.openenv_export import (
    OpenEnvLockError,
    arena_wheel,
    export_openenv,
    lock_export,
)
from agent_world.integrations.trl import export_trl
from agent_world.integrations.verifiers_env import ENV_ID, export_verifiers
from agent_world.training.api import _specs
from agent_world.training.openrlhf_export import export_openrlhf

export_app = typer.Typer(no_args_is_help=True, rich_markup_mode="markdown",
                         help="Export arena tasks for other trainers.")


@export_app.command("openrlhf")
def export_openrlhf_cmd(
    out: Annotated[Path, typer.Argument(help="Directory to write the export to.")],
    model: Annotated[str, typer.Option(help="Model OpenRLHF trains (HF id or path).")
                     ] = "HuggingFaceTB/SmolLM2-135M-Instruct",
    group_size: Annotated[int, typer.Option(help="Samples per prompt (GRPO group).")] = 8,
    kl: Annotated[float, typer.Option(help="k3 KL loss coefficient.")] = 0.04,
    max_turns: Annotated[int, typer.Option(help="Turns per episode.")] = 8,
    gpus: Annotated[int, typer.Option(help="GPUs per node.")] = 8,
    tasks_file: TasksOpt = None, env: EnvOpt = None, drill: DrillOpt = None,
    limit: LimitOpt = None,
) -> None:
    """Export tasks for OpenRLHF: dataset, agent file, launch script, DeepSpeed config."""
    tasks = load_tasks(tasks_file, env, drill, limit)
    path = export_openrlhf(tasks, _specs(tasks, (), state.home), out, model=model,
                           group_size=group_size, kl_coef=kl, max_turns=max_turns, gpus=gpus)
    console.print(f"exported {len(tasks)} tasks to {path}; run {path / 'train_grpo.sh'}")


@export_app.command("openenv")
def export_openenv_cmd(
    out: Annotated[Path, typer.Argument(help="Directory to write the environment to.")],
    env: Annotated[str | None, typer.Option(
        "--env", help="The environment (catalog name); default: the one the tasks are on.")
    ] = None,
    port: Annotated[int, typer.Option(help="Port the server listens on by default.")] = 8000,
    max_concurrent: Annotated[int, typer.Option(
        help="OpenEnv sessions (episodes) served at once.", min=1)] = 64,
    max_steps: Annotated[int | None, typer.Option(
        help="Tool calls per episode before it ends unanswered.", min=1)] = None,
    lock: Annotated[bool, typer.Option(
        "--lock/--no-lock", help="Pin the dependencies in uv.lock (`uv lock`: needs the package "
        "index) against a wheel of this arena copied into the directory.")] = True,
    tasks_file: TasksOpt = None, drill: DrillOpt = None, limit: LimitOpt = None,
) -> None:
    """Export an environment and its tasks for Hugging Face OpenEnv (MCP tool actions,
    reset/step/state, the task check as the rubric)."""
    tasks = load_tasks(tasks_file, [env] if env else None, drill, None)
    if env:
        tasks = [t for t in tasks if t.env_name == env]
    names = sorted({t.env_name for t in tasks})
    if not tasks:
        raise AgentWorldError(f"no tasks on environment {env!r}")
    if len(names) > 1:
        raise AgentWorldError(f"tasks span {len(names)} environments ({', '.join(names)}): "
                              "one OpenEnv environment per directory, pick one with --env")
    specs = _specs(tasks, (), state.home)
    fps = sorted({t.env_fingerprint for t in tasks})
    if len(fps) > 1:  # tasks of several versions of one environment: keep the newest's
        newest = state.catalog().get_env(names[0]).fingerprint
        tasks = [t for t in tasks if t.env_fingerprint == newest] or tasks
        fps = sorted({t.env_fingerprint for t in tasks})
        if len(fps) > 1:
            raise AgentWorldError(f"tasks of {len(fps)} versions of {names[0]}; none is the "
                                  "catalog's current version")
    if limit is not None:
        tasks = tasks[:limit]
    unlocked = None
    with tempfile.TemporaryDirectory(prefix="agent-world-export-") as tmp:
        wheel = None
        if lock:
            try:
                wheel = arena_wheel(tmp)
            except OpenEnvLockError as exc:
                unlocked = str(exc)
        path = export_openenv(specs[fps[0]], tasks, out, port=port,
                              max_concurrent_envs=max_concurrent, max_steps=max_steps,
                              arena=wheel)
    if lock and unlocked is None:
        try:
            lock_export(path)
        except OpenEnvLockError as exc:
            unlocked = str(exc)
    console.print(f"exported {names[0]} with {len(tasks)} tasks to {path}; serve it with "
                  f"`cd {path} && python -m server.app --port {port}`")
    if unlocked is not None:
        # the export serves as it is; only OpenEnv's deployment check wants the lock
        err_console.print(f"[yellow]warning:[/] no uv.lock: {escape(unlocked)}", highlight=False)


OutArg = Annotated[Path, typer.Argument(help="Directory to write the export to.")]
TurnsOpt = Annotated[int, typer.Option(help="Tool-calling turns per episode.")]


@export_app.command("trl")
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
    tasks = load_tasks(tasks_file, env, drill, limit)
    path = export_trl(tasks, _specs(tasks, (), state.home), out, model=model,
                      group_size=group_size, max_turns=max_turns, kl_coef=kl)
    console.print(f"exported {len(tasks)} tasks to {path}; import {path / 'arena_trl.py'} "
                  f"or run {path / 'train_grpo.py'}")


@export_app.command("verifiers")
def export_verifiers_cmd(
    out: OutArg,
    max_turns: TurnsOpt = 8,
    tasks_file: TasksOpt = None, env: EnvOpt = None, drill: DrillOpt = None,
    limit: LimitOpt = None,
) -> None:
    """Export tasks as a verifiers environment package (load_environment)."""
    tasks = load_tasks(tasks_file, env, drill, limit)
    path = export_verifiers(tasks, _specs(tasks, (), state.home), out, max_turns=max_turns)
    console.print(f"exported {len(tasks)} tasks to {path}; `pip install {path}` (or put it on "
                  f"sys.path), then vf.load_environment({ENV_ID!r})")


__all__ = ["export_app"]
