"""Issue 37 reproduced, then held: requests a person would write, levels that count reasoning,
answers from the state only, and an offline solvability gate.

Each test first states what the old synthesis emitted (the artefact suite catches the exact
sentences it wrote; the gates reject the exact tasks it kept), then what synthesis emits now.
"""

from __future__ import annotations

import json
import random
import re
import warnings
from collections import Counter, defaultdict

import pytest

from agent_world.envs import EnvRuntime, load_example
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources
from agent_world.synthesis import action_phrases, phrasing, phrasing_clauses, phrasing_values
from agent_world.synthesis.gates import (
    clock_values,
    gate_answer_from_state,
    gate_solvable,
)
from agent_world.synthesis.loop import stored_tasks
from agent_world.synthesis.synthesizer import chain_target
from agent_world.tasks.artefacts import artefacts
from agent_world.tasks.difficulty import recipe_for
from agent_world.tasks.walks import Binding, Plan, PlanStep
from agent_world.tasks.words import entity, own_keys
from tests.conftest import built_offline
from tests.unit.task_helpers import graph_task

# sentences the old offline synthesis emitted (issue 37's review, verbatim)
OLD = [
    "Hello! I need you to waive a fine with a written reason: of fine 1. When was it updated?",
    "Hi. Could you count loans per status? What is its expired?",
    "Quick one: Please find order ORD-8D41E0B5. After that, go over the orders that go with it. "
    "What is the total total?",
    "Hi there. I need you to choose a seat for one passenger: of reservation MGX7Q2, of "
    "passenger 2, with seat '14c'. After that, add checked bags for one passenger of a "
    "reservation for that seat: with bags 1. Tell me its fee.",
    "Could you look through the clinicians with specialty 'Ophthalmology', with accepting new "
    "patients yes? It's the one with created at 2025-06-19T07:17:12. Reply with the email.",
    "Hello! First, find the order items the first 2 only. It's the one with quantity 1.",
]


@pytest.fixture(scope="module")
def runtime():
    with EnvRuntime() as rt:
        yield rt


@pytest.fixture(scope="module")
def synthesized(examples_synthesized):
    """Both bundled examples, 12 tasks each (what the main job asks per environment)."""
    cat, _ = examples_synthesized
    return {name: stored_tasks(cat, load_example(name).fingerprint)
            for name in ("airline", "ecommerce")}


def test_a_record_is_told_from_another_of_its_kind():
    """"mark order 1 as paid, create an order for its customer, add an item to that order":
    which order? Later clauses say "that first order" or "that new order"."""
    spec = load_example("ecommerce")
    plan = Plan(steps=[
        PlanStep(tool="get_order", given={"order_id": "ORD-1"}),
        PlanStep(tool="place_order", bound={"customer_id": Binding(step=0, field="customer_id")}),
        PlanStep(tool="get_order", bound={"order_id": Binding(step=1, field="order_id")}),
    ])
    assert phrasing_clauses.qualified(spec, plan, 0, 2) == "first order"
    assert phrasing_clauses.qualified(spec, plan, 1, 3) == "new order"
    # a re-read of the record takes its own key: the same order, no word needed
    reread = Plan(steps=[plan.steps[0], PlanStep(tool="get_order", bound={
        "order_id": Binding(step=0, field="order_id")})])
    assert phrasing_clauses.qualified(spec, reread, 0, 2) == "order"
    assert phrasing_clauses.qualified(spec, Plan(steps=plan.steps[:1]), 0, 1) == "order"


def test_an_argument_named_by_a_preposition_is_said_by_it():
    """`from_` is "from December 5, 2025 at 12:30", never "with the from ..."; a time is
    "at 09:45", never "with at 09:45"."""
    assert phrasing_values.date_phrase("from", "December 5, 2025 at 12:30") == \
        "from December 5, 2025 at 12:30"
    assert phrasing_values.arg_phrase("time", "09:45") == "at 09:45"
    assert phrasing_values.arg_phrase("time", "09:45").startswith(phrasing_values.PREPOSITIONS)
    # a number said with what it counts: "paragraph 4", never "insert a list to 4"
    assert phrasing_values.arg_phrase("target_paragraph_index", 4) == "next to paragraph 4"
    assert phrasing_values.arg_phrase("target_timezone", "Asia/Tokyo") == "to Asia/Tokyo"
    # a date is "on November 25, 2025": never "the body measurement with on November 25"
    assert phrasing_values.arg_phrase("date", "2025-11-25").startswith(
        phrasing_values.PREPOSITIONS)


def test_an_action_given_an_earlier_value_says_whose_value_it_is(built):
    """"open that current time's time to America/New_York at 14:00" (a conversion read as a
    record the current time leads to) -> "convert time from the same timezone to
    America/New_York at 14:00" where the request stated that timezone, "from that time
    conversion's ..." where a record read by its id holds it."""
    spec = built["time"]
    plan = Plan(steps=[
        PlanStep(tool="get_current_time", given={"timezone": "Australia/Adelaide"}),
        PlanStep(tool="convert_time", given={"target_timezone": "America/New_York",
                                             "time": "14:00"},
                 bound={"source_timezone": Binding(step=0, field="timezone")})])
    for seed in range(3):
        clause = phrasing_clauses.step_clause(spec, plan, 1, random.Random(seed))
        assert "from the same timezone to America/New_York at 14:00" in clause, clause
    unsaid = Plan(steps=[
        PlanStep(tool="get_time_conversion", given={"time_conversion_id": 38}),
        PlanStep(tool="convert_time", given={"source_timezone": "UTC",
                                             "target_timezone": "America/New_York"},
                 bound={"time": Binding(step=0, field="time")})])
    for seed in range(3):
        clause = phrasing_clauses.step_clause(spec, unsaid, 1, random.Random(seed))
        assert "that time conversion's time" in clause and "the same" not in clause, clause


