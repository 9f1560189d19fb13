"""Synthesizing the tasks of one environment: candidates → trust gates → verifier → catalog.

    summary = synthesize_env(spec, SynthesisConfig(per_env=10), catalog, runtime)

The loop draws a kind (graph or programmatic) and a difficulty level that still lack tasks,
builds a candidate from a recipe for that level (`agent_world.synthesis.synthesizer`), drops
duplicates (same content id: normalised instruction + checks; or the same gold chain and
target as a task of the set, `synthesizer.chain_target`), runs the trust gates
(`agent_world.synthesis.gates`) and then the ReAct verifier (`agent_world.synthesis.react_verifier`: a
filter with a verifier model configured, a recorded measurement offline), and stores what
survives in the catalog with its gate results and verifier pass rate. Every gate or verifier
rejection goes to the ledger (stage `synthesize`) with the gate's name. A candidate whose
construction or gating raises costs that candidate, not the environment: the error goes to the
ledger with the frame it came from and `stats["candidate_errors"]` counts it (the CLI prints it).

Levels are a target, not a promise: after `spill_after` of the attempt budget, a level no
candidate reaches lends its quota to the nearest level that candidates do reach.

Attempts are seeded by (config seed, environment fingerprint, attempt number). Re-running a
killed branch (same `run_id`) replays the loop from the first attempt, so it draws exactly the
candidates an unkilled run draws: a candidate the run already stored is kept as stored and one it
already rejected (in the ledger) is rejected again, neither gated nor verified twice; the tasks
that result are those of an unkilled run with the same seed (`stats["resumed"]` counts the ones
taken over). A run that had filled its quotas returns at once.

Guidelines (from self-evolution, `agent_world.evolution.diagnosis_model.Guidelines` or a plain dict)
steer the loop: `tools` ("tool" or "env/tool": walks start there more often), error kinds or
diagnosed error classes (`error_kinds` / `error_classes`: tool_error, constraint_violation and
permission_denied favour write tools; invalid_arguments and wrong_arguments favour tools with
many required arguments; unknown_tool and wrong_tool favour opaque names and distractors;
state_not_tracked raises the share of aggregating programmatic tasks), `confusable` ("env/tool"
→ tools the policy mixed up with it: a task whose chain calls the tool shows them in its view
too), and `levels` or
`difficulty` (a level, or features a level is computed from; its neighbours are targeted too).
"""

from __future__ import annotations

import hashlib
import random
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_world.envs.catalog import Catalog
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.synthesis.gates import run_gates
from agent_world.synthesis.react_verifier import (
    DEFAULT_RUNS,
    DEFAULT_THRESHOLD,
    configured_verifier,
    verifier_models,
    verify_task,
)
from agent_world.synthesis.synthesizer import build_candidate, chain_target
from agent_world.tasks.difficulty import (
    BASE_ODDS,
    GUIDED_ODDS,
    level_of,
    level_quotas,
    recipe_for,
)
from agent_world.tasks.model import GateResult, Task
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.toolgraph import tool_graph

STAGE = "synthesize"


@dataclass
class SynthesisConfig:
    per_env: int = 10
    levels: list[int] = field(default_factory=lambda: [1, 2, 3, 4, 5])
    programmatic_share: float = 0.3
    runs: int = DEFAULT_RUNS
    threshold: float = DEFAULT_THRESHOLD
    attempts_per_task: int = 40
    spill_after: float = 0.6  # share of the budget after which unmet levels lend their quota
    seed: int = 0


def _kind_quotas(n: int, share: float) -> dict[str, int]:
    prog = 0 if n < 2 else max(1, round(n * share))
    return {"graph": n - prog, "programmatic": prog}


def _guided_tools(spec: EnvSpec, guidelines: dict[str, Any]) -> list[str]:
    """Guideline tools of this environment ("tool" or "env/tool")."""
    names = {t.name for t in spec.tools}
    out = []
    for ref in guidelines.get("tools") or []:
        env, _, tool = str(ref).rpartition("/")
        if tool in names and env in ("", spec.name):
            out.append(tool)
    return out


def _confusables(spec: EnvSpec, guidelines: dict[str, Any]) -> dict[str, list[str]]:
    """Guideline `confusable` of this environment: tool → the tools its views must also show."""
    names = {t.name for t in spec.tools}
    out: dict[str, list[str]] = {}
    for ref, others in (guidelines.get("confusable") or {}).items():
        env, _, tool = str(ref).rpartition("/")
        if tool in names and env in ("", spec.name):
            out[tool] = [o for o in others if o in names and o != tool]
    return out


