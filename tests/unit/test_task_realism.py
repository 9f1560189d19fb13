"""Requests a person would write, levels that exist where the tool graph allows them, a
solvability gate that searches other chains, and a baseline that reads natural values.

Each test was run first on the code before the change and failed there.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import date, timedelta

import pytest
from langchain_core.messages import HumanMessage

from agent_world.design.offline.contract_expectations import STAND_IN_TEXT
from agent_world.envs import EnvRuntime, load_example
from agent_world.envs.episode import Observation, ObservationError
from agent_world.rollout.baseline_agent import BaselineChatModel
from agent_world.rollout.baseline_literals import literals
from agent_world.rollout.react_attempt import run_attempt
from agent_world.synthesis import action_phrases, phrasing, phrasing_clauses, phrasing_values
from agent_world.synthesis.gates import gate_no_shortcut, gate_solvable
from agent_world.tasks import walks
from agent_world.tasks.artefacts import artefacts
from agent_world.tasks.model import Task
from agent_world.tasks.toolgraph import build_tool_graph
from agent_world.tasks.walks import (
    Binding,
    Plan,
    PlanStep,
    ValueSampler,
    collapse_rereads,
    execute_plan,
    prune_detours,
    random_walk,
)
from tests.unit.task_helpers import graph_task


@pytest.fixture(scope="module")
def runtime():
    with EnvRuntime() as rt:
        yield rt


@pytest.fixture(scope="module")
def airline():
    return load_example("airline")


def _schemas(spec, names):
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.parameters}}
            for t in spec.tools if t.name in names]


def _first_call(spec, names, instruction):
    model = BaselineChatModel(seed=0, temperature=0.0).bind_tools(_schemas(spec, names))
    msg = model.invoke([HumanMessage(instruction)])
    assert msg.tool_calls, msg.content
    return msg.tool_calls[0]


# ---- the baseline reads dates and money as people write them ---------------------------------
def test_literals_read_natural_dates_relative_dates_and_money():
    lits = literals("Today is March 1, 2026. Book it for next Friday, pay $1,250.00, and "
                    "move the other one to 3 March 2026 at 14:30; the deposit was $74.96.")
    values = [(lit["kind"], lit["value"]) for lit in lits]
    # the request's own date, then what it says relative to it (March 1, 2026 is a Sunday)
    assert values[0] == ("date", "2026-03-01") and lits[0]["anchor"]
    assert ("date", "2026-03-06") in values
    assert ("date", "2026-03-03T14:30:00") in values
    assert ("number", 1250.0) in values and ("number", 74.96) in values
    # a date in words is one value, not a day and a year; "$1,250.00" is not 1 and 250
    assert not {1, 3, 250, 2026} & {v for k, v in values if k == "number"}
    # without a stated date there is nothing to count "next Friday" from: no guess
    assert [lit["value"] for lit in literals("Book it for next Friday.")] == []


def test_the_baseline_fills_a_date_argument_from_words(airline):
    call = _first_call(airline, {"get_flight_status"},
                       "What is the status of flight NW518 on March 5, 2026?")
    assert call["args"] == {"flight_number": "NW518", "date": "2026-03-05"}


def test_the_baseline_fills_a_money_argument():
    ecommerce = load_example("ecommerce")
    call = _first_call(ecommerce, {"search_products"},
                       "Search the products for headphones with a max price of $1,250.00.")
    assert call["args"].get("max_price") == 1250.0


def test_the_baseline_solves_a_task_that_says_next_friday(airline, runtime):
    """A flight that flies on several days, asked for the one a relative date names."""
    by_number: dict[str, list[dict]] = {}
    for f in airline.rows["flights"]:
        by_number.setdefault(f["flight_number"], []).append(f)
    number, flights = next((n, fs) for n, fs in sorted(by_number.items())
                           if len({f["status"] for f in fs}) > 1)
    flight = next(f for f in flights if f["status"] != flights[-1]["status"])
    day = date.fromisoformat(flight["scheduled_departure"][:10])
    today = day - timedelta(days=3)
    weekday = day.strftime("%A")
    task = Task(kind="graph", env_name="airline", env_fingerprint=airline.fingerprint,
                instruction=f"Today is {today.strftime('%B')} {today.day}, {today.year}. "
                            f"What is the status of flight {number} next {weekday}?",
                reference_answer=flight["status"], tool_view={"get_flight_status":
                                                              "get_flight_status"}).with_id()
    traj = run_attempt(task, BaselineChatModel(seed=1), spec=airline, runtime=runtime)
    assert traj.steps and traj.steps[0].arguments.get("date") == day.isoformat()
    assert traj.meta["passed"], traj.final_answer


# ---- requests a person would write ---------------------------------------------------------
def test_an_edit_states_what_it_sets(airline):
    """"Please edit appointment 57." named the record and nothing to set: an edit whose stated
    arguments are only keys gets one of its fields to set."""
    sampler = ValueSampler(airline)
    for seed in range(12):
        args = sampler.start_args("update_passenger", random.Random(seed))
        assert args is not None
        assert set(args) - {"reservation_id", "passenger_id"}, args
    # an action on a record is no edit: nothing is added to it
    assert set(sampler.start_args("cancel_reservation", random.Random(0))) == {"reservation_id"}


def test_a_write_is_asked_for_without_what_it_returns(airline):
    spec = airline.model_copy(deep=True)
    tool = next(t for t in spec.tools if t.name == "add_baggage")
    tool.description = "Create a checked bag and return the new record. Refused when full."
    assert action_phrases.action_phrase(spec, "add_baggage") == "create a checked bag"


def test_a_description_about_the_tool_is_asked_as_the_request(airline):
    spec = airline.model_copy(deep=True)
    tool = next(t for t in spec.tools if t.name == "add_baggage")
    tool.description = "Use this tool to add a checked bag to a reservation."
    assert action_phrases.action_phrase(spec, "add_baggage") == \
        "add a checked bag to a reservation"


@pytest.mark.parametrize("placeholder", ["x", STAND_IN_TEXT, "# Q1 backlog\n\n- pricing page"])
def test_a_placeholder_a_test_passes_is_no_value_to_ask_for(airline, placeholder):
    """The designer's tests pass 'x' for an argument the tool ignores, and a stand-in text
    for a value a write sets when nothing stored fits, and a page of text is no value a
    request states; tasks asked "with the node ids set to 'x'", "with the project root set to
    'Damaged beyond repair'" and "with markdown '# Q1 backlog ...'"."""
    spec = airline.model_copy(deep=True)
    for test in spec.tests:
        if test.tool == "get_reservation" and test.expect.ok:
            test.arguments = {**test.arguments, "reservation_id": placeholder}
    sampler = ValueSampler(spec)
    props = spec.tool("get_reservation").parameters["properties"]
    assert placeholder not in sampler.candidates("get_reservation", "reservation_id",
                                                 props["reservation_id"])
    for seed in range(8):
        args = sampler.start_args("get_reservation", random.Random(seed))
        assert args is None or args.get("reservation_id") != placeholder


