"""`agent-world …`: the command line (Typer + Rich).

Every command works on the catalog in the arena home (`--home`, $AGENT_WORLD_HOME, default
~/.agent_world). Errors the user can fix print as one message, never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from agent_world import __version__
from agent_world.config import resolve_home
from agent_world.errors import AgentWorldError, SpecError

console = Console()
err_console = Console(stderr=True, soft_wrap=True)


class _Group(TyperGroup):
    """Turns the project's own errors into one clean message (exit code 1, no traceback)."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AgentWorldError as exc:
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(1) from None


app = typer.Typer(cls=_Group, no_args_is_help=True, add_completion=False,
                  help="Agent-World arena: mine tool ecosystems into executable environments, "
                       "synthesize verifiable tasks, train tool-using agents.")
env_app = typer.Typer(cls=_Group, no_args_is_help=True,
                      help="Environments: list, show, import, serve over MCP, play tool calls.")
app.add_typer(env_app, name="env")


class State:
    home: Path | None = None

    def catalog(self):  # noqa: ANN201 - imported lazily: keeps `--help` fast
        from agent_world.envs.catalog import Catalog
        from agent_world.envs.examples import example_names, load_example

        cat = Catalog.open(self.home)
        for name in example_names():  # the bundled examples are always there to try
            if not cat.has_env(name):
                cat.put_env(load_example(name), stage="example")
        return cat


state = State()


@app.callback()
def _root(
    home: Annotated[Path | None, typer.Option(
        "--home", envvar="AGENT_WORLD_HOME",
        help="Arena home: catalog, checkpoints, runs. Default ~/.agent_world.")] = None,
) -> None:
    state.home = resolve_home(home)


@app.command()
def version() -> None:
    """Print the version."""
    console.print(f"agent-world {__version__}")


# ---- env ----------------------------------------------------------------------------------
def resolve_env(ref: str):  # noqa: ANN201
    """An environment by catalog name, JSON file path, or bundled example name."""
    from agent_world.envs.spec import EnvSpec

    path = Path(ref)
    if path.suffix == ".json" or path.exists():
        if not path.exists():
            raise SpecError(f"{ref}: no such file")
        return EnvSpec.load(path)
    return state.catalog().get_env(ref)


@env_app.command("list")
def env_list(stage: Annotated[str | None, typer.Option(help="Only this stage "
                                                       "(example, mined, built, ...).")] = None
             ) -> None:
    """List the catalog's environments."""
    envs = state.catalog().list_envs(stage=stage)
    table = Table(title=f"Environments ({len(envs)})")
    for col in ("name", "ver", "stage", "taxonomy", "tables", "rows", "tools", "fingerprint"):
        table.add_column(col, justify="right" if col in ("ver", "tables", "rows", "tools") else "left",
                         no_wrap=col in ("name", "fingerprint"))
    for e in envs:
        table.add_row(e.name, str(e.version), e.stage, e.taxonomy, str(e.stats.get("tables", "")),
                      str(e.stats.get("rows", "")), str(e.stats.get("tools", "")), e.fingerprint)
    console.print(table)


