"""Every graph in langgraph.json loads and runs in a real `langgraph dev` server (the server
LangGraph Studio talks to), driven through the LangGraph SDK."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_langgraph_json_names_importable_compiled_graphs():
    import importlib.util

    config = json.loads((ROOT / "langgraph.json").read_text())
    assert "mine" in config["graphs"]
    for name, ref in config["graphs"].items():
        path, attr = ref.split(":")
        spec = importlib.util.spec_from_file_location(f"lg_{name}", ROOT / path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # as the server does: type hints resolve through it
        spec.loader.exec_module(module)
        graph = getattr(module, attr)
        assert graph.checkpointer is None  # the server brings its own
        assert hasattr(graph, "invoke")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def server(tmp_path):
    exe = Path(sys.executable).parent / "langgraph"
    if not exe.exists() and not shutil.which("langgraph"):
        pytest.skip("langgraph-cli[inmem] is not installed (it is in the dev extra)")
    port = _free_port()
    env = dict(os.environ, LANGGRAPH_CLI_NO_ANALYTICS="1", LANGSMITH_TRACING="false",
               AGENT_WORLD_HOME=str(tmp_path / "home"))
    proc = subprocess.Popen([str(exe if exe.exists() else "langgraph"), "dev", "--no-browser",
                             "--no-reload", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
            try:
                if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            pytest.fail("langgraph dev did not come up in 60 s")
        yield url, tmp_path / "home"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_mine_graph_runs_on_langgraph_dev(server):
    """Mines a live `mcp:` source on the server (was: `BlockingError: Blocking call to
    os.access` for every MCP source, and the run still reported success)."""
    from langgraph_sdk import get_sync_client

    url, home = server
    client = get_sync_client(url=url)
    assistants = {a["graph_id"]: a for a in client.assistants.search()}
    assert "mine" in assistants
    thread = client.threads.create()
    source = f"file:{ROOT / 'agent_world/data/sources/clinic_booking_openapi.yaml'}"
    live = f"mcp:{Path(sys.executable).parent / 'mcp-server-time'} --local-timezone UTC"
    result = client.runs.wait(thread["thread_id"], "mine",
                              input={"sources": [source, live], "iterations": 1})
    assert result["summary"]["mined"] == 2, result
    assert result["status"] == "done"
    for mined in result["results"]:
        assert mined["status"] == "mined" and len(mined["stats"]) == 2
    assert set(result) <= {"run_id", "status", "results", "merged", "summary"}  # the output
    # the run wrote to the arena home the server was started with
    from agent_world.envs.catalog import Catalog

    cat = Catalog.open(home)
    assert all(cat.has_env(m["env"]) for m in result["results"])
    # the thread is persistent: its state is there to inspect afterwards (Studio does this)
    state = client.threads.get_state(thread["thread_id"])
    assert state["values"]["summary"]["mined"] == 2


def test_a_run_whose_sources_all_fail_is_a_failed_run(server):
    from langgraph_sdk import get_sync_client

    url, home = server
    client = get_sync_client(url=url)
    thread = client.threads.create()
    run = client.runs.create(thread["thread_id"], "mine",
                             input={"sources": ["file:/no/such/api.yaml"], "iterations": 0})
    client.runs.join(thread["thread_id"], run["run_id"])
    assert client.runs.get(thread["thread_id"], run["run_id"])["status"] == "error"
    from agent_world.envs.catalog import Catalog

    assert [r["status"] for r in Catalog.open(home).list_runs(kind="mine")] == ["failed"]


def test_studio_sees_what_a_user_sets(server):
    """Was: the input form showed run_id/results/summary and the configuration was empty."""
    from langgraph_sdk import get_sync_client

    url, _ = server
    client = get_sync_client(url=url)
    [mine] = [a for a in client.assistants.search() if a["graph_id"] == "mine"]
    schemas = client.assistants.get_schemas(mine["assistant_id"])
    assert set(schemas["input_schema"]["properties"]) == {"sources", "iterations", "seed",
                                                          "web_search"}
    assert {"summary", "results", "status"} <= set(schemas["output_schema"]["properties"])
    context = schemas.get("context_schema") or schemas.get("config_schema") or {}
    assert {"home", "source_timeout_s"} <= set(context.get("properties", {}))
