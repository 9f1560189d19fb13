"""The arena's graphs and agents as MCP tools (`agent-world serve-graphs`).

Every graph of `langgraph.json` (mine, build, synthesize, evolve, ... and each agent graph) is
one MCP tool of the same name. Its arguments are the graph's input schema, plus:

* `thread_id`: the durable thread to run on (default: a new one); with `resume: true` an
  unfinished run on that thread continues where it stopped instead of starting anew;
* `resume_value`: with `resume`, the answer a run paused by an interrupt receives (evolve's
  review before training: true trains, false skips the round's training; default true);
* `context`: the graph's run configuration (its context schema: what Studio shows); a resumed
  run without one gets none (the graph uses what its thread stored).

A call runs the graph through `graphs.runner` on the server's arena home, so every step is
checkpointed exactly as from the CLI, and returns `{"thread_id", "status", "state", "pending"}`
(the final state: identifiers and summaries; big artefacts are in the catalog). `status` is
"done", or "paused" when the run stopped at an interrupt (evolve with `review_before_train`):
then `paused` holds what it asks (the round's diagnosis) and `resume_with` the arguments of the
call that continues it. Each finished node is
reported as an MCP progress notification when the client asks for progress. Three read-only
tools show what the runs stored: `list_environments`, `list_tasks`, `list_runs`.

A client is trusted with the server's user only as far as its flags say. Over HTTP (any local
user can reach the port; it also needs the bearer token, see `agent_world.serving`) a call that
names a local command (an `mcp:` source or web search, in the inputs, the context or evolve's
`settings`) is refused unless the server runs with `allow_commands` (`--allow-commands`), and
one that names a path on the server (another arena `home`, a file to mine outside the bundled
sources, a checkpoint directory as policy or a model path) unless with `allow_client_paths`
(`--allow-client-paths`). The fields are found by name, in every graph and nested dict. Over
stdio the client is whoever started the server: it may do both.

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    params = StdioServerParameters(command="agent-world", args=["serve-graphs"])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        await s.call_tool("synthesize", {"envs": ["airline"], "per_env": 2})
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import pkgutil
import re
import signal
import sys
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args, get_type_hints

import anyio
import anyio.from_thread
import anyio.to_thread
from langgraph.types import Command
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool
from pydantic import TypeAdapter, ValidationError

import agent_world.graphs
from agent_world.config import resolve_home
from agent_world.envs.catalog import Catalog
from agent_world.errors import AgentWorldError
from agent_world.graphs.runner import final_state, paused, stream, thread_config
from agent_world.mining.sources import DATA_DIR, FileKind
from agent_world.serving import announce_token, resolve_token, serve_http

RESULT_LIMIT = 200_000  # characters of final state a tool call returns
RESERVED_ARGS = ("thread_id", "resume", "resume_value", "context")
COMMANDS_FLAG, PATHS_FLAG = "--allow-commands", "--allow-client-paths"
COMMANDS_DANGER = ("dangerous: any client could then run any command as the server's user")
PATHS_DANGER = ("dangerous: any client could then read and write files anywhere the server's "
                "user can")
# fields of graph inputs and contexts that name a source, a web search, an arena home, a policy
# or a chat model (`<role>_model`, `model`)
SOURCE_FIELDS, HOME_FIELDS = ("sources", "source", "web_search"), ("home",)
POLICY_FIELDS = ("policy", "policy_before")
NAMED_POLICIES = ("", "baseline", "tiny", "smollm2")
_PROVIDER = re.compile(r"[A-Za-z][\w.+-]*:")  # "provider:model"


@dataclasses.dataclass(frozen=True)
class GraphEntry:
    name: str
    module: str
    attr: str = "graph"

    def compiled(self) -> Any:
        return getattr(importlib.import_module(self.module), self.attr)

    def description(self) -> str:
        doc = (importlib.import_module(self.module).__doc__ or "").strip()
        first = doc.split("\n\n")[0].replace("\n", " ").strip()
        return first or f"the {self.name} graph"


def _manifest() -> Path:
    return Path(__file__).resolve().parents[2] / "langgraph.json"


@lru_cache(maxsize=1)
def graph_entries() -> tuple[GraphEntry, ...]:
    """The graphs of `langgraph.json`; an install without it (a wheel) finds every module
    under `agent_world.graphs` that defines a compiled `graph`."""
    manifest = _manifest()
    if manifest.is_file():
        out = []
        for name, ref in json.loads(manifest.read_text())["graphs"].items():
            path, _, attr = ref.partition(":")
            module = path.removeprefix("./").removesuffix(".py").replace("/", ".")
            out.append(GraphEntry(name, module, attr or "graph"))
        return tuple(out)
    out = []
    for info in pkgutil.walk_packages(agent_world.graphs.__path__, "agent_world.graphs."):
        if info.ispkg:
            continue
        module = importlib.import_module(info.name)
        if hasattr(getattr(module, "graph", None), "builder"):
            # the names langgraph.json gives: evolve_graph -> evolve, agents.miner_agent -> miner
            stem = info.name.rsplit(".", 1)[-1].removesuffix("_graph").removesuffix("_agent")
            out.append(GraphEntry(stem, info.name))
    return tuple(out)


def _context(builder: Any, raw: dict[str, Any] | None) -> Any:
    """The run context a graph's context schema describes (a dataclass or TypedDict), from the
    tool's `context` object, type-checked; unknown keys are refused."""
    schema = getattr(builder, "context_schema", None)
    if schema is None:
        if raw:
            raise ToolError("this graph takes no context")
        return None
    raw = dict(raw or {})
    known = ({f.name for f in dataclasses.fields(schema)} if dataclasses.is_dataclass(schema)
             else set(get_type_hints(schema)))
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ToolError(f"unknown context keys {unknown}; known: {sorted(known)}")
    try:
        return TypeAdapter(schema).validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ToolError(f"context.{where}: {first['msg']}") from None