def test_a_key_with_a_role_reads_as_its_entity():
    assert phrasing_values.arg_phrase("source_timezone_id", 33) == "timezone 33 as the source"
    # a role that is no noun on its own names the record again
    assert phrasing_values.arg_phrase("pickup_branch_id", 13) == \
        "branch 13 as the pickup branch"
    lits = literals("Convert it from timezone 33 as the source to timezone 10 as the target.")
    assert lits[0]["context"][-1] == "source" and lits[1]["context"][-1] == "target"



def test_a_key_whose_role_is_a_direction_reads_with_it_in_front():
    """transfer_copy(to_branch_id=1) read "transfer copy 10 to branch 1 as the to"."""
    assert phrasing_values.key_phrase("to_branch_id", 1) == "to branch 1"
    assert phrasing_clauses._with_key("transfer a copy to another branch", "branch",
                                      "to branch 1") == "transfer a copy to branch 1"
    assert phrasing_clauses._with_key("transfer copy 10", "branch", "to branch 1") == \
        "transfer copy 10 to branch 1"


def test_the_argument_name_check_reads_values_in_their_case(airline):
    """Under re.I the value pattern `[A-Z]{2,}` took any word: "whose utc offset is '-06:00'"
    was an artefact, which rejected every level 3-5 candidate of the `time` environment."""
    spec = airline.model_copy(deep=True)
    tool = next(t for t in spec.tools if t.name == "search_flights")
    tool.parameters["properties"]["utc_offset"] = {"type": "string"}
    assert not artefacts("Find the flights whose utc offset is '-06:00'.", spec,
                         ["search_flights"])
    assert "argument-name" in artefacts("Find the flights with utc offset '-06:00'.", spec,
                                        ["search_flights"])
    assert "argument-name" in artefacts("Find the flights with utc offset NW100.", spec,
                                        ["search_flights"])


def test_a_look_up_that_feeds_nothing_is_left_out_of_the_plan(airline):
    """"Check in reservation R. Next, find the customer. Next, ..." with the customer never
    used: the detour is dropped, bindings re-pointed."""
    plan = Plan(steps=[
        PlanStep(tool="get_reservation", given={"reservation_id": "R1"}),
        PlanStep(tool="get_customer", bound={"customer_id": Binding(step=0,
                                                                    field="customer_id")}),
        PlanStep(tool="check_in", bound={"reservation_id": Binding(step=0,
                                                                   field="reservation_id")}),
        PlanStep(tool="get_reservation", bound={"reservation_id": Binding(
            step=2, field="reservation_id")})])
    pruned, kept = prune_detours(plan, airline)
    assert kept == [0, 2, 3]
    assert [s.tool for s in pruned.steps] == ["get_reservation", "check_in", "get_reservation"]
    assert pruned.steps[2].bound["reservation_id"].step == 1


# ---- solvable, and not with fewer calls --------------------------------------------------------
_task = graph_task


def test_a_task_that_passes_with_fewer_calls_is_rejected(runtime):
    spec = load_example("ecommerce")
    order = next(o for o in spec.rows["orders"] if o["status"] == "delivered")
    plan = Plan(steps=[
        PlanStep(tool="list_orders", given={"customer_id": order["customer_id"]},
                 select={"placed_at": order["placed_at"]}),
        PlanStep(tool="get_order", bound={"order_id": Binding(step=0, field="order_id")})])
    # the list already shows each order's status: opening the order is a call too many
    padded = _task(spec, runtime, plan, {"kind": "field", "step": 1, "field": "status"},
                   f"List customer {order['customer_id']}'s orders, open the one placed at "
                   f"{order['placed_at']} and tell me its status.")
    res = gate_no_shortcut(padded, spec, runtime)
    assert not res.passed and "get_order" in res.detail
    # the tracking number is only on the order itself: both calls are needed
    field = next(f for f in ("tracking_number", "carrier", "shipping_address")
                 if f not in spec.tool("list_orders").description)
    needed = _task(spec, runtime, plan, {"kind": "field", "step": 1, "field": field},
                   f"List customer {order['customer_id']}'s orders, open the one placed at "
                   f"{order['placed_at']} and tell me its {field.replace('_', ' ')}.")
    assert gate_no_shortcut(needed, spec, runtime).passed


def test_a_look_up_that_only_hands_on_what_the_request_told_it_is_rejected(runtime):
    """"Look up customer C, then count that customer's orders": the request states the value
    the first call hands on, so the second call alone can be made."""
    spec = load_example("ecommerce")
    order = spec.rows["orders"][0]
    plan = Plan(steps=[
        PlanStep(tool="get_order", given={"order_id": order["order_id"]}),
        PlanStep(tool="get_customer", bound={"customer_id": Binding(step=0,
                                                                    field="customer_id")})])
    told = _task(spec, runtime, plan, {"kind": "field", "step": 1, "field": "email"},
                 f"Open order {order['order_id']}, then tell me its customer's email.")
    assert gate_no_shortcut(told, spec, runtime).passed  # the customer id is not told
    # customer C looked up only to hand C on to the list of C's orders: the list alone
    cid = order["customer_id"]
    handed = Plan(steps=[
        PlanStep(tool="get_customer", given={"customer_id": cid}),
        PlanStep(tool="list_orders", bound={"customer_id": Binding(step=0,
                                                                   field="customer_id")})])
    detour = _task(spec, runtime, handed, {"kind": "count", "step": 1,
                                           "where": {"status": order["status"]}},
                   f"Look up customer {cid}, then tell me how many of that customer's orders "
                   f"are {order['status']}.")
    res = gate_no_shortcut(detour, spec, runtime)
    assert not res.passed and "call 1 (get_customer) can be left out" in res.detail, res.detail


def test_a_walk_back_to_its_first_list_is_rejected(runtime):
    """"Find customer C's delivered order, open it, count its customer's delivered orders":
    the first call already lists what the last one counts."""
    spec = load_example("ecommerce")
    order = next(o for o in spec.rows["orders"] if o["status"] == "delivered")
    cid = order["customer_id"]
    plan = Plan(steps=[
        PlanStep(tool="list_orders", given={"customer_id": cid, "status": "delivered"},
                 select={"order_id": order["order_id"]}),
        PlanStep(tool="get_order", bound={"order_id": Binding(step=0, field="order_id")}),
        PlanStep(tool="list_orders", bound={"customer_id": Binding(step=1,
                                                                   field="customer_id")})])
    circular = _task(spec, runtime, plan, {"kind": "count", "step": 2,
                                           "where": {"status": "delivered"}},
                     f"Find customer {cid}'s delivered order {order['order_id']}, open it and "
                     "tell me how many of its customer's orders are delivered.")
    res = gate_no_shortcut(circular, spec, runtime)
    assert not res.passed and "the first 1 of 3 calls already show the answer" in res.detail


