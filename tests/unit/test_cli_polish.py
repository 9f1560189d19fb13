"""The CLI at 80 columns, with hostile names, user mistakes and machine-readable output."""

from __future__ import annotations

import errno
import io
import json
import re
import subprocess
import sys

import typer.main
from rich.text import Text
from typer.testing import CliRunner

from agent_world import __version__
from agent_world.cli import app
from agent_world.cli.common import SafeConsole, strip_control
from agent_world.envs.spec import EnvSpec
from tests.conftest import FIXTURES

runner = CliRunner()
NOTES = FIXTURES / "notes_env.json"


def invoke(*args: str, input: str | None = None):
    return runner.invoke(app, list(args), input=input)


def _one_line_error(result, code: int = 1) -> str:
    assert result.exit_code == code, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def _hostile_spec(tmp_path):
    raw = json.loads(NOTES.read_text())
    raw["name"] = "notes_with_a_rather_long_name"
    raw["theme"]["name"] = "Notes [/x] [bold]app"
    raw["theme"]["description"] = "Markup [/] everywhere [red"
    raw["rows"]["users"] += [{"id": 10 + i, "name": f"user [/{i}]"} for i in range(1200)]
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(raw))
    return path


def test_tables_fit_80_columns_and_never_cut_numbers(home, tmp_path):
    """Was: each row of `env list` wrapped over 8-10 lines and 1,036 rows showed as `10…`."""
    assert invoke("env", "import", str(_hostile_spec(tmp_path)), "--no-test").exit_code == 0
    result = invoke("env", "list")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    airline = [line for line in lines if line.startswith("airline ")]
    assert len(airline) == 1 and "1,036" in airline[0]  # one line per environment
    rows = EnvSpec.load(_hostile_spec(tmp_path)).stats()["rows"]
    assert any("notes_with_a_rather_long_name" in line and f"{rows:,}" in line for line in lines)


def test_markup_in_names_is_printed_not_interpreted(home, tmp_path):
    """Was: `[/x]` in a theme name crashed `env show` and `env play`."""
    path = _hostile_spec(tmp_path)
    shown = invoke("env", "show", str(path))
    assert shown.exit_code == 0, shown.output
    assert "Notes [/x] [bold]app" in shown.stdout and "Markup [/] everywhere [red" in shown.stdout
    call = json.dumps({"tool": "add_note", "arguments": {"user_id": 1, "body": "[/oops]"}})
    played = invoke("env", "play", str(path), "-", input=call)
    assert played.exit_code == 0, played.output
    assert "[/oops]" in played.stdout


def test_control_sequences_from_a_source_never_reach_the_terminal(home, tmp_path):
    """Was: an OSC title sequence, a screen clear and an OSC 8 hyperlink in a theme
    description and a table name went to the terminal raw from `env show`."""
    raw = json.loads(NOTES.read_text())
    raw["theme"]["description"] = ("Notes\x1b]0;pwned\x07 kept \x1b[2J\x1b[31mred\x1b[0m "
                                   "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ \x9b1A end")
    raw["theme"]["name"] = "Notes\x1bc app"
    path = tmp_path / "escapes.json"
    path.write_text(json.dumps(raw))
    for args in (["env", "show", str(path)], ["env", "import", str(path), "--no-test"],
                 ["env", "list"]):
        shown = invoke(*args)
        assert shown.exit_code == 0, shown.output
        assert not any(c in shown.output for c in "\x1b\x07\x9b"), repr(shown.output)
    shown = invoke("env", "show", str(path))
    assert "Notes kept red link  end" in shown.stdout and "pwned" not in shown.stdout
    assert "Notesc app" not in shown.stdout and "Notes app" in shown.stdout


def test_the_console_keeps_its_segment_hook():
    """SafeConsole cleans Text renderables in Rich's private `_render_buffer`: if a Rich
    release renames it, this fails instead of the cleaning silently stopping."""
    out = io.StringIO()
    console = SafeConsole(file=out, force_terminal=True, width=40)
    console.print(Text("raw \x1b[2J text"), style="bold")
    assert "\x1b[2J" not in out.getvalue() and "\x1b[1m" in out.getvalue()
    assert strip_control("plain ünïcode 日本\tand tabs\n") == "plain ünïcode 日本\tand tabs\n"


def test_user_mistakes_are_one_line_errors(home, tmp_path, monkeypatch):
    assert "did you mean 'list'" in _one_line_error(invoke("env", "lsit"), 2)
    assert "did you mean 'env'" in _one_line_error(invoke("evn", "list"), 2)
    assert "did you mean 'airline'" in _one_line_error(invoke("env", "show", "airlin"))
    _one_line_error(invoke("env", "play", "airline", str(tmp_path / "none.json")))
    _one_line_error(invoke("env", "list", "--stagee", "x"), 2)
    file_home = tmp_path / "a-file"
    file_home.write_text("")
    assert "cannot be used" in _one_line_error(invoke("--home", str(file_home), "env", "list"))
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "catalog.sqlite").write_bytes(b"this is not a database" * 100)
    assert "not a database" in _one_line_error(invoke("--home", str(corrupt), "env", "list"))

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("agent_world.envs.catalog.Catalog.put_env", full)
    assert "No space left" in _one_line_error(invoke("env", "import", str(NOTES), "--no-test"))