def test_a_value_passed_on_unchanged_is_the_same_one_the_request_stated():
    """A filename the request gave once and every later step reuses is "the same filename"
    at each step, also where it reached the step through another step's record; never "that
    header near text's filename" nor an aim at a record it does not identify."""
    ref = next(r for r in corpus_sources() if r.name == "word")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mined = mine_theme(read_source(ref.spec), iterations=0, seed=0).spec
    spec = built_offline(mined)
    assert spec is not None
    plan = Plan(steps=[
        PlanStep(tool="insert_header_near_text", given={"filename": "survey-v3.docx"}),
        PlanStep(tool="add_heading", given={"text": "Findings"},
                 bound={"filename": Binding(step=0, field="filename")}),
        PlanStep(tool="add_page_break", given={},
                 bound={"filename": Binding(step=1, field="filename")})])
    for seed in range(3):
        for i in (1, 2):
            clause = phrasing_clauses.step_clause(spec, plan, i, random.Random(seed))
            assert "the same filename" in clause and "that " not in clause, clause


def test_a_field_named_as_its_record_is_asked_what_it_is_called():
    """Never "What is the title's title?"."""
    for seed in range(4):
        q = phrasing.ask_field("title", random.Random(seed), ent="title", value="Dune")
        assert "title's title" not in q and "called" in q, q
    assert "name" in phrasing.ask_field("name", random.Random(0), ent="branch", value="x")
    for seed in range(4):  # a field named as what its record is about: what the record gives
        q = phrasing.ask_field("time", random.Random(seed), ent="time conversion", value="10:00")
        assert "conversion's time" not in q and "time the time conversion gives" in q or \
            q == "What time does the time conversion give?", q


def test_the_artefact_suite_catches_the_old_template_english():
    found = {text: artefacts(text) for text in OLD}
    assert all(found.values()), found
    assert "colon-of" in found[OLD[0]] and "what-is-its" in found[OLD[1]]
    assert "doubled-word" in found[OLD[2]] and "machine-timestamp" in found[OLD[4]]
    # argument names before their values, for the tools of the chain
    airline = load_example("airline")
    assert "argument-name" in artefacts(
        "Add bags with payment method id pm_1 please.", airline, ["add_baggage"])
    assert "argument-name" in artefacts(
        "Update passenger 1 with first name 'Ann'.", airline, ["update_passenger"])
    assert not artefacts("Please look up reservation MGX7Q2. How many free checked bags does "
                         "the reservation have?", airline, ["get_reservation"])


def test_a_call_from_a_value_to_itself_is_an_artefact():
    """"Convert the time from UTC to UTC", a transfer to the account it comes from: the
    chain's call, not the wording, gives it away."""
    from agent_world.tasks.model import ToolCall

    def call(**arguments):
        return ToolCall(tool="convert", arguments=arguments)

    assert "same-ends" in artefacts("Please convert 01:00.", None, [call(
        source_timezone="UTC", target_timezone="utc", time="01:00")])
    assert "same-ends" in artefacts("Convert it.", None, [call(fromCurrency="USD",
                                                               toCurrency="USD")])
    assert "same-ends" in artefacts("Rename it.", None, [call(old_name="x", new_name="x")])
    assert "same-ends" in artefacts("List them.", None, [call(
        since="2025-03-17T23:54:17", until="2025-03-17T23:54:17", project_id=6)])
    # one day as both ends of a span is that day: an all-day event
    assert not artefacts("Book it.", None, [call(start_date="2026-03-03",
                                                 end_date="2026-03-03")])
    assert not artefacts("Please convert 01:00.", None, [call(
        source_timezone="UTC", target_timezone="Europe/Paris", time="01:00")])


def test_values_are_phrased_by_type_and_role():
    assert phrasing_values.say("scheduled_departure", "2026-03-12T22:30:00") == \
        "March 12, 2026 at 22:30"
    assert phrasing_values.say("unit_price", 10.9) == "$10.90"
    assert phrasing_values.arg_phrase("reservation_id", "MGX7Q2") == "reservation MGX7Q2"
    assert phrasing_values.arg_phrase("bags", 2) == "2 bags"
    assert phrasing_values.arg_phrase("status", "expired", {"enum": ["active", "expired"]},
                               writes=True) == "its status to expired"
    # no argument name of several words before a bare value
    assert "total baggages 2" not in phrasing_values.arg_phrase("total_baggages", 2)
    rng = random.Random(0)
    assert phrasing.ask_field("status", rng, ent="reservation", now=True).count("status") == 1
    assert "loans" in phrasing.ask_field("expired", rng, value=3, tool="count_loans_by_status")


def test_emitted_requests_pass_the_artefact_suite_and_each_chain_target_is_asked_once(
        synthesized):
    for name, tasks in synthesized.items():
        spec = load_example(name)
        assert len(tasks) >= 10
        for t in tasks:
            assert not artefacts(t.instruction, spec, t.chain), (t.instruction,
                                                                   artefacts(t.instruction))
            assert "_" not in " ".join(w for w in t.instruction.split() if "'" not in w
                                       and "@" not in w and not any(c.isdigit() for c in w))
        pairs = Counter(chain_target(t) for t in tasks)
        assert max(pairs.values()) == 1, pairs


