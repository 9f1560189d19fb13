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
"""

from __future__ import annotations

import datetime as dt
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Literal

from mcp import types as mcp_types
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agent_world.errors import SourceError
from agent_world.sandbox.isolation import SANDBOX_WORKDIR, Limits, confine
from agent_world.version import __version__

__all__ = [
    "HARVEST_DIR",
    "SHIPPED_PACKAGES",
    "HarvestEntry",
    "HarvestResult",
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
_MARKER = ".aw-installed.json"  # written last: an install without it is redone
_MAX_STDOUT = 32 * 1024 * 1024  # what one server may print before the read stops
_TAIL = 1200  # characters of stderr / install output quoted in a reason
_GARBAGE_SAMPLES = 3
# Servers started under isolation: node's V8 reserves far more address space than it uses
# (each WebAssembly memory, undici's HTTP parser among them, reserves a 10 GiB cage), so the
# address-space limit is loose; both runtimes start worker threads.
_LIMITS = Limits(memory_bytes=256 << 30, cpu_s=300, processes=256, tmp_bytes=128 << 20)
_PROTOCOL = mcp_types.LATEST_PROTOCOL_VERSION
_SERVICE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class HarvestEntry(BaseModel):
    """One package to harvest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    service: str  # short distinct name of what the server is for: the corpus file's name
    # npm, PyPI, or "local": a folder holding a server (package: its path, relative to the
    # list file; command: the executable in it), harvested as it is, with nothing installed
    registry: Literal["npm", "pypi", "local"]
    package: str
    version: str
    # the executable the package installs (npm bin / console script); None: its only one
    command: str | None = None
    args: tuple[str, ...] = ()  # "{workdir}" is the scratch folder the server runs in
    env: dict[str, str] = Field(default_factory=dict)  # dummy credentials it needs to start
    # dummy files it needs to start (a credentials JSON), by path in its scratch folder
    files: dict[str, str] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0)
    install_scripts: bool = False  # npm: run the packages' install scripts
    downloads_a_month: int | None = None  # popularity when chosen (npm list), for the record
    rank: int | None = None  # PyPI: rank among the most downloaded packages, when chosen

    @field_validator("service")
    @classmethod
    def _service(cls, value: str) -> str:
        if not _SERVICE.match(value):
            raise ValueError(f"service {value!r}: lower-case letters, digits and '-' only")
        return value

    @field_validator("package", "version")
    @classmethod
    def _plain(cls, value: str) -> str:
        if not value.strip() or any(c.isspace() for c in value) or value.startswith("-"):
            raise ValueError(f"{value!r} is not a package name or version")
        return value

    @model_validator(mode="after")
    def _local(self) -> HarvestEntry:
        if self.registry == "local" and not self.command:
            raise ValueError("a local entry names its executable as 'command'")
        for name in self.files:
            if Path(name).is_absolute() or ".." in Path(name).parts:
                raise ValueError(f"file {name!r}: a path inside the scratch folder")
        return self

    @property
    def key(self) -> str:
        return f"{self.registry}:{self.package}"

    @property
    def label(self) -> str:
        sep = {"npm": "@", "pypi": "=="}.get(self.registry, " ")
        return f"{self.registry}:{self.package}{sep}{self.version}"


class HarvestResult(BaseModel):
    """What harvesting one entry gave: a document written, skipped (already there), or a
    failure with its reason."""

    entry: HarvestEntry
    status: Literal["harvested", "skipped", "failed"]
    stage: Literal["install", "start", "list", "done"] = "done"
    reason: str = ""
    path: str | None = None
    tools: int = 0
    seconds: float = 0.0


class _Failed(Exception):
    def __init__(self, stage: str, reason: str):
        super().__init__(reason)
        self.stage, self.reason = stage, reason


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


# --------------------------------------------------------------------------- install


def _folder(entry: HarvestEntry) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{entry.registry}-{entry.package}-{entry.version}")


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _TAIL else "..." + text[-_TAIL:]


