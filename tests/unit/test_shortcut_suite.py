"""The shortcut suite over emitted tasks: trajectories built to cheat, from each task's own gold
chain, scored by the one reward. No shortcut passes a task of the bundled examples or of a mined
environment; the honest replay of the same chain passes, so the suite is not vacuous."""

from __future__ import annotations

from collections import Counter

import pytest

from agent_world.envs import EnvRuntime, load_example
from agent_world.envs.catalog import Catalog
from agent_world.rollout.shortcuts import SHORTCUTS, replay, shortcut_attempts
from agent_world.synthesis.loop import SynthesisConfig, stored_tasks, synthesize_env
from agent_world.tasks.words import source_tools


@pytest.fixture(scope="module")
def runtime():
    with EnvRuntime() as rt:
        yield rt


def _honest(task, spec, runtime) -> float:
    """The gold chain replayed with the reference answer (a sentence around it)."""
    answer = "Done." if task.reference_answer is None else \
        f"The answer is {task.reference_answer}."
    return replay(task, spec, runtime, list(task.chain), answer).reward


def _suite(tasks, spec, runtime) -> tuple[Counter, Counter, list[str]]:
    applies, passes, cheats = Counter(), Counter(), []
    for t in tasks:
        assert _honest(t, spec, runtime) > 0.0, t.instruction
        for r in shortcut_attempts(t, spec, runtime):
            applies[r.name] += 1
            if r.passed:
                passes[r.name] += 1
                cheats.append(f"{r.name}: {t.instruction} ({r.detail}; reference "
                              f"{t.reference_answer!r}, chain {[c.tool for c in t.chain]}, "
                              f"changes {sorted(t.expected_changes)})")
    return applies, passes, cheats


def test_no_shortcut_passes_a_task_of_the_bundled_examples(examples_synthesized, runtime):
    cat, _ = examples_synthesized
    applies: Counter = Counter()
    for name in ("airline", "ecommerce"):
        spec = load_example(name)
        a, _, cheats = _suite(stored_tasks(cat, spec.fingerprint), spec, runtime)
        assert not cheats, cheats
        applies.update(a)
    # every shortcut was tried on some task (the suite measures something)
    assert set(applies) == set(SHORTCUTS), applies


def test_no_shortcut_passes_a_task_of_a_mined_environment(built, tmp_path, runtime):
    # a mined service whose own tools write records (a clinic books and cancels)
    spec = built["clinic-booking-openapi"]
    with Catalog.open(tmp_path) as cat:
        cat.put_env(spec, stage="built")
        synthesize_env(spec, SynthesisConfig(per_env=8), cat, runtime, run_id="suite")
        tasks = stored_tasks(cat, spec.fingerprint)
    assert tasks
    applies, _, cheats = _suite(tasks, spec, runtime)
    assert not cheats, cheats
    assert applies["wrong_target_write"] and applies["generic_sentence"]


def test_every_task_of_a_mined_service_calls_one_of_its_tools(built, tmp_path, runtime):
    """The time server's tasks had been look-ups of the time zones the arena adds over its
    database; each now converts or reads a time, and the walks that only looked up were
    turned away by `serves_source`, in the ledger."""
    spec = built["time"]
    served = source_tools(spec)
    assert served == {"get_current_time", "convert_time"}
    with Catalog.open(tmp_path) as cat:
        cat.put_env(spec, stage="built")
        synthesize_env(spec, SynthesisConfig(per_env=6), cat, runtime, run_id="served")
        tasks = stored_tasks(cat, spec.fingerprint)
        refused = [e for e in cat.ledger("synthesize", run_id="served")
                   if e.payload.get("gate") == "serves_source"]
    assert tasks and all({s.tool for s in t.chain} & served for t in tasks)
    assert refused and "calls none of the service's tools" in refused[0].reason
