"""`agent-world mine` and `agent-world themes` through Typer's runner (file sources: fast)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agent_world.cli import app

runner = CliRunner()
DATA = Path(__file__).resolve().parents[2] / "agent_world" / "data" / "sources"


def test_mine_files_then_themes_tree(home):
    result = runner.invoke(app, ["mine", "--source", f"file:{DATA / 'clinic_booking_openapi.yaml'}",
                                 "--source", f"file:{DATA / 'book_lending_prd.md'}",
                                 "--iterations", "2", "--thread", "t-cli"])
    assert result.exit_code == 0, result.output
    assert "mined 2, failed 0" in result.stdout
    assert "Mined databases, per complexification iteration" in result.stdout
    tree = runner.invoke(app, ["themes"])
    assert tree.exit_code == 0
    assert "Health & Medical" in tree.stdout and "clinic-booking-openapi" in tree.stdout
    envs = runner.invoke(app, ["env", "list", "--stage", "mined"])
    assert "clinic_booking_openapi" in envs.stdout and "airline" not in envs.stdout


def test_mine_reports_a_failing_source_and_goes_on(home, tmp_path):
    bad = tmp_path / "notes.md"
    bad.write_text("")  # an empty PRD says nothing to mine
    result = runner.invoke(app, ["mine", "--source", f"file:{DATA / 'book_lending_prd.md'}",
                                 "--source", f"prd:{bad}", "--iterations", "1"])
    assert result.exit_code == 1, result.output  # was 0: a partial failure looked like success
    assert "mined 1, failed 1" in result.stdout and "agent-world ledger" in result.stdout


def test_bad_source_strings_are_one_message(home):
    result = runner.invoke(app, ["mine", "--source", "gopher:somewhere"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    missing = runner.invoke(app, ["mine", "--source", "file:/no/such/file.yaml"])
    assert missing.exit_code == 1 and "/no/such/file.yaml" in missing.output
    resume = runner.invoke(app, ["mine", "--resume"])
    assert resume.exit_code == 2 and "--thread" in resume.output
    unknown = runner.invoke(app, ["mine", "--thread", "never-ran", "--resume"])
    assert unknown.exit_code == 2 and "no run to resume" in unknown.output
