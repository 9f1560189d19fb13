"""`agent-world mine` and `agent-world themes`: tool ecosystems → themes, taxonomy, databases."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from agent_world.cli.common import console, err_console, state


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
    run_mine(source or [], iterations, seed, thread, resume, web_search)


def run_mine(sources: list[str], iterations: int, seed: int, thread: str | None,
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
    _print_fidelity(results)
    summary = values.get("summary", {})
    if summary:
        console.print(f"sources {summary['sources']}: mined {summary['mined']}, failed "
                      f"{summary['failed']}; themes {summary['themes']} after merging "
                      f"{summary['merged']} near-duplicate(s)")
    for r in results:
        if r["status"] == "failed":
            console.print(f"[red]failed[/] {r['source']}: {r['error']}")


def _print_fidelity(results: list[dict[str, Any]]) -> None:
    """Per theme: source tools covered by the database, semantic violations per rule."""
    from agent_world.agents.semantics import RULES

    mined = [r for r in results if r["status"] == "mined" and "coverage" in r]
    if not mined:
        return
    table = Table(title="Tool coverage and semantic violations of the stored databases")
    table.add_column("theme")
    table.add_column("source tools covered", justify="right")
    table.add_column("violations", justify="right")
    table.add_column("by rule")
    for r in mined:
        cov, vio = r["coverage"], r.get("violations") or {}
        by_rule = ", ".join(f"{rule} {vio[rule]}" for rule in RULES if vio.get(rule))
        table.add_row(r["theme"], coverage_line(cov), str(sum(vio.values())), by_rule or "-")
    console.print(table)


def coverage_line(cov: dict[str, Any] | None) -> str:
    from agent_world.agents.coverage import coverage_line as line

    return line(cov)


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
        cov = r["payload"].get("coverage")
        env += f" [dim]({coverage_line(cov)} covered)[/]" if cov else ""
        about = (r["payload"].get("theme") or {}).get("description", "")
        about = f" — [dim]{escape(about[:70])}{'…' if len(about) > 70 else ''}[/]" if about else ""
        l2.add(f"[bold]{escape(r['l3'])}[/]{name} ({r['source_kind']}){env}{about}")
    console.print(root)
