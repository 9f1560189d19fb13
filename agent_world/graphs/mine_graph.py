"""The `mine` graph: tool-ecosystem sources → themes, a taxonomy and complexified databases.

    start ──Send per source──▶ mine_source ──▶ taxonomy ──▶ END

`start` resolves the sources (the embedded default when none are given) and opens a run in the
catalog; each `mine_source` branch reads one source, runs the miner agent (questions, evidence,
schema + seed rows, k complexification iterations), classifies the theme and stores the mined
environment and theme in the catalog; `taxonomy` merges near-duplicate themes and closes the run.
A source that fails is written to the ledger with its reason; the other branches go on.

State holds identifiers and summaries only; specs live in the catalog. Writes are keyed on what
a source says, not where it was read from (`SourceDocument.content_key`): a source named twice,
the same file in another folder, a thread run again or a killed run resumed on the same thread
(`invoke(None, config)`) add no version and no theme, and hide none. A run whose sources all
failed ends in an error (the catalog run is marked failed); one with some failures reports them
in `status` ("partial") and `summary`.

Studio shows three schemas: the input (`MineInput`: what to mine), the output (`MineOutput`) and
the configuration (`MineContext`: where the catalog lives, how long a source may take). Nodes
are sync and run in worker threads under `langgraph dev`; source reading never blocks the
server's event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from annotated_types import Gt
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from agent_world import scaleout
from agent_world.envs.catalog import Catalog
from agent_world.envs.spec import TaxonomyPath
from agent_world.errors import AgentWorldError
from agent_world.graphs.context import ScaledContext, model_field, setting, with_models
from agent_world.mining.coverage import uncovered_reasons
from agent_world.mining.llm_miner import (
    MAX_ITERATIONS,
    MinedTheme,
    bounded_document,
    check_iterations,
    mine_theme,
)
from agent_world.mining.sources import DEFAULT_TIMEOUT, default_sources, parse_source, read_source
from agent_world.mining.sources.base import SourceDocument
from agent_world.mining.taxonomy import classify, merge_near_duplicates
from agent_world.mining.validation import MiningError
from agent_world.mining.web_search import MCPSearch, configured_search_spec


@dataclass
class MineContext(ScaledContext):
    """Run configuration (Studio's configuration panel)."""

    miner_model: str = model_field("miner")
    source_timeout_s: Annotated[float, Gt(0)] = setting(
        DEFAULT_TIMEOUT, "Seconds one source may take to start and be read.")


class MineInput(TypedDict, total=False):
    """What to mine."""

    sources: list[str]  # "mcp:CMD", "mcp-url:URL", "file:PATH"; empty → embedded default
    iterations: int  # complexification iterations, 0..MAX_ITERATIONS (default 3)
    seed: int
    web_search: str | None  # "mcp:CMD#tool" / "mcp-url:URL#tool"; else $AGENT_WORLD_WEB_SEARCH


def _results(old: list[dict[str, Any]] | None, new: list[dict[str, Any]] | None
             ) -> list[dict[str, Any]]:
    """Branch results add up; `start` sends None to clear those of an earlier run of the
    thread, so running a thread again never counts a source twice."""
    return [] if new is None else [*(old or []), *new]


class MineOutput(TypedDict, total=False):
    """What a run produced."""

    run_id: str
    status: str  # done | partial (some sources failed)
    results: list[dict[str, Any]]
    merged: list[list[str]]  # near-duplicate theme pairs merged: [kept, dropped]
    summary: dict[str, Any]


class MineState(TypedDict, total=False):
    sources: list[str]
    iterations: int
    seed: int
    web_search: str | None
    run_id: str
    status: str
    results: Annotated[list[dict[str, Any]], _results]
    merged: list[list[str]]
    summary: dict[str, Any]


class SourceTask(TypedDict):
    source: str
    index: int
    iterations: int
    seed: int
    web_search: str | None
    run_id: str


def _home(config: RunnableConfig | None, runtime: Runtime[MineContext] | None) -> str | None:
    home = MineContext.of(runtime).home
    return home or ((config or {}).get("configurable") or {}).get("home")


def _catalog(config: RunnableConfig | None, runtime: Runtime[MineContext] | None = None
             ) -> Catalog:
    return Catalog.open(_home(config, runtime))


def _normalized(source: str) -> str:
    try:
        return parse_source(source).spec
    except AgentWorldError:
        return source.strip()


def start(state: MineState, config: RunnableConfig, runtime: Runtime[MineContext]
          ) -> dict[str, Any]:
    # a wrong setting (or no Ray there) stops the run here, naming the field
    scaleout.for_context(MineContext.of(runtime))
    sources = list(state.get("sources") or [])
    if not sources:
        sources = [ref.spec for ref in default_sources(_home(config, runtime))]
    # a source named twice (or by two spellings of one path) is mined once
    sources = list({_normalized(s): s for s in reversed(sources)}.values())[::-1]
    iterations = check_iterations(state.get("iterations", 3))
    with _catalog(config, runtime) as cat:
        run_id = cat.start_run("mine", summary={"sources": sources})
    return {"sources": sources, "run_id": run_id, "iterations": iterations,
            "seed": state.get("seed", 0), "results": None,
            "web_search": configured_search_spec(state.get("web_search"))}


def fan_out(state: MineState) -> list[Send]:
    return [Send("mine_source", SourceTask(
        source=s, index=i, iterations=state["iterations"], seed=state["seed"],
        run_id=state["run_id"], web_search=state.get("web_search")))
        for i, s in enumerate(state["sources"])]


@dataclass
class MinedSource:
    """What `mine_job` hands back: the source as read, what mining made of it, its taxonomy and
    where it came from, and notes for the ledger (a web search that could not start)."""

    doc: SourceDocument
    mined: MinedTheme
    taxonomy: TaxonomyPath
    notes: list[str]


def mine_job(source: str, iterations: int, seed: int, web_search: str | None, timeout: float,
             progress: Callable[[dict[str, Any]], None] | None = None) -> MinedSource:
    """Read one source and mine it: the pure part of `mine_source`, what a worker runs (see
    `agent_world.scaleout`). `progress` hears of the read and each iteration (in process)."""
    say = progress or (lambda _event: None)
    doc = read_source(source, timeout=timeout)
    say({"source": source, "event": "read", "tools": len(doc.tools)})
    notes: list[str] = []
    with _web_search(web_search, notes) as search:
        mined = mine_theme(
            doc, iterations=iterations, seed=seed, search=search,
            progress=lambda st: say({"source": source, "event": "iteration",
                                     "iteration": st.iteration, "of": iterations,
                                     "tables": st.tables, "rows": st.rows}))
    return MinedSource(doc=doc, mined=mined, taxonomy=classify(bounded_document(doc)),
                       notes=notes)


def mine_source(task: SourceTask, config: RunnableConfig, runtime: Runtime[MineContext]
                ) -> dict[str, Any]:
    """One source, start to finish. Expected failures go to the ledger, not up the graph.
    Reading and mining run on the run's executor (a worker process or Ray task, unless the
    miner has a chat model); what they made is written to the catalog here."""
    write = get_stream_writer()
    ctx = MineContext.of(runtime)
    with _catalog(config, runtime) as cat:
        try:
            pool = scaleout.for_context(ctx)
            remote = pool.remote and not scaleout.has_model("miner")
            args = (task["source"], task["iterations"], task["seed"], task.get("web_search"),
                    ctx.source_timeout_s)
            if remote:
                out = pool.run(f"source {task['source']}", mine_job, *args)
                write({"source": task["source"], "event": "read", "tools": len(out.doc.tools)})
            else:
                out = mine_job(*args, progress=write)
        except Exception as exc:  # any failure of one source is that source's, not the run's
            reason = str(exc) if isinstance(exc, AgentWorldError) else \
                f"internal error: {type(exc).__name__}: {exc}"
            cat.record("mine", task["source"], reason, run_id=task["run_id"])
            return {"results": [{"source": task["source"], "status": "failed",
                                 "error": reason}]}
        for note in out.notes:
            cat.record("mine", task["source"], note, run_id=task["run_id"])
        doc, mined = out.doc, out.mined
        key = f"{doc.kind}:{doc.content_key()}"
        spec = mined.spec
        theme = spec.theme.model_copy(update={"taxonomy": out.taxonomy})
        name = cat.claim_env_name(spec.name, key, theme)
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
        for fix in spec.provenance.stats.get("schema_repairs") or []:
            cat.record("mine", task["source"], f"schema kept to the source: {fix}",
                       run_id=task["run_id"], payload={"env": spec.name})
        for tool, lacks in uncovered_reasons(coverage):
            cat.record("mine", f"{task['source']}#{tool}",
                       f"tool {tool!r} is not covered by the mined database: {lacks}",
                       run_id=task["run_id"], payload={"env": spec.name, "tool": tool})
        cat.put_theme(theme, env_name=spec.name, key=key,
                      payload={"stats": stats, "fingerprint": summary.fingerprint,
                               "questions": mined.questions,
                               "evidence": mined.evidence_summary,
                               "tools": [t.name for t in doc.tools], **fidelity})
        return {"results": [{"source": task["source"], "status": "mined", "env": spec.name,
                             "theme": theme.name, "theme_key": key,
                             "taxonomy": str(theme.taxonomy),
                             "fingerprint": summary.fingerprint, "stats": stats,
                             "seconds": mined.seconds, **fidelity}]}


@contextmanager
def _web_search(spec: str | None, notes: list[str]) -> Iterator[Any]:
    """The configured web-search tool for one branch, or None. A search backend that cannot
    start is noted (for the ledger) and mining goes on from the source alone."""
    if not spec:
        yield None
        return
    try:
        search = MCPSearch(spec).__enter__()
    except AgentWorldError as exc:
        notes.append(f"web search unavailable, mined without it: {exc}")
        yield None
        return
    try:
        yield search
    finally:
        search.close()


def taxonomy(state: MineState, config: RunnableConfig, runtime: Runtime[MineContext]
             ) -> dict[str, Any]:
    with _catalog(config, runtime) as cat:
        try:
            results = state.get("results", [])
            failed = [r for r in results if r["status"] == "failed"]
            mined = [r for r in results if r["status"] == "mined"]
            # one theme per stored theme row, however many sources led to it; compared under
            # their environment names, which are unique where theme names may not be
            unique = {r["env"]: r for r in mined}
            themes = {env: cat.get_env(env).theme for env in unique}
            _, merged_pairs = merge_near_duplicates(
                t.model_copy(update={"name": env}) for env, t in themes.items())
            merged = []
            for a, b, similarity in merged_pairs:
                if a == b:
                    continue  # never a duplicate of itself
                kept_name, dropped = themes[a].name, themes[b]
                merged.append([kept_name, dropped.name])
                cat.merge_theme(dropped, into=kept_name, key=unique[b].get("theme_key"))
                cat.record("mine", dropped.name, f"near-duplicate of theme {kept_name!r} (env "
                           f"{a}, similarity {similarity:.2f}); merged", run_id=state["run_id"])
            summary = {"sources": len(state["sources"]), "mined": len(mined),
                       "failed": len(failed), "themes": len(unique) - len(merged),
                       "merged": len(merged)}
            if failed and not mined:
                cat.finish_run(state["run_id"], "failed", summary)
                raise MiningError(f"all {len(failed)} source(s) failed; first: "
                                  f"{failed[0]['source']}: {failed[0]['error']}")
            status = "partial" if failed else "done"
            cat.finish_run(state["run_id"], status, summary)
            return {"merged": merged, "summary": summary, "status": status}
        except MiningError:
            raise
        except BaseException as exc:
            cat.finish_run(state["run_id"], "failed", {"error": f"{type(exc).__name__}: {exc}"})
            raise


def build_graph() -> StateGraph:
    g = StateGraph(MineState, context_schema=MineContext, input_schema=MineInput,
                   output_schema=MineOutput)
    g.add_node("start", start)
    g.add_node("mine_source", with_models(mine_source))
    g.add_node("taxonomy", taxonomy)
    g.add_edge(START, "start")
    g.add_conditional_edges("start", fan_out, ["mine_source"])
    g.add_edge("mine_source", "taxonomy")
    g.add_edge("taxonomy", END)
    return g


# For `langgraph dev` / LangGraph Platform: compiled without a checkpointer (the server has one).
graph = build_graph().compile()

__all__ = ["MAX_ITERATIONS", "MineContext", "MineInput", "MineOutput", "MineState",
           "build_graph", "graph"]