@env_app.command("show")
def env_show(env: Annotated[str, typer.Argument(help="Catalog name, example name or JSON file.")],
             as_json: Annotated[bool, typer.Option("--json", help="Print the whole spec.")] = False
             ) -> None:
    """Show an environment: theme, tables, tools."""
    spec = resolve_env(env)
    if as_json:
        sys.stdout.write(spec.to_json() + "\n")
        return
    console.print(f"[bold]{spec.name}[/] v{spec.version}  fingerprint {spec.fingerprint}")
    console.print(f"theme: {spec.theme.name} — {spec.theme.taxonomy}")
    if spec.theme.description:
        console.print(spec.theme.description)
    tables = Table(title="Tables")
    for col in ("table", "columns", "rows", "references"):
        tables.add_column(col)
    for t in spec.tables:
        refs = sorted({c.foreign_key.split(".")[0] for c in t.columns if c.foreign_key})
        tables.add_row(t.name, ", ".join(c.name for c in t.columns),
                       str(len(spec.rows.get(t.name, []))), ", ".join(refs))
    console.print(tables)
    tools = Table(title="Tools")
    for col in ("tool", "kind", "arguments", "description"):
        tools.add_column(col)
    for t in spec.tools:
        args = ", ".join(f"{k}{'' if k in t.parameters.get('required', []) else '?'}"
                         for k in t.parameters.get("properties", {}))
        tools.add_row(t.name, "write" if t.mutates else "read", args, t.description.split("\n")[0])
    console.print(tools)
    console.print(f"{len(spec.tests)} tool tests; provenance: {spec.provenance.created_by} "
                  f"({spec.provenance.source_kind} {spec.provenance.source_ref})".rstrip())


@env_app.command("import")
def env_import(files: Annotated[list[Path], typer.Argument(help="EnvSpec JSON files.")],
               stage: Annotated[str, typer.Option(help="Stage label to store.")] = "manual"
               ) -> None:
    """Validate EnvSpec files and store them in the catalog (a changed spec becomes a new
    version)."""
    from agent_world.envs.spec import EnvSpec

    cat = state.catalog()
    for f in files:
        summary = cat.put_env(EnvSpec.load(f), stage=stage)
        console.print(f"imported [bold]{summary.name}[/] v{summary.version} "
                      f"({summary.fingerprint}) from {f}")


@env_app.command("serve")
def env_serve(
    env: Annotated[str, typer.Argument(help="Catalog name, example name or JSON file.")],
    transport: Annotated[str, typer.Option(help="stdio or http (streamable HTTP).")] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8765,
    seed: Annotated[int, typer.Option(help="Episode seed (clock and ids).")] = 0,
) -> None:
    """Serve an environment as an MCP server; each client session gets an isolated episode."""
    from agent_world.envs.mcp_export import serve

    if transport not in ("stdio", "http"):
        raise typer.BadParameter("must be 'stdio' or 'http'", param_hint="--transport")
    spec = resolve_env(env)
    if transport == "http":
        err_console.print(f"serving {spec.name} over MCP at http://{host}:{port}/mcp")
    serve(spec, transport=transport, host=host, port=port, seed=seed)  # type: ignore[arg-type]


def _read_calls(path: str) -> list[dict[str, Any]]:
    text = sys.stdin.read() if path == "-" else Path(path).read_text() if Path(path).exists() \
        else None
    if text is None:
        raise SpecError(f"{path}: no such file")
    try:
        calls = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if isinstance(calls, dict):
        calls = [calls]
    if not isinstance(calls, list) or not all(isinstance(c, dict) and "tool" in c for c in calls):
        raise SpecError(f"{path}: expected a list of {{\"tool\": NAME, \"arguments\": {{...}}}}")
    return calls


