"""The CLI through Typer's runner: env list/show/import/play, errors as one clear message."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from agent_world.cli import app
from tests.conftest import FIXTURES

runner = CliRunner()
NOTES = str(FIXTURES / "notes_env.json")


def invoke(*args, input=None):
    return runner.invoke(app, list(args), input=input, catch_exceptions=False)


def test_env_list_shows_the_bundled_examples(home):
    result = invoke("env", "list")
    assert result.exit_code == 0
    assert "airline" in result.stdout and "ecommerce" in result.stdout
    assert (home / "catalog.sqlite").exists()


def test_env_import_then_show_and_versioning(home, tmp_path):
    result = invoke("env", "import", NOTES)
    assert result.exit_code == 0 and "imported notes v1" in result.stdout
    assert "imported notes v1" in invoke("env", "import", NOTES).stdout  # unchanged: same version
    raw = json.loads((FIXTURES / "notes_env.json").read_text())
    raw["rows"]["users"].append({"id": 3, "name": "Cy"})
    changed = tmp_path / "notes2.json"
    changed.write_text(json.dumps(raw))
    assert "imported notes v2" in invoke("env", "import", str(changed)).stdout
    shown = invoke("env", "show", "notes")
    assert shown.exit_code == 0
    assert "add_note" in shown.stdout and "users" in shown.stdout and "v2" in shown.stdout
    as_json = json.loads(invoke("env", "show", "notes", "--json").stdout)
    assert len(as_json["rows"]["users"]) == 3


def test_env_play_prints_observations_and_diff(home, tmp_path):
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps([
        {"tool": "add_note", "arguments": {"user_id": 2, "body": "from play"}},
        {"tool": "list_notes", "arguments": {"user_id": 2}},
        {"tool": "add_note", "arguments": {"user_id": "two"}},
    ]))
    result = invoke("env", "play", NOTES, str(calls))
    assert result.exit_code == 0
    assert "from play" in result.stdout
    assert "invalid_arguments" in result.stdout
    assert "State diff" in result.stdout and "notes" in result.stdout
    out = json.loads(invoke("env", "play", NOTES, str(calls), "--json", "--seed", "4").stdout)
    assert [o["ok"] for o in out["observations"]] == [True, True, False]
    assert out["diff"]["tables"]["notes"]["inserted"][0]["body"] == "from play"
    # deterministic: same seed, same output
    again = json.loads(invoke("env", "play", NOTES, str(calls), "--json", "--seed", "4").stdout)
    assert again == out


def test_env_play_reads_stdin(home):
    result = invoke("env", "play", NOTES, "-", "--json",
                    input=json.dumps({"tool": "list_notes", "arguments": {"user_id": 1}}))
    assert json.loads(result.stdout)["observations"][0]["result"][0]["body"] == "hello"


def test_errors_are_one_message_not_a_traceback(home, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "theme": {}}')
    result = runner.invoke(app, ["env", "import", str(bad)])
    assert result.exit_code == 1
    assert "invalid environment spec" in result.output and "Traceback" not in result.output
    missing = runner.invoke(app, ["env", "show", "no_such_env"])
    assert missing.exit_code == 1 and "no environment named 'no_such_env'" in missing.output
    calls = runner.invoke(app, ["env", "play", NOTES, str(tmp_path / "none.json")])
    assert calls.exit_code == 1 and "no such file" in calls.output


def test_home_option_decides_where_the_catalog_lives(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENT_WORLD_HOME", raising=False)
    other = tmp_path / "elsewhere"
    assert invoke("--home", str(other), "env", "list").exit_code == 0
    assert (other / "catalog.sqlite").exists()


def test_unsafe_no_sandbox_flag_runs_unconfined_and_warns(home, tmp_path, monkeypatch, caplog):
    import logging

    from agent_world.sandbox import UNSAFE_ENV

    monkeypatch.setenv(UNSAFE_ENV, "0")  # restored after the test (the flag sets it)
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps({"tool": "list_notes", "arguments": {"user_id": 1}}))
    with caplog.at_level(logging.WARNING, logger="agent_world"):
        result = invoke("--unsafe-no-sandbox", "env", "play", NOTES, str(calls), "--json")
    assert json.loads(result.stdout)["observations"][0]["ok"]
    warnings = [r.getMessage() for r in caplog.records if "WITHOUT a sandbox" in r.getMessage()]
    assert len(warnings) >= 2  # the command, and the environment's tool workers
