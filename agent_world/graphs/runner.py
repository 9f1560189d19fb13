"""Running graphs outside a LangGraph server: a persistent checkpointer.

Threads are durable: every step is checkpointed synchronously (`durability="sync"`), so a
killed process resumes with `invoke(builder, None, thread_id=...)` on the same thread id and
re-runs only what had not finished. `langgraph dev` / LangGraph Platform bring their own
checkpointer instead. A stage graph run from a node of a pipeline graph (`invoke_within`) is
that node's subgraph: its checkpoints live in the pipeline's thread, so resuming the pipeline
resumes it too.

Where threads live (`checkpoint_url`): `$AGENT_WORLD_CHECKPOINT_URL` (`postgresql://...` or
`sqlite:///PATH`); else, when the catalog is on PostgreSQL (`$AGENT_WORLD_CATALOG_URL`), the
same database (LangGraph's `PostgresSaver` tables beside the catalog's), so every process of a
shared deployment sees every thread; else `<home>/checkpoints.sqlite`.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from langchain_core.runnables import RunnableConfig
from langchain_core.tracers.langchain import wait_for_all_tracers
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import StateGraph
from langsmith.utils import tracing_is_enabled

from agent_world.config import catalog_url, resolve_home
from agent_world.errors import AgentWorldError, CheckpointError

CHECKPOINT_URL_ENV = "AGENT_WORLD_CHECKPOINT_URL"


def checkpoint_url(home: str | Path | None = None) -> str:
    """Where the threads of `home` are checkpointed (see the module docstring)."""
    url = os.environ.get(CHECKPOINT_URL_ENV)
    if url:
        return url
    path = resolve_home(home)
    catalog = catalog_url(path)
    if catalog.startswith(("postgresql", "postgres:")):
        return catalog
    return f"sqlite:///{path / 'checkpoints.sqlite'}"


@contextmanager
def checkpointer(home: str | Path | None = None) -> Iterator[BaseCheckpointSaver]:
    url = checkpoint_url(home)
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        raise AgentWorldError(f"{CHECKPOINT_URL_ENV}: {url!r} is not a database URL "
                              "(postgresql://... or sqlite:///PATH)") from None
    if parsed.get_backend_name() == "postgresql":
        with _postgres_saver(parsed) as saver:
            yield saver
        return
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        raise AgentWorldError(f"{CHECKPOINT_URL_ENV}: {url!r}: checkpoints go to PostgreSQL "
                              "or a SQLite file")
    # several runs may share the file: wait for a writer instead of failing at once
    conn = sqlite3.connect(parsed.database, check_same_thread=False, timeout=60)
    try:
        yield _SqliteSaver(conn, parsed.database)
    finally:
        conn.close()


class _SqliteSaver(SqliteSaver):
    """LangGraph's SQLite saver whose failures (a full disk, an I/O error, a file turned
    read-only) are one `CheckpointError` naming the file, not a page of traceback from
    inside the graph loop."""

    def __init__(self, conn: sqlite3.Connection, path: str):
        super().__init__(conn)
        self.path = path

    @contextmanager
    def _reported(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise CheckpointError(f"checkpoints {self.path!r}: {exc}") from None

    def setup(self) -> None:
        with self._reported():
            super().setup()

    def get_tuple(self, config: Any) -> Any:
        with self._reported():
            return super().get_tuple(config)

    def put(self, *args: Any, **kwargs: Any) -> Any:
        with self._reported():
            return super().put(*args, **kwargs)

    def put_writes(self, *args: Any, **kwargs: Any) -> None:
        with self._reported():
            super().put_writes(*args, **kwargs)


@contextmanager
def _postgres_saver(url: sa.engine.URL) -> Iterator[BaseCheckpointSaver]:
    try:
        # imported here: the `postgres` extra is optional
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg import Connection
        from psycopg.rows import dict_row
    except ImportError:
        raise AgentWorldError("checkpoints on PostgreSQL need the `postgres` extra "
                              "(pip install 'agent-world[postgres]')") from None
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        conn = Connection.connect(dsn, autocommit=True, prepare_threshold=0,
                                  row_factory=dict_row)
    except Exception as exc:  # psycopg.OperationalError: unreachable, refused, bad password
        raise AgentWorldError(f"checkpoint database {url.render_as_string()!r}: "
                              f"{str(exc).strip().splitlines()[0]}") from None
    with conn:
        saver = PostgresSaver(conn)
        if not _migrated(conn, len(saver.MIGRATIONS)):
            _setup_once(conn, saver)
        yield saver


def _migrated(conn: Any, migrations: int) -> bool:
    """Whether LangGraph's checkpoint tables are there and up to date."""
    try:
        row = conn.execute("SELECT max(v) AS v FROM checkpoint_migrations").fetchone()
    except Exception:  # noqa: BLE001 - no table yet (autocommit: nothing to roll back)
        return False
    return row is not None and row["v"] == migrations - 1