def test_levels_count_reasoning_and_obscured_names_are_apart(synthesized):
    """The old levels: mean chain 1.0 / 1.0 / 1.27 / 1.38 / 2.75 and one tool in most tasks;
    levels 4-5 now have >= 3 distinct tools and longer chains, a share branch on a value."""
    by_level = defaultdict(list)
    for tasks in synthesized.values():
        for t in tasks:
            by_level[t.difficulty.level].append(t)
    high = by_level[4] + by_level[5]
    assert high, {lv: len(v) for lv, v in by_level.items()}
    assert all(t.difficulty.distinct_tools >= 3 for t in high)
    assert sum(t.difficulty.chain_length for t in high) / len(high) >= 3
    assert all(t.difficulty.chain_length == 1 and not t.difficulty.aggregation
               for t in by_level[1])
    assert sum(t.difficulty.condition for t in high) / len(high) >= 0.3
    # opaque names are drawn apart from the level: recipes of every level carry them (the
    # emitted sample of 24 is too small to show every level, and gates drop some)
    assert any(t.difficulty.obscured for tasks in synthesized.values() for t in tasks)
    rng = random.Random(0)
    for level in (1, 2, 3, 4, 5):
        share = sum(recipe_for(level, rng).obscured for _ in range(400)) / 400
        assert 0.1 < share < 0.3, (level, share)


_task = graph_task


def test_clock_id_and_world_knowledge_answers_are_rejected(runtime):
    """The old sets held 4-7 per 50 of these; the only held-out pass of round 1 was one."""
    spec = load_example("ecommerce")
    assert spec.clock_start.lower() in clock_values(spec, 1)
    # a write that stamps the clock, asked for the stamp
    plan = Plan(steps=[PlanStep(tool="add_address", given={
        "customer_id": 2, "recipient": "Emma Rossi", "line1": "7663 Grand Ave",
        "city": "Brooklyn", "state": "NY", "postal_code": "11242"})])
    ep = runtime.open(spec, seed=0)
    obs = ep.step("add_address", plan.steps[0].given)
    ep.close()
    assert obs.ok, obs.error
    stamped = [k for k, v in obs.result.items() if isinstance(v, str) and v.startswith(spec.clock_start[:13])]
    keyed = [k for k in obs.result if k in ("id", "address_id")]
    assert stamped + keyed, obs.result
    for field in stamped[:1] + keyed[:1]:
        task = _task(spec, runtime, plan, {"kind": "field", "step": 0, "field": field},
                     "Save that address. What does it show?")
        res = gate_answer_from_state(task, spec, runtime)
        assert not res.passed, (field, res.detail)
    # a value of the database passes
    plan = Plan(steps=[PlanStep(tool="get_order", given={"order_id": "ORD-8D41E0B5"})])
    task = _task(spec, runtime, plan, {"kind": "field", "step": 0, "field": "status"},
                 "Look up order ORD-8D41E0B5. What is the order's status?")
    assert gate_answer_from_state(task, spec, runtime).passed


def test_world_knowledge_about_a_time_zone_is_not_an_answer(runtime):
    """America/Chicago's offset is known without any call: not an answer, whatever the
    database holds."""
    spec = load_example("ecommerce")
    plan = Plan(steps=[PlanStep(tool="get_order", given={"order_id": "ORD-8D41E0B5"})])
    task = _task(spec, runtime, plan, {"kind": "field", "step": 0, "field": "status"},
                 "Look up the time zone America/Chicago for order ORD-8D41E0B5. What is its "
                 "UTC offset in winter?")
    task = task.model_copy(update={"reference_answer": "-06:00"})
    res = gate_answer_from_state(task, spec, runtime)
    assert not res.passed and "world knowledge" in res.detail
    # UTC's offset is no less known
    utc = task.model_copy(update={"reference_answer": "+00:00", "instruction":
                                  "Get the current time in UTC. Which UTC offset does it have?"})
    res = gate_answer_from_state(utc, spec, runtime)
    assert not res.passed and "world knowledge about UTC" in res.detail


def test_solvability_gate_needs_every_argument_stated_or_observed(runtime):
    spec = load_example("ecommerce")
    plan = Plan(steps=[PlanStep(tool="get_order", given={"order_id": "ORD-8D41E0B5"})])
    answer = {"kind": "field", "step": 0, "field": "status"}
    ok = _task(spec, runtime, plan, answer, "Look up order ORD-8D41E0B5. What is its status?")
    assert gate_solvable(ok, spec, runtime).passed
    hidden = _task(spec, runtime, plan, answer, "Look up my last order. What is its status?")
    res = gate_solvable(hidden, spec, runtime)
    assert not res.passed and "order_id" in res.detail


def test_offline_verifier_measures_and_does_not_filter(synthesized):
    """The old offline filter kept only what the word-overlap heuristic solved (7 % of level 5
    survived); now every gated task is kept with its measured baseline pass rate."""
    levels = Counter()
    for tasks in synthesized.values():
        for t in tasks:
            verdict = next(g for g in t.gates if g.name == "verifier")
            assert verdict.passed and "measured" in verdict.detail
            assert t.pass_rate is not None
            levels[t.difficulty.level] += 1
    assert len(levels) >= 4, levels
    assert any(t.pass_rate < 0.5 for tasks in synthesized.values() for t in tasks)
    json.dumps(dict(levels))


