"""A sandboxed runtime runs each tool statement on the episode connection this process holds
(agent_world.envs.hostdb): tool code must see exactly what it sees when the worker holds the
database itself (unsandboxed), down to cursors, errors, ids and the resulting state."""

from __future__ import annotations

import json
import logging

import pytest

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.hostdb import MAX_ANSWER_BYTES
from agent_world.sandbox.isolation import unsafe_requested
from tests.integration.escape_attempts import attacker_spec

SNIPPETS = [
    # cursor surface: rowcount, lastrowid, description, fetchone/fetchmany/iteration
    ("write", "cur = ctx.execute(\"INSERT INTO notes (ref, user_id, body) VALUES ('X', 1, 'b')\")\n"
              "result = [cur.rowcount, cur.lastrowid, cur.description]"),
    ("read", "cur = ctx.db.execute('SELECT id, name FROM users ORDER BY id')\n"
             "first = cur.fetchone()\nrest = [dict(r) for r in cur]\n"
             "result = [dict(first), rest, cur.fetchone(), [d[0] for d in cur.description]]"),
    ("read", "cur = ctx.db.execute('SELECT id FROM users ORDER BY id')\n"
             "result = [cur.fetchmany(1), cur.fetchmany(5), cur.fetchall()]"),
    ("read", "a, b = ctx.one('SELECT id, name FROM users WHERE id = 1')\n"
             "row = ctx.one('SELECT id, name FROM users WHERE id = 2')\n"
             "result = [a, b, row[0], row['name'], ctx.db.scalar('SELECT count(*) FROM notes')]"),
    ("read", "result = ctx.query('SELECT id FROM users WHERE name = :n OR id = :i', "
             "{'n': 'nobody', 'i': 2})"),
    # parameters: JSON values bind as text, bytes as blobs, dates as ISO text
    ("read", "import datetime\n"
             "result = ctx.one('SELECT ? AS j, ? AS l, typeof(?) AS b, length(?) AS n, ? AS d', "
             "({'a': [1, 2.0]}, [1, None], b'\\x00\\xff', b'abc', datetime.date(2026, 1, 2)))"),
    ("write", "ctx.db.executemany('INSERT INTO users (name) VALUES (?)', [('p',), ('q',)])\n"
              "result = ctx.query('SELECT name, role FROM users ORDER BY id')"),
    # errors the tool can catch, and the kinds the engine reports
    ("write", "import sqlite3\ntry:\n    ctx.execute('INSERT INTO notes (ref, user_id, body) "
              "VALUES (?, 999, ?)', ('Z', 'x'))\nexcept sqlite3.IntegrityError as e:\n"
              "    result = 'caught ' + type(e).__name__"),
    ("write", "ctx.execute(\"INSERT INTO notes (ref, user_id, body) VALUES ('Y', 999, 'x')\")"),
    ("read", "ctx.query('SELECT nope FROM users')"),
    ("read", "ctx.query('SELECT u.id, n.id FROM users u JOIN notes n ON n.user_id = u.id')"),
    ("read", "ctx.query('SELECT 1; SELECT 2')"),
    ("read", "ctx.query('SELECT * FROM _aw_counters')"),
    ("read", "ctx.execute(\"UPDATE users SET name = 'r'\")"),
    ("write", "ctx.execute('DROP TABLE notes')"),
    ("write", "ctx.execute('COMMIT')"),
    ("read", "ctx.query('SELECT ?', (object(),))"),
    # ids and the clock advance with committed writes only
    ("write", "result = [ctx.new_id('N'), ctx.now()]\n"
              "ctx.execute(\"UPDATE users SET role = 'admin' WHERE id = 2\")"),
    ("write", "result = [ctx.new_id('N'), ctx.new_id('N'), ctx.now()]\nraise ToolError('no')"),
    ("write", "result = [ctx.new_id('N'), ctx.now()]\n"
              "ctx.execute(\"UPDATE users SET role = 'member' WHERE id = 2\")"),
    # counters of several prefixes committed at once (one statement up to four, then a loop)
    ("write", "result = [ctx.new_id(p) for p in 'ABC']\n"
              "ctx.execute(\"UPDATE users SET role = 'admin' WHERE id = 2\")"),
    ("write", "result = [ctx.new_id(p) for p in 'ABCDEF' for _ in range(2)]\n"
              "ctx.execute(\"UPDATE users SET role = 'member' WHERE id = 2\")"),
    ("read", "result = [ctx.new_id(p) for p in 'ABCDEFN'] + [ctx.now()]"),
    # values JSON has no room for, on the way in and on the way out
    ("read", "row = ctx.one('SELECT ? AS a, ? AS b, typeof(?) AS t, ? AS n', "
             "(float('inf'), float('-inf'), float('nan'), -2**63))\n"
             "result = [repr(row['a']), repr(row['b']), row['t'], row['n']]"),
    ("read", "ctx.one('SELECT ?', (2**63,))"),
    ("read", "result = [2**70, -2**80, 1e300, 0.1]"),
    ("read", "result = 'half a pair: \\ud800'"),
]


