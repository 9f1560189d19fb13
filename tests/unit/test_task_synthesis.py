"""Task synthesis: tool graph, walks, trust gates, verifier threshold, obscured names, dedup,
the synthesize graph (resume) and a re-check of every emitted task."""

from __future__ import annotations

import random
from typing import Any

import networkx as nx
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from agent_world.envs import EnvRuntime, load_example
from agent_world.envs.catalog import Catalog
from agent_world.envs.spec import EnvSpec, ToolSpec, ToolTest
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.rollout.baseline_agent import BaselineChatModel
from agent_world.synthesis.gates import gate_initial_state
from agent_world.synthesis.loop import SynthesisConfig, stored_tasks, synthesize_env
from agent_world.synthesis.react_verifier import verify_task
from agent_world.synthesis.solution_gates import gate_gold_replay, gate_known_wrong, gold_run
from agent_world.synthesis.synthesizer import build_candidate
from agent_world.tasks.check import check_task
from agent_world.tasks.difficulty import Recipe, level_of, level_quotas
from agent_world.tasks.model import Task
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.toolgraph import (
    binding_strength,
    build_tool_graph,
    observe_outputs,
    one_argument_per_field,
    record_tables,
)
from agent_world.tasks.truth import ground_truth
from agent_world.tasks.walks import Plan, PlanStep, random_walk
from tests.unit.task_helpers import graph_task

# ---- a hand-made environment ------------------------------------------------------------------
_TOOLS = {
    "find_user": ("Look up a user by email: id, name and country.", False,
                  {"email": {"type": "string"}}, ["email"],
                  "def find_user(ctx, email):\n"
                  "    row = ctx.one('SELECT user_id, name, country FROM users WHERE email = ?',"
                  " (email,))\n"
                  "    if row is None:\n        raise ToolError('no such user')\n    return row\n"),
    "list_orders": ("A user's orders with status and total.", False,
                    {"user_id": {"type": "integer"}}, ["user_id"],
                    "def list_orders(ctx, user_id):\n"
                    "    return ctx.query('SELECT order_id, status, total FROM orders "
                    "WHERE user_id = ? ORDER BY order_id', (user_id,))\n"),
    "get_order": ("Full details of one order.", False, {"order_id": {"type": "string"}},
                  ["order_id"],
                  "def get_order(ctx, order_id):\n"
                  "    row = ctx.one('SELECT * FROM orders WHERE order_id = ?', (order_id,))\n"
                  "    if row is None:\n        raise ToolError('no such order')\n    return row\n"),
    "cancel_order": ("Cancel a pending order.", True, {"order_id": {"type": "string"}},
                     ["order_id"],
                     "def cancel_order(ctx, order_id):\n"
                     "    row = ctx.one('SELECT status FROM orders WHERE order_id = ?', "
                     "(order_id,))\n"
                     "    if row is None or row['status'] != 'pending':\n"
                     "        raise ToolError('only pending orders can be cancelled')\n"
                     "    ctx.execute(\"UPDATE orders SET status = 'cancelled' WHERE order_id = ?"
                     "\", (order_id,))\n    return {'order_id': order_id, 'status': 'cancelled'}\n"),
    "lucky_number": ("A lucky number for a user.", False, {"user_id": {"type": "integer"}},
                     ["user_id"],
                     "def lucky_number(ctx, user_id):\n    import os\n"
                     "    return {'user_id': user_id, 'lucky': int.from_bytes(os.urandom(4))}\n"),
    "server_time": ("The server's clock.", False, {}, [],
                    "def server_time(ctx):\n    return {'now': ctx.now()}\n"),
}


def _shop() -> EnvSpec:
    users = [{"user_id": i, "name": n, "email": f"{n.lower()}@example.com", "country": "NL"}
             for i, n in enumerate(["Ann", "Bob", "Cem", "Dia"], start=1)]
    orders = [{"order_id": f"O-{u}{k}", "user_id": u, "status": s, "total": 10.0 * u + k}
              for u in range(1, 5) for k, s in enumerate(["pending", "shipped", "pending"])]
    tools, tests = [], []
    for name, (desc, mutates, props, req, src) in _TOOLS.items():
        tools.append({"name": name, "description": desc, "mutates": mutates, "source": src,
                      "parameters": {"type": "object", "properties": props, "required": req}})
    tests = [{"name": "u", "tool": "find_user", "arguments": {"email": "ann@example.com"}},
             {"name": "l", "tool": "list_orders", "arguments": {"user_id": 1}},
             {"name": "g", "tool": "get_order", "arguments": {"order_id": "O-10"}},
             {"name": "c", "tool": "cancel_order", "arguments": {"order_id": "O-10"}},
             {"name": "n", "tool": "lucky_number", "arguments": {"user_id": 1}},
             {"name": "t", "tool": "server_time", "arguments": {}}]
    return EnvSpec.from_dict({
        "name": "shop", "theme": {"name": "Shop", "taxonomy": {"l3": "shop"}},
        "tables": [
            {"name": "users", "columns": [
                {"name": "user_id", "type": "integer", "primary_key": True},
                {"name": "name", "type": "text"}, {"name": "email", "type": "text"},
                {"name": "country", "type": "text"}]},
            {"name": "orders", "columns": [
                {"name": "order_id", "type": "text", "primary_key": True},
                {"name": "user_id", "type": "integer", "foreign_key": "users.user_id"},
                {"name": "status", "type": "text"}, {"name": "total", "type": "real"}]}],
        "rows": {"users": users, "orders": orders}, "tools": tools, "tests": tests})