def test_an_argument_another_chain_reads_is_solvable(airline, runtime):
    """The request gives the customer's email, the gold chain passes the customer id: the
    environment's customer look-up by email is another chain that reads it."""
    c = airline.rows["customers"][3]
    plan = Plan(steps=[PlanStep(tool="get_loyalty_balance",
                                given={"customer_id": c["customer_id"]})])
    task = _task(airline, runtime, plan, {"kind": "field", "step": 0, "field": "tier"},
                 f"I am the customer with email {c['email']}. Which loyalty tier am I in?")
    res = gate_solvable(task, airline, runtime)
    assert res.passed and "get_customer" in res.detail, res.detail
    hidden = task.model_copy(update={"instruction": "Which loyalty tier am I in?"})
    assert not gate_solvable(hidden, airline, runtime).passed


# ---- levels where the tool graph allows them ----------------------------------------------------
class _Refusing:
    """An episode whose every write is refused once (the engine rolls a refusal back)."""

    def __init__(self, episode, spec):
        self.episode, self.spec, self.refused, self.done = episode, spec, [], 0
        self.refused_at: int | None = None  # successful calls before the first refusal

    def reset(self):
        self.episode.reset()

    def state_hash(self, ignore=None):
        return self.episode.state_hash(ignore)

    def step(self, tool, arguments):
        if self.spec.tool(tool).mutates and tool not in self.refused:
            self.refused.append(tool)
            if self.refused_at is None:
                self.refused_at = self.done
            return Observation(step=0, tool=tool, arguments=arguments, ok=False,
                               error=ObservationError(kind="tool_error", message="refused"))
        obs = self.episode.step(tool, arguments)
        self.done += obs.ok
        return obs


def test_a_refused_write_does_not_end_the_walk(airline, runtime):
    """Book lending's walks ended at their first refused write (one or two calls, no level
    5): a refusal changes nothing, so the walk tries another way on."""
    graph = build_tool_graph(airline, runtime=runtime)
    ep = runtime.open(airline, seed=0)
    try:
        went_on = 0
        for seed in range(16):  # walks are random: most end before their first write
            wrapped = _Refusing(ep, airline)
            plan = random_walk(airline, graph, wrapped, random.Random(seed), 5,
                               start="get_reservation")
            if plan is not None and wrapped.refused_at is not None:
                went_on += len(plan.steps) > wrapped.refused_at
    finally:
        ep.close()
    assert went_on


def test_a_condition_may_gate_a_write_on_a_record_read_before(airline):
    """"If the flight's status is X, cancel that reservation": the write is aimed at the
    record that feeds it, not the branch's."""
    plan = Plan(steps=[
        PlanStep(tool="get_reservation", given={"reservation_id": "MGX7Q2"}),
        PlanStep(tool="get_flight_status", bound={"flight_number": Binding(
            step=0, field="flight_number")})])
    cond = {"step": 1, "field": "status", "value": "scheduled", "holds": True,
            "else_field": "gate",
            "write": PlanStep(tool="cancel_reservation", bound={"reservation_id": Binding(
                step=0, field="reservation_id")}).model_dump(mode="json")}
    text = phrasing.conditional_instruction(airline, plan, cond, random.Random(0))
    assert "that reservation" in text and "flight's reservation" not in text, text


def test_a_re_read_is_collapsed_before_the_gates(runtime):
    """List the orders, open one, cancel it: the cancel reads the order's id from the list as
    well, so the walk keeps the list and the cancel (the gate would reject the padded one)."""
    spec = load_example("ecommerce")
    order = next(o for o in spec.rows["orders"] if o["status"] == "pending")
    plan = Plan(steps=[
        PlanStep(tool="list_orders", given={"customer_id": order["customer_id"]},
                 select={"order_id": order["order_id"]}),
        PlanStep(tool="get_order", bound={"order_id": Binding(step=0, field="order_id")}),
        PlanStep(tool="cancel_order", bound={"order_id": Binding(step=1, field="order_id")})])
    ep = runtime.open(spec, seed=0)
    try:
        results = [o.result for o in execute_plan(plan, ep)]
    finally:
        ep.close()
    short, kept_results = collapse_rereads(plan, results, spec)
    assert [s.tool for s in short.steps] == ["list_orders", "cancel_order"]
    assert short.steps[1].bound["order_id"].step == 0 and len(kept_results) == 2


def test_a_write_that_requires_nothing_is_still_asked_with_its_values():
    """"Could you place a hold on a title ...? Thanks!" was emitted with no title, member or
    branch: a write with no required argument is given its keys and fields."""
    spec = load_example("ecommerce").model_copy(deep=True)
    tool = next(t for t in spec.tools if t.name == "cancel_order")
    tool.parameters["required"] = []
    sampler = ValueSampler(spec)
    assert all(sampler.start_args("cancel_order", random.Random(seed)).get("order_id")
               for seed in range(8))


def test_a_value_a_write_copies_from_a_record_is_said(airline):
    plan = Plan(steps=[
        PlanStep(tool="get_customer", given={"customer_id": 4}),
        PlanStep(tool="update_passenger", given={"reservation_id": "MGX7Q2", "passenger_id": 1},
                 bound={"first_name": Binding(step=0, field="first_name")})])
    text = phrasing_clauses.step_clause(airline, plan, 1, random.Random(0))
    assert "first name to that customer's first name" in text, text


@pytest.mark.parametrize(("description", "said"), [
    # what the tool allows or what comes after it is the tool's, not the user's ("create a
    # new branch from an optional base branch", "suspend a member account and reactivate it
    # later")
    ("Cancel a reservation and rebook it later.", "cancel a reservation"),
    ("Cancel a reservation with an optional reason for the airline.", "cancel a reservation"),
    # a state the record must be in stayed behind the pronoun: "If its status is 'pending',
    # cancel it that has not shipped yet"
    ("Cancel an order that has not shipped yet.", "cancel an order"),
    ("Cancel a reservation which is already confirmed.", "cancel a reservation"),
])
def test_what_a_tool_allows_requires_or_leads_to_is_no_part_of_the_request(
        airline, description, said):
    spec = airline.model_copy(deep=True)
    next(t for t in spec.tools if t.name == "cancel_reservation").description = description
    assert action_phrases.action_phrase(spec, "cancel_reservation") == said


@pytest.mark.parametrize(("description", "said"), [
    # "Please create branch 41 commit for commit 17": the branch key was aimed at the first
    # word of "a branch commit"
    ("Create a reservation flight.",
     "create a reservation flight for flight 17 and reservation MGX7Q2"),
    # a join row is a link between two records, said as one: added, not created
    ("Add a flight to a reservation and return the new record.",
     "add flight 17 to reservation MGX7Q2"),
])
def test_a_key_does_not_split_the_tool_s_own_noun(airline, description, said):
    spec = airline.model_copy(deep=True)
    base = next(t for t in spec.tools if t.name == "cancel_reservation")
    link = base.model_copy(deep=True, update={
        "name": "create_reservation_flight", "description": description,
        "parameters": {"type": "object", "required": ["reservation_id", "flight_id"],
                       "properties": {"reservation_id": {"type": "string"},
                                      "flight_id": {"type": "integer"}}}})
    spec.tools.append(link)
    text = phrasing_clauses.write_clause(spec, "create_reservation_flight",
                                         {"reservation_id": "MGX7Q2", "flight_id": 17},
                                         random.Random(0))
    assert text == said, text


