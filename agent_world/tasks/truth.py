"""Ground truth of a plan: what the answer is and what the chain changes.

An **answer spec** says which value of a plan's observations answers the task:
  {"kind": "field", "step": i, "field": f}            one field of step i's (selected) result
  {"kind": "section", "step": i, "field": f, "section": "Steps", "nth": n}
                                                      item n of a section of that field's body
  {"kind": "count", "step": i, "where": {f: v}}       how many elements of a list match
  {"kind": "sum" | "max" | "min", "step": i, "field": f, "where": {...}}
  {"kind": "none"}                                    the task is checked on the state only

`ground_truth` executes the plan twice in fresh episodes, the second time starting later in the
episode's step count (as an agent that reads first would): the answer must be identical (one
that depends on the step cannot be checked), and the two change sets merged with
`mask_volatile` give the expected changes, any value that varied as a wildcard. With the
engine's ids and clock driven by committed writes only, they normally agree exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_world.envs.episode import EnvRuntime, Observation
from agent_world.envs.spec import EnvSpec
from agent_world.tasks.check import episode_changes, mask_volatile
from agent_world.tasks.model import ToolCall
from agent_world.tasks.sections import section_item
from agent_world.tasks.walks import Plan, execute_plan, field_value, selected

STEP_SHIFT = 5  # how much later the second execution starts


def _matches(item: Any, where: dict[str, Any]) -> bool:
    return isinstance(item, dict) and all(field_value(item, k) == v for k, v in where.items())


def extract_answer(answer: dict[str, Any], plan: Plan,
                   observations: list[Observation | None]) -> Any:
    """The value an answer spec picks from a run's observations (None if it is not there)."""
    kind = answer.get("kind", "none")
    if kind == "none":
        return None
    i = answer["step"]
    if i >= len(observations) or observations[i] is None or not observations[i].ok:
        return None
    result = observations[i].result
    if kind == "field":
        return field_value(selected(result, plan.steps[i].select), answer["field"])
    if kind == "section":
        body = field_value(selected(result, plan.steps[i].select), answer["field"])
        return section_item(body, answer["section"], answer["nth"])
    if not isinstance(result, list):
        return None
    items = [x for x in result if _matches(x, answer.get("where") or {})]
    if kind == "count":
        return len(items)
    values = [field_value(x, answer["field"]) for x in items]
    values = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if not values:
        return None
    if kind == "sum":
        return round(sum(values), 2)
    return max(values) if kind == "max" else min(values)


@dataclass
class Truth:
    chain: list[ToolCall]
    answer: Any
    expected_changes: dict[str, Any]
    observations: list[Observation]


def run_plan(spec: EnvSpec, runtime: EnvRuntime, plan: Plan, seed: int, shift: int = 0,
             **kwargs: Any) -> tuple[list[Observation | None], dict[str, Any]]:
    """Execute a plan in a fresh episode: its observations and the changes it made."""
    ep = runtime.open(spec, seed=seed)
    try:
        ep.steps = shift
        obs = execute_plan(plan, ep, **kwargs)
        return obs, episode_changes(ep)
    finally:
        ep.close()


def ground_truth(spec: EnvSpec, runtime: EnvRuntime, plan: Plan, answer: dict[str, Any],
                 seed: int) -> Truth | str:
    """The truth of a plan, or why it has none (a failing call, a step-dependent answer)."""
    first, changes = run_plan(spec, runtime, plan, seed)
    if len(first) != len(plan.steps) or not all(o is not None and o.ok for o in first):
        bad = next((o for o in first if o is None or not o.ok), None)
        why = bad.error.message if bad is not None and bad.error else "a binding did not resolve"
        return f"the chain does not execute: {why}"
    later, changes_later = run_plan(spec, runtime, plan, seed, shift=STEP_SHIFT)
    value = extract_answer(answer, plan, first)
    if answer.get("kind", "none") != "none":
        if value is None or value == "":
            return "the answer field is empty"
        if value != extract_answer(answer, plan, later):
            return "the answer depends on the step number (a generated id or the clock)"
    expected = mask_volatile(changes, changes_later)
    if expected is None:
        return "the chain changes different rows when run later in an episode"
    chain = [ToolCall(tool=o.tool, arguments=o.arguments) for o in first if o is not None]
    return Truth(chain=chain, answer=value, expected_changes=expected,
                 observations=[o for o in first if o is not None])


__all__ = ["STEP_SHIFT", "Truth", "extract_answer", "ground_truth", "run_plan"]
