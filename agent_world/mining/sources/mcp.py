"""Live MCP servers as mining sources: start (or connect to) a server, read its `tools/list`.

Two transports:

* stdio: a command line (``mcp-server-time``, ``npx -y @modelcontextprotocol/server-memory``);
  the server runs as a child process for the duration of the read.
* streamable HTTP: a URL (``http://127.0.0.1:8000/mcp``).

Both go through ``langchain-mcp-adapters`` (``MultiServerMCPClient`` with one persistent
session), so the server answers ``initialize`` (name, version, instructions) and ``tools/list``
(names, descriptions, input/output schemas, annotations) on the same connection. The whole read
is bounded by one timeout; every failure becomes a :class:`~agent_world.errors.SourceError`
that names the server and says what went wrong (including the tail of the server's stderr for
stdio servers).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

import httpx
from langchain_mcp_adapters.client import MultiServerMCPClient
from mcp.client.stdio import get_default_environment

from agent_world.errors import SourceError
from agent_world.mining.offline.naming import slug
from agent_world.mining.sources.base import SourceDocument, ToolDescription

__all__ = [
    "DEFAULT_TIMEOUT",
    "aread_mcp",
    "aread_mcp_url",
    "mcp_source_name",
    "read_mcp",
    "read_mcp_url",
    "resolve_command",
]

DEFAULT_TIMEOUT = 30.0  # seconds for start + initialize + tools/list
MAX_HTTP_BYTES = 32 * 1024 * 1024  # all a streamable-HTTP server may send during one read
_SH = shutil.which("sh")  # looked up once, at import, never on an event loop
_MAX_PAGES = 100  # tools/list pagination guard
_STDERR_TAIL = 1500  # characters of server stderr quoted in an error

T = TypeVar("T")


# --------------------------------------------------------------------------- names & commands


def mcp_source_name(reference: str | Sequence[str]) -> str:
    """A short human name for a server: ``mcp-server-time`` -> ``time``,
    ``npx -y @modelcontextprotocol/server-memory`` -> ``memory``,
    ``http://host:8000/mcp`` -> ``host-8000``."""
    if isinstance(reference, str) and re.match(r"^[a-z][a-z0-9+.-]*://", reference, re.I):
        parsed = urlparse(reference)
        base = parsed.hostname or "mcp"
        if parsed.port:
            base = f"{base}-{parsed.port}"
        return slug(base) or "mcp"
    argv = _split(reference) if isinstance(reference, str) else list(reference)
    # the package/script that names the server: skip launchers and their flags
    launchers = {"npx", "uvx", "uv", "pipx", "python", "python3", "node", "bunx", "run", "-m"}
    candidate = ""
    skip_next = False
    for tok in argv:
        if skip_next:  # the value of -c / --from / ...: inline code, not a name
            skip_next = False
            continue
        base = Path(tok).name if "/" in tok and not tok.startswith("@") else tok
        if tok in ("-c", "--from", "--with", "-p", "--package", "--python"):
            skip_next = True
            continue
        if tok.startswith("-") or base in launchers or base.startswith("python"):
            continue
        candidate = tok
        break
    if not candidate:
        candidate = argv[0] if argv else "mcp"
    if candidate.startswith("@"):  # npm scope: @scope/server-memory@1.2
        candidate = candidate.split("/", 1)[-1]
    candidate = Path(candidate).name
    candidate = re.sub(r"@[^@]*$", "", candidate) or candidate  # version pin
    candidate = re.sub(r"\.(py|js|mjs|ts)$", "", candidate)
    for prefix in ("mcp-server-", "mcp_server_", "server-", "mcp-"):
        if candidate.lower().startswith(prefix) and len(candidate) > len(prefix):
            candidate = candidate[len(prefix) :]
            break
    for suffix in ("-mcp-server", "-mcp", "_mcp"):
        if candidate.lower().endswith(suffix) and len(candidate) > len(suffix):
            candidate = candidate[: -len(suffix)]
            break
    return slug(candidate) or "mcp"


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError as exc:
        raise SourceError(f"MCP server command {command!r} cannot be parsed: {exc}") from exc