@pytest.fixture(scope="module")
def shop() -> EnvSpec:
    return _shop()


@pytest.fixture(scope="module")
def runtime():
    with EnvRuntime() as rt:
        yield rt


_task = graph_task


# ---- graph and walks --------------------------------------------------------------------------
def test_graph_edges_follow_outputs_to_arguments(shop, runtime):
    outputs = observe_outputs(shop, runtime)
    assert outputs["list_orders"]["returns"] == "list"
    assert {"order_id", "status", "total"} <= set(outputs["list_orders"]["fields"])
    g = build_tool_graph(shop, outputs)
    assert g.has_edge("find_user", "list_orders")
    assert g["find_user"]["list_orders"]["bindings"][0]["field"] == "user_id"
    assert g.has_edge("list_orders", "get_order") and g.has_edge("list_orders", "cancel_order")
    assert not g.has_edge("find_user", "get_order")  # no output feeds order_id
    assert g.in_degree("server_time") == 0 and g.out_degree("server_time") == 0
    assert g["get_order"]["cancel_order"]["weight"] == 1.0


def test_a_prefix_that_names_a_table_wants_that_tables_value():
    """`clinician_location_id` is no slot's `location_id`; `repo_path` (and a role's
    `from_repository_path`) is a repository's path, not a changed file's; the rows a query
    returns give no `query_id`."""
    tables = {"slots": {"id", "location_id", "starts_at", "status"},
              "locations": {"id", "name", "address"},
              "clinicians": {"id", "full_name", "email"},
              "clinician_locations": {"id", "clinician_id", "location_id"},
              "appointments": {"id", "clinician_id", "location_id", "reason"},
              "repositories": {"id", "path", "created_at", "updated_at"},
              "file_changes": {"id", "path", "additions", "deletions"},
              "queries": {"id", "content", "created_at"},
              "customers": {"id", "name", "email"}}
    string, integer = {"type": "string"}, {"type": "integer"}

    def strength(tool, produced, field, param, schema):
        info = {"types": ["integer" if schema is integer else "string"], "samples": []}
        return binding_strength(field, info, ToolSpec(name=tool, description="x",
                                                      source=f"def {tool}(ctx):\n    pass\n"),
                                param, schema, [], tables, produced)

    slot = tables["slots"]
    assert strength("get_slot", slot, "location_id", "clinician_location_id", integer) == 0
    assert strength("get_slot", slot, "location_id", "pickup_location_id", integer) == 0.8
    assert strength("get_slot", slot, "id", "slot_id", integer) == 0.6
    # a link table's two keys on an appointment make no clinician location of it
    appt = {"id", "clinician_id", "location_id", "reason"}
    assert "clinician_locations" not in record_tables(appt, tables)
    assert strength("get_appointment", appt, "id", "clinician_location_id", integer) == 0
    change = tables["file_changes"]
    assert strength("get_file_change", change, "path", "repo_path", string) == 0
    assert strength("get_repository", tables["repositories"], "path", "repo_path", string) == 0.8
    # a role before the table changes nothing: `from_repository_path` is a repository's path
    # (HubSpot's from_object_type was fed a property's type)
    assert strength("get_file_change", change, "path", "from_repository_path", string) == 0
    assert strength("get_repository", tables["repositories"], "path", "from_repository_path",
                    string) == 0.8
    assert strength("get_slot", slot, "location_id", "from_location_id", integer) == 0.8
    rows = {"id", "name", "email"}  # what `read_query` returned: customers
    assert strength("read_query", rows, "id", "query_id", integer) == 0
    assert strength("read_query", rows, "id", "query", string) == 0
    # lookalike tables (the same columns): the tool's name says whose records it returns
    # (a Google Calendar color's id fed get_calendar(calendar_id=...))
    tables["calendars"] = tables["colors"] = {"id", "name", "background", "foreground"}
    color = tables["colors"]
    assert strength("get_color", color, "id", "calendar_id", integer) == 0
    assert strength("get_calendar", color, "id", "calendar_id", integer) == 0.6
    # ... also where the first of the tie is the other one and their own columns are few
    tables["audits"] = tables["resource_histories"] = {"id", "url", "created_at"}
    history = tables["resource_histories"]
    assert strength("get_resource_history", history, "id", "audit_id", integer) == 0
    assert strength("get_resource_history", history, "id", "resource_history_id",
                    integer) == 0.6
    # columns the returned record's own table has too are no nested record: a Tailwind
    # utility's id is no doc's ("the tailwind doc of that tailwind utility")
    tables["tailwind_utilities"] = {"id", "category", "property", "name", "created_at"}
    tables["tailwind_docs"] = {"id", "category", "name", "created_at"}
    utility = tables["tailwind_utilities"]
    assert record_tables(utility, tables, "get_tailwind_utilities") == {"tailwind_utilities"}
    assert strength("get_tailwind_utilities", utility, "id", "tailwind_doc_id", integer) == 0
    # ... while a record with another's own columns beside its own still has it nested
    tables["clinicians"] = {"id", "name", "specialty"}
    visit = {"id", "clinician_id", "location_id", "reason", "name", "specialty"}
    assert "clinicians" in record_tables(visit, tables)
    # a thing no table holds is none of the producer's: a location's name is no clinician's
    # full name nor a font's name, a Jira path no attachment's file path; a role or the
    # producer's own kind keeps it (a product's price is an item's unit price)
    loc = {"id", "name", "timezone"}
    assert strength("get_location", loc, "name", "full_name", string) == 0
    assert strength("get_location", loc, "name", "font_name", string) == 0
    assert strength("jira_get", {"id", "path"}, "path", "file_path", string) == 0
    assert strength("get_font", {"id", "name"}, "name", "font_name", string) == 0.8
    assert strength("get_product", {"id", "price"}, "price", "unit_price", integer) == 0.8
    assert strength("get_loan", {"id", "branch_id"}, "branch_id", "pickup_branch_id",
                    integer) == 0.8