def _input_schema(compiled: Any) -> tuple[dict[str, Any], list[str]]:
    """A graph's input fields as JSON schema properties and the required ones (({}, []) when
    its input schema cannot be expressed: the tool then takes any arguments and the graph
    checks them)."""
    try:
        schema = compiled.get_input_jsonschema()
    except Exception:
        return {}, []
    props = {k: v for k, v in schema.get("properties", {}).items() if k not in RESERVED_ARGS}
    return props, [r for r in schema.get("required", []) if r in props]


def _resolved(path: str) -> Path | None:
    """`path` with `~`, links and `..` resolved (None: not a usable path)."""
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):  # unknown ~user, NUL byte, link loop
        return None


def _inside(path: str, root: Path) -> bool:
    found = _resolved(path)
    return found is not None and found.is_relative_to(root)


def _exists(path: str) -> bool:
    found = _resolved(path)
    return found is not None and found.exists()


def _local_path(value: str) -> bool:
    """Whether a model or policy reference's text is a filesystem path."""
    return value.startswith(("/", "~", ".", "\\")) or _exists(value)


class GraphServer(FastMCP):
    """A FastMCP server whose tools run the arena's graphs on durable threads. Its clients may
    name local commands only with `allow_commands`, paths only with `allow_client_paths`."""

    def __init__(self, home: str | Path | None = None, graphs: Sequence[str] | None = None,
                 allow_commands: bool = False, allow_client_paths: bool = False,
                 **settings: Any):
        super().__init__(name="agent-world-graphs", instructions=(
            "The Agent-World arena's graphs and agents: mine sources, build tools, synthesize "
            "tasks, evaluate, run self-evolution rounds. Each call runs on a durable thread."),
            **settings)
        self.home = resolve_home(home)
        self.allow_commands, self.allow_client_paths = allow_commands, allow_client_paths
        entries = graph_entries()
        if graphs:
            known = {e.name for e in entries}
            unknown = sorted(set(graphs) - known)
            if unknown:
                raise AgentWorldError(f"unknown graphs {unknown}; graphs: {sorted(known)}")
            entries = tuple(e for e in entries if e.name in graphs)
        self.entries = {e.name: e for e in entries}

    # -- tools/list ----------------------------------------------------------------------------
    def _graph_tool(self, entry: GraphEntry) -> MCPTool:
        compiled = entry.compiled()
        props, required = _input_schema(compiled)
        props["thread_id"] = {"type": "string", "description": "Durable thread to run on "
                              "(default: a new thread)."}
        props["resume"] = {"type": "boolean", "default": False, "description": (
            "Continue the unfinished run on thread_id instead of starting a new one.")}
        props["resume_value"] = {"description": (
            "With resume: the answer a run paused for review receives (evolve: true trains, "
            "false skips this round's training). Default true.")}
        try:
            ctx_schema = compiled.get_context_jsonschema()
        except Exception:  # a schema pydantic cannot express: the context stays a free object
            ctx_schema = {"type": "object"}
        if ctx_schema:
            props["context"] = {**ctx_schema, "description": "Run configuration: "
                                + (ctx_schema.get("description") or ctx_schema.get("title", ""))}
        # `required` stays out of the schema (a resumed run takes only thread_id); the call
        # checks it and the description names it
        needs = f" Required unless resuming: {', '.join(required)}." if required else ""
        return MCPTool(name=entry.name, description=entry.description() + (
            " Runs checkpointed on a durable thread; returns thread_id, status (done or "
            "paused for review: call again with thread_id and resume), final state and "
            "pending nodes.") + needs, inputSchema={"type": "object", "properties": props},
            annotations=ToolAnnotations(readOnlyHint=False, openWorldHint=entry.name in (
                "mine", "miner", "evolve")))

    async def list_tools(self) -> list[MCPTool]:
        tools = [self._graph_tool(e) for e in self.entries.values()]
        ro = ToolAnnotations(readOnlyHint=True)
        tools += [
            MCPTool(name="list_environments", annotations=ro,
                    description="Environments in the catalog: name, stage, tool count.",
                    inputSchema={"type": "object", "properties": {
                        "stage": {"type": "string", "description": "Only this stage."}}}),
            MCPTool(name="list_tasks", annotations=ro,
                    description="Tasks in the catalog: id, environment, kind, level, "
                                "instruction.",
                    inputSchema={"type": "object", "properties": {
                        "env": {"type": "string", "description": "Only this environment."},
                        "limit": {"type": "integer", "default": 50}}}),
            MCPTool(name="list_runs", annotations=ro,
                    description="Recent graph runs: id, kind, status, summary.",
                    inputSchema={"type": "object", "properties": {
                        "kind": {"type": "string"}, "limit": {"type": "integer",
                                                              "default": 20}}}),
        ]
        return tools

    # -- tools/call ----------------------------------------------------------------------------
    async def call_tool(self, name: str, arguments: dict[str, Any]
                        ) -> tuple[list[TextContent], dict[str, Any]]:
        """The result as JSON text and as structured content (the same object; both cut to
        RESULT_LIMIT characters of state when it is larger)."""
        arguments = dict(arguments or {})
        try:
            if name in self.entries:
                result = await self._run_graph(self.entries[name], arguments)
            elif name in ("list_environments", "list_tasks", "list_runs"):
                result = await anyio.to_thread.run_sync(self._read_catalog, name, arguments)
            else:
                raise ToolError(f"unknown tool {name!r}; tools: "
                                f"{sorted(self.entries) + ['list_environments', 'list_tasks', 'list_runs']}")
        except AgentWorldError as exc:  # a bad input: one clear message to the client
            raise ToolError(f"{type(exc).__name__}: {exc}") from None
        text = json.dumps(result, default=str, ensure_ascii=False)
        if len(text) > RESULT_LIMIT:
            result = {"truncated": True, **{k: result[k] for k in (
                "thread_id", "status", "pending", "paused", "resume_with") if k in result},
                "head": text[:RESULT_LIMIT]}
            text = json.dumps(result, default=str, ensure_ascii=False)
        return [TextContent(type="text", text=text)], json.loads(text)

    # -- what a client may name ----------------------------------------------------------------
    def _refuse_command(self, where: str, value: str) -> None:
        if not self.allow_commands:
            raise ToolError(f"{where}: {value!r} starts a local command, and this server runs "
                            f"no command a client names (start it with {COMMANDS_FLAG}: "
                            f"{COMMANDS_DANGER})")

    def _refuse_path(self, where: str, value: str, what: str) -> None:
        if not self.allow_client_paths:
            raise ToolError(f"{where}: {value!r} names {what} on the server, and this server "
                            f"takes no path from its clients (start it with {PATHS_FLAG}: "
                            f"{PATHS_DANGER})")

    def _check_source(self, where: str, spec: str) -> None:
        """A source or web search spec (as `mining.sources.parse_source` reads it): `mcp:`
        starts a command; a file outside the bundled sources is a path; URLs are fine."""
        spec = spec.strip()
        prefix, sep, rest = spec.partition(":")
        prefix = prefix.lower()
        if sep and prefix == "mcp":
            self._refuse_command(where, spec)
            return
        if sep and prefix in ("file", *get_args(FileKind)):
            path = rest.strip()
        elif not spec.lower().startswith(("http://", "https://")) and not (
                sep and prefix.startswith("mcp")) and _exists(spec):
            path = spec  # a bare path the source reader would open
        else:
            return  # a URL, or something the graph refuses by itself
        if not _inside(path, DATA_DIR):
            self._refuse_path(where, spec, "a file to read")

    def _check_fields(self, where: str, value: Any) -> None:
        """Every field of a call's inputs or context (nested dicts and lists too) that names
        a command or a path, refused as the server's flags say."""
        if isinstance(value, list):
            for i, item in enumerate(value):
                self._check_fields(f"{where}[{i}]", item)
            return
        if not isinstance(value, dict):
            return
        for key, item in value.items():
            at = f"{where}.{key}" if where else str(key)
            if isinstance(item, str) and key in SOURCE_FIELDS:
                self._check_source(at, item.partition("#")[0] if key == "web_search" else item)
            elif isinstance(item, list) and key in SOURCE_FIELDS:
                for i, spec in enumerate(item):
                    if isinstance(spec, str):
                        self._check_source(f"{at}[{i}]", spec)
            elif isinstance(item, str) and item and key == "ray_address":
                # work sent to a cluster the client names comes back pickled: as good as
                # running the client's code here
                if not self.allow_commands:
                    raise ToolError(f"{at}: {item!r} names a Ray cluster, and this server sends "
                                    f"no work to a cluster a client names (start it with "
                                    f"{COMMANDS_FLAG}: {COMMANDS_DANGER})")
            elif isinstance(item, str) and item and key in HOME_FIELDS:
                if _resolved(item) != self.home:
                    self._refuse_path(at, item, "another arena home")
            elif isinstance(item, str) and key in POLICY_FIELDS:
                # a checkpoint the server's own runs wrote (in its home) is fine
                if item not in NAMED_POLICIES and not _inside(item, self.home) and (
                        not _PROVIDER.match(item) or _local_path(item)
                        or _local_path(item.split(":", 1)[1])):
                    self._refuse_path(at, item, "a checkpoint directory")
            elif isinstance(item, str) and (key == "model" or str(key).endswith("_model")):
                if ":" in item and _local_path(item.split(":", 1)[1]):
                    self._refuse_path(at, item, "a local model")
            else:
                self._check_fields(at, item)

    async def _run_graph(self, entry: GraphEntry, args: dict[str, Any]) -> dict[str, Any]:
        compiled = entry.compiled()
        builder = compiled.builder
        raw_context = args.pop("context", None)
        self._check_fields("", {k: v for k, v in args.items() if k not in RESERVED_ARGS})
        self._check_fields("context", raw_context)
        thread_id, resume = args.pop("thread_id", None), bool(args.pop("resume", False))
        # a resumed run without a context gets none, as from a LangGraph server: the graph
        # falls back to what its thread stored (evolve: the review setting of its first round)
        context = None if resume and raw_context is None else _context(builder, raw_context)
        if "resume_value" in args and not resume:
            raise ToolError("resume_value answers a paused run: give it with resume: true")
        answer = args.pop("resume_value", True)
        props, required = _input_schema(compiled)
        unknown = sorted(set(args) - set(props))
        if props and unknown:
            raise ToolError(f"unknown arguments {unknown} for {entry.name}; arguments: "
                            f"{sorted(set(props) | set(RESERVED_ARGS))}")
        if resume and args:
            raise ToolError("resume continues a run as it was: give only thread_id")
        missing = [r for r in required if r not in args]
        if not resume and missing:
            raise ToolError(f"missing arguments {missing} for {entry.name}")
        if resume and not thread_id:
            raise ToolError("resume needs the thread_id of the run to continue")
        config = thread_config(thread_id, self.home)
        thread = config["configurable"]["thread_id"]
        progress = self._progress_reporter()

        def run() -> dict[str, Any]:
            inputs: Any = args
            asked = paused(builder, config) if thread_id else []
            if resume:
                _, pending = final_state(builder, config)
                if not pending:
                    raise ToolError(f"thread {thread!r} has nothing left to run")
                # a paused node asks again when resumed with None: it needs the answer
                inputs = Command(resume=answer) if asked else None
            elif asked:
                raise ToolError(f"thread {thread!r} is paused for review; continue it with "
                                f"{json.dumps(self._resume_args(thread))}")
            done = 0
            for update in stream(builder, inputs, config, context=context):
                nodes = [n for n in update if n != "__interrupt__"]
                if nodes:
                    done += 1
                    if progress is not None:
                        anyio.from_thread.run(progress, done, ", ".join(nodes))
            values, pending = final_state(builder, config)
            out = {"thread_id": thread, "graph": entry.name, "status": "done",
                   "state": values, "pending": pending}
            asked = paused(builder, config)
            if asked:
                out.update(status="paused", paused=asked, resume_with=self._resume_args(thread))
            elif pending:
                out["status"] = "unfinished"
            return out

        return await anyio.to_thread.run_sync(run)

    @staticmethod
    def _resume_args(thread: str) -> dict[str, Any]:
        """The arguments of the call that continues a paused thread (resume_value false:
        evolve skips the round's training)."""
        return {"thread_id": thread, "resume": True, "resume_value": True}

    def _progress_reporter(self) -> Any:
        """An async callable reporting one finished node, or None when the client did not
        ask for progress (no progress token)."""
        try:
            ctx = self.get_context()
            meta = ctx.request_context.meta
        except (ValueError, LookupError):
            return None
        if meta is None or getattr(meta, "progressToken", None) is None:
            return None

        async def report(done: int, nodes: str) -> None:
            await ctx.report_progress(done, None, f"{nodes} done")

        return report

    def _read_catalog(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        with Catalog.open(self.home) as cat:
            if name == "list_environments":
                envs = cat.list_envs(stage=args.get("stage"))
                return {"environments": [{"name": e.name, "stage": e.stage,
                                          "tools": e.stats.get("tools", 0),
                                          "fingerprint": e.fingerprint} for e in envs]}
            if name == "list_tasks":
                rows = cat.list_tasks()
                tasks = [r["payload"] for r in rows]
                if args.get("env"):
                    tasks = [t for t in tasks if t.get("env_name") == args["env"]]
                limit = int(args.get("limit") or 50)
                return {"count": len(tasks), "tasks": [
                    {"id": t.get("id"), "env": t.get("env_name"), "kind": t.get("kind"),
                     "level": (t.get("difficulty") or {}).get("level"),
                     "instruction": t.get("instruction")} for t in tasks[:limit]]}
            runs = cat.list_runs(kind=args.get("kind"), limit=int(args.get("limit") or 20))
            return {"runs": runs}


def serve(home: str | Path | None = None, transport: Literal["stdio", "http"] = "stdio",
          host: str = "127.0.0.1", port: int = 8766, graphs: Sequence[str] | None = None,
          token: str | None = None, allow_commands: bool = False,
          allow_client_paths: bool = False) -> None:
    """Serve the graphs until the client disconnects (stdio) or the process is stopped. Over
    HTTP every request needs the bearer token (`token`, else a new one, printed), and clients
    name commands and paths only as the flags allow; over stdio the client is whoever started
    the server and may name both."""
    stdio = transport == "stdio"
    token, made = (None, False) if stdio else resolve_token(token)
    server = GraphServer(home, graphs=graphs, allow_commands=stdio or allow_commands,
                         allow_client_paths=stdio or allow_client_paths, host=host, port=port,
                         log_level="WARNING")

    def stop(signum: int, _frame: Any) -> None:
        print(f"stopped ({signal.Signals(signum).name})", file=sys.stderr, flush=True)
        os._exit(128 + signum)

    where = f"http://{host}:{port}/mcp" if transport == "http" else "stdio"
    print(f"serving {len(server.entries)} graphs ({', '.join(server.entries)}) over MCP at "
          f"{where}; arena home {server.home}; Ctrl-C stops", file=sys.stderr, flush=True)
    if token is not None:
        announce_token(token, made)
        for allowed, flag, danger in ((allow_commands, COMMANDS_FLAG, COMMANDS_DANGER),
                                      (allow_client_paths, PATHS_FLAG, PATHS_DANGER)):
            if allowed:
                print(f"warning: {flag}: {danger}", file=sys.stderr, flush=True)
    main = threading.current_thread() is threading.main_thread()
    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)} if main \
        else {}
    try:
        if token is None:
            server.run(transport="stdio")
        else:
            serve_http(server, token)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


__all__ = ["GraphEntry", "GraphServer", "graph_entries", "serve"]
