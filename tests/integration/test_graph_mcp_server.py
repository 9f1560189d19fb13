"""The arena's graphs as MCP tools (`agent-world serve-graphs`) under real MCP clients: the
`mcp` SDK client over stdio (synthesize on the airline example, with progress) and
langchain-mcp-adapters over streamable HTTP (mine a bundled source); the runs are checkpointed
on their threads and their results land in the catalog."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from langchain_mcp_adapters.client import MultiServerMCPClient
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.fastmcp.exceptions import ToolError
from typing_extensions import TypedDict

from agent_world.envs.catalog import Catalog
from agent_world.graphs import mcp_tools
from agent_world.graphs import synthesize_graph as synthesize
from agent_world.graphs.mcp_tools import GraphEntry, GraphServer, graph_entries
from agent_world.graphs.runner import final_state, thread_config
from tests.integration.served import AUTH, TOKEN

pytestmark = pytest.mark.integration
SOURCES = Path(__file__).resolve().parents[2] / "agent_world" / "data" / "sources"


def _json(result) -> dict:
    return json.loads(result.content[0].text)


def test_graph_tools_over_stdio(tmp_path):
    home = tmp_path / "home"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agent_world.cli", "--home", str(home),
                                      "serve-graphs"], env=dict(os.environ))

    async def session() -> tuple:
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            progress: list[tuple[float, str]] = []

            async def on_progress(done: float, total: float | None, message: str | None):
                progress.append((done, message or ""))

            ran = await s.call_tool("synthesize", {
                "envs": ["airline"], "per_env": 1, "levels": [1], "thread_id": "mcp-synth",
                "context": {"runs": 3}}, progress_callback=on_progress)
            listed = await s.call_tool("list_tasks", {"env": "airline"})
            bad = await s.call_tool("synthesize", {"envs": ["airline"],
                                                   "context": {"nope": 1}})
            typo = await s.call_tool("synthesize", {"env": ["airline"]})
            no_thread = await s.call_tool("build", {"resume": True})
            finished = await s.call_tool("synthesize", {"thread_id": "mcp-synth",
                                                        "resume": True})
            return tools, ran, progress, listed, bad, typo, no_thread, finished

    tools, ran, progress, listed, bad, typo, no_thread, finished = asyncio.run(session())
    assert {e.name for e in graph_entries()} | {"list_environments", "list_tasks",
                                                "list_runs"} == set(tools)
    props = tools["synthesize"].inputSchema["properties"]
    assert {"envs", "per_env", "levels", "thread_id", "resume", "context"} <= set(props)
    assert "runs" in props["context"]["properties"]  # the graph's context schema
    assert not ran.isError, ran.content
    out = _json(ran)
    assert ran.structuredContent == out and _json(listed) == listed.structuredContent
    assert out["thread_id"] == "mcp-synth" and out["pending"] == []
    assert out["state"]["summary"]["kept"] >= 1
    assert [m for _, m in progress][-1].startswith("report")  # one notification per node
    # checkpointed on its thread, and the tasks are in the catalog
    values, pending = final_state(synthesize.build_graph(), thread_config("mcp-synth", home))
    assert pending == [] and values["run_id"] == out["state"]["run_id"]
    cat = Catalog.open(home)
    try:
        stored = [r for r in cat.list_tasks() if r["payload"]["env_name"] == "airline"]
        run = cat.get_run(out["state"]["run_id"])
    finally:
        cat.close()
    assert len(stored) == out["state"]["summary"]["kept"] and run["status"] == "done"
    assert {t["id"] for t in _json(listed)["tasks"]} == {r["payload"]["id"] for r in stored}
    assert bad.isError and "unknown context keys ['nope']" in bad.content[0].text
    assert typo.isError and "unknown arguments ['env']" in typo.content[0].text
    assert no_thread.isError and "thread_id" in no_thread.content[0].text
    assert finished.isError and "nothing left to run" in finished.content[0].text


# the smallest self-evolution round the tests run (two small sources, one task each), paused
# before training for review
REVIEW_ROUND = {"sources": [f"file:{SOURCES / 'book_lending_prd.md'}",
                            f"file:{SOURCES / 'clinic_booking_openapi.yaml'}"],
                "iterations": 0, "policy": "tiny", "tasks_per_env": 1, "heldout_tasks_per_env": 1,
                "targeted_tasks_per_env": 1, "replay": 1, "train_steps": 1, "max_turns": 2,
                "warm_start_steps": 0, "complexify": False, "review_before_train": True}


def test_evolve_paused_for_review_resumes_over_stdio(tmp_path):
    """An evolve round paused before training says so and how to go on; calling again on
    the thread without resume is refused; the resume call trains and finishes the round."""
    home = tmp_path / "home"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agent_world.cli", "--home", str(home),
                                      "serve-graphs", "--graph", "evolve"], env=dict(os.environ))

    async def session() -> tuple:
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            first = await s.call_tool("evolve", {"goal_rounds": 1, "thread_id": "mcp-evolve",
                                                 "context": REVIEW_ROUND})
            again = await s.call_tool("evolve", {"goal_rounds": 1, "thread_id": "mcp-evolve"})
            resumed = await s.call_tool("evolve", _json(first).get("resume_with") or {})
            return first, again, resumed

    first, again, resumed = asyncio.run(session())
    assert not first.isError, first.content
    paused = _json(first)
    assert paused["status"] == "paused" and paused["pending"] == ["warm_start"]
    assert paused["resume_with"] == {"thread_id": "mcp-evolve", "resume": True,
                                     "resume_value": True}
    [asked] = paused["paused"]
    assert asked["round"] == 1 and asked["diagnosis"] and asked["targeted_tasks"] >= 1
    assert paused["state"]["rounds_done"] == 0 and not paused["state"]["training"]
    assert again.isError and "paused for review" in again.content[0].text
    assert not resumed.isError, resumed.content
    done = _json(resumed)
    assert done["status"] == "done" and done["pending"] == [] and "paused" not in done
    state = done["state"]
    assert state["rounds_done"] == 1 and [h["round"] for h in state["history"]] == [1]
    assert state["training"]["tasks"] >= 1 and not state["training"].get("skipped")
    assert state["policy"] == state["training"]["checkpoint"] != state["policy_before"]
    cat = Catalog.open(home)
    try:
        assert [r["round"] for r in cat.list_rounds("mcp-evolve")] == [1]
    finally:
        cat.close()


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_graph_tools_over_streamable_http(tmp_path):
    home, port = tmp_path / "home", _port()
    log = tmp_path / "serve.log"
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "agent_world.cli", "--home", str(home),
                                 "serve-graphs", "--transport", "http", "--port", str(port),
                                 "--graph", "mine"], start_new_session=True,
                                env={**os.environ, "AGENT_WORLD_TOKEN": TOKEN},
                                stdout=subprocess.DEVNULL, stderr=err)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url, timeout=0.5)
                break
            except httpx.HTTPError:
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)

        async def run() -> tuple:
            client = MultiServerMCPClient({"arena": {"transport": "streamable_http",
                                                     "url": url, "headers": AUTH}})
            tools = {t.name: t for t in await client.get_tools()}
            out = await tools["mine"].ainvoke({
                "sources": [f"file:{SOURCES / 'book_lending_prd.md'}"], "iterations": 0,
                "thread_id": "mcp-mine"})
            envs = await tools["list_environments"].ainvoke({})
            return set(tools), out, envs

        names, out, envs = asyncio.run(run())
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    assert names == {"mine", "list_environments", "list_tasks", "list_runs"}  # --graph mine
    text = out if isinstance(out, str) else out[0]["text"]
    state = json.loads(text)
    assert state["thread_id"] == "mcp-mine" and state["pending"] == []
    mined = [r["env"] for r in state["state"]["results"] if r.get("env")]
    assert mined, state["state"]["results"]
    env_text = envs if isinstance(envs, str) else envs[0]["text"]
    assert set(mined) <= {e["name"] for e in json.loads(env_text)["environments"]}


def test_graphs_found_without_langgraph_json(monkeypatch, tmp_path):
    """An install without the manifest (a wheel) finds the graph modules by themselves."""
    listed = {e.name: e.module for e in graph_entries()}
    monkeypatch.setattr(mcp_tools, "_manifest", lambda: tmp_path / "langgraph.json")
    graph_entries.cache_clear()
    try:
        found = {e.name: e.module for e in graph_entries()}
    finally:
        graph_entries.cache_clear()
    assert {"mine", "build", "synthesize", "evolve"} <= set(found)
    assert all(found[name] == module for name, module in listed.items() if name in found)


class _EchoIn(TypedDict):
    word: str


class _EchoState(TypedDict, total=False):
    word: str
    echoed: str


@dataclass
class _EchoContext:
    times: int = 2


def _echo(state: _EchoState, runtime: Runtime[_EchoContext]) -> dict:
    return {"echoed": state["word"] * runtime.context.times}


def _echo_builder() -> StateGraph:
    g = StateGraph(_EchoState, context_schema=_EchoContext, input_schema=_EchoIn)
    g.add_node("echo", _echo)
    g.add_edge(START, "echo")
    g.add_edge("echo", END)
    return g


echo_graph = _echo_builder().compile()


def test_required_input_and_typed_context(tmp_path):
    """Any graph: required inputs are checked, the context is typed, the run is checkpointed."""
    server = GraphServer(tmp_path)
    server.entries = {"echo": GraphEntry("echo", __name__, "echo_graph")}

    async def calls() -> tuple:
        tool = next(t for t in await server.list_tools() if t.name == "echo")
        with pytest.raises(ToolError, match=r"missing arguments \['word'\]"):
            await server.call_tool("echo", {"context": {"times": 3}})
        with pytest.raises(ToolError, match="context.times"):
            await server.call_tool("echo", {"word": "ab", "context": {"times": "many"}})
        out = await server.call_tool("echo", {"word": "ab", "context": {"times": 3},
                                              "thread_id": "echo-1"})
        return tool, out[1]  # the structured result (the same object as the text)

    tool, out = asyncio.run(calls())
    assert "Required unless resuming: word" in tool.description
    assert tool.inputSchema["properties"]["context"]["properties"]["times"]["type"] == "integer"
    assert out["state"]["echoed"] == "ababab" and out["thread_id"] == "echo-1"
    values, pending = final_state(_echo_builder(), thread_config("echo-1", tmp_path))
    assert values["echoed"] == "ababab" and pending == []


class _ReviewState(TypedDict, total=False):
    word: str
    answer: object


def _review(state: _ReviewState) -> dict:
    return {"answer": interrupt({"word": state["word"]})}


def _review_builder() -> StateGraph:
    g = StateGraph(_ReviewState)
    g.add_node("review", _review)
    g.add_edge(START, "review")
    g.add_edge("review", END)
    return g


review_graph = _review_builder().compile()


def test_paused_run_reports_and_resumes_with_the_answer(tmp_path):
    """Any graph that interrupts: the result says paused and what it asks; resume_value is
    the answer the paused node receives; resume_value without resume is refused."""
    server = GraphServer(tmp_path)
    server.entries = {"review": GraphEntry("review", __name__, "review_graph")}

    async def calls() -> tuple:
        first = (await server.call_tool("review", {"word": "ok", "thread_id": "rv"}))[1]
        with pytest.raises(ToolError, match="paused for review"):
            await server.call_tool("review", {"word": "again", "thread_id": "rv"})
        with pytest.raises(ToolError, match="resume_value"):
            await server.call_tool("review", {"word": "x", "resume_value": 1})
        done = (await server.call_tool("review", {
            "thread_id": "rv", "resume": True, "resume_value": {"keep": False}}))[1]
        return first, done

    first, done = asyncio.run(calls())
    assert first["status"] == "paused" and first["paused"] == [{"word": "ok"}]
    assert first["pending"] == ["review"] and first["resume_with"]["thread_id"] == "rv"
    assert done["status"] == "done" and done["pending"] == []
    assert done["state"]["answer"] == {"keep": False}
