"""Running graphs outside a LangGraph server: a persistent checkpointer in the arena home.

Threads are durable: every step is checkpointed synchronously (`durability="sync"`), so a
killed process resumes with `resume(...)` on the same thread id and re-runs only what had not
finished. `langgraph dev` / LangGraph Platform bring their own checkpointer instead.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import StateGraph

from agent_world.config import resolve_home


@contextmanager
def checkpointer(home: str | Path | None = None) -> Iterator[SqliteSaver]:
    path = resolve_home(home) / "checkpoints.sqlite"
    # several runs may share the file: wait for a writer instead of failing at once
    conn = sqlite3.connect(path, check_same_thread=False, timeout=60)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


def thread_config(thread_id: str | None, home: str | Path | None) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id or uuid.uuid4().hex[:12],
                             "home": str(resolve_home(home))}}


def stream(builder: StateGraph, inputs: Any, config: dict[str, Any], context: Any = None,
           stream_mode: str | list[str] = "updates") -> Iterator[Any]:
    """Run (inputs) or resume (None, or a `Command(resume=...)` after an interrupt) a graph on
    a thread, yielding each node's update; `context` is the run's context (graphs with a
    context schema). With a list of modes it yields LangGraph's `(mode, chunk)` pairs
    ("custom": what nodes report on the way). `final_state(builder, config)` gives the state
    and the nodes still to run."""
    config = traced(builder, config)
    with checkpointer(config["configurable"].get("home")) as saver:
        graph = builder.compile(checkpointer=saver, name=config["run_name"])
        try:
            yield from graph.stream(inputs, config, context=context, stream_mode=stream_mode,
                                    durability="sync")
        finally:
            flush_traces()


def graph_name(builder: StateGraph) -> str:
    """The graph's name: its module's (`agent_world.graphs.evolve` -> "evolve")."""
    module = getattr(getattr(builder, "state_schema", None), "__module__", "") or ""
    return module.rsplit(".", 1)[-1] if module.startswith("agent_world.") else "graph"


def traced(builder: StateGraph, config: dict[str, Any]) -> dict[str, Any]:
    """`config` with the run name, tags and metadata (graph, thread) a LangSmith trace of the
    run carries; the caller's own values win."""
    name = graph_name(builder)
    thread = config["configurable"].get("thread_id")
    return {**config, "run_name": config.get("run_name") or name,
            "tags": [*config.get("tags", []), f"graph:{name}"],
            "metadata": {"graph": name, "thread_id": thread, **config.get("metadata", {})}}


def flush_traces() -> None:
    """Send pending LangSmith traces before the process exits (no-op when tracing is off)."""
    from langsmith.utils import tracing_is_enabled

    if tracing_is_enabled():
        from langchain_core.tracers.langchain import wait_for_all_tracers

        wait_for_all_tracers()


def final_state(builder: StateGraph, config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    with checkpointer(config["configurable"].get("home")) as saver:
        snapshot = builder.compile(checkpointer=saver).get_state(config)
        return dict(snapshot.values), list(snapshot.next)


def invoke(builder: StateGraph, inputs: Any, thread_id: str | None = None,
           home: str | Path | None = None, context: Any = None) -> dict[str, Any]:
    """Run a graph to the end on a durable thread and return its final state; `inputs=None`
    resumes the thread where it stopped."""
    config = thread_config(thread_id, home)
    for _ in stream(builder, inputs, config, context=context):
        pass
    values, _ = final_state(builder, config)
    return {**values, "thread_id": config["configurable"]["thread_id"]}
