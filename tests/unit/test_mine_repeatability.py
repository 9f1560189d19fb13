"""Mining keyed on what a source says: re-runs, repeated sources and moved files change
nothing; failures give a non-zero exit and a summary; iterations are bounded and reported."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from agent_world.cli import app
from agent_world.envs.catalog import Catalog
from tests.conftest import FIXTURES

runner = CliRunner()
DATA = Path(__file__).resolve().parents[2] / "agent_world" / "data" / "sources"
PRD = DATA / "book_lending_prd.md"


def mine(*args: str):
    return runner.invoke(app, ["mine", "--iterations", "0", *args])


def _themes(home: Path) -> list[dict]:
    cat = Catalog.open(home)
    try:
        return cat.list_themes()
    finally:
        cat.close()


def test_running_a_thread_again_keeps_its_themes(home):
    """Was: the second run counted each theme twice and merged it into itself (0 themes)."""
    for _ in range(2):
        result = mine("--source", f"file:{PRD}", "--thread", "again")
        assert result.exit_code == 0, result.output
        assert "sources 1: mined 1, failed 0; themes 1 after merging 0" in result.stdout
    assert [t["name"] for t in _themes(home)] == ["book-lending-prd"]


def test_a_source_named_twice_is_mined_once(home):
    result = mine("--source", f"file:{PRD}", "--source", f"file:{PRD}",
                  "--source", str(PRD))
    assert result.exit_code == 0, result.output
    assert "sources 1: mined 1" in result.stdout
    assert len(_themes(home)) == 1


def test_the_same_file_from_another_folder_is_the_same_theme(home, tmp_path):
    """Was: the absolute path was in the theme key and fingerprint: a new theme, and a new
    version overwrote the environment of the same name."""
    moved = tmp_path / "elsewhere" / PRD.name
    moved.parent.mkdir()
    shutil.copy(PRD, moved)
    assert mine("--source", f"file:{PRD}").exit_code == 0
    assert mine("--source", f"file:{moved}").exit_code == 0
    cat = Catalog.open(home)
    try:
        [theme] = cat.list_themes(include_merged=True)
        assert [v for v, _, _ in cat.versions(theme["env_name"])] == [1]
        assert theme["source_ref"] == PRD.name
    finally:
        cat.close()


def test_another_source_of_the_same_name_gets_its_own_environment(home, tmp_path):
    other = tmp_path / PRD.name
    other.write_text("# Book lending\n\nMembers reserve rooms. A room has a capacity and a "
                     "floor. Members cancel reservations.\n")
    assert mine("--source", f"file:{PRD}").exit_code == 0
    assert mine("--source", f"file:{other}").exit_code == 0
    envs = sorted(t["env_name"] for t in _themes(home))
    assert envs == ["book_lending_prd", "book_lending_prd_2"]


def test_every_source_failing_is_a_failed_run(home, tmp_path):
    """Was: exit 0. Now exit 1, a summary, and the catalog run marked failed."""
    bad = tmp_path / "empty.md"
    bad.write_text("")
    result = mine("--source", f"prd:{bad}", "--json")
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    assert out["status"] == "failed" and out["summary"]["failed"] == 1
    runs = Catalog.open(home).list_runs(kind="mine")
    assert [r["status"] for r in runs] == ["failed"]


def test_a_missing_file_does_not_stop_the_other_sources(home):
    """Was: the whole CLI run aborted before mining anything."""
    result = mine("--source", "file:/no/such/dir/api.yaml", "--source", f"file:{PRD}")
    assert result.exit_code == 1
    assert "mined 1, failed 1" in result.stdout and "Traceback" not in result.output
    assert "/no/such/dir/api.yaml" in result.output


def test_iterations_are_bounded_with_a_clear_error(home):
    for bad in ("-1", "11", "50"):
        result = runner.invoke(app, ["mine", "--iterations", bad, "--source", f"file:{PRD}"])
        assert result.exit_code == 2
        assert "--iterations must be between 0 and 10" in result.output
        assert len(result.output.strip().splitlines()) == 1


def test_each_iteration_is_reported_while_it_runs(home):
    from agent_world.graphs.mine_graph import build_graph

    events = [e for e in build_graph().compile().stream(
        {"sources": [f"file:{PRD}"], "iterations": 2}, {"configurable": {"home": str(home)}},
        stream_mode="custom")]
    assert [e["event"] for e in events] == ["read", "iteration", "iteration", "iteration"]
    assert [e["iteration"] for e in events[1:]] == [0, 1, 2]


def test_a_huge_tool_list_is_mined_from_an_even_spread(home, tmp_path):
    """Was: superlinear (3,000 tools: 127 s; 20,000 never finished)."""
    from agent_world.mining.llm_miner import MAX_MINED_TOOLS

    tools = [{"name": f"get_{noun}_{i}", "description": f"Get a {noun} record.",
              "inputSchema": {"type": "object", "properties": {f"{noun}_id": {"type": "string"}}}}
             for i in range(5000) for noun in ["order"]]
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"name": "big", "tools": tools}))
    result = mine("--source", f"file:{big}", "--json")
    assert result.exit_code == 0, result.output
    [theme] = _themes(home)
    assert len(theme["payload"]["tools"]) == 5000  # the source's tools are all recorded
    spec = Catalog.open(home).get_env(theme["env_name"])
    assert len(spec.theme.raw_descriptions) <= MAX_MINED_TOOLS


def test_parallel_mine_runs_all_finish(tmp_path):
    """Was: 3 parallel runs crashed 5 of 9 times and left runs `running`."""
    home = tmp_path / "home"
    cli = [sys.executable, "-m", "agent_world.cli", "--home", str(home), "mine",
           "--iterations", "0"]
    srcs = [DATA / "clinic_booking_openapi.yaml", PRD, FIXTURES / "sources" / "tools_list.json"]
    procs = [subprocess.Popen([*cli, "--source", f"file:{s}"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for s in srcs]
    errors = [p.communicate(timeout=240)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    runs = Catalog.open(home).list_runs(kind="mine")
    assert sorted(r["status"] for r in runs) == ["done"] * 3


def test_a_terminated_run_is_not_left_running(tmp_path):
    home = tmp_path / "home"
    marker = tmp_path / "slow-started"
    # the server hangs 4 s, then exits: a terminated run's process ends then (its source
    # reader would otherwise wait the whole 30 s source timeout before the process can exit)
    proc = subprocess.Popen([sys.executable, "-m", "agent_world.cli", "--home", str(home),
                             "mine", "--source",
                             f"mcp:{sys.executable} {FIXTURES / 'slow_mcp_server.py'} {marker} 4"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline:
            assert proc.poll() is None
            time.sleep(0.2)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        proc.wait(25)  # well before the 30 s source timeout
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    [run] = Catalog.open(home).list_runs(kind="mine")
    assert run["status"] == "interrupted" and run["finished_at"] is not None


def test_a_built_environment_is_the_same_under_any_hash_seed(tmp_path):
    """Was: the sqlite server's built spec picked one of its tool tests from a set of table
    names, whose order follows the process's hash seed; the spec's fingerprint (which seeds
    task synthesis) then changed from run to run, and so did the main job's tasks."""
    sqlite = Path(sys.executable).parent / "mcp-server-sqlite"
    fingerprints = []
    for seed in ("1", "2"):
        home = tmp_path / f"home-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "AGENT_WORLD_HOME": str(home),
               "LANGSMITH_TRACING": "false"}
        db = tmp_path / "scratch.db"  # one path for both: it is part of what was mined
        cli = [sys.executable, "-m", "agent_world.cli"]
        for args in (["mine", "--source", f"mcp:{sqlite} --db-path {db}", "--iterations", "1"],
                     ["build"]):
            done = subprocess.run([*cli, *args], env=env, capture_output=True, text=True,
                                  timeout=300)
            assert done.returncode == 0, done.stderr[-2000:]
        with Catalog.open(home) as cat:
            fingerprints.append({e.name: e.fingerprint for e in cat.list_envs(stage="built")})
    assert fingerprints[0] and fingerprints[0] == fingerprints[1]