def show_confusables(task: Task, confusable: dict[str, list[str]]) -> Task:
    """`task` with the tools the policy mixed up with its chain's tools added to its view
    (under opaque names when the view's are), so choosing between them is part of the task."""
    chain = list(dict.fromkeys(c.tool for c in task.chain))
    if not task.tool_view:  # no view: every tool is offered already
        return task
    shown = set(task.tool_view.values())
    extra = [o for t in chain for o in confusable.get(t, []) if o not in shown]
    if not extra:
        return task
    view = dict(task.tool_view)
    for name in dict.fromkeys(extra):
        opaque = "tool_" + hashlib.sha256(f"{task.instruction}:{name}".encode()).hexdigest()[:6]
        view[opaque if task.difficulty.obscured else name] = name
    d = task.difficulty
    distractors = len(view) - len(chain)
    level = max(d.level, level_of(d.chain_length, d.branching, d.aggregation, distractors,
                                  d.obscured))
    return task.model_copy(update={
        "tool_view": view, "difficulty": d.model_copy(update={"distractors": distractors,
                                                              "level": level}),
        "origin": {**task.origin, "confusable_shown": list(dict.fromkeys(extra))}}).with_id()


def _error_targets(guidelines: dict[str, Any]) -> set[str]:
    """Observation error kinds and diagnosed error classes the guidelines name."""
    return set(guidelines.get("error_kinds") or []) | set(guidelines.get("error_classes") or [])


def guided_levels(guidelines: dict[str, Any], default: list[int]) -> list[int]:
    """Levels to target: `levels`, else around `difficulty.level` (or one computed from the
    difficulty's features), else the default."""
    if guidelines.get("levels"):
        return sorted({int(x) for x in guidelines["levels"]})
    target = guidelines.get("difficulty") or {}
    if not target:
        return default
    level = target.get("level") or level_of(
        target.get("chain_length", 1), target.get("branching", 0),
        bool(target.get("aggregation")), target.get("distractors", 0),
        bool(target.get("obscured")))
    return sorted({max(1, min(5, int(level) + d)) for d in (-1, 0, 1)})


def recipe_odds(guidelines: dict[str, Any]) -> tuple[float, float]:
    """The odds of opaque names and of many distractors in a candidate's recipe: the failed
    tasks' shares when the guidelines carry their shape (a fixed "opaque names for wrong_tool"
    remedy made 12 of 17 targeted tasks opaque beside 10 of 47 held-out ones), else the base
    odds, raised where the error classes the guidelines name ask for them. Levels and the
    share of programs stay the guidelines' and the config's: drawn in the failures' level
    shape (mostly single calls) with their share of programs, round-1 targeted tasks held half
    the gold calls and the policy's mean held-out reward fell (docs/ablation.md)."""
    shape = guidelines.get("shape")
    if shape:
        return (float(shape.get("obscured", BASE_ODDS)),
                float(shape.get("many_distractors", BASE_ODDS)))
    targets = _error_targets(guidelines)
    difficulty = guidelines.get("difficulty") or {}
    obscured = bool(targets & {"unknown_tool", "wrong_tool"}) or bool(difficulty.get("obscured"))
    many = "wrong_tool" in targets or difficulty.get("distractors", 0) >= 3
    return (GUIDED_ODDS if obscured else BASE_ODDS, GUIDED_ODDS if many else BASE_ODDS)


def _start_tool(spec: EnvSpec, rng: random.Random, guidelines: dict[str, Any]) -> str | None:
    wanted = _guided_tools(spec, guidelines)
    if wanted and rng.random() < 0.7:
        return rng.choice(wanted)
    kinds = _error_targets(guidelines)
    if kinds & {"tool_error", "constraint_violation", "permission_denied"} and rng.random() < .5:
        writes = [t.name for t in spec.tools if t.mutates]
        if writes:
            return rng.choice(writes)
    if kinds & {"invalid_arguments", "wrong_arguments"} and rng.random() < 0.5:
        return max(spec.tools, key=lambda t: len(t.parameters.get("required", []))).name
    return None


