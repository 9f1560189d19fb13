"""The `evaluate` graph: a policy's held-out evaluation, stored with its traces.

    select ──▶ evaluate ──▶ END

`select` resolves the tasks: the ids given, else the catalog's tasks of the environments given,
else of every held-out environment (the catalog's split); at most `per_env` per environment.
`evaluate` runs one attempt of the policy at each task (`agent_world.graphs.stages.run_policy`:
rollouts in fresh episodes, rewarded by the task check) and stores the scored attempts under
`evaluation_id` (`agent_world.evolution.eval_store.record_evaluation`: pass rates overall and
per environment, tool, level, kind and error class; storing the same id again replaces it).
The `diagnoser` graph reads the result back. The self-evolution rounds evaluate the same way.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from agent_world.envs.catalog import Catalog
from agent_world.errors import AgentWorldError
from agent_world.evolution.eval_store import record_evaluation
from agent_world.graphs import stages
from agent_world.graphs.context import ArenaContext, arena_home, model_field, setting, with_models
from agent_world.tasks.model import Task


@dataclass
class EvaluateContext(ArenaContext):
    """Settings of an evaluation (what LangGraph Studio shows)."""

    judge_model: str = model_field("rubric judge (graph tasks)")
    max_turns: int = setting(8, "Turns the policy gets per task.")
    seed: int = setting(0, "Random seed of the policy's runs.")


class EvaluateInput(TypedDict, total=False):
    """Whom to evaluate on what."""

    policy: str  # baseline | tiny | smollm2 | a checkpoint directory | provider:model
    tasks: list[str]  # task ids; empty → the tasks of `envs`
    envs: list[str]  # environments; empty → every held-out environment
    per_env: int  # at most this many tasks per environment (0: all)
    evaluation_id: str  # where it is stored; default a new id
    label: str


class EvaluateOutput(TypedDict, total=False):
    """The stored evaluation."""

    evaluation_id: str
    tasks: list[str]
    summary: dict[str, Any]  # pass rate overall and per environment/tool/level/kind/error


class EvaluateState(EvaluateInput, EvaluateOutput, total=False):
    pass


def select(state: EvaluateState, config: RunnableConfig, runtime: Runtime[EvaluateContext]
           ) -> dict[str, Any]:
    EvaluateContext.of(runtime)  # a wrong setting stops the run here, naming it
    with Catalog.open(arena_home(config)) as cat:
        ids = list(state.get("tasks") or [])
        if not ids:
            envs = list(state.get("envs") or [])
            if not envs:
                envs = sorted(n for n, s in cat.splits().items() if s == "heldout")
            if not envs:
                raise AgentWorldError("nothing to evaluate: give tasks or envs (no environment "
                                      "is held out yet; `agent-world evolve` holds some out)")
            per_env = state.get("per_env") or 0
            for name in envs:
                rows = cat.list_tasks(cat.get_env(name).fingerprint)
                ids += [r["id"] for r in (rows[:per_env] if per_env else rows)]
        if not ids:
            raise AgentWorldError("no task to evaluate on: synthesize some first")
    return {"tasks": ids, "policy": state.get("policy") or "baseline",
            "evaluation_id": state.get("evaluation_id") or f"eval-{uuid.uuid4().hex[:8]}"}


def evaluate(state: EvaluateState, config: RunnableConfig, runtime: Runtime[EvaluateContext]
             ) -> dict[str, Any]:
    ctx = EvaluateContext.of(runtime)
    home = arena_home(config)
    with Catalog.open(home) as cat:
        rows = {i: cat.get_task(i) for i in state["tasks"]}
        missing = [i for i, r in rows.items() if r is None]
        if missing:
            raise AgentWorldError(f"{len(missing)} task(s) not in the catalog: {missing[:3]}")
        tasks = [Task.model_validate(r["payload"]) for r in rows.values() if r]
        trajectories = stages.run_policy(state["policy"], tasks, home, seed=ctx.seed,
                                         max_turns=ctx.max_turns)
        report = record_evaluation(cat, state["evaluation_id"], tasks, trajectories,
                                   label=state.get("label") or f"{state['policy']} evaluation",
                                   policy=state["policy"])
    return {"summary": report.summary()}


def build_graph() -> StateGraph:
    g = StateGraph(EvaluateState, context_schema=EvaluateContext, input_schema=EvaluateInput,
                   output_schema=EvaluateOutput)
    g.add_sequence([("select", select), ("evaluate", with_models(evaluate))])
    g.add_edge(START, "select")
    g.add_edge("evaluate", END)
    return g


# For `langgraph dev` / LangGraph Platform: compiled without a checkpointer (the server has one).
graph = build_graph().compile()

__all__ = ["EvaluateContext", "EvaluateInput", "EvaluateOutput", "build_graph", "graph"]
