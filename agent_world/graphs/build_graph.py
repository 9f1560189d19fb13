"""The `build` graph: mined environments → cross-validated tools and tests (stage `built`).

    start ──Send per environment──▶ designer ──▶ report ──▶ END

    designer (a subgraph):  design ──▶ validate ──▶ repair ──▶ validate … ──▶ store

`start` resolves the environments (empty input: every mined environment in the catalog) and
opens a run; each `designer` branch designs candidate tools and tests for one environment,
validates them in the sandbox, sends rejected tools back for repair (at most `max_repairs`
rounds, only when the designer can repair: the LLM path), then `store` keeps the tools that
passed, writes every rejection to the ledger and stores the result as a new `built` version.
An environment left with no tool or no test is dropped (and ledgered).

State holds names, paths and summaries; designs (module source + tests) are JSON files under
`<home>/designs/`, specs live in the catalog. Writes are idempotent (an unchanged spec adds no
version), so a killed run resumed on its thread re-runs only unfinished branches.
"""

from __future__ import annotations

import functools
import operator
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from annotated_types import Ge, Gt
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from agent_world import scaleout, stop
from agent_world.design import cross_validation
from agent_world.design.cross_validation import DEFAULT_REPAIRS, SandboxCompiler, Validation
from agent_world.design.tool_designer import DEFAULT_TOOLS, Design, design_tools, repair_tool
from agent_world.envs.catalog import Catalog
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError
from agent_world.graphs.context import ScaledContext, arena_home, model_field, setting, with_models
from agent_world.graphs.runner import invoke, invoke_within


@dataclass
class BuildContext(ScaledContext):
    """Settings of a build run (what LangGraph Studio shows)."""

    designer_model: str = model_field("tool designer")
    max_repairs: Annotated[int, Ge(0)] = setting(
        DEFAULT_REPAIRS, "Repair rounds for tools that fail cross-validation.")
    max_tools: Annotated[int, Gt(0)] = setting(
        DEFAULT_TOOLS, "Candidate tools designed per environment, at most.")


class BuildInput(TypedDict, total=False):
    """What to build."""

    envs: list[str]  # mined environments to build; empty → every mined environment
    max_repairs: int  # repair rounds for rejected tools (default: the context's)
    max_tools: int  # candidate tools per environment (default: the context's)


class BuildOutput(TypedDict, total=False):
    """What a build run produced (the built versions are in the catalog)."""

    run_id: str
    envs: list[str]
    results: list[dict[str, Any]]  # per environment: tools accepted, rejected, repairs
    summary: dict[str, Any]


class BuildState(TypedDict, total=False):
    envs: list[str]  # environments to build; empty → every mined environment
    max_repairs: int
    max_tools: int
    run_id: str
    results: Annotated[list[dict[str, Any]], operator.add]
    summary: dict[str, Any]


class DesignState(TypedDict, total=False):
    env: str
    run_id: str
    max_repairs: int
    max_tools: int
    design_path: str  # the current design (JSON file)
    attempt: int  # repair rounds done
    repairs: dict[str, int]  # tool -> repair attempts
    validation: dict[str, Any]  # the latest Validation (verdicts)
    outcomes: dict[str, list[list[Any]]]  # tool -> [[test, passed, reason]]
    error: str  # a failure of the whole branch
    results: Annotated[list[dict[str, Any]], operator.add]


class DesignOutput(TypedDict, total=False):
    """What a designer branch hands back to the parent graph: its result line only."""

    results: Annotated[list[dict[str, Any]], operator.add]


# Branches run one at a time within a process: CPython 3.11's `ast` module is not thread-safe
# ("AST constructor recursion depth mismatch"), and every branch parses designed code.
_BRANCH_LOCK = threading.RLock()


