"""Helpers of the `evolve` graph's nodes that need no round state: where the thread's things are
(arena home, thread id, a round's checkpoint folder), where this run's stages put their work,
tasks loaded from the catalog, and progress forwarded to the graph's stream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from agent_world.envs.catalog import Catalog
from agent_world.errors import AgentWorldError
from agent_world.graphs import stages
from agent_world.graphs.context import arena_home
from agent_world.graphs.evolve_schema import EvolveContext
from agent_world.tasks.model import Task


def home_of(config: RunnableConfig) -> Path:
    return arena_home(config)


def thread_of(config: RunnableConfig) -> str:
    return str((config.get("configurable") or {}).get("thread_id") or "evolve")


def run_scale(runtime: Runtime[EvolveContext]) -> dict[str, Any]:
    """Where this run's stages put their per-source / per-environment work (its context's
    `workers` and `ray_address`, never the first round's settings)."""
    ctx = EvolveContext.of(runtime)
    return {"workers": ctx.workers, "ray_address": ctx.ray_address}


def load_tasks(cat: Catalog, ids: list[str]) -> list[Task]:
    rows = {r["id"]: r for r in cat.list_tasks()}
    missing = [i for i in ids if i not in rows]
    if missing:
        raise AgentWorldError(f"{len(missing)} task(s) missing from the catalog: {missing[:3]}")
    return [Task.model_validate(rows[i]["payload"]) for i in ids]


def stage_reporter(stage: str, tasks: int) -> stages.Progress:
    """Forward a stage's progress to the graph's custom stream (the CLI's progress bars); a
    no-op outside a streaming run."""
    try:
        write = get_stream_writer()
    except RuntimeError:
        return lambda _event: None
    return lambda event: write({"stage": stage, "tasks": tasks, **event})


def round_dir(config: RunnableConfig, n: int) -> Path:
    """Where round `n`'s training writes its checkpoints."""
    return home_of(config) / "policies" / thread_of(config).replace("/", "_") / f"round-{n}"
