"""Shared per-environment helpers: compiled once, seen by every tool; failures of helpers or of a
tool's module-level code are error observations, never a broken runtime."""

from __future__ import annotations

import json
import time

import pytest

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.errors import SpecError

HELPERS = '''
LIMIT = 2
calls = {"n": 0}


def user_or_fail(ctx, user_id):
    calls["n"] += 1
    row = ctx.one("SELECT id, name FROM users WHERE id = ?", (user_id,))
    if row is None:
        raise ToolError(f"no user {user_id}")
    return row
'''


def _with(notes_spec, helpers: str = "", tools: list[dict] = ()) -> EnvSpec:
    raw = json.loads(notes_spec.to_json())
    raw["helpers"] = helpers
    raw["tools"].extend(tools)
    return EnvSpec.from_dict(raw)


def _tool(name: str, source: str, mutates: bool = False) -> dict:
    return {"name": name, "description": f"{name} (test tool)", "source": source,
            "parameters": {"type": "object", "properties": {"user_id": {"type": "integer"}}},
            "mutates": mutates}


SHARED_TOOLS = [
    _tool("greet", "def greet(ctx, user_id=1):\n"
                   "    return 'hi ' + user_or_fail(ctx, user_id)['name']\n"),
    _tool("first_notes", "def first_notes(ctx, user_id=1):\n"
                         "    user_or_fail(ctx, user_id)\n"
                         "    return ctx.query('SELECT id FROM notes LIMIT ?', (LIMIT,))\n"),
    _tool("helper_calls", "def helper_calls(ctx):\n    return calls['n']\n"),
]


def test_every_tool_sees_the_helpers_globals(notes_spec):
    spec = _with(notes_spec, HELPERS, SHARED_TOOLS)
    with EnvRuntime(tool_timeout_s=2.0) as rt:
        ep = rt.open(spec)
        assert ep.step("greet", {"user_id": 2}).result == "hi Bo"
        assert ep.step("first_notes").result == [{"id": 1}]
        miss = ep.step("greet", {"user_id": 9})
        assert miss.error.kind == "tool_error" and "no user 9" in miss.error.message
        # one module per environment: the helpers' state is shared by its tools
        assert ep.step("helper_calls").result == 3


def test_helpers_are_part_of_the_fingerprint(notes_spec):
    a = _with(notes_spec, HELPERS)
    b = _with(notes_spec, HELPERS + "\nEXTRA = 1\n")
    assert a.fingerprint != b.fingerprint != notes_spec.fingerprint
    # specs without helpers keep their former fingerprint (the field is left out while empty)
    assert "helpers" not in notes_spec.content()
    assert EnvSpec.from_json(a.to_json()).helpers == HELPERS


def test_helpers_that_do_not_compile_are_refused(notes_spec):
    with pytest.raises(SpecError, match=r"helpers: helpers do not compile.*line 1"):
        _with(notes_spec, "def broken(:\n")


def test_helpers_failing_at_load_make_every_call_an_error_observation(notes_spec):
    spec = _with(notes_spec, "import no_such_module_anywhere\n", SHARED_TOOLS)
    with EnvRuntime(tool_timeout_s=2.0) as rt:
        ep = rt.open(spec)
        for tool, args in [("greet", {}), ("list_notes", {"user_id": 1})]:
            obs = ep.step(tool, args)
            assert obs.error.kind == "tool_exception"
            assert "helpers failed to load" in obs.error.message
            assert "ModuleNotFoundError" in obs.error.message
        # the same worker still serves other environments
        assert rt.open(notes_spec).step("list_notes", {"user_id": 1}).ok


@pytest.mark.parametrize("where", ["helpers", "tool"])
def test_module_level_exit_is_an_error_observation(notes_spec, where):
    code = "import os\nos._exit(7)\n"
    spec = (_with(notes_spec, code) if where == "helpers" else _with(
        notes_spec, "", [_tool("doomed", code + "def doomed(ctx):\n    return 1\n")]))
    with EnvRuntime(tool_timeout_s=1.0) as rt:
        ep = rt.open(spec)
        obs = ep.step("list_notes", {"user_id": 1})
        assert obs.error.kind == "worker_crash" and "module-level" in obs.error.message
        assert rt.open(notes_spec).step("list_notes", {"user_id": 1}).ok


def test_module_level_sleep_times_out_quickly_and_sys_exit_is_caught(notes_spec):
    spec = _with(notes_spec, "", [
        _tool("sleepy", "import time\ntime.sleep(30)\ndef sleepy(ctx):\n    return 1\n"),
        _tool("quitter", "import sys\nsys.exit(2)\ndef quitter(ctx):\n    return 1\n")])
    with EnvRuntime(tool_timeout_s=0.5) as rt:
        ep = rt.open(spec)
        start = time.monotonic()
        obs = ep.step("sleepy")
        assert obs.error.kind == "tool_exception" and "exceeded 0.5s" in obs.error.message
        assert time.monotonic() - start < 10
        assert ep.step("quitter").error.message.startswith("tool failed to load: SystemExit")
        assert ep.step("list_notes", {"user_id": 1}).ok  # the other tools load fine
