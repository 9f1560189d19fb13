"""`agent-world build`: mined environments → cross-validated tools and tests (stage `built`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent_world import scaleout
from agent_world.cli.common import RayOption, WorkersOption, console, err_console, fit_table, state
from agent_world.errors import CatalogError
from agent_world.graphs import build_graph
from agent_world.graphs.runner import final_state, stream, thread_config


def build(
    env: Annotated[list[str] | None, typer.Option(
        "--env", "-e", help="Environment to build (repeatable). None: every mined one.")] = None,
    max_repairs: Annotated[int, typer.Option(
        min=0, help="Repair rounds for rejected tools (LLM designer).")] = 2,
    max_tools: Annotated[int, typer.Option(min=1, help="Candidate tools per environment.")] = 40,
    thread: Annotated[str | None, typer.Option(
        help="Graph thread id; reuse it with --resume to continue a killed run.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue the thread where it stopped.")] = False,
    workers: WorkersOption = None,
    ray: RayOption = None,
) -> None:
    """Design tools and tests for mined environments, cross-validate them in the sandbox and
    store what passes as `built` versions (rejections go to the ledger)."""
    run_build(env or [], max_repairs, max_tools, thread, resume, workers, ray)


def run_build(envs: list[str], max_repairs: int, max_tools: int, thread: str | None,
              resume: bool, workers: int | None = None, ray: str | None = None
              ) -> dict[str, Any]:
    if resume and not thread:
        raise typer.BadParameter("--resume needs the --thread of the run to continue")
    scaleout.executor(workers, ray)  # no Ray, or no cluster there: one error line, now
    context = build_graph.BuildContext(max_repairs=max_repairs, max_tools=max_tools,
                                       workers=workers, ray_address=ray)
    config = thread_config(thread, state.home)
    builder = build_graph.build_graph()
    with state.catalog() as cat:
        if resume:
            values, _ = final_state(builder, config)
            if not values:
                raise typer.BadParameter(f"thread {thread!r} has no run to resume")
            total = len(values.get("envs", []))
            inputs = None
        else:
            for name in envs:
                if cat.get_env_at_stage(name, "mined") is None:
                    raise CatalogError(f"environment {name!r} has no mined version to build "
                                       "(see `agent-world env list --stage mined`)")
            total = len(envs) or sum(1 for e in cat.list_envs()
                                     if cat.get_env_at_stage(e.name, "mined") is not None)
            inputs = {"envs": envs, "max_repairs": max_repairs, "max_tools": max_tools}
    err_console.print(f"build: thread [bold]{config['configurable']['thread_id']}[/] "
                      "(resume with --thread ... --resume)")
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=False) as progress:
        bar = progress.add_task("building environments", total=total)
        done = 0
        for update in stream(builder, inputs, config, context):
            cached = (update.get("__metadata__") or {}).get("cached", False)
            out = update.get("designer") or {}
            for r in out.get("results", []):
                done += 1
                ok = r["status"] == "built"
                what = (f" → {r['kept']}/{r['candidates']} tools kept" if ok
                        else f": {r.get('error')}")
                note = " [dim](from checkpoint)[/]" if cached else ""
                progress.console.print(f"  {'[green]✓[/]' if ok else '[red]✗[/]'} "
                                       f"{escape(r['env'])}{escape(what)}{note}")
                progress.update(bar, completed=done)
    values, _ = final_state(builder, config)
    print_build_report(values)
    return values


def print_build_report(values: dict[str, Any]) -> None:
    results = values.get("results", [])
    # src: source tools implemented and validated / source tools the database covers
    table = fit_table("Built environments", ["env", "cand", "kept", "write", "tests", "src",
                                             "fixed", "rejected"],
                      numeric={"cand", "kept", "write", "tests", "src", "fixed"},
                      wrap={"rejected"}, keep={"env"})
    for r in results:
        rejected = ", ".join(f"{k} {v}" for k, v in sorted((r.get("rejected") or {}).items()))
        if r["status"] != "built":
            rejected = f"{r['status']}: {r.get('error')}"
        table.add_row(escape(r["env"]), str(r.get("candidates", 0)), str(r.get("kept", 0)),
                      str(r.get("writes", 0)), str(r.get("tests", 0)),
                      f"{r.get('source_covered', 0)}/{r.get('source_tools', 0)}",
                      str(r.get("repairs", 0)), escape(rejected) or "-")
    console.print(table)
    s = values.get("summary") or {}
    if s:
        console.print(f"environments {s['envs']}: built {s['built']}, dropped {s['dropped']}, "
                      f"failed {s['failed']}; {s['tools']} tools kept of {s['candidates']} "
                      "candidates (every rejection: `agent-world ledger --stage build`)")
    for r in results:
        if r["status"] != "built":
            console.print(f"[red]{r['status']}[/] {r['env']}: {r.get('error')}")
