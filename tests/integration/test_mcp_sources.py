"""Real MCP servers read as mining sources: the four installed Python servers over stdio, a
FastMCP server of our own over stdio and over streamable HTTP, and failures."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_world.errors import SourceError
from agent_world.mining.sources import (
    aread_source,
    default_sources,
    parse_source,
    read_mcp,
    read_mcp_url,
    read_source,
    read_sources,
)

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
NOTES_SERVER = (
    Path(__file__).resolve().parents[1] / "fixtures" / "sources" / "fastmcp_notes_server.py"
)


def _tools(doc):
    return {t.name: t for t in doc.tools}


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory):
    return tmp_path_factory.mktemp("sqlite") / "scratch.db"


@pytest.mark.parametrize(
    ("command", "expected", "count"),
    [
        ("mcp-server-time --local-timezone UTC", {"get_current_time", "convert_time"}, 2),
        ("mcp-server-git", {"git_status", "git_log", "git_commit", "git_diff"}, None),
        ("mcp-server-fetch", {"fetch"}, None),
        ("mcp-server-sqlite --db-path {db}", {"read_query", "write_query", "list_tables"}, None),
    ],
)
def test_real_stdio_servers(command, expected, count, sqlite_db):
    start = time.perf_counter()
    doc = read_mcp(command.format(db=sqlite_db), timeout=30)
    elapsed = time.perf_counter() - start
    assert doc.kind == "mcp"
    assert doc.name == command.split()[0].removeprefix("mcp-server-")
    tools = _tools(doc)
    assert expected <= set(tools), sorted(tools)
    if count is not None:
        assert len(tools) == count
    for tool in tools.values():
        assert tool.description
        assert tool.input_schema.get("type") == "object"
    assert doc.metadata["server_name"]
    assert doc.metadata["tool_count"] == len(tools)
    assert elapsed < 15, f"{command} took {elapsed:.1f}s"


def test_real_server_schemas_and_annotations(sqlite_db):
    time_doc = read_mcp(f"{BIN / 'mcp-server-time'} --local-timezone UTC")
    current = _tools(time_doc)["get_current_time"]
    assert current.input_schema["required"] == ["timezone"]
    assert current.read_only is True  # annotations.readOnlyHint
    sqlite = _tools(read_mcp(["mcp-server-sqlite", "--db-path", str(sqlite_db)]))
    assert "query" in sqlite["read_query"].input_schema["properties"]
    git = _tools(read_mcp("mcp-server-git"))
    assert "repo_path" in git["git_status"].input_schema["properties"]
    assert git["git_status"].read_only is True
    assert git["git_commit"].read_only is False


def test_default_sources_read_concurrently():
    start = time.perf_counter()
    docs = read_sources(default_sources(), timeout=30)
    elapsed = time.perf_counter() - start
    by_name = {d.name: d for d in docs}
    assert set(by_name) >= {"time", "git", "fetch", "sqlite"}
    assert all(by_name[n].tools for n in ("time", "git", "fetch", "sqlite"))
    assert {d.kind for d in docs} == {"mcp", "openapi", "prd"}
    assert elapsed < 20


def test_own_fastmcp_server_over_stdio():
    doc = read_source(f"mcp:{sys.executable} {NOTES_SERVER} stdio")
    assert doc.title == "fixture-notes"
    assert doc.description == "A notebook: search notes before adding duplicates."
    assert doc.metadata["instructions"].startswith("A notebook")
    tools = _tools(doc)
    assert set(tools) == {"search_notes", "add_note", "delete_note"}
    assert tools["search_notes"].read_only is True
    assert tools["add_note"].read_only is False
    assert tools["delete_note"].read_only is None  # no annotations
    assert tools["search_notes"].input_schema["required"] == ["query"]
    assert tools["add_note"].output_schema is not None  # FastMCP structured output


def test_sync_reader_inside_running_loop():
    async def main():
        inner = read_mcp("mcp-server-time --local-timezone UTC")  # runs in a worker thread
        outer = await aread_source("mcp:mcp-server-fetch")
        return inner, outer

    inner, outer = asyncio.run(main())
    assert "get_current_time" in _tools(inner)
    assert "fetch" in _tools(outer)


# --------------------------------------------------------------------------- failures


def test_missing_command_fails_fast():
    start = time.perf_counter()
    with pytest.raises(SourceError, match="'no-such-mcp-server-xyz' not found"):
        read_mcp("no-such-mcp-server-xyz --flag")
    assert time.perf_counter() - start < 2


def test_server_that_exits_at_once_fails_fast_with_stderr():
    start = time.perf_counter()
    script = "import sys; print('cannot open config', file=sys.stderr); sys.exit(3)"
    with pytest.raises(SourceError) as err:
        read_mcp([sys.executable, "-c", script], name="broken")
    message = str(err.value)
    assert "MCP server 'broken'" in message
    assert "cannot open config" in message  # the server's stderr is quoted
    assert time.perf_counter() - start < 10


def test_server_that_never_answers_times_out():
    start = time.perf_counter()
    with pytest.raises(SourceError, match=r"no answer to initialize/tools/list within 1 s"):
        read_mcp([sys.executable, "-c", "import time; time.sleep(60)"], timeout=1)
    assert time.perf_counter() - start < 8  # 1 s + the MCP SDK's 2 s shutdown grace


# --------------------------------------------------------------------------- streamable HTTP


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def http_server():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(NOTES_SERVER), "streamable-http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"FastMCP server exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("FastMCP HTTP server did not start listening")
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_streamable_http_server(http_server):
    doc = read_mcp_url(http_server, timeout=15)
    assert doc.kind == "mcp-url"
    assert doc.reference == http_server
    assert doc.metadata["server_name"] == "fixture-notes"
    tools = _tools(doc)
    assert set(tools) == {"search_notes", "add_note", "delete_note"}
    assert tools["search_notes"].read_only is True
    ref = parse_source(f"mcp-url:{http_server}")
    assert read_source(ref).tools == doc.tools


def test_http_nothing_listening_fails():
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    start = time.perf_counter()
    with pytest.raises(SourceError, match=r"MCP server at http://127\.0\.0\.1:\d+/mcp"):
        read_mcp_url(url, timeout=5)
    assert time.perf_counter() - start < 8
