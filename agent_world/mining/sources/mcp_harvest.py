"""Harvesting real MCP servers' tool lists: install a package, start it offline, save what it lists.

A harvest list names packages (npm or PyPI), each pinned, with the command that starts its
server and the dummy credentials it needs to start (see ``agent_world/data/harvest/
packages.toml``, the curated list shipped with the project). For each entry:

1. install: ``npm install --prefix DIR pkg@ver`` (install scripts off unless the entry asks) or
   a virtual environment per package with ``pip install pkg==ver``, into its own folder of the
   cache; an install that finished once is reused;
2. start the server confined like environment code (``sandbox.isolation``: no network,
   only the install folder and the interpreters visible, a scratch folder as home and working
   directory, rlimits), with the entry's dummy environment;
3. speak MCP over its stdio: ``initialize``, ``tools/list`` (every page), and ``resources/list``
   / ``prompts/list`` where the server declares them, within one time limit;
4. write the answer as one JSON tool-list document (an MCP ``server.json`` record with its
   tools, readable by ``toollist.py``) with provenance: registry, package, version, licence,
   harvest date, tool count.

A server that fails to install or start, hangs, prints something that is not JSON-RPC or lists
no tools becomes a :class:`HarvestResult` with status ``failed`` and a one-paragraph reason.
Entries run concurrently (bounded); an entry whose document exists is skipped unless
``refresh``.

Here: the list, the documents and the run. Step 1 is ``harvest_install.py``, steps 2-3
``harvest_server.py``; the entry and result records are in ``harvest_models.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
import tomllib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent_world.errors import SourceError
from agent_world.mining.sources.harvest_install import _install, _resolve
from agent_world.mining.sources.harvest_models import HarvestEntry, HarvestResult, _Failed
from agent_world.mining.sources.harvest_server import _check_tools, _read
from agent_world.version import __version__

__all__ = [
    "HARVEST_DIR",
    "SHIPPED_PACKAGES",
    "harvest",
    "harvest_one",
    "load_packages",
    "merge_entries",
    "write_index",
]

HARVEST_DIR = Path(__file__).resolve().parents[2] / "data" / "harvest"
SHIPPED_PACKAGES = HARVEST_DIR / "packages.toml"
DEFAULT_JOBS = 4
DEFAULT_TIMEOUT = 60.0  # start + initialize + every list: node servers import a lot at start
DEFAULT_INSTALL_TIMEOUT = 900.0
INDEX_FILE = "index.json"


# --------------------------------------------------------------------------- the list


def load_packages(path: str | os.PathLike[str]) -> list[HarvestEntry]:
    """A harvest list: TOML with ``[[server]]`` tables, or JSON (a list of entries, or
    ``{"server": [...]}``). Every problem is one SourceError naming the file and entry."""
    p = Path(path).expanduser()
    label = f"harvest list {str(p)!r}"
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SourceError(f"{label}: cannot be read ({exc.strerror or exc})") from exc
    try:
        data: Any = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SourceError(f"{label}: not valid {p.suffix.lstrip('.').upper() or 'TOML'} "
                          f"({exc})") from exc
    raw = data.get("server") if isinstance(data, dict) else data
    if not isinstance(raw, list):
        raise SourceError(f"{label}: expected [[server]] entries (a list), found "
                          f"{type(raw).__name__}")
    entries: list[HarvestEntry] = []
    seen: dict[str, str] = {}
    for i, item in enumerate(raw):
        what = item.get("package", f"#{i + 1}") if isinstance(item, dict) else f"#{i + 1}"
        if isinstance(item, dict) and item.get("registry") == "local" and \
                isinstance(item.get("package"), str):
            item = {**item, "package": str((p.parent / item["package"]).resolve())}
        try:
            entry = HarvestEntry.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "entry"
            raise SourceError(f"{label}: entry {what!r}: {where}: {first['msg']}") from exc
        if entry.service in seen:
            raise SourceError(f"{label}: service {entry.service!r} is named twice "
                              f"({seen[entry.service]} and {entry.package}); one per service")
        seen[entry.service] = entry.package
        entries.append(entry)
    return entries


def merge_entries(*lists: Iterable[HarvestEntry]) -> list[HarvestEntry]:
    """Later lists extend earlier ones; an entry for the same registry and package, or for the
    same service, replaces the earlier one."""
    merged: dict[str, HarvestEntry] = {}
    for entries in lists:
        for e in entries:
            for key, old in list(merged.items()):
                if old.service == e.service:
                    del merged[key]
            merged[e.key] = e
    return list(merged.values())

# --------------------------------------------------------------------------- documents


def _document(entry: HarvestEntry, command: str, license_: str | None,
              read: dict[str, Any]) -> dict[str, Any]:
    """An MCP server.json record with the tools (what ``toollist.py`` reads) + provenance."""
    init = read["init"]
    info = init.get("serverInfo") if isinstance(init.get("serverInfo"), dict) else {}
    instructions = init.get("instructions") if isinstance(init.get("instructions"), str) else ""
    doc: dict[str, Any] = {
        "name": entry.service,
        "title": str(info.get("title") or info.get("name") or entry.package),
        "description": instructions.strip(),
        "version": entry.version,
        "packages": [{"registryType": entry.registry, "identifier": entry.package,
                      "version": entry.version, "transport": {"type": "stdio"}}],
        "tools": read["tools"],
    }
    for key in ("resources", "prompts"):
        if read.get(key):
            doc[key] = read[key]
    doc["_harvest"] = {
        "registry": entry.registry,
        "package": entry.package,
        "version": entry.version,
        "license": license_,
        "harvested_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "tool_count": len(read["tools"]),
        "resource_count": len(read.get("resources") or []),
        "prompt_count": len(read.get("prompts") or []),
        "command": [command, *entry.args],
        "env": sorted(entry.env),
        "files": sorted(entry.files),
        "server_name": str(info.get("name") or ""),
        "server_version": str(info.get("version") or ""),
        "protocol_version": str(init.get("protocolVersion") or ""),
        "capabilities": sorted(init.get("capabilities") or {}),
    }
    return doc


def _doc_path(out: Path, entry: HarvestEntry) -> Path:
    return out / f"{entry.service}.json"


def _already(out: Path, entry: HarvestEntry) -> bool:
    path = _doc_path(out, entry)
    try:
        prov = json.loads(path.read_text(encoding="utf-8")).get("_harvest") or {}
    except (OSError, json.JSONDecodeError, AttributeError):
        return False
    return prov.get("package") == entry.package and prov.get("version") == entry.version


def harvest_one(entry: HarvestEntry, *, out: Path, cache: Path, timeout: float = DEFAULT_TIMEOUT,
                install_timeout: float = DEFAULT_INSTALL_TIMEOUT, refresh: bool = False
                ) -> HarvestResult:
    """Install, start and read one entry; write its document into `out`. Never raises for a
    server's own failure: that is a `failed` result with the reason."""
    start = time.monotonic()
    if not refresh and _already(out, entry):
        return HarvestResult(entry=entry, status="skipped", path=str(_doc_path(out, entry)))
    try:
        prefix = _install(entry, cache, install_timeout)
        executable, command, license_ = _resolve(entry, prefix)
        read = _read(entry, executable, prefix, entry.timeout or timeout)
        _check_tools(read["tools"])
    except _Failed as exc:
        return HarvestResult(entry=entry, status="failed", stage=exc.stage,  # type: ignore[arg-type]
                             reason=exc.reason, seconds=time.monotonic() - start)
    path = _doc_path(out, entry)
    tmp = path.with_suffix(".json.tmp")
    # compact: the corpus ships as package data, and some servers' schemas run to megabytes
    tmp.write_text(json.dumps(_document(entry, command, license_, read), ensure_ascii=False,
                              separators=(",", ":")) + "\n", encoding="utf-8")
    tmp.replace(path)
    return HarvestResult(entry=entry, status="harvested", path=str(path),
                         tools=len(read["tools"]), seconds=time.monotonic() - start)


