"""Serve any environment as an MCP server (FastMCP), over stdio or streamable HTTP.

Every tool of the spec appears in `tools/list` with its exact JSON schema. Episodes:

* each MCP session gets its own isolated episode (a fresh database copy), so two clients never
  see each other's writes — keep one session open for a whole episode (`client.session(...)`);
* a client that opens a new session per call (langchain-mcp-adapters' default `get_tools()`)
  names its episode instead: `…/mcp?episode=ID` (or the `X-Episode-Id` header); every call
  with that id, whatever its session, lands in the same episode;
* two extra tools act on the caller's episode: `episode_reset` (back to the seed state) and
  `episode_diff` (what changed since the last reset).

Tool calls run in worker threads on a pool of tool workers (`workers`), so a slow call in one
session never holds up the others. Error observations come back as MCP tool errors
(`isError: true`) whose text names the kind. `serve` stops cleanly on SIGTERM and SIGINT
(episode files and workers removed).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Literal

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool

from agent_world.envs.episode import EnvRuntime, Episode
from agent_world.envs.spec import EnvSpec

RESET_TOOL, DIFF_TOOL = "episode_reset", "episode_diff"
MAX_NAMED_EPISODES = 256  # named episodes kept open; the least recently used is closed first


class EnvironmentServer(FastMCP):
    """A FastMCP server whose tools are an environment's tools, each session (or named
    episode) on its own episode."""

    def __init__(self, spec: EnvSpec, runtime: EnvRuntime | None = None, seed: int = 0,
                 workers: int = 2, **settings: Any):
        instructions = (f"{spec.theme.name}: {spec.theme.description}".strip(": ")
                        or spec.name)
        super().__init__(name=f"agent-world-{spec.name}", instructions=instructions, **settings)
        self.spec = spec
        self.seed = seed
        self._own_runtime = runtime is None
        self.runtime = runtime or EnvRuntime(workers=max(1, workers))
        # one episode per live MCP session; a session that goes away takes its episode along
        self._episodes: weakref.WeakKeyDictionary[Any, Episode] = weakref.WeakKeyDictionary()
        self._named: OrderedDict[str, Episode] = OrderedDict()
        self._local: Episode | None = None  # calls made outside any MCP request
        self._lock = threading.Lock()  # the episode maps
        self._step_locks: dict[int, threading.Lock] = {}  # by id(episode)
        names = {t.name for t in spec.tools}
        self._extra = [n for n in (RESET_TOOL, DIFF_TOOL) if n not in names]

    async def list_tools(self) -> list[MCPTool]:
        tools = [MCPTool(name=t.name, description=t.description, inputSchema=t.parameters,
                         annotations=ToolAnnotations(readOnlyHint=not t.mutates))
                 for t in self.spec.tools]
        empty = {"type": "object", "properties": {}, "additionalProperties": False}
        if RESET_TOOL in self._extra:
            tools.append(MCPTool(name=RESET_TOOL, inputSchema=empty,
                                 description="Reset your episode's database to its seed state."))
        if DIFF_TOOL in self._extra:
            tools.append(MCPTool(name=DIFF_TOOL, inputSchema=empty,
                                 annotations=ToolAnnotations(readOnlyHint=True),
                                 description="What your episode changed since its last reset "
                                             "(inserted, updated, deleted rows per table)."))
        return tools

    def _caller(self) -> tuple[str | None, Any]:
        """(episode id the client named, MCP session) of the current request."""
        try:
            rc = self.get_context().request_context
        except (ValueError, LookupError):  # called outside a request (tests, embedding)
            return None, None
        request = getattr(rc, "request", None)  # the HTTP request, for streamable HTTP
        named = None
        if request is not None:
            named = (request.query_params.get("episode")
                     or request.headers.get("x-episode-id")) or None
        return named, rc.session

    def _episode(self) -> Episode:
        named, session = self._caller()
        with self._lock:
            if named is not None:
                ep = self._named.get(named)
                if ep is None:
                    ep = self.runtime.open(self.spec, seed=self.seed)
                    self._named[named] = ep
                    while len(self._named) > MAX_NAMED_EPISODES:
                        self._named.popitem(last=False)[1].close()
                self._named.move_to_end(named)
                return ep
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

    def _run(self, episode: Episode, name: str, arguments: dict[str, Any]) -> str:
        """One call on one episode at a time (a named episode may be called from several
        sessions at once); different episodes run in parallel."""
        with self._lock:
            lock = self._step_locks.setdefault(id(episode), threading.Lock())
        with lock:
            if name == RESET_TOOL and RESET_TOOL in self._extra:
                episode.reset()
                return json.dumps({"ok": True, "state_hash": episode.state_hash()})
            if name == DIFF_TOOL and DIFF_TOOL in self._extra:
                diff = episode.diff()
                return json.dumps({"counts": diff.counts(), "empty": diff.empty})
            obs = episode.step(name, arguments)
        if not obs.ok:
            raise ToolError(obs.to_text())
        return obs.to_text()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Sequence[TextContent]:
        episode = self._episode()
        # The worker call blocks; keep the event loop free for other sessions.
        text = await anyio.to_thread.run_sync(self._run, episode, name, arguments or {})
        return [TextContent(type="text", text=text)]

    def close(self) -> None:
        with self._lock:
            episodes = [*self._episodes.values(), *self._named.values(),
                        *([self._local] if self._local else [])]
            self._episodes.clear()
            self._named.clear()
            self._local = None
        for ep in episodes:
            ep.close()
        if self._own_runtime:
            self.runtime.close()


def serve(spec: EnvSpec, transport: Literal["stdio", "http"] = "stdio", host: str = "127.0.0.1",
          port: int = 8765, seed: int = 0, workers: int = 2) -> None:
    """Run the server until the client disconnects (stdio) or the process is stopped (http).
    SIGTERM and SIGINT stop it cleanly: episodes, workers and their files are removed."""
    server = EnvironmentServer(spec, seed=seed, host=host, port=port, workers=workers)

    def stop(signum: int, _frame: Any) -> None:
        # stdio: the thread reading stdin cannot be interrupted, so the process ends here,
        # after cleaning up. HTTP: uvicorn shuts down first, then hands the signal on to us.
        server.close()
        print(f"stopped ({signal.Signals(signum).name})", file=sys.stderr, flush=True)
        os._exit(128 + signum)

    main = threading.current_thread() is threading.main_thread()  # where handlers can be set
    where = f"http://{host}:{port}/mcp" if transport == "http" else "stdio"
    print(f"serving {spec.name} ({len(spec.tools)} tools) over MCP at {where}; episodes in "
          f"{server.runtime.workdir}; Ctrl-C stops", file=sys.stderr, flush=True)
    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)} if main \
        else {}
    try:
        server.run(transport="stdio" if transport == "stdio" else "streamable-http")
    finally:
        server.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
