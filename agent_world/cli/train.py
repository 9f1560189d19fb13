"""`agent-world train` and `agent-world evaluate`: policies on arena tasks (embedded GRPO, pass
rates), and the task selection every command that reads tasks shares (`load_tasks`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from agent_world.cli.common import console, err_console, state
from agent_world.config import resolve_home
from agent_world.errors import AgentWorldError
from agent_world.integrations.taskfiles import read_jsonl_tasks
from agent_world.tasks.model import Task
from agent_world.training.api import evaluate as run_evaluate
from agent_world.training.api import pass_rates
from agent_world.training.api import train as run_train
from agent_world.training.drills import DRILLS, drill_tasks
from agent_world.training.grpo import GRPOConfig

TasksOpt = Annotated[Path | None, typer.Option(
    "--tasks", help="JSONL file of tasks (one Task JSON per line). Default: the catalog's.")]
EnvOpt = Annotated[list[str] | None, typer.Option(
    "--env", help="Only tasks of this environment (repeatable).")]
DrillOpt = Annotated[str | None, typer.Option(
    "--drill", help="Built-in drill tasks on the bundled examples (cancel, check_in).")]
LimitOpt = Annotated[int | None, typer.Option(help="At most this many tasks.")]


def load_tasks(tasks_file: Path | None, envs: list[str] | None, drill: str | None,
               limit: int | None) -> list[Any]:
    """Tasks from a JSONL file, a drill, or the catalog; a clear error when there are none."""
    if drill:
        if drill not in DRILLS:
            raise AgentWorldError(f"unknown drill {drill!r}; drills: {', '.join(DRILLS)}")
        tasks = drill_tasks(drill, limit=limit)
    elif tasks_file is not None:
        if not tasks_file.is_file():
            raise AgentWorldError(f"{tasks_file}: no such file")
        tasks = read_jsonl_tasks(tasks_file)
    else:
        with state.catalog() as cat:
            tasks = [Task.model_validate(row["payload"]) for row in cat.list_tasks()]
            if envs:
                tasks = [t for t in tasks if t.env_name in envs]
    if limit is not None:
        tasks = tasks[:limit]
    if not tasks:
        raise AgentWorldError("no tasks: synthesize some (agent-world synthesize), pass --tasks "
                              "FILE or use --drill NAME")
    return tasks


def train(
    policy: Annotated[str, typer.Option(
        help="smollm2 | tiny | a checkpoint directory.")] = "smollm2",
    steps: Annotated[int, typer.Option(help="GRPO steps in total (a resumed run continues).")
                     ] = 20,
    group_size: Annotated[int, typer.Option(help="Rollouts per task (GRPO group).")] = 4,
    tasks_per_step: Annotated[int, typer.Option(help="Tasks per step.")] = 4,
    lr: Annotated[float, typer.Option(help="Learning rate.")] = 1e-5,
    kl: Annotated[float, typer.Option(help="k3 KL coefficient to the reference.")] = 0.04,
    lora: Annotated[bool, typer.Option(help="Train a LoRA adapter (peft).")] = False,
    max_turns: Annotated[int, typer.Option(help="Turns per episode.")] = 4,
    max_new_tokens: Annotated[int, typer.Option(help="Tokens per turn.")] = 96,
    device: Annotated[str, typer.Option(help="auto | cpu | cuda.")] = "auto",
    seed: Annotated[int, typer.Option(help="Seed (task sampling, generation).")] = 0,
    out: Annotated[Path | None, typer.Option(
        help="Run directory (checkpoints). Default: <home>/policies/grpo.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue from the run's latest checkpoint.")
                      ] = True,
    tasks_file: TasksOpt = None, env: EnvOpt = None, drill: DrillOpt = None,
    limit: LimitOpt = None,
) -> None:
    """Train a policy with the embedded GRPO trainer on arena tasks."""
    tasks = load_tasks(tasks_file, env, drill, limit)
    run_dir = out or resolve_home(state.home) / "policies" / "grpo"
    config = GRPOConfig(tasks_per_step=tasks_per_step, group_size=group_size, lr=lr,
                        kl_coef=kl, lora=lora, max_turns=max_turns,
                        max_new_tokens=max_new_tokens, device=device, seed=seed,
                        checkpoint_every=5)
    err_console.print(f"train: {len(tasks)} tasks, policy {policy}, run {run_dir}")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[line]}"), console=err_console) as progress:
        bar = progress.add_task("GRPO", total=steps, line="generating…")

        def on_step(s: Any) -> None:
            progress.update(bar, completed=s.step + 1, line=(
                f"reward {s.reward_mean:+.3f}  pass {s.pass_rate:.2f}  loss {s.loss:+.4f}  "
                f"kl {s.kl:.4f}  gen {s.generation_s:.1f}s upd {s.update_s:.1f}s"))

        result = run_train(policy, tasks, run_dir, steps=steps, seed=seed, home=state.home,
                           config=config, resume=resume, on_step=on_step)
    console.print(f"checkpoint: {result.checkpoint}")
    if result.curve:
        first, last = result.curve[0], result.curve[-1]
        console.print(f"reward {first['reward']:+.3f} (step {first['step']}) → "
                      f"{last['reward']:+.3f} (step {last['step']})")


def evaluate(
    policy: Annotated[str, typer.Option(
        help="baseline | smollm2 | tiny | a checkpoint directory | provider:model.")
    ] = "baseline",
    attempts: Annotated[int, typer.Option(help="Attempts per task.")] = 1,
    max_turns: Annotated[int, typer.Option(help="Turns per episode.")] = 8,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    tasks_file: TasksOpt = None, env: EnvOpt = None, drill: DrillOpt = None,
    limit: LimitOpt = None,
) -> None:
    """Evaluate a policy on arena tasks: pass rate and mean reward per environment."""
    tasks = load_tasks(tasks_file, env, drill, limit)
    with err_console.status(f"evaluating {policy} on {len(tasks)} tasks…") as status:
        trajs = run_evaluate(policy, tasks, home=state.home, seed=seed, attempts=attempts,
                             max_turns=max_turns,
                             on_turn=lambda turn, live: status.update(
                                 f"evaluating {policy}: turn {turn + 1}, {live} episodes live"))
    by_env: dict[str, list[Any]] = {}
    names = {t.id: t.env_name for t in tasks}
    for t in trajs:
        by_env.setdefault(names[t.task_id], []).append(t)
    rows = {env_name: pass_rates(ts) for env_name, ts in sorted(by_env.items())}
    rows["all"] = pass_rates(trajs)
    if as_json:
        console.print_json(json.dumps({"policy": policy, "environments": rows}))
        return
    table = Table(title=f"{policy}: {len(tasks)} tasks × {attempts}")
    for col in ("environment", "attempts", "pass rate", "mean reward", "env faults"):
        table.add_column(col, justify="left" if col == "environment" else "right")
    for name, r in rows.items():
        table.add_row(name, f"{r['attempts']:.0f}", f"{r['pass_rate']:.2f}",
                      f"{r['mean_reward']:+.3f}", f"{r['env_faults']:.0f}")
    console.print(table)


__all__ = ["DrillOpt", "EnvOpt", "LimitOpt", "TasksOpt", "evaluate", "load_tasks", "train"]
