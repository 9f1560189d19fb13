"""A built tool finds its record by everything its source says names it and reads every
argument the source requires: Chatwork's delete_room_message(path={room_id, message_id})
deletes a message of that room only, Excel's delete_note(path, sheet, cell) the note at that
cell, and a tool that cannot act on a required argument (Asana's add_task_dependencies'
`dependencies`, an update that ignored them) is rejected, not kept."""

from __future__ import annotations

import pytest

from agent_world.design.argument_use import unread_arguments
from agent_world.design.cross_validation import SandboxCompiler, cross_validate, validation_runtime
from agent_world.design.tool_designer import design_tools
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources


@pytest.fixture(scope="module")
def built():
    out = {}
    compiler, runtime = SandboxCompiler(), validation_runtime()
    try:
        for server in ("chatwork", "excel", "asana"):
            ref = next(r for r in corpus_sources() if r.name == server)
            spec = mine_theme(read_source(ref.spec), iterations=0, seed=0).spec
            validation, spec_built, _ = cross_validate(spec, design_tools(spec, model=None),
                                                       compiler=compiler, runtime=runtime)
            assert spec_built is not None
            out[server] = (validation, spec_built)
    finally:
        compiler.close()
        runtime.close()
    return out


def test_nested_path_and_query_parameters_are_the_tools_own_arguments(built):
    _, spec = built["chatwork"]
    params = {t.name: t.parameters for t in spec.tools}
    assert params["get_room"]["required"] == ["room_id"]
    assert set(params["list_room_messages"]["properties"]) == {"room_id", "force"}
    assert set(params["delete_room_message"]["required"]) == {"room_id", "message_id"}


def _message_and_another_room(ep):
    """The first stored message and a room it is not in."""
    msg = ep.query('SELECT id, room_id FROM "messages" ORDER BY id LIMIT 1')[0]
    other = ep.query('SELECT id FROM "rooms" WHERE id != ? ORDER BY id LIMIT 1',
                     (msg["room_id"],))[0]["id"]
    return msg, other


def test_a_record_is_found_inside_the_record_it_belongs_to(built):
    _, spec = built["chatwork"]
    runtime = validation_runtime()
    try:
        with runtime.open(spec, seed=0) as ep:
            msg, other = _message_and_another_room(ep)
            wrong = ep.step("delete_room_message", {"room_id": other, "message_id": msg["id"]})
            assert not wrong.ok and wrong.error.kind == "tool_error"
            assert ep.query('SELECT count(*) AS n FROM "messages" WHERE id = ?',
                            (msg["id"],))[0]["n"] == 1
            right = ep.step("delete_room_message", {"room_id": msg["room_id"],
                                                    "message_id": msg["id"]})
            assert right.ok and right.result == {"deleted": msg["id"]}
    finally:
        runtime.close()


def test_an_edit_finds_its_record_where_it_is_and_does_not_move_it(built):
    """Chatwork's update_room_message(room_id, message_id, body) had moved the message into
    `room_id`; the room now says where the message is: another room is refused, its own is
    edited in place. Excel's rename_sheet(path, sheet, new_name) renames the sheet of that
    workbook and leaves it there."""
    _, spec = built["chatwork"]
    tool = next(t for t in spec.tools if t.name == "update_room_message")
    assert "_row_where(ctx, 'messages'" in tool.source
    runtime = validation_runtime()
    try:
        with runtime.open(spec, seed=0) as ep:
            msg, other = _message_and_another_room(ep)
            wrong = ep.step("update_room_message", {"room_id": other, "message_id": msg["id"],
                                                    "body": "Moved?"})
            assert not wrong.ok and wrong.error.kind == "tool_error"
            right = ep.step("update_room_message", {"room_id": msg["room_id"],
                                                    "message_id": msg["id"], "body": "Edited"})
            assert right.ok, right.error
            after = ep.query('SELECT room_id, body FROM "messages" WHERE id = ?', (msg["id"],))
            assert after == [{"room_id": msg["room_id"], "body": "Edited"}]
    finally:
        runtime.close()
    _, spec = built["excel"]
    rename = next(t for t in spec.tools if t.name == "rename_sheet")
    assert "_row_where(ctx, 'sheets'" in rename.source
    assert "changes['path']" not in rename.source


def test_every_kept_tool_reads_what_it_requires_and_the_rest_are_ledgered(built):
    for _, spec in built.values():
        for t in spec.tools:
            assert unread_arguments(t.source, t.name, t.parameters.get("required", [])) == []
    validation, _ = built["asana"]
    verdicts = {v.tool: v for v in validation.verdicts}
    assert verdicts["asana_add_task_dependencies"].category == "ignores_argument"
    assert "dependencies" in verdicts["asana_add_task_dependencies"].reason
    _, spec = built["excel"]
    note = next(t for t in spec.tools if t.name == "delete_note")
    assert set(note.parameters["required"]) == {"path", "sheet", "cell"}
    assert "_row_where(ctx, 'notes'" in note.source


