"""Scale-out of the stages (`agent_world.scaleout`): mine, build and synthesize on a process
pool and on a local Ray cluster leave the catalog as in process, and a worker that dies fails
its own source only, with an error naming it, while what the others wrote stays."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.server.fastmcp.exceptions import ToolError

from agent_world import scaleout
from agent_world.envs.catalog import Catalog
from agent_world.graphs import mine_graph
from agent_world.graphs.build_graph import BuildContext, build_environments
from agent_world.graphs.mcp_tools import GraphServer
from agent_world.graphs.runner import invoke
from agent_world.graphs.synthesize_graph import synthesize_tasks

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("pool_files_outside_session_dirs")]

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [f"file:{ROOT / 'agent_world/data/sources/book_lending_prd.md'}",
           f"file:{ROOT / 'tests/fixtures/sources/inventory_openapi.json'}"]
# an MCP server that kills the process reading it: in a pool or Ray, that is the worker
KILLER = "mcp:" + shlex.join([sys.executable, "-c",
                              "import os, signal; os.kill(os.getppid(), signal.SIGKILL)"])


def _pipeline(home: Path, sources: list[str], **scale: Any) -> dict[str, Any]:
    """mine → build → synthesize with the executor `scale` asks for; what the catalog holds."""
    mined = invoke(mine_graph.build_graph(), {"sources": sources, "iterations": 0, "seed": 0},
                   home=home, context=mine_graph.MineContext(**scale))
    envs = sorted(r["env"] for r in mined["results"] if r["status"] == "mined")
    built = build_environments(envs, home=home, context=BuildContext(**scale))
    tasks = synthesize_tasks(sorted(built), home, per_env=2, seed=0,
                             context={"runs": 1, **scale})
    cat = Catalog.open(home)
    try:
        return {"envs": {e: (cat.get_env_at_stage(e, "mined").fingerprint,
                             cat.get_env_at_stage(e, "built").fingerprint) for e in envs},
                "tasks": tasks,
                "failed": {r["source"]: r["error"] for r in mined["results"]
                           if r["status"] == "failed"},
                # an environment that failed to build or synthesize says why here
                "env_failures": [(e.stage, e.subject, e.reason) for e in cat.ledger()
                                 if e.subject in envs],
                "ledger": [(e.subject, e.reason) for e in cat.ledger("mine")]}
    finally:
        cat.close()


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = _pipeline(tmp_path_factory.mktemp("inproc"), SOURCES, workers=1)
    # 2 asked of each; a walk calling none of the service's own tools is turned away
    # (`serves_source`): inventory gives 1
    assert len(out["envs"]) == 2 and 3 <= len(out["tasks"]) <= 4, out
    assert not out["failed"] and not out["env_failures"], out
    return out


@pytest.fixture(scope="module")
def ray_cluster() -> Any:
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install "
                                            "'agent-world[scale]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _same_except_the_killer(out: dict[str, Any], in_process: dict[str, Any],
                            died: str) -> None:
    assert {k: out[k] for k in ("envs", "tasks", "env_failures")} == \
        {k: in_process[k] for k in ("envs", "tasks", "env_failures")}
    assert list(out["failed"]) == [KILLER]
    assert out["failed"][KILLER].startswith(f"source {KILLER}: ") and died in out["failed"][KILLER]
    # the killer's failure is in the ledger; everything else there is what in process wrote
    assert (KILLER, out["failed"][KILLER]) in out["ledger"]
    assert sorted(e for e in out["ledger"] if e[0] != KILLER) == sorted(in_process["ledger"])


def test_process_pool_mines_builds_and_synthesizes_what_in_process_does(in_process, tmp_path):
    out = _pipeline(tmp_path, [KILLER, *SOURCES], workers=2)
    _same_except_the_killer(out, in_process, "worker process died")


def test_ray_cluster_mines_builds_and_synthesizes_what_in_process_does(in_process, ray_cluster,
                                                                      tmp_path):
    out = _pipeline(tmp_path, [KILLER, *SOURCES], ray_address="local")
    _same_except_the_killer(out, in_process, "Ray worker died")


def test_ray_address_without_ray_is_one_error_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what a missing package looks like
    with pytest.raises(scaleout.ScaleoutError, match=r"^--ray needs Ray: pip install "
                                                     r"'agent-world\[scale\]'$"):
        scaleout.executor(ray_address="ray://127.0.0.1:10001")


def test_graph_server_sends_no_work_to_a_cluster_a_client_names(tmp_path):
    server = GraphServer(tmp_path, graphs=["mine"])
    with pytest.raises(ToolError, match=r"context\.ray_address: .* names a Ray cluster.*"
                                        r"--allow-commands"):
        asyncio.run(server.call_tool("mine", {"sources": SOURCES[:1], "iterations": 0,
                                              "context": {"ray_address": "ray://10.0.0.9:10001"}}))
