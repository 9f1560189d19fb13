"""What a programmatic task's scripts may send back: a verification script's score is a bool
or a finite number in [0, 1], a solution speaks the line protocol; anything else fails the
script with one line (and with it the check or the gate), never scores and never escapes as
a traceback."""

from __future__ import annotations

import sqlite3

import pytest

from agent_world.errors import SandboxUnavailable
from agent_world.sandbox import check_isolation
from agent_world.synthesis.solution_gates import gold_run
from agent_world.tasks.check import check_task
from agent_world.tasks.model import Task
from agent_world.tasks.scripts import ScriptError, run_solution, run_verify

try:
    check_isolation()
except SandboxUnavailable as exc:
    pytest.skip(f"no local sandbox on this machine: {exc}", allow_module_level=True)

NL = b"\n"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("scripts") / "state.sqlite"
    sqlite3.connect(path).close()
    return path


def _verify(body: str) -> str:
    return "def verify(initial_db, final_db, answer):\n" + "".join(
        f"    {line}\n" for line in body.splitlines())


@pytest.mark.parametrize("returned,score", [
    ("True", 1.0), ("False", 0.0), ("1", 1.0), ("0", 0.0), ("0.25", 0.25), ("-0.0", 0.0)])
def test_a_score_is_a_bool_or_a_number_in_0_1(db, returned, score):
    assert run_verify(_verify(f"return {returned}"), db, db, None) == score


@pytest.mark.parametrize("returned", [
    "float('nan')", "float('inf')", "float('-inf')", "1.5", "-0.5", "2", "'1'", "None",
    "[1.0]", "1j"])
def test_anything_else_fails_the_script(db, returned):
    with pytest.raises(ScriptError, match=r"finite number in \[0, 1\]") as err:
        run_verify(_verify(f"return {returned}"), db, db, None)
    assert "\n" not in str(err.value)


def test_a_nan_answer_earns_nothing(db):
    """A score computed from the answer: answering "nan" made it NaN, which clamped to 1."""
    task = Task(kind="programmatic", env_name="e", env_fingerprint="f", instruction="How many?",
                verify=_verify("return 1 - abs(float(answer) - 3) / 3"))
    assert check_task(task, db, db, "3").passed
    res = check_task(task, db, db, "nan")
    assert (res.passed, res.score) == (False, 0.0)
    assert "finite number" in res.detail


@pytest.mark.parametrize("line", [b'{"result": NaN}', b'{"result": Infinity}', b'[1]',
                                  b'{"result": "1"}', b'{"result": true}', b'not json'])
def test_a_forged_result_line_fails(db, line):
    """The host checks the line itself: a script may write to the real stdout and exit."""
    source = _verify(f"import os\nos.write(1, {line + NL!r})\nos._exit(0)")
    with pytest.raises(ScriptError):
        run_verify(source, db, db, None)


def test_prints_of_a_verification_script_do_not_break_the_result(db):
    source = _verify("import sys\nprint('checking', answer)\nsys.stdout.write('no newline')\n"
                     "return True")
    assert run_verify(source, db, db, 7) == 1.0


def _solution(body: str) -> str:
    return "def solve(env):\n" + "".join(f"    {line}\n" for line in body.splitlines())


def _no_call(tool, arguments):
    raise AssertionError(f"no tool call expected, got {tool!r} {arguments!r}")


@pytest.mark.parametrize("line", [b"junk", b"", b'{"x": 1}', b"[1, 2]", b"null",
                                  b'{"call": 5}', b'{"call": "t", "arguments": [1]}',
                                  b'{"call": "t", "arguments": "a=1"}', b"\xff\xfe"])
def test_protocol_garbage_from_a_solution_fails_it(line):
    source = _solution(f"import os, time\nos.write(1, {line + NL!r})\ntime.sleep(30)")
    with pytest.raises(ScriptError, match="solution broke the protocol") as err:
        run_solution(source, _no_call, timeout_s=15)
    assert "\n" not in str(err.value)


def test_a_half_written_line_does_not_outlast_the_timeout():
    source = _solution("import os, time\nos.write(1, b'{\"answer\": ')\ntime.sleep(60)")
    with pytest.raises(ScriptError, match="exceeded"):
        run_solution(source, _no_call, timeout_s=2)


def test_an_endless_line_fails_without_filling_the_host():
    source = _solution("import os, time\nos.write(1, b'7' * (4 << 20))\ntime.sleep(60)")
    with pytest.raises(ScriptError, match="longer than"):
        run_solution(source, _no_call, timeout_s=15)


def test_a_chatty_solution_still_answers():
    """Prints go to stderr, which the host drains while it waits (a full pipe would stall the
    solution until its timeout)."""
    source = _solution("for i in range(20000):\n    print('step', i, 'x' * 60)\n"
                       "return env.call('echo', n=1)")
    calls = []

    def call(tool, arguments):
        calls.append((tool, arguments))
        return {"ok": True, "result": arguments}

    assert run_solution(source, call, timeout_s=15) == {"n": 1}
    assert calls == [("echo", {"n": 1})]


def test_a_gate_fails_a_garbled_gold_solution_with_one_line(notes_spec, runtime):
    task = Task(kind="programmatic", env_name=notes_spec.name,
                env_fingerprint=notes_spec.fingerprint, instruction="List the notes.",
                solution=_solution("import sys\nsys.__stdout__.write('{\"calls\": []}\\n')\n"
                                   "sys.__stdout__.flush()\nreturn 1"),
                verify=_verify("return True"))
    passed, answer, _, detail = gold_run(task, notes_spec, runtime)
    assert (passed, answer) == (False, None)
    assert detail.startswith("solution failed: solution broke the protocol")
    assert "\n" not in detail