def test_a_join_table_s_create_tool_says_what_it_links(built):
    from agent_world.design.offline.schema_plans import create_plan

    spec = built["git"]
    plan = create_plan(spec, spec.table("branch_commits"), "create_branch_commit")
    assert plan is not None and plan.description.startswith("Add a commit to a branch"), \
        plan.description


def test_a_command_named_by_its_verb_is_about_the_records_it_reads(built):
    """git_show and git_log read commits, git_status working tree changes: "the commit whose
    sha is ...", never "the show whose sha is ..."."""
    from agent_world.tasks.words import tool_entity

    spec = built["git"]
    assert tool_entity(spec, "git_show") == "commit"
    assert tool_entity(spec, "git_log") == "commit"
    assert tool_entity(spec, "git_status") == "working tree change"
    assert tool_entity(spec, "git_create_branch") == "branch"


def test_a_tool_named_by_its_bare_verb_is_about_what_it_reads_not_its_call_log(built):
    """fetch reads pages; the fetches table is a log of what was fetched: "the page's content
    type", not "the fetch's content type"."""
    from agent_world.tasks.words import tool_entity

    spec = built["fetch"]
    assert {t.name for t in spec.tables} >= {"fetches", "pages"}
    assert tool_entity(spec, "fetch") == "page"
    # and the log gets no look-up of the arena's ("find fetch 37" asked for a past call)
    assert not {"get_fetch", "list_fetches"} & {t.name for t in spec.tools}


def test_a_tool_named_by_a_word_no_record_has_is_about_the_records_it_reads(built):
    """search_catalogue lists titles ("the titles", not "the catalogues"); a qualified name
    (child loan, available slot) stays as it is; a mass noun is counted as entries."""
    from agent_world.tasks.words import entity_plural, tool_entity

    library = built["book-lending-prd"]
    assert tool_entity(library, "search_catalogue") == "title"
    assert tool_entity(library, "view_child_loans") == "child loan"
    assert entity_plural("loan history") == "loan history entries"
    assert entity_plural("copy") == "copies"


@pytest.mark.parametrize("act, ent, pronoun, said", [
    ("suspend a member account", "member", "all of them", "suspend all of their accounts"),
    ("suspend a member account", "member", "it", "suspend its account"),
    ("place a hold on a title for a member", "title", "it", "place a hold on it for a member"),
    ("check in a copy at branch 4", "copy", "it", "check it in at branch 4"),
    ("cancel a hold", "hold", "each of them", "cancel each of them")])
def test_a_bulk_write_is_aimed_at_its_targets_in_english(act, ent, pronoun, said):
    assert phrasing._them(act, ent, pronoun) == said


def test_an_action_on_an_earlier_record_says_that_record_once(built):
    """git_reset given the repository read before: "unstage all staged changes for that
    repository", not "... that repository's working tree change, using that repository's
    path" (the path is what names the repository)."""
    spec = built["git"]
    repo = spec.rows["repositories"][0]
    plan = Plan(steps=[
        PlanStep(tool="get_repository", given={"repository_id": repo["id"]}),
        PlanStep(tool="git_reset", bound={"repo_path": Binding(step=0, field="path")})])
    clause = phrasing_clauses.step_clause(spec, plan, 1, random.Random(0))
    assert "that repository" in clause and "path" not in clause \
        and "working tree change" not in clause, clause


def test_the_service_s_own_tools_are_asked_for_in_their_own_words(built, runtime):
    """fetch (a tool named by a plain verb) is the request's verb, not a leaked tool name;
    walks start at the service's own tools more often than at its database's look-ups;
    a query's rows are rows, and feed no other tool."""
    from agent_world.synthesis.task_text import names_a_tool
    from agent_world.tasks.toolgraph import build_tool_graph
    from agent_world.tasks.words import runs_sql, source_tools, tool_entity

    fetch = built["fetch"]
    assert "fetch" in source_tools(fetch) and "get_page" not in source_tools(fetch)
    assert not names_a_tool("Fetch https://example.com/a and tell me its status code.",
                            fetch, {"fetch": "fetch"})
    assert names_a_tool("Use get_page on page 3.", fetch, {})
    starts = Counter()
    graph = build_tool_graph(fetch, runtime=runtime)
    with runtime.open(fetch) as ep:
        for seed in range(300):
            plan = random_walk(fetch, graph, ep, random.Random(seed), 1)
            if plan is not None:
                starts[plan.steps[0].tool] += 1
    # about 30 of 300 (a tenth, as often as a look-up with many ways on); about 10 without
    # SOURCE_START's weight
    assert starts["fetch"] >= 20, starts
    sqlite = built["sqlite"]
    assert runs_sql(sqlite, "read_query") and not runs_sql(sqlite, "list_orders")
    assert tool_entity(sqlite, "read_query") == "row"
    assert not list(build_tool_graph(sqlite, runtime=runtime).successors("read_query"))


def test_under_the_tool_cap_the_records_the_service_acts_on_stay_readable(built):
    """Check-in charges fines and waive_fine waives them: the fines stay readable."""
    names = {t.name for t in built["book-lending-prd"].tools}
    assert {"waive_fine", "get_fine", "list_fines"} <= names


def test_a_record_that_owns_what_the_act_names_is_said_as_its_owner():
    assert phrasing_clauses._with_key("suspend a member account", "member", "member 1") == \
        "suspend member 1's account"
    assert phrasing_clauses._with_key("place a hold on a title for a member", "title",
                                      "title 2") == "place a hold on title 2 for a member"


