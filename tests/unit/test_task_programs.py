"""Programmatic tasks that write, offline phrasing, and synthesis on a built mined environment.

A bulk task ("cancel every pending order of user 1") is a solution script that lists, filters
and writes in a loop, and a verification script that recomputes the targets from the initial
database with SQL; every trust gate applies to it.
"""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from agent_world.envs import EnvRuntime
from agent_world.envs.catalog import Catalog
from agent_world.envs.spec import EnvSpec
from agent_world.synthesis import action_phrases, phrasing, phrasing_values
from agent_world.synthesis.gates import run_gates
from agent_world.synthesis.loop import SynthesisConfig, stored_tasks, synthesize_env
from agent_world.synthesis.react_verifier import verify_task
from agent_world.synthesis.solution_gates import gate_known_wrong, gold_run
from agent_world.synthesis.synthesizer import build_candidate
from agent_world.tasks.check import check_task
from agent_world.tasks.difficulty import Recipe
from agent_world.tasks.model import Task
from agent_world.tasks.programs import bulk_wrong_sources
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.toolgraph import build_tool_graph
from agent_world.tasks.walks import Plan, PlanStep
from agent_world.tasks.words import entity
from tests.unit.test_task_synthesis import _shop


@pytest.fixture(scope="module")
def runtime():
    with EnvRuntime() as rt:
        yield rt


@pytest.fixture(scope="module")
def shop() -> EnvSpec:
    return _shop()


@pytest.fixture(scope="module")
def bulk_task(shop, runtime) -> Task:
    """A programmatic task that writes, grown from a walk that starts at the order list."""
    graph = build_tool_graph(shop, runtime=runtime)
    sampler = ValueSampler(shop)
    for i in range(30):
        task = build_candidate(shop, graph, runtime, random.Random(i), Recipe(1, False, False),
                               "programmatic", seed=0, sampler=sampler, start="list_orders",
                               bulk_share=1.0)
        # one that asks for the count: cancelling a shipped order is refused, so without the
        # count "condition ignored" would end in the gold's state and be no wrong solution
        if isinstance(task, Task) and (task.origin.get("bulk") or {}).get("answer") == "count":
            return task
    raise AssertionError("no bulk task from the order list")


def _final_after(runtime, spec, task: Task, source: str, tmp: Path) -> tuple[Path, Path, object]:
    """Run a solution source in a fresh episode; copies of (initial, final) and the answer."""
    ep = runtime.open(spec, seed=task.seed)
    try:
        from agent_world.tasks.scripts import run_solution

        def call(tool, arguments):
            obs = ep.step(tool, arguments)
            return {"ok": True, "result": obs.result} if obs.ok else \
                {"ok": False, "kind": obs.error.kind, "message": obs.error.message}

        answer = run_solution(source, call)
        initial, final = tmp / "initial.sqlite", tmp / "final.sqlite"
        shutil.copyfile(ep.template, initial)
        shutil.copyfile(ep.path, final)
        return initial, final, answer
    finally:
        ep.close()


def test_bulk_task_writes_in_a_loop_and_verifies_by_recomputing(shop, runtime, bulk_task,
                                                                 tmp_path):
    bulk = bulk_task.origin["bulk"]
    assert bulk["write"] == "cancel_order" and bulk["where"] == {"status": "pending"}
    user = bulk["sql_where"]["user_id"]
    assert bulk["sql_where"] == {"user_id": user, "status": "pending"}
    assert bulk["sets"] == {"status": "cancelled"}
    # solution: tool calls plus logic; verification: SQL over the initial state, no fixed ids
    assert "for item in targets:" in bulk_task.solution
    assert "SELECT" in bulk_task.verify and f"O-{user}0" not in bulk_task.verify
    assert [c.tool for c in bulk_task.chain] == ["list_orders", "cancel_order", "cancel_order"]
    assert bulk_task.difficulty.aggregation and bulk_task.difficulty.chain_length == 2
    assert "cancel_order" not in bulk_task.instruction and "list_orders" not in \
        bulk_task.instruction
    # every trust gate applies and passes
    gates = run_gates(bulk_task, shop, runtime)
    assert [(g.name, g.passed) for g in gates] == [
        ("serves_source", True), ("artefacts", True), ("answer_from_state", True),
        ("solvable", True),
        ("initial_state_fails", True), ("gold_replay", True), ("known_wrong", True),
        ("no_shortcut", True), ("natural", True)]
    assert "3 wrong solutions fail" in gates[-3].detail
    assert gates[-1].detail.startswith("no judge model")  # offline
    # the expectation is recomputed from initial_db: one more pending order of the user in the
    # initial state makes the gold's final state insufficient
    initial, final, answer = _final_after(runtime, shop, bulk_task, bulk_task.solution, tmp_path)
    assert check_task(bulk_task, initial, final, answer).passed
    grown = tmp_path / "grown.sqlite"
    shutil.copyfile(initial, grown)
    with sqlite3.connect(grown) as conn:
        conn.execute(f"UPDATE orders SET status = 'pending' WHERE order_id = 'O-{user}1'")
    assert not check_task(bulk_task, grown, final, answer).passed
    with sqlite3.connect(final) as conn:  # ... and a final state that cancels it too passes
        conn.execute(f"UPDATE orders SET status = 'cancelled' WHERE order_id = 'O-{user}1'")
    n = 3 if bulk["answer"] == "count" else answer
    assert check_task(bulk_task, grown, final, n).passed


