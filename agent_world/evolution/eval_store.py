"""Held-out evaluation records: score a policy's attempts and keep them, traces included, in the
catalog (`evaluations` + `eval_attempts`), so the diagnoser and the report read them back."""

from __future__ import annotations

from typing import Any

from agent_world.tasks.evaluation import Attempt, EvalReport, attempt, score
from agent_world.tasks.model import Task, Trajectory


def record_evaluation(catalog: Any, evaluation_id: str, tasks: list[Task],
                      trajectories: list[Trajectory], label: str = "",
                      policy: str = "") -> EvalReport:
    """Score `trajectories` (one per task, same order) and store them under `evaluation_id`;
    storing the same id again replaces the evaluation (a resumed round never duplicates)."""
    if len(tasks) != len(trajectories):
        raise ValueError(f"{len(tasks)} tasks but {len(trajectories)} trajectories")
    attempts: list[Attempt] = []
    rows: list[dict[str, Any]] = []
    for i, (task, traj) in enumerate(zip(tasks, trajectories, strict=True)):
        tid = f"{evaluation_id}/{i:04d}"
        a = attempt(task, traj, tid)
        attempts.append(a)
        rows.append({**a.model_dump(mode="json"), "instruction": task.instruction,
                     "trajectory": traj.model_dump(mode="json")})
    report = score(attempts)
    catalog.put_evaluation(evaluation_id, rows, report.summary(), label=label, policy=policy)
    return report


def load_evaluation(catalog: Any, evaluation_id: str
                    ) -> tuple[list[Attempt], dict[str, Trajectory]]:
    """The attempts of a stored evaluation and the traces of its failures, by trajectory id."""
    attempts, traces = [], {}
    fields = set(Attempt.model_fields)
    for row in catalog.evaluation_attempts(evaluation_id):
        a = Attempt.model_validate({k: v for k, v in row.items() if k in fields})
        attempts.append(a)
        if not a.passed and row.get("trajectory"):
            traces[a.trajectory_id] = Trajectory.model_validate(row["trajectory"])
    return attempts, traces


def evaluation_tasks(catalog: Any, attempts: list[Attempt]) -> dict[str, Task]:
    """The tasks the attempts were made on, by id (those still in the catalog): their gold
    chains tell the diagnoser which tool and which argument each failure missed."""
    out: dict[str, Task] = {}
    for task_id in dict.fromkeys(a.task_id for a in attempts):
        row = catalog.get_task(task_id)
        if row is not None:
            out[task_id] = Task.model_validate(row["payload"])
    return out


__all__ = ["evaluation_tasks", "load_evaluation", "record_evaluation"]
