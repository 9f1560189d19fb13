"""`agent-world serve-graphs`: the arena's graphs and agents as MCP tools."""

from __future__ import annotations

from typing import Annotated

import typer

from agent_world.cli.common import state


def serve_graphs(
    transport: Annotated[str, typer.Option(help="stdio or http (streamable HTTP).")] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8766,
    graph: Annotated[list[str] | None, typer.Option(
        "--graph", help="Only this graph (repeatable); default: every graph.")] = None,
) -> None:
    """Serve the arena's graphs and agents (mine, build, synthesize, evolve, ...) as MCP tools;
    each call runs checkpointed on a durable thread in the arena home."""
    from agent_world.graphs.mcp_tools import serve

    if transport not in ("stdio", "http"):
        raise typer.BadParameter("must be 'stdio' or 'http'", param_hint="--transport")
    serve(state.resolve(), transport=transport, host=host, port=port, graphs=graph)  # type: ignore[arg-type]


__all__ = ["serve_graphs"]
