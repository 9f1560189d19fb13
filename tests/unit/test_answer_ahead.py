"""Answers sent ahead (agent_world.envs.forecast.Forecast): a sandboxed runtime runs the
statements a tool's calls begin with before the call and sends their answers with it. The tool
must see exactly what it would have seen without them, whatever its arguments, branches and
parameter types, in every episode; writes run ahead that the tool does not send are undone."""

from __future__ import annotations

import logging
import textwrap

from agent_world.envs import EnvRuntime, EnvSpec

PROFILE = """
def profile(ctx, user_id, mode):
    u = ctx.get_or_fail("users", id=user_id)
    boss = ctx.one("SELECT name FROM users WHERE id = ?", (u["boss_id"],))
    probe = {"float": float(user_id), "bool": True, "text": str(user_id)}.get(mode, user_id)
    kind = ctx.one("SELECT typeof(?) AS t", (probe,))["t"]
    if mode == "named":
        n = ctx.db.scalar("SELECT count(*) FROM orders WHERE user_id = :u", {"u": user_id})
    else:
        n = ctx.db.scalar("SELECT count(*) FROM orders WHERE user_id = ?", (user_id,))
    return {"name": u["name"], "boss": boss and boss["name"], "kind": kind, "orders": n}
"""

ADD_ORDER = """
def add_order(ctx, user_id, total):
    ctx.get_or_fail("users", id=user_id)
    ctx.execute("INSERT INTO orders (user_id, total) VALUES (?, ?)", (user_id, total))
    return ctx.db.scalar("SELECT count(*) FROM orders WHERE user_id = ?", (user_id,))
"""


BOOK = """
def book(ctx, user_id, total, skip):
    ctx.get_or_fail("users", id=user_id)
    if skip == "early":
        raise ToolError("skipped before writing")
    oid = ctx.execute("INSERT INTO orders (user_id, total) VALUES (?, ?)",
                      (user_id, total)).lastrowid
    ctx.execute("UPDATE users SET name = ? WHERE id = ?", (ctx.now(), user_id))
    if skip == "late":
        ctx.execute("UPDATE users SET name = ? WHERE id = ?", ("late", user_id))
    ctx.execute("UPDATE users SET name = ? WHERE id = ?", (ctx.new_id("U"), user_id))
    n = ctx.db.scalar("SELECT count(*) FROM orders WHERE id <= ?", (oid,))
    ctx.execute("UPDATE users SET boss_id = ? WHERE id = ?", (n * 7, user_id))
    return {"order": oid, "n": n, "now": ctx.now(),
            "name": ctx.one("SELECT name FROM users WHERE id = ?", (user_id,))["name"]}
"""


def _spec() -> EnvSpec:
    def tool(name: str, source: str, props: dict, mutates: bool) -> dict:
        return {"name": name, "description": name, "mutates": mutates,
                "parameters": {"type": "object", "properties": props, "required": list(props)},
                "source": textwrap.dedent(source).strip() + "\n"}

    return EnvSpec.from_dict({
        "name": "ahead", "theme": {"name": "Ahead", "taxonomy": {"l1": "T", "l2": "T", "l3": "a"}},
        "tables": [
            {"name": "users", "columns": [
                {"name": "id", "type": "integer", "primary_key": True, "nullable": False},
                {"name": "name", "type": "text"},
                {"name": "boss_id", "type": "integer"}]},
            {"name": "orders", "columns": [
                {"name": "id", "type": "integer", "primary_key": True, "nullable": False},
                {"name": "user_id", "type": "integer", "foreign_key": "users.id"},
                {"name": "total", "type": "real"}]}],
        "rows": {"users": [{"id": i, "name": f"u{i}", "boss_id": 1 + i % 3}
                           for i in range(1, 7)],
                 "orders": [{"id": 1, "user_id": 2, "total": 5.0}]},
        "tools": [tool("profile", PROFILE, {"user_id": {"type": "integer"},
                                            "mode": {"type": "string"}}, False),
                  tool("add_order", ADD_ORDER, {"user_id": {"type": "integer"},
                                                "total": {"type": "number"}}, True),
                  tool("book", BOOK, {"user_id": {"type": "integer"},
                                      "total": {"type": "number"},
                                      "skip": {"type": "string"}}, True)],
    }, origin="test_answer_ahead")


CALLS = [(ep, tool, args) for ep, tool, args in [
    (0, "profile", {"user_id": 2, "mode": "int"}),
    (0, "profile", {"user_id": 3, "mode": "int"}),  # same shape, other argument
    (1, "profile", {"user_id": 3, "mode": "int"}),  # another episode
    (0, "add_order", {"user_id": 3, "total": 1.5}),
    (0, "add_order", {"user_id": 3, "total": 2.5}),
    (0, "profile", {"user_id": 3, "mode": "int"}),  # sees episode 0's orders
    (1, "profile", {"user_id": 3, "mode": "int"}),  # episode 1 does not
    (0, "profile", {"user_id": 4, "mode": "float"}),  # same statement, a float parameter
    (0, "profile", {"user_id": 4, "mode": "bool"}),
    (0, "profile", {"user_id": 4, "mode": "text"}),
    (0, "profile", {"user_id": 4, "mode": "int"}),
    (1, "profile", {"user_id": 5, "mode": "named"}),  # named parameters
    (1, "profile", {"user_id": 6, "mode": "named"}),
    (1, "profile", {"user_id": 99, "mode": "int"}),  # the first read finds nothing
    (1, "add_order", {"user_id": 99, "total": 1.0}),
    (0, "profile", {"user_id": 2, "mode": "int"}),
]]


