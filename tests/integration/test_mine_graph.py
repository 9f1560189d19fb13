"""The mine graph end to end: real MCP servers, the bundled documents, failing sources, and a
run killed mid-way then resumed on the same thread."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from agent_world.envs.catalog import Catalog
from agent_world.graphs import mine_graph
from agent_world.graphs.runner import final_state, stream, thread_config
from agent_world.mining.sources import default_sources
from tests.conftest import FIXTURES

pytestmark = pytest.mark.integration
BIN = os.path.dirname(sys.executable)


def _run(home, sources, thread="t1"):
    config = thread_config(thread, home)
    list(stream(mine_graph.build_graph(), {"sources": sources, "iterations": 3, "seed": 0},
                config))
    values, pending = final_state(mine_graph.build_graph(), config)
    assert pending == []
    return values


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    return home, _run(home, [])


def test_embedded_default_reaches_the_figures(default_run):
    home, values = default_run
    kinds = {ref.kind for ref in default_sources()}
    assert {"mcp", "openapi", "prd"} <= kinds
    assert sum(ref.kind == "mcp" for ref in default_sources()) >= 4
    mined = [r for r in values["results"] if r["status"] == "mined"]
    assert len(mined) == len(default_sources()), values["results"]
    cat = Catalog.open(home)
    themes = cat.list_themes()
    assert len(themes) >= 6
    for r in mined:
        spec = cat.get_env(r["env"])
        stats = spec.stats()
        assert stats["tables"] >= 3 and stats["foreign_keys"] >= 2 and stats["rows"] >= 200, (
            r["env"], stats)
        # the figures of mined data fidelity: no semantic violation, tools covered
        assert sum(r["violations"].values()) == 0, (r["env"], r["violations"])
        assert r["coverage"]["ratio"] >= 0.9, (r["env"], r["coverage"])
        assert spec.provenance.stats["tool_coverage"]["ratio"] == r["coverage"]["ratio"]
        steps = r["stats"]
        assert len(steps) == 4  # the draft + 3 complexification iterations
        for before, after in zip(steps, steps[1:], strict=False):
            for key in ("tables", "rows", "constraints"):
                assert after[key] >= before[key], (r["env"], key, steps)
    assert values["summary"]["mined"] == len(mined)
    run = cat.get_run(values["run_id"])
    assert run["status"] == "done" and run["summary"]["themes"] >= 6


def test_mined_environments_open_as_episodes(default_run):
    from agent_world.envs.episode import EnvRuntime

    home, values = default_run
    cat = Catalog.open(home)
    with EnvRuntime() as rt:
        for r in values["results"]:
            spec = cat.get_env(r["env"])
            ep = rt.open(spec)
            first = spec.tables[0].name
            assert ep.query(f'SELECT count(*) AS n FROM "{first}"')[0]["n"] == len(
                spec.rows.get(first, []))


def test_the_same_source_mined_in_another_home_is_the_same_environment(default_run, tmp_path):
    home, values = default_run
    [sqlite] = [r for r in default_sources(tmp_path) if "sqlite" in r.reference]
    assert str(tmp_path) in sqlite.reference  # its database lives in the home
    again = _run(tmp_path, [sqlite.spec])
    [name] = [r["env"] for r in again["results"] if r["status"] == "mined"]
    first = Catalog.open(home).get_env(name)
    assert Catalog.open(tmp_path).get_env(name).fingerprint == first.fingerprint
    assert str(home) not in first.theme.source_ref


def test_failing_sources_go_to_the_ledger_and_others_go_on(tmp_path):
    bad_yaml = tmp_path / "broken.yaml"
    bad_yaml.write_text("openapi: 3.0.0\npaths: [unclosed\n")
    sources = [
        f"file:{FIXTURES.parent.parent / 'agent_world/data/sources/clinic_booking_openapi.yaml'}",
        f"mcp:{BIN}/mcp-server-time --local-timezone UTC",
        "mcp:/nonexistent/mcp-server-nothing",
        f"openapi:{bad_yaml}",
    ]
    values = _run(tmp_path, sources)
    status = {r["source"]: r["status"] for r in values["results"]}
    assert sorted(status.values()) == ["failed", "failed", "mined", "mined"]
    ledger = Catalog.open(tmp_path).ledger(stage="mine", run_id=values["run_id"])
    reasons = {e.subject: e.reason for e in ledger}
    assert "mcp:/nonexistent/mcp-server-nothing" in reasons
    assert any("broken.yaml" in s for s in reasons)
    assert all(r for r in reasons.values())
    assert values["summary"]["failed"] == 2


def _mined_envs(home):
    return Catalog.open(home).list_envs(stage="mined")


def test_killed_run_resumes_on_the_same_thread_without_duplicates(tmp_path):
    home = tmp_path / "home"
    marker = tmp_path / "slow-server-started"
    data = FIXTURES.parent.parent / "agent_world" / "data" / "sources"
    cli = [sys.executable, "-m", "agent_world.cli", "--home", str(home), "mine"]
    sources = ["--source", f"file:{data / 'clinic_booking_openapi.yaml'}",
               "--source", f"file:{data / 'book_lending_prd.md'}",
               "--source", f"mcp:{sys.executable} {FIXTURES / 'slow_mcp_server.py'} {marker}"]
    proc = subprocess.Popen(cli + sources + ["--thread", "killme"], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if marker.exists() and home.joinpath("catalog.sqlite").exists() \
                    and len(_mined_envs(home)) == 2:
                break
            assert proc.poll() is None, "mining ended before it could be killed"
            time.sleep(0.3)
        else:
            pytest.fail("the two file sources were not mined in time")
        time.sleep(1.0)  # let the finished branches' checkpoint writes land
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the run and the hanging server with it
        proc.wait()
    before = {e.name: (e.version, e.fingerprint) for e in _mined_envs(home)}

    resumed = subprocess.run(cli + ["--thread", "killme", "--resume"], capture_output=True,
                             text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    after = {e.name: (e.version, e.fingerprint) for e in _mined_envs(home)}
    assert len(after) == 3
    for name, version_fp in before.items():
        assert after[name] == version_fp  # untouched: not re-mined, no new version
    themes = Catalog.open(home).list_themes(include_merged=True)
    assert len(themes) == 3
    assert len({t["name"] for t in themes}) == 3
    # only the unfinished source ran again; the others were replayed from the checkpoint
    lines = resumed.stderr.splitlines()
    slow = [line for line in lines if "slow_mcp_server.py" in line]
    done_before = [line for line in lines if "clinic_booking_openapi" in line
                   or "book_lending_prd" in line]
    assert slow and all("from checkpoint" not in line for line in slow)
    assert len(done_before) == 2 and all("from checkpoint" in line for line in done_before)


def test_near_duplicate_themes_are_merged_and_counted(tmp_path):
    sources = [f"mcp:{BIN}/mcp-server-time --local-timezone UTC",
               f"mcp:{BIN}/mcp-server-time --local-timezone Europe/Paris",
               f"file:{FIXTURES.parent.parent / 'agent_world/data/sources/book_lending_prd.md'}"]
    values = _run(tmp_path, sources, thread="dups")
    assert values["summary"]["mined"] == 3
    assert values["summary"]["merged"] == 1 and values["summary"]["themes"] == 2
    assert len(values["merged"]) == 1
    cat = Catalog.open(tmp_path)
    assert len(cat.list_themes()) == 2
    assert len(cat.list_themes(include_merged=True)) == 3
    # two servers of the same name in one run are two environments, not two versions of one
    assert {"time", "time_2"} <= {e.name for e in cat.list_envs(stage="mined")}
    assert all(e.version == 1 for e in cat.list_envs(stage="mined"))
    assert any("near-duplicate" in e.reason for e in cat.ledger(stage="mine"))


def test_invoke_runs_to_the_end_and_resumes_a_finished_thread_as_is(tmp_path):
    from agent_world.graphs.runner import invoke

    source = f"file:{FIXTURES.parent.parent / 'agent_world/data/sources/book_lending_prd.md'}"
    first = invoke(mine_graph.build_graph(), {"sources": [source], "iterations": 1},
                   thread_id="py", home=tmp_path)
    assert first["summary"]["mined"] == 1 and first["thread_id"] == "py"
    again = invoke(mine_graph.build_graph(), None, thread_id="py", home=tmp_path)
    assert again["summary"] == first["summary"] and again["run_id"] == first["run_id"]