def resolve_command(executable: str, env: dict[str, str] | None = None) -> str | None:
    """Full path of an executable: as given when it contains a slash, else from PATH, else
    from this interpreter's bin directory (the venv, where the bundled servers live)."""
    if os.sep in executable or (os.altsep and os.altsep in executable):
        path = Path(executable).expanduser()
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    search_path = (env or {}).get("PATH") or os.environ.get("PATH")
    found = shutil.which(executable, path=search_path)
    if found:
        return found
    local = Path(sys.executable).parent / executable
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return None


# --------------------------------------------------------------------------- conversions


def _tool_description(tool: Any) -> ToolDescription:
    annotations = getattr(tool, "annotations", None)
    read_only = getattr(annotations, "readOnlyHint", None) if annotations is not None else None
    tags: list[str] = []
    if annotations is not None:
        for attr, tag in (
            ("readOnlyHint", "read-only"),
            ("destructiveHint", "destructive"),
            ("idempotentHint", "idempotent"),
            ("openWorldHint", "open-world"),
        ):
            if getattr(annotations, attr, None) is True:
                tags.append(tag)
    description = (getattr(tool, "description", None) or "").strip()
    title = getattr(tool, "title", None) or getattr(annotations, "title", None)
    if not description and title:
        description = str(title)
    return ToolDescription(
        name=tool.name,
        description=description,
        input_schema=dict(getattr(tool, "inputSchema", None) or {}),
        output_schema=dict(tool.outputSchema) if getattr(tool, "outputSchema", None) else None,
        read_only=read_only if isinstance(read_only, bool) else None,
        tags=tags,
    )


def _capabilities(init: Any) -> list[str]:
    caps = getattr(init, "capabilities", None)
    if caps is None:
        return []
    return [
        c
        for c in ("tools", "resources", "prompts", "logging", "completions")
        if getattr(caps, c, None) is not None
    ]


def _document(
    *, name: str, kind: str, reference: str, init: Any, tools: list[Any], elapsed: float
) -> SourceDocument:
    info = getattr(init, "serverInfo", None)
    server_name = getattr(info, "name", "") or ""
    server_title = getattr(info, "title", None) or ""
    instructions = (getattr(init, "instructions", None) or "").strip()
    metadata: dict[str, Any] = {
        "server_name": server_name,
        "server_version": getattr(info, "version", "") or "",
        "protocol_version": str(getattr(init, "protocolVersion", "") or ""),
        "capabilities": _capabilities(init),
        "tool_count": len(tools),
        "elapsed_s": round(elapsed, 3),
    }
    if instructions:
        metadata["instructions"] = instructions
    return SourceDocument(
        name=name,
        kind=kind,  # type: ignore[arg-type]
        reference=reference,
        title=server_title or server_name or name,
        description=instructions.split("\n\n", 1)[0] if instructions else "",
        tools=[_tool_description(t) for t in tools],
        metadata=metadata,
    )


# --------------------------------------------------------------------------- the read


