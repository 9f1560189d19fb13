"""The one deterministic check of a task against an attempt.

    result = check_task(task, initial_db, final_db, answer)
    result.score, result.passed, result.components, result.detail

It takes **database paths** (SQLite files: the state before and after the attempt) and the
attempt's final answer, so training, evaluation and the trust gates can check an attempt
whether it ran in an episode of this process, a worker, or an exported environment.
`check_episode(task, episode, answer)` is the shortcut for a live `Episode` (its template is
the initial state).

Graph tasks have up to two components, each 0 or 1:
- `answer`: the final answer matches the reference answer after normalisation (case, spaces,
  punctuation; numbers compared numerically; a free-text answer of at most
  `MAX_ANSWER_CHARS` characters matches when it contains every reference value as a whole
  word/number — a long dump of everything does not count);
- `state`: the change from the initial to the final state equals what the gold chain produced
  (`task.expected_changes`; a value the synthesizer found to vary between executions is the
  wildcard `"*"`). The engine derives generated ids and the clock from the seed and the
  committed writes only, so an attempt that makes the gold writes in the gold order — with any
  reads or failed calls in between — leaves exactly the gold state. A task whose gold chain
  writes nothing requires the state to be unchanged.
`score` is the mean of the components, except for a read-only task with a reference answer:
there the unchanged state is a condition (score = answer × state), so doing nothing earns 0.
Programmatic tasks run their verification script (isolated, see `agent_world.tasks.scripts`),
component `verify` in [0, 1]. `passed` needs all components at 1.

Given the attempt's steps (`check_episode(..., steps=...)`: training rollouts, evaluation, the
verifier's attempts), an answer must also be **grounded**: a task whose gold chain calls tools
is only passed by an attempt with at least one successful call of one of those tools. A right
answer without one is a guess — small counts and ids are easy to hit by chance, e.g. "3" after
reading an unrelated record — and scores 0 (component `grounded`). Other routes to the answer
stay open as long as they share a tool with the gold chain.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_world.envs.database import logged_tables
from agent_world.tasks.model import Step, Task

MAX_ANSWER_CHARS = 400
WILDCARD = "*"


@dataclass
class CheckResult:
    score: float
    passed: bool
    components: dict[str, float] = field(default_factory=dict)
    detail: str = ""


# ---- answers ---------------------------------------------------------------------------------
_NUM = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def normalise(value: Any) -> str:
    """Canonical text of a scalar answer: lower case, single spaces, no surrounding
    punctuation; numbers without trailing zeros; booleans as yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return _num_text(float(value))
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, default=str).lower()
    text = " ".join(str(value).lower().split()).strip(" .,;:!?\"'`")
    if text in ("true", "yes"):
        return "yes"
    if text in ("false", "no"):
        return "no"
    try:
        return _num_text(float(text.replace(",", "").lstrip("$")))
    except ValueError:
        return text


def _num_text(x: float) -> str:
    if math.isfinite(x) and x == int(x):
        return str(int(x))
    return f"{x:.6f}".rstrip("0").rstrip(".")


def _numbers(text: str) -> list[float]:
    out = []
    for m in _NUM.findall(text):
        try:
            out.append(float(m.replace(",", "")))
        except ValueError:
            pass
    return out


def _contains(text: str, ref: Any) -> bool:
    """Whether free text states one reference value."""
    if isinstance(ref, bool):
        words = set(re.findall(r"[a-z]+", text))
        return bool(words & ({"yes", "true"} if ref else {"no", "false", "not"}))
    if isinstance(ref, int | float):
        return any(math.isclose(n, float(ref), rel_tol=1e-4, abs_tol=5e-3) for n in _numbers(text))
    want = normalise(ref)
    if not want:
        return False
    return re.search(r"(?<![a-z0-9])" + re.escape(want) + r"(?![a-z0-9])", text) is not None


def answer_matches(answer: Any, reference: Any) -> bool:
    """Whether an attempt's answer gives the reference answer (a scalar or a list of scalars,
    order-insensitive)."""
    if answer is None or (isinstance(answer, str) and not answer.strip()):
        return False
    refs = reference if isinstance(reference, list) else [reference]
    if isinstance(answer, list) and isinstance(reference, list):
        return sorted(map(normalise, answer)) == sorted(map(normalise, reference))
    if normalise(answer) == normalise(reference):
        return True
    text = answer if isinstance(answer, str) else json.dumps(answer, default=str)
    text = " ".join(text.lower().split())
    if len(text) > MAX_ANSWER_CHARS:
        return False
    return all(_contains(text, r) for r in refs)


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
        from agent_world.tasks.scripts import ScriptError, run_verify

        if not task.verify:
            return CheckResult(0.0, False, {"verify": 0.0}, "task has no verification script")
        try:
            score = run_verify(task.verify, initial_db, final_db, answer)
        except ScriptError as exc:
            return CheckResult(0.0, False, {"verify": 0.0}, str(exc))
        return CheckResult(score, score >= 1.0 - 1e-9, {"verify": score},
                           f"verification script scored {score:g}")
    components: dict[str, float] = {}
    notes = []
    if task.reference_answer is not None:
        ok = answer_matches(answer, task.reference_answer)
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
        score = sum(components.values()) / len(components)
    return CheckResult(score, all(v == 1.0 for v in components.values()), components,
                       "; ".join(notes))


def grounded(task: Task, steps: list[Step]) -> bool:
    """Whether the attempt's `steps` include a successful call of a tool of the task's gold
    chain (always true for a task without one)."""
    gold = {c.tool for c in task.chain}
    return not gold or any(s.ok and s.tool and task.real_tool(s.tool) in gold for s in steps)


def check_episode(task: Task, episode: Any, answer: Any,
                  steps: list[Step] | None = None) -> CheckResult:
    """`check_task` on a live episode (its template is the initial state); with the attempt's
    `steps`, an ungrounded answer (see the module docstring) scores 0."""
    result = check_task(task, episode.template, episode.path, answer, logged=True)
    if steps is None:
        return result
    if grounded(task, steps):
        result.components["grounded"] = 1.0
        return result
    tools = ", ".join(sorted({c.tool for c in task.chain}))
    return CheckResult(0.0, False, {**result.components, "grounded": 0.0},
                       f"{result.detail}; not grounded: no successful call of {tools}")


__all__ = ["CheckResult", "answer_matches", "changes_match", "check_episode", "check_task",
           "episode_changes", "grounded", "mask_volatile", "normalise", "state_changes"]
