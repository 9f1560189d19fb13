"""Mining sources: where tool ecosystems are read from.

A source is named by a short spec string:

* ``mcp:CMD ARGS`` - a live MCP server started over stdio (``mcp:mcp-server-time``);
* ``mcp-url:URL`` - a live MCP server over streamable HTTP (``mcp-url:http://127.0.0.1:8000/mcp``);
* ``file:PATH`` - a file whose kind is detected: Markdown -> PRD, JSON/YAML with an ``openapi``
  key -> OpenAPI spec, JSON/YAML tool list or MCP ``server.json`` -> tool list;
* ``openapi:PATH`` / ``prd:PATH`` / ``tool-list:PATH`` - a file of a stated kind.

A bare ``http(s)://`` URL is taken as ``mcp-url:``, a bare existing path as ``file:``.
:func:`parse_source` turns a spec into a :class:`SourceRef`; :func:`read_source` reads it into
the shared :class:`SourceDocument`. :func:`default_sources` is what mining uses when the user
names no sources: four real MCP servers installed with the project plus two bundled documents.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agent_world.config import DEFAULT_HOME, HOME_ENV
from agent_world.errors import SourceError
from agent_world.mining.sources._io import (
    JSON_SUFFIXES,
    MARKDOWN_SUFFIXES,
    YAML_SUFFIXES,
    name_from_path,
    parse_structured,
    read_text,
)
from agent_world.mining.sources.base import (
    EntityHint,
    FieldSpec,
    SourceDocument,
    SourceKind,
    ToolDescription,
)
from agent_world.mining.sources.mcp import (
    DEFAULT_TIMEOUT,
    aread_mcp,
    aread_mcp_url,
    mcp_source_name,
    read_mcp,
    read_mcp_url,
    run_sync,
)
from agent_world.mining.sources.openapi import looks_like_openapi, parse_openapi, read_openapi
from agent_world.mining.sources.prd import looks_like_prd, parse_prd, read_prd
from agent_world.mining.sources.toollist import (
    looks_like_tool_list,
    parse_tool_list,
    read_tool_list,
)

__all__ = [
    "DATA_DIR",
    "DEFAULT_SOURCES",
    "DEFAULT_TIMEOUT",
    "EntityHint",
    "FieldSpec",
    "SourceDocument",
    "SourceKind",
    "SourceRef",
    "ToolDescription",
    "aread_mcp",
    "aread_mcp_url",
    "aread_source",
    "aread_sources",
    "default_sources",
    "detect_file_kind",
    "parse_openapi",
    "parse_prd",
    "parse_source",
    "parse_tool_list",
    "read_mcp",
    "read_mcp_url",
    "read_openapi",
    "read_prd",
    "read_source",
    "read_sources",
    "read_tool_list",
]

FileKind = Literal["tool-list", "openapi", "prd"]
_FILE_KINDS: tuple[FileKind, ...] = ("tool-list", "openapi", "prd")
_PREFIX = {"mcp": "mcp:", "mcp-url": "mcp-url:"}

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "sources"


class SourceRef(BaseModel):
    """A source to read: what kind it is, where it is, and a short name for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: SourceKind
    reference: str  # command line (mcp), URL (mcp-url) or absolute file path
    name: str

    @property
    def spec(self) -> str:
        """The spec string that parses back into this ref."""
        prefix = _PREFIX.get(self.kind, f"{self.kind}:")
        return f"{prefix}{self.reference}"

    def __str__(self) -> str:
        return self.spec


# --------------------------------------------------------------------------- parse


def detect_file_kind(path: str | os.PathLike[str]) -> tuple[FileKind, Any]:
    """(kind, parsed data or text) of a source file, from its extension and content."""
    p = Path(path).expanduser()
    text = read_text(p, "source file")
    suffix = p.suffix.lower()
    label = f"source file {str(p)!r}"
    if suffix in MARKDOWN_SUFFIXES:
        return "prd", text
    structured = suffix in JSON_SUFFIXES | YAML_SUFFIXES or text.lstrip()[:1] in ("{", "[")
    if not structured and not looks_like_prd(text):
        # no extension hint and no Markdown heading: YAML is the only other option
        structured = True
    if structured:
        try:
            data = parse_structured(text, suffix=suffix, label=label)
        except SourceError:
            if suffix in JSON_SUFFIXES | YAML_SUFFIXES:
                raise
            data = None
        if looks_like_openapi(data):
            return "openapi", data
        if looks_like_tool_list(data):
            return "tool-list", data
        if suffix in JSON_SUFFIXES | YAML_SUFFIXES or not looks_like_prd(text):
            found = (
                f"top-level keys: {', '.join(sorted(map(str, data))[:8])}"
                if isinstance(data, dict)
                else f"a {type(data).__name__}"
            )
            raise SourceError(
                f"{label}: cannot tell what kind of source this is ({found}); expected an OpenAPI "
                "3 spec ('openapi' key), an MCP tool list ('tools' array or a list of tools) or "
                "an MCP server.json record"
            )
    return "prd", text


