"""The ReAct verifier agent as a graph: a stored task → its verdict over several runs.

    load ──▶ attempt ⟲ (runs) ──▶ verdict

Each `attempt` is one run of the verifier (`agent_world.rollout.react_attempt.run_attempt`: a
`create_agent` ReAct agent over the task's tool view in a fresh episode, checked by
`check_task`) with the `verifier` chat model, offline the heuristic baseline agent with a
different seed per run. `verdict` keeps the task when more than `threshold` of the runs pass
(`agent_world.synthesis.react_verifier.Verdict`). The state holds one line per run; the trajectories
themselves go to the run's trace.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from agent_world.envs.catalog import Catalog
from agent_world.envs.spec import EnvSpec
from agent_world.errors import CatalogError
from agent_world.graphs.context import ArenaContext, arena_home, model_field, setting, with_models
from agent_world.rollout.react_attempt import run_attempt
from agent_world.synthesis.react_verifier import (
    DEFAULT_RUNS,
    DEFAULT_THRESHOLD,
    Verdict,
    verifier_models,
)
from agent_world.tasks.model import Task


@dataclass
class VerifierContext(ArenaContext):
    """Configuration of a verifier run (Studio's configuration panel)."""

    ROLE: ClassVar[str] = "verifier"
    model: str = model_field("verifier")
    runs: int = setting(DEFAULT_RUNS, "Independent runs of the verifier.")
    threshold: float = setting(DEFAULT_THRESHOLD,
                               "The task is kept when more than this share of the runs pass.")
    max_turns: int = setting(12, "Tool-calling turns per run.")


class VerifierInput(TypedDict):
    """Which task to verify."""

    task_id: str  # a task in the catalog (`agent-world tasks list`)


class VerifierOutput(TypedDict, total=False):
    """The verdict."""

    kept: bool
    passes: int
    runs: int
    pass_rate: float
    attempts: Annotated[list[dict[str, Any]], operator.add]  # one line per run


class VerifierState(VerifierInput, VerifierOutput, total=False):
    instruction: str


def _load(cat: Catalog, task_id: str) -> tuple[Task, EnvSpec]:
    row = cat.get_task(task_id)
    if row is None:
        raise CatalogError(f"no task {task_id!r} in the catalog")
    task = Task.model_validate(row["payload"])
    spec = cat.find_env(task.env_fingerprint)
    if spec is None:
        raise CatalogError(f"task {task_id}: no environment with fingerprint "
                           f"{task.env_fingerprint} in the catalog")
    return task, spec


def load(state: VerifierState, config: RunnableConfig, runtime: Runtime[VerifierContext]
         ) -> dict[str, Any]:
    ctx = VerifierContext.of(runtime)  # a wrong setting stops the run here
    with Catalog.open(arena_home(config)) as cat:
        task, _ = _load(cat, state["task_id"])
    return {"instruction": task.instruction, "runs": ctx.runs}


def attempt(state: VerifierState, config: RunnableConfig, runtime: Runtime[VerifierContext]
            ) -> dict[str, Any]:
    ctx = VerifierContext.of(runtime)
    with Catalog.open(arena_home(config)) as cat:
        task, spec = _load(cat, state["task_id"])
    i = len(state.get("attempts") or [])
    traj = run_attempt(task, verifier_models(state["runs"])(i), spec=spec,
                       max_turns=ctx.max_turns, policy="verifier", role="verifier")
    return {"attempts": [{"run": i, "passed": bool(traj.meta.get("passed")),
                          "reward": traj.reward, "calls": len(traj.steps),
                          "answer": traj.final_answer, "check": traj.meta.get("check")}]}


def route(state: VerifierState) -> str:
    return "attempt" if len(state.get("attempts") or []) < state["runs"] else "verdict"


def verdict(state: VerifierState, runtime: Runtime[VerifierContext]) -> dict[str, Any]:
    v = Verdict(passes=sum(a["passed"] for a in state["attempts"]), runs=state["runs"],
                threshold=VerifierContext.of(runtime).threshold)
    rate = v.passes / len(state["attempts"]) if state["attempts"] else 0.0
    return {"kept": v.kept, "passes": v.passes, "pass_rate": round(rate, 3)}


def build_graph() -> StateGraph:
    g = StateGraph(VerifierState, context_schema=VerifierContext, input_schema=VerifierInput,
                   output_schema=VerifierOutput)
    g.add_node("load", load)
    g.add_node("attempt", with_models(attempt))
    g.add_node("verdict", verdict)
    g.add_edge(START, "load")
    g.add_conditional_edges("load", route, ["attempt", "verdict"])
    g.add_conditional_edges("attempt", route, ["attempt", "verdict"])
    g.add_edge("verdict", END)
    return g


# For `langgraph dev` / LangGraph Platform: compiled without a checkpointer (the server has one).
graph = build_graph().compile()

__all__ = ["VerifierContext", "VerifierInput", "VerifierOutput", "build_graph", "graph"]