def test_one_field_feeds_one_argument():
    """The current time's zone is a conversion's source, not also its target."""
    bindings = [{"field": "timezone", "param": "source_timezone", "required": True,
                 "strength": 1.0},
                {"field": "timezone", "param": "target_timezone", "required": True,
                 "strength": 1.0},
                {"field": "time", "param": "time", "required": True, "strength": 1.0}]
    kept = one_argument_per_field(bindings)
    assert [b["param"] for b in kept] == ["source_timezone", "time"]


def test_walks_follow_edge_weights(shop, runtime):
    g = nx.DiGraph()
    g.add_nodes_from(t.name for t in shop.tools)
    for dst, w in (("list_orders", 0.75), ("lucky_number", 0.25)):
        g.add_edge("find_user", dst, weight=w, bindings=[
            {"field": "user_id", "param": "user_id", "required": True, "strength": w}])
    ep = runtime.open(shop)
    counts = {"list_orders": 0, "lucky_number": 0}
    sampler = ValueSampler(shop)
    for i in range(300):
        plan = random_walk(shop, g, ep, random.Random(i), 2, start="find_user", sampler=sampler)
        counts[plan.steps[1].tool] += 1
    ep.close()
    share = counts["list_orders"] / 300
    assert 0.67 < share < 0.83, counts  # expected 0.75; 3 sigma is about 0.075


def test_difficulty_levels_and_quotas():
    """Levels count reasoning steps; opaque names and distractors do not raise a level (they
    used to: every level-3 task was a one- or two-call chain behind opaque names)."""
    assert level_of(1) == 1 and level_of(3) == 3 and level_of(2, obscured=True) == 2
    assert level_of(1, distractors=9, obscured=True) == 1
    assert level_of(5, branching=2, aggregation=True, distractors=9, obscured=True) == 5
    assert level_of(4, distinct_tools=3) == 4 and level_of(5, distinct_tools=2) == 3
    assert level_of(4, distinct_tools=3, condition=True, aggregation=True) == 5
    assert level_quotas(10, [1, 2, 3]) == {1: 4, 2: 3, 3: 3}


# ---- trust gates --------------------------------------------------------------------------------
def test_gate_initial_state_rejects_a_free_reward(shop, runtime):
    plan = Plan(steps=[PlanStep(tool="find_user", given={"email": "bob@example.com"})])
    good = _task(shop, runtime, plan, {"kind": "field", "step": 0, "field": "name"})
    assert gate_initial_state(good, shop, runtime).passed
    free = _task(shop, runtime, plan, {"kind": "none"})  # read-only, nothing to answer
    result = gate_initial_state(free, shop, runtime)
    assert not result.passed and "initial state passes" in result.detail


