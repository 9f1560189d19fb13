"""Episode state: ids and clock that depend only on the seed and committed writes, resets that
undo changes exactly, the guard around the schema and the engine's own tables, rows that read
by name and position, JSON columns, and error messages that name their cause."""

from __future__ import annotations

import json

import pytest

from agent_world.envs import ToolError
from agent_world.envs.database import state_hash
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.errors import SpecError


def _tool(name: str, body: str, mutates: bool = True, params: dict | None = None) -> dict:
    return {"name": name, "description": f"{name} (test tool)", "mutates": mutates,
            "source": f"def {name}(ctx, **kw):\n" + "".join(f"    {line}\n"
                                                            for line in body.splitlines()),
            "parameters": {"type": "object", "properties": params or {},
                           "additionalProperties": True}}


TOOLS = [
    _tool("sql", "return ctx.query(kw['q'])"),
    _tool("read_sql", "return ctx.query(kw['q'])", mutates=False),
    _tool("churn", "\n".join([
        "ctx.execute(\"INSERT OR REPLACE INTO users (id, name, role) VALUES (1, 'Ann2', 'admin')\")",
        "ctx.execute(\"UPDATE users SET id = 20 WHERE id = 2\")",
        "ctx.execute(\"INSERT INTO users (name) VALUES ('new')\")",
        "ctx.execute(\"DELETE FROM notes\")",
        "ctx.execute(\"INSERT INTO notes (ref, user_id, body) VALUES ('Z', 20, 'z')\")",
        "return ctx.new_id('N')"])),
    _tool("lookup", "return dict(ctx.get_or_fail('users', id=kw['id']))", mutates=False),
    _tool("shapes", "\n".join([
        "row = ctx.one('SELECT id, name FROM users WHERE id = 1')",
        "a, b = row",
        "return [a, b, row[0], row['name'], row[-1], list(row.keys())]"]), mutates=False),
    _tool("joined", "return ctx.query('SELECT * FROM users u JOIN notes n ON n.user_id = u.id')",
          mutates=False),
    _tool("imported_error", "from agent_world.envs import ToolError as E\nraise E('nope')",
          mutates=False),
    _tool("set_prefs", "ctx.execute('UPDATE users SET prefs = ? WHERE id = 1', (kw['v'],))\n"
                       "return ctx.one('SELECT prefs FROM users WHERE id = 1')['prefs']"),
]


@pytest.fixture(scope="module")
def spec(notes_spec):
    raw = json.loads(notes_spec.to_json())
    raw["tables"][0]["columns"].append({"name": "prefs", "type": "json"})
    raw["rows"]["users"][0]["prefs"] = {"ratio": 2.0, "tags": ["a"], "none": None}
    raw["tools"].extend(TOOLS)
    return EnvSpec.from_dict(raw)


def test_ids_and_clock_depend_only_on_seed_and_committed_writes(runtime, spec):
    gold, detour = runtime.open(spec, seed=3), runtime.open(spec, seed=3)
    a = gold.step("add_note", {"user_id": 1, "body": "x"}).result
    # extra reads, an unknown tool, failing and refused calls: none of them count
    detour.step("list_notes", {"user_id": 1})
    detour.step("nope")
    detour.step("misbehave", {"how": "raise"})
    detour.step("add_note", {"user_id": 99, "body": "x"})
    detour.step("rename_user", {"user_id": 99, "name": "no such user"})  # changes nothing
    b = detour.step("add_note", {"user_id": 1, "body": "x"}).result
    assert a == b and a["created_at"] == "2026-02-01T08:01:00"
    assert gold.state_hash() == detour.state_hash()
    # the next write is a minute later and gets the next id
    c = gold.step("add_note", {"user_id": 1, "body": "y"}).result
    assert c["created_at"] == "2026-02-01T08:02:00" and c["ref"] != a["ref"]
    other_seed = runtime.open(spec, seed=4).step("add_note", {"user_id": 1, "body": "x"})
    assert other_seed.result["ref"] != a["ref"]
    # after a reset the episode starts over: same ids and times again
    gold.reset()
    assert gold.step("add_note", {"user_id": 1, "body": "x"}).result == a