def test_words_read_off_emitted_requests():
    """Each of these stood in an emitted request before: "whose flight number is number
    NW900", "that in's reservation", "tell me its line2", "if its opening hours is"."""
    assert phrasing_values.which("flight_number", "NW900") == "whose flight number is NW900"
    assert phrasing_values.which("pickup_branch_id", 4) == "whose pickup branch is branch 4"
    assert entity("check_in") == "record" and entity("check_in_copy") == "copy"
    # "find a comment 6 ... Tell me the a comment's parent id" (Notion's retrieve-a-comment)
    assert entity("API-retrieve-a-comment", "api") == "comment"
    assert entity("create_an_invoice") == "invoice"
    assert phrasing_values.field_words("line2") == "line 2"
    assert phrasing_values.field_words("sha256") == "sha256"  # a name, not a word and a number
    assert [phrasing._verb_be(w) for w in ("opening hours", "status", "alias")] == [
        "are", "is", "is"]


def test_a_flag_named_for_its_act_is_said_as_the_act():
    spec = load_example("ecommerce")
    said = phrasing_clauses.write_clause(spec, "update_address", {
        "customer_id": 1, "address_id": 2, "make_default": True}, random.Random(0))
    assert "make default" not in said and said.endswith("the default"), said
    assert "address 2" in said, said


def test_a_record_picked_by_name_from_a_search_is_not_said_twice():
    """"Find the customer named Jeffrey Luna matching 'Jeffrey'": the name already says what
    the search finds; a query the name does not hold is still said."""
    spec = load_example("ecommerce")
    name = spec.rows["products"][0]["name"]
    plan = Plan(steps=[PlanStep(tool="search_products", given={"query": name.split()[0]},
                                select={"name": name}),
                       PlanStep(tool="get_product", bound={"product_id": Binding(
                           step=0, field="product_id")})])
    text = phrasing_clauses.step_clause(spec, plan, 0, random.Random(0))
    assert f"named '{name}'" in text or f"named {name}" in text, text
    assert "matching" not in text, text
    plan.steps[0].select = {"brand": "Sony"}  # any value the search's words are in
    plan.steps[0].given = {"query": "sony"}
    text = phrasing_clauses.step_clause(spec, plan, 0, random.Random(0))
    assert "Sony" in text and "matching" not in text, text
    plan.steps[0].given = {"query": "zzz"}  # a search the pick does not hold: said first
    text = phrasing_clauses.step_clause(spec, plan, 0, random.Random(0))
    assert text.startswith("search the products for 'zzz' and ") and \
        text.endswith("the one whose brand is 'Sony'"), text


def test_a_place_the_act_happens_at_is_said_with_at():
    """"check in copy 39 at branch 28", not "... with branch 28": the argument's
    description says it is where the act happens."""
    from agent_world.envs.spec import EnvSpec

    raw = json.loads(load_example("ecommerce").to_json())
    spec = EnvSpec.from_dict(raw)
    tool = next(t for t in spec.tools if t.mutates and any(
        p.endswith("_id") for p in t.parameters.get("properties", {})))
    key = next(p for p in tool.parameters["properties"] if p.endswith("_id"))
    raw_tool = next(t for t in raw["tools"] if t["name"] == tool.name)
    raw_tool["parameters"]["properties"]["branch_id"] = {
        "type": "integer", "description": "The branch where it is handed in"}
    spec = EnvSpec.from_dict(raw)
    said = phrasing_clauses.write_clause(spec, tool.name, {key: 1, "branch_id": 28},
                                         random.Random(0))
    assert said.endswith(" at branch 28"), said
    raw_tool["parameters"]["properties"]["branch_id"]["description"] = "A branch."
    said = phrasing_clauses.write_clause(EnvSpec.from_dict(raw), tool.name,
                                         {key: 1, "branch_id": 28}, random.Random(0))
    assert said.endswith(" with branch 28"), said


def test_a_key_named_for_who_acted_is_said_as_the_act(notes_spec):
    """A change log listed by `changed_by_id` reads "changed by user 2", not "of changed by
    2" (the key's noun is an act, not a record)."""
    raw = json.loads(notes_spec.to_json())
    raw["tables"].append({"name": "note_history", "columns": [
        {"name": "id", "type": "integer", "primary_key": True},
        {"name": "note_id", "type": "integer", "foreign_key": "notes.id"},
        {"name": "changed_by_id", "type": "integer", "foreign_key": "users.id"}]})
    raw["rows"]["note_history"] = [{"id": 1, "note_id": 1, "changed_by_id": 2}]
    raw["tools"].append({
        "name": "list_note_history", "description": "List the note history.",
        "parameters": {"type": "object", "properties": {"changed_by_id": {"type": "integer"}},
                       "additionalProperties": False},
        "source": "def list_note_history(ctx, changed_by_id=None):\n"
                  "    return ctx.query('SELECT * FROM note_history')\n"})
    from agent_world.envs.spec import EnvSpec

    spec = EnvSpec.from_dict(raw)
    plan = Plan(steps=[PlanStep(tool="list_note_history", given={"changed_by_id": 2},
                                select={"id": 1})])
    said = phrasing_clauses.step_clause(spec, plan, 0, random.Random(0))
    assert "changed by user 2" in said and " of changed" not in said, said
    plan.steps[0].given, plan.steps[0].select = {}, {"changed_by_id": 2}
    said = phrasing_clauses.step_clause(spec, plan, 0, random.Random(0))
    assert said.endswith("changed by user 2") and "whose" not in said, said