def test_home_option_anywhere_and_version(tmp_path):
    home = tmp_path / "late-home"
    cmd = [sys.executable, "-m", "agent_world.cli", "env", "list", "--home", str(home)]
    assert subprocess.run(cmd, capture_output=True, timeout=120).returncode == 0
    assert (home / "catalog.sqlite").exists()
    result = invoke("--version")
    assert result.exit_code == 0 and __version__ in result.stdout


def test_json_outputs(home):
    envs = json.loads(invoke("env", "list", "--json").stdout)
    assert {e["name"] for e in envs} >= {"airline", "ecommerce"}
    call = json.dumps({"tool": "list_notes", "arguments": {"user_id": "not a number"}})
    played = json.loads(invoke("env", "play", str(NOTES), "-", "--json", input=call).stdout)
    assert played["observations"][0]["error"]["fault"] == "agent"  # was missing
    assert json.loads(invoke("themes", "--json").stdout) == []
    assert json.loads(invoke("runs", "--json").stdout) == []


def test_env_test_and_rm(home, tmp_path):
    result = invoke("env", "test", str(NOTES), "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["failed"] == 0 and out["passed"] == len(EnvSpec.load(NOTES).tests) > 0
    raw = json.loads(NOTES.read_text())
    raw["tests"][0]["expect"] = {"equals": ["something else"]}
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(raw))
    failed = invoke("env", "test", str(broken))
    assert failed.exit_code == 1 and "FAIL" in failed.stdout

    assert invoke("env", "import", str(NOTES), "--no-test").exit_code == 0
    assert invoke("env", "rm", "notes", "ecommerce", "-y").exit_code == 0
    names = {e["name"] for e in json.loads(invoke("env", "list", "--json").stdout)}
    assert "notes" not in names and "ecommerce" not in names  # removing an example sticks
    _one_line_error(invoke("env", "rm", "notes", "-y"))


def test_ledger_and_runs_read_what_mining_wrote(home, tmp_path):
    bad = tmp_path / "empty.md"
    bad.write_text("")
    assert invoke("mine", "--source", f"prd:{bad}", "--iterations", "0").exit_code == 1
    ledger = json.loads(invoke("ledger", "--json").stdout)
    assert ledger and "empty.md" in ledger[-1]["subject"]
    text = invoke("ledger", "--stage", "mine")
    assert text.exit_code == 0 and "empty" in text.stdout
    runs = json.loads(invoke("runs", "--json").stdout)
    assert [r["status"] for r in runs] == ["failed"]
    assert "failed" in invoke("runs").stdout


def _command_cells(help_text: str) -> list[list[str]]:
    """The description cells of a help screen's Commands panel, line by line."""
    cells: list[list[str]] = []
    inside = False
    for line in help_text.splitlines():
        if line.startswith("╭─ Commands"):
            inside = True
        elif line.startswith("╰"):
            inside = False
        elif inside and (m := re.match(r"^│ (\S+)? +(\S.*?)\s*│$", line)):
            if m.group(1):
                cells.append([m.group(2)])
            elif cells:
                cells[-1].append(m.group(2))
    return cells


def test_help_texts_wrap_as_sentences_at_80_columns():
    """Was: docstring line breaks kept in the help, so descriptions broke mid-sentence
    ("... Exits 1 when" / "any source failed ..."). A line followed by a word that would
    have fit on it was broken by the docstring, not by the width."""
    for args in (["--help"], ["env", "--help"], ["tasks", "--help"], ["export", "--help"]):
        shown = runner.invoke(app, args, env={"COLUMNS": "80"})
        assert shown.exit_code == 0, shown.output
        cells = _command_cells(shown.output)
        assert len(cells) >= 3, shown.output
        for cell in cells:
            width = max(len(part) for part in cell)
            for part, following in zip(cell, cell[1:], strict=False):
                assert len(part) + 1 + len(following.split()[0]) > width, (args, cell)


def test_root_help_lists_every_command_without_importing_them():
    """The root help comes from the short help kept beside each command's path, and that
    text is the command's own; a command's module (and its stage's dependencies) is imported
    only when the command runs."""
    code = ("import sys; from typer.testing import CliRunner; from agent_world.cli import app; "
            "r = CliRunner().invoke(app, ['--help'], env={'COLUMNS': '200'}); "
            "assert r.exit_code == 0, r.output; print(r.output); "
            "print(sorted(m for m in sys.modules if m.startswith('agent_world.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "agent_world.cli.evolve" not in out and "agent_world.cli.train" not in out
    group = typer.main.get_command(app)
    for name, (_, short_help) in group.lazy.items():
        assert name in out
        real = group.get_command(typer.Context(group), name)
        assert real.get_short_help_str(limit=1000) == short_help, name
