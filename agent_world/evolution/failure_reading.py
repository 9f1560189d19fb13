"""Reading one failed attempt: its trace against the task's gold chain says which tool it called
instead of which, which argument it got wrong and where the right value was, or where it
stopped (`read_failure` → `AttemptFinding`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from agent_world.evolution.diagnosis_model import EXTRA_ARGUMENT, AttemptFinding, where_phrase
from agent_world.tasks.evaluation import Attempt
from agent_world.tasks.model import Task, Trajectory

SKILL_OF = {"wrong_tool": "choose_tool", "wrong_arguments": "fill_arguments",
            "state_not_tracked": "track_state", "format": "call_format"}


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return str(a).strip().lower() == str(b).strip().lower()


def _in_text(value: Any, text: str) -> bool:
    s = str(value).strip()
    if not s or isinstance(value, bool):
        return False
    return re.search(rf"(?<![\w.]){re.escape(s)}(?![\w])", text, re.IGNORECASE) is not None


def where_value(value: Any, instruction: str, earlier: list[tuple[int, str, Any]]) -> str:
    """Where an argument value was for the agent to take: "request", "observation k (tool)"
    (the first earlier successful call whose result holds it), or "nowhere before the call"."""
    if _in_text(value, instruction):
        return "request"
    for k, tool, result in earlier:
        if any(_same(leaf, value) for leaf in _leaves(result)):
            return f"observation {k} ({tool})"
    return "nowhere before the call"



def _args_key(args: Any) -> str:
    return json.dumps(args or {}, sort_keys=True, default=str)


def _real(task: Task, visible: str | None) -> str | None:
    return task.real_tool(visible) if visible else None


def read_failure(a: Attempt, task: Task | None, traj: Trajectory | None) -> AttemptFinding | None:
    """The finding of one failed attempt (None: it passed or an environment fault). Without the
    task or trace only the stored class and failing tool are known."""
    if a.passed or a.error_class in (None, "environment"):
        return None
    cls = a.error_class
    base = {"trajectory_id": a.trajectory_id, "task_id": a.task_id, "env_name": a.env_name,
            "level": a.level, "error_class": cls}
    if task is not None:
        base.update(kind=task.kind, obscured=task.difficulty.obscured,
                    distractors=task.difficulty.distractors)
    if task is None or traj is None:
        # the stored failing tool is the foreign call for wrong_tool, else the gold tool missed
        foreign = cls == "wrong_tool"
        return AttemptFinding(**base, skill=SKILL_OF.get(cls, "finish_chain"),
                              expected=None if foreign else a.failing_tool,
                              called=a.failing_tool if foreign else None, offered=False,
                              chain=list(a.tools),
                              detail=f"{cls} at {a.failing_tool or 'an unknown tool'}")
    gold = [c.tool for c in task.chain]
    calls = [s for s in traj.steps if s.tool]
    used = [_real(task, s.tool) for s in calls]
    f = AttemptFinding(**base, skill=SKILL_OF.get(cls, "finish_chain"), calls=len(calls),
                       gold_calls=len(gold), chain=list(dict.fromkeys(gold)))
    done: list[str] = []  # gold tools called so far, in order
    earlier: list[tuple[int, str, Any]] = []
    for k, (s, real) in enumerate(zip(calls, used, strict=True), start=1):
        if cls == "wrong_tool" and (real is None or (gold and real not in gold)
                                    or s.error_kind in ("unknown_tool", "tool_not_in_view")):
            missing = [g for g in gold if g not in done]
            f.expected = missing[0] if missing else (gold[-1] if gold else None)
            f.called = real or s.tool
            f.offered = real is not None and s.error_kind not in ("unknown_tool",
                                                                  "tool_not_in_view")
            offered = "" if f.offered else " (not a tool it was offered)"
            f.detail = f"call {k}: {f.called}{offered} instead of {f.expected}"
            return f
        if cls == "wrong_arguments" and real in gold:
            got = s.arguments if isinstance(s.arguments, dict) else {}
            slots = [c for c in task.chain if c.tool == real]
            exact = any(_args_key(c.arguments) == _args_key(got) for c in slots)
            if not exact or s.ok is False:
                # the gold call it meant: the one sharing the most argument values
                slot = max(slots, key=lambda c: sum(
                    k in got and _same(got[k], v) for k, v in c.arguments.items()))
                keys = sorted(set(slot.arguments) | set(got),
                              key=lambda x: (x not in slot.arguments, x))
                bad = next((x for x in keys if x not in got or x not in slot.arguments
                            or not _same(got[x], slot.arguments[x])), None)
                f.expected = real
                f.argument = bad
                f.given = got.get(bad) if bad else None
                f.wanted = slot.arguments.get(bad) if bad else None
                if bad is not None and bad in slot.arguments:
                    f.source = where_value(slot.arguments[bad], task.instruction, earlier)
                elif bad is not None:
                    f.source = EXTRA_ARGUMENT
                refused = f" (refused: {s.error_kind})" if s.ok is False else ""
                f.detail = (f"call {k}: {real}({bad}={json.dumps(f.given, default=str)}) where "
                            f"the chain passes {json.dumps(f.wanted, default=str)}"
                            f"{refused}; {where_phrase(f.source)}" if bad else
                            f"call {k}: {real} refused ({s.error_kind}: "
                            f"{(s.error_message or '')[:80]})")
                return f
        if real in gold:
            done.append(real)
        if s.ok and real:
            earlier.append((k, real, s.result))
    if cls == "gave_up":
        missing = [g for g in gold if g not in done]
        f.expected = missing[0] if missing else None
        if not calls:
            f.skill = "call_before_answering"
            f.detail = ("answered without a call" if traj.finished and
                        traj.final_answer not in (None, "") else "stopped without a call")
            f.detail += f"; the chain starts with {f.expected}" if f.expected else ""
        else:
            f.skill = "finish_chain"
            made = ", ".join(done) or "none of the chain"
            f.detail = (f"stopped after {len(calls)} call(s) ({made}) of {len(gold)}; next was "
                        f"{f.expected}")
        return f
    if cls == "state_not_tracked":
        ref = task.reference_answer
        seen = where_value(ref, "", earlier) if ref not in (None, "") else ""
        held = re.match(r"observation \d+ \((.+)\)$", seen or "")
        f.expected = held.group(1) if held else (gold[-1] if gold else None)
        f.wanted, f.given = ref, traj.final_answer
        f.source = seen if seen.startswith("observation") else None
        f.detail = (f"right calls, answered {json.dumps(traj.final_answer, default=str)[:60]} "
                    f"for {json.dumps(ref, default=str)[:60]}"
                    + (f" (it was in {seen})" if f.source else ""))
        return f
    if cls == "format":
        said = next((s.text for s in traj.steps if s.text.strip()), "")
        f.detail = f"unreadable output: {said[:80]!r}"
        return f
    # a class the walk above did not place (e.g. a refused gold call without arguments)
    f.expected = a.failing_tool
    f.detail = f"{cls} at {a.failing_tool or '?'}"
    return f


__all__ = ["SKILL_OF", "read_failure", "where_value"]
