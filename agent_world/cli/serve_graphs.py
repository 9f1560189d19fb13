"""`agent-world serve-graphs`: the arena's graphs and agents as MCP tools."""

from __future__ import annotations

from typing import Annotated

import typer

from agent_world.cli.common import state
from agent_world.graphs.mcp_tools import serve
from agent_world.serving import TOKEN_ENV


def serve_graphs(
    transport: Annotated[str, typer.Option(help="stdio or http (streamable HTTP).")] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8766,
    graph: Annotated[list[str] | None, typer.Option(
        "--graph", help="Only this graph (repeatable); default: every graph.")] = None,
    token: Annotated[str | None, typer.Option(
        envvar=TOKEN_ENV, show_default=False,
        help="HTTP: the bearer token clients must send (default: a new one, printed).")] = None,
    allow_commands: Annotated[bool, typer.Option(
        "--allow-commands", help="HTTP: run the local commands clients name (mcp: sources "
        "and web search). Dangerous: any client with the token runs any command as your "
        "user.")] = False,
    allow_client_paths: Annotated[bool, typer.Option(
        "--allow-client-paths", help="HTTP: take the paths clients name (another arena home, "
        "files to mine, checkpoint directories). Dangerous: any client with the token reads "
        "and writes files as your user.")] = False,
) -> None:
    """Serve the arena's graphs and agents (mine, build, synthesize, evolve, ...) as MCP tools;
    each call runs checkpointed on a durable thread in the arena home. Over HTTP every request
    needs the bearer token, and clients may name no command or path unless allowed."""
    if transport not in ("stdio", "http"):
        raise typer.BadParameter("must be 'stdio' or 'http'", param_hint="--transport")
    serve(state.resolve(), transport=transport, host=host, port=port, graphs=graph,  # type: ignore[arg-type]
          token=token, allow_commands=allow_commands, allow_client_paths=allow_client_paths)


__all__ = ["serve_graphs"]