def _observe(sandbox: bool) -> tuple[list[str], str]:
    spec = attacker_spec()
    with EnvRuntime(workers=1, sandbox=sandbox, tool_timeout_s=5.0) as rt:
        ep = rt.open(spec, seed=4)
        seen = []
        for mode, code in SNIPPETS:
            obs = ep.step("run" if mode == "write" else "run_read", {"code": code})
            seen.append(obs.to_text() if obs.ok else f"{obs.error.kind}: {obs.error.message}")
        return seen, ep.state_hash()


def test_tool_code_sees_the_same_database_sandboxed_or_not(caplog):
    caplog.set_level(logging.ERROR)  # the unsandboxed runtime warns
    unconfined, confined = _observe(False), _observe(True)
    for (mode, code), a, b in zip(SNIPPETS, unconfined[0], confined[0], strict=True):
        assert a == b, f"{mode} call\n{code}\nunsandboxed: {a}\nsandboxed:   {b}"
    assert unconfined[1] == confined[1]
    # and the snippets did what they say (not two identical failures)
    assert confined[0][0].startswith("[1, ") and confined[0][7] == "caught IntegrityError"
    assert confined[0][8].startswith("constraint_violation")
    assert confined[0][13].startswith("permission_denied") and "read-only" in confined[0][13]
    ids = [json.loads(confined[0][i]) for i in (20, 21, 22)]
    assert len({*ids[0], *ids[1], *ids[2][:-1]}) == 3 + 12 + 7  # none issued twice
    assert ids[2][-1] > json.loads(confined[0][19])[-1]  # the clock moved with the writes
    assert confined[0][-4] == '["inf", "-inf", "null", -9223372036854775808]'
    assert confined[0][-3].startswith("tool_exception: OverflowError")
    assert confined[0][-2] == f"[{2**70}, {-2**80}, 1e+300, 0.1]"
    assert confined[0][-1].startswith("tool_exception: result is not JSON")


def test_large_answers_travel_in_chunks_and_oversized_ones_fail_cleanly():
    spec = attacker_spec()
    with EnvRuntime(workers=1, sandbox=True) as rt:
        ep = rt.open(spec, seed=1)
        many = ep.step("run_read", {"code": (
            "rows = ctx.query('WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r "
            "WHERE x < 5000) SELECT x, printf(\"%0100d\", x) AS pad FROM r')\n"
            "result = [len(rows), rows[0]['x'], rows[-1][0]]")})
        assert many.ok and many.result == [5000, 1, 5000]
        before = ep.state_hash()
        huge = ep.step("run", {"code": (
            "ctx.execute(\"UPDATE users SET name = 'big'\")\n"
            f"ctx.query('WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r "
            f"WHERE x < {MAX_ANSWER_BYTES // 1000 + 10}) SELECT printf(\"%01000d\", x) FROM r')")})
        assert not huge.ok and huge.error.kind == "tool_exception"
        assert "exceed" in huge.error.message
        assert ep.state_hash() == before  # the call rolled back
        assert ep.step("list_notes", {"user_id": 1}).ok  # and the worker goes on