def harvest(entries: Sequence[HarvestEntry], *, out: str | os.PathLike[str],
            cache: str | os.PathLike[str], jobs: int = DEFAULT_JOBS,
            timeout: float = DEFAULT_TIMEOUT, install_timeout: float = DEFAULT_INSTALL_TIMEOUT,
            refresh: bool = False, on_result: Callable[[HarvestResult], None] | None = None
            ) -> list[HarvestResult]:
    """Harvest every entry, `jobs` at a time; results in the entries' order. The corpus index
    (``index.json`` in `out`) is rewritten at the end from every document there and the
    failures of this run."""
    if jobs < 1:
        raise SourceError(f"jobs must be at least 1, got {jobs}")
    out_dir, cache_dir = Path(out).expanduser(), Path(cache).expanduser()
    out_dir.mkdir(parents=True, exist_ok=True)
    cache_dir.mkdir(parents=True, exist_ok=True)
    results: dict[int, HarvestResult] = {}
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="harvest") as pool:
        futures = {pool.submit(harvest_one, e, out=out_dir, cache=cache_dir, timeout=timeout,
                               install_timeout=install_timeout, refresh=refresh): i
                   for i, e in enumerate(entries)}
        for future in as_completed(futures):
            result = future.result()
            results[futures[future]] = result
            if on_result is not None:
                on_result(result)
    ordered = [results[i] for i in range(len(entries))]
    write_index(out_dir, [r for r in ordered if r.status == "failed"],
                tried={e.key for e in entries})
    return ordered


def write_index(out: Path, failed: Sequence[HarvestResult] = (),
                tried: set[str] | None = None) -> Path:
    """``index.json``: one provenance row per document in `out`, and the entries that failed
    (with the first line of their reason): `failed`, plus the earlier index's failures of
    entries not `tried` this time (``registry:package``) and still without a document."""
    rows = []
    for path in sorted(out.glob("*.json")):
        if path.name == INDEX_FILE:
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        prov = doc.get("_harvest") if isinstance(doc, dict) else None
        if not isinstance(prov, dict):
            continue
        rows.append({"service": doc.get("name"), "file": path.name,
                     **{k: prov.get(k) for k in ("registry", "package", "version", "license",
                                                 "harvested_at", "tool_count",
                                                 "resource_count", "prompt_count")}})
    path = out / INDEX_FILE
    have = {(r["registry"], r["package"]) for r in rows}
    kept = []
    if tried is not None and path.is_file():
        try:
            earlier = json.loads(path.read_text(encoding="utf-8")).get("failed") or []
        except (OSError, json.JSONDecodeError, AttributeError):
            earlier = []
        kept = [f for f in earlier if isinstance(f, dict)
                and f"{f.get('registry')}:{f.get('package')}" not in tried
                and (f.get("registry"), f.get("package")) not in have]
    index = {
        "generated_by": f"agent-world harvest {__version__}",
        "servers": rows,
        "failed": sorted(kept + [
            {"service": r.entry.service, "registry": r.entry.registry,
             "package": r.entry.package, "version": r.entry.version, "stage": r.stage,
             "reason": r.reason.splitlines()[0][:300]} for r in failed],
            key=lambda f: str(f.get("service"))),
    }
    path.write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
