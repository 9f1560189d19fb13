"""What a client of the project's network servers can and cannot do, under the real `mcp`
client over streamable HTTP on loopback: `serve-graphs` and `env serve` answer only requests
with their bearer token (401 otherwise); `serve-graphs` refuses a client's commands (`mcp:`
sources, `mcp:` web search) and paths (another arena home, files to mine, checkpoint
directories) unless started with `--allow-commands` / `--allow-client-paths`; named episodes of
`env serve` are reachable only by who opened them, and one closed to make room says so; every
server binds 127.0.0.1 unless told otherwise."""

from __future__ import annotations

import asyncio
import json
import re
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx
import pytest
from langchain_mcp_adapters.client import MultiServerMCPClient
from langgraph.graph import END, START, StateGraph
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.fastmcp.exceptions import ToolError
from typer.testing import CliRunner
from typing_extensions import TypedDict

from agent_world.cli import app
from agent_world.envs import mcp_export
from agent_world.envs.mcp_export import EnvironmentServer
from agent_world.envs.spec import EnvSpec
from agent_world.graphs.mcp_tools import GraphEntry, GraphServer
from agent_world.mining.sources import DATA_DIR
from tests.conftest import FIXTURES
from tests.integration.served import (
    AUTH,
    INITIALIZE,
    MCP_HEADERS,
    free_port,
    listening_hosts,
    start,
    stop,
    wait_listening,
)

pytestmark = pytest.mark.integration
BUNDLED_PRD = DATA_DIR / "book_lending_prd.md"


@asynccontextmanager
async def _session(url: str, headers: dict[str, str] | None = None):
    async with httpx.AsyncClient(headers=headers or {}, timeout=httpx.Timeout(30, read=300)) \
            as http, streamable_http_client(url, http_client=http) as (r, w, _), \
            ClientSession(r, w) as s:
        await s.initialize()
        yield s


def _refused_without_the_token(url: str) -> list[int]:
    """Status codes of an MCP initialize sent with no token, a wrong one, another scheme."""
    return [httpx.post(url, json=INITIALIZE, headers={**MCP_HEADERS, **extra}, timeout=10)
            .status_code for extra in ({}, {"Authorization": "Bearer wrong"},
                                       {"Authorization": AUTH["Authorization"].replace(
                                           "Bearer", "Basic")})]


def test_graph_server_over_http_refuses_commands_and_paths_and_wants_its_token(tmp_path):
    """Was: any local client ran `/bin/sh -c ...` as the server's user through a `mine`
    source, and wrote a catalog wherever its `context.home` said; no authentication."""
    home, port, log = tmp_path / "home", free_port(), tmp_path / "serve.log"
    elsewhere = tmp_path / "elsewhere"
    pwned = [tmp_path / f"pwned-{i}" for i in range(5)]
    secret = tmp_path / "secret_prd.md"
    secret.write_text(BUNDLED_PRD.read_text())
    proc = start(["--home", str(home), "serve-graphs", "--transport", "http", "--port",
                  str(port), "--graph", "mine", "--graph", "miner", "--graph", "evolve",
                  "--graph", "evaluate"], log)
    url = f"http://127.0.0.1:{port}/mcp"
    sh = "mcp:/bin/sh -c 'id > {}'"
    quick = {"source_timeout_s": 5}
    attacks = [  # (tool, arguments, the flag that would allow it)
        ("mine", {"sources": [sh.format(pwned[0])], "iterations": 0, "context": quick},
         "--allow-commands"),
        ("mine", {"sources": [f"file:{BUNDLED_PRD}"], "iterations": 0,
                  "web_search": sh.format(pwned[1]) + "#search"}, "--allow-commands"),
        ("miner", {"source": sh.format(pwned[2]), "iterations": 0, "context": quick},
         "--allow-commands"),
        ("evolve", {"goal_rounds": 1, "context": {"sources": [sh.format(pwned[3])]}},
         "--allow-commands"),
        ("evolve", {"goal_rounds": 1, "settings": {"sources": [sh.format(pwned[4])]}},
         "--allow-commands"),
        ("mine", {"sources": [f"file:{BUNDLED_PRD}"], "iterations": 0,
                  "context": {"home": str(elsewhere)}}, "--allow-client-paths"),
        ("mine", {"sources": [f"file:{secret}"], "iterations": 0}, "--allow-client-paths"),
        ("mine", {"sources": [str(secret)], "iterations": 0}, "--allow-client-paths"),
        ("evaluate", {"policy": str(tmp_path), "envs": ["airline"]}, "--allow-client-paths"),
    ]
    try:
        wait_listening(proc, url, log)
        assert listening_hosts(port) == {"127.0.0.1"}

        async def attack() -> list:
            async with _session(url, AUTH) as s:
                return [await s.call_tool(tool, args) for tool, args, _ in attacks]

        results = asyncio.run(asyncio.wait_for(attack(), 240))
        statuses = _refused_without_the_token(url)
    finally:
        stop(proc)
    assert [p for p in pwned if p.exists()] == []  # no command ran
    assert not elsewhere.exists()
    for (tool, args, flag), result in zip(attacks, results, strict=True):
        text = result.content[0].text
        assert result.isError and flag in text and "dangerous" in text, (tool, args, text)
    assert statuses == [401, 401, 401]


