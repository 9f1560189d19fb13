"""`agent-world harvest`: install real MCP servers, read their tool lists offline, keep them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent_world.cli.common import JsonOption, UsageError, console, err_console, print_json, state
from agent_world.mining.sources import mcp_harvest as hv

CACHE_ENV = "AGENT_WORLD_HARVEST_CACHE"


def harvest(
    packages: Annotated[list[Path] | None, typer.Option(
        "--packages", "-p",
        help="A harvest list of your own (TOML [[server]] tables or JSON), added to the "
             "shipped one; an entry for the same package or service replaces it. "
             "Repeatable.")] = None,
    shipped: Annotated[bool, typer.Option(
        help="Include the curated list shipped with the project.")] = True,
    only: Annotated[list[str] | None, typer.Option(
        "--only", help="Harvest only this service or package. Repeatable.")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Where the tool-list documents and index.json go. Default: HOME/corpus.")] = None,
    cache: Annotated[Path | None, typer.Option(
        envvar=CACHE_ENV,
        help="Where packages are installed, one folder each (reused). "
             "Default: HOME/harvest-cache.")] = None,
    jobs: Annotated[int, typer.Option(min=1, max=32,
                                      help="Packages installed and read at once.")] = 4,
    timeout: Annotated[float, typer.Option(
        min=1, help="Seconds a server has to start and answer every list.")] = 60.0,
    install_timeout: Annotated[float, typer.Option(
        min=1, help="Seconds one package's install may take.")] = 900.0,
    refresh: Annotated[bool, typer.Option(
        help="Harvest again what is already in --out.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Install MCP server packages (npm, PyPI), start each with no network and dummy
    credentials, and save its `initialize` + `tools/list` (+ resources, prompts) as a tool-list
    document with provenance. What fails goes to the ledger (`agent-world ledger --stage
    harvest`). Resumable: documents already in --out are kept unless --refresh. Mine the
    result with `agent-world mine -s file:DOC` (or the shipped corpus with `mine --corpus`).
    Exits 1 when any server failed."""
    entries = _entries(packages or [], shipped, only or [])
    home = state.resolve()
    out_dir = (out or home / "corpus").expanduser()
    cache_dir = (cache or home / "harvest-cache").expanduser()
    results = _run(entries, out_dir, cache_dir, jobs, timeout, install_timeout, refresh,
                   quiet=as_json)
    summary = _record(results)
    if as_json:
        print_json({"summary": summary, "out": str(out_dir),
                    "results": [{"service": r.entry.service, "package": r.entry.package,
                                 "version": r.entry.version, "status": r.status,
                                 "stage": r.stage, "tools": r.tools, "reason": r.reason,
                                 "path": r.path} for r in results]})
    else:
        console.print(f"servers {summary['tried']}: harvested {summary['harvested']}, already "
                      f"there {summary['skipped']}, failed {summary['failed']}; documents in "
                      f"{escape(str(out_dir))}", highlight=False)
        if summary["failed"]:
            console.print("see why: [bold]agent-world ledger --stage harvest[/]")
    if summary["failed"]:
        raise typer.Exit(1)


def _entries(packages: list[Path], shipped: bool, only: list[str]) -> list[Any]:
    lists = [hv.load_packages(hv.SHIPPED_PACKAGES)] if shipped else []
    lists += [hv.load_packages(p) for p in packages]
    if not lists:
        raise UsageError("nothing to harvest: --no-shipped needs at least one --packages FILE")
    entries = hv.merge_entries(*lists)
    if only:
        wanted = set(only)
        entries = [e for e in entries if e.service in wanted or e.package in wanted]
        missing = wanted - {e.service for e in entries} - {e.package for e in entries}
        if missing:
            raise UsageError(f"--only {', '.join(sorted(missing))}: not in the harvest list")
    return entries


def _run(entries: list[Any], out: Path, cache: Path, jobs: int, timeout: float,
         install_timeout: float, refresh: bool, quiet: bool) -> list[Any]:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True, disable=quiet) as progress:
        bar = progress.add_task("harvesting MCP servers", total=len(entries))

        def show(r: Any) -> None:
            progress.advance(bar)
            if r.status == "failed":
                line = f"  [red]✗[/] {escape(r.entry.label)} ({r.stage}): " \
                       f"{escape(r.reason.splitlines()[0])}"
            elif r.status == "skipped":
                line = f"  [dim]- {escape(r.entry.label)}: already harvested[/]"
            else:
                line = f"  [green]✓[/] {escape(r.entry.label)} → {r.tools} tools"
            progress.console.print(line, highlight=False)

        return hv.harvest(entries, out=out, cache=cache, jobs=jobs, timeout=timeout,
                          install_timeout=install_timeout, refresh=refresh, on_result=show)


def _record(results: list[Any]) -> dict[str, int]:
    """A `harvest` run in the catalog, and a ledger entry per failed server."""
    summary = {"tried": len(results),
               **{k: sum(r.status == k for r in results)
                  for k in ("harvested", "skipped", "failed")}}
    cat = state.catalog(seed_examples=False)
    run_id = cat.start_run("harvest", summary=summary)
    for r in results:
        if r.status == "failed":
            cat.record("harvest", r.entry.label, r.reason, run_id=run_id,
                       payload={"service": r.entry.service, "stage": r.stage})
    cat.finish_run(run_id, "done" if not summary["failed"] else "partial", summary)
    return summary
