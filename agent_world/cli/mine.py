"""`agent-world mine` and `agent-world themes`: tool ecosystems → themes, taxonomy, databases."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.tree import Tree

from agent_world import scaleout
from agent_world.cli.common import (
    JsonOption,
    RayOption,
    UsageError,
    WorkersOption,
    console,
    err_console,
    fit_table,
    print_json,
    state,
)
from agent_world.errors import AgentWorldError
from agent_world.graphs import mine_graph
from agent_world.graphs.runner import final_state, stream, thread_config
from agent_world.mining.coverage import coverage_line as line
from agent_world.mining.llm_miner import MAX_ITERATIONS
from agent_world.mining.semantics.violations import RULES
from agent_world.mining.sources import default_sources, parse_source
from agent_world.mining.sources.harvest_corpus import corpus_sources


def mine(
    source: Annotated[list[str] | None, typer.Option(
        "--source", "-s",
        help="mcp:\"CMD ARGS\" | mcp-url:URL | file:PATH (tool-list JSON, OpenAPI, PRD .md). "
             "Repeatable. None: the embedded default servers and documents.")] = None,
    iterations: Annotated[int, typer.Option(
        help=f"Database complexification iterations, 0..{MAX_ITERATIONS}.")] = 3,
    seed: Annotated[int, typer.Option(help="Seed for generated data.")] = 0,
    thread: Annotated[str | None, typer.Option(
        help="Graph thread id; reuse it with --resume to continue a killed run.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue the thread where it stopped.")] = False,
    web_search: Annotated[str | None, typer.Option(
        envvar="AGENT_WORLD_WEB_SEARCH",
        help="A web-search tool for the miner: mcp:\"CMD\"#TOOL or mcp-url:URL#TOOL.")] = None,
    corpus: Annotated[bool, typer.Option(
        "--corpus", help="Also mine the shipped corpus of tool lists harvested from real MCP "
                         "servers (offline, nothing installed).")] = False,
    corpus_sample: Annotated[int | None, typer.Option(
        min=1, help="Only N servers of the corpus, drawn with --seed (implies --corpus).")
    ] = None,
    workers: WorkersOption = None,
    ray: RayOption = None,
    as_json: JsonOption = False,
) -> None:
    """Mine tool ecosystems into themes, a taxonomy and complexified databases. Exits 1 when
    any source failed (the others are mined and kept; `agent-world ledger` says why)."""
    sources = list(source or [])
    if corpus or corpus_sample is not None:
        sources += [ref.spec for ref in corpus_sources(corpus_sample, seed)]
    values = run_mine(sources, iterations, seed, thread, resume, web_search, quiet=as_json,
                      workers=workers, ray=ray)
    if as_json:
        print_json({k: values.get(k) for k in ("thread_id", "run_id", "status", "summary",
                                               "results", "merged")})
    if mine_failed(values):
        raise typer.Exit(1)


def mine_failed(values: dict[str, Any]) -> bool:
    return values.get("status") != "done"


def run_mine(sources: list[str], iterations: int, seed: int, thread: str | None,
             resume: bool, web_search: str | None = None, quiet: bool = False,
             workers: int | None = None, ray: str | None = None) -> dict[str, Any]:
    """Run (or resume) the mine graph on a durable thread with progress on stderr; returns
    the final state plus `thread_id` and `status` ("done", "partial" or "failed"). `workers`
    and `ray`: where sources are read and mined (`agent_world.scaleout`)."""
    if resume and not thread:
        raise UsageError("--resume needs the --thread of the run to continue")
    if not 0 <= iterations <= MAX_ITERATIONS:
        raise UsageError(f"--iterations must be between 0 and {MAX_ITERATIONS}, got {iterations}")
    for s in sources:
        try:
            parse_source(s)
        except AgentWorldError as exc:  # the run goes on without it; the graph records it
            err_console.print(f"[red]✗[/] {escape(s)}: {escape(str(exc))}", highlight=False)
    scaleout.executor(workers, ray)  # no Ray, or no cluster there: one error line, now
    context = mine_graph.MineContext(workers=workers, ray_address=ray)
    config = thread_config(thread, state.home)
    thread_id = config["configurable"]["thread_id"]
    builder = mine_graph.build_graph()
    if resume:
        values, _ = final_state(builder, config)
        if not values:
            raise UsageError(f"thread {thread!r} has no run to resume")
        total = len(values.get("sources", []))
        inputs = None
    else:
        total = len(set(sources)) or len(default_sources(state.home, create=False))
        inputs = {"sources": sources, "iterations": iterations, "seed": seed,
                  "web_search": web_search}
    err_console.print(f"mine: thread [bold]{escape(thread_id)}[/] "
                      f"(resume with --thread {escape(thread_id)} --resume)", highlight=False)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    run_id = (values.get("run_id") if resume else None)
    error: BaseException | None = None
    with Progress(*columns, console=err_console, transient=True, disable=quiet) as progress:
        bar = progress.add_task("mining sources", total=total)
        per_source: dict[str, Any] = {}
        done = 0
        try:
            for mode, chunk in stream(builder, inputs, config, context=context,
                                      stream_mode=["updates", "custom"]):
                if mode == "custom":
                    _on_event(progress, per_source, chunk)
                    continue
                run_id = (chunk.get("start") or {}).get("run_id", run_id)
                # on resume, branches finished before the interruption are replayed from the
                # checkpoint (flagged cached), not run again
                cached = (chunk.get("__metadata__") or {}).get("cached", False)
                for r in (chunk.get("mine_source") or {}).get("results", []):
                    done += 1
                    if r["source"] in per_source:
                        progress.remove_task(per_source.pop(r["source"]))
                    mark = "[green]✓[/]" if r["status"] == "mined" else "[red]✗[/]"
                    what = f" → {r['theme']}" if r["status"] == "mined" else f": {r['error']}"
                    note = " [dim](from checkpoint)[/]" if cached else ""
                    progress.console.print(f"  {mark} {escape(r['source'])}{escape(what)}{note}",
                                           highlight=False)
                    progress.update(bar, completed=done)
        except AgentWorldError as exc:  # e.g. every source failed: report, then exit 1
            error = exc
        except BaseException:
            _close_run(run_id, "interrupted")  # never leave the catalog run `running`
            raise
    values, _ = final_state(builder, config)
    values = {**values, "thread_id": thread_id}
    if error is not None:
        _close_run(run_id, "failed")
        values["status"] = "failed"
        results = values.get("results") or []
        values["summary"] = {"sources": len(values.get("sources") or []), "mined": 0,
                             "failed": len(results), "themes": 0, "merged": 0}
    if not quiet:
        _print_mine_report(values)
    return values


def _on_event(progress: Any, per_source: dict[str, Any], event: dict[str, Any]) -> None:
    """A mine_source branch's report: source read (N tools), an iteration finished."""
    src = event.get("source", "")
    label = escape(src if len(src) <= 40 else "…" + src[-39:])
    if event.get("event") == "read" and src not in per_source:
        per_source[src] = progress.add_task(f"  {label}: drafting ({event['tools']} tools)",
                                            total=None)
    elif event.get("event") == "iteration" and src in per_source:
        i, n = event["iteration"], event["of"]
        progress.update(per_source[src], total=n + 1, completed=i + 1,
                        description=f"  {label}: iteration {i}/{n} "
                                    f"({event['tables']} tables, {event['rows']:,} rows)")


