"""The diagnoser agent as a graph: a stored evaluation → a diagnosis with task guidelines.

    load ──▶ diagnose ──▶ END

`load` reads the evaluation's summary (pass rates per environment, tool, level, error class);
`diagnose` runs the diagnoser (`agent_world.evolution.diagnosis.diagnose`: offline from the
statistics, or the `diagnoser` chat model with the prompts of `diagnoser_prompts`, its answer
checked against the real failures) over the evaluation's attempts, failure traces and the
metadata of the environments involved (held-out and training, from the catalog's split).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from agent_world.envs.catalog import Catalog
from agent_world.errors import CatalogError
from agent_world.evolution.diagnosis import diagnose
from agent_world.evolution.diagnosis_model import EnvMeta
from agent_world.evolution.eval_store import evaluation_tasks, load_evaluation
from agent_world.graphs.context import ArenaContext, arena_home, model_field, with_models


@dataclass
class DiagnoserContext(ArenaContext):
    """Configuration of a diagnoser run (Studio's configuration panel)."""

    ROLE: ClassVar[str] = "diagnoser"
    model: str = model_field("diagnoser")


class DiagnoserInput(TypedDict):
    """Which evaluation to diagnose."""

    evaluation_id: str  # e.g. "evolve/r1/baseline" (`agent-world report` lists them)


class DiagnoserOutput(TypedDict, total=False):
    """The diagnosis."""

    evaluation: dict[str, Any]  # the evaluation's summary
    diagnosis: dict[str, Any]  # weak environments/tools, error findings, guidelines, evidence
    text: str  # the diagnosis as a person reads it


class DiagnoserState(DiagnoserInput, DiagnoserOutput, total=False):
    pass


def load(state: DiagnoserState, config: RunnableConfig) -> dict[str, Any]:
    with Catalog.open(arena_home(config)) as cat:
        row = cat.get_evaluation(state["evaluation_id"])
    if row is None:
        raise CatalogError(f"no evaluation {state['evaluation_id']!r} in the catalog")
    return {"evaluation": row.get("summary") or {}}


def diagnose_node(state: DiagnoserState, config: RunnableConfig) -> dict[str, Any]:
    with Catalog.open(arena_home(config)) as cat:
        attempts, traces = load_evaluation(cat, state["evaluation_id"])
        tasks = evaluation_tasks(cat, attempts)
        splits = cat.splits()
        names = {a.env_name for a in attempts} | {n for n, s in splits.items() if s == "train"}
        metas = [EnvMeta.from_spec(cat.get_env(n), "train" if splits.get(n) == "train"
                                   else "heldout") for n in sorted(names) if cat.has_env(n)]
    diagnosis = diagnose(attempts, metas, traces, tasks)
    return {"diagnosis": diagnosis.model_dump(mode="json"), "text": diagnosis.text()}


def build_graph() -> StateGraph:
    g = StateGraph(DiagnoserState, context_schema=DiagnoserContext, input_schema=DiagnoserInput,
                   output_schema=DiagnoserOutput)
    g.add_sequence([("load", load), ("diagnose", with_models(diagnose_node))])
    g.add_edge(START, "load")
    g.add_edge("diagnose", END)
    return g


# For `langgraph dev` / LangGraph Platform: compiled without a checkpointer (the server has one).
graph = build_graph().compile()

__all__ = ["DiagnoserContext", "DiagnoserInput", "DiagnoserOutput", "build_graph", "graph"]