def test_reset_undoes_every_kind_of_change_exactly(runtime, spec):
    ep = runtime.open(spec)
    pristine = ep.state_hash()
    dump = ep.query("SELECT * FROM users ORDER BY id")
    for _ in range(2):
        assert ep.step("churn").ok
        assert ep.step("rename_user", {"user_id": 20, "name": "Bo2"}).ok
        assert ep.state_hash() != pristine
        ep.reset()
        assert ep.state_hash() == pristine and ep.diff().empty and ep.steps == 0
        assert ep.query("SELECT * FROM users ORDER BY id") == dump
    # a worker killed mid-call leaves a journal that is rolled back; reset still works
    assert ep.step("churn").ok
    assert ep.step("misbehave", {"how": "exit"}).error.kind == "worker_crash"
    ep.reset()
    assert ep.state_hash() == pristine


def test_diffs_and_checks_compare_only_the_tables_changed_since_reset(runtime, spec, tmp_path):
    """`ep.diff()` and a task check's state comparison look only at the tables the undo log
    names (none after reads only) and find exactly what comparing every table finds."""
    import shutil
    import sqlite3

    from agent_world.envs.database import UNDO_TABLE, diff_databases, logged_tables
    from agent_world.tasks.check import episode_changes, state_changes

    ep = runtime.open(spec, seed=5)

    def logged() -> set[str] | None:
        conn = sqlite3.connect(ep.path)
        try:
            return logged_tables(conn)
        finally:
            conn.close()

    def every_table() -> tuple:  # the same comparisons on a copy without the undo log
        copy = tmp_path / f"copy-{ep.steps}.sqlite"
        shutil.copyfile(ep.path, copy)
        conn = sqlite3.connect(copy)
        conn.execute(f"DROP TABLE {UNDO_TABLE}")
        conn.commit()
        assert logged_tables(conn) is None
        conn.close()
        return diff_databases(spec, copy, ep.template), state_changes(ep.template, copy)

    assert logged() == set() and episode_changes(ep) == {} and ep.diff().empty
    assert ep.step("list_notes", {"user_id": 1}).ok
    assert not ep.step("add_note", {"user_id": 99, "body": "x"}).ok  # rolled back
    assert logged() == set() and episode_changes(ep) == {}
    assert ep.step("rename_user", {"user_id": 1, "name": "Zed"}).ok
    assert logged() == {"users"}
    diff, changes = every_table()
    assert ep.diff() == diff and episode_changes(ep) == changes and set(changes) == {"users"}
    assert ep.step("churn").ok
    assert logged() == {"users", "notes"}
    diff, changes = every_table()
    assert ep.diff() == diff and episode_changes(ep) == changes
    assert set(changes) == {"users", "notes"} and set(diff.tables) == {"users", "notes"}
    ep.reset()
    assert logged() == set() and episode_changes(ep) == {} and ep.diff().empty


@pytest.mark.parametrize("statement", [
    "CREATE TABLE t (x)", "DROP TABLE notes", "ALTER TABLE users ADD COLUMN z",
    "CREATE INDEX i ON users (name)", "CREATE TEMP TABLE t (x)", "DROP TRIGGER _aw_i_users"])
def test_tools_may_not_change_the_schema(runtime, spec, statement):
    ep = runtime.open(spec)
    obs = ep.step("sql", {"q": statement})
    assert obs.error.kind == "permission_denied" and "schema" in obs.error.message
    assert ep.diff().empty and ep.state_hash()


@pytest.mark.parametrize("statement", [
    "SELECT * FROM _aw_undo", "DELETE FROM _aw_counters",
    "INSERT INTO _aw_undo (tbl, op) VALUES ('users', 'I')"])
def test_tools_may_not_touch_the_engine_tables(runtime, spec, statement):
    obs = runtime.open(spec).step("sql", {"q": statement})
    assert obs.error.kind == "permission_denied" and "bookkeeping" in obs.error.message


def test_read_only_violation_names_the_declaration(runtime, spec):
    ep = runtime.open(spec)
    obs = ep.step("peek")
    assert obs.error.kind == "permission_denied"
    assert "'peek' is declared read-only (mutates: false)" in obs.error.message
    assert "UPDATE users" in obs.error.message and obs.error.fault == "environment"
    # the same statement text, first prepared by a write tool, is still refused afterwards
    q = "UPDATE users SET name = 'cached' WHERE id = 1"
    assert ep.step("sql", {"q": q}).ok
    assert ep.step("read_sql", {"q": q}).error.kind == "permission_denied"
    assert ep.query("SELECT name FROM users WHERE id = 1") == [{"name": "cached"}]


def test_get_or_fail_and_tool_error_from_the_package(runtime, spec):
    ep = runtime.open(spec)
    assert ep.step("lookup", {"id": 2}).result["name"] == "Bo"
    miss = ep.step("lookup", {"id": 9})
    assert miss.error.kind == "tool_error" and miss.error.message == "no users row with id=9"
    assert ep.step("imported_error").error.kind == "tool_error"
    assert ToolError.__module__ == "agent_world.envs.tool_context"


