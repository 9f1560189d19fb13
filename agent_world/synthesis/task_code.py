"""The code of a programmatic task that reads: its solution (`solve(env)`: the chain's tool calls
plus the aggregation) and its verification script (`verify(initial_db, final_db, answer)`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_world.tasks.check import answer_rule_source
from agent_world.tasks.programs import SOLUTION_HELPERS, call_lines
from agent_world.tasks.truth import Truth
from agent_world.tasks.walks import Plan


def solution_source(plan: Plan, answer: dict[str, Any]) -> str:
    """`solve(env)`: the plan's tool calls plus the aggregation, as Python."""
    lines = call_lines(plan)
    i = answer["step"]
    where = answer.get("where") or {}
    lines.append(f"    items = [x for x in r{i} if all(field(x, k) == v for k, v in "
                 f"{where!r}.items())]")
    if answer["kind"] == "count":
        lines.append("    return len(items)")
    else:
        lines.append(f"    values = [field(x, {answer['field']!r}) for x in items]")
        lines.append("    values = [v for v in values if isinstance(v, (int, float))]")
        agg = {"sum": "round(sum(values), 2)", "max": "max(values)", "min": "min(values)"}
        lines.append(f"    return {agg[answer['kind']]}")
    return SOLUTION_HELPERS.lstrip() + "\n\n" + "\n".join(lines) + "\n"


_VERIFY_TEMPLATE = '''EXPECTED = {expected!r}
STATED = {stated!r}


def _states_expected(answer):
    """The answer is EXPECTED: the one number it states (`answer_values`, above: a list of
    candidate numbers, or digits of a date, a time or a code, are not an answer) beside those
    the request stated (STATED), which a sentence may repeat."""
    import math

    def same(a, b):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)

    numbers = [n for n in answer_values(answer, MAX_ANSWER_CHARS).get("number", [])
               if same(n, EXPECTED) or not any(same(n, s) for s in STATED)]
    return len(numbers) == 1 and same(numbers[0], EXPECTED)


def _unchanged(initial_db, final_db):
    """Every table holds the same rows before and after (the task only reads)."""
    tables = [r["name"] for r in initial_db.query(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
    for t in tables:
        q = f'SELECT * FROM "{{t}}" ORDER BY rowid'
        if initial_db.query(q) != final_db.query(q):
            return False
    return True


def verify(initial_db, final_db, answer):
    return _states_expected(answer) and _unchanged(initial_db, final_db)
'''


def verify_source(truth: Truth, stated: Sequence[float] = ()) -> str:
    """`verify(initial_db, final_db, answer)`: the aggregate is stated (the check's answer
    rule, `answer_rule_source`; `stated`: the numbers the request gave), nothing was
    written."""
    return answer_rule_source() + _VERIFY_TEMPLATE.format(expected=float(truth.answer),
                                                          stated=list(stated))


__all__ = ["solution_source", "verify_source"]
