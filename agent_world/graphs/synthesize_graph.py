"""The `synthesize` graph: environments → verified tasks in the catalog.

    start ──Send per environment──▶ synthesize_env ──▶ report ──▶ END

`start` resolves the environments (the names given, else every catalog environment that has
tools, the bundled examples included) and opens a run; each `synthesize_env` branch builds
candidates for one environment, gates them, runs the ReAct verifier and stores the survivors
(`agent_world.synthesis.loop`); `report` totals the gate statistics and closes the run.

Input: `envs`, `per_env`, `levels`, `seed`, and optional `guidelines` (self-evolution's
conditioning: `environments`, `tools`, `error_kinds`, `levels`). The context (what Studio
shows as configuration) sets the verifier's `runs` and `threshold`, the programmatic share
and the attempt budget. State holds names and statistics only; tasks live in the catalog.
A killed run resumed on its thread re-runs only unfinished branches, and a re-run branch
continues from the tasks its run already stored (seeded attempts, content-hash ids).
`synthesize_tasks(names, home, per_env, seed, guidelines, tag)` runs it from Python and returns
the emitted task ids (what self-evolution calls).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Ge, Gt, Le, Lt
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from agent_world import scaleout
from agent_world.envs.catalog import Catalog
from agent_world.envs.catalog_tables import LedgerEntry
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.examples import example_names, load_example
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError
from agent_world.graphs.context import ScaledContext, arena_home, model_field, with_models
from agent_world.graphs.runner import final_state, invoke, invoke_within, thread_config
from agent_world.models import chat_model
from agent_world.synthesis import loop as task_synthesis

DEFAULTS = task_synthesis.SynthesisConfig()


@dataclass
class SynthesizeContext(ScaledContext):
    """Settings of a synthesis run (what LangGraph Studio shows)."""

    synthesizer_model: str = model_field("synthesizer")
    verifier_model: str = model_field("ReAct verifier")
    runs: Annotated[int, Gt(0)] = field(default=DEFAULTS.runs, metadata={
        "description": "Verifier runs per task."})
    threshold: Annotated[float, Ge(0), Lt(1)] = field(default=DEFAULTS.threshold, metadata={
        "description": "Keep a task when more than this share of verifier runs pass."})
    programmatic_share: Annotated[float, Ge(0), Le(1)] = field(
        default=DEFAULTS.programmatic_share,
        metadata={"description": "Share of programmatic tasks (solution + verification "
                                 "script) among the tasks of an environment."})
    attempts_per_task: Annotated[int, Gt(0)] = field(default=DEFAULTS.attempts_per_task,
                                                     metadata={"description": (
        "Candidate budget per requested task.")})


class SynthesizeInput(TypedDict, total=False):
    """What to synthesize."""

    envs: list[str]  # environment names; empty → every environment with tools
    per_env: int  # tasks per environment (default 10)
    levels: list[int]  # difficulty levels to target, 1..5 (default all)
    seed: int
    guidelines: dict[str, Any] | None  # self-evolution's conditioning (see the module doc)


class SynthesizeOutput(TypedDict, total=False):
    """What a run produced (the tasks are in the catalog)."""

    run_id: str
    envs: list[str]
    results: list[dict[str, Any]]  # per environment: candidates, gate rejections, kept
    summary: dict[str, Any]


class SynthesizeState(TypedDict, total=False):
    envs: list[str]  # environment names; empty → every environment with tools
    per_env: int
    levels: list[int]
    seed: int
    guidelines: dict[str, Any] | None
    run_id: str
    results: Annotated[list[dict[str, Any]], operator.add]
    summary: dict[str, Any]


class EnvJob(TypedDict):
    env: str
    per_env: int
    levels: list[int]
    seed: int
    guidelines: dict[str, Any] | None
    run_id: str


def _catalog(config: RunnableConfig | None) -> Catalog:
    return Catalog.open(arena_home(config))


def start(state: SynthesizeState, config: RunnableConfig,
          runtime: Runtime[SynthesizeContext]) -> dict[str, Any]:
    # a wrong setting (or no Ray there) stops the run here, naming the field
    scaleout.for_context(SynthesizeContext.of(runtime))
    with _catalog(config) as cat:
        for name in example_names():  # the bundled examples are always there
            if not cat.has_env(name):
                cat.put_env(load_example(name), stage="example")
        guidelines = state.get("guidelines") or None
        envs = list(state.get("envs") or (guidelines or {}).get("environments") or [])
        if not envs:
            envs = [e.name for e in cat.list_envs() if e.stats.get("tools", 0) > 0]
        run_id = state.get("run_id") or cat.start_run(
            "synthesize", summary={"envs": envs, "guidelines": guidelines})
    return {"envs": envs, "run_id": run_id, "per_env": state.get("per_env", 10),
            "levels": state.get("levels") or [1, 2, 3, 4, 5], "seed": state.get("seed", 0),
            "guidelines": guidelines}


def fan_out(state: SynthesizeState) -> list[Send]:
    return [Send("synthesize_env", EnvJob(
        env=name, per_env=state["per_env"], levels=state["levels"], seed=state["seed"],
        guidelines=state.get("guidelines"), run_id=state["run_id"])) for name in state["envs"]]


class CatalogSnapshot:
    """The catalog as one environment's synthesis on a worker sees it: the rows it reads
    (the environment's tasks, the run's ledger), taken before it starts, and the writes it
    makes, kept in order for the main process to apply (`apply`). Workers never open the
    catalog, which keeps one writer."""

    def __init__(self, url: str, tasks: list[dict[str, Any]], ledger: list[LedgerEntry]):
        self.url = url
        self._tasks = tasks
        self._ledger = ledger
        self.writes: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    @classmethod
    def of(cls, cat: Catalog, spec: EnvSpec, run_id: str) -> CatalogSnapshot:
        return cls(cat.url, cat.list_tasks(spec.fingerprint),
                   [e for e in cat.ledger(task_synthesis.STAGE, run_id=run_id)
                    if e.subject.startswith(f"{spec.name}:")])

    def list_tasks(self, env_fingerprint: str | None = None) -> list[dict[str, Any]]:
        return [t for t in self._tasks
                if env_fingerprint is None or t["env_fingerprint"] == env_fingerprint]

    def ledger(self, stage: str | None = None, run_id: str | None = None) -> list[LedgerEntry]:
        return [e for e in self._ledger if stage in (None, e.stage) and
                run_id in (None, e.run_id)]

    def record(self, *args: Any, **kwargs: Any) -> None:
        self.writes.append(("record", args, kwargs))

    def put_task(self, *args: Any, **kwargs: Any) -> None:
        self.writes.append(("put_task", args, kwargs))

    def apply(self, cat: Catalog) -> None:
        for method, args, kwargs in self.writes:
            getattr(cat, method)(*args, **kwargs)


def synthesize_job(spec: EnvSpec, settings: task_synthesis.SynthesisConfig, run_id: str,
                   guidelines: dict[str, Any] | None, catalog: CatalogSnapshot
                   ) -> tuple[dict[str, Any], CatalogSnapshot]:
    """One environment's synthesis against a catalog snapshot: its statistics and the snapshot
    holding its writes. What a worker runs (see `agent_world.scaleout`)."""
    with EnvRuntime() as env_runtime:
        # through the module: a test swaps `synthesize_env` there to crash a branch
        stats = task_synthesis.synthesize_env(spec, settings, catalog, env_runtime,  # type: ignore[arg-type]
                                              run_id=run_id, guidelines=guidelines)
    return stats, catalog


def synthesize_env(job: EnvJob, config: RunnableConfig,
                   runtime: Runtime[SynthesizeContext]) -> dict[str, Any]:
    """One environment, start to finish; a failure is that environment's, not the run's. With
    no synthesizer or verifier model, it runs on the run's executor (a worker process or Ray
    task) and its writes are applied here."""
    ctx = SynthesizeContext.of(runtime)
    settings = task_synthesis.SynthesisConfig(
        per_env=job["per_env"], levels=job["levels"], seed=job["seed"], runs=ctx.runs,
        threshold=ctx.threshold, programmatic_share=ctx.programmatic_share,
        attempts_per_task=ctx.attempts_per_task)
    with _catalog(config) as cat:
        try:
            spec = cat.get_env(job["env"])
            if not spec.tools:
                raise AgentWorldError(f"environment {job['env']!r} has no tools yet")
            pool = scaleout.for_context(ctx)
            if pool.remote and not scaleout.has_model("synthesizer", "verifier"):
                stats, done = pool.run(
                    f"environment {job['env']}", synthesize_job, spec, settings,
                    job["run_id"], job.get("guidelines"),
                    CatalogSnapshot.of(cat, spec, job["run_id"]))
                done.apply(cat)
            else:
                with EnvRuntime() as env_runtime:
                    # through the module: a test swaps `synthesize_env` there to crash a branch
                    stats = task_synthesis.synthesize_env(
                        spec, settings, cat, env_runtime, run_id=job["run_id"],
                        guidelines=job.get("guidelines"), model=chat_model("synthesizer"))
        except Exception as exc:  # one environment's failure is recorded, the others go on
            reason = str(exc) if isinstance(exc, AgentWorldError) else \
                f"internal error: {type(exc).__name__}: {exc}"
            cat.record(task_synthesis.STAGE, job["env"], reason, run_id=job["run_id"])
            return {"results": [{"env": job["env"], "status": "failed", "error": reason}]}
        return {"results": [{**stats, "status": "done"}]}


def report(state: SynthesizeState, config: RunnableConfig) -> dict[str, Any]:
    results = state.get("results", [])
    done = [r for r in results if r["status"] == "done"]
    rejected: dict[str, int] = {}
    for r in done:
        for gate, n in r["rejected"].items():
            rejected[gate] = rejected.get(gate, 0) + n
    summary = {"envs": len(state.get("envs", [])), "failed": len(results) - len(done),
               "candidates": sum(r["candidates"] for r in done),
               "kept": sum(r["kept"] for r in done), "rejected": rejected,
               "candidate_errors": sum(r.get("candidate_errors", 0) for r in done),
               "seconds": round(sum(r["seconds"] for r in done), 2)}
    with _catalog(config) as cat:
        cat.finish_run(state["run_id"], "done", summary)
    return {"summary": summary}


def build_graph() -> StateGraph:
    g = StateGraph(SynthesizeState, context_schema=SynthesizeContext,
                   input_schema=SynthesizeInput, output_schema=SynthesizeOutput)
    g.add_node("start", start)
    g.add_node("synthesize_env", with_models(synthesize_env))
    g.add_node("report", report)
    g.add_edge(START, "start")
    g.add_conditional_edges("start", fan_out, ["synthesize_env"])
    g.add_edge("synthesize_env", "report")
    g.add_edge("report", END)
    return g


def synthesize_tasks(names: list[str], home: str | Path | None = None, per_env: int = 10,
                     seed: int = 0, guidelines: dict[str, Any] | Any = None, tag: str = "",
                     levels: list[int] | None = None,
                     context: dict[str, Any] | None = None,
                     within: RunnableConfig | None = None) -> list[str]:
    """Run the graph for `names` and return the ids of the tasks this run emitted, in a
    canonical order (environments as in `names`, then task id): environments and their tasks
    are verified concurrently and land in the catalog in completion order, and a training
    mix that followed it made two runs with one seed train on differently ordered data.

    With a `tag` the run lives on thread `synthesize-<tag>`: calling again with the same tag
    resumes an unfinished run or returns a finished run's tasks instead of synthesizing anew.
    `within`: the config of the pipeline node calling it, to run as that node's subgraph
    instead (resumed with the pipeline's thread; `tag` then names the run on a trace).
    """
    if hasattr(guidelines, "model_dump"):
        guidelines = guidelines.model_dump(mode="json")
    builder = build_graph()
    inputs = {"envs": list(names), "per_env": per_env, "seed": seed, "guidelines": guidelines,
              "levels": levels or [1, 2, 3, 4, 5]}
    values: dict[str, Any] = {}
    pending: list[str] = []
    thread = f"synthesize-{tag}" if tag and not within else None
    if thread:
        values, pending = final_state(builder, thread_config(thread, home))
    if within:
        state = invoke_within(builder, inputs, within, context=context,
                              name=f"synthesize {tag}".strip())
    elif values and not pending and "run_id" in values:
        state = values  # a finished run: its tasks
    else:
        # a run killed after its input was saved but before its first node has no pending
        # node to resume: start it again (tasks are keyed by content, nothing duplicates)
        resume = bool(values) and bool(pending)
        state = invoke(builder, None if resume else inputs, thread_id=thread, home=home,
                       context=context)
    with Catalog.open(home) as cat:
        rank = {name: i for i, name in enumerate(names)}
        mine = [t for t in cat.list_tasks()
                if (t["payload"].get("origin") or {}).get("run_id") == state["run_id"]]
        mine.sort(key=lambda t: (rank.get(t["payload"].get("env_name"), len(rank)), t["id"]))
        return [t["id"] for t in mine]


# For `langgraph dev` / LangGraph Platform: compiled without a checkpointer (the server has one).
graph = build_graph().compile()
