"""Trust gates: what every task must pass before it is emitted.

- `initial_state_fails`: the check fails on the untouched initial state, with no answer and
  with an empty one (no free reward).
- `gold_replay`: the gold solution — the task's chain for graph tasks, its solution script
  (isolated) for programmatic ones — passes the check in a fresh episode, twice, with the same
  outcome (answer and state hash); anything that depends on more than the seed is dropped.
- `known_wrong`: solutions known to be wrong fail the check: the last call dropped, a stated
  argument perturbed to another valid value, a read-only run that skips the writes; for a
  programmatic task that writes in a loop, solution scripts that skip the writes, stop after
  the first target or ignore the condition. Each variant that differs from the gold run must
  fail.

Gates need the task's plan and answer spec (`task.origin["plan"]`, `task.origin["answer"]`,
written by the synthesizer). `run_gates` stops at the first failure; the synthesizer writes
that failure to the ledger with the gate's name.
"""

from __future__ import annotations

import random
from typing import Any

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.tasks.check import check_episode
from agent_world.tasks.model import GateResult, Task
from agent_world.tasks.truth import extract_answer, run_plan
from agent_world.tasks.walks import Plan, ValueSampler

GATES = ("initial_state_fails", "gold_replay", "known_wrong")


def _plan(task: Task) -> Plan:
    return Plan.model_validate(task.origin["plan"])


def gate_initial_state(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    ep = runtime.open(spec, seed=task.seed)
    try:
        for answer in (None, ""):
            res = check_episode(task, ep, answer)
            if res.passed:
                return GateResult(name="initial_state_fails", passed=False,
                                  detail=f"the untouched initial state passes ({res.detail})")
        return GateResult(name="initial_state_fails", passed=True,
                          detail=f"initial state scores {res.score:g}")
    finally:
        ep.close()


def gold_run(task: Task, spec: EnvSpec, runtime: EnvRuntime,
             solution: str | None = None) -> tuple[bool, Any, str, str]:
    """One gold run in a fresh episode: (passed, answer, state hash, detail). `solution`
    runs another solution source in the gold's place (a known-wrong one)."""
    ep = runtime.open(spec, seed=task.seed)
    try:
        source = solution or (task.solution if task.kind == "programmatic" else None)
        if source:
            from agent_world.tasks.scripts import ScriptError, run_solution

            def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
                obs = ep.step(tool, arguments)
                if obs.ok:
                    return {"ok": True, "result": obs.result}
                return {"ok": False, "kind": obs.error.kind, "message": obs.error.message}

            try:
                answer = run_solution(source, call)
            except ScriptError as exc:
                return False, None, "", f"solution failed: {exc}"
        else:
            observations = []
            for c in task.chain:
                obs = ep.step(c.tool, c.arguments)
                observations.append(obs)
                if not obs.ok:
                    return False, None, "", f"gold call {c.tool} failed: {obs.error.message}"
            answer = extract_answer(task.origin.get("answer", {"kind": "none"}), _plan(task),
                                    observations)
        res = check_episode(task, ep, answer)
        return res.passed, answer, ep.state_hash(), res.detail
    finally:
        ep.close()


def gate_gold_replay(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    runs = [gold_run(task, spec, runtime) for _ in range(2)]
    for passed, _, _, detail in runs:
        if not passed:
            return GateResult(name="gold_replay", passed=False, detail=detail)
    if runs[0][1:3] != runs[1][1:3]:
        return GateResult(name="gold_replay", passed=False,
                          detail="two gold replays ended differently (answer or state)")
    return GateResult(name="gold_replay", passed=True, detail="gold passes twice, same outcome")


def wrong_variants(task: Task, spec: EnvSpec, rng: random.Random) -> list[tuple[str, dict]]:
    """Known-wrong ways to run the plan: (name, execute_plan keyword arguments)."""
    plan = _plan(task)
    n = len(plan.steps)
    variants: list[tuple[str, dict]] = [("last call dropped", {"skip": {n - 1}})]
    writes = plan.writes(spec)
    if writes:
        variants.append(("read-only run (writes skipped)", {"skip": set(writes)}))
    sampler = ValueSampler(spec)
    stated = [(i, k, v) for i, s in enumerate(plan.steps) for k, v in s.given.items()]
    rng.shuffle(stated)
    for i, k, v in stated:
        schema = spec.tool(plan.steps[i].tool).parameters.get("properties", {}).get(k, {})
        other = sampler.sample(plan.steps[i].tool, k, schema, rng, avoid=v)
        if other is not None:
            variants.append((f"argument {k} of call {i + 1} perturbed ({v!r} -> {other!r})",
                             {"overrides": {(i, k): other}}))
            break
    return variants


def _known_wrong_programs(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    """A task that writes in a loop: wrong solution scripts (writes skipped, first target
    only, condition ignored) must fail; one that ends exactly as the gold (same answer and
    state) is not wrong and is skipped."""
    from agent_world.tasks.programs import bulk_wrong_sources

    _, gold_answer, gold_hash, _ = gold_run(task, spec, runtime)
    checked = []
    for name, source in bulk_wrong_sources(_plan(task), task.origin["bulk"]):
        passed, answer, state, _ = gold_run(task, spec, runtime, solution=source)
        if (answer, state) == (gold_answer, gold_hash):
            continue
        if passed:
            return GateResult(name="known_wrong", passed=False,
                              detail=f"a known-wrong solution passes: {name}")
        checked.append(name)
    if not checked:
        return GateResult(name="known_wrong", passed=False,
                          detail="no wrong solution ends differently from the gold")
    return GateResult(name="known_wrong", passed=True,
                      detail=f"{len(checked)} wrong solutions fail: " + "; ".join(checked))


def gate_known_wrong(task: Task, spec: EnvSpec, runtime: EnvRuntime,
                     seed: int = 0) -> GateResult:
    if task.origin.get("bulk"):
        return _known_wrong_programs(task, spec, runtime)
    plan = _plan(task)
    answer_spec = task.origin.get("answer", {"kind": "none"})
    checked = []
    for name, kwargs in wrong_variants(task, spec, random.Random(f"{task.id}:{seed}")):
        ep = runtime.open(spec, seed=task.seed)
        try:
            from agent_world.tasks.walks import execute_plan

            observations = execute_plan(plan, ep, **kwargs)
            answer = extract_answer(answer_spec, plan, observations)
            res = check_episode(task, ep, answer)
        finally:
            ep.close()
        if res.passed:
            return GateResult(name="known_wrong", passed=False,
                              detail=f"a known-wrong solution passes: {name}")
        checked.append(name)
    return GateResult(name="known_wrong", passed=True,
                      detail=f"{len(checked)} wrong solutions fail: " + "; ".join(checked))


def run_gates(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> list[GateResult]:
    """The gates in order, stopping at the first that fails (cheap ones first)."""
    out = []
    for gate in (gate_initial_state, gate_gold_replay, gate_known_wrong):
        result = gate(task, spec, runtime)
        out.append(result)
        if not result.passed:
            break
    return out


__all__ = ["GATES", "gate_gold_replay", "gate_initial_state", "gate_known_wrong", "gold_run",
           "run_gates", "run_plan", "wrong_variants"]
