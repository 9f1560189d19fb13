"""Serve any environment as an MCP server (FastMCP), over stdio or streamable HTTP.

Every tool of the spec appears in `tools/list` with its exact JSON schema. Episodes:

* each MCP session gets its own isolated episode (a fresh database copy), so two clients never
  see each other's writes — keep one session open for a whole episode (`client.session(...)`);
* a client that opens a new session per call (langchain-mcp-adapters' default `get_tools()`)
  opens a named episode over HTTP with the extra tool `episode_open`, which returns its id,
  and names it in every call: `…/mcp?episode=ID` (or the `X-Episode-Id` header); every call
  with that id, whatever its session, lands in the same episode. The server makes the ids
  (random, signed with a key of this server), so a client reaches only the episodes it was
  given: a made-up or altered id is refused. At most MAX_NAMED_EPISODES stay open; opening
  one more closes the least recently used, and a call naming a closed one gets an error saying
  so (never a fresh episode in its place);
* two extra tools act on the caller's episode: `episode_reset` (back to the seed state) and
  `episode_diff` (what changed since the last reset).

Results are structured: every environment tool declares an `outputSchema` (an object whose
`result` is the tool's JSON result, the wrapping FastMCP uses for tools that return a value),
and a call returns it as `structuredContent` beside the same JSON as text, so a client reads
values without parsing text. The server logs warnings only (MCP's default logs a line per
request, which drowns a stdio client's stderr).

Tool calls run in worker threads on a pool of tool workers (`workers`), so a slow call in one
session never holds up the others. Error observations come back as MCP tool errors
(`isError: true`) whose text names the kind. Over HTTP every request needs the server's bearer
token (`agent_world.serving`). `serve` stops cleanly on SIGTERM and SIGINT (episode files and
workers removed).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
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
from agent_world.serving import announce_token, resolve_token, serve_http

OPEN_TOOL, RESET_TOOL, DIFF_TOOL = "episode_open", "episode_reset", "episode_diff"
# what every tool returns in structuredContent: its JSON result under "result"
RESULT_SCHEMA = {"type": "object", "properties": {"result": {
    "description": "The tool's result (any JSON value: object, list, text, number, null)."}},
    "required": ["result"]}
MAX_NAMED_EPISODES = 256  # named episodes kept open; the least recently used is closed first


class EnvironmentServer(FastMCP):
    """A FastMCP server whose tools are an environment's tools, each session (or named
    episode) on its own episode."""

    NAMED_EPISODES = True  # offer episode_open (a server bound to one episode does not)
    OUTPUT_SCHEMA: dict[str, Any] | None = RESULT_SCHEMA  # declared by every environment tool

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
        self._key = secrets.token_bytes(32)  # signs the episode ids this server hands out
        names = {t.name for t in spec.tools}
        self._extra = [n for n in (OPEN_TOOL, RESET_TOOL, DIFF_TOOL) if n not in names
                       and (n != OPEN_TOOL or self.NAMED_EPISODES)]

    async def list_tools(self) -> list[MCPTool]:
        tools = [MCPTool(name=t.name, description=t.description, inputSchema=t.parameters,
                         outputSchema=self.OUTPUT_SCHEMA,
                         annotations=ToolAnnotations(readOnlyHint=not t.mutates))
                 for t in self.spec.tools]
        empty = {"type": "object", "properties": {}, "additionalProperties": False}
        if OPEN_TOOL in self._extra:
            tools.append(MCPTool(name=OPEN_TOOL, inputSchema=empty, description=(
                "HTTP clients that open a session per call: open a fresh episode and get its "
                "id; name it in every call (?episode=ID in the URL or the X-Episode-Id "
                "header). Only who holds the id reaches the episode.")))
        if RESET_TOOL in self._extra:
            tools.append(MCPTool(name=RESET_TOOL, inputSchema=empty,
                                 description="Reset your episode's database to its seed state."))
        if DIFF_TOOL in self._extra:
            tools.append(MCPTool(name=DIFF_TOOL, inputSchema=empty,
                                 annotations=ToolAnnotations(readOnlyHint=True),
                                 description="What your episode changed since its last reset "
                                             "(inserted, updated, deleted rows per table)."))
        return tools

    def _caller(self) -> tuple[str | None, Any, bool]:
        """(episode id the client named, MCP session, whether over HTTP) of the current
        request."""
        try:
            rc = self.get_context().request_context
        except (ValueError, LookupError):  # called outside a request (tests, embedding)
            return None, None, False
        request = getattr(rc, "request", None)  # the HTTP request, for streamable HTTP
        named = None
        if request is not None:
            named = (request.query_params.get("episode")
                     or request.headers.get("x-episode-id")) or None
        return named, rc.session, request is not None

    def _signature(self, nonce: str) -> str:
        return hmac.new(self._key, nonce.encode(), "sha256").hexdigest()[:32]

    def _minted(self, name: str) -> bool:
        """Whether this server made the episode id `name` (open or closed since)."""
        nonce, dot, signature = name.rpartition(".")
        return bool(dot) and hmac.compare_digest(signature.encode(),
                                                 self._signature(nonce).encode())

    def _step_lock(self, episode: Episode) -> threading.Lock:
        with self._lock:
            return self._step_locks.setdefault(id(episode), threading.Lock())

    def _open_named(self) -> str:
        """A new named episode's id; the least recently used ones beyond MAX_NAMED_EPISODES
        are closed (after any call running on them)."""
        nonce = secrets.token_urlsafe(18)
        name = f"{nonce}.{self._signature(nonce)}"
        episode = self.runtime.open(self.spec, seed=self.seed)
        with self._lock:
            self._named[name] = episode
            evicted = [self._named.popitem(last=False)[1]
                       for _ in range(len(self._named) - MAX_NAMED_EPISODES)]
        for old in evicted:
            with self._step_lock(old):
                old.close()
            with self._lock:
                self._step_locks.pop(id(old), None)
        return name

    def _episode(self) -> Episode:
        named, session, _ = self._caller()
        with self._lock:
            if named is not None:
                ep = self._named.get(named)
                if ep is not None:
                    self._named.move_to_end(named)
                    return ep
                if self._minted(named):
                    raise ToolError(f"episode {named!r} was closed (least recently used of "
                                    f"{MAX_NAMED_EPISODES} open); open a new one with "
                                    f"{OPEN_TOOL}")
                raise ToolError(f"episode {named!r} is not an episode this server opened: "
                                f"call {OPEN_TOOL} for one, then name its id (?episode=ID "
                                "or the X-Episode-Id header)")
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

    def _run(self, episode: Episode, name: str, arguments: dict[str, Any]
             ) -> tuple[str, dict[str, Any] | None]:
        """One call on one episode at a time (a named episode may be called from several
        sessions at once); different episodes run in parallel. The result as text, and as
        structured content for an environment tool."""
        with self._step_lock(episode):
            if name == RESET_TOOL and RESET_TOOL in self._extra:
                episode.reset()
                return json.dumps({"ok": True, "state_hash": episode.state_hash()}), None
            if name == DIFF_TOOL and DIFF_TOOL in self._extra:
                diff = episode.diff()
                return json.dumps({"counts": diff.counts(), "empty": diff.empty}), None
            obs = episode.step(name, arguments)
        if not obs.ok:
            raise ToolError(obs.to_text())
        # the engine's results are JSON already (dates as text): round-trip for plain types
        return obs.to_text(), {"result": json.loads(json.dumps(obs.result, default=str))}

    async def call_tool(self, name: str, arguments: dict[str, Any]
                        ) -> Sequence[TextContent] | tuple[list[TextContent], dict[str, Any]]:
        if name == OPEN_TOOL and OPEN_TOOL in self._extra:
            if not self._caller()[2]:
                raise ToolError(f"{OPEN_TOOL} works only over HTTP: this session is one "
                                "client and has its own episode already")
            opened = await anyio.to_thread.run_sync(self._open_named)
            return [TextContent(type="text", text=json.dumps({"episode": opened}))]
        episode = self._episode()
        # The worker call blocks; keep the event loop free for other sessions.
        text, structured = await anyio.to_thread.run_sync(self._run, episode, name,
                                                          arguments or {})
        content = [TextContent(type="text", text=text)]
        return content if structured is None else (content, structured)

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
          port: int = 8765, seed: int = 0, workers: int = 2, token: str | None = None) -> None:
    """Run the server until the client disconnects (stdio) or the process is stopped (http:
    every request needs the bearer token, `token` or a new one, printed). SIGTERM and SIGINT
    stop it cleanly: episodes, workers and their files are removed."""
    token, made = (None, False) if transport == "stdio" else resolve_token(token)
    server = EnvironmentServer(spec, seed=seed, host=host, port=port, workers=workers,
                               log_level="WARNING")

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
    if token is not None:
        announce_token(token, made)
    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)} if main \
        else {}
    try:
        if token is None:
            server.run(transport="stdio")
        else:
            serve_http(server, token)
    finally:
        server.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