@dataclass
class _PathsContext:
    home: str | None = None


class _PathsState(TypedDict, total=False):
    sources: list[str]
    seen: str


def _seen(state: _PathsState) -> dict:
    return {"seen": ",".join(state.get("sources") or [])}


def _paths_builder() -> StateGraph:
    g = StateGraph(_PathsState, context_schema=_PathsContext)
    g.add_node("seen", _seen)
    g.add_edge(START, "seen")
    g.add_edge("seen", END)
    return g


paths_graph = _paths_builder().compile()


def test_the_flags_let_a_trusted_client_name_commands_and_paths(tmp_path):
    """Any graph: the fields are found by name. The server's own home, a bundled source and a
    URL are always fine; commands and other paths only with the flags, and then they run."""
    home = tmp_path / "home"
    closed = GraphServer(home)
    closed.entries = {"paths": GraphEntry("paths", __name__, "paths_graph")}

    async def calls(server: GraphServer, *arguments: dict) -> list:
        return [(await server.call_tool("paths", a))[1] for a in arguments]  # structured

    fine = asyncio.run(calls(closed, {"context": {"home": str(closed.home)}},
                             {"sources": [f"file:{BUNDLED_PRD}", "mcp-url:http://127.0.0.1:9/mcp"]}))
    assert fine[1]["state"]["seen"].startswith("file:")
    with pytest.raises(ToolError, match="--allow-client-paths"):
        asyncio.run(calls(closed, {"context": {"home": str(tmp_path / "other")}}))
    with pytest.raises(ToolError, match="--allow-commands"):
        asyncio.run(calls(closed, {"sources": ["MCP: npx some-server"]}))

    pwned = tmp_path / "pwned"
    trusting = GraphServer(home, graphs=["mine"], allow_commands=True, allow_client_paths=True)
    with pytest.raises(ToolError, match="failed"):  # /bin/sh is no MCP server, but it ran
        asyncio.run(trusting.call_tool("mine", {
            "sources": [f"mcp:/bin/sh -c 'id > {pwned}'"], "iterations": 0,
            "context": {"source_timeout_s": 5, "home": str(tmp_path / "other")}}))
    assert pwned.exists() and (tmp_path / "other").is_dir()

    for command in (["serve-graphs", "--help"], ["env", "serve", "--help"]):
        shown = " ".join(CliRunner().invoke(app, command, env={"COLUMNS": "200"}).output.split())
        assert "--token" in shown and "AGENT_WORLD_TOKEN" in shown, shown
    shown = " ".join(CliRunner().invoke(app, ["serve-graphs", "--help"],
                                        env={"COLUMNS": "200"}).output.split())
    assert "--allow-commands" in shown and "--allow-client-paths" in shown
    assert shown.lower().count("dangerous") >= 2


def test_env_server_over_http_makes_a_token_and_wants_it(tmp_path):
    port, log = free_port(), tmp_path / "serve.log"
    proc = start(["--home", str(tmp_path), "env", "serve", str(FIXTURES / "notes_env.json"),
                  "--transport", "http", "--port", str(port)], log, token=None)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_listening(proc, url, log)
        assert listening_hosts(port) == {"127.0.0.1"}
        found = re.search(r"bearer token: (\S+)", log.read_text())
        assert found, log.read_text()
        token = found.group(1)
        assert len(token) >= 32

        async def listed() -> set[str]:
            async with _session(url, {"Authorization": f"Bearer {token}"}) as s:
                return {t.name for t in (await s.list_tools()).tools}

        names = asyncio.run(asyncio.wait_for(listed(), 60))
        statuses = _refused_without_the_token(url)
    finally:
        stop(proc)
    assert {"add_note", "list_notes", "episode_open"} <= names
    assert statuses == [401, 401, 401]