def test_a_record_picked_by_when_something_happened_says_it_as_the_act():
    """"the query updated on December 24, 2024 at 11:24:58", not "whose updated at is"."""
    assert phrasing_values.which("updated_at", "2024-12-24T11:24:58") == \
        "updated on December 24, 2024 at 11:24:58"
    assert phrasing_values.which("joined_on", "2024-12-24") == "joined on December 24, 2024"
    assert phrasing_values.which("starts_at", "2024-12-24T09:30:00").startswith("starting ")
    assert phrasing_values.which("status", "paid") == "whose status is 'paid'"
    # a date field named by its act alone: "modified on", never "have modified on"
    assert phrasing_values.which("modified", "2026-01-14") == "modified on January 14, 2026"
    for seed in range(6):
        asked = phrasing.ask_aggregate("count", None, {"modified": "2026-01-14"}, "tasks",
                                       random.Random(seed))
        assert asked == "How many tasks modified on January 14, 2026 are there?", asked


def test_who_did_something_is_said_as_what_happened():
    """"How many appointments cancelled by 'clinic' are there?", never "... have cancelled
    by 'clinic'" nor "whose cancelled by is"."""
    said = phrasing.ask_aggregate("count", None, {"cancelled_by": "clinic"}, "appointments",
                                  random.Random(0))
    assert said == "How many appointments cancelled by 'clinic' are there?", said


def test_a_write_that_finds_its_record_by_a_field_names_the_record_by_it(notes_spec):
    """HubSpot's update_property(propertyName, objectType) finds the property by its name: "update
    the property named Q2 invoice: set its ...", never "set its property name to Q2 invoice";
    a REST method finds its resource by path: "delete the user at /users/7"."""
    from agent_world.envs.spec import EnvSpec

    raw = json.loads(notes_spec.to_json())
    users = next(t for t in raw["tables"] if t["name"] == "users")
    users["columns"].append({"name": "path", "type": "text", "unique": True})
    for row in raw["rows"]["users"]:
        row["path"] = f"/users/{row['id']}"
    for name, column, arg in (("update_user", "name", "userName"), ("delete_user", "path", "path")):
        raw["tools"].append({
            "name": name, "description": f"{name.split('_')[0].title()} a user.", "mutates": True,
            "parameters": {"type": "object", "properties": {
                arg: {"type": "string"}, "role": {"type": "string"}}, "required": [arg]},
            "source": f"def {name}(ctx, {arg}, role=None):\n"
                      f"    row = _row(ctx, 'users', 'id', '{column}', {arg}, 'user')\n"
                      f"    return row\n"})
    spec = EnvSpec.from_dict(raw)
    said = phrasing_clauses.write_clause(spec, "update_user", {"userName": "Ann Lee",
                                                               "role": "admin"},
                                         random.Random(0))
    assert said.startswith("update the user named Ann Lee: set its role to"), said
    said = phrasing_clauses.write_clause(spec, "delete_user", {"path": "/users/7"},
                                         random.Random(0))
    assert said == "delete the user at /users/7", said


def test_a_record_named_by_one_of_its_fields_is_said_as_that_record(notes_spec):
    """A key that is a unique field of a record (a copy's barcode, a member's card number)
    aims the act at that record: "lend the note with barcode B1 ...", not "lend a note for
    barcode B1"; bound from an earlier user, "... to that user"."""
    from agent_world.envs.spec import EnvSpec

    raw = json.loads(notes_spec.to_json())
    users = next(t for t in raw["tables"] if t["name"] == "users")
    users["columns"].append({"name": "card_number", "type": "text", "unique": True})
    for i, row in enumerate(raw["rows"]["users"]):
        row["card_number"] = f"C{i}"
    notes = next(t for t in raw["tables"] if t["name"] == "notes")
    notes["columns"].append({"name": "barcode", "type": "text", "unique": True})
    for i, row in enumerate(raw["rows"]["notes"]):
        row["barcode"] = f"B{i}"
    raw["tools"].append({
        "name": "lend_note", "description": "Lend a note to a user.", "mutates": True,
        "parameters": {"type": "object", "properties": {
            "barcode": {"type": "string"}, "card_number": {"type": "string"}},
            "required": ["barcode", "card_number"], "additionalProperties": False},
        "source": "def lend_note(ctx, barcode, card_number):\n    return None\n"})
    spec = EnvSpec.from_dict(raw)
    said = phrasing_clauses.write_clause(spec, "lend_note", {"barcode": "B1", "card_number": "C1"},
                                         random.Random(0))
    assert said == "lend the note with barcode B1 to the user with card number C1", said
    plan = Plan(steps=[PlanStep(tool="rename_user", given={"user_id": 1, "name": "Ann"}),
                       PlanStep(tool="lend_note", given={"barcode": "B1"}, bound={
                           "card_number": Binding(step=0, field="card_number")})])
    said = phrasing_clauses.step_clause(spec, plan, 1, random.Random(0))
    assert said.endswith("to that user"), said


def test_a_limit_of_the_act_is_no_part_of_the_request():
    """"Members can renew a loan up to two times, unless ..." asks "renew loan 3"."""
    from agent_world.envs.spec import EnvSpec

    raw = json.loads(load_example("ecommerce").to_json())
    tool = next(t for t in raw["tools"] if t.get("mutates"))
    tool["description"] = "Members can renew a loan up to two times, unless it is held."
    spec = EnvSpec.from_dict(raw)
    assert action_phrases.action_phrase(spec, tool["name"]) == "renew a loan"


