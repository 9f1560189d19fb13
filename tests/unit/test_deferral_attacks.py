"""Attacks on deferred writes and answers sent ahead (agent_world.envs.forecast, host_channel):
whatever a tool does, sandboxed (deferral and forecasts on) must see and leave exactly what
unsandboxed (neither) does, call by call, and a failed call must leave the state as before."""

from __future__ import annotations

import logging

import pytest

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.pool import WorkerPool
from tests.integration.escape_attempts import attacker_spec

NOTE = "INSERT INTO notes (ref, user_id, body) VALUES (?, ?, ?)"
# an UPDATE that is instant while no note says 'slow', and runs for ever once one does
SLOWABLE = ("UPDATE users SET name = name WHERE id = (WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL "
            "SELECT x + 1 FROM r WHERE x < (SELECT count(*) FROM notes WHERE body = 'slow') "
            "* 1000000000) SELECT min(x) FROM r)")
SLOW = ("UPDATE users SET name = (WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
        "FROM r) SELECT count(*) FROM r) WHERE id = 1")
GRAB = ("import gc\n"
        "ch = next(o for o in gc.get_objects() if type(o).__name__ == 'HostChannel')\n")

# (tool, arguments): "run" executes its code as a write tool's body. Consecutive calls of "run"
# teach the forecast the leading statements of the one before, run ahead for the next.
GROUPS = {
    "or_rollback": [
    # OR ROLLBACK behind a comment: learned here, and must never run ahead (it would end the
    # next call's transaction when it fires) nor be deferred
    ("run", "ctx.execute(\"INSERT OR/**/ROLLBACK INTO users (id, name) VALUES (50, 'x')\")\n"
            "result = 'inserted'"),
    ("run", "result = ctx.one('SELECT name FROM users WHERE id = 1')['name']"),
    ("run", "import sqlite3\ntry:\n"
            "    ctx.execute(\"INSERT OR -- a comment\\n ROLLBACK INTO users (id, name) "
            "VALUES (50, 'y')\")\n"
            "except sqlite3.IntegrityError as e:\n    result = str(e)"),
],
    "rowid": [
    # an insert run ahead and undone must leave no trace in last_insert_rowid() nor in the
    # lastrowid of the tool's UPDATE
    ("run", f"ctx.execute({NOTE!r}, (None, 1, 'a'))\nresult = 'x'"),
    ("run", "c = ctx.execute(\"UPDATE users SET name = 'q' WHERE id = 1\")\n"
            "result = [c.lastrowid, ctx.db.scalar('SELECT last_insert_rowid()')]"),
],
    "late_cursor": [
    # a cursor read after the call's later writes shows the rows as of its statement
    ("run", "c = ctx.execute('SELECT id, name FROM users ORDER BY id')\n"
            "d = ctx.execute('SELECT id, name FROM users')\n"
            "ctx.execute(\"UPDATE users SET name = 'zz'\")\n"
            "result = [[tuple(r) for r in c], d.fetchone()[1], [tuple(r) for r in d]]"),
],
    "own_savepoints": [
    # savepoint-like patterns the tool writes itself
    ("run", "ctx.execute(\"UPDATE users SET name = 'sp'\")\nctx.execute('SAVEPOINT mine')\n"
            "result = 1"),
    ("run", "import sqlite3\nctx.execute(\"UPDATE users SET name = 'sp2' WHERE id = 2\")\n"
            "try:\n    ctx.execute('RELEASE mine')\nexcept sqlite3.DatabaseError as e:\n"
            "    result = 'refused'\nctx.execute(\"UPDATE users SET role = 'member'\")"),
],
    "executemany": [
    # executemany after deferred writes, one of its rows failing; caught, then written around
    ("run", "import sqlite3\n"
            f"ctx.execute({NOTE!r}, ('M0', 1, 'm'))\n"
            "try:\n"
            f"    ctx.db.executemany({NOTE!r}, [('M1', 1, 'm'), ('M2', 999, 'm')])\n"
            "except sqlite3.IntegrityError as e:\n"
            "    result = ['caught', str(e)]\n"
            f"    ctx.execute({NOTE!r}, ('M3', 2, 'm'))"),
],
    "helpers_loops": [
    # recursion through a helper, writes in a loop whose count depends on the data, rowcount
    # read on one branch only, lastrowid feeding the next statement, an error in a finally
    ("run", "def walk(n):\n"
            "    if n == 0:\n        return 0\n"
            f"    cur = ctx.execute({NOTE!r}, ('W%d' % n, 1 + n % 2, 'w'))\n"
            "    if n % 3 == 0:\n        cur.rowcount\n"
            "    ctx.execute('UPDATE notes SET body = ? WHERE id = ?', ('w%d' % cur.lastrowid,"
            " cur.lastrowid))\n"
            "    return 1 + walk(n - 1)\n"
            "n = ctx.db.scalar('SELECT count(*) FROM notes')\n"
            "result = walk(n + 2)"),
    ("run", "import sqlite3\ntry:\n"
            f"    ctx.execute({NOTE!r}, ('W1', 1, 'dup'))\n"
            "finally:\n"
            "    ctx.execute(\"UPDATE users SET name = 'fin' WHERE id = 1\")"),
    ("run", "import sqlite3\nout = []\n"
            "for ref in ('A1', 'W2', 'A2'):\n"
            "    try:\n"
            f"        ctx.execute({NOTE!r}, (ref, 1, 'a'))\n"
            "        out.append(ref)\n"
            "    except sqlite3.IntegrityError:\n"
            "        out.append('dup ' + ref)\n"
            "        ctx.execute(\"UPDATE users SET name = ? WHERE id = 2\", (ref,))\n"
            "result = [out, ctx.new_id('Q'), ctx.now(), ctx.rng.random()]"),
],
    "rerun_signal": [
    # a tool raising the engine's own rerun signal is a tool fault, not a second run
    ("run", "from agent_world.envs.host_channel import Rerun\n"
            f"ctx.execute({NOTE!r}, ('R1', 1, 'r'))\nraise Rerun()"),
],
    "write_timeout": [
    # a write past the deadline is a timeout (SQLite ends the transaction of an
    # interrupted write: not an OR ROLLBACK), deferred or not
    ("run", f"ctx.execute({SLOW!r})\nresult = 'x'"),
    ("run", f"ctx.execute({SLOW!r}).rowcount\nresult = 'x'"),
    ("run", "result = [ctx.query('SELECT * FROM users ORDER BY id'), ctx.new_id('Q')]"),
    ],
}