def _json(out):
    if hasattr(out, "content"):
        return json.loads(out.content[0].text)
    if isinstance(out, list):
        out = out[0]["text"] if isinstance(out[0], dict) else out[0].text
    return json.loads(out)


def test_named_episodes_are_reachable_only_by_who_opened_them(tmp_path):
    """Was: any client naming `?episode=run-7` landed in whoever else used that name."""
    port, log = free_port(), tmp_path / "serve.log"
    proc = start(["--home", str(tmp_path), "env", "serve", str(FIXTURES / "notes_env.json"),
                  "--transport", "http", "--port", str(port)], log)
    url = f"http://127.0.0.1:{port}/mcp"

    async def scenario() -> tuple:
        async with _session(url, AUTH) as s:
            episode = _json(await s.call_tool("episode_open", {}))["episode"]
        # a client that opens a session per call keeps its episode by its id
        tools = {t.name: t for t in await MultiServerMCPClient({"n": {
            "transport": "streamable_http", "url": f"{url}?episode={episode}",
            "headers": AUTH}}).get_tools()}
        await tools["add_note"].ainvoke({"user_id": 1, "body": "mine"})
        kept = _json(await tools["list_notes"].ainvoke({"user_id": 1}))
        async with _session(f"{url}?episode=run-7", AUTH) as s:
            made_up = await s.call_tool("list_notes", {"user_id": 1})
        async with _session(url, {**AUTH, "X-Episode-Id": episode[:-2] + "xx"}) as s:
            forged = await s.call_tool("list_notes", {"user_id": 1})
        async with _session(url, {**AUTH, "X-Episode-Id": episode}) as s:
            by_header = _json(await s.call_tool("list_notes", {"user_id": 1}))
        return episode, kept, made_up, forged, by_header

    try:
        wait_listening(proc, url, log)
        episode, kept, made_up, forged, by_header = asyncio.run(
            asyncio.wait_for(scenario(), 120))
    finally:
        stop(proc)
    assert len(episode) >= 32
    assert [n["body"] for n in kept] == ["hello", "mine"] == [n["body"] for n in by_header]
    for result in (made_up, forged):
        assert result.isError and "not an episode this server opened" in \
            result.content[0].text and "episode_open" in result.content[0].text


def test_an_episode_closed_to_make_room_says_so(monkeypatch):
    """Was: the 257th named episode closed the least recently used one, whose next call then
    started silently from the seed state."""
    monkeypatch.setattr(mcp_export, "MAX_NAMED_EPISODES", 2)
    server = EnvironmentServer(EnvSpec.load(FIXTURES / "notes_env.json"))
    caller: dict = {"episode": None}
    monkeypatch.setattr(server, "_caller", lambda: (caller["episode"], None, True))

    async def call(episode: str | None, tool: str, arguments: dict | None = None):
        caller["episode"] = episode
        result = await server.call_tool(tool, arguments or {})
        content = result[0] if isinstance(result, tuple) else result  # (text, structured)
        return json.loads(content[0].text)

    async def scenario() -> None:
        first = (await call(None, "episode_open"))["episode"]
        await call(first, "add_note", {"user_id": 1, "body": "kept?"})
        others = [(await call(None, "episode_open"))["episode"] for _ in range(2)]
        with pytest.raises(ToolError, match=r"episode '.+' was closed \(least recently used "
                                            r"of 2 open\); open a new one with episode_open"):
            await call(first, "list_notes", {"user_id": 1})
        with pytest.raises(ToolError, match="was closed"):  # and stays so
            await call(first, "episode_reset")
        assert len(await call(others[-1], "list_notes", {"user_id": 1})) == 1
        with pytest.raises(ToolError, match="only over HTTP"):  # stdio: one session, one episode
            monkeypatch.setattr(server, "_caller", lambda: (None, None, False))
            await call(None, "episode_open")

    try:
        asyncio.run(scenario())
    finally:
        server.close()