def _describe(exc: BaseException) -> str:
    """One line for an exception, unwrapping the exception groups anyio raises."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _read_session(
    *, name: str, connection: dict[str, Any], timeout: float
) -> tuple[Any, list[Any], float]:
    client = MultiServerMCPClient({name: connection})  # type: ignore[dict-item]
    start = time.perf_counter()
    async with asyncio.timeout(timeout):
        async with client.session(name, auto_initialize=False) as session:
            init = await session.initialize()
            tools: list[Any] = []
            cursor: str | None = None
            for _ in range(_MAX_PAGES):
                result = await session.list_tools(cursor) if cursor else await session.list_tools()
                tools.extend(result.tools)
                cursor = result.nextCursor
                if not cursor:
                    break
            elapsed = time.perf_counter() - start
    return init, tools, elapsed


async def aread_mcp(
    command: str | Sequence[str],
    *,
    name: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> SourceDocument:
    """Start an MCP server over stdio, read ``initialize`` + ``tools/list``, stop it.

    ``command`` is a command line (split with shell rules) or an argv list. ``env`` adds to the
    MCP SDK's default minimal environment. Raises SourceError when the command is missing, the
    server exits or does not answer within ``timeout`` seconds.
    """
    argv = _split(command) if isinstance(command, str) else [str(a) for a in command]
    reference = command if isinstance(command, str) else shlex.join(argv)
    if not argv:
        raise SourceError("MCP server command is empty")
    name = name or mcp_source_name(argv)
    label = f"MCP server {name!r} ({reference})"

    full_env: dict[str, str] | None = None
    if env:
        full_env = {**get_default_environment(), **env}
    # File-system calls go to a thread: this may run on a server's event loop (langgraph dev
    # refuses blocking calls there).
    executable = await asyncio.to_thread(resolve_command, argv[0], full_env)
    if executable is None:
        raise SourceError(
            f"{label}: command {argv[0]!r} not found or not executable (looked on PATH and in {Path(sys.executable).parent})"
        )

    # Send the server's stderr to a file (exec keeps the process tree unchanged), so a failure
    # can quote it and a healthy server's logging does not flood the caller's terminal.
    errlog = await asyncio.to_thread(_new_errlog)
    sh = _SH
    if sh and os.name == "posix":
        cmd = sh
        args = ["-c", f'exec "$@" 2>>{shlex.quote(errlog)}', "sh", executable, *argv[1:]]
    else:  # pragma: no cover - non-POSIX: stderr stays inherited
        cmd, args = executable, argv[1:]
    connection: dict[str, Any] = {"transport": "stdio", "command": cmd, "args": args}
    if full_env is not None:
        connection["env"] = full_env
    if cwd is not None:
        connection["cwd"] = str(cwd)
    try:
        init, tools, elapsed = await _read_session(
            name=name, connection=connection, timeout=timeout
        )
    except TimeoutError as exc:
        tail = await asyncio.to_thread(_stderr_tail, errlog)
        raise SourceError(
            f"{label}: no answer to initialize/tools/list within {timeout:g} s" + tail
        ) from exc
    except Exception as exc:  # noqa: BLE001 - anything the transport raises becomes a SourceError
        tail = await asyncio.to_thread(_stderr_tail, errlog)
        raise SourceError(
            f"{label}: could not be read ({_describe(exc)}); the server may have exited at start"
            + tail
        ) from exc
    finally:
        await asyncio.to_thread(_remove_quietly, errlog)
    return _document(
        name=name, kind="mcp", reference=reference, init=init, tools=tools, elapsed=elapsed
    )


def _new_errlog() -> str:
    """A file for the server's stderr, in the temp dir (removed after the read)."""
    errlog = tempfile.NamedTemporaryFile(prefix="aw-mcp-", suffix=".log", delete=False)
    errlog.close()
    return errlog.name


def _stderr_tail(path: str) -> str:
    try:
        text = Path(path).read_text(errors="replace").strip()
    except OSError:
        return ""
    if not text:
        return ""
    if len(text) > _STDERR_TAIL:
        text = "..." + text[-_STDERR_TAIL:]
    return f"\n--- server stderr ---\n{text}"


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


