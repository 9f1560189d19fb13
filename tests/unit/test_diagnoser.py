"""The diagnosis agent on crafted failure sets: names the right weak environment and error class,
cites real evidence, targets the right training environments; the LLM path is checked."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from agent_world import models
from agent_world.agents.diagnoser import Diagnosis, EnvMeta, diagnose
from agent_world.tasks.evaluation import attempt, classify_failure, score
from agent_world.tasks.model import Difficulty, Step, Task, ToolCall, Trajectory


def _task(env: str, tools: list[str], level: int = 2, n: int = 0) -> Task:
    return Task(kind="graph", env_name=env, env_fingerprint=f"fp-{env}",
                instruction=f"task {n} on {env}", reference_answer=n,
                chain=[ToolCall(tool=t, arguments={"id": n}) for t in tools],
                difficulty=Difficulty(chain_length=len(tools), level=level)).with_id()


def _traj(task: Task, outcome: str) -> Trajectory:
    chain = task.chain
    ok = [Step(tool=c.tool, arguments=c.arguments, ok=True, result={"v": 1}) for c in chain]
    if outcome == "pass":
        return Trajectory(task_id=task.id, steps=ok, final_answer=task.reference_answer,
                          finished=True, reward=1.0)
    if outcome == "state_not_tracked":
        return Trajectory(task_id=task.id, steps=ok, final_answer="wrong", finished=True)
    if outcome == "wrong_tool":
        bad = Step(tool="delete_everything", arguments={}, ok=False, error_kind="unknown_tool",
                   fault="agent")
        return Trajectory(task_id=task.id, steps=[bad], final_answer="?", finished=True)
    if outcome == "wrong_arguments":
        bad = Step(tool=chain[0].tool, arguments={"id": "x"}, ok=False,
                   error_kind="invalid_arguments", fault="agent")
        return Trajectory(task_id=task.id, steps=[bad], final_answer="?", finished=True)
    if outcome == "gave_up":
        return Trajectory(task_id=task.id, steps=ok[:1], finished=False)
    if outcome == "format":
        return Trajectory(task_id=task.id, steps=[Step(text="<tool>{broken")], finished=False)
    raise ValueError(outcome)


def _attempts(plan: list[tuple[str, list[str], int, str, int]]) -> tuple[list[Any], dict]:
    """plan: (env, tools, level, outcome, count) → attempts and trajectories by id."""
    attempts, trajs = [], {}
    n = 0
    for env, tools, level, outcome, count in plan:
        for _ in range(count):
            t = _task(env, tools, level, n)
            tr = _traj(t, outcome)
            tid = f"tr{n:03d}"
            attempts.append(attempt(t, tr, tid))
            trajs[tid] = tr
            n += 1
    return attempts, trajs


ENVS = [
    EnvMeta(name="clinic_eval", split="heldout", taxonomy="Health / Clinics / clinic",
            tools=["find_patient", "book_appointment"]),
    EnvMeta(name="library_eval", split="heldout", taxonomy="Education / Libraries / books",
            tools=["search_books", "lend_book"]),
    EnvMeta(name="hospital", split="train", taxonomy="Health / Clinics / hospital",
            tools=["find_patient", "list_rooms", "admit_patient"]),
    EnvMeta(name="bookshop", split="train", taxonomy="Commerce / Retail / books",
            tools=["search_books", "buy_book"]),
]


@pytest.fixture(autouse=True)
def _offline():
    models.set_chat_model("diagnoser", None)
    yield
    models.set_chat_model("diagnoser", None)


def test_error_classes_of_crafted_trajectories():
    t = _task("e", ["a", "b"])
    for outcome in ("state_not_tracked", "wrong_tool", "wrong_arguments", "gave_up", "format"):
        assert classify_failure(t, _traj(t, outcome)) == outcome
    assert classify_failure(t, _traj(t, "pass")) is None
    crash = Trajectory(task_id=t.id, steps=[Step(tool="a", ok=False, error_kind="timeout",
                                                 fault="environment")], env_fault=True)
    assert classify_failure(t, crash) == "environment"
    # right tools, but the gold arguments were never used
    off = Trajectory(task_id=t.id, finished=True, final_answer=1, steps=[
        Step(tool="a", arguments={"id": 99}, ok=True), Step(tool="b", arguments={"id": 0},
                                                            ok=True)])
    assert classify_failure(t, off) == "wrong_arguments"


def test_offline_names_weak_env_error_class_and_targets_similar_training_env():
    attempts, trajs = _attempts([
        ("clinic_eval", ["find_patient", "book_appointment"], 3, "state_not_tracked", 6),
        ("clinic_eval", ["find_patient"], 1, "pass", 2),
        ("library_eval", ["search_books"], 1, "pass", 6),
        ("library_eval", ["search_books", "lend_book"], 2, "wrong_tool", 1),
    ])
    d = diagnose(attempts, ENVS, trajs)
    assert d.strategy == "offline"
    assert d.weak_environments[0].name == "clinic_eval"
    assert d.target_error == "state_not_tracked"
    assert d.errors[0].count == 6 and d.errors[0].environments[0] == "clinic_eval"
    # evidence: the failing trajectories of that environment, nothing else
    clinic_fail = {a.trajectory_id for a in attempts
                   if a.env_name == "clinic_eval" and not a.passed}
    assert set(d.weak_environments[0].evidence) <= clinic_fail
    assert set(d.errors[0].evidence) <= clinic_fail
    g = d.guidelines
    assert g.environments[0] == "hospital"  # the training env closest to the weak held-out one
    assert g.error_classes[0] == "state_not_tracked"
    assert g.difficulty.aggregation and g.difficulty.chain_length >= 3
    assert "hospital" in g.complexify_databases
    assert any(t.startswith("hospital/find_patient") for t in g.tools)
    assert "clinic_eval" in d.text() and "state_not_tracked" in d.text()


def test_offline_other_crafted_set_switches_env_and_class():
    attempts, trajs = _attempts([
        ("clinic_eval", ["find_patient"], 1, "pass", 5),
        ("library_eval", ["search_books", "lend_book"], 2, "wrong_tool", 4),
        ("library_eval", ["search_books"], 1, "gave_up", 1),
        ("library_eval", ["search_books"], 1, "pass", 1),
    ])
    d = diagnose(attempts, ENVS, trajs)
    assert d.weak_environments[0].name == "library_eval"
    assert d.target_error == "wrong_tool"
    assert d.guidelines.environments[0] == "bookshop"
    assert d.guidelines.difficulty.distractors > 0
    assert d.guidelines.complexify_databases == []  # tool choice is not a data problem
    assert score(attempts).by_level["2"].pass_rate == 0.0


class _Fake(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kw: Any) -> _Fake:  # noqa: ARG002
        return self


def test_llm_path_rejects_invented_evidence_then_accepts():
    attempts, trajs = _attempts([
        ("clinic_eval", ["find_patient"], 2, "wrong_arguments", 3),
        ("library_eval", ["search_books"], 1, "pass", 3),
    ])
    good_ids = [a.trajectory_id for a in attempts if not a.passed]
    base = diagnose(attempts, ENVS, trajs).model_dump()
    invented = {**base, "summary": "llm", "errors": [
        {**base["errors"][0], "evidence": ["tr999"]}]}
    fixed = {**base, "summary": "llm says clinic arguments",
             "errors": [{**base["errors"][0], "evidence": good_ids[:2]}]}
    fake = _Fake(messages=iter([AIMessage(content=Diagnosis.model_validate(x).model_dump_json())
                                for x in (invented, fixed)]))
    models.set_chat_model("diagnoser", fake)
    d = diagnose(attempts, ENVS, trajs)
    assert d.strategy == "llm" and d.summary == "llm says clinic arguments"
    assert d.errors[0].evidence == good_ids[:2]


def test_llm_path_falls_back_to_offline_after_retries():
    attempts, trajs = _attempts([("clinic_eval", ["find_patient"], 2, "gave_up", 2)])
    fake = _Fake(messages=iter([AIMessage(content="not json")] * 3))
    models.set_chat_model("diagnoser", fake)
    d = diagnose(attempts, ENVS, trajs)
    assert d.strategy == "offline" and d.target_error == "gave_up"
    assert "rejected 3 times" in d.notes[-1]