def test_a_flag_named_as_a_state_is_said_as_one():
    """"marked as new release", "with parking", never "the is new release set to yes"."""
    assert phrasing_values.arg_phrase("is_new_release", True) == "marked as new release"
    assert phrasing_values.arg_phrase("is_new_release", False) == "not marked as new release"
    assert phrasing_values.arg_phrase("has_parking", False) == "without parking"


def test_a_listing_by_an_earlier_record_s_key_names_that_key_s_record(built):
    """view_loans(member_id) fed by a fine's member: "the loans of that fine's member", never
    "the loans of that fine" (a fine has no loans); fed by a loan: "of that loan's member",
    not "the loans like that one"."""
    spec = built["book-lending-prd"]
    for first, key in (("get_fine", "fine_id"), ("get_loan", "loan_id")):
        plan = Plan(steps=[
            PlanStep(tool=first, given={key: 9}),
            PlanStep(tool="view_loans", given={},
                     bound={"member_id": Binding(step=0, field="member_id")})])
        what = first.removeprefix("get_")
        for seed in range(3):
            clause = phrasing_clauses.step_clause(spec, plan, 1, random.Random(seed))
            assert f"of that {what}'s member" in clause, clause
            assert "like that one" not in clause, clause


@pytest.mark.parametrize("description, said", [
    ("Goal Seek: change the constant until the formula equals the target.",
     "change the constant until the formula equals the target"),
    ("Restrict what can be entered in a range (list dropdown, numbers).",
     "restrict what can be entered in a range"),
    ("Build and deploys a Node.js application from an uploaded archive.",
     "build and deploy a Node.js application from an uploaded archive"),
    ("Publish a website so its latest changes go live.\\n Use this tool when ...",
     "publish a website so its latest changes go live"),
    ("Create a user for an existing database.", "create a user for an existing database"),
    ("Edit a member: set the given fields (name).", "edit a member"),
    # "the provided ..." is no condition ("provided that"), and no cut ends on its joint
    ("Execute any kubectl command with the provided arguments and flags",
     "execute any kubectl command with the provided arguments and flags"),
    ("Cancel an order provided it has not shipped", "cancel an order"),
    ("Export the rows of a (selected) table.", "export the rows"),
    # the corpus's review: a verb ending in ss, a sentence ending after a capital or without a
    # space, a leading condition, framing with a role, what follows a dash, examples, a purpose
    ("Press a key or key combination. Use this when fill() fails", "press a key or key combination"),
    ("Gets a console message by its ID. You can get all messages by calling list",
     "get a console message"),
    # how the record is found is said by its key, not by the act
    ("Delete a custom model by exact UUID or exact name", "delete a custom model"),
    ("Delete an override specified by its ID", "delete an override"),
    ("Returns list of applications", "list applications"),
    ("Returns an ArgoCD AppProject", "get an ArgoCD AppProject"),
    ("If a browser dialog was opened, use this command to handle it", "handle the browser dialog"),
    ("If the page is stale, reload the page", "reload the page"),
    ("Manage Azure Policy assignments using Azure CLI.Retrieve policy assignments",
     "manage Azure Policy assignments using Azure CLI"),
    ("Use this as the primary tool to discover the types of metrics available",
     "discover the types of metrics available"),
    ("Generate an area chart to show data trends, such as, displacement", "generate an area chart"),
    ("Find all dashboards that include a card - use this to understand where a card is used",
     "find all dashboards that include a card"),
    ("PREFERRED TOOL for design system extraction", "PREFERRED TOOL for design system extraction"),
    ("[Feishu/Lark]-Docs-Base-App-Create a Base App-Create a base app in user-defined folder",
     "create a Base App"),
    ("[Feishu/Lark]-Messaging-Message management-Send message-Call this interface to send",
     "send message"),
    ("Create a collection using the [Postman Collection v2.1.0 schema format]"
     "(https://schema.postman.com/collection/json/v2.1.0/draft-07/docs/index.html)",
     "create a collection using the Postman Collection v2.1.0 schema format")])
def test_a_source_s_description_reads_as_the_act_it_asks(description, said):
    """Real servers' descriptions: a named feature before a colon, a clause without a
    subject before "can", a third-person verb after "and", escaped line breaks, "a user"."""
    from agent_world.envs.spec import EnvSpec

    raw = json.loads(load_example("ecommerce").to_json())
    tool = next(t for t in raw["tools"] if t.get("mutates"))
    tool["description"] = description
    spec = EnvSpec.from_dict(raw)
    assert action_phrases.action_phrase(spec, tool["name"]) == said


def test_an_argument_named_in_code_ends_the_act():
    """Excel's import_csv, "Import a CSV file into a sheet from `at`, overwriting cells", had
    asked to "import a CSV file into a sheet from at, overwriting cells": the cell is stated
    by its own clause. A word in backticks that is no argument of the tool stays."""
    from agent_world.envs.spec import EnvSpec

    raw = json.loads(load_example("ecommerce").to_json())
    tool = next(t for t in raw["tools"] if t.get("mutates"))
    arg = next(iter(tool["parameters"]["properties"]))
    tool["description"] = f"Import a CSV file into a sheet from `{arg}`, overwriting cells."
    spec = EnvSpec.from_dict(raw)
    assert action_phrases.action_phrase(spec, tool["name"]) == "import a CSV file into a sheet"
    tool["description"] = "Import a CSV file into a sheet from `start_cell_x`."
    spec = EnvSpec.from_dict(raw)
    assert action_phrases.action_phrase(spec, tool["name"]) == \
        "import a CSV file into a sheet from start_cell_x"