def test_gate_gold_replay_rejects_wrong_and_nondeterministic_truth(shop, runtime):
    plan = Plan(steps=[PlanStep(tool="find_user", given={"email": "bob@example.com"}),
                       PlanStep(tool="list_orders", bound={"user_id": {"step": 0,
                                                                       "field": "user_id"}})])
    task = _task(shop, runtime, plan, {"kind": "count", "step": 1, "where": {"status": "pending"}})
    assert task.reference_answer == 2 and gate_gold_replay(task, shop, runtime).passed
    wrong = task.model_copy(update={"reference_answer": 3})
    assert not gate_gold_replay(wrong, shop, runtime).passed
    lucky = Plan(steps=[PlanStep(tool="lucky_number", given={"user_id": 1})])
    truth = ground_truth(shop, runtime, lucky, {"kind": "field", "step": 0, "field": "lucky"}, 0)
    assert isinstance(truth, str)  # two executions disagree already at synthesis
    nondet = Task(kind="graph", env_name="shop", env_fingerprint=shop.fingerprint,
                  instruction="lucky?", chain=[{"tool": "lucky_number",
                                                "arguments": {"user_id": 1}}],
                  reference_answer=1, origin={"plan": lucky.model_dump(mode="json"),
                                              "answer": {"kind": "field", "step": 0,
                                                         "field": "lucky"}})
    result = gate_gold_replay(nondet, shop, runtime)
    assert not result.passed


def test_gate_known_wrong_rejects_an_answer_any_input_gives(shop, runtime):
    plan = Plan(steps=[PlanStep(tool="find_user", given={"email": "bob@example.com"})])
    same_for_all = _task(shop, runtime, plan, {"kind": "field", "step": 0, "field": "country"})
    result = gate_known_wrong(same_for_all, shop, runtime)
    assert not result.passed and "perturbed" in result.detail
    specific = _task(shop, runtime, plan, {"kind": "field", "step": 0, "field": "name"})
    assert gate_known_wrong(specific, shop, runtime).passed


def test_write_task_state_check_and_read_only_variant_fails(shop, runtime):
    plan = Plan(steps=[PlanStep(tool="get_order", given={"order_id": "O-22"}),
                       PlanStep(tool="cancel_order", bound={"order_id": {"step": 0,
                                                                         "field": "order_id"}})])
    task = _task(shop, runtime, plan, {"kind": "none"})
    assert task.expected_changes["orders"]["updated"][0]["after"] == {"status": "cancelled"}
    assert gate_initial_state(task, shop, runtime).passed
    assert gate_gold_replay(task, shop, runtime).passed
    result = gate_known_wrong(task, shop, runtime)
    assert result.passed and "read-only" in result.detail


def test_known_wrong_fails_a_write_a_later_write_undoes():
    """A seat chosen for passenger 2, then an upgrade that releases every seat: the same calls
    with the seat chosen for passenger 1 end alike, so the task cannot tell the two apart."""
    spec = load_example("airline")
    with EnvRuntime() as rt:
        booking = rt.open(spec, seed=0)
        try:
            rid = next(r["reservation_id"] for r in booking.step(
                "list_customer_reservations", {"customer_id": 1}).result
                if r["passenger_count"] == 2 and r["status"] == "confirmed")
            pax = booking.step("get_reservation", {"reservation_id": rid}).result["passengers"]
        finally:
            booking.close()
        seat = {"reservation_id": rid, "passenger_id": pax[1]["passenger_id"], "seat": "14C"}
        undone = Plan(steps=[PlanStep(tool="assign_seat", given=seat),
                             PlanStep(tool="upgrade_with_miles", given={"reservation_id": rid})])
        result = gate_known_wrong(_task(spec, rt, undone, {"kind": "none"}), spec, rt)
        assert not result.passed and "aimed at another record" in result.detail, result.detail
        kept = Plan(steps=[PlanStep(tool="upgrade_with_miles", given={"reservation_id": rid}),
                           PlanStep(tool="assign_seat", given={**seat, "seat": "2C"})])
        result = gate_known_wrong(_task(spec, rt, kept, {"kind": "none"}), spec, rt)
        assert result.passed and "aimed at another record" in result.detail, result.detail


# ---- verifier -------------------------------------------------------------------------------
class _Shrug(BaseChatModel):
    """An agent that answers at once without looking anything up."""

    @property
    def _llm_type(self) -> str:
        return "shrug"

    def bind_tools(self, tools: Any, **kwargs: Any) -> _Shrug:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage("no idea"))])


