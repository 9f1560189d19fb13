"""The tool designer agent as a graph: one mined environment → a `built` version.

    start ──▶ designer (design ──▶ validate ──▶ repair ──▶ validate … ──▶ store) ──▶ finish

`designer` is the `build` graph's designer subgraph itself (`agent_world.graphs.build_graph`): the
designer writes candidate tools and tests (`agent_world.design.tool_designer`, prompts in
`tool_designer_prompts`), the sandbox cross-validates them, rejected tools go back for repair
(LLM designer), and `store` keeps what passed as a new `built` version, every rejection in the
ledger. `start` and `finish` open and close a `build` run for the one environment.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from agent_world.design.cross_validation import DEFAULT_REPAIRS
from agent_world.design.tool_designer import DEFAULT_TOOLS
from agent_world.envs.catalog import Catalog
from agent_world.errors import AgentWorldError
from agent_world.graphs.build_graph import build_designer
from agent_world.graphs.context import ArenaContext, arena_home, model_field, setting


@dataclass
class DesignerContext(ArenaContext):
    """Configuration of a designer run (Studio's configuration panel)."""

    ROLE: ClassVar[str] = "designer"
    model: str = model_field("tool designer")
    max_tools: int = setting(DEFAULT_TOOLS, "Candidate tools designed, at most.")
    max_repairs: int = setting(DEFAULT_REPAIRS,
                               "Repair rounds for rejected tools (LLM designer).")


class DesignerInput(TypedDict):
    """Which environment to build."""

    env: str  # a catalog environment with a mined version


class DesignerOutput(TypedDict, total=False):
    """What the designer built."""

    run_id: str
    result: dict[str, Any]  # status, tools kept/candidates, writes, rejections, tests, version


class DesignerState(TypedDict, total=False):
    env: str
    run_id: str
    max_repairs: int
    max_tools: int
    results: Annotated[list[dict[str, Any]], operator.add]
    result: dict[str, Any]


def start(state: DesignerState, config: RunnableConfig, runtime: Runtime[DesignerContext]
          ) -> dict[str, Any]:
    ctx = DesignerContext.of(runtime)  # a wrong setting stops the run here
    with Catalog.open(arena_home(config)) as cat:
        if cat.get_env_at_stage(state["env"], "mined") is None:
            raise AgentWorldError(f"environment {state['env']!r} has no mined version to build")
        run_id = state.get("run_id") or cat.start_run("build", summary={"envs": [state["env"]]})
    return {"run_id": run_id, "max_tools": ctx.max_tools, "max_repairs": ctx.max_repairs}


def finish(state: DesignerState, config: RunnableConfig) -> dict[str, Any]:
    [result] = state["results"][-1:]
    with Catalog.open(arena_home(config)) as cat:
        cat.finish_run(state["run_id"], "done" if result["status"] == "built" else "failed",
                       {k: result.get(k) for k in ("env", "status", "kept", "candidates")})
    return {"result": result}


def build_graph() -> StateGraph:
    g = StateGraph(DesignerState, context_schema=DesignerContext, input_schema=DesignerInput,
                   output_schema=DesignerOutput)
    g.add_sequence([("start", start), ("designer", build_designer().compile()),
                    ("finish", finish)])
    g.add_edge(START, "start")
    g.add_edge("finish", END)
    return g


# For `langgraph dev` / LangGraph Platform: compiled without a checkpointer (the server has one).
graph = build_graph().compile()

__all__ = ["DesignerContext", "DesignerInput", "DesignerOutput", "build_graph", "graph"]