@pytest.mark.skipif(unsafe_requested(), reason="AGENT_WORLD_UNSAFE_NO_SANDBOX=1: no isolation")
def test_a_sandboxed_worker_holds_no_episode_file():
    spec = attacker_spec()
    with EnvRuntime(workers=1, sandbox=True) as rt:
        ep = rt.open(spec, seed=1)
        obs = ep.step("run_read", {"code": (
            "import os, re\nfound = []\nfor top in ('/sandbox', '/tmp', '/readonly', '/dev/shm'):\n"
            "    for root, dirs, files in os.walk(top):\n"
            # episode and template files (ep000001.sqlite, <fingerprint>.sqlite), not modules
            # of a checkout or virtualenv under /tmp (aiosqlite.py, sqlite_session.py, ...)
            "        found += [f for f in files if re.search(r'\\.sqlite(-journal|-wal)?$', f)\n"
            "                  or re.match(r'ep\\d', f)]\n"
            "fds = [os.readlink(f'/proc/self/fd/{fd}') for fd in os.listdir('/proc/self/fd')\n"
            "       if os.path.exists(f'/proc/self/fd/{fd}')]\n"
            "result = [found, [f for f in fds if '.sqlite' in f]]")})
        assert obs.ok and obs.result == [[], []]


def test_fast_argument_check_never_accepts_what_the_validator_refuses():
    """The fast path (flat scalar schemas) may only say "valid" when the full validator
    agrees; it must say so for ordinary valid calls (else it is never used)."""
    import itertools
    import random

    from agent_world.envs.arguments import ArgumentValidator, fast_accept

    schemas = [
        {"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}},
         "required": ["id"], "additionalProperties": False},
        {"type": "object", "properties": {
            "q": {"type": "string", "minLength": 2, "maxLength": 5, "description": "query"},
            "n": {"type": "number", "exclusiveMaximum": 10},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "flag": {"type": ["boolean", "null"]}}, "required": ["q"]},
        {"type": "object", "properties": {"x": {"type": "integer", "enum": [1, 2, 3]}},
         "additionalProperties": False},
        {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Za-z]{2}$"},
                                          "n": {"type": "integer"}}, "required": ["code"]},
    ]
    values = [None, True, False, 0, 1, 2, 3, -5, 9.5, 10, 10.0, 1.0, float("nan"), "", "a", "ab",
              "abcde", "abcdef", "é" * 3, "Zq", "Z1", [], {}, [1], {"a": 1}]
    rng = random.Random(0)
    for schema in schemas:
        fast, full = fast_accept(schema), ArgumentValidator(schema)
        assert fast is not None
        names = [*schema["properties"], "other"]
        accepted = 0
        for size in range(0, 4):
            for keys in itertools.combinations(names, size):
                for _ in range(60):
                    args = {k: rng.choice(values) for k in keys}
                    if fast(args):
                        accepted += 1
                        assert full.is_valid(args), (schema, args)
        assert accepted >= 5
    assert fast_accept(schemas[0])({"id": 7}) and not fast_accept(schemas[0])({"id": 0})
    assert fast_accept(schemas[3])({"code": "GB"}) and not fast_accept(schemas[3])({"code": "G"})
    # anything richer goes to the full validator
    assert fast_accept({"type": "object", "properties": {"s": {"type": "string",
                                                               "format": "date"}}}) is None
    assert fast_accept({"type": "object", "properties": {"l": {"type": "array"}}}) is None


