"""The one deterministic check of a task against an attempt.

    result = check_task(task, initial_db, final_db, answer)
    result.score, result.passed, result.components, result.detail

It takes **database paths** (SQLite files: the state before and after the attempt) and the
attempt's final answer, so training, evaluation and the trust gates can check an attempt
whether it ran in an episode of this process, a worker, or an exported environment.
`check_episode(task, episode, answer)` is the shortcut for a live `Episode` (its template is
the initial state).

Graph tasks have up to two components, each 0 or 1:
- `answer`: the final answer IS the reference answer (`answer_matches`): one typed value
  (number, date, time, code, e-mail, yes/no, free text) compared exactly after normalisation
  (case, spaces, punctuation, thousands separators, trailing zeros). A short sentence may
  carry a typed value only when it states exactly one value of the reference's kind ("You
  have 8,300 miles."); a list of candidates ("5 6 7 8"), the digits of a date or clock time,
  or a text over `MAX_ANSWER_CHARS` states nothing. Free text is the whole answer or what a
  one-sentence answer states after its copula or colon ("The status is confirmed."): "I could
  not find it" does not answer "I";
- `state`: the change from the initial to the final state equals what the gold chain produced
  (`task.expected_changes`; a value the synthesizer found to vary between executions is the
  wildcard `"*"`). The engine derives generated ids and the clock from the seed and the
  committed writes only, so an attempt that makes the gold writes in the gold order — with any
  reads or failed calls in between — leaves exactly the gold state. A task whose gold chain
  writes nothing requires the state to be unchanged.
The state is a condition: a wrong or missing write scores 0 whatever the answer says, and a
read-only task scores answer × state (doing nothing earns 0); a task that writes and answers
scores the mean of the two once the state is right.
Programmatic tasks run their verification script (isolated, see `agent_world.tasks.scripts`),
component `verify` in [0, 1]; generated scripts read the answer with the same rule (they carry
`answer_values`' source), and with a reference answer the check itself also requires exactly
one value of its kind (`single_value`), so a script stored before the rule cannot be gamed by
a list either. `passed` needs all components at 1.

Given the attempt's steps (`check_episode(..., steps=...)`: training rollouts, evaluation, the
verifier's attempts), an answer must also be **grounded** (component `grounded`): the attempt
made a successful call of a gold-chain tool with the gold call's selecting arguments (its
identifiers — `*_id`, `email`, `*_code`, ... — and the tool's required arguments, never paging
nor the statement of a tool that runs SQL, which the attempt writes itself) that produced the
answer: its observation shows the reference value, or, for an aggregate (a
count, a sum), it is the call of the list the value is computed from. Any call of a gold tool
is not enough: the chain's first call before guessing, or the right tool on another record,
scores 0. Extra calls cost (component `efficiency`): beyond the gold chain's length plus
`EXTRA_CALL_SLACK`, each call takes `EXTRA_CALL_COST` off a factor on the score, down to
`MIN_EFFICIENCY`; `passed` does not depend on it.
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_world.envs.database import logged_tables
from agent_world.tasks.answers import (
    MAX_ANSWER_CHARS,
    answer_matches,
    answer_rule_source,
    answer_values,
    normalise,
    same_value,
    stated_values,
    states_one_value,
)
from agent_world.tasks.model import Step, Task, ToolCall
from agent_world.tasks.scripts import ScriptError, run_verify
from agent_world.tasks.sections import body_sections
from agent_world.tasks.words import PAGING, sql_param

WILDCARD = "*"
# extra calls beyond the gold chain's length plus EXTRA_CALL_SLACK cost EXTRA_CALL_COST each,
# down to MIN_EFFICIENCY: a right, grounded answer still outscores every wrong one
EXTRA_CALL_SLACK = 2
EXTRA_CALL_COST = 0.05
MIN_EFFICIENCY = 0.5


@dataclass
class CheckResult:
    score: float
    passed: bool
    components: dict[str, float] = field(default_factory=dict)
    detail: str = ""


# ---- states ----------------------------------------------------------------------------------
def _tables(conn: sqlite3.Connection, schema: str,
            only: set[str] | None = None) -> dict[str, tuple[list[str], list[str]]]:
    """table -> (columns, primary-key columns) of one attached database (of the tables in
    `only`, when given)."""
    out = {}
    # the engine's bookkeeping tables (_aw_*: undo log, id/clock counters) are not state
    for (name,) in conn.execute(f"SELECT name FROM {schema}.sqlite_master WHERE type='table' "
                                "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_aw\\_%' "
                                "ESCAPE '\\' ORDER BY name"):
        if only is not None and name not in only:
            continue
        info = conn.execute(f'PRAGMA {schema}.table_info("{name}")').fetchall()
        cols = [r[1] for r in info]
        pk = [r[1] for r in sorted(info, key=lambda r: r[5]) if r[5]] or ["rowid"]
        out[name] = (cols, pk)
    return out


def state_changes(initial_db: str | Path, final_db: str | Path,
                  logged: bool = False) -> dict[str, Any]:
    """What changed from one database state to another, per table:
    {"inserted": [row...], "deleted": [key...], "updated": [{"key", "after"}...]}, sorted.
    Tables without changes are left out; no changes at all gives {}. `logged`: `final_db` is an
    episode database last reset to `initial_db`, so only the tables its undo log names can
    differ and only those are compared (a read-only attempt compares none)."""
    conn = sqlite3.connect(f"file:{Path(final_db).resolve()}?mode=ro", uri=True)
    try:
        out: dict[str, Any] = {}
        only = logged_tables(conn) if logged else None
        if only is not None and not only:  # nothing changed since the reset
            return out
        conn.execute("ATTACH DATABASE ? AS base", (f"file:{Path(initial_db).resolve()}?mode=ro",))
        for name, (cols, pk) in _tables(conn, "main", only).items():
            q = f'"{name}"'
            key = ", ".join(f'"{k}"' for k in pk)
            # only rows that differ leave SQLite: an unchanged row is in neither EXCEPT
            main_rows = f"SELECT {key}, * FROM main.{q}"
            base_rows = f"SELECT {key}, * FROM base.{q}"
            rows = {tuple(r[: len(pk)]): dict(zip(cols, r[len(pk):], strict=True)) for r in
                    conn.execute(f"{main_rows} EXCEPT {base_rows}")}
            base = {tuple(r[: len(pk)]): dict(zip(cols, r[len(pk):], strict=True)) for r in
                    conn.execute(f"{base_rows} EXCEPT {main_rows}")}
            inserted = [rows[k] for k in rows.keys() - base.keys()]
            deleted = [dict(zip(pk, k, strict=True)) for k in base.keys() - rows.keys()]
            updated = []
            for k in rows.keys() & base.keys():
                after = {c: v for c, v in rows[k].items() if base[k][c] != v}
                if after:
                    updated.append({"key": dict(zip(pk, k, strict=True)), "after": after})
            if inserted or deleted or updated:
                out[name] = {"inserted": _sorted(inserted), "deleted": _sorted(deleted),
                             "updated": _sorted(updated)}
        return out
    finally:
        conn.close()


def episode_changes(episode: Any) -> dict[str, Any]:
    """`state_changes` of a live episode since its last reset (its template is the initial
    state; only the tables its undo log names are compared)."""
    return state_changes(episode.template, episode.path, logged=True)


def _sorted(items: list[Any]) -> list[Any]:
    return sorted(items, key=lambda x: json.dumps(x, sort_keys=True, default=str))


def mask_volatile(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any] | None:
    """Merge two change sets of the same chain run at different step offsets: values that
    differ (generated ids, clock times) become the wildcard. None if their shapes differ."""
    def merge(x: Any, y: Any) -> Any:
        if isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                raise ValueError
            return {k: merge(x[k], y[k]) for k in x}
        if isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                raise ValueError
            return [merge(i, j) for i, j in zip(x, y, strict=True)]
        return x if x == y else WILDCARD

    try:
        return merge(a, b)
    except ValueError:
        return None


def _matches(expected: Any, actual: Any) -> bool:
    if expected == WILDCARD:
        return True
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and expected.keys() == actual.keys()
                and all(_matches(expected[k], actual[k]) for k in expected))
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(expected) != len(actual):
            return False
        left = list(actual)  # rows in any order: greedy matching is exact for wildcard rows
        for e in expected:
            hit = next((i for i, a in enumerate(left) if _matches(e, a)), None)
            if hit is None:
                return False
            left.pop(hit)
        return True
    if isinstance(expected, float) or isinstance(actual, float):
        try:
            return math.isclose(float(expected), float(actual), rel_tol=1e-6, abs_tol=1e-6)
        except (TypeError, ValueError):
            return False
    return expected == actual


def changes_match(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    """Whether an attempt's changes equal the gold changes (wildcards match anything)."""
    return _matches(json.loads(json.dumps(expected, default=str)),
                    json.loads(json.dumps(actual, default=str)))


