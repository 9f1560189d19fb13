"""Helpers several unit modules share."""

from __future__ import annotations

from typing import Any

from agent_world.envs import EnvRuntime, EnvSpec
from agent_world.tasks.model import Task
from agent_world.tasks.truth import ground_truth
from agent_world.tasks.walks import Plan


def graph_task(spec: EnvSpec, runtime: EnvRuntime, plan: Plan, answer: dict[str, Any],
               instruction: str = "do it") -> Task:
    """A graph task grounded by executing `plan` (its chain, answer and expected changes)."""
    truth = ground_truth(spec, runtime, plan, answer, seed=0)
    assert not isinstance(truth, str), truth
    return Task(kind="graph", env_name=spec.name, env_fingerprint=spec.fingerprint,
                instruction=instruction, chain=truth.chain, reference_answer=truth.answer,
                expected_changes=truth.expected_changes,
                origin={"plan": plan.model_dump(mode="json"), "answer": answer}).with_id()
