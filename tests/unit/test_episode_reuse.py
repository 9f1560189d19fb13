"""Closed episodes reused by their runtime: a reused episode with seed s is indistinguishable
from a new one with seed s (observations, ids, clock, state), whatever the episode before it
did; a closed Episode object cannot touch the file it gave back; a reset keeps the tool
connection's prepared statements (foreign keys are never switched on it)."""

from __future__ import annotations

import json

import pytest

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.errors import EpisodeClosed


def _tool(name: str, body: str, mutates: bool = True) -> dict:
    return {"name": name, "description": f"{name} (test tool)", "mutates": mutates,
            "source": f"def {name}(ctx, **kw):\n" + "".join(f"    {line}\n"
                                                            for line in body.splitlines()),
            "parameters": {"type": "object", "properties": {}, "additionalProperties": True}}


# what a tool can see of its connection besides the rows: a cursor's lastrowid (even a
# SELECT's), changes() and last_insert_rowid()
SESSION = _tool("session", "\n".join([
    "row = ctx.one('SELECT changes() AS c, last_insert_rowid() AS r')",
    "return [ctx.execute('SELECT 1').lastrowid, row['c'], row['r']]"]), mutates=False)
TOUCH = _tool("touch", "\n".join([
    "cur = ctx.execute('UPDATE users SET name = name WHERE id = 1')",
    "return [cur.lastrowid, cur.rowcount, ctx.new_id('T'), ctx.now()]"]))


@pytest.fixture(scope="module")
def spec(notes_spec):
    raw = json.loads(notes_spec.to_json())
    raw["tools"].extend([SESSION, TOUCH])
    return EnvSpec.from_dict(raw)


# writes that issue ids and read the clock, failed calls (a write rolled back after its
# insert, a tool exception), reads, a delete: everything an episode's state and ids hang on
SCRIPT = [
    ("session", {}),
    ("touch", {}),
    ("add_note", {"user_id": 1, "body": "a"}),
    ("misbehave", {"how": "bad_fk"}),
    ("session", {}),
    ("rename_user", {"user_id": 2, "name": "B"}),
    ("misbehave", {"how": "raise"}),
    ("add_note", {"user_id": 2, "body": "b"}),
    ("touch", {}),
    ("delete_note", {"note_id": 1}),
    ("add_note", {"user_id": 9, "body": "nobody"}),
    ("session", {}),
    ("list_notes", {"user_id": 2}),
]


def _play(ep, script=SCRIPT) -> dict:
    seen = []
    for tool, args in script:
        obs = ep.step(tool, args)
        seen.append((obs.step, obs.ok, obs.result,
                     (obs.error.kind, obs.error.message) if obs.error else None))
    return {"observations": seen, "hash": ep.state_hash(), "dump": ep.dump(),
            "diff": ep.diff().model_dump()}


def _fresh(spec, seed: int, sandbox: bool) -> dict:
    with EnvRuntime(keep_closed=0, sandbox=sandbox) as rt, rt.open(spec, seed=seed) as ep:
        return _play(ep)


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
def test_a_reused_episode_is_a_new_one(spec, sandbox):
    expected = {seed: _fresh(spec, seed, sandbox) for seed in (5, 6)}
    # the seed matters (so equal plays below are not equal by accident)
    assert expected[5]["observations"] != expected[6]["observations"]
    with EnvRuntime(sandbox=sandbox) as rt:
        before = rt.open(spec, seed=11)
        played = _play(before)["observations"]
        before.step("add_note", {"user_id": 1, "body": "left behind"})
        # the episode before left its connection with a nonzero lastrowid
        assert played[-2][2][0] != 0 and before.step("session").result[0] != 0
        path = before.path
        before.close()
        for seed in (5, 6, 5):
            ep = rt.open(spec, seed=seed)
            assert ep.path == path  # the same file and connection, reused
            assert _play(ep) == expected[seed]
            # what the next one inherits: a failed call last, after committed writes
            assert not ep.step("misbehave", {"how": "bad_fk"}).ok
            ep.close()
        # reset within an episode gives the same as well
        ep = rt.open(spec, seed=6)
        _play(ep)
        ep.reset()
        assert _play(ep) == expected[6]
        ep.close()


def test_a_closed_episode_cannot_touch_the_next_one(spec):
    with EnvRuntime() as rt:
        old = rt.open(spec, seed=1)
        assert old.step("add_note", {"user_id": 1, "body": "mine"}).ok
        old.close()
        old.close()  # twice: harmless, and the file is not handed out twice
        new = rt.open(spec, seed=1)
        assert new.path == old.path and rt.kept == 0
        state = new.state_hash()
        for use in (lambda: old.step("add_note", {"user_id": 1, "body": "stray"}),
                    old.reset, old.state_hash, old.dump, old.diff,
                    lambda: old.query("SELECT 1")):
            with pytest.raises(EpisodeClosed, match="closed"):
                use()
        assert new.state_hash() == state and new.diff().empty
        other = rt.open(spec, seed=1)  # nothing kept: a new file
        assert other.path != new.path
        new.close()
        other.close()
        assert rt.kept == 2


def test_reset_leaves_the_tool_connection_alone(spec):
    """The undo runs on a second connection (foreign keys off there), so the statements the
    tool connection prepared stay valid; foreign keys still hold for the next call."""
    with EnvRuntime() as rt, rt.open(spec) as ep:
        assert ep.step("add_note", {"user_id": 1, "body": "x"}).ok
        assert ep.step("rename_user", {"user_id": 2, "name": "B"}).ok
        traced: list[str] = []
        ep._db.conn.set_trace_callback(traced.append)
        ep.reset()
        assert not any("foreign_keys" in sql for sql in traced), traced
        assert ep.diff().empty
        obs = ep.step("misbehave", {"how": "bad_fk"})
        assert obs.error and obs.error.kind == "constraint_violation"
        # a read still open on the tool connection locks its table against the other one:
        # the undo then runs on the tool connection itself, and still undoes everything
        assert ep.step("add_note", {"user_id": 1, "body": "y"}).ok
        cur = ep._db.conn.execute("SELECT * FROM notes")
        cur.fetchone()
        traced.clear()
        ep.reset()
        assert any("foreign_keys=OFF" in sql for sql in traced)
        del cur
        assert ep.diff().empty
        assert ep.step("misbehave", {"how": "bad_fk"}).error.kind == "constraint_violation"
        ep._db.conn.set_trace_callback(None)


def test_a_kept_episode_serves_its_own_environment_only(spec, notes_spec):
    with EnvRuntime() as rt:
        ep = rt.open(spec)
        ep.close()
        other = rt.open(notes_spec)  # another fingerprint: a new file, the kept one stays
        assert other.path != ep.path and rt.kept == 1
        assert "session" not in {t.name for t in other.spec.tools}
        other.close()
        again = rt.open(spec)
        assert again.path == ep.path and again.step("session").ok
        again.close()
    assert rt.kept == 0 and not ep.path.exists() and not other.path.exists()
