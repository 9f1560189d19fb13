"""The adapters' own pieces, without the peer libraries: TRL environment classes built from
tool schemas, task sources, the replay model, a task attempt."""

from __future__ import annotations

import inspect
import json
from typing import Literal, get_args

import pytest

from agent_world.errors import AgentWorldError
from agent_world.integrations.taskfiles import resolve_tasks, write_tasks
from agent_world.integrations.trl import ArenaEnvironment, _annotation, tool_method, trl_setup
from agent_world.tasks.model import Task
from agent_world.training.drills import drill_tasks


@pytest.fixture(scope="module")
def cancel_tasks():
    return drill_tasks("cancel", limit=2)


def test_schema_types_become_hints_transformers_reads_back():
    from transformers.utils import get_json_schema

    assert _annotation({"type": "string", "enum": ["a", "b"]}) == Literal["a", "b"]
    assert _annotation({"type": ["integer", "null"]}) == int | None
    assert _annotation({"type": "array", "items": {"type": "number"}}) == list[float]
    view = {"name": "book", "description": "Book a seat.\nOn a flight.", "parameters": {
        "type": "object", "required": ["flight"],
        "properties": {"flight": {"type": "string", "description": "Flight number."},
                       "class": {"type": "string", "enum": ["economy", "business"]},
                       "bags": {"type": "integer", "description": "Checked bags."}}}}
    calls = []

    class Holder:
        def call(self, name, arguments):
            calls.append((name, arguments))
            return "ok"

    method = tool_method(view, lambda self: Holder())
    schema = get_json_schema(method)["function"]
    assert schema["name"] == "book" and schema["description"] == "Book a seat. On a flight."
    props = schema["parameters"]["properties"]
    assert set(props) == {"flight", "class_", "bags"}  # a Python keyword gets a trailing _
    assert schema["parameters"]["required"] == ["flight"]
    assert props["class_"]["enum"] == ["economy", "business"]
    assert props["bags"]["description"] == "Checked bags."
    assert method(None, flight="NW1", class_="economy") == "ok"
    assert calls == [("book", {"flight": "NW1", "class": "economy"})]  # back to the JSON name
    assert list(inspect.signature(method).parameters)[:2] == ["self", "flight"]
    assert get_args(_annotation({"type": "string", "enum": ["x"]})) == ("x",)


def test_trl_setup_groups_tasks_by_tool_view(cancel_tasks):
    hidden = cancel_tasks[1].model_copy(update={
        "tool_view": {"tool_a1": "cancel_reservation"},
        "instruction": "Please " + cancel_tasks[1].instruction}).with_id()
    setup = trl_setup([cancel_tasks[0], hidden])
    assert isinstance(setup.environment_factory, dict)  # TRL's multi-environment mode
    assert sorted(setup.environment_factory) == ["AirlineEnv", "AirlineEnv2"]
    rows = {r["task_id"]: r for r in setup.rows}
    cls = setup.environment_factory[rows[hidden.id]["environment"]]
    tools = [n for n, _ in inspect.getmembers(cls, inspect.isfunction)
             if not n.startswith("_") and n != "reset"]
    assert tools == ["tool_a1"]
    env = cls()
    with pytest.raises(AgentWorldError, match="before reset"):
        env.tool_a1(reservation_id="MGX7Q2")
    with pytest.raises(AgentWorldError, match="not one of its 1 tasks"):
        env.reset(task_id=cancel_tasks[0].id)
    env.reset(**{k: v for k, v in rows[hidden.id].items() if k != "environment"})
    rid = hidden.chain[0].arguments["reservation_id"]
    assert json.loads(env.tool_a1(reservation_id=rid))["status"] == "cancelled"
    assert env._finish("<answer>cancelled</answer>") == 1.0
    env._close()
    assert isinstance(env, ArenaEnvironment)


def test_task_sources_and_export_files(tmp_path, cancel_tasks):
    from agent_world.envs.examples import load_example

    spec = load_example("airline")
    out = write_tasks(cancel_tasks, {spec.fingerprint: spec}, tmp_path / "x")
    tasks, specs = resolve_tasks(out)
    assert [t.id for t in tasks] == [t.id for t in cancel_tasks]
    assert list(specs) == [spec.fingerprint]
    assert [t.id for t in resolve_tasks(out / "tasks.jsonl", limit=1)[0]] == [cancel_tasks[0].id]
    assert len(resolve_tasks("drill:lookup", limit=2)[0]) == 2
    for bad, message in [("drill:nope", "unknown drill"), (tmp_path / "none", "no such file"),
                         (tmp_path, "not an export directory")]:
        with pytest.raises(AgentWorldError, match=message):
            resolve_tasks(bad)
    (tmp_path / "bad.jsonl").write_text('{"kind": "graph"}\n')
    with pytest.raises(AgentWorldError, match="bad.jsonl:1: not a task"):
        resolve_tasks(tmp_path / "bad.jsonl")
    orphan = Task(kind="graph", env_name="gone", env_fingerprint="f" * 16, instruction="x")
    with pytest.raises(AgentWorldError, match="not in the catalog"):
        resolve_tasks([orphan])


def test_replay_model_answers_like_an_openai_server(cancel_tasks):
    import httpx

    task = cancel_tasks[0]
    from agent_world.integrations.replay import replay_transport

    transport = replay_transport([task])
    client = httpx.Client(transport=transport, base_url="http://replay.invalid/v1")
    user = [{"role": "user", "content": task.instruction}]
    first = client.post("/chat/completions", json={"model": "m", "messages": user}).json()
    call = first["choices"][0]["message"]["tool_calls"][0]["function"]
    assert call["name"] == "cancel_reservation"
    assert json.loads(call["arguments"]) == task.chain[0].arguments
    done = client.post("/chat/completions", json={"model": "m", "messages": user + [
        first["choices"][0]["message"], {"role": "tool", "content": "{}",
                                         "tool_call_id": "call_0"}]}).json()
    assert done["choices"][0]["message"]["content"] == "Done."
    assert client.post("/models").status_code == 404
