"""Deferred writes (agent_world.envs.host_channel): in a sandboxed runtime a write call's
writes whose results the tool has not looked at travel with its next read or its reply instead
of one round trip each. Tool code must not notice: a failing write is still raised at its own
line with its own kind, rowcount and lastrowid are still right, a tool that catches a
constraint error and goes on still does, and the state ends as it would unsandboxed."""

from __future__ import annotations

import json
import logging

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.host_channel import MAX_DEFERRED
from agent_world.envs.hostdb import EpisodeDB
from tests.integration.escape_attempts import attacker_spec

NOTE = "INSERT INTO notes (ref, user_id, body) VALUES (?, ?, ?)"

SNIPPETS = [
    # several writes nobody looks at, then a read that must see them
    f"ctx.execute({NOTE!r}, ('A', 1, 'a'))\n"
    "ctx.execute(\"UPDATE users SET role = 'admin' WHERE id = 1\")\n"
    f"ctx.execute({NOTE!r}, ('B', 2, 'b'))\n"
    "result = ctx.query('SELECT ref, user_id FROM notes ORDER BY id')",
    # rowcount and lastrowid read late, after later writes were queued behind them
    f"a = ctx.execute({NOTE!r}, ('C', 1, 'c'))\n"
    "b = ctx.execute(\"UPDATE users SET role = 'member'\")\n"
    f"c = ctx.execute({NOTE!r}, ('D', 2, 'd'))\n"
    "result = [c.lastrowid, a.lastrowid, b.rowcount, a.rowcount, c.fetchall(), "
    "b.description]",
    # a failing write among deferred ones: raised at its line, state as before
    f"ctx.execute({NOTE!r}, ('E', 1, 'e'))\n"
    f"ctx.execute({NOTE!r}, ('F', 999, 'f'))\n"
    "x = 1\n"
    "result = ctx.query('SELECT count(*) AS n FROM notes')",
    # an environment fault in a deferred write: the message names the same line
    "ctx.execute(\"UPDATE users SET name = 'x' WHERE id = 1\")\n"
    "ctx.execute('UPDATE no_such_table SET a = 1')\n"
    "result = 'not reached'",
    # a tool that catches the constraint error and goes on
    "import sqlite3\n"
    f"ctx.execute({NOTE!r}, ('G', 1, 'g'))\n"
    "try:\n"
    f"    ctx.execute({NOTE!r}, ('G2', 12345, 'dup'))\n"
    "    result = 'inserted'\n"
    "except sqlite3.IntegrityError as e:\n"
    "    result = 'caught ' + str(e)\n"
    "    ctx.execute(\"UPDATE users SET name = 'fallback' WHERE id = 2\")",
    # the failing write is the call's last statement: found with the reply
    f"ctx.execute({NOTE!r}, ('H', 1, 'h'))\n"
    "result = ctx.new_id('N')\n"
    f"ctx.execute({NOTE!r}, ('I', 777, 'i'))",
    # ... and with a ToolError after it: the write's error comes first, as unsandboxed
    f"ctx.execute({NOTE!r}, ('J', 777, 'j'))\n"
    "raise ToolError('never reached unsandboxed')",
    # a read tool's write stays refused at its line
    "ctx.execute(\"UPDATE users SET name = 'r'\")",
    # more writes than one queue holds, and ids and the clock after all of them
    "for i in range(2 * %d + 3):\n"
    f"    ctx.execute({NOTE!r}, ('K%%d' %% i, 1 + i %% 2, 'k'))\n"
    "result = [ctx.db.scalar('SELECT count(*) FROM notes'), ctx.new_id('N'), ctx.now()]"
    % MAX_DEFERRED,
    # what a write snippet leaves is what the next call sees
    "result = [ctx.query('SELECT id, name, role FROM users ORDER BY id'), ctx.now()]",
]
MODES = ["write"] * 7 + ["read", "write", "write"]


def _observe(sandbox: bool) -> tuple[list[str], list[str]]:
    with EnvRuntime(workers=1, sandbox=sandbox, tool_timeout_s=5.0) as rt:
        ep = rt.open(attacker_spec(), seed=4)
        seen, states = [], []
        for mode, code in zip(MODES, SNIPPETS, strict=True):
            obs = ep.step("run" if mode == "write" else "run_read", {"code": code})
            seen.append(obs.to_text() if obs.ok else f"{obs.error.kind}: {obs.error.message}")
            states.append(ep.state_hash())
        return seen, states


def test_deferred_writes_are_invisible_to_tool_code(caplog):
    caplog.set_level(logging.ERROR)  # the unsandboxed runtime warns
    plain, confined = _observe(False), _observe(True)
    for code, a, b in zip(SNIPPETS, plain[0], confined[0], strict=True):
        assert a == b, f"{code}\nunsandboxed: {a}\nsandboxed:   {b}"
    assert plain[1] == confined[1]
    seen, states = confined
    # and the snippets did what they say
    assert '"ref": "A"' in seen[0] and '"ref": "B"' in seen[0]
    last, first, updated, one, rows, desc = json.loads(seen[1])
    assert last == first + 1 and updated == 2 and one == 1 and rows == [] and desc is None
    assert seen[2].startswith("constraint_violation") and states[2] == states[1]
    # line 3 of the tool: the snippet's second line
    assert seen[3].startswith("tool_exception") and "line 3 of <tool run>" in seen[3]
    assert states[3] == states[1]
    assert seen[4].startswith("caught FOREIGN KEY") and states[4] != states[3]
    assert seen[5].startswith("constraint_violation") and states[5] == states[4]
    assert seen[6].startswith("constraint_violation") and states[6] == states[4]
    assert seen[7].startswith("permission_denied")
    assert json.loads(seen[8])[0] == len(json.loads(seen[0])) + 3 + 2 * MAX_DEFERRED + 3
    assert '"fallback"' in seen[9]


