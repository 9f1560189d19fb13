"""The behaviour contracts built tools come from (verb, coupled effects), the tests derived from
them catching a tool that does something else, and the LLM designer held to the same
contracts; on the default mine built once a session (`built`, tests/unit/conftest.py)."""

from __future__ import annotations

from typing import Any

from agent_world.design.cross_validation import (
    SandboxCompiler,
    cross_validate,
    validation_runtime,
)
from agent_world.design.offline.contract_derivation import derive_contract
from agent_world.design.offline.source_plans import source_plan
from agent_world.design.tool_designer import design_tools
from agent_world.envs.spec import EnvSpec
from agent_world.envs.testing import verify_spec
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.sources import default_sources, read_source
from tests.conftest import built_offline
from tests.unit.test_build import FakeStructuredModel


def contract_of(spec: EnvSpec, tool: str, entry: dict[str, Any]) -> Any:
    return derive_contract(spec, tool, entry, source_plan)


def test_contracts_name_verb_and_coupled_effects(built):
    spec = built["book-lending-prd"]
    cov = spec.provenance.stats["tool_coverage"]["tools"]
    checkout = contract_of(spec, "check_out_copy", cov["check_out_copy"])
    assert checkout.verb == "transition" and checkout.entity == "copies"
    assert {(e.table, e.op) for e in checkout.effects} == {
        ("copies", "update"), ("loans", "insert"), ("holds", "update")}  # a ready hold collected
    renew = contract_of(spec, "renew_loan", cov["renew_loan"])
    assert renew.verb == "update_field"
    assert set(renew.effects[0].set) >= {"due_on", "renewal_count"}
    assert any(g.kind == "below" and g.limit == 2 for g in renew.guards)
    search = contract_of(spec, "search_catalogue", cov["search_catalogue"])
    assert search.verb == "search" and any(p.role == "any_like" for p in search.params)
    git = built["git"]
    gcov = git.provenance.stats["tool_coverage"]["tools"]
    assert contract_of(git, "git_diff", gcov["git_diff"]).computation == "compare"
    assert contract_of(git, "git_status", gcov["git_status"]).computation == "status"
    sq = built["sqlite"]
    assert contract_of(sq, "read_query", sq.provenance.stats["tool_coverage"]["tools"][
        "read_query"]).computation == "sql_select"


def test_contract_tests_fail_a_tool_that_drops_its_coupled_write(built):
    spec = built["book-lending-prd"]
    tool = spec.tool("check_out_copy")
    assert "_insert(ctx, 'loans'" in tool.source
    broken = spec.model_copy(update={"tools": [
        t.model_copy(update={"source": "\n".join(
            ln for ln in t.source.splitlines() if "_insert(ctx, 'loans'" not in ln
            and "out['loan']" not in ln)}) if t.name == "check_out_copy" else t
        for t in spec.tools]})
    assert any("check_out_copy" in f for f in verify_spec(broken))
    # and the old implementation (a new copies row) fails them too
    old = '''def check_out_copy(ctx, barcode, card_number):
    ctx.execute('INSERT INTO "copies" ("barcode", "status", "created_at") VALUES (?, ?, ?)',
                (barcode + '-x', 'available', ctx.now()))
    return ctx.one('SELECT * FROM "copies" ORDER BY "id" DESC LIMIT 1')
'''
    swapped = spec.model_copy(update={"tools": [
        t.model_copy(update={"source": old}) if t.name == "check_out_copy" else t
        for t in spec.tools]})
    failures = [f for f in verify_spec(swapped) if "check_out_copy" in f]
    assert len(failures) >= 2


