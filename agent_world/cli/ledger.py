"""`agent-world ledger` (what was rejected or failed, and why) and `agent-world runs`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from agent_world.cli.common import JsonOption, console, fit_table, print_json, state


def ledger(
    stage: Annotated[str | None, typer.Option(help="Only this stage (mine, build, ...).")] = None,
    run: Annotated[str | None, typer.Option("--run", help="Only this run id.")] = None,
    last: Annotated[int, typer.Option(help="Show the last N entries (0: all).", min=0)] = 50,
    as_json: JsonOption = False,
) -> None:
    """The ledger: what a stage rejected or what failed, and why (newest last)."""
    entries = state.catalog(seed_examples=False).ledger(stage=stage, run_id=run)
    shown = entries[-last:] if last else entries
    if as_json:
        print_json([e.model_dump(mode="json") for e in shown])
        return
    table = fit_table(f"Ledger ({len(shown)} of {len(entries)})",
                      ["when", "stage", "run", "subject", "reason"], wrap={"reason"})
    for e in shown:
        table.add_row(e.created_at.strftime("%m-%d %H:%M"), escape(e.stage),
                      escape((e.run_id or "")[:8]), escape(e.subject), escape(e.reason))
    console.print(table)


def runs(
    kind: Annotated[str | None, typer.Option(help="Only this kind (mine, evolve, ...).")] = None,
    last: Annotated[int, typer.Option(help="Show the last N runs.", min=1)] = 20,
    as_json: JsonOption = False,
) -> None:
    """Recent runs, newest first: kind, status and summary."""
    rows = state.catalog(seed_examples=False).list_runs(kind=kind, limit=last)
    if as_json:
        print_json(rows)
        return
    table = fit_table(f"Runs ({len(rows)})", ["run", "kind", "status", "started", "seconds",
                                              "summary"], numeric={"seconds"},
                      keep={"run", "status"}, wrap={"summary"})
    for r in rows:
        secs = (r["finished_at"] - r["started_at"]).total_seconds() if r["finished_at"] else None
        summary = ", ".join(f"{k} {v}" for k, v in r["summary"].items()
                            if isinstance(v, int | float | str) and k != "error")
        status = {"done": "[green]done[/]", "running": "[yellow]running[/]"}.get(
            r["status"], f"[red]{escape(r['status'])}[/]")
        table.add_row(escape(r["id"]), escape(r["kind"]), status,
                      r["started_at"].strftime("%m-%d %H:%M:%S"),
                      "" if secs is None else f"{secs:,.1f}", escape(summary))
    console.print(table)
