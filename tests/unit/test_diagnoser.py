"""The diagnosis agent on crafted failure sets: names the right weak environment and error class,
cites real evidence, targets the right training environments; the LLM path is checked."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from agent_world import models
from agent_world.evolution.diagnosis import diagnose
from agent_world.evolution.diagnosis_model import Diagnosis, EnvMeta, ToolMeta
from agent_world.synthesis.loop import recipe_odds
from agent_world.tasks.difficulty import BASE_ODDS, GUIDED_ODDS
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


# -- failures read from hand-made traces against their tasks' gold chains -------------------------
SHOP_EVAL = EnvMeta(name="shop_eval", split="heldout", taxonomy="Commerce / Retail / shop",
                    tools=["get_customer", "list_orders", "get_order", "get_order_items"],
                    tool_info={
                        "get_customer": ToolMeta(description="Look a customer up by email",
                                                 parameters=["email"], required=["email"]),
                        "list_orders": ToolMeta(description="List a customer's orders",
                                                parameters=["customer_id"],
                                                required=["customer_id"]),
                        "get_order": ToolMeta(description="One order by id",
                                              parameters=["order_id"], required=["order_id"]),
                        "get_order_items": ToolMeta(description="The items of one order",
                                                    parameters=["order_id"],
                                                    required=["order_id"])})


def _training() -> list[EnvMeta]:
    from agent_world.envs.examples import load_example

    return [EnvMeta.from_spec(load_example("airline"), "train"), SHOP_EVAL]


def _shop_task(instruction: str, chain: list[tuple[str, dict]], answer: Any) -> Task:
    view = {n: n for n in SHOP_EVAL.tools}
    return Task(kind="graph", env_name="shop_eval", env_fingerprint="fp-shop",
                instruction=instruction, reference_answer=answer, tool_view=view,
                chain=[ToolCall(tool=t, arguments=a) for t, a in chain],
                difficulty=Difficulty(chain_length=len(chain), level=len(chain))).with_id()


def _case(kind: str, n: int) -> tuple[Task, Trajectory]:
    """Hand-made failures: the policy lists orders where it needs one order (wrong_tool), passes
    the customer id off by one after reading it (wrong argument from an observation), types
    another order number than the request's (wrong argument from the request), or answers
    without a call (gave up)."""
    if kind == "confusion":
        t = _shop_task(f"What is the status of order {100 + n}?",
                       [("get_order", {"order_id": 100 + n})], "shipped")
        steps = [Step(tool="list_orders", arguments={"customer_id": 3}, ok=True,
                      result=[{"order_id": 100 + n, "total": 9}])]
        return t, Trajectory(task_id=t.id, steps=steps, finished=True, final_answer="9")
    if kind == "from_observation":
        t = _shop_task(f"How many orders has the customer with email c{n}@shop.test placed?",
                       [("get_customer", {"email": f"c{n}@shop.test"}),
                        ("list_orders", {"customer_id": 40 + n})], 2)
        steps = [Step(tool="get_customer", arguments={"email": f"c{n}@shop.test"}, ok=True,
                      result={"customer_id": 40 + n, "name": "Ann"}),
                 Step(tool="list_orders", arguments={"customer_id": 1}, ok=True, result=[])]
        return t, Trajectory(task_id=t.id, steps=steps, finished=True, final_answer=0)
    if kind == "from_request":
        t = _shop_task(f"List the items of order {200 + n}.",
                       [("get_order_items", {"order_id": 200 + n})], ["pen"])
        steps = [Step(tool="get_order_items", arguments={"order_id": "two hundred"}, ok=False,
                      error_kind="invalid_arguments", error_message="order_id: not an integer",
                      fault="agent")]
        return t, Trajectory(task_id=t.id, steps=steps, finished=True, final_answer="pen")
    if kind == "no_call":
        t = _shop_task(f"What is the total of order {300 + n}?",
                       [("get_order", {"order_id": 300 + n})], 12)
        return t, Trajectory(task_id=t.id, steps=[], finished=True, final_answer="12")
    if kind == "pass":
        t = _shop_task(f"What is the status of order {400 + n}?",
                       [("get_order", {"order_id": 400 + n})], "paid")
        steps = [Step(tool="get_order", arguments={"order_id": 400 + n}, ok=True,
                      result={"status": "paid"})]
        return t, Trajectory(task_id=t.id, steps=steps, finished=True, final_answer="paid",
                             reward=1.0)
    raise ValueError(kind)


def _hand_made(plan: list[tuple[str, int]]) -> tuple[list[Any], dict, dict, dict[str, list]]:
    attempts, trajs, tasks, ids = [], {}, {}, {}
    for kind, count in plan:
        for _ in range(count):
            n = len(attempts)
            task, traj = _case(kind, n)
            tid = f"ev/{n:04d}"
            attempts.append(attempt(task, traj, tid))
            trajs[tid], tasks[task.id] = traj, task
            ids.setdefault(kind, []).append(tid)
    return attempts, trajs, tasks, ids


def test_findings_name_the_confused_tools_the_wrong_argument_and_where_it_was():
    attempts, trajs, tasks, ids = _hand_made([("confusion", 3), ("from_observation", 2),
                                              ("from_request", 1), ("no_call", 2), ("pass", 2)])
    d = diagnose(attempts, _training(), trajs, tasks)
    by_id = {f.trajectory_id: f for f in d.findings}
    assert set(by_id) == {i for k in ("confusion", "from_observation", "from_request",
                                      "no_call") for i in ids[k]}
    for i in ids["confusion"]:
        f = by_id[i]
        assert (f.error_class, f.skill, f.called, f.expected) == (
            "wrong_tool", "choose_tool", "list_orders", "get_order")
    for i in ids["from_observation"]:
        f = by_id[i]
        assert (f.error_class, f.expected, f.argument, f.given) == (
            "wrong_arguments", "list_orders", "customer_id", 1)
        assert f.wanted == 40 + int(i[-4:]) and f.source == "observation 1 (get_customer)"
    [i] = ids["from_request"]
    assert (by_id[i].argument, by_id[i].given, by_id[i].source) == (
        "order_id", "two hundred", "request")
    for i in ids["no_call"]:
        f = by_id[i]
        assert (f.error_class, f.skill, f.expected, f.calls) == (
            "gave_up", "call_before_answering", "get_order", 0)
        assert f.detail.startswith("answered without a call")
    # the confusion, the argument slips and the skills cite exactly their attempts
    [c] = d.confusions
    assert (c.called, c.expected, c.count, c.evidence) == (
        "shop_eval/list_orders", "shop_eval/get_order", 3, ids["confusion"])
    slips = {(s.tool, s.argument, s.source): s.evidence for s in d.argument_slips}
    assert slips == {("shop_eval/list_orders", "customer_id", "observation of get_customer"):
                     ids["from_observation"],
                     ("shop_eval/get_order_items", "order_id", "request"): ids["from_request"]}
    skills = {s.name: s.evidence for s in d.skills}
    assert skills["choose_tool"] == ids["confusion"]
    assert skills["fill_arguments"] == ids["from_observation"] + ids["from_request"]
    assert skills["call_before_answering"] == ids["no_call"]
    # weak tools are the ones the failures involve, each with its own failures as evidence
    weak = {w.name: w.evidence for w in d.weak_tools}
    assert weak["shop_eval/get_order"] == ids["confusion"] + ids["no_call"]
    assert weak["shop_eval/list_orders"] == ids["confusion"] + ids["from_observation"]
    assert "shop_eval/get_customer" not in weak  # it was called right every time
    assert d.evidence_ids() <= {a.trajectory_id for a in attempts if not a.passed}


def test_wrong_tool_guidelines_show_the_analogue_of_the_confused_pair():
    attempts, trajs, tasks, ids = _hand_made([("confusion", 4), ("pass", 2)])
    d = diagnose(attempts, _training(), trajs, tasks)
    g = d.guidelines
    assert d.target_error == "wrong_tool" and g.environments == ["airline"]
    assert g.skills[0] == "choose_tool" and g.error_classes[0] == "wrong_tool"
    # one order by id vs a customer's list → one reservation by id vs a customer's list
    # both ways: each tool of the pair is practised beside the other
    assert g.confusable == {"airline/get_reservation": ["list_customer_reservations"],
                            "airline/list_customer_reservations": ["get_reservation"]}
    assert {"airline/get_reservation", "airline/list_customer_reservations"} <= set(g.tools)
    # the targeted levels are those of the failed tasks (and the edge level)
    failed = {t.difficulty.level for t in tasks.values()
              if any(a.task_id == t.id and not a.passed for a in attempts)}
    assert failed <= set(g.levels) and "levels " in d.text()
    cites = {(c.kind, c.name): c for c in g.cites}
    pair = cites[("confusable",
                  "airline/get_reservation ~ airline/list_customer_reservations")]
    assert pair.evidence == ids["confusion"] and "list_orders" in pair.why
    assert cites[("environment", "airline")].evidence == ids["confusion"]
    assert cites[("tool", "airline/get_reservation")].evidence == ids["confusion"]
    assert cites[("skill", "choose_tool")].evidence == ids["confusion"]
    assert cites[("difficulty", f"level {g.difficulty.level}, chains of "
                                f"{g.difficulty.chain_length}")].evidence == ids["confusion"]
    assert "shop_eval" not in g.environments and not any(
        t.startswith("shop_eval/") for t in g.tools)  # held-out tools are never trained on


def test_argument_and_give_up_guidelines_follow_their_failures():
    attempts, trajs, tasks, ids = _hand_made([("from_observation", 3), ("no_call", 1),
                                              ("pass", 1)])
    d = diagnose(attempts, _training(), trajs, tasks)
    g = d.guidelines
    assert d.target_error == "wrong_arguments"
    # a customer id read from an observation: chained calls, tools taking a customer id
    assert g.difficulty.branching == 1 and g.difficulty.chain_length >= 2
    assert any(t in g.tools for t in ("airline/list_customer_reservations",
                                      "airline/get_loyalty_balance"))
    cited = [c for c in g.cites if c.kind == "tool" and "customer_id" in c.why]
    assert cited and all(c.evidence == ids["from_observation"] for c in cited)

    attempts, trajs, tasks, ids = _hand_made([("no_call", 4), ("pass", 1)])
    d = diagnose(attempts, _training(), trajs, tasks)
    g = d.guidelines
    assert d.target_error == "gave_up" and g.skills == ["call_before_answering"]
    assert g.difficulty.chain_length == 1  # it never called: single calls first
    assert {c.kind for c in g.cites} >= {"environment", "skill", "difficulty"}
    assert all(c.evidence and set(c.evidence) <= set(ids["no_call"]) for c in g.cites)


def test_llm_reads_traces_and_its_claims_are_checked_against_real_attempts():
    attempts, trajs, tasks, ids = _hand_made([("confusion", 2), ("pass", 2)])
    models.set_chat_model("diagnoser", None)
    base = diagnose(attempts, _training(), trajs, tasks).model_dump()
    passed = ids["pass"][0]
    # a finding on an attempt that passed, then a held-out tool as a guideline tool
    on_pass = {**base, "findings": [{**base["findings"][0], "trajectory_id": passed}]}
    heldout = {**base, "guidelines": {**base["guidelines"],
                                      "tools": ["shop_eval/get_order"]}}
    good = {**base, "summary": "it lists where it should look one order up"}
    seen: list[str] = []

    class Reading(_Fake):
        def _generate(self, messages, *a, **kw):  # record what the model was shown
            seen.append(messages[1].content if len(messages) > 1 else "")
            return super()._generate(messages, *a, **kw)

    fake = Reading(messages=iter([AIMessage(content=Diagnosis.model_validate(x)
                                            .model_dump_json()) for x in (on_pass, heldout,
                                                                           good)]))
    models.set_chat_model("diagnoser", fake)
    d = diagnose(attempts, _training(), trajs, tasks)
    assert d.strategy == "llm" and d.summary == good["summary"]
    # the traces it read hold the request, the gold chain and the calls made
    assert "gold: get_order" in seen[0] and "list_orders(" in seen[0]
    assert "What is the status of order" in seen[0]


def test_guidelines_carry_the_shape_of_the_failed_tasks():
    """The failed tasks' shape is counted and cited (levels, opaque names, many distractors,
    programs); targeted tasks take its opaque names and distractors (a wrong_tool diagnosis
    does not make them opaque)."""
    attempts, trajs, tasks, ids = _hand_made([("confusion", 3), ("from_observation", 1),
                                              ("pass", 2)])
    d = diagnose(attempts, _training(), trajs, tasks)
    shape = d.guidelines.shape
    assert d.target_error == "wrong_tool" and shape is not None
    assert shape.failures == 4 and shape.levels == {1: 3, 2: 1}
    assert shape.obscured == 0.0 and shape.many_distractors == 0.0 and shape.programmatic == 0.0
    cite = next(c for c in d.guidelines.cites if c.kind == "shape")
    assert cite.evidence == ids["confusion"] + ids["from_observation"] and "L1 3" in cite.why
    assert "drawn like the failed tasks (levels L1 3, L2 1" in d.text()
    # the odds the synthesizer reads from it: as often opaque and crowded as the failures
    g = d.guidelines.model_dump(mode="json")
    assert recipe_odds(g) == (0.0, 0.0)
    # without a shape (a hand-written guidelines file) wrong_tool asks for opaque names
    assert recipe_odds({"error_classes": ["wrong_tool"]}) == (GUIDED_ODDS, GUIDED_ODDS)
    assert recipe_odds({}) == (BASE_ODDS, BASE_ODDS)
    # an opaque failed task counts as one
    opaque = {k: v.model_copy(update={"difficulty": v.difficulty.model_copy(
        update={"obscured": True, "distractors": 9})}) for k, v in tasks.items()}
    d = diagnose(attempts, _training(), trajs, opaque)
    assert d.guidelines.shape.obscured == 1.0 and d.guidelines.shape.many_distractors == 1.0
