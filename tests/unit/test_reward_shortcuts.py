"""Shortcuts past the task check, each a hand-made attempt on a bundled example environment
that used to score: number sprays, candidate lists, the engine clock as a number, a generic
sentence, a call of the wrong record, a write on the wrong record with the status echoed, a
read spree, and a judge that says yes to anything."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from agent_world.envs import EnvRuntime, load_example
from agent_world.tasks.check import (
    answer_matches,
    check_episode,
    check_task,
    episode_changes,
    mask_volatile,
)
from agent_world.tasks.model import Step, Task, ToolCall, Trajectory


@pytest.fixture(scope="module")
def airline():
    return load_example("airline")


@pytest.fixture(scope="module")
def runtime():
    with EnvRuntime() as rt:
        yield rt


def _call(ep: Any, tool: str, **arguments: Any) -> Step:
    """One call of an attempt, recorded the way `run_attempt` records it."""
    obs = ep.step(tool, arguments)
    return Step(tool=tool, arguments=arguments, ok=obs.ok, result=obs.result if obs.ok else None,
                error_kind=obs.error.kind if obs.error else None)


def _expected(spec: Any, runtime: EnvRuntime, calls: list[ToolCall]) -> dict[str, Any]:
    """The gold changes of `calls`, run twice (the second time later in the episode), as the
    synthesizer records them."""
    runs = []
    for shift in (0, 5):
        ep = runtime.open(spec, seed=0)
        try:
            ep.steps = shift
            for c in calls:
                assert ep.step(c.tool, c.arguments).ok
            runs.append(episode_changes(ep))
        finally:
            ep.close()
    merged = mask_volatile(*runs)
    assert merged
    return merged


def _graph(spec: Any, instruction: str, chain: list[ToolCall], reference: Any,
           expected: dict[str, Any] | None = None, answer: dict[str, Any] | None = None) -> Task:
    return Task(kind="graph", env_name=spec.name, env_fingerprint=spec.fingerprint,
                instruction=instruction, chain=chain, reference_answer=reference,
                expected_changes=expected or {}, origin={"answer": answer} if answer else {})


def _open_reservations(spec: Any) -> list[str]:
    flights = {f["flight_id"]: f for f in spec.rows["flights"]}
    return [r["reservation_id"] for r in spec.rows["reservations"]
            if r["status"] == "confirmed" and flights[r["flight_id"]]["status"] == "scheduled"
            and flights[r["flight_id"]]["scheduled_departure"] > "2026-03-12"]


def _birthdays(spec: Any) -> tuple[str, list[Any], dict[str, Any]]:
    """A loop of writes that reports its count: every passenger of a reservation of three or
    more gets one birth date (the reservation, its passengers, the bulk description)."""
    rid = next(r for r in _open_reservations(spec)
               if sum(p["reservation_id"] == r for p in spec.rows["passengers"]) >= 3)
    pids = [p["passenger_id"] for p in spec.rows["passengers"] if p["reservation_id"] == rid]
    bulk = {"step": 0, "where": {}, "write": "update_passenger", "key_param": "passenger_id",
            "key_field": "passenger_id", "args": {"date_of_birth": "1990-01-01"},
            "table": "passengers", "key_column": "passenger_id",
            "sql_where": {"reservation_id": rid}, "effect": "update",
            "sets": {"date_of_birth": "1990-01-01"}, "answer": "count"}
    return rid, pids, bulk


def _miles(spec: Any, customer_id: int) -> int:
    return next(a["miles_balance"] for a in spec.rows["loyalty_accounts"]
                if a["customer_id"] == customer_id)


def test_a_number_spray_is_not_a_count(airline, runtime):
    """'0 1 2 ... 119' after the right list call used to contain every count there is."""
    cid, _ = Counter((r["customer_id"], r["status"]) for r in airline.rows["reservations"]
                     if r["status"] == "confirmed").most_common(1)[0][0]
    n = sum(r["customer_id"] == cid and r["status"] == "confirmed"
            for r in airline.rows["reservations"])
    task = _graph(airline, f"How many confirmed reservations does customer {cid} hold?",
                  [ToolCall(tool="list_customer_reservations", arguments={"customer_id": cid})],
                  n, answer={"kind": "count", "step": 0, "where": {"status": "confirmed"}})
    ep = runtime.open(airline)
    steps = [_call(ep, "list_customer_reservations", customer_id=cid)]
    spray = " ".join(str(i) for i in range(120))
    res = check_episode(task, ep, spray, steps=steps)
    assert not res.passed and res.score == 0.0 and res.components["answer"] == 0.0
    right = check_episode(task, ep, f"You hold {n} confirmed reservations.", steps=steps)
    assert right.passed and right.score == 1.0
    ep.close()


def test_a_list_of_candidates_is_not_an_answer(airline, runtime):
    """Several numbers for a numeric reference fail, in the graph check and in both generated
    verification scripts (an aggregate that reads, a loop of writes that counts)."""
    from agent_world.synthesis.task_code import verify_source
    from agent_world.tasks.programs import bulk_verify_source
    from agent_world.tasks.scripts import run_verify
    from agent_world.tasks.truth import Truth

    assert not answer_matches("5 6 7 8", 7) and not answer_matches("7 or 8", 7)
    assert not answer_matches("1,2,3", 3) and answer_matches("1,234", 1234)
    # a reading task: how many customers
    n = len(airline.rows["customers"])
    counted = Task(kind="programmatic", env_name="airline", env_fingerprint=airline.fingerprint,
                   instruction="How many customers are there?", reference_answer=n,
                   verify=verify_source(Truth(chain=[], answer=n, expected_changes={},
                                              observations=[])))
    ep = runtime.open(airline)
    listed = f"{n - 2} {n - 1} {n} {n + 1}"
    assert run_verify(counted.verify, ep.template, ep.path, listed) == 0.0
    assert check_task(counted, ep.template, ep.path, listed).score == 0.0
    assert check_task(counted, ep.template, ep.path, f"There are {n} customers.").passed
    ep.close()
    # a task that writes in a loop and reports the count: every passenger of a reservation
    rid, pids, bulk = _birthdays(airline)
    writes = Task(kind="programmatic", env_name="airline", env_fingerprint=airline.fingerprint,
                  instruction=f"Set every passenger of {rid} born on 1990-01-01; how many?",
                  reference_answer=len(pids), verify=bulk_verify_source(bulk))
    ep = runtime.open(airline)
    for pid in pids:
        assert ep.step("update_passenger", {"reservation_id": rid, "passenger_id": pid,
                                            "date_of_birth": "1990-01-01"}).ok
    k = len(pids)
    listed = f"{k - 1} {k} {k + 1} {k + 2}"
    assert run_verify(writes.verify, ep.template, ep.path, listed) == 0.0
    assert check_task(writes, ep.template, ep.path, listed).score == 0.0
    assert check_task(writes, ep.template, ep.path, f"Updated {k} passengers.").passed
    ep.close()


def test_a_record_dump_is_not_an_answer():
    """Every value of the product listed ("1, FP-9372, Widget, electronics, 12.5, USD") holds
    one code, the sku asked for; the shortcut suite found it passing a mined task."""
    dump = "1, FP-9372, Widget, electronics, 12.5, USD"
    assert not answer_matches(dump, "FP-9372") and not answer_matches(dump, 12.5)
    assert answer_matches("The sku is FP-9372.", "FP-9372")
    assert answer_matches("FP-9372", "FP-9372")
    assert answer_matches("You have 8,300 miles.", 8300)
    assert answer_matches("On 2026-03-03, at 14:30.", "2026-03-03")


def test_the_engine_clock_is_not_a_number(airline, runtime):
    """The clock string '2026-03-10T09:00:00' holds 0, 9 and 2026 as digits; a delay of 0
    minutes is not stated by it."""
    flight = next(f for f in airline.rows["flights"]
                  if f["delay_minutes"] == 0 and f["status"] == "scheduled")
    task = _graph(airline, f"How many minutes is flight {flight['flight_number']} delayed?",
                  [ToolCall(tool="get_flight_status",
                            arguments={"flight_number": flight["flight_number"]})], 0)
    ep = runtime.open(airline)
    steps = [_call(ep, "get_flight_status", flight_number=flight["flight_number"])]
    assert steps[0].ok
    for clock in (airline.clock_start, airline.clock_start.replace("T", " ")):
        res = check_episode(task, ep, clock, steps=steps)
        assert not res.passed and res.score == 0.0
    assert check_episode(task, ep, "0", steps=steps).passed
    assert check_episode(task, ep, "It is not delayed: 0 minutes.", steps=steps).passed
    ep.close()


def test_a_generic_sentence_states_no_value(airline, runtime):
    """'I could not find it' contains the word 'I' and the word 'not'; it answers neither 'I'
    nor False."""
    c = airline.rows["customers"][0]
    chain = [ToolCall(tool="get_customer", arguments={"email": c["email"]})]
    ep = runtime.open(airline)
    steps = [_call(ep, "get_customer", email=c["email"])]
    voucher = next(p for p in steps[0].result["payment_methods"] if "expired" in p)
    assert voucher["expired"] is False
    for reference in ("I", False):
        task = _graph(airline, "Has my voucher expired?", chain, reference)
        res = check_episode(task, ep, "I could not find it", steps=steps)
        assert not res.passed and res.score == 0.0
    expired = _graph(airline, "Has my travel voucher expired?", chain, False)
    assert check_episode(expired, ep, "No.", steps=steps).passed
    assert not answer_matches("I could not find it", "I") and answer_matches("I", "I")
    ep.close()


def test_grounding_needs_the_call_that_shows_the_value_on_the_right_record(airline, runtime):
    """A call of a gold-chain tool is not enough: the first call of the chain (which does not
    show the answer) or the last one on another record does not ground a right answer."""
    cid = next(r["customer_id"] for r in airline.rows["reservations"]
               if sum(x["customer_id"] == r["customer_id"]
                      for x in airline.rows["reservations"]) == 1)
    c = next(x for x in airline.rows["customers"] if x["customer_id"] == cid)
    ep = runtime.open(airline)
    flight = _call(ep, "list_customer_reservations", customer_id=cid).result[0]["flight_number"]
    chain = [ToolCall(tool="get_customer", arguments={"email": c["email"]}),
             ToolCall(tool="list_customer_reservations", arguments={"customer_id": cid})]
    task = _graph(airline, f"I am {c['email']}. Which flight is my reservation on?", chain,
                  flight, answer={"kind": "field", "step": 1, "field": "flight_number"})
    first_only = [_call(ep, "get_customer", email=c["email"])]
    res = check_episode(task, ep, flight, steps=first_only)
    assert not res.passed and res.score == 0.0 and res.components["grounded"] == 0.0
    full = first_only + [_call(ep, "list_customer_reservations", customer_id=cid)]
    assert check_episode(task, ep, flight, steps=full).passed
    # the right tool on another customer's account, the right customer's balance as answer
    holders = [a["customer_id"] for a in airline.rows["loyalty_accounts"]]
    mine, other = holders[0], holders[1]
    miles = _miles(airline, mine)
    task = _graph(airline, f"How many miles does customer {mine} have?",
                  [ToolCall(tool="get_loyalty_balance", arguments={"customer_id": mine})], miles)
    wrong = [_call(ep, "get_loyalty_balance", customer_id=other)]
    assert wrong[0].ok and wrong[0].result["miles_balance"] != miles
    res = check_episode(task, ep, miles, steps=wrong)
    assert not res.passed and res.score == 0.0
    right = wrong + [_call(ep, "get_loyalty_balance", customer_id=mine)]
    assert check_episode(task, ep, miles, steps=right).passed
    ep.close()


def test_a_wrong_write_with_the_status_echoed_scores_nothing(airline, runtime):
    """'cancelled' is in the instruction; saying it after cancelling another reservation (or
    none) used to earn half the reward."""
    target, other = _open_reservations(airline)[:2]
    gold = [ToolCall(tool="cancel_reservation", arguments={"reservation_id": target})]
    task = _graph(airline, f"Cancel reservation {target} and tell me its new status.", gold,
                  "cancelled", expected=_expected(airline, runtime, gold))
    ep = runtime.open(airline)
    steps = [_call(ep, "cancel_reservation", reservation_id=other)]
    assert steps[0].ok
    res = check_episode(task, ep, "cancelled", steps=steps)
    assert res.components["answer"] == 1.0 and res.components["state"] == 0.0
    assert res.score == 0.0 and not res.passed
    ep.reset()
    assert check_task(task, ep.template, ep.path, "cancelled", logged=True).score == 0.0
    steps = [_call(ep, "cancel_reservation", reservation_id=target)]
    assert check_episode(task, ep, "The reservation is cancelled.", steps=steps).passed
    ep.close()


def test_a_read_spree_costs_within_a_bound(airline, runtime):
    """Eighteen unrelated reads before the right answer lower the score (component
    `efficiency`), never below MIN_EFFICIENCY; the attempt still passes, and the training
    reward carries the same component."""
    from agent_world.rollout.reward import score

    c = airline.rows["customers"][3]
    miles = _miles(airline, c["customer_id"])
    chain = [ToolCall(tool="get_customer", arguments={"email": c["email"]}),
             ToolCall(tool="get_loyalty_balance", arguments={"customer_id": c["customer_id"]})]
    task = _graph(airline, f"I am {c['email']}. How many miles do I have?", chain, miles)
    ep = runtime.open(airline)
    gold = [_call(ep, "get_customer", email=c["email"]),
            _call(ep, "get_loyalty_balance", customer_id=c["customer_id"])]
    reads = [_call(ep, "list_airports") for _ in range(18)]
    spree = check_episode(task, ep, miles, steps=reads + gold)
    assert spree.passed and spree.score < 1.0

    from agent_world.tasks.check import EXTRA_CALL_SLACK, MIN_EFFICIENCY

    lean = check_episode(task, ep, miles, steps=gold)
    assert lean.score == 1.0 and lean.components["efficiency"] == 1.0
    slack = check_episode(task, ep, miles, steps=reads[:EXTRA_CALL_SLACK] + gold)
    assert slack.score == 1.0
    some = check_episode(task, ep, miles, steps=reads[:EXTRA_CALL_SLACK + 2] + gold)
    assert some.passed
    assert MIN_EFFICIENCY <= spree.score < some.score < 1.0
    assert spree.components["efficiency"] == spree.score
    traj = Trajectory(task_id="t", steps=reads + gold, final_answer=str(miles), finished=True)
    score(task, traj, ep, judge=None)
    assert traj.reward == pytest.approx(spree.score)
    assert traj.reward_components["check.efficiency"] == spree.score
    assert traj.reward_components["check.passed"] == 1.0
    ep.close()


def test_a_yes_saying_judge_cannot_pass_a_wrong_write(airline, runtime):
    """A configured judge refines a deterministic pass; it never overturns a fail."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from agent_world.rollout.reward import score

    target, other = _open_reservations(airline)[:2]
    gold = [ToolCall(tool="cancel_reservation", arguments={"reservation_id": target})]
    task = _graph(airline, f"Cancel reservation {target}.", gold, "cancelled",
                  expected=_expected(airline, runtime, gold))
    ep = runtime.open(airline)
    steps = [_call(ep, "cancel_reservation", reservation_id=other)]
    traj = Trajectory(task_id="t", steps=steps, final_answer="cancelled", finished=True)
    score(task, traj, ep, judge=FakeListChatModel(responses=['{"score": 1.0}']))
    assert traj.reward == 0.0 and traj.reward_components["check.passed"] == 0.0
    ep.reset()
    steps = [_call(ep, "cancel_reservation", reservation_id=target)]
    for verdict, reward in (("1.0", 1.0), ("0.0", 0.5)):
        traj = Trajectory(task_id="t", steps=steps, final_answer="cancelled", finished=True)
        score(task, traj, ep, judge=FakeListChatModel(responses=[f'{{"score": {verdict}}}']))
        assert traj.reward == pytest.approx(reward)
        assert traj.reward_components["judge"] == float(verdict)
        assert traj.reward_components["check.passed"] == 1.0
    ep.close()