async def aread_mcp_url(
    url: str,
    *,
    name: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    headers: dict[str, str] | None = None,
    max_bytes: int = MAX_HTTP_BYTES,
) -> SourceDocument:
    """Connect to an MCP server over streamable HTTP, read ``initialize`` + ``tools/list``.
    The read is bounded in time (``timeout``) and in what the server may send (``max_bytes``,
    all responses together): a server streaming without end is cut off, not buffered."""
    if not re.match(r"^https?://", url, re.I):
        raise SourceError(f"MCP URL {url!r} must start with http:// or https://")
    name = name or mcp_source_name(url)
    budget = _ByteBudget(max_bytes)
    connection: dict[str, Any] = {"transport": "streamable_http", "url": url, "timeout": timeout,
                                  "httpx_client_factory": budget.client}
    if headers:
        connection["headers"] = headers
    budget.reader = asyncio.current_task()
    try:
        init, tools, elapsed = await _read_session(
            name=name, connection=connection, timeout=timeout
        )
    except asyncio.CancelledError as exc:
        if not budget.exceeded:
            raise
        if budget.reader is not None:
            budget.reader.uncancel()
        raise SourceError(f"MCP server at {url}: sent more than {max_bytes:,} bytes; "
                          "stopped reading") from exc
    except Exception as exc:  # noqa: BLE001 - anything the transport raises becomes a SourceError
        if budget.exceeded:
            raise SourceError(f"MCP server at {url}: sent more than {max_bytes:,} bytes; "
                              "stopped reading") from exc
        if isinstance(exc, TimeoutError):
            raise SourceError(
                f"MCP server at {url}: no answer to initialize/tools/list within {timeout:g} s"
            ) from exc
        raise SourceError(f"MCP server at {url}: could not be read ({_describe(exc)})") from exc
    return _document(
        name=name, kind="mcp-url", reference=url, init=init, tools=tools, elapsed=elapsed
    )


class _ByteBudget:
    """Counts the bytes of every HTTP response body of one read; past the budget the stream
    raises, so an endless body never accumulates in memory."""

    def __init__(self, max_bytes: int):
        self.left, self.exceeded = max_bytes, False
        self.reader: asyncio.Task[Any] | None = None  # cancelled when the budget runs out

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            if not self.exceeded and self.reader is not None:
                # the transport swallows errors of its streams: stop the read itself
                self.reader.cancel()
            self.exceeded = True
            raise SourceError("response too large")

    def client(self, headers: dict[str, Any] | None = None, timeout: Any = None,
               auth: Any = None) -> httpx.AsyncClient:
        """An `httpx_client_factory` for langchain-mcp-adapters."""
        return httpx.AsyncClient(headers=headers, timeout=timeout, auth=auth,
                                 follow_redirects=True, transport=_CappedTransport(self))


class _CappedTransport(httpx.AsyncBaseTransport):
    def __init__(self, budget: _ByteBudget):
        self._inner, self._budget = httpx.AsyncHTTPTransport(), budget

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        response.stream = _CappedStream(response.stream, self._budget)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedStream(httpx.AsyncByteStream):
    def __init__(self, inner: Any, budget: _ByteBudget):
        self._inner, self._budget = inner, budget

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._budget.spend(len(chunk))
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


# --------------------------------------------------------------------------- sync wrappers


def run_sync(factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code; inside a running event loop (Jupyter,
    an async graph node) it runs on a fresh loop in a worker thread instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(factory))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="aw-mcp") as pool:
        return pool.submit(asyncio.run, _await(factory)).result()


async def _await(factory: Callable[[], Awaitable[T]]) -> T:
    return await factory()


def read_mcp(
    command: str | Sequence[str],
    *,
    name: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    env: dict[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> SourceDocument:
    """Sync :func:`aread_mcp`."""
    return run_sync(lambda: aread_mcp(command, name=name, timeout=timeout, env=env, cwd=cwd))


def read_mcp_url(
    url: str,
    *,
    name: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    headers: dict[str, str] | None = None,
    max_bytes: int = MAX_HTTP_BYTES,
) -> SourceDocument:
    """Sync :func:`aread_mcp_url`."""
    return run_sync(lambda: aread_mcp_url(url, name=name, timeout=timeout, headers=headers,
                                          max_bytes=max_bytes))