def _serialized(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    @functools.wraps(fn)
    def run(state: DesignState, config: RunnableConfig) -> dict[str, Any]:
        with _BRANCH_LOCK:
            return fn(state, config)

    return run


_compiler: SandboxCompiler | None = None


def _shared_compiler() -> SandboxCompiler:
    """One warm sandbox per process for compiling designs (branches take turns using it)."""
    global _compiler
    if _compiler is None:
        _compiler = SandboxCompiler()
        stop.at_exit(_compiler.close)
    return _compiler


def _home(config: RunnableConfig | None) -> Path:
    return arena_home(config)


def _executor(runtime: Runtime[BuildContext]) -> scaleout.Executor:
    """Where this run validates and finishes designs (its context's `workers`/`ray_address`;
    the designer agent's graph runs this subgraph under its own context: its defaults)."""
    return scaleout.for_context(BuildContext.of(runtime))


def _catalog(config: RunnableConfig | None) -> Catalog:
    return Catalog.open(_home(config))


# ---- the parent graph ------------------------------------------------------------------------
def start(state: BuildState, config: RunnableConfig, runtime: Runtime[BuildContext]
          ) -> dict[str, Any]:
    ctx = BuildContext.of(runtime)  # a wrong setting stops the run here
    scaleout.for_context(ctx)  # as does an executor that cannot start (no Ray there)
    with _catalog(config) as cat:
        envs = list(state.get("envs") or [])
        if not envs:
            envs = [e.name for e in cat.list_envs() if cat.get_env_at_stage(e.name, "mined") is not None]
        run_id = state.get("run_id") or cat.start_run("build", summary={"envs": envs})
    return {"envs": envs, "run_id": run_id,
            "max_repairs": state.get("max_repairs", ctx.max_repairs),
            "max_tools": state.get("max_tools", ctx.max_tools)}


def fan_out(state: BuildState) -> list[Send]:
    return [Send("designer", DesignState(env=e, run_id=state["run_id"],
                                         max_repairs=state["max_repairs"],
                                         max_tools=state["max_tools"]))
            for e in state["envs"]]


def report(state: BuildState, config: RunnableConfig) -> dict[str, Any]:
    results = state.get("results", [])
    built = [r for r in results if r["status"] == "built"]
    summary = {"envs": len(state.get("envs", [])), "built": len(built),
               "dropped": sum(r["status"] == "dropped" for r in results),
               "failed": sum(r["status"] == "failed" for r in results),
               "tools": sum(r["kept"] for r in built),
               "candidates": sum(r.get("candidates", 0) for r in results)}
    with _catalog(config) as cat:
        cat.finish_run(state["run_id"], "done", summary)
    return {"summary": summary}


# ---- the designer subgraph -------------------------------------------------------------------
def _design_file(config: RunnableConfig, state: DesignState, attempt: int) -> Path:
    path = _home(config) / "designs" / state["env"] / f"{state['run_id']}-{attempt}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _load(path: str) -> Design:
    return Design.model_validate_json(Path(path).read_text())


@_serialized
def design(state: DesignState, config: RunnableConfig) -> dict[str, Any]:
    """Candidate tools and tests for the environment's mined version."""
    with _catalog(config) as cat:
        try:
            spec = cat.get_env_at_stage(state["env"], "mined")
            if spec is None:
                raise AgentWorldError(f"environment {state['env']!r} has no mined version to build")
            d = design_tools(spec, max_tools=state.get("max_tools", DEFAULT_TOOLS))
        except Exception as exc:  # one environment's failure is that branch's, not the run's
            return {"error": _reason(exc)}
    path = _design_file(config, state, 0)
    path.write_text(d.model_dump_json())
    return {"design_path": str(path), "attempt": 0, "repairs": {}}


def validate_job(spec: EnvSpec, design: Design, repairs: dict[str, int]
                 ) -> tuple[dict[str, Any], dict[str, list[list[Any]]]]:
    """Compile `design` in the sandbox and run every test on `spec`: the verdicts and the test
    outcomes. What a worker runs (see `agent_world.scaleout`), on its process' warm sandbox."""
    with _BRANCH_LOCK:
        runtime = cross_validation.validation_runtime()
        try:
            validation, outcomes = cross_validation.evaluate(
                spec, design, compiler=_shared_compiler(), runtime=runtime, repairs=repairs)
        finally:
            runtime.close()
    return validation.model_dump(), outcomes


def validate(state: DesignState, config: RunnableConfig, runtime: Runtime[BuildContext]
             ) -> dict[str, Any]:
    """Compile the design in the sandbox and run every test; judge every tool (on the run's
    executor: a worker process or Ray task)."""
    if state.get("error"):
        return {}
    with _catalog(config) as cat:
        try:
            spec = cat.get_env_at_stage(state["env"], "mined")
            assert spec is not None
            validation, outcomes = _executor(runtime).run(
                f"environment {state['env']}", validate_job, spec, _load(state["design_path"]),
                state.get("repairs") or {})
        except Exception as exc:
            return {"error": _reason(exc)}
    return {"validation": validation, "outcomes": outcomes}


def route(state: DesignState) -> str:
    if state.get("error"):
        return "store"
    validation = Validation.model_validate(state["validation"])
    d = _load(state["design_path"])
    if all(v.kept for v in validation.verdicts) or d.strategy == "offline" \
            or state.get("attempt", 0) >= state.get("max_repairs", DEFAULT_REPAIRS):
        return "store"
    return "repair"


@_serialized
def repair(state: DesignState, config: RunnableConfig) -> dict[str, Any]:
    """Ask the designer to fix every rejected tool, given its error."""
    with _catalog(config) as cat:
        try:
            spec = cat.get_env_at_stage(state["env"], "mined")
            assert spec is not None
            repairs = dict(state.get("repairs") or {})
            fixed, changed = cross_validation.repair_failing(
                _load(state["design_path"]), Validation.model_validate(state["validation"]),
                lambda d, tool, err: repair_tool(spec, d, tool, err), repairs)
        except Exception as exc:
            return {"error": _reason(exc)}
    attempt = state.get("attempt", 0) + 1
    if not changed:  # nothing repaired: stop asking
        return {"attempt": state.get("max_repairs", DEFAULT_REPAIRS)}
    path = _design_file(config, state, attempt)
    path.write_text(fixed.model_dump_json())
    return {"design_path": str(path), "attempt": attempt, "repairs": repairs}


def finish_job(spec: EnvSpec, design: Design, validation: Validation,
               outcomes: dict[str, list[list[Any]]]) -> tuple[EnvSpec | None, Validation]:
    """The built spec from the tools that passed (None: the environment is dropped) and the
    validation as `cross_validation.finish` completed it (tests dropped, why the environment was
    dropped): a worker's copy, so it comes back. What a worker runs (see
    `agent_world.scaleout`), on its process' warm sandbox."""
    with _BRANCH_LOCK:
        runtime = cross_validation.validation_runtime()
        try:
            built = cross_validation.finish(spec, design, validation, outcomes,
                                            compiler=_shared_compiler(), runtime=runtime)
            return built, validation
        finally:
            runtime.close()


def store(state: DesignState, config: RunnableConfig, runtime: Runtime[BuildContext]
          ) -> dict[str, Any]:
    """Keep what passed (finished on the run's executor), ledger every rejection, store the
    `built` version."""
    env, run_id = state["env"], state["run_id"]
    with _catalog(config) as cat:
        try:
            if state.get("error"):
                cat.record("build", env, state["error"], run_id=run_id)
                return {"results": [{"env": env, "status": "failed", "error": state["error"],
                                     "kept": 0, "candidates": 0}]}
            spec = cat.get_env_at_stage(env, "mined")
            assert spec is not None
            d = _load(state["design_path"])
            validation = Validation.model_validate(state["validation"])
            built, validation = _executor(runtime).run(
                f"environment {env}", finish_job, spec, d, validation,
                state.get("outcomes") or {})
            for v in validation.verdicts:
                if not v.kept:
                    cat.record("build", f"{env}.{v.tool}", v.reason, run_id=run_id,
                               payload={"category": v.category, "passed": v.passed,
                                        "total": v.total, "repairs": v.repairs})
            for t in validation.dropped_tests:
                cat.record("build", f"{env}.{t['tool']}/{t['test']}", f"test dropped: {t['reason']}",
                           run_id=run_id, payload={"category": "test"})
            for tool, why in d.not_implemented.items():
                cat.record("build", f"{env}.{tool}", f"source tool not implemented: {why}",
                           run_id=run_id, payload={"category": "source_tool"})
            result = _result(env, d, validation)
            if built is None:
                cat.record("build", env, f"environment dropped: {validation.dropped}",
                           run_id=run_id, payload={"category": "environment"})
                return {"results": [{**result, "status": "dropped", "error": validation.dropped}]}
            built = _with_provenance(built, spec, d, validation)
            summary = cat.put_env(built, stage="built")
            return {"results": [{**result, "status": "built", "version": summary.version,
                                 "fingerprint": summary.fingerprint}]}
        except Exception as exc:
            reason = _reason(exc)
            cat.record("build", env, reason, run_id=run_id)
            return {"results": [{"env": env, "status": "failed", "error": reason, "kept": 0,
                                 "candidates": 0}]}


def _reason(exc: Exception) -> str:
    return str(exc) if isinstance(exc, AgentWorldError) else \
        f"internal error: {type(exc).__name__}: {exc}"


def _result(env: str, d: Design, v: Validation) -> dict[str, Any]:
    kept = v.kept
    covered = [s for s in d.source_tools if s in {k.tool for k in kept}]
    return {"env": env, "strategy": d.strategy, "candidates": len(v.verdicts),
            "kept": len(kept), "writes": sum(k.write for k in kept),
            "rejected": v.rejections(), "tests": v.tests_kept, "tests_total": v.tests_total,
            "source_tools": len(d.source_tools) + len(d.not_implemented),
            "source_covered": len(covered),
            "repairs": sum(x.repairs for x in v.verdicts), "seconds": v.seconds}


def _with_provenance(built: Any, mined: Any, d: Design, v: Validation) -> Any:
    prov = built.provenance.model_copy(deep=True)
    prov.created_by = "designer"
    prov.parent = mined.fingerprint
    prov.notes = [*prov.notes, f"build: {len(v.kept)}/{len(v.verdicts)} candidate tools kept "
                  f"({d.strategy} designer), {v.tests_kept} tests"]
    prov.stats = {**prov.stats, **built.stats(), "validation": {
        x.tool: {"kept": x.kept, "passed": x.passed, "total": x.total, "reason": x.reason,
                 "repairs": x.repairs, "source_tool": x.source_tool} for x in v.verdicts}}
    return built.model_copy(update={"provenance": prov})


def build_designer() -> StateGraph:
    g = StateGraph(DesignState, input_schema=DesignState, output_schema=DesignOutput)
    g.add_node("design", with_models(design))
    g.add_node("validate", validate)
    g.add_node("repair", with_models(repair))
    g.add_node("store", store)
    g.add_edge(START, "design")
    g.add_edge("design", "validate")
    g.add_conditional_edges("validate", route, ["repair", "store"])
    g.add_edge("repair", "validate")
    g.add_edge("store", END)
    return g


def build_graph() -> StateGraph:
    g = StateGraph(BuildState, context_schema=BuildContext, input_schema=BuildInput,
                   output_schema=BuildOutput)
    g.add_node("start", start)
    g.add_node("designer", build_designer().compile())
    g.add_node("report", report)
    g.add_edge(START, "start")
    g.add_conditional_edges("start", fan_out, ["designer"])
    g.add_edge("designer", "report")
    g.add_edge("report", END)
    return g


def build_environments(names: list[str], home: str | Path | None = None, seed: int = 0,
                       thread_id: str | None = None,
                       context: BuildContext | dict[str, Any] | None = None,
                       within: RunnableConfig | None = None) -> list[str]:
    """Build `names` (empty: every mined environment) on a durable thread; the names that
    now have a `built` version. (`seed` is accepted for the stage interface; the offline
    designer is deterministic.) `context`: the run's settings (`BuildContext`). `within`:
    the config of the pipeline node calling it, to run as that node's subgraph (on its
    thread and home) instead of on a thread of its own."""
    inputs = {"envs": list(names)}
    values = invoke_within(build_graph(), inputs, within, context=context) if within else \
        invoke(build_graph(), inputs, thread_id=thread_id, home=home, context=context)
    return [r["env"] for r in values.get("results", []) if r["status"] == "built"]


# For `langgraph dev` / LangGraph Platform: compiled without a checkpointer (the server has one).
graph = build_graph().compile()
