"""`agent-world export openenv DIR`: one environment and its tasks as an OpenEnv environment
directory (openenv.yaml, pyproject.toml, uv.lock, server/app.py, client.py, run recipe)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agent_world.cli.common import console, err_console, state
from agent_world.cli.train import DrillOpt, LimitOpt, TasksOpt, load_tasks
from agent_world.errors import AgentWorldError


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
    from agent_world.integrations.openenv import (
        OpenEnvLockError,
        arena_wheel,
        export_openenv,
        lock_export,
    )
    from agent_world.training.api import _specs

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


__all__ = ["export_openenv_cmd"]