# ---- the check -------------------------------------------------------------------------------
def check_task(task: Task, initial_db: str | Path, final_db: str | Path,
               answer: Any, logged: bool = False) -> CheckResult:
    """Check one attempt: the state it started from, the state it left and its final answer.
    `logged`: `final_db` is an episode database last reset to `initial_db` (see
    `state_changes`)."""
    if task.kind == "programmatic":
        return _check_program(task, initial_db, final_db, answer)
    components: dict[str, float] = {}
    notes = []
    if task.reference_answer is not None:
        ok = answer_matches(answer, task.reference_answer, stated_values(task.instruction))
        components["answer"] = float(ok)
        notes.append("answer matches" if ok else
                     f"answer {str(answer)[:80]!r} does not give {task.reference_answer!r}")
    expected = task.expected_changes or {}
    actual = state_changes(initial_db, final_db, logged)
    ok = changes_match(expected, actual)
    components["state"] = float(ok)
    if ok:
        notes.append("state as expected" if expected else "state unchanged as expected")
    else:
        notes.append(f"state differs: expected changes in {sorted(expected) or 'nothing'}, "
                     f"got changes in {sorted(actual) or 'nothing'}")
    if not expected and "answer" in components:
        # a read-only task: leaving the state alone is a condition, not an achievement (doing
        # nothing must not earn half the reward)
        score = components["answer"] * components["state"]
    else:
        # a task that writes: the exact state is a condition too (a wrong or missing write
        # earns nothing, whatever the answer says); with it, a wrong answer halves the score
        score = components["state"] * sum(components.values()) / len(components)
    return CheckResult(score, all(v == 1.0 for v in components.values()), components,
                       "; ".join(notes))


