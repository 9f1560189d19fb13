"""The MCP export under real clients: stateless clients keep their writes, sessions run in
parallel, and the server stops cleanly on SIGTERM / SIGINT."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from langchain_mcp_adapters.client import MultiServerMCPClient

from tests.conftest import FIXTURES
from tests.integration.served import AUTH, TOKEN

pytestmark = pytest.mark.integration


def _slow_spec(tmp_path: Path) -> Path:
    raw = json.loads((FIXTURES / "notes_env.json").read_text())
    raw["tools"].append({
        "name": "slow_count", "description": "Count notes, slowly.",
        "parameters": {"type": "object", "properties": {"seconds": {"type": "number"}},
                       "required": ["seconds"], "additionalProperties": False},
        "source": "def slow_count(ctx, seconds):\n    import time\n    time.sleep(seconds)\n"
                  "    return ctx.query('SELECT count(*) AS n FROM notes')\n"})
    path = tmp_path / "slow_notes.json"
    path.write_text(json.dumps(raw))
    return path


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_http(tmp_path: Path, spec: Path) -> tuple[subprocess.Popen, str, Path]:
    port = _port()
    log = tmp_path / "serve.log"  # a file, not a pipe: a full pipe would stall the server
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "agent_world.cli", "--home",
                                 str(tmp_path), "env", "serve", str(spec), "--transport", "http",
                                 "--port", str(port)], start_new_session=True,
                                env={**os.environ, "AGENT_WORLD_TOKEN": TOKEN},
                                stdout=subprocess.DEVNULL, stderr=err)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=0.5)
            break
        except httpx.HTTPError:
            assert proc.poll() is None, log.read_text()
            time.sleep(0.2)
    first = log.read_text().splitlines()[0]  # the start-up line comes before the server listens
    match = re.search(r"episodes in (\S+);", first)
    assert match, first
    return proc, url, Path(match.group(1))


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _text(result) -> str:
    return result.content[0].text if hasattr(result, "content") else str(result)


def _json(out):
    """A LangChain MCP tool's output (a string or a list of content blocks) as JSON."""
    if isinstance(out, list):
        out = out[0]["text"] if isinstance(out[0], dict) else out[0].text
    return json.loads(out)


@pytest.fixture()
def http_server(tmp_path):
    proc, url, workdir = _start_http(tmp_path, _slow_spec(tmp_path))
    try:
        yield proc, url, workdir
    finally:
        _stop(proc)


def test_stateless_clients_keep_their_writes_in_a_named_episode(http_server):
    """Was: get_tools() opened a session per call, so each call saw a fresh episode."""
    _, url, _ = http_server

    async def scenario():
        plain = {t.name: t for t in await MultiServerMCPClient(
            {"n": {"transport": "streamable_http", "url": url, "headers": AUTH}}).get_tools()}
        await plain["add_note"].ainvoke({"user_id": 1, "body": "lost"})
        assert len(_json(await plain["list_notes"].ainvoke({"user_id": 1}))) == 1

        episode = _json(await plain["episode_open"].ainvoke({}))["episode"]
        named = {t.name: t for t in await MultiServerMCPClient(
            {"n": {"transport": "streamable_http", "url": f"{url}?episode={episode}",
                   "headers": AUTH}}).get_tools()}
        await named["add_note"].ainvoke({"user_id": 1, "body": "kept"})
        assert len(_json(await named["list_notes"].ainvoke({"user_id": 1}))) == 2
        diff = _json(await named["episode_diff"].ainvoke({}))
        assert diff["counts"]["notes"]["inserted"] == 1
        await named["episode_reset"].ainvoke({})
        assert len(_json(await named["list_notes"].ainvoke({"user_id": 1}))) == 1

    asyncio.run(asyncio.wait_for(scenario(), 120))


def test_a_slow_call_does_not_hold_up_other_sessions(http_server):
    """Was: one tool call at a time: a 4 s call stalled every other session."""
    _, url, _ = http_server

    async def scenario():
        client = MultiServerMCPClient({
            "a": {"transport": "streamable_http", "url": url, "headers": AUTH},
            "b": {"transport": "streamable_http", "url": url, "headers": AUTH}})
        async with client.session("a") as a, client.session("b") as b:
            # warm both workers, then hold one with a slow call
            await asyncio.gather(a.call_tool("list_notes", {"user_id": 1}),
                                 b.call_tool("list_notes", {"user_id": 1}))
            slow = asyncio.create_task(a.call_tool("slow_count", {"seconds": 4}))
            await asyncio.sleep(0.5)
            fast = await b.call_tool("list_notes", {"user_id": 1})
            assert not fast.isError and not slow.done()  # b was answered while a waited
            assert json.loads(_text(await slow)) == [{"n": 1}]

    asyncio.run(asyncio.wait_for(scenario(), 120))


def test_sigterm_stops_the_http_server_and_removes_its_files(http_server):
    """Was: SIGTERM left the /dev/shm work directory behind."""
    proc, url, workdir = http_server

    async def touch():
        client = MultiServerMCPClient({"a": {"transport": "streamable_http", "url": url,
                                             "headers": AUTH}})
        async with client.session("a") as a:
            await a.call_tool("list_notes", {"user_id": 1})

    asyncio.run(asyncio.wait_for(touch(), 60))
    assert workdir.exists()
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(30) == 128 + signal.SIGTERM
    assert not workdir.exists()


def test_ctrl_c_stops_the_stdio_server(tmp_path):
    """Was: stdio `env serve` ignored Ctrl-C and printed nothing."""
    proc = subprocess.Popen([sys.executable, "-m", "agent_world.cli", "--home", str(tmp_path),
                             "env", "serve", str(FIXTURES / "notes_env.json")],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        first = proc.stderr.readline()
        assert "serving notes" in first and "stdio" in first
        workdir = Path(re.search(r"episodes in (\S+);", first).group(1))
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)  # stdin stays open: the server is mid-read
        assert proc.wait(30) == 128 + signal.SIGINT
        assert "stopped" in proc.stderr.read()
        assert not workdir.exists()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdin.close()
        proc.stderr.close()
