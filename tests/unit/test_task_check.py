"""The deterministic task check, the baseline agent and one attempt through create_agent."""

from __future__ import annotations

import pytest

from agent_world.envs import EnvRuntime, load_example
from agent_world.rollout.baseline_agent import BaselineChatModel
from agent_world.rollout.baseline_literals import literals
from agent_world.rollout.react_attempt import run_attempt
from agent_world.tasks.check import (
    answer_matches,
    check_episode,
    check_task,
    mask_volatile,
    normalise,
    state_changes,
)
from agent_world.tasks.model import Task


@pytest.fixture(scope="module")
def airline():
    return load_example("airline")


@pytest.fixture(scope="module")
def runtime():
    with EnvRuntime() as rt:
        yield rt


def test_answer_normalisation():
    assert normalise(" 8,300 ") == "8300" and normalise(8300.0) == "8300"
    assert normalise(True) == "yes" and normalise("False.") == "no"
    assert answer_matches("The balance is 8,300 miles.", 8300)
    assert answer_matches("nw684021611", "NW684021611")
    assert not answer_matches("8301", 8300)
    assert not answer_matches(None, 8300) and not answer_matches("", "x")
    assert answer_matches(["b", "A"], ["a", "b"])
    assert not answer_matches("SFO1", "SFO")  # whole words only
    # a dump of everything is not an answer
    assert not answer_matches(" ".join(str(i) for i in range(8000, 8400)), 8300)
    # a full stop of the value itself ends no sentence; one outside it still does
    address = "67061 Hernandez Springs Apt. 930, Woodtown, TN 37503"
    assert answer_matches(f"The answer is {address}.", address)
    assert not answer_matches(f"Sure. The address is {address}.", address)
    assert not answer_matches(f"The address is {address.replace('930', '931')}.", address)


def test_state_changes_and_wildcards(airline, runtime):
    ep = runtime.open(airline, seed=3)
    assert state_changes(ep.template, ep.path) == {}
    obs = ep.step("cancel_reservation", {"reservation_id": _open_reservation(airline)})
    assert obs.ok, obs.error
    first = state_changes(ep.template, ep.path)
    assert "reservations" in first and first["reservations"]["updated"]
    # the same call under another seed: generated ids differ
    other = runtime.open(airline, seed=4)
    other.step("cancel_reservation", {"reservation_id": _open_reservation(airline)})
    second = state_changes(other.template, other.path)
    other.close()
    merged = mask_volatile(first, second)
    assert merged is not None and "*" in str(merged)
    task = Task(kind="graph", env_name="airline", env_fingerprint=airline.fingerprint,
                instruction="cancel it", expected_changes=merged)
    assert check_episode(task, ep, None).passed
    ep.reset()
    res = check_episode(task, ep, None)
    assert not res.passed and res.components == {"state": 0.0}
    ep.close()


def test_programmatic_check_runs_the_verify_script(airline, runtime):
    verify = ("def verify(initial_db, final_db, answer):\n"
              "    n = initial_db.count('customers')\n"
              "    return str(answer).strip() == str(n) and final_db.count('customers') == n\n")
    task = Task(kind="programmatic", env_name="airline", env_fingerprint=airline.fingerprint,
                instruction="how many customers?", verify=verify)
    ep = runtime.open(airline)
    good = check_task(task, ep.template, ep.path, str(len(airline.rows["customers"])))
    assert good.passed and good.score == 1.0
    assert not check_task(task, ep.template, ep.path, "0").passed
    broken = task.model_copy(update={"verify": "def verify(a, b, c):\n    return 1/0\n"})
    res = check_task(broken, ep.template, ep.path, "x")
    assert not res.passed and "ZeroDivisionError" in res.detail
    ep.close()


def test_literals_keep_their_context():
    lits = literals("Customer 'Ann Lee' (ann.lee@example.com) has reservation ABC123 on "
                    "2026-03-12 for 2 passengers.")
    kinds = {lit["kind"]: lit for lit in lits}
    assert kinds["email"]["value"] == "ann.lee@example.com"
    assert kinds["code"]["value"] == "ABC123" and "reservation" in kinds["code"]["context"]
    assert kinds["date"]["value"] == "2026-03-12" and kinds["number"]["value"] == 2


def test_baseline_attempt_solves_a_chain_and_can_fail(airline, runtime):
    c = airline.rows["customers"][3]
    task = Task(kind="graph", env_name="airline", env_fingerprint=airline.fingerprint,
                instruction=f"I am the customer with email {c['email']}. How many redeemable "
                            "miles does my NorthMiles loyalty account have?",
                reference_answer=_miles(airline, c["customer_id"])).with_id()
    traj = run_attempt(task, BaselineChatModel(seed=1), spec=airline, runtime=runtime)
    assert [s.tool for s in traj.steps][-1] == "get_loyalty_balance"
    assert traj.finished and traj.reward == 1.0 and traj.meta["passed"]
    vague = task.model_copy(update={"instruction": "What about my thing?"})
    miss = run_attempt(vague, BaselineChatModel(seed=1), spec=airline, runtime=runtime)
    assert not miss.meta["passed"]