def test_bulk_known_wrong_solutions_fail_and_a_lax_check_is_rejected(shop, runtime, bulk_task):
    for name, source in bulk_wrong_sources(Plan.model_validate(bulk_task.origin["plan"]),
                                           bulk_task.origin["bulk"]):
        passed, _, _, detail = gold_run(bulk_task, shop, runtime, solution=source)
        assert not passed, (name, detail)
    # a check that only asks for "some pending order cancelled" lets a wrong solution pass
    # ("condition ignored" or "first target only", whichever is tried first)
    lax = bulk_task.model_copy(update={"verify": (
        "def verify(initial_db, final_db, answer):\n"
        "    return final_db.count('orders', \"status = 'cancelled'\") > 0\n")})
    gate = gate_known_wrong(lax, shop, runtime)
    assert not gate.passed and "a known-wrong solution passes" in gate.detail


def test_baseline_verifier_solves_a_bulk_request(shop, runtime, bulk_task):
    verdict = verify_task(bulk_task, shop, runtime, runs=3)
    assert verdict.kept, [t.steps for t in verdict.trajectories]
    tools = [s.tool for s in verdict.trajectories[0].steps]
    assert tools.count("cancel_order") == 2 and tools[0] == "list_orders"


def test_llm_writer_words_bulk_tasks_and_falls_back(shop, runtime):
    from tests.unit.test_task_synthesis import _Writer

    graph = build_tool_graph(shop, runtime=runtime)
    sampler = ValueSampler(shop)
    for model, expect in ((_Writer(), "_Writer"), (_Writer(name_a_tool=True), "offline-fallback")):
        task = None
        for i in range(30):
            cand = build_candidate(shop, graph, runtime, random.Random(i),
                                   Recipe(1, False, False), "programmatic", seed=0,
                                   sampler=sampler, start="list_orders", bulk_share=1.0,
                                   model=model)
            if isinstance(cand, Task) and cand.origin.get("bulk"):
                task = cand
                break
        assert task is not None and task.origin["writer"] == expect
        assert "'pending'" in task.instruction or "pending" in task.instruction
        assert "cancel_order" not in task.instruction and "find_user" not in task.instruction
        if expect != "offline-fallback":
            assert task.instruction.startswith("For user 1") or \
                task.instruction.startswith("For user")
            assert task.rubric == ["states the value"]


def test_offline_phrasing_from_entity_and_field_names(shop):
    assert entity("list_holds") == "hold"
    assert entity("listPatientAppointments") == "patient appointment"
    assert entity("count_loans_by_status") == "loan"
    # a service's prefix is no part of the thing ("that create branch's checkout"), and a
    # name that says how names no thing ("the with mile's miles balance")
    assert entity("git_create_branch") == "branch"
    assert entity("jira_get_issue") == "issue"
    assert entity("upgrade_with_miles") == "record"
    assert phrasing_values.noun("patientId") == "patient"
    rng = random.Random(0)
    assert phrasing.ask_field("created_at", rng).startswith(("When", "What is the created",
                                                               "Tell me when"))
    assert "active" in phrasing.ask_field("is_active", rng)
    story = EnvSpec.from_dict({**shop.model_dump(mode="json"), "tools": [
        {**t.model_dump(mode="json"), "description": d} for t, d in zip(shop.tools, [
            "As a clerk, I want to find users by email so that I can help them.",
            "Members can list their orders at any time.",
            "Returns the full details of one order.",
            "Cancel a pending order.", "A lucky number.", "The clock."], strict=True)]})
    assert action_phrases.action_phrase(story, "find_user") == "find users by email"
    # a qualifier of the tool ("at any time", "when ...", "before ...") is no part of a request
    assert action_phrases.action_phrase(story, "list_orders") == "list their orders"
    assert action_phrases.action_phrase(story, "get_order") == "get the full details of one order"
    # one walk, many phrasings; none names a tool
    plan = Plan(steps=[PlanStep(tool="find_user", given={"email": "ann@example.com"}),
                       PlanStep(tool="list_orders", bound={"user_id": {"step": 0,
                                                                       "field": "user_id"}},
                                select={"order_id": "O-12"})])
    answer = {"kind": "field", "step": 1, "field": "total"}
    texts = {phrasing.instruction(shop, plan, answer, random.Random(i)) for i in range(30)}
    assert len(texts) >= 20
    names = {t.name for t in shop.tools}
    for text in texts:
        assert "ann@example.com" in text and "O-12" in text
        assert not any(n in text for n in names), text


