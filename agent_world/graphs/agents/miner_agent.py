"""The miner agent as a graph: one source → a mined database (EnvSpec JSON file).

    read ──▶ plan ──▶ gather ──▶ draft ──▶ complexify ⟲ (iterations) ──▶ finish

Each node is one step of the deep-research miner (`agent_world.mining.llm_miner`): read the source
(bounded to what the miner drafts from), plan research questions, gather evidence (from the
source and the configured web search), draft the schema and seed rows, complexify them
`iterations` times (each validated and semantically gated), then annotate source fidelity
(tool coverage, violations). The document, evidence and every intermediate spec are JSON files
under `<home>/agent_runs/miner/<source key>/`; the state holds their paths and statistics. The
result is not put in the catalog (the `mine` graph does that for a whole run): import it with
`agent-world env import SPEC.json`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from agent_world.envs.spec import EnvSpec
from agent_world.graphs.context import ArenaContext, arena_home, model_field, setting, with_models
from agent_world.mining.complexify_step import complexify
from agent_world.mining.draft_step import draft_database
from agent_world.mining.llm_miner import (
    bounded_document,
    check_iterations,
    gather_evidence,
    plan_questions,
    summarize_evidence,
)
from agent_world.mining.offline.evidence import Evidence
from agent_world.mining.semantic_gate import annotate_fidelity
from agent_world.mining.sources import DEFAULT_TIMEOUT, read_source
from agent_world.mining.sources.base import SourceDocument
from agent_world.mining.validation import database_stats
from agent_world.mining.web_search import MCPSearch, configured_search_spec


@dataclass
class MinerContext(ArenaContext):
    """Configuration of a miner run (Studio's configuration panel)."""

    ROLE: ClassVar[str] = "miner"
    model: str = model_field("miner")
    source_timeout_s: float = setting(DEFAULT_TIMEOUT,
                                      "Seconds the source may take to start and be read.")


class MinerInput(TypedDict, total=False):
    """What to mine."""

    source: str  # "mcp:CMD", "mcp-url:URL", "file:PATH"
    iterations: int  # complexification iterations, 0..10 (default 2)
    seed: int
    web_search: str | None  # "mcp:CMD#tool" / "mcp-url:URL#tool"; else $AGENT_WORLD_WEB_SEARCH


class MinerOutput(TypedDict, total=False):
    """The mined database."""

    spec_path: str  # the final EnvSpec JSON
    name: str
    questions: list[str]
    evidence: dict[str, Any]  # counts per kind of evidence
    history: list[dict[str, Any]]  # statistics of the draft (0) and each iteration
    stats: dict[str, Any]  # tables, rows, NULL cells, FK skew of the final database
    fidelity: dict[str, Any]  # tool coverage and semantic violations against the source


class MinerState(MinerInput, MinerOutput, total=False):
    workdir: str
    doc_path: str
    evidence_path: str
    done: int  # complexification iterations finished


def _doc(state: MinerState) -> SourceDocument:
    return SourceDocument.model_validate_json(Path(state["doc_path"]).read_text())


def _spec(state: MinerState) -> EnvSpec:
    return EnvSpec.load(state["spec_path"])


def _stats(spec: EnvSpec) -> list[dict[str, Any]]:
    return list(spec.provenance.stats.get("iterations") or [])


def read(state: MinerState, config: RunnableConfig, runtime: Runtime[MinerContext]
         ) -> dict[str, Any]:
    ctx = MinerContext.of(runtime)
    doc = bounded_document(read_source(state["source"], timeout=ctx.source_timeout_s))
    workdir = arena_home(config) / "agent_runs" / "miner" / doc.content_key()[:16]
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "document.json").write_text(doc.model_dump_json())
    return {"workdir": str(workdir), "doc_path": str(workdir / "document.json"),
            "iterations": check_iterations(state.get("iterations", 2)),
            "seed": state.get("seed", 0), "done": 0}


def plan(state: MinerState) -> dict[str, Any]:
    return {"questions": plan_questions(_doc(state))}


def gather(state: MinerState) -> dict[str, Any]:
    doc = _doc(state)
    spec = configured_search_spec(state.get("web_search"))
    if spec:
        with MCPSearch(spec) as search:
            evidence = gather_evidence(doc, state["questions"], search)
    else:
        evidence = gather_evidence(doc, state["questions"])
    path = Path(state["workdir"]) / "evidence.json"
    path.write_text(json.dumps([e.model_dump(mode="json") for e in evidence]))
    return {"evidence_path": str(path), "evidence": summarize_evidence(evidence)}


def draft(state: MinerState) -> dict[str, Any]:
    evidence = [Evidence.model_validate(e)
                for e in json.loads(Path(state["evidence_path"]).read_text())]
    spec = draft_database(_doc(state), evidence, state["seed"])
    path = spec.save(Path(state["workdir"]) / "spec-0.json")
    return {"spec_path": str(path), "name": spec.name, "history": _stats(spec)}


def grow(state: MinerState) -> dict[str, Any]:
    done = state["done"] + 1
    spec = complexify(_spec(state), done, state["seed"], _doc(state))
    path = spec.save(Path(state["workdir"]) / f"spec-{done}.json")
    return {"spec_path": str(path), "done": done, "history": _stats(spec)}


def route(state: MinerState) -> str:
    return "complexify" if state["done"] < state["iterations"] else "finish"


def finish(state: MinerState) -> dict[str, Any]:
    spec = annotate_fidelity(_doc(state), _spec(state))
    path = spec.save(Path(state["workdir"]) / "spec.json")
    coverage = spec.provenance.stats.get("tool_coverage") or {}
    return {"spec_path": str(path), "stats": database_stats(spec),
            "fidelity": {"coverage": {k: coverage.get(k) for k in ("covered", "total", "ratio")},
                         "violations": spec.provenance.stats.get("semantic_violations") or {}}}


def build_graph() -> StateGraph:
    g = StateGraph(MinerState, context_schema=MinerContext, input_schema=MinerInput,
                   output_schema=MinerOutput)
    g.add_node("read", read)
    g.add_node("plan", with_models(plan))
    g.add_node("gather", gather)
    g.add_node("draft", with_models(draft))
    g.add_node("complexify", with_models(grow))
    g.add_node("finish", finish)
    g.add_edge(START, "read")
    g.add_edge("read", "plan")
    g.add_edge("plan", "gather")
    g.add_edge("gather", "draft")
    g.add_conditional_edges("draft", route, ["complexify", "finish"])
    g.add_conditional_edges("complexify", route, ["complexify", "finish"])
    g.add_edge("finish", END)
    return g


# For `langgraph dev` / LangGraph Platform: compiled without a checkpointer (the server has one).
graph = build_graph().compile()

__all__ = ["MinerContext", "MinerInput", "MinerOutput", "MinerState", "build_graph", "graph"]