def _setup_once(conn: Any, saver: Any) -> None:
    """Create or migrate the checkpoint tables, one process at a time. The lock is polled,
    never waited on: a migration builds indexes CONCURRENTLY, which waits for every open
    transaction, a blocked lock request included (a deadlock)."""
    key = zlib.crc32(b"agent_world.checkpoints")
    deadline = time.monotonic() + 120
    while not conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (key,)).fetchone()["ok"]:
        if time.monotonic() > deadline:
            raise AgentWorldError("checkpoint database: another process held the setup lock "
                                  "for 120 s")
        time.sleep(0.05)
    try:
        if not _migrated(conn, len(saver.MIGRATIONS)):
            saver.setup()
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (key,))


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
    """The graph's name, as langgraph.json gives it: its module's without the suffix
    (`agent_world.graphs.evolve_graph` -> "evolve", `graphs.agents.miner_agent` -> "miner")."""
    module = getattr(getattr(builder, "state_schema", None), "__module__", "") or ""
    if not module.startswith("agent_world."):
        return "graph"
    return module.rsplit(".", 1)[-1].removesuffix("_graph").removesuffix("_agent")


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
    if tracing_is_enabled():
        wait_for_all_tracers()


def final_state(builder: StateGraph, config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    with checkpointer(config["configurable"].get("home")) as saver:
        snapshot = builder.compile(checkpointer=saver).get_state(config)
        return dict(snapshot.values), list(snapshot.next)


def paused(builder: StateGraph, config: dict[str, Any]) -> list[Any]:
    """What the thread's pending interrupts asked (their values; [] when it is not paused).
    Resume such a thread with `Command(resume=answer)`: resuming with None asks again."""
    with checkpointer(config["configurable"].get("home")) as saver:
        snapshot = builder.compile(checkpointer=saver).get_state(config)
        return [i.value for i in snapshot.interrupts]


def invoke(builder: StateGraph, inputs: Any, thread_id: str | None = None,
           home: str | Path | None = None, context: Any = None,
           metadata: dict[str, Any] | None = None,
           tags: list[str] | None = None) -> dict[str, Any]:
    """Run a graph to the end on a durable thread and return its final state; `inputs=None`
    resumes the thread where it stopped. `metadata` and `tags` go on the run's trace."""
    config = {**thread_config(thread_id, home), "metadata": dict(metadata or {}),
              "tags": list(tags or [])}
    for _ in stream(builder, inputs, config, context=context):
        pass
    values, _ = final_state(builder, config)
    return {**values, "thread_id": config["configurable"]["thread_id"]}


def invoke_within(builder: StateGraph, inputs: Any, within: RunnableConfig, context: Any = None,
                  name: str = "") -> dict[str, Any]:
    """Run a graph as a subgraph of the node whose config is `within` and return its output.
    It inherits the parent's checkpointer, so its steps are checkpointed in the parent's
    thread under the node's namespace: a killed parent, resumed, resumes it where it stopped
    (a finished one hands back its output; finished Send branches are not redone). Several in
    one node are told apart by their order. `name`: the run's name on a trace."""
    graph = builder.compile(name=name or graph_name(builder))
    return dict(graph.invoke(inputs, within, context=context))