def test_verifier_majority_threshold(shop, runtime):
    plan = Plan(steps=[PlanStep(tool="find_user", given={"email": "cem@example.com"})])
    task = _task(shop, runtime, plan, {"kind": "field", "step": 0, "field": "name"},
                 instruction="The email is cem@example.com. Look up the user by email. "
                             "What is the name?")
    models = lambda i: BaselineChatModel(seed=i) if i < 2 else _Shrug()  # noqa: E731
    verdict = verify_task(task, shop, runtime, runs=5, threshold=0.5, models=models)
    assert (verdict.passes, verdict.ran, verdict.kept) == (2, 5, False)
    assert verify_task(task, shop, runtime, runs=5, threshold=0.3, models=models).kept
    all_good = verify_task(task, shop, runtime, runs=5, threshold=0.5)
    assert all_good.kept and all_good.pass_rate == 1.0


# ---- obscured names, dedup -----------------------------------------------------------------
def test_obscured_names_consistent_between_instruction_view_and_check(runtime):
    spec = load_example("airline")
    g = build_tool_graph(spec, runtime=runtime)
    sampler = ValueSampler(spec)
    task = None
    for i in range(40):
        cand = build_candidate(spec, g, runtime, random.Random(i), Recipe(2, True, False),
                               "graph", seed=i, sampler=sampler)
        if isinstance(cand, Task) and cand.reference_answer is not None:
            task = cand
            break
    assert task is not None
    assert task.difficulty.obscured and all(k.startswith("tool_") for k in task.tool_view)
    real = {t.name for t in spec.tools}
    assert set(task.tool_view.values()) <= real
    assert {c.tool for c in task.chain} <= set(task.tool_view.values())
    for name in real | set(task.tool_view):
        assert name not in task.instruction
    passed, answer, _, detail = gold_run(task, spec, runtime)
    assert passed, detail
    from agent_world.rollout.react_attempt import run_attempt

    traj = run_attempt(task, BaselineChatModel(seed=0), spec=spec, runtime=runtime)
    assert all(s.tool in task.tool_view for s in traj.steps)
    assert all(not s.error_message or not any(r in s.error_message for r in real)
               for s in traj.steps)


def test_dedup_ids_ignore_case_and_spacing(shop):
    base = dict(kind="graph", env_name="shop", env_fingerprint=shop.fingerprint,
                reference_answer="Bob")
    a = Task(instruction="What is  the name of Bob?", **base).with_id()
    b = Task(instruction="what is the name of bob?", **base).with_id()
    c = Task(instruction="what is the name of bob?", **{**base, "reference_answer": "Cem"})
    assert a.id == b.id != c.with_id().id


# ---- the whole loop -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def synthesized(examples_synthesized):
    return examples_synthesized


def test_every_emitted_task_rechecks(synthesized, runtime):
    """Per example: >= 10 tasks over >= 3 levels, both kinds; each one's gold passes in a
    fresh episode and its check fails on the initial state."""
    cat, stats = synthesized
    for name in ("airline", "ecommerce"):
        spec = load_example(name)
        tasks = stored_tasks(cat, spec.fingerprint)
        assert len(tasks) >= 10, stats[name]
        assert len({t.difficulty.level for t in tasks}) >= 3
        assert {t.kind for t in tasks} == {"graph", "programmatic"}
        for t in tasks:
            assert [g.name for g in t.gates] == ["serves_source", "artefacts",
                                                 "answer_from_state", "solvable",
                                                 "initial_state_fails", "gold_replay",
                                                 "known_wrong", "no_shortcut", "natural",
                                                 "verifier"]
            assert t.pass_rate is not None  # offline, the baseline's runs are a measurement
            passed, _, _, detail = gold_run(t, spec, runtime)
            assert passed, (t.id, detail)
            ep = runtime.open(spec, seed=t.seed)
            assert not check_task(t, ep.template, ep.path, None).passed
            ep.close()
            assert not any(tool in t.instruction for tool in
                           {x.name for x in spec.tools} | set(t.tool_view))
        rejected = cat.ledger("synthesize")
        assert all(e.payload.get("gate") for e in rejected)


def test_rerun_of_a_run_continues_and_dedups(synthesized):
    cat, stats = synthesized
    spec = load_example("airline")
    before = {t.id for t in stored_tasks(cat, spec.fingerprint)}
    with EnvRuntime() as rt:
        again = synthesize_env(spec, SynthesisConfig(per_env=12), cat, rt, run_id="run-1")
        assert again["kept"] == 0 and again["candidates"] == 0  # the run was complete
        # a new run with the same seed draws the same first walks: their tasks are skipped
        fresh = synthesize_env(spec, SynthesisConfig(per_env=10, attempts_per_task=2), cat, rt,
                               run_id="run-2")
    after = {t.id for t in stored_tasks(cat, spec.fingerprint)}
    assert before <= after and len(after) == len(before) + fresh["kept"]
    assert fresh["duplicates"] >= 1


