"""Requests a person would write, levels that exist where the tool graph allows them, a
solvability gate that searches other chains, and a baseline that reads natural values.

Each test was run first on the code before the change and failed there.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from langchain_core.messages import HumanMessage

from agent_world.agents.attempt import run_attempt
from agent_world.agents.baseline import BaselineChatModel, literals
from agent_world.envs import EnvRuntime, load_example
from agent_world.tasks.model import Task


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