# what unsandboxed calls see (the sandboxed ones must see the same), by group
EXPECTED = {
    "or_rollback": ["inserted", "Ann", "Error (permission_denied)"],
    # as the connection left it (the engine's first counter row), not the rowid of an insert
    # run ahead and undone
    "rowid": ["x", "[1, 1]"],
    "late_cursor": ['[[[1, "Ann"], [2, "Bo"]], "Ann", [[2, "Bo"]]]'],
    "own_savepoints": ["Error (permission_denied)", "refused"],
    "executemany": ['["caught", "FOREIGN KEY constraint failed"]'],
    "helpers_loops": ["3", "Error (constraint_violation)", '[["A1", "dup W2", "A2"], "Q'],
    "rerun_signal": ["Error (tool_exception): Rerun"],
    "write_timeout": ["Error (timeout)", "Error (timeout)", '[[{"id": 1, "name": "Ann"'],
}


def _observe(calls: list[tuple[str, str]], sandbox: bool) -> list[tuple[str, ...]]:
    with EnvRuntime(workers=1, sandbox=sandbox, tool_timeout_s=1.0) as rt:
        ep = rt.open(attacker_spec(), seed=4)
        seen = []
        for tool, code in calls:
            before = ep.state_hash()
            obs = ep.step(tool, {"code": code})
            text = obs.to_text()
            if not obs.ok:
                assert ep.state_hash() == before, (code, text)  # a failed call left nothing
            seen.append((text, ep.state_hash(), str(ep.diff().counts()), str(ep.dump())))
        return seen


@pytest.mark.parametrize("group", list(GROUPS))
def test_sandboxed_calls_see_and_leave_what_unsandboxed_ones_do(group, caplog):
    caplog.set_level(logging.ERROR)  # the unsandboxed runtime warns
    calls = GROUPS[group]
    plain = _observe(calls, False)
    deferred = _observe(calls, True)
    for (_, code), a, b in zip(calls, plain, deferred, strict=True):
        assert a == b, f"{code}\nunsandboxed: {a}\nsandboxed:   {b}"
    for (text, *_), expected in zip(plain, EXPECTED[group], strict=True):
        assert text.startswith(expected), (text, expected)


def test_a_slow_write_run_ahead_costs_the_call_nothing(caplog):
    """A write learned while it was instant, run ahead once it is slow: the call must not lose
    its time (nor its transaction: an interrupted write ends SQLite's) to a statement the tool
    may not send; the forecast drops it."""
    caplog.set_level(logging.ERROR)
    seen = []
    for sandbox in (False, True):
        with EnvRuntime(workers=1, sandbox=sandbox, tool_timeout_s=1.0) as rt:
            spec = attacker_spec()
            ep = rt.open(spec, seed=1)
            assert ep.step("run", {"code": f"ctx.execute({SLOWABLE!r})\nresult = 1"}).ok
            assert ep.step("add_note", {"user_id": 1, "body": "slow"}).ok
            before = ep.state_hash()
            if sandbox:  # the next call of "run" begins by running it ahead
                plan = rt._forecasts[(rt.fingerprint(spec), "run")].plan
                assert [sql for sql, _ in plan] == [SLOWABLE]
            obs = ep.step("run", {"code": "result = ctx.one('SELECT name FROM users "
                                          "WHERE id = 2')['name']"})
            seen.append((obs.to_text(), ep.state_hash() == before))
    assert seen == [("Bo", True), ("Bo", True)]