class _Killed(Exception):
    pass


def test_a_killed_run_resumed_emits_exactly_the_tasks_of_an_unkilled_run(tmp_path):
    """Stopped after its third stored task and resumed, a run ends with the same task set as
    one that was never stopped (the replay draws the same candidates: quotas already filled
    used to change which level and kind each later attempt drew, and a task went missing)."""
    spec = load_example("ecommerce")
    config = SynthesisConfig(per_env=8, seed=3)

    def tasks_of(cat: Catalog) -> set[str]:
        return {t.id for t in stored_tasks(cat, spec.fingerprint)}

    def stop_at_third(event: dict[str, Any]) -> None:
        if event["kept"] == 3:
            raise _Killed

    with EnvRuntime() as rt, Catalog.open(tmp_path / "whole") as whole, \
            Catalog.open(tmp_path / "killed") as killed:
        synthesize_env(spec, config, whole, rt, run_id="r")
        with pytest.raises(_Killed):
            synthesize_env(spec, config, killed, rt, run_id="r", progress=stop_at_third)
        assert len(tasks_of(killed)) == 3
        resumed = synthesize_env(spec, config, killed, rt, run_id="r")
        assert resumed["resumed"] == 3
        assert tasks_of(killed) == tasks_of(whole) and len(tasks_of(whole)) == 8
        # the rejections before the stop are not gated twice: one ledger entry each
        subjects = [e.subject for e in killed.ledger("synthesize", run_id="r")]
        assert len(subjects) == len(set(subjects))


class _Writer(BaseChatModel):
    """A synthesizer model that writes from the facts it is given (or breaks a rule)."""

    name_a_tool: bool = False

    @property
    def _llm_type(self) -> str:
        return "writer"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        import json as _json

        facts = _json.loads(str(messages[-1].content).split("Task facts:\n", 1)[1]
                            .split("\n\nTool names", 1)[0])
        values = " and ".join(f"{v['what']} {v['value']}" for v in facts["user_states"])
        steps = "; ".join(s["does"] for s in facts["steps"])
        text = f"For {values}: {steps}. What is the {facts['final_answer'].get('field')}?"
        if self.name_a_tool:
            text += " Use find_user."
        reply = {"instruction": text, "rubric": ["states the value"]}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(_json.dumps(reply)))])


def test_llm_writer_is_used_and_falls_back_when_it_names_a_tool(shop, runtime):
    g = build_tool_graph(shop, runtime=runtime)
    sampler = ValueSampler(shop)
    for model, expect in ((_Writer(), "_Writer"), (_Writer(name_a_tool=True), "offline-fallback")):
        task = None
        for i in range(30):
            cand = build_candidate(shop, g, runtime, random.Random(i), Recipe(1, False, False),
                                   "graph", seed=i, sampler=sampler, model=model,
                                   start="find_user")
            if isinstance(cand, Task):
                task = cand
                break
        assert task is not None and task.origin["writer"] == expect
        assert "find_user" not in task.instruction
        if expect != "offline-fallback":
            assert task.instruction.startswith("For email") and task.rubric == ["states the value"]


def test_a_synthesizer_model_that_falls_back_is_reported(shop, runtime, tmp_path):
    """Was silent: a model whose replies cannot be used left template requests that looked
    like its own. Now each such task says "offline-fallback" and the run's ledger and
    statistics count them."""
    with Catalog.open(tmp_path) as cat:
        cat.put_env(shop, stage="built")
        stats = synthesize_env(shop, SynthesisConfig(per_env=2, attempts_per_task=10), cat,
                               runtime, run_id="fb", model=_Writer(name_a_tool=True))
        assert stats["writer_fallbacks"] >= 1 and stats["kept"] >= 1
        assert {t.origin["writer"] for t in stored_tasks(cat, shop.fingerprint)} <= {
            "offline-fallback"}
        [entry] = [e for e in cat.ledger("synthesize", run_id="fb") if e.subject == shop.name]
        assert "fell back to the offline templates" in entry.reason


def test_a_stated_value_is_found_among_json_columns():
    """A corpus column of JSON objects (dicts do not hash) once crashed synthesis of the whole
    environment while looking for values the request states."""
    from agent_world.synthesis.gates import stated_value

    values = [{"a": 1}, ["x"], "ann@example.com", "ann@example.com", "no", 7]
    assert stated_value(values, "the customer with email ann@example.com") == "ann@example.com"
    assert stated_value(values, "nothing here") is None
    assert stated_value([{"b": 2}], "b 2") is None


