"""The task synthesizer agent as a graph: an environment → candidate tasks and their trust gates.

    draft ──▶ gate ──▶ END

`draft` takes weighted random walks on the environment's tool-dependency graph, executes them
for the ground truth and has the synthesizer write the instruction and rubric
(`agent_world.synthesis.synthesizer.build_candidate`; the `synthesizer` chat model with the
prompts of `synthesizer_prompts`, or the offline templates). `gate` runs the trust gates on
every candidate (the check fails on the initial state, the gold solution passes twice,
known-wrong solutions fail). Candidates are JSON lines under `<home>/agent_runs/synthesizer/`;
the state holds their summaries. Nothing is stored as a task: the `synthesize` graph adds the
ReAct verifier and the catalog, and the `verifier` graph checks stored tasks.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from agent_world.envs.catalog import Catalog
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.examples import load_example
from agent_world.envs.spec import EnvSpec
from agent_world.graphs.context import ArenaContext, arena_home, model_field, setting, with_models
from agent_world.models import chat_model
from agent_world.synthesis.gates import run_gates
from agent_world.synthesis.synthesizer import build_candidate
from agent_world.tasks.difficulty import recipe_for
from agent_world.tasks.model import Task
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.toolgraph import tool_graph


@dataclass
class SynthesizerContext(ArenaContext):
    """Configuration of a synthesizer run (Studio's configuration panel)."""

    ROLE: ClassVar[str] = "synthesizer"
    model: str = model_field("synthesizer")
    walks_per_candidate: int = setting(
        10, "Walks tried per requested candidate before giving up.")


class SynthesizerInput(TypedDict, total=False):
    """What to synthesize."""

    env: str  # a catalog environment with tools, or a bundled example (airline, ecommerce)
    count: int  # candidates wanted (default 3)
    level: int  # difficulty level 1..5 (default 2)
    kind: Literal["graph", "programmatic"]  # default graph
    seed: int


class SynthesizerOutput(TypedDict, total=False):
    """The candidates and what the gates said."""

    candidates_path: str  # JSON lines, one Task each
    candidates: list[dict[str, Any]]  # id, kind, level, instruction, rubric, gates, passed
    no_candidate: dict[str, int]  # walks that gave no candidate, by reason


class SynthesizerState(SynthesizerInput, SynthesizerOutput, total=False):
    pass


def _spec(cat: Catalog, name: str) -> EnvSpec:
    return cat.get_env(name) if cat.has_env(name) else load_example(name)


def _summary(task: Task) -> dict[str, Any]:
    return {"id": task.id, "kind": task.kind, "level": task.difficulty.level,
            "instruction": task.instruction, "rubric": list(task.rubric or [])}


def draft(state: SynthesizerState, config: RunnableConfig,
          runtime: Runtime[SynthesizerContext]) -> dict[str, Any]:
    ctx = SynthesizerContext.of(runtime)
    home = arena_home(config)
    count, level = state.get("count", 3), state.get("level", 2)
    kind, seed = state.get("kind", "graph"), state.get("seed", 0)
    with Catalog.open(home) as cat:
        spec = _spec(cat, state["env"])
    tasks: dict[str, Task] = {}
    misses: dict[str, int] = {}
    with EnvRuntime() as env_runtime:
        graph = tool_graph(spec, home=home, runtime=env_runtime)
        sampler, model = ValueSampler(spec), chat_model("synthesizer")
        for attempt in range(count * max(ctx.walks_per_candidate, 1)):
            if len(tasks) >= count:
                break
            rng = random.Random(f"{seed}:{spec.fingerprint}:{attempt}")
            recipe = recipe_for(max(1, level - 1) if kind == "programmatic" else level, rng)
            task = build_candidate(spec, graph, env_runtime, rng, recipe, kind,
                                   seed=seed * 100_000 + attempt, sampler=sampler, model=model,
                                   origin={"agent": "synthesizer", "attempt": attempt})
            if isinstance(task, str):
                misses[task] = misses.get(task, 0) + 1
            elif task.difficulty.level != level:  # a walk that fell short of (or overshot) it
                misses["off_level"] = misses.get("off_level", 0) + 1
            else:
                tasks.setdefault(task.id, task)
    path = home / "agent_runs" / "synthesizer" / f"{spec.name}-{kind}-l{level}-s{seed}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(t.model_dump_json() + "\n" for t in tasks.values()))
    return {"candidates_path": str(path), "no_candidate": misses,
            "candidates": [_summary(t) for t in tasks.values()]}


def gate(state: SynthesizerState, config: RunnableConfig) -> dict[str, Any]:
    tasks = [Task.model_validate_json(line)
             for line in Path(state["candidates_path"]).read_text().splitlines() if line]
    with Catalog.open(arena_home(config)) as cat:
        spec = _spec(cat, state["env"])
    out = []
    with EnvRuntime() as runtime:
        for task in tasks:
            gates = run_gates(task, spec, runtime)
            out.append({**_summary(task), "passed": all(g.passed for g in gates),
                        "gates": [g.model_dump(mode="json") for g in gates]})
    return {"candidates": out}


def build_graph() -> StateGraph:
    g = StateGraph(SynthesizerState, context_schema=SynthesizerContext,
                   input_schema=SynthesizerInput, output_schema=SynthesizerOutput)
    g.add_sequence([("draft", with_models(draft)), ("gate", gate)])
    g.add_edge(START, "draft")
    g.add_edge("gate", END)
    return g


# For `langgraph dev` / LangGraph Platform: compiled without a checkpointer (the server has one).
graph = build_graph().compile()

__all__ = ["SynthesizerContext", "SynthesizerInput", "SynthesizerOutput", "build_graph", "graph"]