def test_a_run_of_verbs_is_said_from_the_tool_s_name():
    """arXiv: "Then download, safely process, cache, and return bounded original LaTeX source
    for that paper": how the tool works is no request."""
    from agent_world.envs.spec import EnvSpec

    raw = json.loads(load_example("ecommerce").to_json())
    tool = next(t for t in raw["tools"] if t.get("mutates"))
    tool["description"] = ("Download, safely process, cache, and return bounded original "
                           "LaTeX source for a paper")
    spec = EnvSpec.from_dict(raw)
    said = action_phrases.action_phrase(spec, tool["name"])
    assert "safely process" not in said and said == action_phrases._name_phrase(spec,
                                                                                 tool["name"])


def test_a_go_doc_description_led_by_the_tool_name_says_its_act():
    """Argo CD's "delete_application deletes application" read "application deletes
    application"; a tool named like a verb and described by it ("search: Search files")
    keeps its verb."""
    from agent_world.envs.spec import EnvSpec

    raw = json.loads(load_example("ecommerce").to_json())
    tool = next(t for t in raw["tools"] if t.get("mutates"))
    tool["description"] = f"{tool['name']} deletes application. Specify the namespace."
    spec = EnvSpec.from_dict(raw)
    assert action_phrases.action_phrase(spec, tool["name"]) == "delete application"
    tool["description"] = f"{tool['name']} files for patterns"
    spec = EnvSpec.from_dict(raw)
    assert action_phrases.action_phrase(spec, tool["name"]) != "files for patterns"


@pytest.mark.parametrize("description, said", [
    ("[Tauri Apps Only] Start an automation session", "start an automation session"),
    ("Notion | Retrieve a user\nError Responses:\n400: 400", "retrieve a user"),
    ("⚠️ **Create** a folder for the **project**", "create a folder for the project"),
    # no act in English: said from the tool's name
    ("根据城市名称或者标准adcode查询指定城市的天气", None),
    ("Azure Monitor operations - Commands for querying logs and metrics.", None),
    ("Speech operations – Commands to work with Azure AI Services Speech", None),
    ("list_application returns list of applications", None),
    ("🎯 Purpose 1: manage objects", None)])
def test_a_description_with_no_english_act_is_said_from_the_tools_name(description, said):
    """Corpus servers' descriptions that start with a tag, a product name and a bar, markup,
    or say no act in English (another language, a command router's blurb, a heading)."""
    from agent_world.envs.spec import EnvSpec

    raw = json.loads(load_example("ecommerce").to_json())
    tool = next(t for t in raw["tools"] if t.get("mutates"))
    tool["description"] = description
    spec = EnvSpec.from_dict(raw)
    phrase = action_phrases.action_phrase(spec, tool["name"])
    if said is not None:
        assert phrase == said
    else:  # the tool's own verb and record, in English
        verb = tool["name"].split("_")[0]
        assert phrase.startswith(verb) and not re.search(r"[^\x00-\x7f]|operations|purpose",
                                                         phrase), (tool["name"], phrase)


def test_a_tool_named_by_its_verb_keeps_the_verb_and_a_product_name_keeps_its_s():
    """Chrome's `click` tool is described "Clicks on the provided element": the act stays a
    click (the tool's name was replaced by its record: "css style on the provided element").
    Azure's `aks` and `redis` routers act on tables `akses` and `redises`: their records are
    "aks" and "redis", not "akse" and "redise"; a router is run as named."""
    from agent_world.envs.spec import EnvSpec
    from agent_world.tasks.words import tool_entity

    raw = json.loads(load_example("ecommerce").to_json())
    tool = next(t for t in raw["tools"] if t.get("mutates"))
    raw["tests"] = [t for t in raw["tests"] if t["tool"] != tool["name"]]
    tool["source"] = tool["source"].replace(f"def {tool['name']}(", "def click(")
    tool["name"], tool["description"] = "click", "Clicks on the provided element"
    spec = EnvSpec.from_dict(raw)
    assert action_phrases.action_phrase(spec, "click") == "click on the provided element"

    raw = json.loads(load_example("ecommerce").to_json())
    table = raw["tables"][0]
    old_table = table["name"]
    table["name"] = "akses"
    raw["rows"]["akses"] = raw["rows"].pop(old_table, [])
    for t in raw["tables"]:  # keys that referred to the renamed table refer to it still
        for c in t["columns"]:
            if (c.get("foreign_key") or "").startswith(old_table + "."):
                c["foreign_key"] = "akses." + c["foreign_key"].split(".", 1)[1]
    tool = next(t for t in raw["tools"] if t.get("mutates"))
    raw["tests"] = [t for t in raw["tests"] if t["tool"] != tool["name"]]
    tool["source"] = tool["source"].replace(f"def {tool['name']}(", "def aks(")
    tool["name"] = "aks"
    tool["description"] = "AKS operations – Commands to manage Azure Kubernetes Service clusters"
    spec = EnvSpec.from_dict(raw)
    assert tool_entity(spec, "aks") == "aks"
    assert action_phrases.action_phrase(spec, "aks") == "run the aks command"


