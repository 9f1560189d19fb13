"""Checking tool tests (`ToolTest`) against a live episode.

Used by the bundled examples' test-suite and by cross-validation of generated environments:
a test is one tool call on a freshly reset episode whose observation must meet the test's
`ToolExpectation`.
"""

from __future__ import annotations

import json
from typing import Any

from agent_world.envs.database import audit_logs, audited_changes
from agent_world.envs.episode import EnvRuntime, Episode, Observation
from agent_world.envs.spec import EnvSpec, RowChange, ToolExpectation, ToolTest

_MAX_SHOWN = 300


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "..."


def check_observation(obs: Observation, expect: ToolExpectation) -> tuple[bool, str]:
    """Whether one observation meets an expectation, and why (not).

    Rules: `error_kind` implies a failing call even when `ok` was left at its default; a
    failing expectation passes on any error of the named kind (or any error without one).
    `equals` compares the whole result, `contains` requires a dict result holding each
    key with an equal value, `min_items` requires a list result of at least that length.
    """
    expect_ok = expect.ok and expect.error_kind is None
    if not expect_ok:
        if obs.ok:
            return False, f"expected an error{f' ({expect.error_kind})' if expect.error_kind else ''}, got result {_show(obs.result)}"
        assert obs.error is not None
        if expect.error_kind is not None and obs.error.kind != expect.error_kind:
            return False, (f"expected error kind {expect.error_kind!r}, got "
                           f"{obs.error.kind!r}: {obs.error.message}")
        if expect.error_contains is not None and _words(expect.error_contains) not in \
                _words(obs.error.message):
            return False, (f"expected the error to mention {expect.error_contains!r}, got "
                           f"{obs.error.kind}: {obs.error.message}")
        return True, f"failed as expected ({obs.error.kind}: {obs.error.message})"
    if not obs.ok:
        assert obs.error is not None
        return False, f"expected success, got {obs.error.kind}: {obs.error.message}"
    result = obs.result
    if expect.pluck is not None and expect.equals is not None:
        if not isinstance(result, list) or not all(isinstance(r, dict) for r in result):
            return False, f"expected a list of objects, got {_show(result)}"
        missing = [r for r in result if expect.pluck not in r]
        if missing:
            return False, f"a result item has no key {expect.pluck!r}: {_show(missing[0])}"
        got = [r[expect.pluck] for r in result]
        if not _same(got, expect.equals):
            return False, f"{expect.pluck} of the results {_show(got)} != expected {_show(expect.equals)}"
    elif expect.equals is not None and not _same(result, expect.equals):
        return False, f"result {_show(result)} != expected {_show(expect.equals)}"
    if expect.contains is not None:
        if not isinstance(result, dict):
            return False, f"expected an object result, got {type(result).__name__}: {_show(result)}"
        for key, want in expect.contains.items():
            if key not in result:
                return False, f"result has no key {key!r} (keys: {sorted(result)})"
            if not _same(result[key], want):
                return False, f"result[{key!r}] is {_show(result[key])}, expected {_show(want)}"
    if expect.min_items is not None:
        if not isinstance(result, list):
            return False, f"expected a list result, got {type(result).__name__}: {_show(result)}"
        if len(result) < expect.min_items:
            return False, f"expected at least {expect.min_items} items, got {len(result)}"
    return True, "ok"


def _words(text: str) -> str:
    return " ".join(str(text).lower().replace("_", " ").split())