def test_a_passed_on_key_is_said_with_the_earlier_record_s_own_field(built):
    """"add copies of that hold's title to that hold's home branch": the hold's pickup branch
    fed add_copies' home branch, and a hold has no home branch."""
    spec = built["book-lending-prd"]
    tool = spec.tool("add_copies")
    params = tool.parameters["properties"]
    home = next(p for p in params if "home" in p and p.endswith("branch_id"))
    text = phrasing_clauses.write_clause(
        spec, "add_copies", {"title_id": 5, home: 3}, random.Random(0), prev="hold",
        bound_keys=("title_id", home), own_roles=frozenset({"title_id"}),
        fields={"title_id": "title_id", home: "pickup_branch_id"})
    assert "that hold's pickup branch" in text and "hold's home branch" not in text, text
    assert "that hold's title" in text, text
    # a place the argument says the act happens at: "check in that loan's copy at that
    # loan's branch", not "... for that loan's branch"
    text = phrasing_clauses.write_clause(
        spec, "check_in_copy", {"copy_id": 4, "branch_id": 2}, random.Random(0), prev="loan",
        bound_keys=("copy_id", "branch_id"), fields={"copy_id": "copy_id",
                                                     "branch_id": "branch_id"})
    assert "at that loan's branch" in text, text
    # and a place given as a key: "check in that copy history's copy at branch 14", not "for"
    text = phrasing_clauses.write_clause(
        spec, "check_in_copy", {"branch_id": 14}, random.Random(0), prev="loan",
        bound_keys=("copy_id",), fields={"copy_id": "copy_id"})
    assert text == "check in that loan's copy at branch 14", text
    # keys from two earlier records, each said as its own: the member came from the loan read
    # before the copy ("for that copy's member": a copy has no member)
    text = phrasing_clauses.write_clause(
        spec, "place_hold", {}, random.Random(0), prev="copy",
        bound_keys=("title_id", "member_id"), fields={"title_id": "title_id",
                                                      "member_id": "member_id"},
        origins={"title_id": "copy", "member_id": "loan"})
    assert "that copy's title" in text and "that loan's member" in text, text
    assert "copy's member" not in text, text


def test_a_state_is_set_onward_from_the_record_s_own(built):
    """"Change the status of order 14: set its status to pending" (a shipped order), "every
    shipped order ... mark each of them as paid": a state set on a record moves along the
    lifecycle its source lists, or back to a standing state, never back to waiting."""
    from agent_world.tasks.sampling import ValueSampler, ahead

    orders = ["pending", "paid", "shipped", "delivered", "cancelled"]
    assert ahead(orders, "shipped") == ["delivered", "cancelled"]
    assert ahead(orders, "paid")[0] == "shipped" and ahead(orders, "delivered") == []
    assert ahead(["active", "suspended", "expired"], "suspended") == ["active", "expired"]
    spec = built["sqlite"]
    sampler = ValueSampler(spec)
    shipped = next(o for o in spec.rows["orders"] if o["status"] == "shipped")
    rng = random.Random(0)
    for want in orders:
        got = sampler.onward("set_order_status", {"order_id": shipped["id"], "status": want},
                             rng)
        assert got["status"] in ("delivered", "cancelled"), (want, got)
    done = next(o for o in spec.rows["orders"] if o["status"] == "cancelled")
    assert sampler.onward("set_order_status", {"order_id": done["id"], "status": "paid"},
                          rng) is None


class _Watching:
    """An episode that notes, for every successful write, whether the database changed."""

    def __init__(self, episode):
        self.episode, self.writes = episode, []

    def reset(self):
        self.episode.reset()

    def state_hash(self):
        return self.episode.state_hash()

    def _content(self):
        # a write time the engine stamps is no change anybody asked for
        return self.episode.state_hash(ignore={
            t.name: [c.name for c in t.columns if c.name in ("updated_at", "modified_at")]
            for t in self.episode.spec.tables})

    def step(self, tool, arguments):
        before = self._content()
        obs = self.episode.step(tool, arguments)
        if obs.ok and self.episode.spec.tool(tool).mutates:
            self.writes.append((tool, self._content() != before))
        return obs


def _walks(runtime, seeds: int):
    """(seed, plan, episode) of five-call random walks over the ecommerce example."""
    spec = load_example("ecommerce")
    graph = build_tool_graph(spec, runtime=runtime)
    sampler = ValueSampler(spec)
    with runtime.open(spec) as episode:
        for seed in range(seeds):
            plan = random_walk(spec, graph, episode, random.Random(seed), length=5,
                               sampler=sampler)
            if plan is not None:
                yield seed, plan, episode


def test_no_walk_holds_a_write_that_changes_nothing(runtime):
    """"Edit that product: set its currency to USD" on a product created in USD one step
    before, "mark that order as paid" on a paid order: a write that leaves the database as it
    was asks for nothing (and a policy that skips it ends in the same state)."""
    writes = 0
    for seed, plan, episode in _walks(runtime, 60):
        watching = _Watching(episode)
        watching.reset()
        execute_plan(plan, watching)
        assert all(changed for _, changed in watching.writes), (seed, plan.steps)
        writes += len(watching.writes)
    assert writes >= 20  # the walks do write


def test_a_write_that_only_moves_its_write_time_changes_nothing(built, runtime):
    """Google Search Console's "edit that sitemap: set its feedpath to" the URL it was just
    submitted with changed only the sitemap's updated_at, and the walk took it for a change:
    update_member with the email the member has is no change, another email is one."""
    spec = built["book-lending-prd"]
    with runtime.open(spec) as episode:
        member = episode.query("SELECT id, email FROM members WHERE email IS NOT NULL LIMIT 1")[0]
        before, stamped = walks._content_hash(episode), episode.state_hash()
        obs = episode.step("update_member", {"member_id": member["id"], "email": member["email"]})
        assert obs.ok, obs.error
        assert episode.state_hash() != stamped  # the member's updated_at moved
        assert walks._no_change(episode, before)
        before = walks._content_hash(episode)
        assert episode.step("update_member", {"member_id": member["id"],
                                              "email": "someone.else@example.org"}).ok
        assert not walks._no_change(episode, before)


def test_a_bare_id_names_the_returned_record_not_one_nested_in_it(built, runtime):
    """view_title_details returns a title with its copies: its `id` fed get_copy(copy_id),
    so "look up the copy of that title" opened copy 8 (of another title) for title 8."""
    spec = built["book-lending-prd"]
    graph = build_tool_graph(spec, runtime=runtime)
    bound = [b for b in (graph.get_edge_data("view_title_details", "get_copy") or {}).get(
        "bindings", []) if b["param"] == "copy_id"]
    assert bound == []
    lists = graph.get_edge_data("view_title_details", "list_copies")["bindings"]
    assert any(b["field"] == "title_id" and b["param"] == "title_id" for b in lists)


def test_a_filter_clause_that_restricts_follows_its_noun_without_a_comma(built):
    """"the local branches in '/srv/git/x', that do not contain commit ..." read as an
    aside."""
    got = phrasing_clauses.list_filters(built["git"], "git_branch", {
        "repo_path": "/srv/git/x", "branch_type": "local", "not_contains": "554245e5f828"})
    assert got == ("local", "in '/srv/git/x' that do not contain commit 554245e5f828", "")


