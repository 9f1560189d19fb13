"""`agent-world synthesize` and `agent-world tasks list|show|export`: verified tasks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent_world import scaleout
from agent_world.cli.common import (
    RayOption,
    WorkersOption,
    console,
    err_console,
    fit_table,
    print_entries,
    state,
)
from agent_world.errors import AgentWorldError
from agent_world.graphs import synthesize_graph as graph_module
from agent_world.graphs.runner import final_state, stream, thread_config

tasks_app = typer.Typer(no_args_is_help=True, rich_markup_mode="markdown",
                        help="Synthesized tasks in the catalog.")


def _levels(text: str) -> list[int]:
    try:
        levels = sorted({int(x) for x in text.replace(" ", "").split(",") if x})
    except ValueError:
        raise typer.BadParameter(
            f"--levels takes numbers 1-5 separated by commas, got {text!r}") from None
    if not levels or any(lv < 1 or lv > 5 for lv in levels):
        raise typer.BadParameter(f"--levels takes numbers 1-5, got {text!r}")
    return levels


def synthesize(
    env: Annotated[list[str] | None, typer.Option(
        "--env", "-e", help="Environment name (repeatable). None: every environment with tools.")
    ] = None,
    per_env: Annotated[int, typer.Option(help="Tasks to emit per environment.")] = 10,
    levels: Annotated[str, typer.Option(help="Difficulty levels to target, e.g. 1,2,3.")]
    = "1,2,3,4,5",
    runs: Annotated[int, typer.Option(help="Verifier runs per task.")] = 5,
    threshold: Annotated[float, typer.Option(
        help="Keep a task when more than this share of verifier runs pass.")] = 0.5,
    seed: Annotated[int, typer.Option(help="Seed for walks and phrasing.")] = 0,
    guidelines: Annotated[Path | None, typer.Option(
        help="JSON file: {environments, tools, error_kinds, levels} to target.")] = None,
    thread: Annotated[str | None, typer.Option(
        help="Graph thread id; reuse it with --resume to continue a killed run.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue the thread where it stopped.")] = False,
    workers: WorkersOption = None,
    ray: RayOption = None,
) -> None:
    """Synthesize verified tasks: tool-graph walks, programmatic tasks, gates, ReAct verifier."""
    if per_env < 1:
        raise typer.BadParameter("--per-env must be at least 1")
    if runs < 1 or not 0 <= threshold < 1:
        raise typer.BadParameter("--runs must be >= 1 and --threshold in [0, 1)")
    wanted = _levels(levels)
    guide = None
    if guidelines is not None:
        try:
            guide = json.loads(guidelines.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise AgentWorldError(f"{guidelines}: cannot read guidelines: {exc}") from None
        if not isinstance(guide, dict):
            raise AgentWorldError(f"{guidelines}: guidelines must be a JSON object")
    cat = state.catalog()
    for name in env or []:
        cat.get_env(name)  # an unknown name fails here, before anything runs
    config = thread_config(thread, state.home)
    builder = graph_module.build_graph()
    if resume:
        if not thread:
            raise typer.BadParameter("--resume needs the --thread of the run to continue")
        values, _ = final_state(builder, config)
        if not values:
            raise typer.BadParameter(f"thread {thread!r} has no run to resume")
        inputs, total = None, len(values.get("envs", []))
    else:
        inputs = {"envs": env or [], "per_env": per_env, "levels": wanted, "seed": seed,
                  "guidelines": guide}
        total = len(env or []) or sum(1 for e in cat.list_envs() if e.stats.get("tools"))
    scaleout.executor(workers, ray)  # no Ray, or no cluster there: one error line, now
    context = {"runs": runs, "threshold": threshold, "workers": workers, "ray_address": ray}
    err_console.print(f"synthesize: thread [bold]{config['configurable']['thread_id']}[/] "
                      "(resume with --thread ... --resume)")
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=err_console) as progress:
        bar = progress.add_task("environments", total=total)
        done = 0
        for update in stream(builder, inputs, config, context):
            for r in (update.get("synthesize_env") or {}).get("results", []):
                done += 1
                if r["status"] == "done":
                    progress.console.print(f"  [green]✓[/] {r['env']}: {r['kept']} task(s)")
                else:
                    progress.console.print(f"  [red]✗[/] {r['env']}: {escape(r['error'])}")
                progress.update(bar, completed=done)
    values, _ = final_state(builder, config)
    print_gate_stats(values.get("results", []))


def print_gate_stats(results: list[dict[str, Any]]) -> None:
    """Per environment: tasks kept of candidates, the kept tasks' levels and kinds, and the
    rejections by gate (only the gates that rejected); names are never cut."""
    entries = []
    for r in results:
        if r["status"] != "done":
            entries.append((f"[bold]{escape(r['env'])}[/]: [red]failed[/]",
                            escape(r.get("error", ""))))
            continue
        levels = ", ".join(f"L{k} {v}" for k, v in r["levels"].items()) or "-"
        kinds = ", ".join(f"{k} {v}" for k, v in r["kinds"].items()) or "-"
        rejected = ", ".join(f"{g} {n}" for g, n in sorted(r["rejected"].items()) if n)
        entries.append((f"[bold]{escape(r['env'])}[/]: kept {r['kept']} of "
                        f"{r['candidates']} candidates in {r['seconds']:.0f} s",
                        f"levels {levels}; kinds {kinds}; rejected by gate: "
                        f"{escape(rejected or 'none')}"
                        + (f"; [yellow]{r['writer_fallbacks']} request(s) fell back from the "
                           "synthesizer model to the offline templates[/]"
                           if r.get("writer_fallbacks") else "")
                        + (f"; [red]{r['candidate_errors']} candidate(s) raised an error (see "
                           "`agent-world ledger`)[/]" if r.get("candidate_errors") else "")))
    print_entries("Task synthesis: candidates, rejections by gate, kept", entries)


def _tasks(env: str | None, kind: str | None, level: int | None) -> list[dict[str, Any]]:
    cat = state.catalog()
    fp = cat.get_env(env).fingerprint if env else None
    rows = cat.list_tasks(fp)
    if kind:
        rows = [r for r in rows if r["kind"] == kind]
    if level:
        rows = [r for r in rows if r["payload"]["difficulty"]["level"] == level]
    return rows


@tasks_app.command("list")
def list_tasks(
    env: Annotated[str | None, typer.Option("--env", "-e", help="Only this environment.")] = None,
    kind: Annotated[str | None, typer.Option(help="graph or programmatic.")] = None,
    level: Annotated[int | None, typer.Option(help="Only this difficulty level.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Tasks in the catalog."""
    rows = _tasks(env, kind, level)
    if as_json:
        console.print_json(json.dumps([r["payload"] for r in rows], default=str))
        return
    # one table per environment: ids, levels and rates are never cut at 80 columns and the
    # instruction wraps in the room left
    by_env: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_env.setdefault(r["payload"]["env_name"], []).append(r)
    console.print(f"Tasks ({len(rows)})")
    for name, env_rows in by_env.items():
        table = fit_table(f"{escape(name)} ({len(env_rows)})",
                          ["id", "kind", "level", "pass rate", "instruction"],
                          numeric={"level", "pass rate"}, keep={"id", "kind"},
                          wrap={"instruction"})
        for r in env_rows:
            p = r["payload"]
            text = p["instruction"]
            table.add_row(r["id"], r["kind"], str(p["difficulty"]["level"]),
                          "" if p.get("pass_rate") is None else f"{p['pass_rate']:.2f}",
                          escape(text[:160] + ("…" if len(text) > 160 else "")))
        console.print(table)


