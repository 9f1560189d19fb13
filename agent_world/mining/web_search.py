"""A web-search tool for the miner, taken from any MCP server that offers one.

    AGENT_WORLD_WEB_SEARCH='mcp:npx -y some-search-mcp#web_search'   (or --web-search on the CLI)
    AGENT_WORLD_WEB_SEARCH='mcp-url:http://127.0.0.1:9000/mcp#search'

The part after `#` names the tool (default: the first tool whose name contains "search"); its
first required string argument receives the query. One persistent MCP session serves every
query (a new stdio process per query would cost ~0.75 s each). Results come back as text
snippets: a JSON list in the tool's text output is split into its items.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import shlex
import threading
from collections.abc import Callable
from typing import Any

from langchain_mcp_adapters.client import MultiServerMCPClient

from agent_world.errors import SourceError
from agent_world.mining.sources import parse_source
from agent_world.mining.sources.mcp import resolve_command

ENV_VAR = "AGENT_WORLD_WEB_SEARCH"
SearchFn = Callable[[str], list[str]]


def configured_search_spec(spec: str | None = None) -> str | None:
    return spec or os.environ.get(ENV_VAR) or None


class MCPSearch:
    """`search(query) -> list[str]` over one MCP tool; use as a context manager."""

    def __init__(self, spec: str, timeout: float = 30.0):
        target, _, tool = spec.partition("#")
        ref = parse_source(target)
        if ref.kind == "mcp":
            argv = shlex.split(ref.reference)
            executable = resolve_command(argv[0])
            if executable is None:
                raise SourceError(f"web search {spec!r}: command {argv[0]!r} not found")
            self.connection: dict[str, Any] = {"transport": "stdio", "command": executable,
                                               "args": argv[1:]}
        elif ref.kind == "mcp-url":
            self.connection = {"transport": "streamable_http", "url": ref.reference}
        else:
            raise SourceError(f"web search {spec!r}: expected mcp:CMD#tool or mcp-url:URL#tool")
        self.spec, self.tool, self.timeout = spec, tool or None, timeout
        self.argument: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._ready = concurrent.futures.Future[None]()
        self._thread: threading.Thread | None = None

    # The session lives in one task on a private event loop: anyio scopes must be entered and
    # left by the same task, so queries are handed to that task rather than run elsewhere.
    async def _serve(self) -> None:
        self._queue = asyncio.Queue()
        try:
            client = MultiServerMCPClient({"search": self.connection})
            async with client.session("search") as session:
                tools = (await session.list_tools()).tools
                chosen = next((t for t in tools if t.name == self.tool), None) if self.tool \
                    else next((t for t in tools if "search" in t.name.lower()), None)
                if chosen is None:  # reported, not raised: anyio would wrap it in a group
                    names = ", ".join(t.name for t in tools)
                    self._ready.set_exception(SourceError(
                        f"web search {self.spec!r}: no tool {self.tool or '*search*'!r} "
                        f"(server has: {names})"))
                    return
                self.tool = chosen.name
                props = chosen.inputSchema.get("properties", {})
                required = chosen.inputSchema.get("required", list(props))
                self.argument = next((a for a in required
                                      if props.get(a, {}).get("type", "string") == "string"),
                                     "query")
                self._ready.set_result(None)
                while (item := await self._queue.get()) is not None:
                    query, future = item
                    try:
                        result = await session.call_tool(self.tool, {self.argument: query})
                        future.set_result(_snippets(result))
                    except Exception as exc:
                        future.set_exception(exc)
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc if isinstance(exc, Exception)
                                          else SourceError(str(exc)))
            if not isinstance(exc, Exception):
                raise

    def __enter__(self) -> MCPSearch:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_until_complete,
                                        args=(self._serve(),), daemon=True)
        self._thread.start()
        try:
            self._ready.result(self.timeout)
        except concurrent.futures.TimeoutError:
            self.close()
            raise SourceError(f"web search {self.spec!r}: no answer within "
                              f"{self.timeout:g} s") from None
        except SourceError:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise SourceError(f"web search {self.spec!r}: {exc}") from exc
        return self

    def __call__(self, query: str) -> list[str]:
        if self._loop is None or self._queue is None or not self._ready.done():
            raise SourceError("web search is not open (use it as a context manager)")
        future: concurrent.futures.Future[list[str]] = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (query, future))
        return future.result(self.timeout)

    def close(self) -> None:
        if self._loop is not None and self._thread is not None:
            if self._queue is not None:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
            self._thread.join(10)
            if not self._thread.is_alive():
                self._loop.close()
        self._loop = self._thread = None

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _snippets(result: Any) -> list[str]:
    out: list[str] = []
    for block in getattr(result, "content", []) or []:
        text = getattr(block, "text", None)
        if not text:
            continue
        try:
            data = json.loads(text)
        except ValueError:
            out.append(text)
            continue
        items = data if isinstance(data, list) else [data]
        out.extend(i if isinstance(i, str) else json.dumps(i) for i in items)
    return out