def test_a_tool_tests_edit_mark_is_no_value_to_ask_for():
    """A tool test sets an empty text field to 'edited': a request never asks for it while
    stored values are at hand ("set its database to 'edited'")."""
    spec = load_example("ecommerce")
    sampler = ValueSampler(spec)
    sampler.tested[("place_order", "shipping_method")] = ["edited", "standard (edited)"]
    pool = sampler.candidates("place_order", "shipping_method", {"type": "string"})
    assert pool and not {"edited", "standard (edited)"} & set(pool)


def test_a_write_that_only_touches_updated_at_is_no_task():
    """Backlog's "set the milestone's name to Contract notes" on a milestone already named so
    changed only updated_at: the gold replay gate now refuses it; a real edit beside a touch
    of its parent's updated_at passes."""
    from agent_world.synthesis.solution_gates import touches_only

    touch = {"milestones": {"updated": [{"key": {"id": 13},
                                         "after": {"updated_at": "2026-01-15T09:01:00"}}]}}
    assert touches_only(touch)
    edit = {"milestones": {"updated": [{"key": {"id": 13}, "after": {
        "name": "Contract notes", "updated_at": "2026-01-15T09:01:00"}}]}}
    assert not touches_only(edit)
    comment = touch | {"comments": {"inserted": [{"id": 5, "body": "ok"}]}}
    assert not touches_only(comment) and not touches_only(None) and not touches_only({})


def test_a_count_over_a_full_page_is_no_count_of_all():
    """Google Calendar's "how many responses are 'declined'?" counted 6 in the first 20 of
    100 responses (23 in all): a list that fills its page may hold more."""
    from types import SimpleNamespace

    from agent_world.synthesis.gates import _full_page

    tools = {"list_responds": {"properties": {"limit": {"type": "integer", "default": 20}}},
             "list_tags": {"properties": {}}}
    spec = SimpleNamespace(tool=lambda name: SimpleNamespace(parameters=tools[name]))
    assert _full_page(spec, "list_responds", {}, [{}] * 20) == 20
    assert _full_page(spec, "list_responds", {}, [{}] * 7) is None
    assert _full_page(spec, "list_responds", {"limit": 20}, [{}] * 20) is None  # asked for
    assert _full_page(spec, "list_tags", {}, [{}] * 100) == 100
    assert _full_page(spec, "list_tags", {}, {"id": 1}) is None


def test_a_look_up_by_a_name_many_records_share_does_not_single_one_out():
    """AWS Pricing's 'data-related-service' named 5 services; the look-up returned the first
    and the task's answer took it for the one."""
    from types import SimpleNamespace

    from agent_world.synthesis.gates import _names_many

    def table(name, *cols):
        return SimpleNamespace(name=name, columns=[SimpleNamespace(name=c) for c in cols])

    spec = SimpleNamespace(tables=[table("services", "id", "name", "region"),
                                   table("regions", "id", "code", "label")],
                           tool=lambda name: SimpleNamespace(mutates=name.startswith("set_")))
    counts = {"data-related-service": 5, "compute": 1}
    ep = SimpleNamespace(query=lambda sql, params: [{"n": counts[params[0]]}])
    row = {"id": 10, "name": "data-related-service", "region": "us-east-1"}
    assert _names_many(spec, ep, "get_service", {"name": "data-related-service"}, row) == 5
    row = {"id": 11, "name": "compute", "region": "us-east-1"}
    assert _names_many(spec, ep, "get_service", {"name": "compute"}, row) == 0
    # by its id: nothing to share
    assert _names_many(spec, ep, "get_service", {"service_id": 11}, row) == 0
    # a write's arguments are what it sets ('suspended' is the status of many members)
    row = {"id": 10, "name": "data-related-service", "region": "us-east-1"}
    assert _names_many(spec, ep, "set_service_name", {"name": "data-related-service"}, row) == 0


def test_a_tool_named_for_no_table_draws_values_from_the_table_its_code_writes():
    """A request to a tool whose name names no table (Hostinger's repairDatabaseV1) states
    values of the table its code writes: a return's status, never an order's or a product's
    (a database named 'Lake Jared' after a city column elsewhere)."""
    shop = load_example("ecommerce")
    tool = ToolSpec(name="escalate_refund", description="Escalate a refund.",
                    parameters={"type": "object", "properties": {"status": {"type": "string"}}},
                    source='def escalate_refund(ctx, status):\n'
                           '    ctx.db.execute(\'INSERT INTO "returns" (status) VALUES (?)\','
                           ' (status,))\n', mutates=True)
    spec = shop.model_copy(update={"tools": [*shop.tools, tool]})
    pool = set(ValueSampler(spec).candidates("escalate_refund", "status", {"type": "string"}))
    assert pool and pool <= {r["status"] for r in shop.rows["returns"]}, pool


