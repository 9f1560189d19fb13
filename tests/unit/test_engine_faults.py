"""Regression tests from fault and bad-input testing of the engine: large replies, non-JSON
results, tools that exit, hostile argument patterns, odd tool names, huge arguments, integers
past 64 bits, results nested too deep, and specs that cannot build refused at import."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_world.cli import app
from agent_world.envs.arguments import MAX_ARGUMENT_DEPTH
from agent_world.envs.episode import AGENT_FAULTS, ENV_FAULTS
from agent_world.envs.frames import MAX_RESULT_BYTES, MAX_RESULT_DEPTH
from agent_world.envs.spec import EnvSpec


def _tool(name: str, source: str, parameters: dict | None = None, mutates: bool = False) -> dict:
    return {"name": name, "description": f"{name} (test tool)", "source": source,
            "parameters": parameters or {"type": "object", "properties": {}}, "mutates": mutates}


TOOLS = [
    _tool("bulk", "def bulk(ctx, n):\n"
                  "    ctx.execute(\"INSERT INTO notes (ref, user_id, body) VALUES ('B', 1, 'b')\")\n"
                  "    return ['x' * 1000 for _ in range(n)]\n",
          {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
          mutates=True),
    _tool("weird", "def weird(ctx, what):\n"
                   "    ctx.execute(\"INSERT INTO notes (ref, user_id, body) VALUES ('W', 1, 'w')\")\n"
                   "    import datetime, sys\n"
                   "    if what == 'exit':\n        sys.exit(0)\n"
                   "    return {'set': {1}, 'date': datetime.date(2026, 1, 1),\n"
                   "            'nan': float('nan'), 'bytes': b'x'}[what]\n",
          {"type": "object", "properties": {"what": {"type": "string"}}}, mutates=True),
    _tool("code", "def code(ctx, value):\n    return value\n",
          {"type": "object", "properties": {"value": {"type": "string", "pattern": "^(a+)+$"}},
           "required": ["value"]}),
    _tool("needs", "def needs(ctx, a, b=1):\n    return a + b\n",
          {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}),
    _tool("keep", "def keep(ctx, value):\n    return value\n",
          {"type": "object", "properties": {"value": {}}, "required": ["value"]}),
    _tool("tree", "def tree(ctx, t):\n    return len(str(t))\n",
          {"type": "object", "properties": {"t": {"$ref": "#/$defs/tree"}},
           "$defs": {"tree": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}),
    _tool("nest", "def nest(ctx, levels, wide=False):\n"
                  "    x = [10 ** 30] if wide else []\n"
                  "    for _ in range(levels):\n        x = [x]\n"
                  "    return x\n",
          {"type": "object", "properties": {"levels": {"type": "integer"},
                                            "wide": {"type": "boolean"}}}),
]


@pytest.fixture(scope="module")
def spec(notes_spec):
    raw = json.loads(notes_spec.to_json())
    raw["tools"].extend(TOOLS)
    return EnvSpec.from_dict(raw)


@pytest.fixture()
def ep(runtime, spec):
    return runtime.open(spec)


def test_replies_of_any_size_up_to_the_limit_arrive_whole(ep):
    obs = ep.step("bulk", {"n": 500})  # ~500 kB: many pipe buffers
    assert obs.ok and len(obs.result) == 500 and obs.result[-1] == "x" * 1000
    assert ep.diff().counts()["notes"]["inserted"] == 1


def test_an_over_limit_reply_is_an_error_and_rolls_back(ep):
    before = ep.state_hash()
    obs = ep.step("bulk", {"n": MAX_RESULT_BYTES // 1000 + 10})
    assert obs.error.kind == "tool_exception" and "result too large" in obs.error.message
    assert ep.state_hash() == before
    assert ep.step("bulk", {"n": 1}).ok


@pytest.mark.parametrize("what", ["set", "date", "nan", "bytes"])
def test_non_json_results_are_an_error_not_stringified(ep, what):
    before = ep.state_hash()
    obs = ep.step("weird", {"what": what})
    assert obs.error.kind == "tool_exception" and "not JSON" in obs.error.message
    assert ep.state_hash() == before


def test_sys_exit_in_a_tool_is_an_error_observation(runtime, ep):
    restarts = runtime.pool.restarts
    obs = ep.step("weird", {"what": "exit"})
    assert obs.error.kind == "tool_exception" and "SystemExit" in obs.error.message
    assert runtime.pool.restarts == restarts
    assert ep.diff().empty


def test_pattern_checks_are_bounded_and_do_not_stall_other_threads(ep, runtime, notes_spec):
    other = runtime.open(notes_spec)
    done: list[float] = []

    def steady():
        start = time.monotonic()
        for _ in range(5):
            assert other.step("list_notes", {"user_id": 1}).ok
        done.append(time.monotonic() - start)

    thread = threading.Thread(target=steady)
    start = time.monotonic()
    thread.start()
    obs = ep.step("code", {"value": "a" * 5000 + "!"})
    elapsed = time.monotonic() - start
    thread.join()
    assert obs.error.kind == "invalid_arguments" and "took over" in obs.error.message
    assert elapsed < 5  # python's re would backtrack for longer than the universe's age
    assert done
    assert ep.step("code", {"value": "aaa"}).result == "aaa"
    assert ep.step("code", {"value": "ab"}).error.kind == "invalid_arguments"


@pytest.mark.parametrize("tool", [42, None, ["list_notes"], {"a": 1}])
def test_a_tool_name_that_is_not_a_string_is_unknown_tool(ep, tool):
    obs = ep.step(tool, {})
    assert obs.error.kind == "unknown_tool" and "available: " in obs.error.message


def test_oversized_arguments_are_clipped_in_messages(ep):
    obs = ep.step("add_note", {"user_id": "x" * 5_000_000, "body": "b"})
    assert obs.error.kind == "invalid_arguments"
    assert len(obs.error.message) < 1000 and "5,000,0" in obs.error.message
    obs = ep.step("add_note", {"user_id": 1, "body": "b", "y" * 100_000: 1})
    assert obs.error.kind == "invalid_arguments" and len(obs.error.message) < 1000


def test_extra_and_missing_arguments_are_invalid_arguments(ep):
    # rename_user's schema does not set additionalProperties: extra names are still refused
    obs = ep.step("rename_user", {"user_id": 1, "name": "Z", "nick": "z"})
    assert obs.error.kind == "invalid_arguments" and "'nick'" in obs.error.message
    # `a` is not required by the schema but the function needs it
    obs = ep.step("needs", {"b": 2})
    assert obs.error.kind == "invalid_arguments" and "'a'" in obs.error.message
    assert ep.step("needs", {"a": 2}).result == 3


@pytest.mark.parametrize("value", [2 ** 63, -(2 ** 63) - 1, 10 ** 400],
                         ids=["2**63", "-2**63-1", "10**400"])
def test_integers_past_64_bits_are_the_callers_fault(ep, value):
    # SQLite cannot bind them: the tool's statement used to raise OverflowError, which read as
    # the environment's fault (tool_exception) and kept the agent from being penalised
    before = ep.state_hash()
    for tool, arguments in (("list_notes", {"user_id": value}),
                            ("add_note", {"user_id": value, "body": "b"}),
                            ("needs", {"a": 1, "b": value}),
                            ("keep", {"value": {"ids": [1, value]}})):
        obs = ep.step(tool, arguments)
        assert obs.error.kind == "invalid_arguments", (tool, obs.error)
        assert "out of range" in obs.error.message and len(obs.error.message) < 300
    assert "['ids'][1]" in obs.error.message
    assert ep.state_hash() == before
    assert ep.step("list_notes", {"user_id": 2 ** 63 - 1}).result == []
    assert ep.step("keep", {"value": [-(2 ** 63), 2.0 ** 70]}).result == [-(2 ** 63), 2.0 ** 70]


def _nested(levels: int) -> list:
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_arguments_nested_too_deep_are_the_callers_fault(ep):
    # the arguments object is a level: this value ends exactly at the limit
    assert ep.step("keep", {"value": _nested(MAX_ARGUMENT_DEPTH - 1)}).ok
    assert ep.step("tree", {"t": _nested(MAX_ARGUMENT_DEPTH - 1)}).ok
    # 1,500 levels used to fail in the tool (a tool_exception), 5,000 to raise RecursionError
    # out of step(), whether encoding the request or checking a recursive schema
    for levels in (MAX_ARGUMENT_DEPTH, 1500, 5000):
        for tool, arguments in (("keep", {"value": _nested(levels)}),
                                ("tree", {"t": _nested(levels)})):
            obs = ep.step(tool, arguments)
            assert obs.error.kind == "invalid_arguments", (tool, levels, obs.error)
            assert f"nested more than {MAX_ARGUMENT_DEPTH} levels" in obs.error.message
            assert len(obs.error.message) <= 400


def test_a_result_nested_too_deep_is_the_tools_fault(ep):
    obs = ep.step("nest", {"levels": MAX_RESULT_DEPTH - 1, "wide": True})  # the limit exactly
    assert obs.ok and obs.to_text().startswith("[" * MAX_RESULT_DEPTH + "1000")
    # 900 levels used to come back and raise RecursionError in the caller's json; deeper ones
    # were a worker_error, a kind no table listed
    for levels in (MAX_RESULT_DEPTH, 900, 5000):
        obs = ep.step("nest", {"levels": levels, "wide": True})
        assert obs.error.kind == "tool_exception", obs.error
        assert f"more than {MAX_RESULT_DEPTH} levels" in obs.error.message
    assert ep.step("nest", {"levels": 3}).result == [[[[]]]]


def test_every_error_kind_is_in_the_documented_table():
    doc = (Path(__file__).parents[2] / "docs" / "environments.md").read_text()
    table = dict(re.findall(r"^\| `(\w+)` \| (agent|environment) \|", doc, re.M))
    assert table == {**{k: "agent" for k in AGENT_FAULTS}, **{k: "environment" for k in ENV_FAULTS}}


def test_env_import_builds_and_tests_before_storing(home, tmp_path, notes_spec):
    runner = CliRunner()
    raw = json.loads(notes_spec.to_json())
    raw["rows"]["users"].append({"id": 1, "name": "dup"})  # duplicate primary key
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps(raw))
    result = runner.invoke(app, ["env", "import", str(dup)])
    assert result.exit_code == 1 and "rows[users][2]" in result.output
    raw = json.loads(notes_spec.to_json())
    raw["tests"][0]["expect"] = {"min_items": 5}
    failing = tmp_path / "failing.json"
    failing.write_text(json.dumps(raw))
    result = runner.invoke(app, ["env", "import", str(failing)])
    assert result.exit_code == 1 and "1 of 2 tool tests fail" in result.output
    assert "notes" not in runner.invoke(app, ["env", "list"]).output
    result = runner.invoke(app, ["env", "import", str(failing), "--no-test"])
    assert result.exit_code == 0 and "imported notes v1" in result.output