def test_the_verifier_attempt_and_training_share_one_reward(airline, runtime):
    """`run_attempt` (evaluation, the verifier) scores through `rollout.reward.score`: the
    same components, format penalty included."""
    from agent_world.rollout.baseline_agent import BaselineChatModel
    from agent_world.rollout.react_attempt import run_attempt
    from agent_world.rollout.reward import score

    c = airline.rows["customers"][3]
    task = _graph(airline, f"I am the customer with email {c['email']}. How many redeemable "
                  "miles does my NorthMiles loyalty account have?", [
                      ToolCall(tool="get_customer", arguments={"email": c["email"]}),
                      ToolCall(tool="get_loyalty_balance",
                               arguments={"customer_id": c["customer_id"]})],
                  _miles(airline, c["customer_id"])).with_id()
    traj = run_attempt(task, BaselineChatModel(seed=1), spec=airline, runtime=runtime)
    assert traj.meta["passed"] and "format_penalty" in traj.reward_components
    again = traj.model_copy(update={"reward": 0.0, "reward_components": {}})
    ep = runtime.open(airline)
    for s in traj.steps:
        if s.tool:
            ep.step(s.tool, s.arguments)
    score(task, again, ep, judge=None)
    ep.close()
    assert again.reward == traj.reward and again.reward_components == traj.reward_components


