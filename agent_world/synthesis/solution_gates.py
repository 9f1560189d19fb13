"""The gates that run solutions (see `agent_world.synthesis.gates` for all of them).

- `gold_replay`: the gold solution (the chain, or the solution script run isolated) passes
  twice in fresh episodes with the same answer and end state.
- `known_wrong`: solutions known to be wrong fail: the last call dropped, a stated argument
  perturbed, the writes skipped, each write aimed at another record it accepts (a seat chosen
  for the wrong passenger must not pass because a later upgrade releases every seat), the
  branch not taken; for a task that writes in a loop, scripts that skip the writes, stop after
  the first target or ignore the condition.
"""

from __future__ import annotations

import random
import re
from typing import Any

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.tasks.check import check_episode
from agent_world.tasks.model import GateResult, Task, ToolCall
from agent_world.tasks.programs import bulk_wrong_sources
from agent_world.tasks.retarget import retargeted
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.scripts import ScriptError, run_solution
from agent_world.tasks.truth import extract_answer
from agent_world.tasks.walks import Plan, PlanStep, execute_plan


def task_plan(task: Task) -> Plan:
    """The plan the synthesizer wrote for a task (`task.origin["plan"]`)."""
    return Plan.model_validate(task.origin["plan"])


def gold_run(task: Task, spec: EnvSpec, runtime: EnvRuntime,
             solution: str | None = None) -> tuple[bool, Any, str, str]:
    """One gold run in a fresh episode: (passed, answer, state hash, detail). `solution`
    runs another solution source in the gold's place (a known-wrong one)."""
    ep = runtime.open(spec, seed=task.seed)
    try:
        source = solution or (task.solution if task.kind == "programmatic" else None)
        if source:
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
            answer = extract_answer(task.origin.get("answer", {"kind": "none"}), task_plan(task),
                                    observations)
        res = check_episode(task, ep, answer)
        return res.passed, answer, ep.state_hash(), res.detail
    finally:
        ep.close()


# when a record was last touched: a write that changes only this changes nothing a user asked
_TOUCHED = re.compile(r"^(?:last_)?(?:updated|modified|edited|changed)(?:_(?:at|on|time|date))?$")


def touches_only(changes: dict[str, Any] | None) -> bool:
    """The gold's changes are edits of when records were last updated and nothing else
    ("set its name to Contract notes" on a milestone already named so: only updated_at)."""
    if not changes:
        return False
    for delta in changes.values():
        if delta.get("inserted") or delta.get("deleted"):
            return False
        if any(not all(_TOUCHED.match(c) for c in u.get("after", {}))
               for u in delta.get("updated", [])):
            return False
    return True


def gate_gold_replay(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    runs = [gold_run(task, spec, runtime) for _ in range(2)]
    for passed, _, _, detail in runs:
        if not passed:
            return GateResult(name="gold_replay", passed=False, detail=detail)
    if runs[0][1:3] != runs[1][1:3]:
        return GateResult(name="gold_replay", passed=False,
                          detail="two gold replays ended differently (answer or state)")
    if touches_only(task.expected_changes):
        return GateResult(name="gold_replay", passed=False,
                          detail="the writes change only when records were last updated")
    return GateResult(name="gold_replay", passed=True, detail="gold passes twice, same outcome")


def wrong_variants(task: Task, spec: EnvSpec, rng: random.Random) -> list[tuple[str, dict]]:
    """Known-wrong ways to run the plan: (name, execute_plan keyword arguments)."""
    plan = task_plan(task)
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


def other_branch(task: Task) -> tuple[Plan, dict[str, Any]] | None:
    """A conditional task's branch not taken: (plan, answer spec), or None."""
    cond = task.origin.get("condition")
    if not cond:
        return None
    plan = task_plan(task)
    if cond["holds"]:  # the gold writes: the wrong branch reads and answers
        reads = Plan(steps=plan.steps[: cond["step"] + 1])
        return reads, {"kind": "field", "step": cond["step"], "field": cond["else_field"]}
    return Plan(steps=[*plan.steps, PlanStep.model_validate(cond["write"])]), {"kind": "none"}


def _known_wrong_programs(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    """A task that writes in a loop: wrong solution scripts (writes skipped, first target
    only, condition ignored) must fail; one that ends exactly as the gold (same answer and
    state) is not wrong and is skipped."""
    _, gold_answer, gold_hash, _ = gold_run(task, spec, runtime)
    checked = []
    for name, source in bulk_wrong_sources(task_plan(task), task.origin["bulk"]):
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
    gold_plan = task_plan(task)
    gold_spec = task.origin.get("answer", {"kind": "none"})
    checked = []
    variants = [(name, kwargs, gold_plan, gold_spec) for name, kwargs in
                wrong_variants(task, spec, random.Random(f"{task.id}:{seed}"))]
    other = other_branch(task)
    if other is not None:
        variants.append(("the branch the observed value does not take", {}, *other))
    for name, kwargs, plan, answer_spec in variants:
        ep = runtime.open(spec, seed=task.seed)
        try:
            observations = execute_plan(plan, ep, **kwargs)
            answer = extract_answer(answer_spec, plan, observations)
            res = check_episode(task, ep, answer)
        finally:
            ep.close()
        if res.passed:
            return GateResult(name="known_wrong", passed=False,
                              detail=f"a known-wrong solution passes: {name}")
        checked.append(name)
    answer: list[Any] = []  # the gold answer, run for only when a write can be retargeted
    for i, call, chain in retargeted(task, spec, runtime):
        name = f"call {i + 1} ({call.tool}) aimed at another record {call.arguments}"
        answer = answer or [gold_run(task, spec, runtime)[1]]
        if _replay_passes(task, spec, runtime, chain, answer[0]):
            return GateResult(name="known_wrong", passed=False,
                              detail=f"a known-wrong solution passes: {name}")
        checked.append(name)
    return GateResult(name="known_wrong", passed=True,
                      detail=f"{len(checked)} wrong solutions fail: " + "; ".join(checked))


def _replay_passes(task: Task, spec: EnvSpec, runtime: EnvRuntime, calls: list[ToolCall],
                   answer: Any) -> bool:
    ep = runtime.open(spec, seed=task.seed)
    try:
        for c in calls:
            ep.step(c.tool, c.arguments)
        return check_episode(task, ep, answer).passed
    finally:
        ep.close()


__all__ = ["gate_gold_replay", "gate_known_wrong", "gold_run", "other_branch", "task_plan",
           "wrong_variants"]