def _file_name(kind: FileKind, data: Any, path: Path) -> str:
    if kind == "tool-list":
        try:
            return parse_tool_list(data, reference=str(path)).name
        except SourceError:
            return name_from_path(path)
    return name_from_path(path)


def _file_ref(path_text: str, kind: FileKind | None, spec: str) -> SourceRef:
    path_text = path_text.strip()
    if not path_text:
        raise SourceError(f"source {spec!r}: no file path after the prefix")
    path = Path(path_text).expanduser()
    if not path.exists():
        raise SourceError(f"source {spec!r}: file {str(path)!r} not found")
    path = path.resolve()
    detected, data = detect_file_kind(path) if kind is None else (kind, None)
    if kind == "tool-list":  # its name comes from the content (server.json 'name')
        data = parse_structured(
            read_text(path, "tool list"), suffix=path.suffix, label=f"tool list {str(path)!r}"
        )
    return SourceRef(kind=detected, reference=str(path), name=_file_name(detected, data, path))


def parse_source(spec: str) -> SourceRef:
    """``mcp:CMD``, ``mcp-url:URL``, ``file:PATH`` (or ``openapi:``/``prd:``/``tool-list:``) ->
    SourceRef. File specs are checked (exists, kind detectable) now; servers are not started."""
    if not isinstance(spec, str) or not spec.strip():
        raise SourceError("empty source spec; use mcp:CMD, mcp-url:URL or file:PATH")
    spec = spec.strip()
    prefix, sep, rest = spec.partition(":")
    prefix = prefix.lower()
    if sep and prefix == "mcp":
        command = rest.strip()
        if not command:
            raise SourceError(f"source {spec!r}: no command after 'mcp:'")
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise SourceError(f"source {spec!r}: command cannot be parsed ({exc})") from exc
        if not argv:
            raise SourceError(f"source {spec!r}: no command after 'mcp:'")
        return SourceRef(kind="mcp", reference=command, name=mcp_source_name(argv))
    if sep and prefix in ("mcp-url", "mcp+http", "mcp-http"):
        url = rest.strip()
        if not url.lower().startswith(("http://", "https://")):
            raise SourceError(
                f"source {spec!r}: expected an http:// or https:// URL after 'mcp-url:'"
            )
        return SourceRef(kind="mcp-url", reference=url, name=mcp_source_name(url))
    if sep and prefix == "file":
        return _file_ref(rest, None, spec)
    if sep and prefix in _FILE_KINDS:
        return _file_ref(rest, prefix, spec)  # type: ignore[arg-type]
    if spec.lower().startswith(("http://", "https://")):
        return SourceRef(kind="mcp-url", reference=spec, name=mcp_source_name(spec))
    if Path(spec).expanduser().exists():
        return _file_ref(spec, None, spec)
    raise SourceError(
        f"unknown source {spec!r}: use mcp:COMMAND ARGS (stdio MCP server), mcp-url:URL "
        "(streamable HTTP MCP server) or file:PATH (OpenAPI spec, MCP tool list, Markdown PRD)"
    )


def _as_ref(source: SourceRef | str) -> SourceRef:
    if isinstance(source, SourceRef):
        return source
    return parse_source(source)


# --------------------------------------------------------------------------- read


def _read_file(ref: SourceRef) -> SourceDocument:
    if ref.kind == "openapi":
        return read_openapi(ref.reference, name=ref.name)
    if ref.kind == "prd":
        return read_prd(ref.reference, name=ref.name)
    if ref.kind == "tool-list":
        return read_tool_list(ref.reference, name=ref.name)
    raise SourceError(f"source {ref.spec!r}: unsupported kind {ref.kind!r}")


async def aread_source(
    source: SourceRef | str, *, timeout: float = DEFAULT_TIMEOUT
) -> SourceDocument:
    """Read one source (async: MCP servers are read without blocking the loop)."""
    ref = _as_ref(source)
    if ref.kind == "mcp":
        return await aread_mcp(ref.reference, name=ref.name, timeout=timeout)
    if ref.kind == "mcp-url":
        return await aread_mcp_url(ref.reference, name=ref.name, timeout=timeout)
    return await asyncio.to_thread(_read_file, ref)


