"""Checking tool tests (`ToolTest`) against a live episode.

Used by the bundled examples' test-suite and by cross-validation of generated environments:
a test is one tool call on a freshly reset episode whose observation must meet the test's
`ToolExpectation`.
"""

from __future__ import annotations

import json
from typing import Any

from agent_world.envs.episode import EnvRuntime, Episode, Observation
from agent_world.envs.spec import EnvSpec, ToolExpectation, ToolTest

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
        return True, f"failed as expected ({obs.error.kind}: {obs.error.message})"
    if not obs.ok:
        assert obs.error is not None
        return False, f"expected success, got {obs.error.kind}: {obs.error.message}"
    result = obs.result
    if expect.equals is not None and result != expect.equals:
        return False, f"result {_show(result)} != expected {_show(expect.equals)}"
    if expect.contains is not None:
        if not isinstance(result, dict):
            return False, f"expected an object result, got {type(result).__name__}: {_show(result)}"
        for key, want in expect.contains.items():
            if key not in result:
                return False, f"result has no key {key!r} (keys: {sorted(result)})"
            if result[key] != want:
                return False, f"result[{key!r}] is {_show(result[key])}, expected {_show(want)}"
    if expect.min_items is not None:
        if not isinstance(result, list):
            return False, f"expected a list result, got {type(result).__name__}: {_show(result)}"
        if len(result) < expect.min_items:
            return False, f"expected at least {expect.min_items} items, got {len(result)}"
    return True, "ok"


def run_tool_test(episode: Episode, test: ToolTest, *, reset: bool = True) -> tuple[bool, str]:
    """Run one tool test on `episode` (reset first unless `reset=False`): (passed, reason)."""
    if reset:
        episode.reset()
    obs = episode.step(test.tool, test.arguments)
    return check_observation(obs, test.expect)


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


__all__ = ["check_observation", "run_tool_test", "verify_spec"]