def test_obscured_view_hides_real_names(airline, runtime):
    c = airline.rows["customers"][3]
    view = {"tool_a": "get_customer", "tool_b": "get_loyalty_balance", "tool_c": "list_airports"}
    task = Task(kind="graph", env_name="airline", env_fingerprint=airline.fingerprint,
                instruction=f"I am the customer with email {c['email']}. What is the miles "
                            "balance of my NorthMiles loyalty account?",
                tool_view=view, reference_answer=_miles(airline, c["customer_id"])).with_id()
    traj = run_attempt(task, BaselineChatModel(seed=2), spec=airline, runtime=runtime)
    assert {s.tool for s in traj.steps} <= set(view) and traj.meta["passed"]


def _miles(spec, customer_id):
    return next(a["miles_balance"] for a in spec.rows["loyalty_accounts"]
                if a["customer_id"] == customer_id)


def _open_reservation(spec):
    flights = {f["flight_id"]: f for f in spec.rows["flights"]}
    for r in spec.rows["reservations"]:
        f = flights[r["flight_id"]]
        if r["status"] == "confirmed" and f["status"] == "scheduled" and \
                f["scheduled_departure"] > "2026-02-01":
            return r["reservation_id"]
    raise AssertionError("no open reservation in the example")


def test_read_only_task_gives_nothing_for_doing_nothing(airline, runtime):
    """A lookup's unchanged state is a condition: a no-op earns 0, a write spoils the answer."""
    rid = _open_reservation(airline)
    task = Task(kind="graph", env_name="airline", env_fingerprint=airline.fingerprint,
                instruction=f"status of {rid}?", reference_answer="confirmed",
                expected_changes={})
    ep = runtime.open(airline)
    idle = check_episode(task, ep, None)
    assert idle.components == {"answer": 0.0, "state": 1.0} and idle.score == 0.0
    assert check_episode(task, ep, "confirmed").score == 1.0
    assert ep.step("cancel_reservation", {"reservation_id": rid}).ok
    spoiled = check_episode(task, ep, "confirmed")
    assert spoiled.score == 0.0 and not spoiled.passed
    ep.close()


def test_a_right_answer_without_a_gold_tool_call_is_a_guess(airline, runtime):
    """Grounding: given the attempt's steps, a right answer counts only after a successful
    call of a tool of the gold chain whose observation shows it; a call of a gold tool that
    does not show it (the chain's first call) is not enough."""
    from agent_world.tasks.check import grounded
    from agent_world.tasks.model import Step, ToolCall

    c = airline.rows["customers"][3]
    miles = _miles(airline, c["customer_id"])
    task = Task(kind="graph", env_name="airline", env_fingerprint=airline.fingerprint,
                instruction="How many miles?", reference_answer=miles,
                chain=[ToolCall(tool="get_customer", arguments={}),
                       ToolCall(tool="get_loyalty_balance", arguments={})],
                tool_view={"tool_a": "get_customer", "tool_b": "get_loyalty_balance",
                           "tool_c": "list_airports"}, expected_changes={})
    ep = runtime.open(airline)
    unrelated = [Step(tool="tool_c", arguments={}, ok=True, result=[])]
    failed_gold = [Step(tool="tool_b", arguments={}, ok=False, error_kind="invalid_arguments")]
    assert check_episode(task, ep, miles).passed  # no steps given: answer and state only
    for steps in ([], unrelated, failed_gold):
        res = check_episode(task, ep, miles, steps=steps)
        assert not grounded(task, steps)
        assert not res.passed and res.score == 0.0 and res.components["grounded"] == 0.0
        assert res.components["answer"] == 1.0 and "not grounded" in res.detail
    first_only = unrelated + [Step(tool="tool_a", arguments={}, ok=True, result={})]
    assert not check_episode(task, ep, miles, steps=first_only).passed
    one_gold = unrelated + [Step(tool="tool_b", arguments={}, ok=True,
                                 result={"miles_balance": miles})]
    res = check_episode(task, ep, miles, steps=one_gold)
    assert res.passed and res.components["grounded"] == 1.0
    # a grounded wrong answer is still wrong; a task without a chain needs no call
    assert not check_episode(task, ep, miles + 1, steps=one_gold).passed
    free = task.model_copy(update={"chain": []})
    assert check_episode(free, ep, miles, steps=[]).passed
    ep.close()
