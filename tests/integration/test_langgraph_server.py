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


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One `langgraph dev` for the module (it takes seconds to start); each test runs on its
    own threads, and what a test checks in the shared arena home is what its runs wrote."""
    tmp_path = tmp_path_factory.mktemp("langgraph-dev")
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
    from agent_world.envs.catalog import Catalog

    before = {r["id"] for r in Catalog.open(home).list_runs(kind="mine")}
    run = client.runs.create(thread["thread_id"], "mine",
                             input={"sources": ["file:/no/such/api.yaml"], "iterations": 0})
    client.runs.join(thread["thread_id"], run["run_id"])
    assert client.runs.get(thread["thread_id"], run["run_id"])["status"] == "error"
    runs = [r for r in Catalog.open(home).list_runs(kind="mine") if r["id"] not in before]
    assert [r["status"] for r in runs] == ["failed"]


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
    assert context["properties"]["source_timeout_s"]["description"]
    # build and synthesize used to offer their internal state (run_id, results, ...) as input
    assistants = {a["graph_id"]: a for a in client.assistants.search(limit=50)}
    for graph, fields in (("build", {"envs", "max_repairs", "max_tools"}),
                          ("synthesize", {"envs", "per_env", "levels", "seed", "guidelines"})):
        schemas = client.assistants.get_schemas(assistants[graph]["assistant_id"])
        assert set(schemas["input_schema"]["properties"]) == fields, graph
        assert "summary" in schemas["output_schema"]["properties"], graph
        described = schemas["context_schema"]["properties"]
        assert all(f.get("description") for f in described.values()), (graph, described)
    # a wrong configuration value stops the run at its start, naming the field (was: a
    # TypeError deep inside mining, and the client saw "An internal error occurred")
    thread = client.threads.create()
    out = client.runs.wait(thread["thread_id"], "mine", input={"sources": [], "iterations": 0},
                           context={"source_timeout_s": "abc"}, raise_error=False)
    assert "context.source_timeout_s" in json.dumps(out), out


def test_every_graph_is_served_with_its_configuration(server):
    """Studio lists every graph and agent and shows each one's configuration."""
    from langgraph_sdk import get_sync_client

    url, _ = server
    client = get_sync_client(url=url)
    assistants = {a["graph_id"]: a for a in client.assistants.search(limit=50)}
    graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    assert set(graphs) <= set(assistants)
    for name in graphs:
        schemas = client.assistants.get_schemas(assistants[name]["assistant_id"])
        context = schemas.get("context_schema") or {}
        assert "home" in context.get("properties", {}), name
        models = {p for p in context["properties"] if p == "model" or p.endswith("_model")}
        assert models, f"{name}: no model in its configuration"
    evolve = client.assistants.get_schemas(assistants["evolve"]["assistant_id"])
    assert {"policy", "train_steps", "diagnoser_model", "judge_model"} <= set(
        evolve["context_schema"]["properties"])
    # was: evolve's 23 internal state fields offered as inputs
    assert set(evolve["input_schema"]["properties"]) == {"goal_rounds"}


# a cheap self-evolution round: two bundled documents (one environment to train on, one held
# out), a tiny random policy, one task per environment, one GRPO step, no warm start
DATA = ROOT / "agent_world" / "data" / "sources"
TINY_ROUND = {"sources": [f"file:{DATA / 'book_lending_prd.md'}",
                          f"file:{DATA / 'clinic_booking_openapi.yaml'}"],
              "iterations": 0, "policy": "tiny", "tasks_per_env": 1, "heldout_tasks_per_env": 2,
              "targeted_tasks_per_env": 1, "replay": 1, "train_steps": 1, "max_turns": 2,
              "warm_start_steps": 0, "complexify": False}


@pytest.mark.timeout(600)
def test_evolution_rounds_through_the_sdk_on_one_thread(server):
    """Two rounds of the `evolve` graph as two runs on one server thread: events stream, the
    state persists between them, and the second run continues the first."""
    from langgraph_sdk import get_sync_client

    url, home = server
    client = get_sync_client(url=url)
    thread = client.threads.create(metadata={"purpose": "evolve"})["thread_id"]
    nodes, progress = [], set()
    for part in client.runs.stream(thread, "evolve", input={"goal_rounds": 1},
                                   context=TINY_ROUND, stream_mode=["updates", "custom"]):
        assert part.event != "error", part.data
        if part.event == "updates":
            nodes += list(part.data)
        elif part.event == "custom":
            progress.add(part.data.get("stage"))
    assert nodes == ["begin", "mine", "build", "split", "synthesize", "evaluate", "diagnose",
                     "resynthesize", "warm_start", "train", "evaluate", "record"]
    assert {"evaluate", "train"} <= progress  # the stages report as they go
    first = client.threads.get_state(thread)
    values = first["values"]
    assert first["next"] == [] and values["round"] == values["rounds_done"] == 1
    assert values["settings"]["policy"] == "tiny"  # the configuration stays with the thread
    assert len(values["history"]) == 1 and values["heldout_tasks"]
    checkpoint_1 = values["policy"]

    result = client.runs.wait(thread, "evolve", input={"goal_rounds": 2}, context=TINY_ROUND)
    # the run's output is the evolve graph's output schema, not its whole state
    assert set(result) <= {"rounds_done", "history", "policy", "diagnosis", "last"}
    assert result["rounds_done"] == 2 and [h["round"] for h in result["history"]] == [1, 2]
    after = client.threads.get_state(thread)["values"]
    assert after["round"] == 2 and after["policy"] == result["policy"]
    assert after["policy_before"] == checkpoint_1 != result["policy"]
    assert after["heldout_tasks"] == values["heldout_tasks"]  # same held-out set, no re-mining
    history = client.threads.get_history(thread, limit=100)
    assert len(history) > len(nodes)  # both runs' checkpoints are on the thread
    # the rounds were recorded in the catalog of the server's arena home
    from agent_world.envs.catalog import Catalog

    cat = Catalog.open(home)
    try:
        assert [r["round"] for r in cat.list_rounds(thread)] == [1, 2]
    finally:
        cat.close()


def test_remote_graph_example_against_the_server(server):
    url, home = server
    env = dict(os.environ, AGENT_WORLD_HOME=str(home), LANGSMITH_TRACING="false")
    done = subprocess.run([sys.executable, "examples/remote_graph.py", url], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "draft: 2 candidate(s)" in done.stdout and "gate: 2 candidate(s)" in done.stdout
    assert done.stdout.count(" level 2: ") == 2 and "initial_state_fails=ok" in done.stdout
    assert "local graph, remote node: 1 candidate(s) for ecommerce" in done.stdout