def test_no_walk_reads_a_record_again_with_nothing_written_since(runtime):
    """A chain that reads a record it already read, with nothing written since, asks for
    nothing new."""
    long_reads = 0
    for seed, plan, episode in _walks(runtime, 80):
        seen: dict = {}
        writes = 0
        episode.reset()
        for step, obs in zip(plan.steps, execute_plan(plan, episode), strict=True):
            assert obs is not None and obs.ok
            if episode.spec.tool(step.tool).mutates:
                writes += 1
                continue
            if isinstance(obs.result, dict) and obs.result.get("id") is not None:
                key = (obs.result["id"], frozenset(k for k, v in obs.result.items()
                                                   if not isinstance(v, list | dict)))
                assert seen.get(key) != writes, (seed, [s.tool for s in plan.steps])
                seen[key] = writes
        long_reads += len(plan.steps) >= 3
    # the walks still go on (13 of 80 reach 3 calls; no edit of what a walk just created
    # since, so fewer than before)
    assert long_reads >= 8


def test_stated_values_are_sayable_and_filters_read_as_words():
    """A page body of paragraphs was set in a request; "with the not contains set to";
    "How many copy history named status are there?" (a change log's field_name)."""
    spec = load_example("ecommerce")
    sampler = ValueSampler(spec)
    for tool in spec.tools:
        for param, schema in tool.parameters.get("properties", {}).items():
            for v in sampler.candidates(tool.name, param, schema):
                assert not (isinstance(v, str) and ("\n" in v or len(v) > 120)), (tool.name, v)
    assert phrasing_values.arg_phrase("not_contains", "554245e5f828") == \
        "that do not contain commit 554245e5f828"
    assert phrasing_values.which("field_name", "status") == "whose field name is status"
    assert phrasing_values.which("full_name", "Ann Lee") == "named Ann Lee"


def test_positions_dates_and_ratings_are_never_added_up():
    """"Add up the year of the dst transitions: what is the total?" asks for nothing a person
    wants; their highest or lowest still is a question."""
    from agent_world.synthesis.task_answers import _aggregations

    items = [{"id": i, "year": 2020 + i % 3, "rating": i % 5, "page_number": i,
              "status_code": 200 + 100 * (i % 3),
              "amount": 10.0 * i, "number_of_guests": i % 4 + 1, "kind": "ab"[i % 2]}
             for i in range(1, 9)]
    kinds: dict[str, set[str]] = {}
    for seed in range(60):
        for option in _aggregations(0, items, random.Random(seed)):
            if "field" in option:
                kinds.setdefault(option["field"], set()).add(option["kind"])
    for field in ("year", "rating"):
        assert kinds[field] <= {"max", "min"}, (field, kinds[field])
    # numbers that name or place a record: no extreme either
    assert "page_number" not in kinds and "status_code" not in kinds
    assert "sum" in kinds["amount"] and "sum" in kinds["number_of_guests"]


def test_a_user_reference_or_a_page_start_is_no_quantity():
    """"Add up the created by of the workspaces" (user ids) and "the highest start" (where a
    page of arXiv results began) were aggregations."""
    from agent_world.synthesis.task_answers import _aggregations

    items = [{"id": i, "created_by": 100 + i, "start": 10 * i, "offset": i,
              "seats": i % 4 + 1, "plan": "ab"[i % 2]} for i in range(1, 9)]
    fields = {o.get("field") for seed in range(40)
              for o in _aggregations(0, items, random.Random(seed))}
    assert "seats" in fields and not fields & {"created_by", "start", "offset"}
    limits = [{"id": i, "group_expansion_max": i % 3 + 1, "retry_limit": i % 4 + 2,
               "seats": i} for i in range(1, 9)]
    sums = {o.get("field") for seed in range(40)
            for o in _aggregations(0, limits, random.Random(seed)) if o["kind"] == "sum"}
    assert sums == {"seats"}


def test_a_value_is_drawn_from_the_tool_s_own_records(airline):
    """A product was named "Anne Gutierrez DDS": a write's value came from every column of the
    name in the database (customers' names for a product); it comes from the records the tool
    writes, then from the rest."""
    sampler = ValueSampler(airline)
    own = {p["first_name"] for p in airline.rows["passengers"]}
    others = {c["first_name"] for c in airline.rows["customers"]} - own
    assert others  # else the test proves nothing
    tested = set(sampler.tested.get(("update_passenger", "first_name"), []))
    drawn = set(sampler.candidates("update_passenger", "first_name", {"type": "string"}))
    assert drawn and drawn <= own | tested, drawn - own - tested


def test_a_write_copies_no_value_a_person_would_not_ask_to_copy():
    """"Create that customer, setting its name to that customer's name" (its own kind),
    "setting its status to that slot's status" on an appointment (another record's lifecycle):
    such values are sampled instead; a passenger's name copied from a customer is asked."""
    from agent_world.tasks.walks import _self_copy

    assert _self_copy("get_customer", "create_customer", "name", "name")
    assert _self_copy("get_slot", "set_appointment_status", "status", "status")
    assert _self_copy("get_product", "create_order_item", "name", "name")
    # "create a repository, using that working tree change's path": a file's path is no
    # repository's
    assert _self_copy("get_working_tree_change", "create_repository", "path", "path")
    assert not _self_copy("get_repository", "git_checkout", "repo_path", "path")
    assert not _self_copy("get_customer", "update_passenger", "first_name", "first_name")
    assert not _self_copy("get_slot", "book_appointment", "slot_id", "id")


def test_an_edit_says_its_name_and_email_as_what_it_sets():
    """"set the name Emily Thomas", "set the email address x@y": an edit reads "set its name
    to Emily Thomas"."""
    assert phrasing_values.arg_phrase("name", "Emily Thomas", writes=True) == \
        "its name to Emily Thomas"
    assert phrasing_values.arg_phrase("email", "a@b.org", writes=True) == "its email address to a@b.org"
    assert phrasing_values.arg_phrase("full_name", "Karen Johnson", writes=True) == \
        "its full name to Karen Johnson"
    # a creation keeps naming what it makes
    assert phrasing_values.arg_phrase("name", "develop") == "named develop"


def test_a_count_of_one_is_singular_and_an_id_pick_names_the_record(airline):
    assert phrasing_values.which("items", 1) == "with 1 item"
    assert phrasing_values.which("items", 3) == "with 3 items"
    pick = Plan(steps=[PlanStep(tool="list_customer_reservations", given={}, select={"id": 16})])
    text = phrasing_clauses.step_clause(airline, pick, 0, random.Random(0))
    # the owner's name before the record's is no part of it: "look up reservation 16"
    assert "whose id is" not in text and text == "look up reservation 16", text


def test_records_are_picked_by_the_person_who_made_them_not_named_after_them():
    assert phrasing_values.which("author_name", "Jeffrey Luna") == "by Jeffrey Luna"
    assert phrasing_values.which("owner_name", "Ann Lee") == "by Ann Lee"
    assert phrasing_values.which("name", "Widget") == "named Widget"
    assert phrasing_values.which("branch_name", "fix/x") == "named fix/x"