def _check_program(task: Task, initial_db: str | Path, final_db: str | Path,
                   answer: Any) -> CheckResult:
    """A programmatic task: its verification script (`verify` in [0, 1]), the authority on the
    value (it recomputes it from the initial state). With a reference answer, the answer must
    also state exactly one value of its kind (`single_value`): the rule generated scripts
    carry too, so a script stored before it cannot take a list of candidates either."""
    if not task.verify:
        return CheckResult(0.0, False, {"verify": 0.0}, "task has no verification script")
    try:
        score = run_verify(task.verify, initial_db, final_db, answer)
    except ScriptError as exc:
        return CheckResult(0.0, False, {"verify": 0.0}, str(exc))
    components = {"verify": score}
    detail = f"verification script scored {score:g}"
    if task.reference_answer is not None:
        kind, one = states_one_value(answer, task.reference_answer,
                                     stated_values(task.instruction))
        components["single_value"] = float(one)
        score *= one
        if not one:
            detail += f"; answer {str(answer)[:80]!r} does not state exactly one {kind}"
    return CheckResult(score, all(v >= 1.0 - 1e-9 for v in components.values()), components,
                       detail)


# ---- grounding and efficiency ----------------------------------------------------------------
def _calls(steps: list[Step]) -> list[Step]:
    """The attempt's readable tool calls (a malformed one is the format penalty's business)."""
    return [s for s in steps if s.tool is not None and s.error_kind != "malformed_tool_call"]


def is_identifier(name: str) -> bool:
    n = name.lower()
    return n in ("id", "code", "email", "sku", "number") or \
        n.endswith(("_id", "_ids", "_code", "_email", "_number", "_sku"))


def selecting_arguments(call: ToolCall, spec: Any = None) -> dict[str, Any]:
    """The arguments of a gold call that select its record: identifiers (`id`, `*_id`,
    `email`, `*_code`, `*_number`, ...) and, given the environment `spec`, the tool's required
    arguments; never paging."""
    required: set[str] = set()
    written = None
    if spec is not None:
        tool = next((t for t in spec.tools if t.name == call.tool), None)
        required = set(tool.parameters.get("required", [])) if tool is not None else set()
        # a SQL statement is the attempt's own to write: its rows must show the answer
        written = sql_param(spec, call.tool)
    return {k: v for k, v in call.arguments.items()
            if k not in PAGING and k != written and (k in required or is_identifier(k))}


def _selects(step: Step, call: ToolCall, spec: Any) -> bool:
    args = step.arguments if isinstance(step.arguments, dict) else {}
    return all(k in args and normalise(args[k]) == normalise(v)
               for k, v in selecting_arguments(call, spec).items())