def test_an_output_file_takes_the_type_the_tool_makes():
    """Word's convert_to_pdf(output_filename) drew 'report-q3.docx' from the documents'
    table: a converter to PDF writes a .pdf, so the request names one; other tools keep the
    stored names."""
    shop = load_example("ecommerce")
    docs = TableSpec(name="documents", columns=[
        ColumnSpec(name="document_id", type="integer", primary_key=True),
        ColumnSpec(name="output_filename", type="text")])
    rows = [{"document_id": 1, "output_filename": "reports/report-q3.docx"},
            {"document_id": 2, "output_filename": "notes.v2.docx"}]
    params = {"type": "object", "properties": {"output_filename": {"type": "string"}}}
    tools = [ToolSpec(name=n, description=n, parameters=params,
                      source=f"def {n}(ctx, output_filename):\n    return output_filename\n")
             for n in ("convert_to_pdf", "copy_document")]
    spec = shop.model_copy(update={"tables": [*shop.tables, docs], "tools": [*shop.tools, *tools],
                                   "rows": {**shop.rows, "documents": rows}})
    sampler = ValueSampler(spec)
    schema = {"type": "string"}
    assert set(sampler.candidates("convert_to_pdf", "output_filename", schema)) == {
        "reports/report-q3.pdf", "notes.v2.pdf"}
    assert set(sampler.candidates("copy_document", "output_filename", schema)) == {
        "reports/report-q3.docx", "notes.v2.docx"}
    # the arguments of the tool's own test as well: a request drawn from it names a .pdf
    tested = spec.model_copy(update={"tests": [*spec.tests, ToolTest(
        name="converts", tool="convert_to_pdf",
        arguments={"output_filename": "budget-q3.docx"})]})
    drawn = {(ValueSampler(tested).start_args("convert_to_pdf", random.Random(k)) or {}).get(
        "output_filename") for k in range(20)}
    assert "budget-q3.pdf" in drawn and not any(str(v).endswith(".docx") for v in drawn)


def test_a_field_is_asked_as_new_only_when_its_own_record_changed():
    """Asana's "rename section 39 ... recolour its project. Tell me the project's new name":
    the section's name had changed, not the project's; a field is "new" only where the chain
    changed it on the record the question asks about."""
    from agent_world.synthesis.synthesizer import _asked_changes
    from agent_world.tasks.walks import Plan, PlanStep

    spec = load_example("ecommerce")
    plan = Plan(steps=[PlanStep(tool="update_address", given={}),
                       PlanStep(tool="cancel_order", given={})])
    changes = {"addresses": {"updated": [{"before": {"line1": "a"}, "after": {"line1": "b"}}]},
               "orders": {"updated": [{"before": {"status": "placed"},
                                       "after": {"status": "cancelled"}}]}}
    asked = _asked_changes(spec, plan, {"kind": "field", "step": 1, "field": "line1"}, changes)
    assert asked == {"status"}
    asked = _asked_changes(spec, plan, {"kind": "field", "step": 0, "field": "line1"}, changes)
    assert asked == {"line1"}


def test_a_candidate_that_raises_costs_that_candidate_not_the_environment(
        shop, runtime, tmp_path, monkeypatch):
    """Was: one candidate's exception (a crash in a value sampler) failed the synthesis of its
    whole environment. Now that candidate is skipped, counted and put in the ledger with the
    frame it came from; the other candidates go on."""
    from agent_world.synthesis import loop

    calls = {"n": 0}

    def every_third_raises(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] % 3 == 1:
            raise AttributeError("'dict' object has no attribute 'removesuffix'")
        return build_candidate(*args, **kwargs)

    monkeypatch.setattr(loop, "build_candidate", every_third_raises)
    with Catalog.open(tmp_path) as cat:
        cat.put_env(shop, stage="built")
        stats = synthesize_env(shop, SynthesisConfig(per_env=3, attempts_per_task=10), cat,
                               runtime, run_id="err")
        assert stats["candidate_errors"] >= 1 and stats["kept"] >= 1
        errors = [e for e in cat.ledger("synthesize", run_id="err")
                  if e.payload.get("gate") == "candidate_error"]
        assert len(errors) == stats["candidate_errors"]
        assert "AttributeError" in errors[0].reason and "every_third_raises" in errors[0].reason