def test_a_call_given_one_record_in_two_roles_is_no_task():
    """"create a time conversion for that transition's timezone as the source and that
    transition's timezone as the target": a conversion from a zone to itself."""
    from agent_world.synthesis.synthesizer import _one_record_twice

    twice = Plan(steps=[
        PlanStep(tool="get_dst_transition", given={"dst_transition_id": 5}),
        PlanStep(tool="create_time_conversion", given={"time": "00:45"},
                 bound={"source_timezone_id": Binding(step=0, field="timezone_id"),
                        "target_timezone_id": Binding(step=0, field="timezone_id")})])
    assert _one_record_twice(twice)
    assert _one_record_twice(Plan(steps=[PlanStep(
        tool="create_time_conversion",
        given={"source_timezone_id": 3, "target_timezone_id": 3})]))
    assert not _one_record_twice(Plan(steps=[PlanStep(
        tool="create_time_conversion",
        given={"source_timezone_id": 3, "target_timezone_id": 4})]))
    assert not _one_record_twice(Plan(steps=[PlanStep(   # a member and a branch: two records
        tool="check_out", given={"member_id": 3, "branch_id": 3})]))


def test_the_values_of_one_call_come_from_one_record():
    """"create a dst transition, using year 2026 and the transition at utc March 30, 2025 and
    the offset before '+13:00' and the offset after '-08:00'": four draws that contradict each
    other. A call's values are one stored record's (its references and unique values apart)."""
    spec = load_example("ecommerce")
    sampler = ValueSampler(spec)
    stored = {(r["city"], r["state"], r["postal_code"]) for r in spec.rows["addresses"]}
    drawn = []
    for seed in range(30):
        row = sampler.row_of("add_address", random.Random(seed))
        assert row and "address_id" not in row and "customer_id" not in row
        props = spec.tool("add_address").parameters["properties"]
        drawn.append(tuple(sampler.draw("add_address", p, props[p], random.Random(seed), row)
                           for p in ("city", "state", "postal_code")))
    assert all(d in stored for d in drawn), drawn
    assert len(set(drawn)) > 3


def test_a_conversion_reads_from_to_and_a_value_takes_the_place_of_its_kind():
    """"convert time between timezones for the source timezone set to 'America/New_York' and
    time '16:00' and the target timezone set to ...", "get current time in a specific timezone
    for timezone 'Europe/Paris'", "fetch a URL ... for url ... and the max length set to 200"."""
    from agent_world.envs.spec import ToolSpec

    spec = load_example("airline").model_copy(deep=True)
    for name, desc, props in (
            ("convert_time", "Convert time between timezones",
             ["source_timezone", "time", "target_timezone"]),
            ("get_current_time", "Get current time in a specific timezone", ["timezone"]),
            ("fetch", "Fetches a URL from the internet and optionally extracts its contents "
                      "as markdown.", ["url", "max_length"])):
        spec.tools.append(ToolSpec(name=name, description=desc, source=f"def {name}(ctx):\n"
                                   "    return None\n", parameters={
            "type": "object", "properties": {p: {"type": "integer" if p == "max_length"
                                                 else "string"} for p in props}}))

    def said(tool, **given):
        return phrasing_clauses.step_clause(spec, Plan(steps=[PlanStep(tool=tool, given=given)]), 0,
                                    random.Random(0))

    assert said("convert_time", source_timezone="America/New_York", time="16:00",
                target_timezone="Australia/Sydney") == \
        "convert time from America/New_York to Australia/Sydney at 16:00"
    assert said("get_current_time", timezone="Europe/Paris") == \
        "get current time in Europe/Paris"
    assert said("fetch", url="https://x.org/a", max_length=200) == \
        "fetch https://x.org/a from the internet (just the first 200 characters)"


def test_a_value_taken_from_an_earlier_record_fills_the_actions_own_words(built):
    """fetch's action reads "fetch a URL from the internet": given an earlier page's url it
    is "fetch that page's url from the internet", not "... for that page's url"; "a URL"
    is English ("a" before a "you" sound), not a template's article slip."""
    from agent_world.mining.offline.naming import with_article
    from agent_world.tasks.artefacts import artefacts

    fetch = built["fetch"]
    plan = Plan(steps=[PlanStep(tool="get_page", given={"page_id": 3}),
                       PlanStep(tool="fetch", bound={"url": Binding(step=0, field="url")})])
    clause = phrasing_clauses.step_clause(fetch, plan, 1, random.Random(0))
    assert clause.startswith("fetch that page's url") and " for that" not in clause, clause
    assert "a-an" not in artefacts("Then fetch a URL from the internet.")
    assert "a-an" in artefacts("Then create a order.") and "a-an" in artefacts("A item.")
    assert with_article("url") == "a url" and with_article("order") == "an order"
    from agent_world.mining.offline.naming import fix_articles
    assert fix_articles("update a UptimeCheck, a OneDrive folder and a E&A app") == \
        "update an UptimeCheck, a OneDrive folder and an E&A app"
    assert artefacts("Get the E&A app.") == [] and "a-an" in artefacts("Update a Item.")


def test_a_name_filter_a_flag_and_an_identifier_read_as_a_person_writes_them():
    """Read from corpus tasks: "the mind maps with named Backlog notes", "with intent ... and
    learn no", "page 17.39" (chrome's pageId is a JSON number; backlog's pull request "number
    60.62"), "the highest page idx", "the section title's section title"."""
    from agent_world.mining.offline.signatures import column_type
    from agent_world.synthesis.task_answers import _aggregations

    spec = load_example("ecommerce")
    assert phrasing_clauses.list_filters(spec, "list_orders", {"name": "Backlog notes"})[1] \
        == "named Backlog notes"
    # a switch of the call is no state of the records: "the im chats that are not use uat"
    assert phrasing_clauses.list_filters(spec, "list_orders", {"useUAT": False})[1] == \
        "with the use uat set to no"
    assert phrasing_clauses.list_filters(spec, "list_orders", {"is_archived": True})[1] == \
        "that are archived"
    assert phrasing_values.arg_phrase("learn", False) == "learn turned off"
    assert phrasing_values.arg_phrase("recursive", True) == "recursive turned on"
    assert [column_type(n, "number", None) for n in ("page_id", "page_idx", "number",
                                                      "pull_request_number", "quality")] == \
        ["integer", "integer", "integer", "integer", "real"]
    items = [{"page_idx": i, "size": 10 * i} for i in range(1, 5)]
    asked = {o.get("field") for o in _aggregations(0, items, random.Random(0))}
    assert "page_idx" not in asked and "size" in asked
    # aws-documentation's "Tell me the section title's section title."
    question = phrasing.ask_field("section_title", random.Random(0), ent="section title")
    assert "called" in question and "title's" not in question, question