def _shows(result: Any, reference: Any, in_body: bool = False) -> bool:
    """Whether an observation holds the reference value (every value of a list reference);
    `in_body`: as an item of a section of a body it holds (a fetched page's second step)."""
    if isinstance(reference, list):
        return all(_shows(result, r, in_body) for r in reference)
    if isinstance(result, dict):
        return any(_shows(v, reference, in_body) for v in result.values())
    if isinstance(result, list):
        return any(_shows(v, reference, in_body) for v in result)
    if in_body and isinstance(result, str):
        return any(same_value(item, reference)
                   for items in body_sections(result).values() for item in items)
    if result is None or isinstance(result, str) and len(result) > MAX_ANSWER_CHARS:
        return False
    return same_value(result, reference)


def _answer_step(task: Task) -> int | None:
    """The gold call whose list an aggregate answer (count, sum, max, min) is computed from;
    None when the answer is a value an observation shows."""
    spec = task.origin.get("answer") or {}
    if spec.get("kind") in ("count", "sum", "max", "min"):
        return spec.get("step", len(task.chain) - 1)
    bulk = task.origin.get("bulk") or {}
    if bulk.get("answer") == "count":
        return bulk["step"]
    if task.kind == "programmatic" and spec.get("kind") != "field":
        return len(task.chain) - 1  # computed by code from the chain's last observation
    return None


def grounded(task: Task, steps: list[Step], spec: Any = None) -> bool:
    """Whether the attempt's `steps` include a successful call of a gold-chain tool with the
    gold call's selecting arguments (`selecting_arguments`) that produced the answer: one whose
    observation shows the reference value, or, for an aggregate (a count, a sum), the call of
    the list it is computed from. Without a reference answer (the state is checked), any such
    call. Always true for a task without a gold chain."""
    if not task.chain:
        return True
    gold = list(enumerate(task.chain))
    made = [(s, task.real_tool(s.tool)) for s in _calls(steps) if s.ok]
    source = _answer_step(task) if task.reference_answer is not None else None
    # a field the request asks of one record is shown by that record's call (or a later
    # one): the customer's address list shows the line2 of "that order's" address too, but
    # calling up the customer is not opening the order
    asked = task.origin.get("answer") or {}
    first = asked.get("step", 0) if asked.get("kind") in ("field", "section") else 0
    in_body = asked.get("kind") == "section"
    for step, tool in made:
        for i, call in gold:
            if call.tool != tool or not _selects(step, call, spec):
                continue
            if task.reference_answer is None or i == source or \
                    source is None and i >= first and _shows(step.result, task.reference_answer,
                                                             in_body):
                return True
    return False


def efficiency(task: Task, steps: list[Step]) -> float:
    """1 for an attempt within the gold chain's length plus EXTRA_CALL_SLACK calls; each call
    beyond costs EXTRA_CALL_COST, down to MIN_EFFICIENCY."""
    extra = max(0, len(_calls(steps)) - len(task.chain) - EXTRA_CALL_SLACK)
    return max(MIN_EFFICIENCY, 1.0 - EXTRA_CALL_COST * extra)


def check_episode(task: Task, episode: Any, answer: Any,
                  steps: list[Step] | None = None) -> CheckResult:
    """`check_task` on a live episode (its template is the initial state); with the attempt's
    `steps`, an ungrounded answer (see the module docstring) scores 0 and extra calls lower
    the score (component `efficiency`; `passed` does not depend on it)."""
    result = check_task(task, episode.template, episode.path, answer, logged=True)
    if steps is None:
        return result
    eff = efficiency(task, steps)
    if not grounded(task, steps, getattr(episode, "spec", None)):
        tools = ", ".join(sorted({c.tool for c in task.chain}))
        why = "no successful call of " + tools + " with the gold call's selecting arguments"
        if task.reference_answer is not None:
            why += " that shows or lists the answer"
        return CheckResult(0.0, False, {**result.components, "grounded": 0.0,
                                        "efficiency": eff},
                           f"{result.detail}; not grounded: {why}")
    result.components["grounded"] = 1.0
    result.components["efficiency"] = eff
    result.score *= eff
    if eff < 1.0:
        n = len(_calls(steps))
        result.detail += f"; {n} calls for a gold chain of {len(task.chain)}: x{eff:g}"
    return result


__all__ = ["EXTRA_CALL_COST", "EXTRA_CALL_SLACK", "MAX_ANSWER_CHARS", "MIN_EFFICIENCY",
           "CheckResult", "answer_matches", "answer_rule_source", "answer_values",
           "changes_match", "check_episode", "stated_values",
           "check_task", "efficiency", "episode_changes", "grounded", "mask_volatile",
           "is_identifier", "normalise", "selecting_arguments", "state_changes"]