STALL_CHANNEL = """
import gc, json, signal, time
signal.signal(signal.SIGALRM, signal.SIG_IGN)
ch = next(o for o in gc.get_objects() if type(o).__name__ == 'HostChannel')
{body}
time.sleep(30)
"""
# a statement whose answer (~2 MB) cannot fit the pipe, sent and never read
BIG_UNREAD = """frame = json.dumps({'op': 'sql', 'id': ch.call_id, 'many': False, 'params': [],
    'sql': "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 20000) "
           "SELECT printf('%0100d', x) FROM r"}).encode()
ch.out.write(len(frame).to_bytes(4, 'big') + frame)
ch.out.flush()"""
# half a frame: a header announcing 1,000 bytes, then 10
HALF_FRAME = """ch.out.write((1000).to_bytes(4, 'big') + b'{"op": "sq')
ch.out.flush()"""


@pytest.mark.parametrize("body", [BIG_UNREAD, HALF_FRAME], ids=["answer-never-read",
                                                                 "half-a-frame"])
def test_tool_code_cannot_hang_the_caller_on_the_channel(body):
    """Every read and write on the worker's pipes runs under the call's deadline."""
    import time

    with EnvRuntime(workers=1, sandbox=True, tool_timeout_s=1.0) as rt:
        ep = rt.open(attacker_spec(), seed=1)
        before = ep.state_hash()
        t = time.monotonic()
        obs = ep.step("run", {"code": STALL_CHANNEL.format(body=body)})
        took = time.monotonic() - t
        assert not obs.ok and obs.error.kind in ("timeout", "worker_crash"), obs
        assert took < 15, f"the step took {took:.1f}s"
        assert ep.state_hash() == before
        assert ep.step("list_notes", {"user_id": 1}).ok  # a fresh worker serves the next call


def test_works_with_more_than_1024_open_files(notes_spec):
    """A thousand open episodes hold a thousand files: pipes opened after them have numbers
    past select()'s limit, and the engine and the code sandbox must still wait on them."""
    import os
    import resource

    from agent_world.sandbox import LocalSandbox

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"open-file hard limit {hard} < 2048")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2048), hard))
    filler = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with EnvRuntime(workers=1, sandbox=True) as rt:
            ep = rt.open(notes_spec, seed=1)
            assert ep.step("add_note", {"user_id": 1, "body": "late"}).ok
            assert ep.step("list_notes", {"user_id": 1}).ok
        with LocalSandbox(timeout=10) as sbx:
            assert sbx.run_code("1 + 1").value == 2
    finally:
        for fd in filler:
            os.close(fd)


def test_a_timeout_during_a_statement_exchange_leaves_the_channel_clean():
    """A tool that does nothing but statements is nearly always mid-exchange when its time runs
    out: the timeout is raised once the answer is read, so the worker goes on (no restart) and
    the next call gets its own answers."""
    with EnvRuntime(workers=1, sandbox=True, tool_timeout_s=0.3) as rt:
        ep = rt.open(attacker_spec(), seed=1)
        for _ in range(3):
            obs = ep.step("run_read", {"code": "while True:\n    ctx.one('SELECT 1 AS x')"})
            assert not obs.ok and obs.error.kind == "timeout", obs
            follow = ep.step("run_read", {"code": "result = ctx.one('SELECT 7 AS x')['x']"})
            assert follow.ok and follow.result == 7, follow
        assert rt.pool.restarts == 0


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
def test_a_worker_slow_to_start_is_not_killed_by_a_short_tool_timeout(sandbox):
    """Starting the interpreter is not the tool's time: a worker that takes a second to come
    up serves calls under a 0.3 s tool timeout without being restarted."""
    def slow(cmd):
        return ["sh", "-c", 'sleep 1; exec "$@"', "sh", *cmd]

    with EnvRuntime(workers=1, sandbox=sandbox, tool_timeout_s=0.3, launcher=slow) as rt:
        ep = rt.open(attacker_spec(), seed=1)
        obs = ep.step("run_read", {"code": "result = ctx.one('SELECT 7 AS x')['x']"})
        assert obs.ok and obs.result == 7, obs
        assert rt.pool.restarts == 0