def _run_install(argv: list[str], timeout: float, env: dict[str, str], what: str) -> None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise _Failed("install", f"{what} did not finish within {timeout:g} s") from exc
    except OSError as exc:
        raise _Failed("install", f"{what} could not run ({exc})") from exc
    if proc.returncode != 0:
        raise _Failed("install", f"{what} failed (exit {proc.returncode}): "
                                 f"{_tail(proc.stderr or proc.stdout)}")


def _install(entry: HarvestEntry, cache: Path, timeout: float) -> Path:
    """Install the entry into its own folder of `cache` (once); returns the folder."""
    if entry.registry == "local":
        folder = Path(entry.package)
        if not folder.is_dir():
            raise _Failed("install", f"local server folder {str(folder)!r} not found")
        return folder
    prefix = cache / _folder(entry)
    if (prefix / _MARKER).is_file():
        return prefix
    if prefix.exists():  # a half-done install: start again
        shutil.rmtree(prefix)
    prefix.mkdir(parents=True)
    env = dict(os.environ, PUPPETEER_SKIP_DOWNLOAD="1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1",
               npm_config_update_notifier="false", PIP_DISABLE_PIP_VERSION_CHECK="1")
    if entry.registry == "npm":
        npm = shutil.which("npm")
        if npm is None:
            raise _Failed("install", "npm is not installed (needed for npm packages)")
        # pinned versions: cached metadata is good enough (--prefer-offline skips revalidation)
        argv = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                "--prefer-offline", "--omit=dev", "--loglevel=error",
                f"{entry.package}@{entry.version}"]
        if not entry.install_scripts:
            argv.insert(2, "--ignore-scripts")
        _run_install(argv, timeout, env, f"npm install {entry.package}@{entry.version}")
    else:
        venv = prefix / "venv"
        _run_install([sys.executable, "-m", "venv", "--without-pip", str(venv)], 120, env,
                     "python -m venv")
        _run_install([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                      "install", "--no-input", "--quiet", "--no-compile",
                      f"{entry.package}=={entry.version}"],
                     timeout, env, f"pip install {entry.package}=={entry.version}")
    (prefix / _MARKER).write_text(json.dumps({"package": entry.package,
                                              "version": entry.version}))
    return prefix


def _npm_package_json(prefix: Path, package: str) -> dict[str, Any]:
    path = prefix / "node_modules" / package / "package.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise _Failed("install", f"installed, but {path} cannot be read ({exc})") from exc


def _pick(commands: Sequence[str], entry: HarvestEntry, what: str) -> str:
    if entry.command is not None:
        if entry.command not in commands:
            raise _Failed("install", f"the package installs no {what} {entry.command!r} "
                                     f"(it has: {', '.join(commands) or 'none'})")
        return entry.command
    if len(commands) == 1:
        return commands[0]
    base = entry.package.rsplit("/", 1)[-1].lower()
    named = [c for c in commands if c.lower() == base] or [c for c in commands if "mcp" in c]
    if len(named) == 1:
        return named[0]
    raise _Failed("install", f"the package installs {len(commands)} {what}s "
                             f"({', '.join(commands) or 'none'}); name one as 'command'")


def _resolve(entry: HarvestEntry, prefix: Path) -> tuple[str, str, str | None]:
    """(path of the executable, its name, licence) of an installed entry."""
    if entry.registry == "local":
        assert entry.command is not None
        path = prefix / entry.command
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise _Failed("install", f"{str(path)!r} is not an executable file")
        return str(path), entry.command, None
    if entry.registry == "npm":
        pkg = _npm_package_json(prefix, entry.package)
        bins = pkg.get("bin")
        if isinstance(bins, str):
            bins = {entry.package.rsplit("/", 1)[-1]: bins}
        name = _pick(sorted(bins or {}), entry, "bin")
        path = prefix / "node_modules" / ".bin" / name
        return str(path), name, _npm_license(pkg.get("license"),
                                             prefix / "node_modules" / entry.package)
    venv = prefix / "venv"
    site = sorted(venv.glob("lib/python*/site-packages"))
    want = re.sub(r"[-_.]+", "-", entry.package).lower()
    dist = next((d for d in importlib_metadata.distributions(path=[str(s) for s in site])
                 if re.sub(r"[-_.]+", "-", d.metadata["Name"] or "").lower() == want), None)
    if dist is None:
        raise _Failed("install", f"installed, but no distribution {entry.package!r} in {venv}")
    scripts = sorted(ep.name for ep in dist.entry_points if ep.group == "console_scripts")
    name = _pick(scripts, entry, "console script")
    return str(venv / "bin" / name), name, _pypi_license(dist.metadata)