# ---- the LLM designer, held to the same contracts ------------------------------------------------
LLM_MODULE = '''
from datetime import date, timedelta

from agent_world.envs.toolkit import Ctx, ToolError, tool


@tool(write=True)
def check_out_copy(ctx: Ctx, barcode: str, card_number: str) -> dict:
    """Check out a copy to a member.

    Args:
        barcode: The copy's barcode.
        card_number: The member's card number.
    """
    copy = ctx.one("SELECT * FROM copies WHERE barcode = ?", (barcode,))
    member = ctx.one("SELECT * FROM members WHERE card_number = ?", (card_number,))
    if copy is None or member is None:
        raise ToolError("Unknown copy or member.")
    if copy["status"] not in ("available", "on_hold_shelf") or member["status"] != "active":
        raise ToolError("The copy is not available or the member not active.")
    ready = ctx.one("SELECT id FROM holds WHERE title_id = ? AND status = 'ready' "
                    "AND member_id = ?", (copy["title_id"], member["id"]))
    if copy["status"] == "on_hold_shelf" and ready is None:
        raise ToolError("The copy is kept for another member's hold.")
    now = ctx.now()
    days = 7 if copy["is_new_release"] else 21
    due = (date.fromisoformat(ctx.today()) + timedelta(days=days)).isoformat()
    ctx.execute("UPDATE copies SET status = 'on_loan', updated_at = ? WHERE id = ?",
                (now, copy["id"]))
    ctx.execute("INSERT INTO loans (copy_id, member_id, branch_id, checked_out_at, due_on, "
                "renewal_count, status, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, 0, 'checked_out', ?, ?)",
                (copy["id"], member["id"], copy["current_branch_id"], now, due, now, now))
    ctx.execute("UPDATE holds SET status = 'collected', updated_at = ? WHERE title_id = ? "
                "AND status = 'ready' AND member_id = ?", (now, copy["title_id"], member["id"]))
    return dict(ctx.one("SELECT * FROM copies WHERE id = ?", (copy["id"],)))


@tool(write=True)
def renew_loan(ctx: Ctx, loan_id: int) -> dict:
    """Renew a loan.

    Args:
        loan_id: Id of the loan.
    """
    loan = ctx.one("SELECT * FROM loans WHERE id = ?", (loan_id,))
    if loan is None:
        raise ToolError("No such loan.")
    if loan["status"] == "returned":
        raise ToolError("Returned.")
    ctx.execute("UPDATE loans SET status = 'renewed', updated_at = ? WHERE id = ?",
                (ctx.now(), loan_id))
    return dict(ctx.one("SELECT * FROM loans WHERE id = ?", (loan_id,)))


@tool
def count_titles(ctx: Ctx) -> dict:
    """Number of titles in the catalogue."""
    return ctx.one("SELECT count(*) AS n FROM titles")
'''


def test_llm_designer_gets_the_contracts_and_is_judged_by_them(built):
    spec = built["book-lending-prd"]
    n = len(spec.rows["titles"])
    fake = FakeStructuredModel([{"module": LLM_MODULE, "tests": [
        {"name": "counts", "tool": "count_titles", "arguments": {}, "expect": {"equals": {"n": n}}},
        # a test the model wrote for its own renew_loan: it does not count
        {"name": "renews", "tool": "renew_loan", "arguments": {"loan_id": 1},
         "expect": {"contains": {"status": "renewed"}}}]}])
    d = design_tools(spec, model=fake)
    prompt = fake.calls[0][-1].content
    assert "def check_out_copy(ctx: Ctx, barcode: str, card_number: str) -> dict:" in prompt
    assert "insert loans" in prompt and "renewal_count+1" in prompt
    assert d.contracts["renew_loan"]["verb"] == "update_field"
    assert not any(t["name"] == "renews" for t in d.tests)
    assert d.required["check_out_copy"] and d.required["renew_loan"]
    compiler, runtime = SandboxCompiler(), validation_runtime()
    try:
        validation, out, _ = cross_validate(spec, d, compiler=compiler, runtime=runtime)
    finally:
        compiler.close()
        runtime.close()
    verdicts = {v.tool: v for v in validation.verdicts}
    assert verdicts["check_out_copy"].kept, verdicts["check_out_copy"].reason
    assert verdicts["count_titles"].kept
    renew = verdicts["renew_loan"]
    assert not renew.kept and renew.category == "contract", renew.reason
    assert out is not None and {t.name for t in out.tools} == {"check_out_copy", "count_titles"}


def test_expected_deletes_are_matched_in_a_table_with_a_key_column(rt):
    """A deleted row is the row itself: a column named `key` (a memory server's, say) is not
    the diff's key of an updated row (the check crashed with AttributeError)."""
    spec = EnvSpec.from_dict({
        "name": "kv", "version": 1,
        "theme": {"name": "kv", "description": "Keys.", "taxonomy": {"l1": "a", "l2": "b",
                                                                      "l3": "kv"}},
        "tables": [{"name": "entries", "columns": [
            {"name": "id", "type": "integer", "primary_key": True},
            {"name": "key", "type": "text", "nullable": False}]}],
        "rows": {"entries": [{"id": 1, "key": "alpha"}, {"id": 2, "key": "beta"}]},
        "tools": [{"name": "drop_entry", "description": "Delete an entry.", "mutates": True,
                   "parameters": {"type": "object", "properties": {"id": {"type": "integer"}},
                                  "required": ["id"], "additionalProperties": False},
                   "source": "def drop_entry(ctx, id):\n"
                             "    ctx.execute('DELETE FROM entries WHERE id = ?', (id,))\n"
                             "    return {'deleted': id}\n"}],
        "tests": [{"name": "drops 2", "tool": "drop_entry", "arguments": {"id": 2},
                   "expect": {"changes": [{"table": "entries", "op": "delete",
                                           "key": {"id": 2}}]}},
                  {"name": "not 1", "tool": "drop_entry", "arguments": {"id": 2},
                   "expect": {"changes": [{"table": "entries", "op": "delete",
                                           "key": {"id": 1}}]}}]})
    assert verify_spec(spec, rt) == ["kv: drop_entry / not 1: entries: row {\"id\": 1} was not "
                                     "deleted"]


