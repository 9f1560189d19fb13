"""Guidelines from a diagnosis change the synthesized mix in the expected direction: a held-out
failure set dominated by `state_not_tracked` on a travel environment makes re-synthesis target
the similar training environment with longer, aggregating chains."""

from __future__ import annotations

import pytest

from agent_world.envs.catalog import Catalog
from agent_world.envs.examples import load_example
from agent_world.evolution.diagnosis import diagnose
from agent_world.evolution.diagnosis_model import EnvMeta
from agent_world.graphs import stages
from agent_world.tasks.evaluation import attempt
from agent_world.tasks.model import Difficulty, Step, Task, ToolCall, Trajectory

pytestmark = pytest.mark.integration


def _failures(spec, n: int):
    tools = [t.name for t in spec.tools if not t.mutates][:2]
    out = []
    for i in range(n):
        task = Task(kind="graph", env_name="travel_eval", env_fingerprint="fp", seed=i,
                    instruction=f"held-out question {i}", reference_answer=i,
                    chain=[ToolCall(tool=t) for t in tools],
                    difficulty=Difficulty(chain_length=len(tools), level=2)).with_id()
        traj = Trajectory(task_id=task.id, finished=True, final_answer="wrong",
                          steps=[Step(tool=t, arguments={}, ok=True) for t in tools])
        out.append(attempt(task, traj, f"e/{i}"))
    return out


def _mix(cat: Catalog, ids: list[str]) -> list[Task]:
    wanted = set(ids)
    return [Task.model_validate(r["payload"]) for r in cat.list_tasks() if r["id"] in wanted]


def test_guidelines_shift_the_synthesized_mix(tmp_path):
    cat = Catalog.open(tmp_path)
    airline, shop = load_example("airline"), load_example("ecommerce")
    for spec in (airline, shop):
        cat.put_env(spec, stage="built")
    envs = [EnvMeta.from_spec(airline, "train"), EnvMeta.from_spec(shop, "train"),
            EnvMeta(name="travel_eval", split="heldout", taxonomy=str(airline.theme.taxonomy),
                    tools=[t.name for t in airline.tools])]
    d = diagnose(_failures(airline, 5), envs)
    g = d.guidelines
    assert d.target_error == "state_not_tracked" and g.environments[0] == "airline"

    plain = _mix(cat, stages.synthesize_tasks(["airline", "ecommerce"], tmp_path, 4, seed=0,
                                              tag="plain"))
    targets = [e for e in g.environments if e in ("airline", "ecommerce")][:1]
    guided = _mix(cat, stages.synthesize_tasks(targets, tmp_path, 4, seed=0,
                                               guidelines=g.model_dump(mode="json"),
                                               tag="guided"))
    assert plain and guided
    assert {t.env_name for t in guided} == {"airline"}
    mean = lambda ts, f: sum(f(t) for t in ts) / len(ts)  # noqa: E731
    assert mean(guided, lambda t: t.difficulty.chain_length) >= \
        mean(plain, lambda t: t.difficulty.chain_length)
    assert mean(guided, lambda t: t.difficulty.aggregation or t.kind == "programmatic") > \
        mean(plain, lambda t: t.difficulty.aggregation or t.kind == "programmatic")


def test_confused_tools_are_shown_together_in_targeted_tasks(tmp_path):
    """A wrong_tool diagnosis (list_orders called for get_order on a held-out shop) asks for
    airline tasks whose views hold get_reservation beside list_customer_reservations."""
    cat = Catalog.open(tmp_path)
    airline = load_example("airline")
    cat.put_env(airline, stage="built")
    g = {"environments": ["airline"], "tools": ["airline/get_reservation"],
         "error_classes": ["wrong_tool"], "skills": ["choose_tool"],
         "confusable": {"airline/get_reservation": ["list_customer_reservations"]},
         "difficulty": {"level": 2, "chain_length": 1}}
    guided = _mix(cat, stages.synthesize_tasks(["airline"], tmp_path, 4, seed=0,
                                               guidelines=g, tag="confusable"))
    calling = [t for t in guided if "get_reservation" in {c.tool for c in t.chain}]
    assert calling, [t.chain for t in guided]
    for t in calling:
        assert "list_customer_reservations" in t.tool_view.values()
        assert t.difficulty.distractors == len(t.tool_view) - len({c.tool for c in t.chain})


def test_targeted_tasks_take_the_shape_of_the_failures(tmp_path):
    """The same wrong_tool guidelines with the failures' shape (real names, few distractors)
    give tasks with real names; without it, the remedy's opaque names."""
    cat = Catalog.open(tmp_path)
    airline = load_example("airline")
    cat.put_env(airline, stage="built")
    g = {"environments": ["airline"], "error_classes": ["wrong_tool"],
         "difficulty": {"level": 1, "chain_length": 1, "distractors": 3}, "levels": [1, 2, 3]}
    shaped = {**g, "shape": {"failures": 20, "levels": {"1": 16, "2": 4}, "obscured": 0.0,
                             "many_distractors": 0.0, "programmatic": 0.0}}
    remedy = _mix(cat, stages.synthesize_tasks(["airline"], tmp_path, 8, seed=3,
                                               guidelines=g, tag="remedy"))
    like = _mix(cat, stages.synthesize_tasks(["airline"], tmp_path, 8, seed=3,
                                             guidelines=shaped, tag="shaped"))
    assert remedy and like
    assert not any(t.difficulty.obscured for t in like)
    assert any(t.difficulty.obscured for t in remedy)
    crowded = lambda ts: sum(t.difficulty.distractors >= 8 for t in ts)  # noqa: E731
    assert crowded(like) == 0
