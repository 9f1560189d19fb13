"""Helpers several unit modules share."""

from __future__ import annotations

import random
from typing import Any

from agent_world.envs import EnvRuntime, EnvSpec
from agent_world.synthesis.gates import run_gates
from agent_world.synthesis.synthesizer import build_candidate
from agent_world.tasks.difficulty import Recipe
from agent_world.tasks.model import Task
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.toolgraph import build_tool_graph
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


def gated_one_call_tasks(spec: EnvSpec, start: str, tries: int = 12) -> list[Task]:
    """The level-1 graph candidates from `start` (seeds 0..tries-1) that pass every gate."""
    kept = []
    with EnvRuntime() as rt:
        graph, sampler = build_tool_graph(spec, runtime=rt), ValueSampler(spec)
        for i in range(tries):
            cand = build_candidate(spec, graph, rt, random.Random(i), Recipe(1, False, False),
                                   "graph", seed=i, sampler=sampler, start=start)
            if isinstance(cand, Task) and all(g.passed for g in run_gates(cand, spec, rt)):
                kept.append(cand)
    return kept