def test_a_dump_tool_without_annotations_reads(notes_spec):
    """omnifocus' dump_database ("Gets the current state of your OmniFocus database") has no
    readOnlyHint; its name's verb alone said nothing and it was built as a write."""
    from agent_world.design.offline.source_plans import source_plan

    entry = {"table": "notes", "read_only": None, "arguments": {},
             "description": "Gets the current state of your notes database"}
    plan = source_plan(notes_spec, "dump_database", entry)
    assert plan is not None and plan.kind in {"get", "list", "summary", "count_by"}, plan


def test_a_get_tool_hinted_not_read_only_still_reads(notes_spec):
    """arXiv's get_paper_latex_section declares readOnlyHint false (a server's default) and was
    built as an update that moved the section to another paper."""
    from agent_world.design.offline.source_plans import source_plan

    entry = {"table": "notes", "read_only": False, "arguments": {},
             "description": "Get the notes"}
    plan = source_plan(notes_spec, "get_notes", entry)
    assert plan is not None and not plan.write, plan
    # a write its name says stays one: get_or_create is no read
    plan = source_plan(notes_spec, "get_or_create_note", {**entry, "description": "Get or "
                                                          "create a note"})
    assert plan is None or plan.write


def test_a_search_test_looks_for_a_whole_word():
    """A search's test looked for "Americ", and tasks drawn from the tests asked for
    "timezones matching 'Americ'"."""
    from agent_world.design.offline.seed_rows import _needle

    assert _needle("America/New_York") == "America"
    assert _needle("a Knee pain") == "Knee"


def test_time_zones_are_reference_data_no_tool_edits(built):
    """A tool test created "America/New_York-2", and tasks asked to "set the utc offset of
    every America zone to +01:00": the time zone database (and the conversions it logged)
    had create/update/delete tools. They are read; the zones tests name exist."""
    from zoneinfo import available_timezones

    spec = built["time"]
    assert {"get_current_time", "convert_time"} <= {t.name for t in spec.tools}
    assert not [t.name for t in spec.tools if t.mutates]
    names = [v for t in spec.tests if t.expect.ok for k, v in t.arguments.items()
             if isinstance(v, str) and "/" in v and "timezone" in k.lower()]
    assert names and all(n in available_timezones() for n in names), names
    # a fetcher reads the web: no page of it is edited
    assert not [t.name for t in built["fetch"].tools if t.mutates]
    # a commit and its file changes are what git recorded: read, never edited
    git = {t.name for t in built["git"].tools}
    assert not git & {"update_commit", "delete_commit", "create_commit",
                      "update_commit_file_change"} and "git_commit" in git


def test_a_booking_takes_its_slots_time_clinician_and_location(built, rt):
    """bookAppointment left the appointment's start, clinician and location empty: the seed
    rows copy them from the slot, and so does the tool."""
    spec = built["clinic-booking-openapi"]
    slot = next(s for s in spec.rows["slots"] if s["status"] == "published" and not s["booked"])
    patient = spec.rows["patients"][0]
    with rt.open(spec) as ep:
        obs = ep.step("bookAppointment", {"patientId": patient["id"], "slotId": slot["id"],
                                          "visitType": "follow_up"})
        assert obs.ok, obs.error
        assert (obs.result["starts_at"], obs.result["clinician_id"],
                obs.result["location_id"]) == (slot["starts_at"], slot["clinician_id"],
                                               slot["location_id"])
    if any(t.name == "create_appointment" for t in spec.tools):  # the schema's own create
        with rt.open(spec) as ep:
            made = ep.step("create_appointment", {"patient_id": patient["id"],
                                                  "slot_id": slot["id"],
                                                  "visit_type": "follow_up"})
            assert made.ok, made.error
            assert made.result["status"] == "booked"  # not checked in before it starts