def synthesize_env(spec: EnvSpec, config: SynthesisConfig, catalog: Catalog,
                   runtime: EnvRuntime, run_id: str | None = None,
                   guidelines: dict[str, Any] | None = None, model: Any = None,
                   progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Emit up to `config.per_env` verified tasks for `spec`; returns the gate statistics."""
    started = time.perf_counter()
    if hasattr(guidelines, "model_dump"):  # a diagnoser Guidelines record
        guidelines = guidelines.model_dump(mode="json")
    guidelines = guidelines or {}
    levels = guided_levels(guidelines, config.levels)
    level_left = level_quotas(config.per_env, levels)
    obscured_odds, distractor_odds = recipe_odds(guidelines)
    share = config.programmatic_share
    targets = _error_targets(guidelines)
    if "state_not_tracked" in targets or (guidelines.get("difficulty") or {}).get("aggregation"):
        share = max(share, 0.5)  # aggregating answers train tracking state across calls
    kind_left = _kind_quotas(config.per_env, share)
    fp = spec.fingerprint
    # tasks of other runs are duplicates; this run's own are replayed (see the module doc)
    known: dict[str, Any] = {}
    replayed: dict[str, dict[str, Any]] = {}
    for t in catalog.list_tasks(fp):
        mine = run_id is not None and t["payload"].get("origin", {}).get("run_id") == run_id
        (replayed if mine else known)[t["id"]] = t
    # one task per (chain, target) in the set; this run's own pairs are added as it replays
    pairs = {chain_target(Task.model_validate(t["payload"])) for t in known.values()}
    # of the programmatic tasks, one should write (when the environment allows it)
    writes_left = 1 if kind_left["programmatic"] >= 2 else 0
    stats: dict[str, Any] = {"env": spec.name, "candidates": 0, "no_candidate": 0,
                             "no_candidate_reasons": Counter(), "writing_programs": 0,
                             "duplicates": 0, "off_target": 0, "rejected": Counter(),
                             "kept": 0, "resumed": 0, "writer_fallbacks": 0, "candidate_errors": 0,
                             "levels": Counter(), "kinds": Counter(),
                             "verifier_runs": 0, "verifier_seconds": 0.0}
    if replayed and len(replayed) >= sum(kind_left.values()):
        return _finish(stats, started)  # the run was complete: nothing to replay
    # candidates this run already rejected: the replay does not gate or verify them again
    refused = {e.subject.partition(":")[2]: e.payload.get("gate", "?")
               for e in (catalog.ledger(STAGE, run_id=run_id) if replayed else [])
               if e.subject.startswith(f"{spec.name}:")}
    confusable = _confusables(spec, guidelines)
    graph = tool_graph(spec, home=_home(catalog), runtime=runtime)
    sampler = ValueSampler(spec)
    budget = config.attempts_per_task * max(config.per_env, 1)
    for attempt in range(budget):
        if sum(max(v, 0) for v in kind_left.values()) == 0 or \
                sum(max(v, 0) for v in level_left.values()) == 0:
            break
        rng = random.Random(f"{config.seed}:{fp}:{attempt}")
        kinds = [k for k, v in kind_left.items() if v > 0]
        kind = rng.choice(kinds)
        wanted = [lv for lv, v in level_left.items() if v > 0]
        if kind == "programmatic":  # an aggregation is at least level 2
            wanted = [lv for lv in wanted if lv >= 2] or wanted
        target = rng.choice(wanted)
        # the aggregation of a programmatic task is one level by itself
        recipe = recipe_for(max(1, target - 1) if kind == "programmatic" else target, rng,
                            obscured=obscured_odds, distractors=distractor_odds)
        origin = {"run_id": run_id, "attempt": attempt, "guidelines": guidelines or None}
        try:
            task = build_candidate(spec, graph, runtime, rng, recipe, kind,
                                   seed=config.seed * 100_000 + attempt, sampler=sampler,
                                   model=model, start=_start_tool(spec, rng, guidelines),
                                   origin=origin, bulk_share=0.9 if writes_left > 0 else 0.3)
        except Exception as exc:  # a bug in one candidate's path: the ledger says where
            _candidate_error(stats, catalog, spec, f"attempt {attempt}", exc, run_id)
            continue
        if isinstance(task, str):
            stats["no_candidate"] += 1
            stats["no_candidate_reasons"][task.split(":")[0]] += 1
            continue
        task = show_confusables(task, confusable)
        stats["candidates"] += 1
        stats["writer_fallbacks"] += task.origin.get("writer") == "offline-fallback"
        level = task.difficulty.level
        # late in the budget, a level that stays out of reach lends its quota to the others
        spill = attempt >= config.spill_after * budget and level in level_left and \
            sum(max(v, 0) for v in level_left.values()) > 0
        # the writing program a set needs may take another level's quota (its level is the
        # walk's, not a choice)
        spill = spill or bool(task.origin.get("bulk")) and writes_left > 0 and \
            level in level_left and sum(max(v, 0) for v in level_left.values()) > 0
        # the last programmatic slot waits for a task that writes, until late in the budget
        reserved = task.kind == "programmatic" and not task.origin.get("bulk") and \
            kind_left["programmatic"] <= writes_left and attempt < config.spill_after * budget
        if (level_left.get(level, 0) <= 0 and not spill) or kind_left[task.kind] <= 0 or \
                reserved:
            stats["off_target"] += 1
            continue
        if task.id in known or chain_target(task) in pairs:
            stats["duplicates"] += 1  # the same task, or the same chain and target asked again
            continue
        if task.id in refused:
            stats["rejected"][refused[task.id]] += 1
            continue
        resumed = task.id in replayed
        if resumed:  # stored before the run was stopped: kept as it was
            task = Task.model_validate(replayed.pop(task.id)["payload"])
            failed = None
        else:
            try:
                task, failed = _gate_and_verify(task, spec, runtime, config, stats)
            except Exception as exc:
                _candidate_error(stats, catalog, spec, task.id, exc, run_id)
                continue
        if failed is not None:
            stats["rejected"][failed.name] += 1
            catalog.record(STAGE, f"{spec.name}:{task.id}", f"gate {failed.name}: "
                           f"{failed.detail}", run_id=run_id,
                           payload={"gate": failed.name, "kind": task.kind, "level": level,
                                    "instruction": task.instruction})
            continue
        if resumed:
            stats["resumed"] += 1
        else:
            catalog.put_task(task.id, fp, task.kind, task.model_dump(mode="json"))
        known[task.id] = {"id": task.id}
        pairs.add(chain_target(task))
        if level_left[level] <= 0:  # spilled: take the quota from a level still short
            short = min((lv for lv, v in level_left.items() if v > 0),
                        key=lambda lv: abs(lv - level))
            level_left[short] -= 1
        else:
            level_left[level] -= 1
        kind_left[task.kind] -= 1
        stats["kept"] += 1
        stats["levels"][level] += 1
        stats["kinds"][task.kind] += 1
        stats["writing_programs"] += bool(task.origin.get("bulk"))
        writes_left -= bool(task.origin.get("bulk"))
        if progress:
            progress({"env": spec.name, "kept": stats["kept"], "task": task.id})
    if stats["writer_fallbacks"]:  # never silent: the ledger and the summary say so
        catalog.record(STAGE, spec.name, f"synthesizer model: {stats['writer_fallbacks']} of "
                       f"{stats['candidates']} requests fell back to the offline templates (a "
                       "reply that could not be used)", run_id=run_id,
                       payload={"writer_fallbacks": stats["writer_fallbacks"]})
    return _finish(stats, started)


def _gate_and_verify(task: Task, spec: EnvSpec, runtime: EnvRuntime, config: SynthesisConfig,
                     stats: dict[str, Any]) -> tuple[Task, GateResult | None]:
    """The trust gates, then the verifier; the task with its gate results, and the first
    gate it failed (None: kept). With a verifier model configured its runs are a filter;
    offline the baseline agent's runs are a measurement (`agent_world.synthesis.react_verifier`)."""
    gates = run_gates(task, spec, runtime)
    failed = next((g for g in gates if not g.passed), None)
    if failed is None:
        t0 = time.perf_counter()
        model = configured_verifier()
        verdict = verify_task(task, spec, runtime, runs=config.runs,
                              threshold=config.threshold, stop_early=model is not None,
                              models=verifier_models(config.runs, model))
        stats["verifier_runs"] += verdict.ran
        stats["verifier_seconds"] += time.perf_counter() - t0
        if model is None:
            gates.append(GateResult(name="verifier", passed=True,
                                    detail=f"measured: {verdict.passes}/{verdict.ran} baseline "
                                           "runs reached the ground truth (offline the runs "
                                           "measure, they do not filter)"))
        else:
            gates.append(GateResult(name="verifier", passed=verdict.kept,
                                    detail=f"{verdict.passes}/{verdict.ran} runs reached the "
                                           "ground truth"))
        task = task.model_copy(update={"pass_rate": verdict.pass_rate})
        if not verdict.kept and model is not None:
            failed = gates[-1]
    return task.model_copy(update={"gates": gates}), failed


def _candidate_error(stats: dict[str, Any], catalog: Catalog, spec: EnvSpec, which: str,
                     exc: Exception, run_id: str | None) -> None:
    stats["candidate_errors"] += 1
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    where = f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"
    catalog.record(STAGE, f"{spec.name}:{which}", f"candidate error: {type(exc).__name__}: "
                   f"{exc} ({where})", run_id=run_id,
                   payload={"gate": "candidate_error", "where": where})


def _finish(stats: dict[str, Any], started: float) -> dict[str, Any]:
    stats["seconds"] = round(time.perf_counter() - started, 2)
    stats["verifier_seconds"] = round(stats["verifier_seconds"], 3)
    for key in ("rejected", "levels", "kinds", "no_candidate_reasons"):
        stats[key] = {str(k): v for k, v in sorted(stats[key].items())}
    return stats


def _home(catalog: Catalog) -> str | None:
    url = catalog.url
    if url.startswith("sqlite:///") and url.endswith("catalog.sqlite"):
        return str(Path(url.removeprefix("sqlite:///")).parent)
    return None


def stored_tasks(catalog: Catalog, env_fingerprint: str | None = None) -> list[Task]:
    return [Task.model_validate(t["payload"]) for t in catalog.list_tasks(env_fingerprint)]


__all__ = ["STAGE", "SynthesisConfig", "stored_tasks", "synthesize_env"]