def _close_run(run_id: str | None, status: str) -> None:
    if not run_id:
        return
    try:
        with state.catalog(seed_examples=False) as cat:
            run = cat.get_run(run_id)
            if run and run["status"] == "running":
                cat.finish_run(run_id, status)
    except Exception:  # noqa: BLE001 - best effort on the way out; the first error matters
        pass


def _print_mine_report(values: dict[str, Any]) -> None:
    results = values.get("results") or []
    table = fit_table("Mined databases, per complexification iteration",
                      ["theme", "iter", "tables", "rows", "foreign keys", "constraints"],
                      numeric={"iter", "tables", "rows", "foreign keys", "constraints"},
                      keep={"theme"})
    for r in results:
        if r["status"] != "mined":
            continue
        for i, st in enumerate(r["stats"]):
            table.add_row(escape(r["theme"]) if i == 0 else "", str(st.get("iteration", i)),
                          f"{st['tables']:,}", f"{st['rows']:,}", f"{st['foreign_keys']:,}",
                          f"{st['constraints']:,}")
    console.print(table)
    _print_fidelity(results)
    summary = values.get("summary") or {}
    if summary:
        console.print(f"sources {summary['sources']}: mined {summary['mined']}, failed "
                      f"{summary['failed']}; themes {summary['themes']} after merging "
                      f"{summary['merged']} near-duplicate(s)")
    for r in results:
        if r["status"] == "failed":
            console.print(f"[red]failed[/] {escape(r['source'])}: {escape(r['error'])}",
                          highlight=False)
    if values.get("status") != "done":
        console.print("see why: [bold]agent-world ledger --stage mine[/]")


def _print_fidelity(results: list[dict[str, Any]]) -> None:
    """Per theme: source tools covered by the database, semantic violations per rule."""
    mined = [r for r in results if r["status"] == "mined" and "coverage" in r]
    if not mined:
        return
    table = fit_table("Tool coverage and semantic violations of the stored databases",
                      ["theme", "source tools covered", "violations", "by rule"],
                      numeric={"source tools covered", "violations"})
    for r in mined:
        cov, vio = r["coverage"], r.get("violations") or {}
        by_rule = ", ".join(f"{rule} {vio[rule]}" for rule in RULES if vio.get(rule))
        table.add_row(escape(r["theme"]), coverage_line(cov), f"{sum(vio.values()):,}",
                      by_rule or "-")
    console.print(table)


def coverage_line(cov: dict[str, Any] | None) -> str:
    return line(cov)


def themes(as_json: JsonOption = False) -> None:
    """The theme taxonomy as a tree (L1 category / L2 sub-category / L3 server)."""
    rows = state.catalog().list_themes()
    if as_json:
        print_json([{k: r[k] for k in ("name", "l1", "l2", "l3", "source_kind", "source_ref",
                                       "env_name")} for r in rows])
        return
    root = Tree(f"[bold]Themes ({len(rows)})[/]")
    l1s: dict[str, Any] = {}
    l2s: dict[tuple[str, str], Any] = {}
    for r in rows:
        l1 = l1s.get(r["l1"]) or l1s.setdefault(r["l1"], root.add(f"[bold]{escape(r['l1'])}[/]"))
        key = (r["l1"], r["l2"])
        l2 = l2s.get(key) or l2s.setdefault(key, l1.add(escape(r["l2"])))
        env = f" → env [cyan]{escape(r['env_name'])}[/]" if r["env_name"] else ""
        name = "" if r["name"] == r["l3"] else f": {escape(r['name'])}"
        about = (r["payload"].get("theme") or {}).get("description", "")
        about = f" — [dim]{escape(about[:70])}{'…' if len(about) > 70 else ''}[/]" if about else ""
        cov = r["payload"].get("coverage")
        cov = f" [dim]({escape(coverage_line(cov))} covered)[/]" if cov else ""
        l2.add(f"[bold]{escape(r['l3'])}[/]{name} ({escape(r['source_kind'])}){env}{cov}{about}")
    console.print(root)