@env_app.command("play")
def env_play(
    env: Annotated[str, typer.Argument(help="Catalog name, example name or JSON file.")],
    calls: Annotated[str, typer.Argument(help="JSON file with a list of {tool, arguments}; "
                                              "'-' reads standard input.")],
    seed: Annotated[int, typer.Option(help="Episode seed (clock and ids).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Run tool calls in a fresh episode; print every observation and the state diff."""
    from agent_world.envs.episode import EnvRuntime

    spec = resolve_env(env)
    plan = _read_calls(calls)
    with EnvRuntime() as runtime:
        ep = runtime.open(spec, seed=seed)
        observations = [ep.step(c["tool"], c.get("arguments", {})) for c in plan]
        diff = ep.diff()
        state_hash = ep.state_hash()
    if as_json:
        out = {"observations": [o.model_dump(mode="json", exclude={"elapsed_ms"})
                                for o in observations],
               "diff": diff.model_dump(mode="json"), "state_hash": state_hash}
        sys.stdout.write(json.dumps(out, indent=2, default=str) + "\n")
        return
    _print_observations(observations)
    _print_diff(diff)


def _print_observations(observations: list[Any]) -> None:
    for o in observations:
        head = f"[bold]#{o.step} {o.tool}[/]({json.dumps(o.arguments)})"
        if o.ok:
            text = json.dumps(o.result, default=str)
            console.print(f"{head} → [green]ok[/] {text[:400]}{'…' if len(text) > 400 else ''}")
        else:
            console.print(f"{head} → [red]{o.error.kind}[/] ({o.error.fault} fault): "
                          f"{o.error.message}")


def _print_diff(diff: Any) -> None:
    table = Table(title="State diff since reset")
    for col in ("table", "inserted", "updated", "deleted"):
        table.add_column(col, justify="left" if col == "table" else "right")
    for name, c in diff.counts().items():
        table.add_row(name, str(c["inserted"]), str(c["updated"]), str(c["deleted"]))
    if diff.empty:
        table.add_row("(no changes)", "", "", "")
    console.print(table)


# ---- mining -------------------------------------------------------------------------------
@app.command()
def mine(
    source: Annotated[list[str] | None, typer.Option(
        "--source", "-s",
        help="mcp:\"CMD ARGS\" | mcp-url:URL | file:PATH (tool-list JSON, OpenAPI, PRD .md). "
             "Repeatable. None: the embedded default servers and documents.")] = None,
    iterations: Annotated[int, typer.Option(help="Database complexification iterations.")] = 3,
    seed: Annotated[int, typer.Option(help="Seed for generated data.")] = 0,
    thread: Annotated[str | None, typer.Option(
        help="Graph thread id; reuse it with --resume to continue a killed run.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue the thread where it stopped.")] = False,
    web_search: Annotated[str | None, typer.Option(
        envvar="AGENT_WORLD_WEB_SEARCH",
        help="A web-search tool for the miner: mcp:\"CMD\"#TOOL or mcp-url:URL#TOOL.")] = None,
) -> None:
    """Mine tool ecosystems into themes, a taxonomy and complexified databases."""
    _run_mine(source or [], iterations, seed, thread, resume, web_search)


def _run_mine(sources: list[str], iterations: int, seed: int, thread: str | None,
              resume: bool, web_search: str | None = None) -> dict[str, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from agent_world.graphs import mine as mine_graph
    from agent_world.graphs.runner import final_state, stream, thread_config
    from agent_world.tools.sources import default_sources, parse_source

    if resume and not thread:
        raise typer.BadParameter("--resume needs the --thread of the run to continue")
    for s in sources:
        parse_source(s)  # a malformed --source fails here, before anything runs
    config = thread_config(thread, state.home)
    builder = mine_graph.build_graph()
    if resume:
        values, pending = final_state(builder, config)
        if not values:
            raise typer.BadParameter(f"thread {thread!r} has no run to resume")
        total = len(values.get("sources", []))
        inputs = None
    else:
        total = len(sources) or len(default_sources())
        inputs = {"sources": sources, "iterations": iterations, "seed": seed,
                  "web_search": web_search}
    err_console.print(f"mine: thread [bold]{config['configurable']['thread_id']}[/] "
                      f"(resume with --thread ... --resume)")
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=False) as progress:
        bar = progress.add_task("mining sources", total=total)
        done = 0
        for update in stream(builder, inputs, config):
            # on resume, branches finished before the interruption are replayed from the
            # checkpoint (flagged cached), not run again
            cached = (update.get("__metadata__") or {}).get("cached", False)
            out = update.get("mine_source") or {}
            for r in out.get("results", []):
                done += 1
                mark = "[green]✓[/]" if r["status"] == "mined" else "[red]✗[/]"
                what = f" → {r['theme']}" if r["status"] == "mined" else f": {r['error']}"
                note = " [dim](from checkpoint)[/]" if cached else ""
                progress.console.print(f"  {mark} {escape(r['source'])}{escape(what)}{note}")
                progress.update(bar, completed=done)
    values, _ = final_state(builder, config)
    _print_mine_report(values)
    return values


def _print_mine_report(values: dict[str, Any]) -> None:
    results = values.get("results", [])
    table = Table(title="Mined databases, per complexification iteration")
    for col in ("theme", "iter", "tables", "rows", "foreign keys", "constraints"):
        table.add_column(col, justify="left" if col == "theme" else "right")
    for r in results:
        if r["status"] != "mined":
            continue
        for i, st in enumerate(r["stats"]):
            table.add_row(r["theme"] if i == 0 else "", str(st.get("iteration", i)),
                          str(st["tables"]), str(st["rows"]), str(st["foreign_keys"]),
                          str(st["constraints"]))
    console.print(table)
    summary = values.get("summary", {})
    if summary:
        console.print(f"sources {summary['sources']}: mined {summary['mined']}, failed "
                      f"{summary['failed']}; themes {summary['themes']} after merging "
                      f"{summary['merged']} near-duplicate(s)")
    for r in results:
        if r["status"] == "failed":
            console.print(f"[red]failed[/] {r['source']}: {r['error']}")


@app.command()
def themes() -> None:
    """The theme taxonomy as a tree (L1 category / L2 sub-category / L3 server)."""
    from rich.tree import Tree

    rows = state.catalog().list_themes()
    root = Tree(f"[bold]Themes ({len(rows)})[/]")
    l1s: dict[str, Any] = {}
    l2s: dict[tuple[str, str], Any] = {}
    for r in rows:
        l1 = l1s.get(r["l1"]) or l1s.setdefault(r["l1"], root.add(f"[bold]{r['l1']}[/]"))
        key = (r["l1"], r["l2"])
        l2 = l2s.get(key) or l2s.setdefault(key, l1.add(r["l2"]))
        env = f" → env [cyan]{r['env_name']}[/]" if r["env_name"] else ""
        name = "" if r["name"] == r["l3"] else f": {escape(r['name'])}"
        about = (r["payload"].get("theme") or {}).get("description", "")
        about = f" — [dim]{escape(about[:70])}{'…' if len(about) > 70 else ''}[/]" if about else ""
        l2.add(f"[bold]{escape(r['l3'])}[/]{name} ({r['source_kind']}){env}{about}")
    console.print(root)


# ---- the main job ---------------------------------------------------------------------------
@app.command()
def run(
    source: Annotated[list[str] | None, typer.Option(
        "--source", "-s", help="Extra sources to mine besides the embedded default.")] = None,
    iterations: Annotated[int, typer.Option(help="Complexification iterations.")] = 3,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
) -> None:
    """The main job on the embedded default: mine the bundled tool ecosystems, show the
    taxonomy, then step an example environment and show its state diff."""
    from agent_world.envs.episode import EnvRuntime
    from agent_world.envs.examples import tour_calls
    from agent_world.tools.sources import default_sources

    sources = [ref.spec for ref in default_sources()] + list(source or [])
    console.rule("[bold]1. Mine tool ecosystems")
    _run_mine(sources, iterations, seed, None, False)
    console.rule("[bold]2. Theme taxonomy")
    themes()
    console.rule("[bold]3. Environments in the catalog")
    env_list(stage=None)
    console.rule("[bold]4. An episode of the airline example")
    spec = state.catalog().get_env("airline")
    plan = tour_calls(spec)
    with EnvRuntime() as runtime:
        ep = runtime.open(spec, seed=seed)
        _print_observations([ep.step(c["tool"], c["arguments"]) for c in plan])
        _print_diff(ep.diff())
    console.print("\nNext: [bold]agent-world env serve airline[/] (MCP), "
                  "[bold]agent-world env show <name>[/], [bold]langgraph dev[/] (Studio).")


def main() -> None:
    app()


if __name__ == "__main__":
    main()


__all__ = ["app", "main", "resolve_env"]
