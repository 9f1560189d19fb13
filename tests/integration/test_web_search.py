"""The miner's web-search tool, served by a local MCP search server."""

from __future__ import annotations

import sys

import pytest

from agent_world.errors import SourceError
from agent_world.mining.web_search import MCPSearch
from tests.conftest import FIXTURES

pytestmark = pytest.mark.integration


def _spec(log, tool="web_search"):
    return f"mcp:{sys.executable} {FIXTURES / 'search_mcp_server.py'} {log}#{tool}"


def test_one_session_answers_many_queries(tmp_path):
    log = tmp_path / "queries.log"
    with MCPSearch(_spec(log)) as search:
        first = search("clinic appointment states")
        second = search("patients per doctor")
    assert len(first) == 2 and "suspended" in first[0]
    assert "patients per doctor" in second[0]
    assert log.read_text().splitlines() == ["clinic appointment states", "patients per doctor"]


def test_the_search_tool_is_found_by_name_when_not_given(tmp_path):
    with MCPSearch(_spec(tmp_path / "q.log", tool="").rstrip("#")) as search:
        assert search.tool == "web_search" and search.argument == "query"


def test_unknown_tool_and_dead_server_are_clear_errors(tmp_path):
    with pytest.raises(SourceError, match="no tool 'nope'.*web_search"):
        MCPSearch(_spec(tmp_path / "q.log", tool="nope")).__enter__()
    with pytest.raises(SourceError, match="web search"):
        MCPSearch("mcp:/nonexistent/search-server#web_search", timeout=10).__enter__()
    with pytest.raises(SourceError, match="expected mcp"):
        MCPSearch(f"file:{FIXTURES / 'notes_env.json'}#x")


def test_mine_graph_uses_web_evidence(tmp_path):
    from agent_world.envs.catalog import Catalog
    from agent_world.graphs import mine_graph
    from agent_world.graphs.runner import final_state, stream, thread_config

    log = tmp_path / "queries.log"
    data = FIXTURES.parent.parent / "agent_world" / "data" / "sources"
    config = thread_config("web", tmp_path)
    list(stream(mine_graph.build_graph(),
                {"sources": [f"file:{data / 'clinic_booking_openapi.yaml'}",
                             "mcp:/nonexistent/server"],
                 "iterations": 1, "web_search": _spec(log)}, config))
    values, _ = final_state(mine_graph.build_graph(), config)
    assert values["summary"]["mined"] == 1
    assert log.read_text().strip()  # the miner asked its research questions
    [theme] = Catalog.open(tmp_path).list_themes()
    assert theme["payload"]["evidence"]["by_kind"].get("web", 0) > 0, theme["payload"]["evidence"]


def test_an_unavailable_search_backend_does_not_stop_mining(tmp_path):
    from agent_world.envs.catalog import Catalog
    from agent_world.graphs import mine_graph
    from agent_world.graphs.runner import final_state, stream, thread_config

    data = FIXTURES.parent.parent / "agent_world" / "data" / "sources"
    config = thread_config("noweb", tmp_path)
    list(stream(mine_graph.build_graph(),
                {"sources": [f"file:{data / 'book_lending_prd.md'}"], "iterations": 1,
                 "web_search": "mcp:/nonexistent/search#web_search"}, config))
    values, _ = final_state(mine_graph.build_graph(), config)
    assert values["summary"]["mined"] == 1
    reasons = [e.reason for e in Catalog.open(tmp_path).ledger(stage="mine")]
    assert any("web search unavailable" in r for r in reasons)