def _counting_calls(monkeypatch) -> list[str]:
    runs: list[str] = []
    call = WorkerPool.call

    def counted(self, message, timeout_s, serve=None):
        runs.append(message.get("tool"))
        return call(self, message, timeout_s, serve)

    monkeypatch.setattr(WorkerPool, "call", counted)
    return runs


@pytest.mark.parametrize("code, kind", [
    # the deferred write fails; the run again (strict) catches it and spins past the deadline
    ("import sqlite3\ntry:\n"
     "    ctx.execute(\"INSERT INTO notes (ref, user_id, body) VALUES ('T', 999, 'x')\")\n"
     "    result = 'fine'\nexcept sqlite3.IntegrityError:\n    while True:\n        pass",
     "timeout"),
    # behaves differently on every run (randomness and time the context does not offer)
    ("import os, time\n"
     "ctx.execute(\"INSERT INTO notes (ref, user_id, body) VALUES ('U', 999, 'x')\")\n"
     "if os.urandom(1)[0] % 2 or time.time_ns() % 2:\n    raise ToolError('odd')\n"
     "result = 'even'", "constraint_violation"),
    # fills the queue past any limit through the channel itself
    (GRAB + "ch.queue.extend([(\"UPDATE users SET name = 'q'\", [], None)] * 20000)\n"
     "result = ctx.db.scalar('SELECT 1')", "worker_error"),
    # says the run is void and asks for another
    (GRAB + "from agent_world.envs.host_channel import Rerun\n"
     "ctx.execute(\"UPDATE users SET name = 'v'\")\nch.void = True\nraise Rerun()",
     "worker_error"),
    # queues writes in the strict run, after the first one was voided
    (GRAB + "import sqlite3\ntry:\n"
     "    ctx.execute(\"INSERT INTO notes (ref, user_id, body) VALUES ('V', 999, 'x')\")\n"
     "except sqlite3.IntegrityError:\n    pass\n"
     "ch.defer = True\nctx.execute(\"UPDATE users SET name = 'late'\")\n"
     "result = ctx.db.scalar('SELECT 1')", "worker_error"),
])
def test_hostile_or_erratic_tools_run_at_most_twice_and_leave_nothing(monkeypatch, code,
                                                                      kind):
    with EnvRuntime(workers=1, sandbox=True, tool_timeout_s=1.0) as rt:
        ep = rt.open(attacker_spec(), seed=1)
        before = ep.state_hash()
        runs = _counting_calls(monkeypatch)
        obs = ep.step("run", {"code": code})
        assert not obs.ok and obs.error.kind == kind, obs
        assert len(runs) <= 2 and ep.state_hash() == before
        assert ep.step("run", {"code": "result = ctx.db.scalar('SELECT count(*) FROM notes')"}
                       ).result == 1  # the episode goes on


@pytest.mark.parametrize("sandbox", [False, True])
def test_kill_9_with_writes_queued_and_sent_leaves_state_unchanged(sandbox, caplog):
    caplog.set_level(logging.ERROR)
    code = ("import os\n"
            "for i in range(5):\n"
            f"    ctx.execute({NOTE!r}, ('K%d' % i, 1, 'k'))\n"
            "ctx.db.scalar('SELECT count(*) FROM notes')\n"  # the first five reach the caller
            "ctx.execute(\"UPDATE users SET name = 'k'\")\n"  # this one stays queued
            "os.kill(os.getpid(), 9)")
    with EnvRuntime(workers=1, sandbox=sandbox, tool_timeout_s=2.0) as rt:
        ep = rt.open(attacker_spec(), seed=1)
        before = ep.state_hash()
        obs = ep.step("run", {"code": code})
        assert obs.error is not None and obs.error.kind == "worker_crash"
        assert ep.state_hash() == before
        assert ep.step("run", {"code": f"ctx.execute({NOTE!r}, ('K9', 1, 'k'))\n"
                                       "result = ctx.db.scalar('SELECT count(*) FROM notes')"}
                       ).result == 2


def test_a_deferred_cursor_kept_past_its_call_reads_the_real_rowcount(caplog):
    """Tool code that keeps a write's cursor (a module global) and reads it in a later call:
    the write is answered before the call ends, not left queued with a rowcount of -1."""
    caplog.set_level(logging.ERROR)
    calls = [("run", "import builtins\n"
                     "builtins._kept = ctx.execute(\"UPDATE users SET name = 'g'\")\n"
                     f"builtins._kept_too = [ctx.execute({NOTE!r}, ('G', 1, 'g'))]\n"
                     "ctx.execute(\"UPDATE users SET role = 'member'\")\n"
                     "result = 1"),
             ("run", "import builtins\n"
                     "result = [builtins._kept.rowcount, builtins._kept_too[0].lastrowid]")]
    plain, deferred = _observe(calls, False), _observe(calls, True)
    assert plain == deferred and plain[1][0] == "[2, 2]"
