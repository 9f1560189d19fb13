"""Synthesizing the tasks of one environment: candidates → trust gates → verifier → catalog.

    summary = synthesize_env(spec, SynthesisConfig(per_env=10), catalog, runtime)

The loop draws a kind (graph or programmatic) and a difficulty level that still lack tasks,
builds a candidate from a recipe for that level (`agent_world.agents.synthesizer`), drops
duplicates (same content id: normalised instruction + checks), runs the trust gates
(`agent_world.tasks.gates`) and then the ReAct verifier (`agent_world.agents.verifier`), and
stores what survives in the catalog with its gate results and verifier pass rate. Every gate or
verifier rejection goes to the ledger (stage `synthesize`) with the gate's name.

Levels are a target, not a promise: after `spill_after` of the attempt budget, a level no
candidate reaches lends its quota to the nearest level that candidates do reach.

Attempts are seeded by (config seed, environment fingerprint, attempt number), and tasks already
stored by the same run count toward the quotas, so re-running a killed branch continues it.

Guidelines (from self-evolution) steer the loop: `tools` (walks start at these tools more
often), `error_kinds` (tool_error / constraint_violation / permission_denied favour write tools,
invalid_arguments favours tools with many required arguments, unknown_tool favours opaque tool
names) and `levels` (the difficulty levels to target).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_world.agents.synthesizer import build_candidate
from agent_world.agents.verifier import DEFAULT_RUNS, DEFAULT_THRESHOLD, verify_task
from agent_world.envs.catalog import Catalog
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.tasks.difficulty import level_quotas, recipe_for
from agent_world.tasks.gates import run_gates
from agent_world.tasks.model import GateResult, Task
from agent_world.tasks.toolgraph import tool_graph
from agent_world.tasks.walks import ValueSampler

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


def _start_tool(spec: EnvSpec, rng: random.Random, guidelines: dict[str, Any]) -> str | None:
    names = [t.name for t in spec.tools]
    wanted = [t for t in guidelines.get("tools") or [] if t in names]
    if wanted and rng.random() < 0.7:
        return rng.choice(wanted)
    kinds = set(guidelines.get("error_kinds") or [])
    if kinds & {"tool_error", "constraint_violation", "permission_denied"} and rng.random() < .5:
        writes = [t.name for t in spec.tools if t.mutates]
        if writes:
            return rng.choice(writes)
    if "invalid_arguments" in kinds and rng.random() < 0.5:
        return max(spec.tools, key=lambda t: len(t.parameters.get("required", []))).name
    return None


def synthesize_env(spec: EnvSpec, config: SynthesisConfig, catalog: Catalog,
                   runtime: EnvRuntime, run_id: str | None = None,
                   guidelines: dict[str, Any] | None = None, model: Any = None,
                   progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Emit up to `config.per_env` verified tasks for `spec`; returns the gate statistics."""
    started = time.perf_counter()
    guidelines = guidelines or {}
    levels = [int(x) for x in guidelines.get("levels") or config.levels]
    level_left = level_quotas(config.per_env, levels)
    kind_left = _kind_quotas(config.per_env, config.programmatic_share)
    fp = spec.fingerprint
    known = {t["id"]: t for t in catalog.list_tasks(fp)}
    for t in known.values():  # a resumed run keeps what it already stored
        origin = t["payload"].get("origin", {})
        if run_id and origin.get("run_id") == run_id:
            lv = t["payload"]["difficulty"]["level"]
            level_left[lv] = level_left.get(lv, 0) - 1
            kind_left[t["kind"]] -= 1
    stats: dict[str, Any] = {"env": spec.name, "candidates": 0, "no_candidate": 0,
                             "duplicates": 0, "off_target": 0, "rejected": Counter(),
                             "kept": 0, "levels": Counter(), "kinds": Counter(),
                             "verifier_runs": 0, "verifier_seconds": 0.0}
    graph = tool_graph(spec, home=_home(catalog), runtime=runtime)
    sampler = ValueSampler(spec)
    obscure_bias = "unknown_tool" in (guidelines.get("error_kinds") or [])
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
        recipe = recipe_for(max(1, target - 1) if kind == "programmatic" else target, rng)
        if obscure_bias and rng.random() < 0.5:
            recipe.obscured = True
        origin = {"run_id": run_id, "attempt": attempt, "guidelines": guidelines or None}
        task = build_candidate(spec, graph, runtime, rng, recipe, kind,
                               seed=config.seed * 100_000 + attempt, sampler=sampler,
                               model=model, start=_start_tool(spec, rng, guidelines),
                               origin=origin)
        if isinstance(task, str):
            stats["no_candidate"] += 1
            continue
        stats["candidates"] += 1
        level = task.difficulty.level
        # late in the budget, a level that stays out of reach lends its quota to the others
        spill = attempt >= config.spill_after * budget and level in level_left and \
            sum(max(v, 0) for v in level_left.values()) > 0
        if (level_left.get(level, 0) <= 0 and not spill) or kind_left[task.kind] <= 0:
            stats["off_target"] += 1
            continue
        if task.id in known:
            stats["duplicates"] += 1
            continue
        gates = run_gates(task, spec, runtime)
        failed = next((g for g in gates if not g.passed), None)
        if failed is None:
            t0 = time.perf_counter()
            verdict = verify_task(task, spec, runtime, runs=config.runs,
                                  threshold=config.threshold, stop_early=True)
            stats["verifier_runs"] += verdict.ran
            stats["verifier_seconds"] += time.perf_counter() - t0
            gates.append(GateResult(name="verifier", passed=verdict.kept,
                                    detail=f"{verdict.passes}/{verdict.ran} runs reached the "
                                           "ground truth"))
            task = task.model_copy(update={"pass_rate": verdict.pass_rate})
            if not verdict.kept:
                failed = gates[-1]
        task = task.model_copy(update={"gates": gates})
        if failed is not None:
            stats["rejected"][failed.name] += 1
            catalog.record(STAGE, f"{spec.name}:{task.id}", f"gate {failed.name}: "
                           f"{failed.detail}", run_id=run_id,
                           payload={"gate": failed.name, "kind": task.kind, "level": level,
                                    "instruction": task.instruction})
            continue
        catalog.put_task(task.id, fp, task.kind, task.model_dump(mode="json"))
        known[task.id] = {"id": task.id}
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
        if progress:
            progress({"env": spec.name, "kept": stats["kept"], "task": task.id})
    stats["seconds"] = round(time.perf_counter() - started, 2)
    stats["verifier_seconds"] = round(stats["verifier_seconds"], 3)
    for key in ("rejected", "levels", "kinds"):
        stats[key] = {str(k): v for k, v in sorted(stats[key].items())}
    return stats


def _home(catalog: Catalog) -> str | None:
    url = catalog.url
    if url.startswith("sqlite:///") and url.endswith("catalog.sqlite"):
        from pathlib import Path

        return str(Path(url.removeprefix("sqlite:///")).parent)
    return None


def stored_tasks(catalog: Catalog, env_fingerprint: str | None = None) -> list[Task]:
    return [Task.model_validate(t["payload"]) for t in catalog.list_tasks(env_fingerprint)]


__all__ = ["STAGE", "SynthesisConfig", "stored_tasks", "synthesize_env"]
