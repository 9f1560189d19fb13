"""`agent-world ledger` (what was rejected or failed, and why) and `agent-world runs`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from agent_world.cli.common import JsonOption, print_entries, print_json, state


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
    print_entries(f"Ledger ({len(shown)} of {len(entries)})", (
        (f"{e.created_at:%m-%d %H:%M}  [cyan]{escape(e.stage)}[/]  {escape(e.run_id or '-')}  "
         f"[bold]{escape(e.subject)}[/]", escape(e.reason)) for e in shown))


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
    listed = []
    for r in rows:
        secs = (r["finished_at"] - r["started_at"]).total_seconds() if r["finished_at"] else None
        summary = ", ".join(f"{k} {v}" for k, v in r["summary"].items()
                            if isinstance(v, int | float | str) and k != "error")
        status = {"done": "[green]done[/]", "running": "[yellow]running[/]"}.get(
            r["status"], f"[red]{escape(r['status'])}[/]")
        took = "" if secs is None else f"  {secs:,.1f} s"
        listed.append((f"{escape(r['id'])}  [cyan]{escape(r['kind'])}[/]  {status}  "
                       f"{r['started_at']:%m-%d %H:%M:%S}{took}", escape(summary)))
    print_entries(f"Runs ({len(rows)})", listed)
