"""MCP tool-list files as mining sources.

Shapes understood (JSON, or YAML with a .yaml/.yml suffix):

* a saved ``tools/list`` result: ``{"tools": [...]}`` (also wrapped in a JSON-RPC response,
  ``{"jsonrpc": "2.0", "id": 1, "result": {"tools": [...]}}``) or a bare list of tools;
  each tool has ``name``, ``description``, ``inputSchema`` (``input_schema``/``parameters`` and
  the OpenAI ``{"type": "function", "function": {...}}`` form are accepted too), optional
  ``outputSchema``, ``annotations`` (``readOnlyHint`` ...);
* an MCP registry ``server.json`` record: ``name``, ``description``, ``version``, ``title``,
  ``packages`` / ``remotes``, optionally a ``tools`` array; also wrapped as the registry API
  answers it (``{"server": {...}, "_meta": {...}}``) or a list answer ``{"servers": [...]}``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agent_world.errors import SourceError
from agent_world.mining.offline.naming import slug
from agent_world.mining.sources._io import load_structured, name_from_path
from agent_world.mining.sources.base import SourceDocument, ToolDescription

__all__ = ["looks_like_tool_list", "parse_tool_list", "read_tool_list"]

_SERVER_KEYS = {"packages", "remotes"}


def _unwrap(data: Any) -> Any:
    """Strip a JSON-RPC envelope or a registry ``{"server": ...}`` wrapper."""
    if isinstance(data, dict) and "jsonrpc" in data:
        if "error" in data and "result" not in data:
            err = data["error"]
            msg = err.get("message") if isinstance(err, dict) else err
            raise SourceError(f"saved JSON-RPC response is an error, not a tool list: {msg}")
        data = data.get("result", data)
    if isinstance(data, dict) and isinstance(data.get("server"), dict) and "tools" not in data:
        data = {**data["server"], "_meta": data.get("_meta")}
    return data


def _is_server_record(data: Any) -> bool:
    return isinstance(data, dict) and (
        bool(_SERVER_KEYS & data.keys())
        or "server.schema.json" in str(data.get("$schema", ""))
        or (isinstance(data.get("name"), str) and ("description" in data or "version" in data))
    )


def looks_like_tool_list(data: Any) -> bool:
    """True when parsed JSON/YAML has one of the shapes this module reads."""
    try:
        data = _unwrap(data)
    except SourceError:
        return False
    if isinstance(data, list):
        return all(isinstance(t, dict) and ("name" in t or "function" in t) for t in data)
    if not isinstance(data, dict):
        return False
    return (
        isinstance(data.get("tools"), list)
        or _is_server_record(data)
        or isinstance(data.get("servers"), list)
    )


def _tool(raw: Any, index: int, label: str) -> ToolDescription:
    if not isinstance(raw, dict):
        raise SourceError(f"{label}: tool #{index} is a {type(raw).__name__}, expected an object")
    if raw.get("type") == "function" and isinstance(raw.get("function"), dict):
        raw = raw["function"]
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SourceError(f"{label}: tool #{index} has no 'name'")
    schema = raw.get("inputSchema", raw.get("input_schema", raw.get("parameters")))
    if schema is None:
        schema = {}
    if not isinstance(schema, dict):
        raise SourceError(f"{label}: tool {name!r} has an inputSchema that is not an object")
    output = raw.get("outputSchema", raw.get("output_schema"))
    if output is not None and not isinstance(output, dict):
        raise SourceError(f"{label}: tool {name!r} has an outputSchema that is not an object")
    annotations = raw.get("annotations") if isinstance(raw.get("annotations"), dict) else {}
    read_only = annotations.get("readOnlyHint")
    tags = [
        tag
        for key, tag in (
            ("readOnlyHint", "read-only"),
            ("destructiveHint", "destructive"),
            ("idempotentHint", "idempotent"),
            ("openWorldHint", "open-world"),
        )
        if annotations.get(key) is True
    ]
    description = raw.get("description") or raw.get("title") or annotations.get("title") or ""
    return ToolDescription(
        name=name.strip(),
        description=str(description).strip(),
        input_schema=schema,
        output_schema=output or None,
        read_only=read_only if isinstance(read_only, bool) else None,
        tags=tags,
    )


def _tools(raw_tools: Any, label: str) -> list[ToolDescription]:
    if not isinstance(raw_tools, list):
        raise SourceError(f"{label}: 'tools' is a {type(raw_tools).__name__}, expected a list")
    return [_tool(t, i, label) for i, t in enumerate(raw_tools)]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _server_metadata(server: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key in ("name", "version", "title", "websiteUrl", "status"):
        if server.get(key):
            meta[f"server_{key}" if key in ("name", "version", "title") else key] = server[key]
    repo = server.get("repository")
    if isinstance(repo, dict) and repo.get("url"):
        meta["repository"] = repo["url"]
    packages = []
    for pkg in _list(server.get("packages")):
        if isinstance(pkg, dict):
            transport = pkg.get("transport")
            packages.append(
                {
                    "registry": pkg.get("registryType") or pkg.get("registry_name") or "",
                    "identifier": pkg.get("identifier") or pkg.get("name") or "",
                    "version": pkg.get("version") or "",
                    "transport": transport.get("type", "") if isinstance(transport, dict) else "",
                }
            )
    if packages:
        meta["packages"] = packages
    remotes = [
        {"type": r.get("type", "") or r.get("transport_type", ""), "url": r.get("url", "")}
        for r in _list(server.get("remotes"))
        if isinstance(r, dict)
    ]
    if remotes:
        meta["remotes"] = remotes
    return meta


def parse_tool_list(data: Any, *, reference: str, name: str | None = None) -> SourceDocument:
    """Parsed JSON/YAML data of a tool list / server.json -> SourceDocument(kind 'tool-list')."""
    label = f"tool list {reference!r}"
    try:
        return _parse_tool_list(data, reference=reference, name=name, label=label)
    except SourceError:
        raise
    except (TypeError, AttributeError, ValueError, KeyError, IndexError) as exc:
        raise SourceError(f"{label}: malformed document ({type(exc).__name__}: {exc})") from exc


def _parse_tool_list(data: Any, *, reference: str, name: str | None, label: str) -> SourceDocument:
    data = _unwrap(data)
    default_name = name or name_from_path(reference)
    if isinstance(data, list):
        return SourceDocument(
            name=default_name,
            kind="tool-list",
            reference=reference,
            title=default_name,
            tools=_tools(data, label),
            metadata={"shape": "tools-list"},
        )
    if not isinstance(data, dict):
        raise SourceError(
            f"{label}: expected a JSON object or list of tools, got {type(data).__name__}"
        )

    if isinstance(data.get("servers"), list) and "tools" not in data:  # registry list answer
        tools: list[ToolDescription] = []
        features: list[str] = []
        servers = []
        for entry in data["servers"]:
            server = _unwrap(entry) if isinstance(entry, dict) else None
            if not isinstance(server, dict):
                continue
            sname = str(server.get("name") or "")
            servers.append(_server_metadata(server))
            if server.get("description"):
                features.append(
                    f"{sname}: {server['description']}" if sname else server["description"]
                )
            if "tools" in server:
                tools += _tools(server["tools"], f"{label} server {sname!r}")
        return SourceDocument(
            name=default_name,
            kind="tool-list",
            reference=reference,
            title=default_name,
            tools=tools,
            features=features,
            metadata={"shape": "registry-list", "servers": servers},
        )

    if _is_server_record(data):
        server_name = str(data.get("name") or "")
        short = server_name.rsplit("/", 1)[-1] if server_name else ""
        return SourceDocument(
            name=name or slug(short) or default_name,
            kind="tool-list",
            reference=reference,
            title=str(data.get("title") or server_name or default_name),
            description=str(data.get("description") or "").strip(),
            tools=_tools(data.get("tools") or [], label),
            metadata={"shape": "server.json", **_server_metadata(data)},
        )

    if "tools" in data:  # a tools/list result
        meta: dict[str, Any] = {"shape": "tools-list"}
        if data.get("nextCursor"):
            meta["next_cursor"] = data["nextCursor"]
        return SourceDocument(
            name=default_name,
            kind="tool-list",
            reference=reference,
            title=default_name,
            tools=_tools(data["tools"], label),
            metadata=meta,
        )

    keys = ", ".join(sorted(map(str, data.keys()))[:8]) or "none"
    raise SourceError(
        f"{label}: not a tool list - expected a 'tools' array, a bare list of tools or an MCP "
        f"server.json record (name/description/version/packages/remotes); top-level keys: {keys}"
    )


def read_tool_list(path: str | os.PathLike[str], *, name: str | None = None) -> SourceDocument:
    """Read a tool-list / server.json file."""
    data = load_structured(path, "tool list")
    return parse_tool_list(data, reference=str(Path(path)), name=name)