def _run(sandbox: bool, calls: list) -> tuple[list[str], list[str], EnvRuntime]:
    rt = EnvRuntime(workers=1, sandbox=sandbox)
    spec = _spec()
    eps = [rt.open(spec, seed=1), rt.open(spec, seed=2)]
    seen = [eps[ep].step(tool, args).to_text() for ep, tool, args in calls]
    return seen, [ep.state_hash() for ep in eps], rt


def _same_in_both_modes(calls: list) -> tuple[list[str], EnvRuntime]:
    """Run `calls` unsandboxed, then sandboxed (answers sent ahead): every observation and
    both episodes' final states equal; the sandboxed observations and its open runtime."""
    plain, plain_states, rt0 = _run(False, calls)
    rt0.close()
    ahead, states, rt = _run(True, calls)
    try:
        for call, a, b in zip(calls, plain, ahead, strict=True):
            assert a == b, f"{call}\nunsandboxed: {a}\nsandboxed:   {b}"
        assert states == plain_states
    except BaseException:
        rt.close()
        raise
    return ahead, rt


def test_answers_sent_ahead_change_nothing_the_tool_sees(caplog):
    caplog.set_level(logging.ERROR)  # the unsandboxed runtime warns
    ahead, rt = _same_in_both_modes(CALLS)
    try:
        # the calls did what they say: types kept, episodes apart, a miss reported
        assert '"kind": "real"' in ahead[7] and '"kind": "integer"' in ahead[8]
        assert '"kind": "text"' in ahead[9] and '"orders": 2' in ahead[5]
        assert '"orders": 0' in ahead[6] and ahead[13].startswith("Error (tool_error)")
        profile = rt._forecasts[(rt.fingerprint(_spec_of(rt)), "profile")]
        add = rt._forecasts[(rt.fingerprint(_spec_of(rt)), "add_order")]
        assert profile.used >= 10, (profile.sent, profile.used)  # most calls took answers
        # add_order begins with one read; its INSERT is never run ahead (nor what follows it)
        assert [sql.split()[0] for sql, _ in add.plan] == ["SELECT"]
    finally:
        rt.close()


def _spec_of(rt: EnvRuntime) -> EnvSpec:
    return next(spec for spec, _ in rt._fingerprints.values())


def test_a_tool_that_only_writes_first_is_never_run_ahead():
    with EnvRuntime(workers=1, sandbox=True) as rt:
        ep = rt.open(_spec(), seed=1)
        for i in range(5):
            obs = ep.step("add_order", {"user_id": 1, "total": float(i)})
            assert obs.ok and obs.result == i + 1  # one INSERT per call, never two
        assert len(ep.dump()["orders"]) == 6


def test_big_leading_reads_are_not_run_ahead():
    """A tool that begins by reading many rows: its statement is not learned (running it ahead
    would cost as much as the round trip it saves, and twice on a miss)."""
    with EnvRuntime(workers=1, sandbox=True) as rt:
        spec = _spec()
        ep = rt.open(spec, seed=1)
        big = ("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 20000) "
               "SELECT x, printf('%050d', x) AS pad FROM r")
        fp = rt.fingerprint(spec)
        forecast = rt._forecasts[(fp, "profile")]
        forecast.learn([(big, [], None)], {})  # as if a call had begun with it
        ep.step("profile", {"user_id": 2, "mode": "int"})  # runs it ahead once, then drops it
        assert forecast.plan and forecast.plan[0][0] != big
        assert forecast.sent == 0


BOOKINGS = [(ep, {"user_id": u, "total": t, "skip": skip}) for ep, u, t, skip in [
    (0, 2, 1.0, ""), (0, 3, 2.0, ""), (1, 3, 2.0, ""), (0, 3, 2.5, ""),
    (0, 4, 1.0, "early"),  # writes run ahead, none taken: all undone
    (0, 4, 1.0, ""), (1, 5, 3.0, "late"),  # taken up to the first UPDATE, the rest undone
    (1, 5, 3.0, ""), (0, 99, 1.0, ""), (1, 6, 1.0, ""), (0, 6, 4.0, ""), (1, 2, 1.0, "")]]


def test_writes_run_ahead_change_nothing_and_are_undone_when_not_taken(caplog):
    caplog.set_level(logging.ERROR)  # the unsandboxed runtime warns
    ahead, rt = _same_in_both_modes([(ep, "book", args) for ep, args in BOOKINGS])
    try:
        assert ahead[4].startswith("Error (tool_error)") and '"name": "late"' not in ahead[6]
        forecast = rt._forecasts[(rt.fingerprint(_spec_of(rt)), "book")]
        # the INSERT (arguments), the UPDATEs by ctx.now() and ctx.new_id() and the read by
        # the INSERT's rowid were run ahead and taken; the UPDATE by a computed value missed
        # once and is run ahead no more
        kinds = [sql.split()[0] for sql, _ in forecast.plan]
        assert kinds[:5] == ["SELECT", "INSERT", "UPDATE", "UPDATE", "SELECT"], kinds
        assert forecast.missed == {"UPDATE users SET boss_id = ? WHERE id = ?"}
        assert forecast.used >= 30, (forecast.sent, forecast.used)
    finally:
        rt.close()