def test_an_opened_or_reset_episode_starts_from_empty_counters_without_reading_them(notes_spec):
    """A fresh copy of the template and an undone episode have committed nothing: the first
    call starts from empty id/clock counters (no statement to read them), and its ids and
    clock are those of a fresh episode."""
    with EnvRuntime() as rt:
        if not rt.sandboxed:
            pytest.skip("the episode connection lives in this process only when sandboxed")
        ep = rt.open(notes_spec, seed=3)
        assert ep._db is not None and ep._db._counters == {}
        first = ep.step("add_note", {"user_id": 1, "body": "a"}).result
        second = ep.step("add_note", {"user_id": 1, "body": "b"}).result
        assert first["ref"] != second["ref"] and first["created_at"] < second["created_at"]
        ep.reset()
        assert ep._db._counters == {}
        again = ep.step("add_note", {"user_id": 1, "body": "a"}).result
        assert (again["ref"], again["created_at"]) == (first["ref"], first["created_at"])


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
def test_the_episode_file_stays_readable_between_calls(notes_spec, caplog, sandbox):
    """Sandboxed, this process alone writes an episode's file: its connection keeps the page
    cache without checking the file at every call (exclusive mode) yet takes no file lock, so
    a connection opened between calls reads the committed state at once (a lock would make it
    wait). Unsandboxed, the worker writes the file too: the usual locking, checked per call."""
    import sqlite3

    caplog.set_level(logging.ERROR)  # the unsandboxed runtime warns
    with EnvRuntime(workers=1, sandbox=sandbox) as rt:
        ep = rt.open(notes_spec, seed=2)
        assert ep.step("add_note", {"user_id": 1, "body": "first"}).ok
        ep.reset()  # the undo log runs on the second (shared-cache) connection
        for body in ("one", "two"):
            assert ep.step("add_note", {"user_id": 1, "body": body}).ok
            outside = sqlite3.connect(ep.path, timeout=0)
            try:
                bodies = [r[0] for r in outside.execute("SELECT body FROM notes ORDER BY id")]
            finally:
                outside.close()
            assert body in bodies and "first" not in bodies
            assert ep.query("SELECT count(*) AS n FROM notes WHERE body = ?", (body,)) == [
                {"n": 1}]
        assert ep.diff().counts()["notes"]["inserted"] == 2
        assert ep._db is not None  # unsandboxed: the undo log's connection (reset above)
        mode = ep._db.conn.execute("PRAGMA locking_mode").fetchone()[0]
        assert mode == ("exclusive" if rt.sandboxed else "normal")
        ep.reset()
        assert ep.diff().empty


def test_statement_kinds_and_clocks_are_remembered_within_bounds():
    from agent_world.envs import forecast
    from agent_world.envs.tool_context import call_clock

    assert forecast._is_select("  select id FROM t") and forecast._is_select("SELECT 1")
    assert not forecast._is_select("UPDATE t SET a = 1")
    assert not forecast._is_select("WITH x AS (SELECT 1) DELETE FROM t")
    for i in range(forecast._MEMO_SIZE + 10):
        forecast._is_select(f"SELECT {i}")
        forecast._named("2026-01-15T09:00:00", i)
    assert len(forecast._SELECTS) <= forecast._MEMO_SIZE
    assert len(forecast._NAMED) <= forecast._MEMO_SIZE
    clock = call_clock("2026-01-15T09:00:00", 7)
    assert forecast._named("2026-01-15T09:00:00", 7) == {
        "now": clock.isoformat(timespec="seconds"), "today": clock.date().isoformat(),
        "clock": clock.isoformat(" ")}