def _counting(monkeypatch) -> list[dict]:
    frames: list[dict] = []
    serve = EpisodeDB.serve

    def counted(self, frame):
        frames.append(frame)
        return serve(self, frame)

    monkeypatch.setattr(EpisodeDB, "serve", counted)
    return frames


def test_writes_nobody_looks_at_cost_no_round_trip(monkeypatch):
    frames = _counting(monkeypatch)
    with EnvRuntime(workers=1, sandbox=True) as rt:
        ep = rt.open(attacker_spec(), seed=1)
        code = (f"ctx.execute({NOTE!r}, ('A', 1, 'a'))\n"
                "ctx.execute(\"UPDATE users SET name = 'x' WHERE id = 2\")\n"
                f"ctx.execute({NOTE!r}, ('B', 2, 'b'))\n"
                "result = 'ok'")
        assert ep.step("run", {"code": code}).ok
        assert frames == []  # all three went with the reply
        assert [n["ref"] for n in ep.dump()["notes"]][-2:] == ["A", "B"]
        # a read after writes: one frame, the writes ahead of it
        ep.step("run", {"code": f"ctx.execute({NOTE!r}, ('C', 1, 'c'))\n"
                                "result = ctx.db.scalar('SELECT count(*) FROM notes')"})
        assert len(frames) == 1 and len(frames[0]["before"]) == 1
        # a rowcount read at once: the write is sent then, alone
        frames.clear()
        ep.step("run", {"code": "c = ctx.execute(\"UPDATE users SET name = 'y'\")\n"
                                "result = c.rowcount"})
        assert len(frames) == 1 and frames[0]["sql"] is None


def test_a_tool_whose_deferred_writes_keep_failing_stops_deferring():
    with EnvRuntime(workers=1, sandbox=True) as rt:
        spec = attacker_spec()
        ep = rt.open(spec, seed=1)
        code = ("import sqlite3\ntry:\n"
                f"    ctx.execute({NOTE!r}, ('Z', 999, 'z'))\n"
                "except sqlite3.IntegrityError:\n    result = 'dup'")
        for _ in range(40):
            obs = ep.step("run", {"code": code})
            assert obs.ok and obs.result == "dup"
        forecast = rt._forecasts[(rt.fingerprint(spec), "run")]
        assert forecast.reruns == forecast.deferred == 32 and not forecast.defer


def test_deferred_writes_from_hostile_code_stay_under_the_guard():
    """Tool code that fills the queue itself (reaching the channel through gc) with what a
    tool may not run: the caller checks each write again and runs it under the guard; a
    refused one voids the run and the call runs again without deferring."""
    grab = ("import gc\n"
            "ch = next(o for o in gc.get_objects() if type(o).__name__ == 'HostChannel')\n")
    with EnvRuntime(workers=1, sandbox=True) as rt:
        ep = rt.open(attacker_spec(), seed=1)
        before = ep.state_hash()
        for sql in ("DELETE FROM _aw_counters", "DROP TABLE notes", "COMMIT",
                    "SELECT * FROM users", "UPDATE users SET role = 'x' RETURNING id"):
            code = grab + (f"ch.queue.append(({sql!r}, [], None))\n"
                           "result = ctx.db.scalar('SELECT count(*) FROM users')")
            obs = ep.step("run", {"code": code})
            assert not obs.ok and obs.error.fault == "environment", (sql, obs)
            assert ep.state_hash() == before
        assert ep.query("SELECT count(*) AS n FROM _aw_counters")[0]["n"] >= 0


def test_an_or_rollback_clause_cannot_commit_half_a_call(caplog):
    """`INSERT OR ROLLBACK` that fires ends the call's transaction; statements after it would
    each commit on their own. They are refused and the call fails with the state as before,
    sandboxed or not."""
    caplog.set_level(logging.ERROR)  # the unsandboxed runtime warns
    code = ("import sqlite3\n"
            "ctx.execute(\"UPDATE users SET name = 'before'\").rowcount\n"
            "try:\n"
            "    ctx.execute(\"INSERT OR ROLLBACK INTO users (id, name, role) "
            "VALUES (1, 'dup', 'admin')\").rowcount\n"
            "except sqlite3.IntegrityError:\n"
            "    pass\n"
            "ctx.execute(\"UPDATE users SET name = 'after'\")\n"
            "result = 'done'")
    seen = []
    for sandbox in (False, True):
        with EnvRuntime(workers=1, sandbox=sandbox) as rt:
            ep = rt.open(attacker_spec(), seed=1)
            before = ep.state_hash()
            obs = ep.step("run", {"code": code})
            assert not obs.ok and obs.error.kind == "permission_denied", obs
            assert ep.state_hash() == before
            assert ep.step("run", {"code": "result = ctx.one('SELECT name FROM users "
                                            "WHERE id = 1')['name']"}).ok  # the next call runs
            seen.append(obs.error.message)
    assert seen[0] == seen[1]