def _npm_license(value: Any, folder: Path) -> str | None:
    """The package.json licence; "SEE LICENSE IN FILE" is resolved to that file's title."""
    if isinstance(value, dict):
        value = value.get("type")
    if not isinstance(value, str):
        return None
    see = re.match(r"(?i)see licen[sc]e in (\S+)", value.strip())
    if see:
        try:
            lines = (folder / see.group(1)).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return value
        title = next((ln.strip() for ln in lines.splitlines() if ln.strip()), "")
        return title[:80] or value
    return value


def _pypi_license(meta: Any) -> str | None:
    expression = meta.get("License-Expression")
    if expression:
        return str(expression)
    classifiers = [c.split("::")[-1].strip() for c in meta.get_all("Classifier") or []
                   if c.startswith("License ::")]
    if classifiers:
        return ", ".join(classifiers)
    text = (meta.get("License") or "").strip()
    return text.splitlines()[0][:80] if text else None


# --------------------------------------------------------------------------- read


class _Stdio:
    """A minimal MCP client over a child's stdio: JSON-RPC lines, with a deadline per read.
    Anything on stdout that is not a JSON-RPC message is counted and quoted (servers that
    print banners or logs there).

    Not the MCP SDK's `stdio_client` (which `mcp.py` uses for trusted servers): a harvested
    server is untrusted code that must start inside `sandbox.isolation.confine` (its own
    process wrapper, rlimits, no network, killed by the sandbox), its stdout must be read with
    a byte cap, and its non-protocol lines are the diagnosis the ledger quotes; the SDK spawns
    the process itself and drops such lines as parse errors."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc = proc
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.garbage: list[str] = []
        self.garbage_count = 0
        self._next_id = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        total = 0
        for line in self.proc.stdout:
            total += len(line)
            if total > _MAX_STDOUT:
                break
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it exited: the read sees end of output and says so

    def request(self, method: str, params: dict[str, Any], deadline: float) -> dict[str, Any]:
        self._next_id += 1
        rid = self._next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Failed("start" if method == "initialize" else "list",
                              f"no answer to {method} in time")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                code = self.proc.wait(timeout=5) if self.proc.poll() is None else self.proc.poll()
                raise _Failed("start" if method == "initialize" else "list",
                              f"it closed its output (exit code {code}) before answering "
                              f"{method}")
            message = self._parse(line)
            if message is None:
                continue
            if "method" in message:  # a request or notification from the server
                if "id" in message:
                    self._answer(message)
                continue
            if message.get("id") != rid:
                continue
            if "error" in message:
                err = message["error"]
                text = err.get("message") if isinstance(err, dict) else err
                raise _Failed("start" if method == "initialize" else "list",
                              f"{method} answered with an error: {text}")
            result = message.get("result")
            if not isinstance(result, dict):
                raise _Failed("list", f"{method} answered with a {type(result).__name__}, "
                                      "not an object")
            return result

    def _parse(self, line: bytes) -> dict[str, Any] | None:
        text = line.decode("utf-8", errors="replace").strip()
        if not text:
            return None
        try:
            message = json.loads(text)
        except json.JSONDecodeError:
            message = None
        if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
            return message
        self.garbage_count += 1
        if len(self.garbage) < _GARBAGE_SAMPLES:
            self.garbage.append(text[:120])
        return None

    def _answer(self, request: dict[str, Any]) -> None:
        method = request.get("method")
        if method == "ping":
            self.send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
        elif method == "roots/list":
            self.send({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}})
        else:
            self.send({"jsonrpc": "2.0", "id": request["id"],
                       "error": {"code": -32601, "message": f"method {method!r} not offered"}})

    def garbage_note(self) -> str:
        if not self.garbage_count:
            return ""
        shown = "; ".join(repr(g) for g in self.garbage)
        return (f"; its stdout had {self.garbage_count} line(s) that are not JSON-RPC "
                f"(MCP servers print only protocol messages there), such as {shown}")


def _list_all(client: _Stdio, method: str, key: str, deadline: float) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(100):  # pagination guard
        result = client.request(method, {"cursor": cursor} if cursor else {}, deadline)
        page = result.get(key)
        if not isinstance(page, list):
            raise _Failed("list", f"{method} answer has no '{key}' list")
        items.extend(page)
        cursor = result.get("nextCursor")
        if not cursor:
            break
    return items


def _fill(text: str, prefix: Path) -> str:
    return text.replace("{workdir}", SANDBOX_WORKDIR).replace("{prefix}", str(prefix))


def _read(entry: HarvestEntry, executable: str, prefix: Path, timeout: float
          ) -> dict[str, Any]:
    """Start the installed server confined, read what it serves, stop it."""
    with tempfile.TemporaryDirectory(prefix="aw-harvest-") as scratch:
        work = Path(scratch) / "work"
        work.mkdir()
        for name, content in entry.files.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(_fill(content, prefix), encoding="utf-8")
        env = {"PYTHONPATH": "", "NO_COLOR": "1", "NODE_ENV": "production",
               **{k: _fill(v, prefix) for k, v in entry.env.items()}}
        argv = [executable, *(_fill(a, prefix) for a in entry.args)]
        confined = confine(argv, workdir=work, limits=_LIMITS, env=env, ro_paths=[prefix],
                           what=f"MCP server {entry.package}")
        errlog = (Path(scratch) / "stderr.log").open("w+b")
        proc = confined.popen(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog)
        client = _Stdio(proc)
        deadline = time.monotonic() + timeout
        try:
            try:
                init = client.request("initialize", {
                    "protocolVersion": _PROTOCOL, "capabilities": {},
                    "clientInfo": {"name": "agent-world-harvest", "version": __version__}},
                    deadline)
                client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                tools = _list_all(client, "tools/list", "tools", deadline)
                caps = init.get("capabilities") if isinstance(init.get("capabilities"),
                                                              dict) else {}
                extra: dict[str, list[dict[str, Any]]] = {}
                for cap, method in (("resources", "resources/list"),
                                    ("prompts", "prompts/list")):
                    if cap in caps:
                        try:
                            extra[cap] = _list_all(client, method, cap, deadline)
                        except _Failed:  # declared but not served offline: the tools stand
                            extra[cap] = []
            except _Failed as exc:
                reason = exc.reason
                if "in time" in reason:
                    reason = reason.replace("in time", f"within {timeout:g} s")
                raise _Failed(exc.stage, reason + client.garbage_note()
                              + _stderr(errlog)) from None
        finally:
            confined.kill(proc.pid)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            confined.release()
            errlog.close()
    return {"init": init, "tools": tools, **extra}


def _stderr(errlog: Any) -> str:
    errlog.flush()
    errlog.seek(0)
    text = errlog.read().decode("utf-8", errors="replace").strip()
    return f"\n--- server stderr ---\n{_tail(text)}" if text else ""


def _check_tools(tools: list[Any]) -> None:
    if not tools:
        raise _Failed("list", "it lists no tools")
    names: set[str] = set()
    for i, tool in enumerate(tools):
        try:
            parsed = mcp_types.Tool.model_validate(tool)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise _Failed("list", f"tools/list tool #{i + 1} is malformed ({where}: "
                                  f"{first['msg']})") from None
        if parsed.name in names:
            raise _Failed("list", f"tools/list names tool {parsed.name!r} twice")
        names.add(parsed.name)


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