def test_rows_read_by_name_and_position_and_duplicates_are_an_error(runtime, spec):
    ep = runtime.open(spec)
    assert ep.step("shapes").result == [1, "Ann", 1, "Ann", "Ann", ["id", "name"]]
    obs = ep.step("joined")
    assert obs.error.kind == "tool_exception" and "duplicate column name(s) ['id']" in \
        obs.error.message


def test_json_columns_are_decoded_and_null_is_null(runtime, spec):
    ep = runtime.open(spec)
    rows = ep.step("read_sql", {"q": "SELECT id, prefs FROM users ORDER BY id"}).result
    assert rows == [{"id": 1, "prefs": {"ratio": 2.0, "tags": ["a"], "none": None}},
                    {"id": 2, "prefs": None}]
    assert isinstance(rows[0]["prefs"]["ratio"], float)
    assert ep.query("SELECT count(*) AS n FROM users WHERE prefs IS NULL") == [{"n": 1}]
    assert ep.step("set_prefs", {"v": {"x": [1.5]}}).result == {"x": [1.5]}  # dicts bind as JSON
    assert ep.query("SELECT prefs FROM users WHERE id = 1") == [{"prefs": {"x": [1.5]}}]
    bad = ep.step("set_prefs", {"v": "not json"})
    assert bad.error.kind == "constraint_violation"


@pytest.mark.parametrize("name", ["_aw_log", "sqlite_x"])
def test_reserved_table_names_are_refused(notes_spec, name):
    raw = json.loads(notes_spec.to_json())
    raw["tables"][0]["name"] = name
    with pytest.raises(SpecError, match="reserved"):
        EnvSpec.from_dict(raw)


def test_a_fresh_runtime_reproduces_the_state(spec):
    def run(rt):
        ep = rt.open(spec, seed=11)
        ep.step("churn")
        ep.step("add_note", {"user_id": 1, "body": "q"})
        return ep.state_hash(), ep.diff().model_dump()

    with EnvRuntime() as r1, EnvRuntime(workers=2) as r2:
        assert run(r1) == run(r2)


@pytest.mark.parametrize("sandbox", [False, True])
def test_worker_connections_see_resets_and_other_writers(spec, sandbox):
    """Unsandboxed workers keep one connection per episode; a reset (done by the caller) and
    a second worker's writes must be visible to it at its next call."""
    with EnvRuntime(workers=2, sandbox=sandbox) as rt:
        ep = rt.open(spec)
        for round_ in range(3):
            assert ep.step("add_note", {"user_id": 1, "body": f"r{round_}"}).ok
            assert len(ep.step("list_notes", {"user_id": 1}).result) == 2
            ep.reset()
            assert len(ep.step("list_notes", {"user_id": 1}).result) == 1
        ep.close()


def test_dump_and_a_state_hash_that_ignores_generated_ids(runtime, spec):
    a, b = runtime.open(spec, seed=1), runtime.open(spec, seed=2)
    for ep in (a, b):
        assert ep.step("add_note", {"user_id": 1, "body": "same"}).ok
    dump = a.dump()
    assert list(dump) == ["users", "notes"] and [n["id"] for n in dump["notes"]] == [1, 2]
    assert dump["users"][0]["prefs"] == {"ratio": 2.0, "tags": ["a"], "none": None}
    assert a.state_hash() != b.state_hash()  # the generated note refs differ by seed
    assert a.state_hash(ignore={"notes": ["ref"]}) == b.state_hash(ignore={"notes": ["ref"]})
    assert "ref" not in a.dump(ignore={"notes": ["ref"]})["notes"][0]


def test_a_state_hash_read_partly_from_the_template_is_the_whole_read(runtime, spec):
    """An episode's hash takes the tables its undo log does not name from the template's
    cached bytes: it equals the hash of reading every table, before and after writes, with
    columns ignored, and after a reset."""
    ep = runtime.open(spec, seed=1)

    def both(**kw):
        return ep.state_hash(**kw), state_hash(spec, ep.path, kw.get("ignore"))

    start = both()
    assert start[0] == start[1]
    assert ep.step("add_note", {"user_id": 1, "body": "x"}).ok
    after = both()
    assert after[0] == after[1] != start[0]
    ignoring = both(ignore={"notes": ["ref"], "users": ["name"]})
    assert ignoring[0] == ignoring[1]
    assert ep.step("rename_user", {"user_id": 1, "name": "Renamed"}).ok
    assert both()[0] == both()[1]
    ep.reset()
    assert both() == start


