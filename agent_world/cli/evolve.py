"""`agent-world evolve` (self-evolution rounds, one graph invocation each) and `agent-world report`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from langgraph.types import Command
from rich.console import Group
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from agent_world import scaleout
from agent_world.cli.common import (
    RayOption,
    WorkersOption,
    console,
    err_console,
    fit_table,
    state,
)
from agent_world.evolution.report import load_rounds, write_report
from agent_world.evolution.report import screenshot as shoot
from agent_world.evolution.rounds import rate_text, wilson
from agent_world.graphs import evolve_graph
from agent_world.graphs.evolve_graph import round_trace
from agent_world.graphs.evolve_schema import DEFAULT_CORPUS_SAMPLE, EvolveContext
from agent_world.graphs.runner import final_state, stream, thread_config

# servers of the shipped corpus the corpus arena mines beside the embedded sources
CORPUS_ARENA = 18

STAGE_LABEL = {"begin": "begin round", "mine": "mine tool ecosystems", "build": "build tools",
               "split": "held-out split", "synthesize": "synthesize tasks",
               "evaluate": "evaluate on held-out", "diagnose": "diagnose failures",
               "resynthesize": "targeted tasks", "warm_start": "warm start (supervised)",
               "train": "train (GRPO)", "record": "record round"}
FIRST_ROUND = ("begin", "mine", "build", "split", "synthesize", "evaluate", "diagnose",
               "resynthesize", "warm_start", "train", "evaluate", "record")
LATER_ROUND = ("begin", "diagnose", "resynthesize", "warm_start", "train", "evaluate", "record")


def _plan(first: bool, warm_eval: bool) -> tuple[str, ...]:
    plan = FIRST_ROUND if first else LATER_ROUND
    if not warm_eval:
        return plan
    at = plan.index("warm_start") + 1
    return (*plan[:at], "evaluate", *plan[at:])


def _describe(node: str, out: dict[str, Any]) -> str:
    if node == "mine":
        return f"{len(out.get('mined', []))} environments mined"
    if node == "build":
        return f"{len(out.get('envs', []))} environments built"
    if node == "split":
        return (f"train: {', '.join(out.get('train_envs', []))}; held out: "
                f"{', '.join(out.get('heldout_envs', []))}")
    if node == "synthesize":
        return (f"{len(out.get('train_tasks', []))} training + {len(out.get('heldout_tasks', []))}"
                f" held-out tasks; policy {out.get('policy', '')}")
    if node == "evaluate":
        s = out.get("last") or {}
        text = f"held-out pass rate {rate_text(s.get('passes'), s.get('attempts'))}; " \
               f"errors {s.get('errors', {})}"
        if out.get("fresh"):
            f = out["fresh"]
            text += f"; fresh set {rate_text(f.get('passes'), f.get('attempts'))}"
        return text
    if node == "warm_start":
        t = out.get("training") or {}
        if t.get("skipped"):
            return "skipped by review"
        warm = t.get("warm_start") or []
        return (f"{len(warm)} supervised steps, loss {warm[0]:.3f} → {warm[-1]:.3f}" if warm
                else f"{len(out.get('train_mix') or [])} training tasks")
    if node == "diagnose":
        return (out.get("diagnosis") or {}).get("summary", "")
    if node == "resynthesize":
        return f"{len(out.get('targeted_tasks', []))} targeted tasks"
    if node == "train":
        t = out.get("training") or {}
        if t.get("skipped"):
            return "skipped by review"
        curve = t.get("curve") or []
        rewards = f"reward {curve[0]['reward']:.2f} → {curve[-1]['reward']:.2f}" if curve else ""
        return f"{t.get('tasks', 0)} tasks, {len(curve)} steps, {rewards}; {t.get('checkpoint')}"
    return ""


def round_table(history: list[dict[str, Any]], title: str = "Self-evolution rounds") -> Group:
    """Two tables that each fit 80 columns. Per round, the held-out pass rates with their
    counts and Wilson 95 % intervals (before, after the warm start when measured, after GRPO,
    on the round's fresh set when there is one); then what the round targeted: the error class
    and its failures before → after, the targeted tasks and the tasks training used."""
    warm = any(h.get("warm_n") for h in history)
    fresh = any(h.get("fresh_after_n") for h in history)
    cols = ["held-out\nbefore", *(["after warm\nstart"] if warm else []), "after\nGRPO",
            *(["fresh set\nafter"] if fresh else [])]
    rates = fit_table(None, ["round", *cols], numeric={"round", *cols})
    aims = fit_table(None, ["round", "targeted error", "its failures", "targeted tasks",
                            "trained on", "GRPO steps"],
                     numeric={"round", "its failures", "targeted tasks", "trained on",
                              "GRPO steps"}, keep={"targeted error"})

    def rate(h: dict[str, Any], key: str) -> str:
        n = h.get(f"{key}_n")
        if n and n[1]:
            lo, hi = wilson(int(n[0]), int(n[1]))
            return f"{n[0] / n[1]:.0%} ({n[0]}/{n[1]})\nCI {lo * 100:.0f}–{hi:.0%}"
        return "-" if h.get(key) is None else f"{h[key]:.0%}"  # a record from older code

    for h in history:
        rates.add_row(str(h["round"]), rate(h, "before"), *([rate(h, "warm")] if warm else []),
                      rate(h, "after"), *([rate(h, "fresh_after")] if fresh else []))
        aims.add_row(str(h["round"]), escape(h["target_error"]),
                     f"{h['target_before']} → {h['target_after']}", str(h["targeted_tasks"]),
                     str(h["train_tasks"]), str(h["steps"]))
    return Group(Text(f"{title}: held-out pass rates (Wilson 95% CI)", style="italic"), rates,
                 aims)


def _run_round(builder: Any, inputs: Any, config: dict[str, Any], context: Any, first: bool,
               progress: Any, round_no: int) -> list[Any]:
    """Stream one invocation; returns the interrupts it stopped at (review before training).
    One bar per round (its stages) and one for the stage in flight (turns, training steps)."""
    plan = _plan(first, bool(getattr(context, "eval_after_warm_start", False)))
    bar = progress.add_task(f"round {round_no}", total=len(plan))
    inner: int | None = None
    interrupts: list[Any] = []
    started = time.monotonic()
    at = 0  # position in the plan (evaluate appears twice in the first round)
    for mode, chunk in stream(builder, inputs, round_trace(config, context),
                              context=context, stream_mode=["updates", "custom"]):
        if mode == "custom":
            inner = _inner_progress(progress, inner, chunk)
            continue
        for node, out in chunk.items():
            if node == "__interrupt__":
                interrupts.extend(out)
                continue
            if node not in STAGE_LABEL:
                continue
            if inner is not None:
                progress.remove_task(inner)
                inner = None
            progress.advance(bar)
            note = _describe(node, out or {})
            progress.console.print(f"  [green]✓[/] round {round_no} · {STAGE_LABEL[node]} "
                                   f"[dim]({time.monotonic() - started:.0f}s)[/] "
                                   f"{escape(note[:160])}")
            at = plan.index(node, at) + 1 if node in plan[at:] else at
            desc = STAGE_LABEL[plan[at]] + "…" if at < len(plan) else "done"
            progress.update(bar, description=f"round {round_no}: {desc}")
    if inner is not None:
        progress.remove_task(inner)
    return interrupts


def _inner_progress(progress: Any, inner: int | None, event: dict[str, Any]) -> int:
    """Show a stage's own progress: evaluation turns (episodes still running) or GRPO steps."""
    if event.get("warm"):
        desc = f"  warm start: step {event['step']}/{event['steps']}, loss {event['loss']:.3f}"
        total, done = event["steps"], event["step"]
    elif event.get("stage") == "train":
        desc = f"  train: step {event['step']}/{event['steps']}, reward {event['reward']:.2f}"
        total, done = event["steps"], event["step"]
    else:
        total = event.get("tasks") or 1
        done = total - event.get("live", 0)
        desc = f"  evaluate: turn {event.get('turn')}, {event.get('live')} episodes running"
    if inner is None:
        return progress.add_task(desc, total=total, completed=done)
    progress.update(inner, description=desc, total=total, completed=done)
    return inner


def evolve(
    rounds: Annotated[int, typer.Option(help="Rounds to run (each is one graph invocation).")] = 2,
    thread: Annotated[str, typer.Option(help="The persistent thread of this arena.")] = "evolve",
    resume: Annotated[bool, typer.Option(
        help="Finish the thread's interrupted round, then the rounds it was asked for.")] = False,
    source: Annotated[list[str] | None, typer.Option(
        "--source", "-s", help="Sources to mine (first round). None: the embedded default.")
    ] = None,
    corpus_sample: Annotated[int | None, typer.Option(
        min=0, help="Also mine N servers of the shipped MCP corpus, drawn with --seed (first "
                    "round): more environments to train on and hold out. Default: "
                    f"{DEFAULT_CORPUS_SAMPLE} beside the embedded sources, none beside "
                    "--source; 0: none.")] = None,
    arena: Annotated[str, typer.Option(
        help="default: the embedded sources, a share of the environments held out; corpus: "
             f"{CORPUS_ARENA} servers of the shipped MCP corpus beside them (or "
             "--corpus-sample N), whole L2 categories held out so evaluation is out of "
             "distribution.")] = "default",
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    tasks_per_env: Annotated[int | None, typer.Option(
        help="Initial tasks per training env (default 6).")] = None,
    heldout_tasks: Annotated[int | None, typer.Option(
        min=1, help="Evaluation tasks per held-out env (default: 48 in all, shared out over "
                    "the held-out envs, at least 4 each: 16 on the default's 3).")] = None,
    fresh_heldout_tasks: Annotated[int | None, typer.Option(
        help="Fresh held-out tasks per held-out env each round, a new seed a round (the "
             "diagnosis reads them; default 0: none).")] = None,
    resynthesis: Annotated[str | None, typer.Option(
        help="How each round's new training tasks are chosen: targeted (by the diagnosis, "
             "the default), random (as many, no guidelines) or none (replay instead); "
             "benchmarks/ablation.py compares them.")] = None,
    eval_warm_start: Annotated[bool | None, typer.Option(
        "--eval-warm-start/--no-eval-warm-start",
        help="Also evaluate after the supervised warm start, before GRPO.")] = None,
    targeted_tasks: Annotated[int | None, typer.Option(
        help="Targeted tasks per env per round (default 6).")] = None,
    targeted_envs: Annotated[int | None, typer.Option(
        help="Training environments the diagnosed skills are practised on each round (default "
             "0: those the diagnosis names, up to 3); more spreads the same guidelines over "
             "more environments.")] = None,
    train_steps: Annotated[int | None, typer.Option(
        help="GRPO steps per round (default 2).")] = None,
    warm_start_steps: Annotated[int | None, typer.Option(
        help="Supervised steps on each round's gold solutions before GRPO (default: the "
             "policy's: 32 for tiny; for SmolLM2 on a CPU 16 in round 1 and none in later "
             "rounds, which start from a trained checkpoint; 0: none).")
    ] = None,
    policy: Annotated[str, typer.Option(help="Starting policy; empty: the default.")] = "",
    review: Annotated[bool, typer.Option(
        help="Pause before training to review the diagnosis.")] = False,
    report: Annotated[Path | None, typer.Option(
        help="Where to write the HTML report (default <home>/report.html).")] = None,
    workers: WorkersOption = None,
    ray: RayOption = None,
) -> None:
    """Self-evolution: evaluate on held-out environments, diagnose, synthesize targeted tasks,
    train — one round per graph invocation on a persistent thread."""
    if rounds < 0:
        raise typer.BadParameter("--rounds must be ≥ 0")
    if arena not in ("default", "corpus"):
        raise typer.BadParameter(f"--arena must be default or corpus, not {arena!r}")
    scaleout.executor(workers, ray)  # no Ray, or no cluster there: one error line, now
    builder = evolve_graph.build_graph()
    config = thread_config(thread, state.home)
    values, pending = final_state(builder, config)
    if pending and not resume:
        raise typer.BadParameter(f"thread {thread!r} has an unfinished round "
                                 f"{values.get('round')}; continue it with --resume")
    if resume and not values:
        raise typer.BadParameter(f"thread {thread!r} has nothing to resume")
    sizes = {"tasks_per_env": tasks_per_env, "heldout_tasks_per_env": heldout_tasks,
             "targeted_tasks_per_env": targeted_tasks, "targeted_envs": targeted_envs,
             "train_steps": train_steps,
             "warm_start_steps": warm_start_steps,
             "fresh_heldout_tasks_per_env": fresh_heldout_tasks,
             "eval_after_warm_start": eval_warm_start, "resynthesis": resynthesis,
             "corpus_sample": corpus_sample if corpus_sample is not None else (
                 CORPUS_ARENA if arena == "corpus" else None),
             "heldout_by": "category" if arena == "corpus" else None}
    context = EvolveContext(
        sources=list(source or []), seed=seed, policy=policy, review_before_train=review,
        workers=workers, ray_address=ray,
        **{k: v for k, v in sizes.items() if v is not None})
    done = values.get("rounds_done", 0)
    goal = (values.get("goal_rounds") or done) if resume else done + rounds
    err_console.print(f"evolve: thread [bold]{thread}[/], home {state.home}; "
                      f"{done} round(s) done, running to {max(goal, done)}")
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=err_console) as progress:
        inputs: Any = None if pending else {"goal_rounds": goal}
        while pending or done < goal:
            round_no = values.get("round", 0) if pending else done + 1
            first = not values.get("heldout_tasks")
            interrupts = _run_round(builder, inputs, config, context, first, progress, round_no)
            while interrupts:
                payload = interrupts[0].value if hasattr(interrupts[0], "value") else interrupts[0]
                progress.console.print(f"[bold]Review before training, round "
                                       f"{payload.get('round')}[/]\n{escape(payload['diagnosis'])}")
                ok = typer.confirm(f"Train on {payload['targeted_tasks']} targeted + "
                                   f"{payload['replay_tasks']} replayed tasks?", default=True)
                interrupts = _run_round(builder, Command(resume=ok), config, context, False,
                                        progress, round_no)
            values, pending = final_state(builder, config)
            done = values.get("rounds_done", 0)
            inputs = {"goal_rounds": goal}
    console.print(round_table(values.get("history") or []))
    if values.get("history"):
        cat = state.catalog()
        out = write_report(load_rounds(cat, thread),
                           report or Path(state.home or ".") / "report.html", catalog=cat)
        console.print(f"report: {out}")


def report_cmd(
    thread: Annotated[str | None, typer.Option(
        help="Thread to report on (default: the latest).")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="HTML file to write.")] = Path(
        "agent_world_report.html"),
    screenshot: Annotated[Path | None, typer.Option(
        help="Also render it in headless Chromium to this PNG.")] = None,
) -> None:
    """Write the self-evolution report: one self-contained HTML file with plots."""
    cat = state.catalog()
    rounds = load_rounds(cat, thread)
    path = write_report(rounds, out, catalog=cat)
    console.print(f"report: {path} ({len(rounds)} round(s) of thread {rounds[0].thread})")
    console.print(round_table([r.row() for r in rounds]))
    if screenshot:
        console.print(f"screenshot: {shoot(path, screenshot)}")
