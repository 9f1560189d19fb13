"""Serve any environment as an MCP server (FastMCP), over stdio or streamable HTTP.

Every tool of the spec appears in `tools/list` with its exact JSON schema; each MCP session gets
its own isolated episode (a fresh database copy), so two clients never see each other's writes.
Error observations come back as MCP tool errors (`isError: true`) whose text names the kind.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any, Literal

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool

from agent_world.envs.episode import EnvRuntime, Episode
from agent_world.envs.spec import EnvSpec


class EnvironmentServer(FastMCP):
    """A FastMCP server whose tools are an environment's tools, each session on its own episode."""

    def __init__(self, spec: EnvSpec, runtime: EnvRuntime | None = None, seed: int = 0,
                 **settings: Any):
        instructions = (f"{spec.theme.name}: {spec.theme.description}".strip(": ")
                        or spec.name)
        super().__init__(name=f"agent-world-{spec.name}", instructions=instructions, **settings)
        self.spec = spec
        self.seed = seed
        self._own_runtime = runtime is None
        self.runtime = runtime or EnvRuntime()
        # one episode per live MCP session; a session that goes away takes its episode along
        self._episodes: weakref.WeakKeyDictionary[Any, Episode] = weakref.WeakKeyDictionary()
        self._local: Episode | None = None  # calls made outside any MCP request

    async def list_tools(self) -> list[MCPTool]:
        return [MCPTool(name=t.name, description=t.description, inputSchema=t.arguments_schema,
                        annotations=ToolAnnotations(readOnlyHint=not t.mutates))
                for t in self.spec.tools]

    def _episode(self) -> Episode:
        try:
            session = self.get_context().session
        except (ValueError, LookupError):  # called outside a request (tests, embedding)
            session = None
        if session is None:
            if self._local is None:
                self._local = self.runtime.open(self.spec, seed=self.seed)
            return self._local
        ep = self._episodes.get(session)
        if ep is None:
            ep = self.runtime.open(self.spec, seed=self.seed)
            self._episodes[session] = ep
            weakref.finalize(session, ep.close)
        return ep

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Sequence[TextContent]:
        episode = self._episode()
        # The worker call blocks; keep the event loop free for other sessions.
        obs = await anyio.to_thread.run_sync(episode.step, name, arguments or {})
        if not obs.ok:
            raise ToolError(obs.to_text())
        return [TextContent(type="text", text=obs.to_text())]

    def close(self) -> None:
        for ep in [*self._episodes.values(), *([self._local] if self._local else [])]:
            ep.close()
        self._episodes.clear()
        self._local = None
        if self._own_runtime:
            self.runtime.close()


def serve(spec: EnvSpec, transport: Literal["stdio", "http"] = "stdio", host: str = "127.0.0.1",
          port: int = 8765, seed: int = 0) -> None:
    """Run the server until the client disconnects (stdio) or the process is stopped (http)."""
    server = EnvironmentServer(spec, seed=seed, host=host, port=port)
    try:
        server.run(transport="stdio" if transport == "stdio" else "streamable-http")
    finally:
        server.close()