def test_a_list_of_values_finds_the_records_holding_them():
    """MUI's fetchDocs(urls) had become fetchDocs(limit), every doc whatever the URLs; kept
    with its `urls`, it now returns the docs at those URLs (doc_urls.url) and refuses a
    non-list."""
    ref = next(r for r in corpus_sources() if r.name == "mui")
    spec = mine_theme(read_source(ref.spec), iterations=0, seed=0).spec
    runtime = validation_runtime()
    try:
        _, built, _ = cross_validate(spec, design_tools(spec, model=None),
                                     compiler=SandboxCompiler(), runtime=runtime)
        assert built is not None
        tool = next(t for t in built.tools if t.name == "fetchDocs")
        assert tool.parameters["properties"]["urls"]["type"] == "array"
        with runtime.open(built, seed=0) as ep:
            links = ep.query('SELECT doc_id, url FROM "doc_urls" ORDER BY id LIMIT 2')
            got = ep.step("fetchDocs", {"urls": [r["url"] for r in links]})
            assert got.ok and {d["id"] for d in got.result} == {r["doc_id"] for r in links}
            everything = ep.query('SELECT count(*) AS n FROM "docs"')[0]["n"]
            assert len(got.result) < everything
            assert not ep.step("fetchDocs", {"urls": "x"}).ok
    finally:
        runtime.close()


def test_an_edit_of_a_checked_column_is_tested_with_a_value_the_check_allows():
    """Hostinger's VPS_updateFirewallRuleV1(firewallId, ruleId, protocol, ...) had been
    tested by writing 'TCP (edited)' into a protocol its table checks against a list, and was
    rejected: its test now sets another listed protocol, and the tool is kept."""
    ref = next(r for r in corpus_sources() if r.name == "hostinger")
    spec = mine_theme(read_source(ref.spec), iterations=0, seed=0).spec
    compiler, runtime = SandboxCompiler(), validation_runtime()
    try:
        design = design_tools(spec, model=None)
        validation, built, _ = cross_validate(spec, design, compiler=compiler, runtime=runtime)
    finally:
        compiler.close()
        runtime.close()
    verdict = next(v for v in validation.verdicts if v.tool == "VPS_updateFirewallRuleV1")
    assert verdict.kept, verdict.reason
    protocols = next(c.enum for t in spec.tables if t.name == "rules" for c in t.columns
                     if c.name == "protocol")
    edit = next(t for t in design.tests if t["tool"] == "VPS_updateFirewallRuleV1"
                and t["expect"].get("ok", True))
    assert edit["arguments"]["protocol"] in protocols, edit


def test_no_question_goes_to_a_query_runner_built_without_its_service_s_input():
    """Cosmos DB's mcp_cosmos_query(container_id, query) is built as a runner of the query
    alone: "in the `documents` table, what is the status of ..." would call it as the service
    never answers a call, so no SQL question is asked of it."""
    import random

    from agent_world.synthesis.synthesizer import _sql_candidate
    from agent_world.tasks.difficulty import Recipe
    from agent_world.tasks.words import lost_inputs, runs_sql

    ref = next(r for r in corpus_sources() if r.name == "cosmosdb")
    spec = mine_theme(read_source(ref.spec), iterations=0, seed=0).spec
    compiler, runtime = SandboxCompiler(), validation_runtime()
    try:
        _, built, _ = cross_validate(spec, design_tools(spec, model=None), compiler=compiler,
                                     runtime=runtime)
        assert built is not None
        assert runs_sql(built, "mcp_cosmos_query") and lost_inputs(built, "mcp_cosmos_query")
        got = _sql_candidate(built, runtime, random.Random(0), Recipe(length=1, obscured=False, many_distractors=False),
                             "mcp_cosmos_query", 0, None)
        assert got == "the tool was built without an input its service requires"
    finally:
        compiler.close()
        runtime.close()


def test_a_free_text_search_is_no_sql_runner_and_is_given_no_sql():
    """NotebookLM's search_notebooks(query) ("Search the library by free-text query ... chain
    into `select_notebook`") had been built as a runner of SELECTs over the whole database (a
    SELECT inside `select_notebook`), and asked for "the notebooks matching 'SELECT "id", ...
    FROM "sessions" ...'": it is a listing matching its text, and a tool that runs no SQL is
    never given another table's statement."""
    from agent_world.design.offline.source_plans import plan_tools
    from agent_world.envs import load_example
    from agent_world.envs.spec import ToolSpec
    from agent_world.envs.table_spec import ColumnSpec, TableSpec
    from agent_world.tasks.sampling import ValueSampler

    ref = next(r for r in corpus_sources() if r.name == "notebooklm")
    plans, _ = plan_tools(mine_theme(read_source(ref.spec), iterations=0, seed=0).spec)
    search = next(p for p in plans if p.name == "search_notebooks")
    assert search.kind == "list" and search.param("like").name == "query", search
    spec = load_example("ecommerce").model_copy(deep=True)
    spec.tables.append(TableSpec(name="saved_queries", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="query", type="text")]))
    spec.rows["saved_queries"] = [{"id": 1, "query": 'SELECT "id" FROM "orders" LIMIT 3'},
                                  {"id": 2, "query": "lamp"}]
    for name, desc in (("search_products", "Search products by free text."),
                       ("run_query", "Run a read-only SQL SELECT query.")):
        spec.tools.append(ToolSpec(name=name, description=desc,
                                   source=f"def {name}(ctx, query):\n    return []\n", parameters={
            "type": "object", "properties": {"query": {"type": "string"}}}))
    said = ValueSampler(spec).candidates("search_products", "query", {"type": "string"})
    assert "lamp" in said and not any(str(v).startswith("SELECT") for v in said), said
    ran = ValueSampler(spec).candidates("run_query", "query", {"type": "string"})
    assert any(str(v).startswith("SELECT") for v in ran), ran