def read_source(source: SourceRef | str, *, timeout: float = DEFAULT_TIMEOUT) -> SourceDocument:
    """Read one source into a SourceDocument; every failure is a SourceError."""
    ref = _as_ref(source)
    if ref.kind == "mcp":
        return read_mcp(ref.reference, name=ref.name, timeout=timeout)
    if ref.kind == "mcp-url":
        return read_mcp_url(ref.reference, name=ref.name, timeout=timeout)
    return _read_file(ref)


async def aread_sources(
    sources: Iterable[SourceRef | str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    skip_errors: bool = False,
) -> tuple[list[SourceDocument], list[SourceError]]:
    """Read several sources concurrently, in order. With ``skip_errors`` a failing source is
    left out and its SourceError returned; otherwise the first failure is raised."""
    refs = [_as_ref(s) for s in sources]
    results = await asyncio.gather(
        *(aread_source(r, timeout=timeout) for r in refs), return_exceptions=True
    )
    docs: list[SourceDocument] = []
    errors: list[SourceError] = []
    for ref, result in zip(refs, results, strict=True):
        if isinstance(result, SourceDocument):
            docs.append(result)
            continue
        if not isinstance(result, SourceError):
            if not isinstance(result, Exception):
                raise result  # KeyboardInterrupt / CancelledError
            result = SourceError(f"source {ref.spec!r}: {type(result).__name__}: {result}")
        if not skip_errors:
            raise result
        errors.append(result)
    return docs, errors


def read_sources(
    sources: Iterable[SourceRef | str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    skip_errors: bool = False,
) -> list[SourceDocument]:
    """Sync :func:`aread_sources` returning only the documents (errors are raised unless
    ``skip_errors``)."""
    items = list(sources)
    docs, _ = run_sync(lambda: aread_sources(items, timeout=timeout, skip_errors=skip_errors))
    return docs


# --------------------------------------------------------------------------- defaults

# (console script, arguments): arguments chosen so `tools/list` works offline, deterministically
# and without touching the current directory (mcp-server-sqlite would create
# ./sqlite_mcp_server.db by default; mcp-server-time would put the machine's zone in its schema).
DEFAULT_MCP_SERVERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("mcp-server-time", ("--local-timezone", "UTC")),
    ("mcp-server-git", ()),
    ("mcp-server-fetch", ()),
    ("mcp-server-sqlite", ("--db-path", "{sqlite_db}")),
)
DEFAULT_FILES: tuple[tuple[str, FileKind], ...] = (
    ("clinic_booking_openapi.yaml", "openapi"),
    ("book_lending_prd.md", "prd"),
)


def _script(name: str) -> str:
    local = Path(sys.executable).parent / name
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return shutil.which(name) or name  # a missing server fails at read time, with its name


def default_sqlite_db(home: str | os.PathLike[str] | None = None) -> Path:
    """The scratch database the default mcp-server-sqlite is pointed at (created by it): in
    the arena home (`home`, else $AGENT_WORLD_HOME, else ~/.agent_world), never elsewhere."""
    base = Path(home or os.environ.get(HOME_ENV) or DEFAULT_HOME).expanduser()
    return base / "sources" / "mcp-server-sqlite.db"


def default_sources(home: str | os.PathLike[str] | None = None, create: bool = True
                    ) -> list[SourceRef]:
    """What mining reads when no sources are given: the real MCP servers installed with the
    project (run from this interpreter's bin directory) and the two bundled documents.
    `create`: make the folder of the sqlite server's scratch database (in the home)."""
    refs = []
    db = default_sqlite_db(home)
    if create:
        db.parent.mkdir(parents=True, exist_ok=True)
    fill = {"sqlite_db": str(db)}
    for script, args in DEFAULT_MCP_SERVERS:
        argv = [_script(script), *(a.format(**fill) for a in args)]
        refs.append(SourceRef(kind="mcp", reference=shlex.join(argv), name=mcp_source_name(script)))
    for filename, kind in DEFAULT_FILES:
        path = DATA_DIR / filename
        refs.append(SourceRef(kind=kind, reference=str(path), name=name_from_path(path)))
    return refs


DEFAULT_SOURCES: tuple[SourceRef, ...] = tuple(default_sources(create=False))