def test_plain_text_results_stay_text(runtime, spec):
    obs = runtime.open(spec).step("read_sql", {"q": "SELECT 1 AS one"})
    assert obs.to_text() == '[{"one": 1}]'
    raw = json.loads(spec.to_json())
    raw["tools"].append(_tool("whoami", "return 'U-17'", mutates=False))
    text = runtime.open(EnvSpec.from_dict(raw)).step("whoami")
    assert text.result == "U-17" and text.to_text() == "U-17"


def test_plain_text_reaches_mcp_clients_unquoted(runtime, spec):
    import anyio

    from agent_world.envs.mcp_export import EnvironmentServer

    raw = json.loads(spec.to_json())
    raw["tools"].append(_tool("whoami", "return 'U-17'", mutates=False))
    server = EnvironmentServer(EnvSpec.from_dict(raw), runtime=runtime)
    try:
        [content], structured = anyio.run(server.call_tool, "whoami", {})
        assert content.text == "U-17" and structured == {"result": "U-17"}
        [content], structured = anyio.run(server.call_tool, "lookup", {"id": 2})
        assert json.loads(content.text)["name"] == "Bo" == structured["result"]["name"]
    finally:
        server.close()


def test_an_audit_log_records_every_change_and_a_reset_takes_its_entries_back(runtime,
                                                                             notes_spec):
    """A `<entity>_history` table (an audit log) gets one entry per changed field of its
    records from the engine, whatever tool made the change; a reset removes them with the
    change; a tool test that does not list them expects exactly those entries."""
    from agent_world.envs.spec import RowChange
    from agent_world.envs.testing import check_changes

    raw = json.loads(notes_spec.to_json())
    users = raw["tables"][0]
    users["columns"] += [{"name": "active", "type": "boolean"},
                         {"name": "updated_at", "type": "datetime"}]
    raw["tables"].append({"name": "user_history", "columns": [
        {"name": "id", "type": "integer", "primary_key": True, "nullable": False},
        {"name": "user_id", "type": "integer", "nullable": False, "foreign_key": "users.id"},
        {"name": "action", "type": "text", "nullable": False},
        {"name": "field_name", "type": "text"}, {"name": "old_value", "type": "text"},
        {"name": "new_value", "type": "text"},
        {"name": "changed_at", "type": "datetime", "nullable": False}]})
    for row in raw["rows"]["users"]:
        row.update(active=True, updated_at="2026-01-01T00:00:00")
    raw["tools"].append(TOOLS[0])  # sql
    raw["tools"].append(_tool("edit_user", "ctx.execute('UPDATE users SET name = ?, active = ?, "
                                           "updated_at = ? WHERE id = 1', (kw['name'], False, "
                                           "ctx.now()))\nreturn None"))
    spec = EnvSpec.from_dict(raw)
    ep = runtime.open(spec)
    pristine = ep.state_hash()
    assert ep.step("edit_user", {"name": "Ann Lee"}).ok
    logged = ep.diff().tables["user_history"].inserted
    assert sorted((h["field_name"], h["old_value"], h["new_value"], h["action"])
                  for h in logged) == [("active", "True", "False", "updated"),
                                       ("name", "Ann", "Ann Lee", "updated")]
    assert {h["changed_at"] for h in logged} == {"2026-02-01T08:01:00"}  # the write's time
    update = RowChange(table="users", op="update", key={"id": 1}, values={"name": "Ann Lee"})
    assert check_changes(ep, [update]) == (True, "ok")  # the log's entries follow from it
    assert ep.step("sql", {"q": "DELETE FROM user_history WHERE field_name = 'active'"}).ok
    ok, why = check_changes(ep, [update])
    assert not ok and "1 entries written" in why and "'active'" in why
    ep.reset()
    assert ep.state_hash() == pristine and ep.diff().empty  # no entry for putting it back


def test_an_observation_is_compact_json_that_reads_back_as_the_result():
    """A listing is read back in every later turn: no spaces after separators (an eighth of
    its tokens), and nothing else lost."""
    from agent_world.rollout.engine import observation_text
    from agent_world.tasks.model import Step as _Step

    rows = [{"id": 1, "title": "Über, the: novel", "due_on": None}, {"id": 2, "title": "B"}]
    text = observation_text(_Step(ok=True, result=rows))
    assert json.loads(text) == rows and ', "' not in text and '": ' not in text
    assert "Über, the: novel" in text  # values keep their own spaces and characters
