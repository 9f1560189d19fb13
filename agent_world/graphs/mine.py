"""The `mine` graph: tool-ecosystem sources → themes, a taxonomy and complexified databases.

    start ──Send per source──▶ mine_source ──▶ taxonomy ──▶ END

`start` resolves the sources (the embedded default when none are given) and opens a run in the
catalog; each `mine_source` branch reads one source, runs the miner agent (questions, evidence,
schema + seed rows, k complexification iterations), classifies the theme and stores the mined
environment and theme in the catalog; `taxonomy` merges near-duplicate themes and closes the run.
A source that fails is written to the ledger with its reason; the other branches go on.

State holds identifiers and summaries only; specs live in the catalog. Branch writes are
idempotent (a spec with an unchanged fingerprint adds no version, themes are keyed by source), so
a killed run resumed on the same thread (`invoke(None, config)`) re-runs only unfinished
branches and never duplicates a theme.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from typing_extensions import TypedDict

from agent_world.envs.catalog import Catalog


class MineState(TypedDict, total=False):
    sources: list[str]  # "mcp:CMD", "mcp-url:URL", "file:PATH"; empty → embedded default
    iterations: int
    seed: int
    web_search: str | None  # "mcp:CMD#tool" / "mcp-url:URL#tool"; else $AGENT_WORLD_WEB_SEARCH
    run_id: str
    results: Annotated[list[dict[str, Any]], operator.add]
    merged: list[list[str]]  # near-duplicate theme pairs merged: [kept, dropped]
    summary: dict[str, Any]


class SourceTask(TypedDict):
    source: str
    index: int
    iterations: int
    seed: int
    web_search: str | None
    run_id: str
    occurrence: int  # >0: another source of this run has the same name; its env gets a suffix


def _catalog(config: RunnableConfig | None) -> Catalog:
    home = ((config or {}).get("configurable") or {}).get("home")
    return Catalog.open(home)


def start(state: MineState, config: RunnableConfig) -> dict[str, Any]:
    from agent_world.tools.sources import default_sources

    sources = list(state.get("sources") or [])
    if not sources:
        sources = [ref.spec for ref in default_sources()]
    cat = _catalog(config)
    try:
        run_id = state.get("run_id") or cat.start_run("mine", summary={"sources": sources})
    finally:
        cat.close()
    from agent_world.tools.web_search import configured_search_spec

    return {"sources": sources, "run_id": run_id, "iterations": state.get("iterations", 3),
            "seed": state.get("seed", 0),
            "web_search": configured_search_spec(state.get("web_search"))}


def fan_out(state: MineState) -> list[Send]:
    from agent_world.errors import AgentWorldError
    from agent_world.tools.sources import parse_source

    seen: dict[str, int] = {}
    sends = []
    for i, s in enumerate(state["sources"]):
        try:
            name = parse_source(s).name
        except AgentWorldError:
            name = s  # the branch itself reports the bad source
        occurrence = seen.get(name, 0)
        seen[name] = occurrence + 1
        sends.append(Send("mine_source", SourceTask(
            source=s, index=i, iterations=state["iterations"], seed=state["seed"],
            run_id=state["run_id"], web_search=state.get("web_search"), occurrence=occurrence)))
    return sends


def mine_source(task: SourceTask, config: RunnableConfig) -> dict[str, Any]:
    """One source, start to finish. Expected failures go to the ledger, not up the graph."""
    from agent_world.agents.coverage import uncovered_reasons
    from agent_world.agents.miner import mine_theme
    from agent_world.agents.taxonomy import classify
    from agent_world.errors import AgentWorldError
    from agent_world.tools.sources import read_source

    cat = _catalog(config)
    try:
        try:
            doc = read_source(task["source"])
            with _web_search(task, cat) as search:
                mined = mine_theme(doc, iterations=task["iterations"],
                                   seed=task["seed"] + task["index"], search=search)
        except Exception as exc:  # any failure of one source is that source's, not the run's
            reason = str(exc) if isinstance(exc, AgentWorldError) else \
                f"internal error: {type(exc).__name__}: {exc}"
            cat.record("mine", task["source"], reason, run_id=task["run_id"])
            return {"results": [{"source": task["source"], "status": "failed",
                                 "error": reason}]}
        spec = mined.spec
        theme = spec.theme.model_copy(update={"taxonomy": classify(doc)})
        name = f"{spec.name}_{task['occurrence'] + 1}" if task.get("occurrence") else spec.name
        spec = spec.model_copy(update={"theme": theme, "name": name})
        summary = cat.put_env(spec, stage="mined")
        stats = [it.model_dump(exclude={"changes"}) for it in mined.iterations]
        coverage = spec.provenance.stats.get("tool_coverage") or {}
        fidelity = {"coverage": {k: coverage.get(k) for k in ("covered", "total", "ratio")},
                    "violations": spec.provenance.stats.get("semantic_violations") or {}}
        for rej in spec.provenance.stats.get("rejected_iterations") or []:
            cat.record("mine", task["source"],
                       f"complexification iteration {rej['iteration']} rejected, the previous "
                       f"database kept: {rej['reason']}", run_id=task["run_id"],
                       payload={"env": spec.name, "iteration": rej["iteration"]})
        for tool, lacks in uncovered_reasons(coverage):
            cat.record("mine", f"{task['source']}#{tool}",
                       f"tool {tool!r} is not covered by the mined database: {lacks}",
                       run_id=task["run_id"], payload={"env": spec.name, "tool": tool})
        cat.put_theme(theme, env_name=spec.name,
                      payload={"stats": stats, "fingerprint": summary.fingerprint,
                               "questions": mined.questions,
                               "evidence": mined.evidence_summary,
                               "tools": [t.name for t in doc.tools], **fidelity})
        return {"results": [{"source": task["source"], "status": "mined", "env": spec.name,
                             "theme": theme.name, "taxonomy": str(theme.taxonomy),
                             "fingerprint": summary.fingerprint, "stats": stats,
                             "seconds": mined.seconds, **fidelity}]}
    finally:
        cat.close()


@contextmanager
def _web_search(task: SourceTask, cat: Catalog) -> Iterator[Any]:
    """The configured web-search tool for one branch, or None. A search backend that cannot
    start is noted in the ledger and mining goes on from the source alone."""
    spec = task.get("web_search")
    if not spec:
        yield None
        return
    from agent_world.errors import AgentWorldError
    from agent_world.tools.web_search import MCPSearch

    try:
        search = MCPSearch(spec).__enter__()
    except AgentWorldError as exc:
        cat.record("mine", task["source"], f"web search unavailable, mined without it: {exc}",
                   run_id=task["run_id"])
        yield None
        return
    try:
        yield search
    finally:
        search.close()


def taxonomy(state: MineState, config: RunnableConfig) -> dict[str, Any]:
    from agent_world.agents.taxonomy import merge_near_duplicates

    cat = _catalog(config)
    try:
        mined = [r for r in state.get("results", []) if r["status"] == "mined"]
        themes = [cat.get_env(r["env"]).theme for r in mined]
        kept, merged_pairs = merge_near_duplicates(themes)
        merged = [[a, b] for a, b, _ in merged_pairs]
        by_name = {t.name: t for t in themes}
        for a, b, similarity in merged_pairs:
            cat.merge_theme(by_name[b], into=a)
            cat.record("mine", b, f"near-duplicate of theme {a!r} (similarity {similarity:.2f}); "
                       "merged", run_id=state["run_id"])
        failed = [r for r in state.get("results", []) if r["status"] == "failed"]
        summary = {"sources": len(state["sources"]), "mined": len(mined),
                   "failed": len(failed), "themes": len(kept), "merged": len(merged)}
        cat.finish_run(state["run_id"], "done", summary)
        return {"merged": merged, "summary": summary}
    finally:
        cat.close()


def build_graph() -> StateGraph:
    g = StateGraph(MineState)
    g.add_node("start", start)
    g.add_node("mine_source", mine_source)
    g.add_node("taxonomy", taxonomy)
    g.add_edge(START, "start")
    g.add_conditional_edges("start", fan_out, ["mine_source"])
    g.add_edge("mine_source", "taxonomy")
    g.add_edge("taxonomy", END)
    return g


# For `langgraph dev` / LangGraph Platform: compiled without a checkpointer (the server has one).
graph = build_graph().compile()