def test_a_paid_order_still_ships_and_a_delivered_one_is_final(built, rt):
    """`paid` was a final state everywhere, so a paid order could never ship; it is final for
    a fine, not for an order whose enum goes on to shipped and delivered."""
    from agent_world.design.offline.contracts import final_states

    assert "paid" in final_states(["unpaid", "paid", "waived"])
    assert "paid" not in final_states(["pending", "paid", "shipped", "delivered"])
    spec = built["sqlite"]
    paid = next(o for o in spec.rows["orders"] if o["status"] == "paid")
    delivered = next(o for o in spec.rows["orders"] if o["status"] == "delivered")
    with rt.open(spec) as ep:
        obs = ep.step("set_order_status", {"order_id": paid["id"], "status": "shipped"})
        assert obs.ok, obs.error
        assert not ep.step("set_order_status", {"order_id": delivered["id"],
                                                "status": "pending"}).ok


def test_git_branch_contains_follows_history_and_not_contains_negates(built, rt):
    """`contains` matched only branches whose head was the commit, and `not_contains` was the
    same filter as `contains`: a branch contains a commit its head descends from."""
    spec = built["git"]
    commits = {c["id"]: c for c in spec.rows["commits"]}
    branch = next(b for b in spec.rows["branches"] if b["head_commit_id"] and
                  commits[b["head_commit_id"]]["parent_commit_id"])
    head = commits[branch["head_commit_id"]]
    older = commits[head["parent_commit_id"]]  # in the branch's history, not its head
    repo = next(r for r in spec.rows["repositories"] if r["id"] == branch["repository_id"])
    args = {"repo_path": repo["path"], "branch_type": branch["branch_type"]}
    with rt.open(spec) as ep:
        hold = ep.step("git_branch", {**args, "contains": older["sha"]})
        assert hold.ok, hold.error
        assert branch["id"] in [b["id"] for b in hold.result]
        lack = ep.step("git_branch", {**args, "not_contains": older["sha"]})
        assert branch["id"] not in [b["id"] for b in lack.result]
        every = ep.step("git_branch", args)
        assert sorted(b["id"] for b in hold.result + lack.result) == sorted(
            b["id"] for b in every.result)  # the two split the branches


def test_git_show_names_a_commit_by_a_short_sha(built, rt):
    spec = built["git"]
    commit = spec.rows["commits"][0]
    repo = next(r for r in spec.rows["repositories"] if r["id"] == commit["repository_id"])
    with rt.open(spec) as ep:
        obs = ep.step("git_show", {"repo_path": repo["path"], "revision": commit["sha"][:7]})
        assert obs.ok, obs.error
        assert commit["id"] in [c["id"] for c in obs.result]
        assert all(c["sha"].startswith(commit["sha"][:7]) for c in obs.result)


def test_git_branch_through_a_link_table_names_the_commit_by_its_sha(tmp_path, rt):
    """Mined as the default evolve mines it (2 iterations), git's branches reach their commits
    through `branch_commits`: git_branch took the commit's row id for `contains`, filtered
    `not_contains` exactly as `contains`, and ignored `repo_path` (every repository's
    branches). It names the commit by its sha, splits the repository's branches in two and
    keeps to that repository."""
    ref = next(r for r in default_sources(tmp_path / "home") if r.name == "git")
    spec = mine_theme(read_source(ref), iterations=2, seed=0).spec
    spec = built_offline(spec)
    assert spec is not None and spec.tool("git_branch") is not None
    params = spec.tool("git_branch").parameters["properties"]
    assert params["contains"]["type"] == params["not_contains"]["type"] == "string"
    repo = next(r for r in spec.rows["repositories"]
                if sum(b["repository_id"] == r["id"] for b in spec.rows["branches"]) >= 2)
    mine = sorted(b["id"] for b in spec.rows["branches"] if b["repository_id"] == repo["id"])
    args = {"repo_path": repo["path"], "branch_type": "all"}
    with rt.open(spec) as ep:
        every = ep.step("git_branch", args)
        assert every.ok, every.error
        assert sorted(b["id"] for b in every.result) == mine
        for commit in spec.rows["commits"][:12]:
            hold = ep.step("git_branch", {**args, "contains": commit["sha"]})
            lack = ep.step("git_branch", {**args, "not_contains": commit["sha"]})
            assert hold.ok and lack.ok, (hold.error, lack.error)
            held = {b["id"] for b in hold.result}
            assert held.isdisjoint(b["id"] for b in lack.result)
            assert sorted(held | {b["id"] for b in lack.result}) == mine