def test_a_sentence_may_repeat_what_the_request_stated(airline, runtime):
    """"There is 1 clinician at location 2." answered a count asked about location 2 and
    scored 0 (two numbers): a value the request itself gave is not a second candidate, in the
    graph check and both verification scripts; a spray, or the stated value for another
    answer, still fails."""
    from agent_world.synthesis.task_code import verify_source
    from agent_world.tasks.check import stated_values
    from agent_world.tasks.programs import bulk_verify_source
    from agent_world.tasks.scripts import run_verify
    from agent_world.tasks.truth import Truth

    asked = stated_values("How many clinicians work at location 2?")
    assert answer_matches("There is 1 clinician at location 2.", 1, asked)
    assert not answer_matches("There is 1 clinician at location 2.", 1)
    assert answer_matches("2", 2, asked) and not answer_matches("2", 1, asked)
    assert not answer_matches("There are 3 clinicians at location 2.", 1, asked)
    assert not answer_matches(" ".join(str(i) for i in range(120)), 1, asked)
    # a reading script: how many reservations a customer holds
    cid = airline.rows["reservations"][0]["customer_id"]
    n = sum(r["customer_id"] == cid for r in airline.rows["reservations"])
    ask = f"How many reservations does customer {cid} hold?"
    counted = Task(kind="programmatic", env_name="airline", env_fingerprint=airline.fingerprint,
                   instruction=ask, reference_answer=n,
                   verify=verify_source(Truth(chain=[], answer=n, expected_changes={},
                                              observations=[]),
                                        stated_values(ask).get("number", [])))
    ep = runtime.open(airline)
    said = f"Customer {cid} holds {n} reservations."
    assert run_verify(counted.verify, ep.template, ep.path, said) == 1.0
    assert check_task(counted, ep.template, ep.path, said).passed
    assert not check_task(counted, ep.template, ep.path, f"{cid} {n} {n + 1}").passed
    ep.close()
    # a script of writes that reports its count: the reservation's passengers
    rid, pids, bulk = _birthdays(airline)
    ask = f"Set every passenger of {rid} born on 1990-01-01 in row 7; how many?"
    writes = Task(kind="programmatic", env_name="airline", env_fingerprint=airline.fingerprint,
                  instruction=ask, reference_answer=len(pids),
                  verify=bulk_verify_source(bulk, stated_values(ask).get("number", [])))
    ep = runtime.open(airline)
    for pid in pids:
        assert ep.step("update_passenger", {"reservation_id": rid, "passenger_id": pid,
                                            "date_of_birth": "1990-01-01"}).ok
    k = len(pids)
    assert check_task(writes, ep.template, ep.path, f"Updated {k} passengers in row 7.").passed
    assert not check_task(writes, ep.template, ep.path, f"Updated {k + 1} passengers in row 7.").passed
    ep.close()