# ---- a built mined environment ------------------------------------------------------------
@pytest.fixture(scope="module")
def mined_home(tmp_path_factory):
    """The bundled book-lending requirements document, mined and built."""
    from agent_world.graphs import mine_graph
    from agent_world.graphs.build_graph import build_environments
    from agent_world.graphs.runner import invoke

    home = tmp_path_factory.mktemp("mined")
    source = Path(phrasing.__file__).parents[1] / "data" / "sources" / "book_lending_prd.md"
    invoke(mine_graph.build_graph(), {"sources": [f"file:{source}"], "iterations": 3,
                                      "seed": 0}, home=home)
    assert build_environments([], home=home) == ["book_lending_prd"]
    return home


def test_synthesis_on_a_built_mined_environment(mined_home, runtime):
    """Tasks of both kinds, a programmatic one that writes among them, each re-checked."""
    cat = Catalog.open(mined_home)
    try:
        spec = cat.get_env("book_lending_prd")
        # 8 tasks: the last programmatic slot waits for a write only until late in the budget,
        # and with 5 the draw may end without one
        stats = synthesize_env(spec, SynthesisConfig(per_env=8, levels=[2, 3, 4]), cat, runtime,
                               run_id="mined")
        tasks = stored_tasks(cat, spec.fingerprint)
    finally:
        cat.close()
    assert stats["kept"] == 8 and len(tasks) == 8, stats
    kinds = Counter(t.kind for t in tasks)
    assert kinds["graph"] >= 1 and kinds["programmatic"] >= 2, kinds
    assert stats["writing_programs"] >= 1 and any(t.origin.get("bulk") for t in tasks)
    names = {t.name for t in spec.tools}
    for t in tasks:
        assert t.pass_rate is not None  # offline, the baseline's runs are a measurement
        passed, _, _, detail = gold_run(t, spec, runtime)
        assert passed, (t.instruction, detail)
        ep = runtime.open(spec, seed=t.seed)
        assert not check_task(t, ep.template, ep.path, None).passed
        ep.close()
        assert not any(re_word(n, t.instruction) for n in names), t.instruction


def re_word(name: str, text: str) -> bool:
    import re

    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def test_a_field_that_only_holds_long_text_gets_no_short_stand_in(notes_spec):
    """A diff or a page body is never a value a request sets; a test's short stand-in for
    it ("set the diff to 'one'") is not offered either. A field with sayable values is."""
    spec = EnvSpec.from_json(notes_spec.to_json())
    for row in spec.rows["notes"]:
        row["body"] = "@@ -1 +1 @@\n-old line\n+new line\n"
    sampler = ValueSampler(spec)
    sampler.tested[("edit_note", "body")] = ["one"]
    assert sampler.candidates("edit_note", "body", {"type": "string"}) == []
    sampler.tested[("edit_note", "ref")] = ["N9"]
    assert "N9" in sampler.candidates("edit_note", "ref", {"type": "string"})


def test_an_edit_of_a_person_sets_their_details_not_their_name(notes_spec):
    """"Edit user 1: set their name to <another person's name>" is no request people make
    while the record has other fields to edit; a record without a person's contact
    details (a branch) may still be renamed."""
    raw = json.loads(notes_spec.to_json())
    users = next(t for t in raw["tables"] if t["name"] == "users")
    users["columns"].append({"name": "email", "type": "text"})
    for i, row in enumerate(raw["rows"]["users"]):
        row["email"] = f"u{i}@example.com"
    raw["tools"].append({
        "name": "update_user", "description": "Edit a user: set the given fields.",
        "mutates": True,
        "parameters": {"type": "object", "properties": {
            "user_id": {"type": "integer"}, "name": {"type": "string"},
            "email": {"type": "string"}}, "required": ["user_id"],
            "additionalProperties": False},
        "source": "def update_user(ctx, user_id, name=None, email=None):\n    return None\n"})
    spec = EnvSpec.from_dict(raw)
    sampler = ValueSampler(spec)
    picked = {next(k for k in sampler.edit_values("update_user", {"user_id": 1},
                                                  random.Random(i)) if k != "user_id")
              for i in range(20)}
    assert picked == {"email"}
    users["columns"].pop()  # no contact details: a name like any other field
    for row in raw["rows"]["users"]:
        row.pop("email")
    raw["tools"][-1]["parameters"]["properties"]["email"] = {"type": "string"}
    sampler = ValueSampler(EnvSpec.from_dict(raw))
    assert not sampler._persons_name("update_user", "name")