def _same(a: Any, b: Any) -> bool:
    """Equal, with numbers compared as numbers (1 == 1.0; floats to 1e-6) and booleans apart
    from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or (isinstance(a, bool) and isinstance(b, bool) and a == b)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def check_changes(episode: Episode, changes: list[RowChange]) -> tuple[bool, str]:
    """Whether the episode's state differs from its reset state by exactly `changes`: the
    number of rows inserted/updated/deleted per table, and the listed rows' values."""
    diff = episode.diff()
    ops = {"insert": "inserted", "update": "updated", "delete": "deleted"}
    tables = set(diff.tables) | {c.table for c in changes}
    # an audit log's entries follow from the records' changes (the engine writes them): a
    # test that does not list them expects exactly one entry per changed field
    listed = {c.table for c in changes}
    for log, entity, fk in audit_logs(episode.spec):
        if log in listed or log not in tables:
            continue
        got = diff.tables.get(entity)
        updated = got.updated if got is not None else []
        want = {(next(iter(u["key"].values())), f) for u in updated
                for f in audited_changes(episode.spec, entity, u["before"], u["after"])}
        logged = diff.tables[log]
        have = {(e.get(fk), e.get("field_name")) for e in logged.inserted}
        # every change of a record is logged, and nothing else (a field set twice in one call
        # is logged twice: the net change is what the diff shows)
        if logged.updated or logged.deleted or not want <= have or \
                not {k for k, _ in have} <= {k for k, _ in want}:
            return False, (f"{log}: {len(logged.inserted)} entries written for "
                           f"{sorted(have, key=str)}, expected one per changed field of "
                           f"{entity}: {sorted(want, key=str)}")
        tables.discard(log)
    for table in sorted(tables):
        got = diff.tables.get(table)
        for op, attr in ops.items():
            want = sum(c.count for c in changes if c.table == table and c.op == op)
            have = len(getattr(got, attr)) if got is not None else 0
            if want != have:
                return False, f"{table}: {have} row(s) {attr}, expected {want}"
    for c in changes:
        got = diff.tables[c.table]
        if c.op == "insert" and c.values:
            if not any(all(k in r and _same(r[k], v) for k, v in c.values.items())
                       for r in got.inserted):
                return False, (f"{c.table}: no inserted row has {_show(c.values)} "
                               f"(inserted: {_show(got.inserted)})")
        elif c.op in ("update", "delete") and c.key is not None:
            rows = got.updated if c.op == "update" else got.deleted
            # an updated row is {"key", "before", "after"}; a deleted one is the row itself
            # (which may have a column named "key")
            keyed = [r for r in rows if all(_same((r["key"] if c.op == "update" else r).get(k),
                                                  v) for k, v in c.key.items())]
            if not keyed:
                return False, f"{c.table}: row {_show(c.key)} was not {ops[c.op]}"
            if c.op == "update" and c.values:
                where = " AND ".join(f'"{k}" = ?' for k in c.key)
                row = episode.query(f'SELECT * FROM "{c.table}" WHERE {where}',
                                    tuple(c.key.values()))
                for k, v in c.values.items():
                    if not row or k not in row[0] or not _same(row[0][k], v):
                        found = row[0].get(k) if row else None
                        return False, (f"{c.table} {_show(c.key)}: {k} is {_show(found)}, "
                                       f"expected {_show(v)}")
    return True, "ok"


def run_tool_test(episode: Episode, test: ToolTest, *, reset: bool = True) -> tuple[bool, str]:
    """Run one tool test on `episode` (reset first unless `reset=False`): (passed, reason).
    A test with expected `changes` also checks the state diff since the reset."""
    if reset:
        episode.reset()
    obs = episode.step(test.tool, test.arguments)
    ok, reason = check_observation(obs, test.expect)
    if ok and test.expect.changes is not None:
        ok, reason = check_changes(episode, test.expect.changes)
    return ok, reason


def verify_spec(spec: EnvSpec, runtime: EnvRuntime | None = None) -> list[str]:
    """Build `spec`'s template and run every tool test on a fresh episode: the failures as
    readable lines (empty when all pass). A spec whose seed rows cannot be inserted raises
    SpecError naming the row. Used before a spec is stored and by the examples' generator."""
    own = runtime is None
    rt = runtime or EnvRuntime()
    try:
        failures = []
        with rt.open(spec, seed=0) as episode:
            for test in spec.tests:
                ok, reason = run_tool_test(episode, test)
                if not ok:
                    failures.append(f"{spec.name}: {test.tool} / {test.name}: {reason}")
        return failures
    finally:
        if own:
            rt.close()


__all__ = ["check_changes", "check_observation", "run_tool_test", "verify_spec"]