@tasks_app.command("show")
def show_task(
    task_id: Annotated[str, typer.Argument(help="Task id (or a unique prefix).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole record.")] = False,
) -> None:
    """One task: instruction, tool view, checks, difficulty, gates."""
    row = state.catalog().get_task(task_id)
    if row is None:
        raise AgentWorldError(f"no task {task_id!r} in the catalog (see `agent-world tasks list`)")
    p = row["payload"]
    if as_json:
        console.print_json(json.dumps(p, default=str))
        return
    d = p["difficulty"]
    console.print(f"[bold]{p['id']}[/] {p['kind']} task on [cyan]{p['env_name']}[/] "
                  f"(level {d['level']}: chain {d['chain_length']}, branching {d['branching']}, "
                  f"aggregation {d['aggregation']}, distractors {d['distractors']}, "
                  f"obscured {d['obscured']})")
    console.print(f"\n{escape(p['instruction'])}\n")
    console.print("[bold]tools the agent sees:[/] " + ", ".join(
        v if k == v else f"{k} ({v})" for k, v in p["tool_view"].items()))
    console.print("[bold]gold chain:[/]")
    for c in p["chain"]:
        console.print(f"  {c['tool']}({escape(json.dumps(c['arguments'], default=str))})")
    console.print(f"[bold]reference answer:[/] {escape(str(p['reference_answer']))}")
    for line in p.get("rubric", []):
        console.print(f"  • {escape(line)}")
    if p.get("expected_changes"):
        console.print(f"[bold]expected changes:[/] {', '.join(p['expected_changes'])}")
    if p["kind"] == "programmatic":
        console.print("[bold]solution:[/]")
        console.print(escape(p["solution"] or ""))
    rate = p.get("pass_rate")
    console.print(f"[bold]verifier pass rate:[/] {'' if rate is None else f'{rate:.2f}'}")
    for g in p.get("gates", []):
        mark = "[green]✓[/]" if g["passed"] else "[red]✗[/]"
        console.print(f"  {mark} {g['name']}: {escape(g['detail'])}")


@tasks_app.command("export")
def export_tasks(
    out: Annotated[Path, typer.Argument(help="JSONL file to write (one task per line).")],
    env: Annotated[str | None, typer.Option("--env", "-e", help="Only this environment.")] = None,
    kind: Annotated[str | None, typer.Option(help="graph or programmatic.")] = None,
    level: Annotated[int | None, typer.Option(help="Only this difficulty level.")] = None,
) -> None:
    """Export tasks as JSONL (the records training reads)."""
    rows = _tasks(env, kind, level)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w") as f:
            for r in rows:
                f.write(json.dumps(r["payload"], default=str, sort_keys=True) + "\n")
    except OSError as exc:
        raise AgentWorldError(f"{out}: cannot write: {exc.strerror}") from None
    console.print(f"wrote {len(rows)} task(s) to {out}")


