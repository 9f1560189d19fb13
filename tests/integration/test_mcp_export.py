"""An environment served over MCP, read by langchain-mcp-adapters as the real client."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from langchain_mcp_adapters.client import MultiServerMCPClient

from tests.conftest import FIXTURES
from tests.integration.served import AUTH, TOKEN

pytestmark = pytest.mark.integration


def _client(home):
    cmd = [sys.executable, "-m", "agent_world.cli", "--home", str(home), "env", "serve",
           str(FIXTURES / "notes_env.json")]
    return MultiServerMCPClient({"notes": {"transport": "stdio", "command": cmd[0],
                                           "args": cmd[1:]}})


def test_tools_list_and_calls_over_stdio(tmp_path):
    async def scenario():
        client = _client(tmp_path)
        async with client.session("notes") as session:
            listed = (await session.list_tools()).tools
            by_name = {t.name: t for t in listed}
            assert set(by_name) >= {"list_notes", "add_note", "rename_user", "delete_note"}
            assert by_name["add_note"].inputSchema["required"] == ["user_id", "body"]
            assert by_name["list_notes"].annotations.readOnlyHint is True
            added = await session.call_tool("add_note", {"user_id": 1, "body": "via mcp"})
            assert not added.isError
            assert json.loads(added.content[0].text)["ref"].startswith("N")
            listed_notes = await session.call_tool("list_notes", {"user_id": 1})
            assert [n["body"] for n in json.loads(listed_notes.content[0].text)] == [
                "hello", "via mcp"]
            bad = await session.call_tool("add_note", {"user_id": "x", "body": "y"})
            assert bad.isError and "invalid_arguments" in bad.content[0].text
            unknown = await session.call_tool("nope", {})
            assert unknown.isError and "unknown_tool" in unknown.content[0].text
        # a new session (new server process) starts from a fresh episode
        async with client.session("notes") as session:
            fresh = await session.call_tool("list_notes", {"user_id": 1})
            assert len(json.loads(fresh.content[0].text)) == 1

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_results_are_structured_and_the_stdio_server_is_quiet(tmp_path):
    """Was: results only as JSON text with no outputSchema, and one INFO line on stderr per
    request. A real MCP client over stdio, the server's stderr kept in a file."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "agent_world.cli", "--home", str(tmp_path), "env", "serve",
        str(FIXTURES / "notes_env.json")])
    errlog = tmp_path / "stderr.log"

    async def scenario():
        with errlog.open("w") as err:
            async with stdio_client(params, errlog=err) as (r, w), ClientSession(r, w) as s:
                await s.initialize()
                tools = {t.name: t for t in (await s.list_tools()).tools}
                assert tools["list_notes"].outputSchema["required"] == ["result"]
                for _ in range(5):
                    listed = await s.call_tool("list_notes", {"user_id": 1})
                assert not listed.isError
                assert listed.structuredContent == {"result": json.loads(
                    listed.content[0].text)}
                assert listed.structuredContent["result"][0]["body"] == "hello"
                added = await s.call_tool("add_note", {"user_id": 1, "body": "typed"})
                assert added.structuredContent["result"]["ref"].startswith("N")

    asyncio.run(asyncio.wait_for(scenario(), 60))
    lines = errlog.read_text().splitlines()
    assert not [line for line in lines if "Processing request" in line or "INFO" in line], lines
    assert len(lines) <= 3, lines  # the start banner, nothing per request


def test_langchain_tools_from_the_export(tmp_path):
    async def scenario():
        client = _client(tmp_path)
        async with client.session("notes") as session:
            from langchain_mcp_adapters.tools import load_mcp_tools

            tools = {t.name: t for t in await load_mcp_tools(session)}
            out = await tools["list_notes"].ainvoke({"user_id": 1})
            text = out if isinstance(out, str) else json.dumps(out)
            assert "hello" in text

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_streamable_http_sessions_get_isolated_episodes(tmp_path):
    import os
    import signal
    import socket
    import subprocess
    import time

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "agent_world.cli", "--home", str(tmp_path),
                             "env", "serve", str(FIXTURES / "notes_env.json"), "--transport",
                             "http", "--port", str(port)], start_new_session=True,
                            env={**os.environ, "AGENT_WORLD_TOKEN": TOKEN},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(url, timeout=0.5)
                break
            except httpx.HTTPError:
                time.sleep(0.2)

        async def scenario():
            client = MultiServerMCPClient({
                "a": {"transport": "streamable_http", "url": url, "headers": AUTH},
                "b": {"transport": "streamable_http", "url": url, "headers": AUTH}})
            async with client.session("a") as a, client.session("b") as b:
                names = {t.name for t in (await a.list_tools()).tools}
                assert "add_note" in names
                assert not (await a.call_tool("add_note", {"user_id": 1, "body": "only a"})).isError
                seen_a = json.loads((await a.call_tool("list_notes", {"user_id": 1})).content[0].text)
                seen_b = json.loads((await b.call_tool("list_notes", {"user_id": 1})).content[0].text)
                assert len(seen_a) == 2 and len(seen_b) == 1

        asyncio.run(asyncio.wait_for(scenario(), 60))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
