"""Held-out evaluations into LangSmith (when tracing is on), so runs compare in its own UI.

    links = publish_evaluation(evaluation_id, dataset, tasks, trajectories, attempts)

* each held-out set is a **dataset** (one example per task: the request as input, the
  reference answer and gold tools as output; example ids derived from the task ids, so a set
  published twice is not duplicated);
* each evaluation is an **experiment** on it (a project with `reference_dataset_id`): one run
  per attempt (the trajectory's messages, calls and answer), linked to its example;
* each attempt's **reward components** are feedback on its run (`reward`, `passed` and one key
  per component, e.g. `check`, `format.repeat`).

The real `langsmith` client does the talking (endpoint and key from `LANGSMITH_ENDPOINT` /
`LANGSMITH_API_KEY`, as for traces). A failure to publish is logged and the evaluation goes
on: the catalog keeps every score either way.
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from typing import Any

from langsmith import Client
from langsmith.utils import LangSmithError, tracing_is_enabled

from agent_world.tasks.evaluation import Attempt
from agent_world.tasks.model import Task, Trajectory

log = logging.getLogger(__name__)

NAMESPACE = uuid.UUID("6f1d3c1e-5b0e-4f4e-9a53-2a6b8e1f0c77")  # ids of examples and runs


def tracing_on() -> bool:
    """Whether LangSmith tracing is on (`LANGSMITH_TRACING=true`)."""
    return bool(tracing_is_enabled())


def _id(*parts: str) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, "\x00".join(parts))


def _dataset(client: Client, name: str, tasks: list[Task]) -> Any:
    """The dataset `name` with an example for every task (created or completed)."""
    if client.has_dataset(dataset_name=name):
        ds = client.read_dataset(dataset_name=name)
        have = {str(e.id) for e in client.list_examples(dataset_id=ds.id)}
    else:
        ds = client.create_dataset(name, description="Agent-World held-out tasks",
                                   metadata={"source": "agent-world"})
        have = set()
    new = [t for t in dict((t.id, t) for t in tasks).values()
           if str(_id(name, t.id)) not in have]
    if new:
        client.create_examples(dataset_id=ds.id, examples=[{
            "id": str(_id(name, t.id)),
            "inputs": {"instruction": t.instruction, "env": t.env_name,
                       "tools": sorted(t.tool_view) or None},
            "reference_outputs": {"reference_answer": t.reference_answer,
                                  "gold_tools": [c.tool for c in t.chain]},
            "metadata": {"task_id": t.id, "env_name": t.env_name, "kind": t.kind,
                         "level": t.difficulty.level}} for t in new])
    return ds


def publish_evaluation(evaluation_id: str, dataset: str, tasks: list[Task],
                       trajectories: list[Trajectory], attempts: list[Attempt],
                       client: Client | None = None,
                       metadata: dict[str, Any] | None = None) -> dict[str, str]:
    """Publish one evaluation (see the module docstring); what → URL of what was published
    ({} when it could not be)."""
    try:
        return _publish(evaluation_id, dataset, tasks, trajectories, attempts,
                        client or Client(), metadata or {})
    except (LangSmithError, OSError, ValueError) as exc:
        log.warning("LangSmith: evaluation %s not published (%s)", evaluation_id, exc)
        return {}


def _publish(evaluation_id: str, dataset: str, tasks: list[Task],
             trajectories: list[Trajectory], attempts: list[Attempt], client: Client,
             metadata: dict[str, Any]) -> dict[str, str]:
    ds = _dataset(client, dataset, tasks)
    project = client.create_project(
        evaluation_id, reference_dataset_id=ds.id, upsert=True,
        description=f"Agent-World evaluation {evaluation_id} on {dataset}",
        metadata={"evaluation_id": evaluation_id, **metadata})
    now = datetime.now(UTC)
    runs = []
    for task, traj, a in zip(tasks, trajectories, attempts, strict=True):
        run_id = _id(evaluation_id, a.trajectory_id)
        runs.append((run_id, traj, a))
        client.create_run(
            f"attempt:{task.id}", {"instruction": task.instruction}, "chain", id=run_id,
            project_name=evaluation_id, reference_example_id=_id(dataset, task.id),
            start_time=now, end_time=now,
            outputs={"answer": traj.final_answer, "finished": traj.finished,
                     "calls": [{"tool": s.tool, "arguments": s.arguments, "ok": s.ok,
                                "result": s.result} for s in traj.steps if s.tool],
                     "messages": traj.messages},
            extra={"metadata": {"trajectory_id": a.trajectory_id, "task_id": task.id,
                                "env_name": task.env_name, "level": a.level,
                                "error_class": a.error_class, "evaluation_id": evaluation_id,
                                **metadata}},
            tags=[f"env:{task.env_name}", f"evaluation:{evaluation_id}"])
    client.flush()  # the runs exist before their feedback arrives
    for run_id, traj, a in runs:
        scores = {"reward": traj.reward, "passed": float(a.passed),
                  **{k: float(v) for k, v in traj.reward_components.items()}}
        for key, value in scores.items():
            # each attempt is its own trace, in the experiment's project (feedback without
            # the project is deprecated by LangSmith)
            client.create_feedback(run_id, key, score=value, trace_id=run_id,
                                   session_id=project.id,
                                   feedback_id=_id(evaluation_id, a.trajectory_id, key),
                                   comment=a.error_class if key == "passed" else None)
    base = f"{getattr(client, '_host_url', '') or ''}/o/{project.tenant_id}/datasets/{ds.id}"
    return {"dataset": base, "experiment": f"{base}/compare?selectedSessions={project.id}"}


__all__ = ["publish_evaluation", "tracing_on"]