def test_a_keyed_record_drops_the_alternative_the_act_offered():
    """Chrome's "Take a screenshot of the page or element" for page 25: "take a screenshot of
    page 25", not "... of page 25 or element"; an alternative that names a thing of its own
    ("a note or comment thread") stays."""
    assert phrasing_clauses._with_key("take a screenshot of the page or element", "page",
                                      "page 25") == "take a screenshot of page 25"
    assert phrasing_clauses._with_key("delete a note or comment thread", "note",
                                      "note 3") == "delete note 3 or comment thread"


def test_what_one_request_asked_for_is_not_copied_into_another():
    """Azure's routers: "run the kusto command, using that monitor's intent" copied one
    command's intent into another's; a walk samples it instead (as a record's own name)."""
    from agent_world.tasks.walks import _self_copy

    assert _self_copy("monitor", "kusto", "intent", "intent")
    # "create an association, using that property's type": a property's type is no
    # association's
    assert _self_copy("get_property", "create_association", "type", "type")
    assert _self_copy("get_product", "create_customer", "name", "name")
    assert not _self_copy("get_order", "create_refund", "order_id", "id")


def test_a_bulk_change_over_a_list_keyed_by_another_record_names_that_record():
    """The orders a list takes by the customer an order belongs to are "the orders of that
    order's customer", not "of that order" (Asana's tasks of a task's project)."""
    shop = load_example("ecommerce")
    plan = Plan(steps=[PlanStep(tool="get_order", given={"order_id": 3}),
                       PlanStep(tool="list_orders",
                                bound={"customer_id": Binding(step=0, field="customer_id")})])
    bulk = {"step": 1, "where": {"status": "pending"}, "write": "cancel_order",
            "key_param": "order_id", "key_field": "order_id", "args": {},
            "table": "orders", "answer": "none"}
    texts = {phrasing.bulk_instruction(shop, plan, bulk, random.Random(seed))
             for seed in range(6)}
    assert all("orders of that order's customer" in t or "order of that order's customer" in t
               for t in texts), texts


def test_an_argument_named_as_a_verb_says_what_the_record_does():
    """Excel's set_defined_name(name, refers_to) had asked for "the name TaxRate and the
    refers to set to '0.036'"."""
    assert phrasing_values.arg_phrase("refers_to", "0.036") == "referring to '0.036'"
    assert phrasing_values.arg_phrase("refers_to", "0.036", writes=True) == \
        "what it refers to to '0.036'"
    assert phrasing_values.arg_phrase("depends_on", "build") == "depending on 'build'"


def test_what_an_edit_finds_its_record_by_is_no_value_it_sets():
    """Word's delete_paragraph finds its paragraph by the document's filename and the
    paragraph's index together (`match = {...}`): both name the record, neither is set."""
    ref = next(r for r in corpus_sources() if r.name == "word")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = built_offline(mine_theme(read_source(ref.spec), iterations=0, seed=0).spec)
    assert "match = {" in spec.tool("delete_paragraph").source
    assert own_keys(spec, "delete_paragraph") == {"filename": "filename",
                                                  "paragraph_index": "paragraph_index"}
    assert own_keys(spec, "add_paragraph") == {}  # a create's lookups name other records


def test_an_anchor_is_where_new_content_goes_beside_not_a_destination():
    """Word's insert_header_near_text(target_text=...) had been asked to "insert a header to
    'Can you take a look at the backlog before tomorrow?'"; the end of a conversion is still
    where it goes."""
    assert phrasing_values.arg_phrase("target_text", "Looks good.") == \
        "next to the text 'Looks good.'"
    assert phrasing_values.arg_phrase("target_paragraph_index", 4) == "next to paragraph 4"
    assert phrasing_values.arg_phrase("target_timezone", "UTC") == "to UTC"


def test_a_person_a_record_names_is_not_its_name():
    """Word's documents had been picked as "the available document named Stephen
    Harrington", by their author; an assignee is no maker either."""
    assert phrasing_values.which("author", "Stephen Harrington") == "by Stephen Harrington"
    assert "named" not in phrasing_values.which("assignee", "Stephen Harrington")
    assert phrasing_values.which("name", "Stephen Harrington") == "named Stephen Harrington"


def test_a_global_id_names_its_record_as_an_id_does():
    """Asana's asana_get_tags_for_task(task_gid) had been asked as "the tag named feature with
    the task gid set to '06c77f9d6bd5'", GitLab's update_issue_note(issue_iid, ...) as "set its
    issue iid to '7bc3a5c06391'": a gid, iid or uid is the key of the record it names."""
    assert phrasing_values.arg_phrase("task_gid", "06c77f9d6bd5") == "task 06c77f9d6bd5"
    assert phrasing_values.role("task_gid", "06c77f9d6bd5") == "key"
    assert phrasing_values.noun("workspace_gid") == "workspace"
    # GitLab's issue_iid finds the note's issue: "with issue 7", never "set its issue iid to 7"
    assert phrasing_values.arg_phrase("issue_iid", "7") == "issue 7"


def test_a_list_of_keys_names_its_records():
    """Asana's get_tasks(task_ids=[17]): "for the task ids set to 17" is "for task 17"."""
    assert phrasing_values.arg_phrase("task_ids", [17]) == "task 17"
    assert phrasing_values.arg_phrase("task_ids", 17) == "task 17"
    assert phrasing_values.arg_phrase("taskIds", [3, 4]) == "tasks 3 and 4"
    assert phrasing_values.arg_phrase("user_ids", "abc") != "user abc"  # no key of a record