def test_a_walk_does_not_copy_a_plain_value_onto_a_record_named_apart(runtime):
    """"Look up customer C, then add an address for customer D with C's name as recipient":
    nothing ties the two customers; with the customer handed on, the step is one errand."""
    import networkx as nx

    from agent_world.tasks.sampling import ValueSampler
    from agent_world.tasks.walks import _bind_step

    spec = load_example("ecommerce")
    customer = spec.rows["customers"][0]
    plan = Plan(steps=[PlanStep(tool="get_customer", given={"customer_id": customer["id"]
                                                             if "id" in customer else
                                                             customer["customer_id"]})])
    ep = runtime.open(spec, seed=0)
    try:
        result = ep.step("get_customer", plan.steps[0].given).result
    finally:
        ep.close()
    name = next(k for k in ("name", "full_name", "first_name") if k in result)
    copied = {"param": "recipient", "field": name, "strength": 1.0}
    apart = nx.DiGraph()
    apart.add_edge("get_customer", "add_address", bindings=[copied])
    assert _bind_step(spec, apart, plan, [result], "add_address", ValueSampler(spec),
                      random.Random(0)) is None
    tied = nx.DiGraph()
    tied.add_edge("get_customer", "add_address", bindings=[copied, {
        "param": "customer_id", "field": "customer_id", "strength": 1.0}])
    step = _bind_step(spec, tied, plan, [result], "add_address", ValueSampler(spec),
                      random.Random(0))
    assert step is not None and set(step.bound) == {"recipient", "customer_id"}


def test_a_walk_does_not_edit_what_it_just_created(runtime):
    """"Add an address with line 1 A, then edit that address: set its line 1 to B": a person
    adds it as wanted; the edit would leave the create's values unchecked."""
    import networkx as nx

    from agent_world.tasks.sampling import ValueSampler
    from agent_world.tasks.walks import _bind_step

    spec = load_example("ecommerce")
    given = {"customer_id": 1, "recipient": "Ann Lee", "line1": "1 Main St", "city": "Boston",
             "state": "MA", "postal_code": "02110"}
    plan = Plan(steps=[PlanStep(tool="add_address", given=given)])
    ep = runtime.open(spec, seed=0)
    try:
        obs = ep.step("add_address", given)
    finally:
        ep.close()
    assert obs.ok, obs.error
    key = next(iter(obs.result))
    graph = nx.DiGraph()
    graph.add_edge("add_address", "update_address", bindings=[
        {"param": "address_id", "field": key, "strength": 1.0},
        {"param": "customer_id", "field": "customer_id", "strength": 1.0}])
    assert _bind_step(spec, graph, plan, [obs.result], "update_address", ValueSampler(spec),
                      random.Random(0)) is None


def test_chain_flaws_are_read_from_the_plan():
    """The corpus benchmark's count of flaws no gate's check sees, on hand-made plans."""
    from agent_world.tasks.flaws import chain_flaws

    spec = load_example("ecommerce")

    def task(*steps):
        return {"origin": {"plan": {"steps": list(steps)}}}

    detour = task({"tool": "get_customer", "given": {"customer_id": 3}, "bound": {}},
                  {"tool": "list_orders", "given": {},
                   "bound": {"customer_id": {"step": 0, "field": "customer_id"}}})
    assert chain_flaws(detour, spec) == ["told_detour"]
    needed = task({"tool": "get_order", "given": {"order_id": "O1"}, "bound": {}},
                  {"tool": "get_customer", "given": {},
                   "bound": {"customer_id": {"step": 0, "field": "customer_id"}}})
    assert chain_flaws(needed, spec) == []
    created = task({"tool": "add_address", "given": {"customer_id": 1, "line1": "A"},
                    "bound": {}},
                   {"tool": "update_address", "given": {"line1": "B"},
                    "bound": {"address_id": {"step": 0, "field": "address_id"},
                              "customer_id": {"step": 0, "field": "customer_id"}}})
    assert chain_flaws(created, spec) == ["edits_what_it_created"]
    apart = task({"tool": "get_customer", "given": {"customer_id": 3}, "bound": {}},
                 {"tool": "add_address", "given": {"customer_id": 9, "line1": "A"},
                  "bound": {"recipient": {"step": 0, "field": "first_name"}}})
    assert chain_flaws(apart, spec) == ["unrelated_record"]


def test_an_edit_sets_no_value_made_from_the_fields_name(airline):
    """Datadog's "set its scope to 'import-scope'": a value the miner made from the field's
    own name says nothing a person would set."""
    from agent_world.mining.offline.value_pools import is_named_value

    spec = airline.model_copy(deep=True)
    for i, row in enumerate(spec.rows["passengers"]):
        row["first_name"] = ["billing", "search", "orders"][i % 3] + "-first-name"
        row["last_name"] = ["billing", "search", "orders"][i % 3] + "-last-name"
    spec.tool("update_passenger").parameters["properties"].pop("date_of_birth")
    sampler = ValueSampler(spec)
    assert is_named_value("last_name", "billing-last-name")
    edits = [sampler.start_args("update_passenger", random.Random(seed)) for seed in range(12)]
    set_to = [v for args in edits if args for k, v in args.items() if k.endswith("_name")]
    assert not any(is_named_value(k, v) for args in edits if args for k, v in args.items())
    assert set_to  # the tool tests' names are still at hand


def test_no_write_sets_a_value_made_from_the_fields_name(airline):
    """Google Calendar's "create an event private extended property with the private extended
    property set to 'metrics-extended-property'": a required field's value too."""
    from agent_world.mining.offline.value_pools import is_named_value

    spec = airline.model_copy(deep=True)
    for i, row in enumerate(spec.rows["passengers"]):
        row["seat"] = ["billing", "search", "orders"][i % 3] + "-seat"
    sampler = ValueSampler(spec)
    calls = [sampler.start_args("assign_seat", random.Random(seed)) for seed in range(12)]
    assert not any(is_named_value("seat", args["seat"]) for args in calls if args)
    assert any(calls)


def test_an_objects_edit_mark_is_no_value_to_ask_for(airline):
    """A tool test edits a JSON field nothing stored stands for to {"edited": true}; Jira's
    tasks asked to "update Jira resources: set its body to {"edited": true}"."""
    spec = airline.model_copy(deep=True)
    spec.tool("update_passenger").parameters["properties"]["extra"] = {"type": "object"}
    for test in spec.tests:
        if test.tool == "update_passenger":
            test.arguments = {**test.arguments, "extra": {"edited": True}}
    sampler = ValueSampler(spec)
    assert {"edited": True} not in sampler.candidates("update_passenger", "extra",
                                                      {"type": "object"})


def test_a_tests_object_edit_mark_is_left_out_of_a_first_call(airline):
    """A first call drawn from such a test had stopped the whole environment's synthesis
    (`'dict' object has no attribute 'removesuffix'`: Roblox, Cloudflare, Microsoft 365)."""
    spec = airline.model_copy(deep=True)
    spec.tool("update_passenger").parameters["properties"]["extra"] = {"type": "object"}
    for test in spec.tests:
        if test.tool == "update_passenger":
            test.arguments = {**test.arguments, "extra": {"edited": True}}
    args = ValueSampler(spec)._unmarked("update_passenger", {"extra": {"edited": True}},
                                        random.Random(0))
    assert args == {}
