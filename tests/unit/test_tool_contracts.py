"""Built tools that do what their names and source descriptions say (the default mine's library
PRD and the real git, sqlite and time MCP servers), checked by calling them on an episode and
reading the state change, not by the designer's own tests; the behaviour contracts they are
built from; tests from those contracts that catch a tool doing something else; the LLM
designer held to the same contracts."""

from __future__ import annotations

import json
import random
from datetime import date, datetime, timedelta
from typing import Any

import pytest

from agent_world.envs.spec import EnvSpec
from agent_world.mining.semantics.invariants import invariant_violations


def _args(tool: Any, **by_name: Any) -> dict[str, Any]:
    """Arguments for the tool's own parameters, from candidates named like the source's."""
    props = tool.parameters["properties"]
    out = {k: v for k, v in by_name.items() if k in props}
    missing = [k for k in tool.parameters.get("required", []) if k not in out]
    assert not missing, f"{tool.name} needs {missing} (has {sorted(props)})"
    return out


def _changed(diff: Any, table: str) -> tuple[int, int, int]:
    t = diff.tables.get(table)
    return (0, 0, 0) if t is None else (len(t.inserted), len(t.updated), len(t.deleted))


# ---- the library -----------------------------------------------------------------------------
def test_check_out_copy_puts_the_copy_on_loan_and_opens_a_loan(built, rt):
    spec = built["book-lending-prd"]
    copy = next(c for c in spec.rows["copies"] if c["status"] == "available")
    owed = {m["id"]: sum(f["amount"] or 0 for f in spec.rows["fines"]
                         if f["member_id"] == m["id"] and f["status"] == "unpaid")
            for m in spec.rows["members"]}
    member = next(m for m in spec.rows["members"] if m["status"] == "active"
                  and owed[m["id"]] <= 10)  # "more than 10.00 in unpaid fines" cannot borrow
    tool = spec.tool("check_out_copy")
    with rt.open(spec) as ep:
        obs = ep.step("check_out_copy", _args(tool, barcode=copy["barcode"], copy_id=copy["id"],
                                              card_number=member["card_number"],
                                              member_id=member["id"]))
        assert obs.ok, obs.error
        diff = ep.diff()
        assert _changed(diff, "copies") == (0, 1, 0)  # no new copy: the copy is updated
        assert ep.query("SELECT status FROM copies WHERE id = ?", (copy["id"],)) == [
            {"status": "on_loan"}]
        (loan,) = diff.tables["loans"].inserted
        assert (loan["copy_id"], loan["member_id"]) == (copy["id"], member["id"])
        days = 7 if copy["is_new_release"] else 21  # "a loan lasts 21 days (7 ... new releases)"
        assert date.fromisoformat(loan["due_on"]) - date.fromisoformat(
            spec.clock_start[:10]) == timedelta(days=days)
        # the copy is now on loan: checking it out again is refused and changes nothing
        again = ep.step("check_out_copy", _args(tool, barcode=copy["barcode"],
                                                copy_id=copy["id"],
                                                card_number=member["card_number"],
                                                member_id=member["id"]))
        assert not again.ok and again.error.kind == "tool_error"


def test_renew_loan_moves_the_due_date_and_counts_the_renewal(built, rt):
    base = built["book-lending-prd"]
    copies = {c["id"]: c for c in base.rows["copies"]}
    loan = next(r for r in base.rows["loans"] if r["returned_at"] is None
                and (r["renewal_count"] or 0) < 2 and r["status"] == "checked_out"
                and r["copy_id"] in copies)
    # nobody else waits for its title (a renewal is refused then: below)
    title = copies[loan["copy_id"]]["title_id"]
    spec = base.model_copy(update={"rows": {**base.rows, "holds": [
        h for h in base.rows["holds"] if h["title_id"] != title]}})
    with rt.open(spec) as ep:
        obs = ep.step("renew_loan", {"loan_id": loan["id"]})
        assert obs.ok, obs.error
        (after,) = ep.query("SELECT due_on, renewal_count, status FROM loans WHERE id = ?",
                            (loan["id"],))
        assert after["due_on"] > loan["due_on"]
        assert after["renewal_count"] == (loan["renewal_count"] or 0) + 1
        # "every change to a loan ... is written to an audit log": one entry per field
        diff = ep.diff()
        assert set(diff.tables) == {"loans", "loan_history"}
        logged = {h["field_name"]: (h["old_value"], h["new_value"])
                  for h in diff.tables["loan_history"].inserted}
        assert logged == {"due_on": (loan["due_on"], after["due_on"]),
                          "renewal_count": (str(loan["renewal_count"] or 0),
                                            str(after["renewal_count"]))}
    # "unless another member holds the title": a live hold of the loan's title by someone else
    copies = {c["id"]: c for c in spec.rows["copies"]}
    held = next((r for r in spec.rows["loans"] if r["status"] in ("checked_out", "renewed")
                 and r["returned_at"] is None and (r["renewal_count"] or 0) < 2
                 and r["copy_id"] in copies and any(h["title_id"] == copies[r["copy_id"]]["title_id"]
                         and h["status"] in ("waiting", "ready")
                         and h["member_id"] != r["member_id"] for h in spec.rows["holds"])),
                None)
    if held is not None:
        with rt.open(spec) as ep:
            refused = ep.step("renew_loan", {"loan_id": held["id"]})
            assert not refused.ok and "holds the title" in refused.error.message
            assert ep.diff().empty
    maxed = next((r for r in spec.rows["loans"] if r["renewal_count"] == 2
                  and r["returned_at"] is None), None)
    if maxed is not None:  # "up to two times"
        with rt.open(spec) as ep:
            assert not ep.step("renew_loan", {"loan_id": maxed["id"]}).ok


def test_check_in_and_transfer_update_the_copy_instead_of_inserting_one(built, rt):
    spec = built["book-lending-prd"]
    branch = spec.rows["branches"][0]["id"]
    waited = {h["title_id"] for h in spec.rows["holds"] if h["status"] == "waiting"}
    on_loan = next(c for c in spec.rows["copies"] if c["status"] == "on_loan"
                   and c["title_id"] not in waited)  # else it goes to the hold shelf
    available = next(c for c in spec.rows["copies"] if c["status"] == "available"
                     and c["current_branch_id"] != branch)
    for name, copy, want in (("check_in_copy", on_loan, "available"),
                             ("transfer_copy", available, "in_transit")):
        tool = spec.tool(name)
        with rt.open(spec) as ep:
            obs = ep.step(name, _args(tool, copy_id=copy["id"], barcode=copy["barcode"],
                                      branch_id=branch, to_branch_id=branch))
            assert obs.ok, (name, obs.error)
            assert _changed(ep.diff(), "copies") == (0, 1, 0), name
            assert ep.query("SELECT status, home_branch_id, current_branch_id FROM copies "
                            "WHERE id = ?", (copy["id"],)) == [
                {"status": want, "home_branch_id": copy["home_branch_id"],
                 "current_branch_id": branch}]


def test_search_catalogue_filters_by_its_arguments(built, rt):
    spec = built["book-lending-prd"]
    tool = spec.tool("search_catalogue")
    assert tool.parameters["properties"], "a search without arguments"
    title = spec.rows["titles"][3]
    word = next(w for w in title["title"].split() if len(w) > 3)
    with rt.open(spec) as ep:
        obs = ep.step("search_catalogue", {"query": word})
        assert obs.ok, obs.error
        fields = ("title", "authors", "isbn", "subject")
        want = [t["id"] for t in spec.rows["titles"]
                if any(word.lower() in str(t.get(f) or "").lower() for f in fields)]
        assert [r["id"] for r in obs.result] == want[:20] and title["id"] in want
        assert len(want) < len(spec.rows["titles"])


# ---- git ---------------------------------------------------------------------------------
def _repo_with(spec: EnvSpec, staged: bool, checked_out: bool = False
               ) -> tuple[dict, list[dict]]:
    """A repository with a change of that staging (and, `checked_out`, one checked-out
    branch with a head commit: a commit goes onto it) and its changes."""
    for repo in spec.rows["repositories"]:
        rows = [w for w in spec.rows["working_tree_changes"] if w["repository_id"] == repo["id"]]
        heads = [b for b in spec.rows["branches"]
                 if b["repository_id"] == repo["id"] and b["status"] == "checked_out"]
        if checked_out and not (len(heads) == 1 and heads[0]["head_commit_id"] is not None):
            continue
        if any(bool(w["staged"]) is staged and w["diff"] for w in rows):
            return repo, rows
    raise AssertionError("no repository with such changes")


def test_git_add_stages_the_files(built, rt):
    spec = built["git"]
    repo, rows = _repo_with(spec, staged=False)
    path = next(w["path"] for w in rows if not w["staged"])
    with rt.open(spec) as ep:
        obs = ep.step("git_add", {"repo_path": repo["path"], "files": [path]})
        assert obs.ok, obs.error
        assert ep.query("SELECT staged FROM working_tree_changes WHERE repository_id = ? AND "
                        "path = ?", (repo["id"], path)) == [{"staged": True}]
        assert set(ep.diff().tables) == {"working_tree_changes"}
        assert not ep.step("git_add", {"repo_path": repo["path"],
                                       "files": ["no/such/file.py"]}).ok


def test_git_diff_and_status_report_the_working_tree(built, rt):
    spec = built["git"]
    repo, rows = _repo_with(spec, staged=False)
    with rt.open(spec) as ep:
        diff = ep.step("git_diff_unstaged", {"repo_path": repo["path"]})
        assert diff.ok, diff.error
        assert "path" not in diff.result  # not the repository row
        for w in rows:
            if w["diff"] and not w["staged"]:
                assert w["diff"] in diff.result["diff"]
            if w["diff"] and w["staged"]:
                assert w["diff"] not in diff.result["diff"]
        status = ep.step("git_status", {"repo_path": repo["path"]})
        assert status.ok, status.error
        listed = json.dumps(status.result)
        assert all(w["path"] in listed for w in rows) and "created_at" not in listed


def test_git_checkout_switches_within_its_repository(built, rt):
    spec = built["git"]
    by_repo: dict[int, list[dict]] = {}
    for b in spec.rows["branches"]:
        by_repo.setdefault(b["repository_id"], []).append(b)
    repo_id, branches = next((r, bs) for r, bs in by_repo.items()
                             if any(b["status"] == "active" for b in bs))
    repo = next(r for r in spec.rows["repositories"] if r["id"] == repo_id)
    branch = next(b for b in branches if b["status"] == "active")
    elsewhere = next(b for b in spec.rows["branches"] if b["repository_id"] != repo_id
                     and b["name"] not in {x["name"] for x in branches})
    with rt.open(spec) as ep:
        obs = ep.step("git_checkout", {"repo_path": repo["path"], "branch_name": branch["name"]})
        assert obs.ok, obs.error
        rows = ep.query("SELECT id, repository_id, status FROM branches WHERE repository_id = ?",
                        (repo_id,))
        assert [r["id"] for r in rows if r["status"] == "checked_out"] == [branch["id"]]
        assert ep.query("SELECT repository_id FROM branches WHERE id = ?", (branch["id"],)) == [
            {"repository_id": repo_id}]
        other = ep.step("git_checkout", {"repo_path": repo["path"],
                                         "branch_name": elsewhere["name"]})
        assert not other.ok  # a branch of another repository is not moved here
        assert ep.query("SELECT repository_id FROM branches WHERE id = ?",
                        (elsewhere["id"],)) == [{"repository_id": elsewhere["repository_id"]}]


def test_no_generic_setter_offers_a_state_a_source_tool_owns(built):
    """Checking a branch out also leaves the one checked out before, and cancelling an
    appointment frees its slot: the schema's status setter does not offer those states (it
    would skip what the source tool also writes), names the tool that sets them, and is left
    out when fewer than two states remain (git's branches; a slot is published or held)."""
    names = {t.name for t in built["git"].tools}
    assert "git_checkout" in names and "set_branch_status" not in names
    clinic = built["clinic-booking-openapi"]
    setter = next(t for t in clinic.tools if t.name == "set_appointment_status")
    states = setter.parameters["properties"]["status"]["enum"]
    assert "cancelled" not in states and "late_cancelled" not in states and len(states) >= 2
    assert "cancelAppointment" in setter.description
    assert "set_slot_status" not in {t.name for t in clinic.tools}
    assert "Change the status of an appointment" in setter.description


def test_git_create_branch_takes_its_base_from_the_same_repository(built, rt):
    """"main" names a branch in every repository: the base of a new branch is the one of the
    repository it is created in, not the first "main" of any."""
    spec = built["git"]
    mains = sorted((b for b in spec.rows["branches"] if b["name"] == "main"),
                   key=lambda b: b["id"])
    assert len(mains) > 1
    base = mains[-1]
    repo = next(r for r in spec.rows["repositories"] if r["id"] == base["repository_id"])
    tool = spec.tool("git_create_branch")
    with rt.open(spec) as ep:
        obs = ep.step("git_create_branch", _args(tool, repo_path=repo["path"],
                                                 branch_name="feat/scoped", base_branch="main"))
        assert obs.ok, obs.error
        assert (obs.result["repository_id"], obs.result["base_branch_id"]) == (
            repo["id"], base["id"])
        unknown = ep.step("git_create_branch", _args(tool, repo_path=repo["path"],
                                                     branch_name="feat/other",
                                                     base_branch="no-such-branch"))
        assert not unknown.ok and unknown.error.kind == "tool_error"


def test_a_created_branch_starts_at_its_base_and_lists_as_local(built, rt):
    """A new branch pointed at no commit and had no type, so `git_branch(contains=...)` and
    `git_branch(branch_type='local')` never listed it; 'all' listed nothing."""
    spec = built["git"]
    remote = {b["repository_id"] for b in spec.rows["branches"] if b["branch_type"] == "remote"}
    base = next(b for b in spec.rows["branches"] if b["head_commit_id"]
                and b["branch_type"] == "local" and b["repository_id"] in remote)
    repo = next(r for r in spec.rows["repositories"] if r["id"] == base["repository_id"])
    head = next(c for c in spec.rows["commits"] if c["id"] == base["head_commit_id"])
    kinds = spec.tool("git_branch").parameters["properties"]["branch_type"]
    assert kinds["enum"] == ["local", "remote", "all"]
    assert "all branches" in kinds["description"]  # the source's words, not "Branch type."
    with rt.open(spec) as ep:
        obs = ep.step("git_create_branch", {"repo_path": repo["path"], "branch_name": "feat/z",
                                            "base_branch": base["name"]})
        assert obs.ok, obs.error
        assert (obs.result["head_commit_id"], obs.result["branch_type"]) == (head["id"], "local")
        listed = {}
        for kind in ("local", "remote", "all"):
            got = ep.step("git_branch", {"repo_path": repo["path"], "branch_type": kind})
            assert got.ok, got.error
            listed[kind] = {b["name"] for b in got.result}
        assert "feat/z" in listed["local"] and "feat/z" not in listed["remote"]
        assert listed["all"] >= listed["local"] | listed["remote"] and listed["remote"]
        holding = ep.step("git_branch", {"repo_path": repo["path"], "branch_type": "all",
                                         "contains": head["sha"]})
        assert "feat/z" in {b["name"] for b in holding.result}


def test_arguments_carry_the_source_words_where_the_tool_keeps_them(built):
    """Arguments were described by their names ("Contains."); a source's own description is
    kept, a bare title is not ("Repo Path"), and a date bound says what it compares (the
    source's "relative dates ('2 weeks ago')" are not understood here)."""
    branch = built["git"].tool("git_branch").parameters["properties"]
    assert branch["contains"]["description"].startswith("The commit sha that branch should")
    log = built["git"].tool("git_log").parameters["properties"]
    assert log["repo_path"]["description"] == "Repo path."
    start = log["start_timestamp"]["description"]
    assert "ISO 8601" in start and "2024-01-15T14:30:25" in start and "ago" not in start


def test_summaries_total_only_what_adds_up(built):
    """A summary tool totals its measure: never years or HTTP status codes."""
    names = {t.name for spec in built.values() for t in spec.tools
             if t.name.startswith("summarize_")}
    assert names and not {n for n in names if n.endswith(("_year", "_status_code", "_offset"))}
    assert "summarize_pages_byte_length" in names  # the page's size, not its status code


# ---- sqlite and time -------------------------------------------------------------------------
def test_read_query_runs_the_select_read_only(built, rt):
    spec = built["sqlite"]
    n = len(spec.rows["customers"])
    with rt.open(spec) as ep:
        obs = ep.step("read_query", {"query": "SELECT count(*) AS n FROM customers"})
        assert obs.ok, obs.error
        assert obs.result == [{"n": n}]
        bad = ep.step("read_query", {"query": "DELETE FROM customers"})
        assert not bad.ok and ep.diff().empty


def test_fetch_returns_the_stored_page_in_pieces_and_refuses_error_pages(built, rt):
    """`fetch` returned the fetch log's rows for the URL; mcp-server-fetch returns the page's
    content, cut to max_length from start_index."""
    spec = built["fetch"]
    pages = spec.rows["pages"]
    page = max((p for p in pages if p["status_code"] == 200 and p["body"]),
               key=lambda p: len(p["body"]))
    error = next(p for p in pages if p["status_code"] >= 400)
    with rt.open(spec) as ep:
        whole = ep.step("fetch", {"url": page["url"]})
        assert whole.ok, whole.error
        assert whole.result["content"] == page["body"][:5000]
        first = ep.step("fetch", {"url": page["url"], "max_length": 20})
        assert (first.result["content"], first.result["next_start_index"]) == (
            page["body"][:20], 20)
        after = ep.step("fetch", {"url": page["url"], "max_length": 20, "start_index": 20})
        assert after.result["content"] == page["body"][20:40]
        refused = ep.step("fetch", {"url": error["url"]})
        assert not refused.ok and str(error["status_code"]) in refused.error.message
        assert not ep.step("fetch", {"url": "https://nowhere.invalid/none"}).ok
        assert ep.diff().empty  # a read


def test_convert_time_converts_from_the_source_to_the_target_zone(built, rt):
    spec = built["time"]
    zones = {z["name"]: z for z in spec.rows["timezones"]}
    src = next(z for z in zones.values() if z["utc_offset"] == "-05:00")
    dst = next(z for z in zones.values() if z["utc_offset"] == "+05:30")
    with rt.open(spec) as ep:
        obs = ep.step("convert_time", {"source_timezone": src["name"], "time": "09:00",
                                       "target_timezone": dst["name"]})
        assert obs.ok, obs.error
        assert obs.result["target"]["timezone"] == dst["name"]
        assert obs.result["target"]["time"] == "19:30"  # 09:00 -05:00 is 19:30 +05:30
        assert obs.result["time_difference"] == "+10.5h"


def test_time_tools_keep_daylight_saving_time_from_the_transitions(built, rt):
    """The clock is mid-January: Sydney is on daylight saving time (+11:00, not its standard
    +10:00), New York is not; both tools read it from the zone's DST transitions."""
    spec = built["time"]
    zones = {z["name"]: z for z in spec.rows["timezones"]}
    if "Australia/Sydney" not in zones:
        pytest.fail(f"the mined time zones lack Australia/Sydney: {sorted(zones)[:10]}")
    with rt.open(spec) as ep:
        now = ep.step("get_current_time", {"timezone": "Australia/Sydney"})
        assert now.ok, now.error
        assert now.result["utc_offset"] == "+11:00" and now.result["datetime"].endswith("+11:00")
        obs = ep.step("convert_time", {"source_timezone": "America/New_York", "time": "16:00",
                                       "target_timezone": "Australia/Sydney"})
        assert obs.ok, obs.error
        # 16:00 -05:00 is 21:00 UTC, 08:00 the next day at +11:00
        assert (obs.result["target"]["time"], obs.result["target"]["utc_offset"],
                obs.result["day_offset"], obs.result["time_difference"]) == (
            "08:00", "+11:00", 1, "+16h")


# ---- contracts and the tests written from them -------------------------------------------------
def test_git_commit_commits_the_staged_changes(built, rt):
    spec = built["git"]
    repo, changes = _repo_with(spec, staged=True, checked_out=True)
    staged = sorted(c["path"] for c in changes if c["staged"])
    head = next(b for b in spec.rows["branches"]
                if b["repository_id"] == repo["id"] and b["status"] == "checked_out")
    tool = spec.tool("git_commit")
    with rt.open(spec) as ep:
        obs = ep.step("git_commit", _args(tool, repo_path=repo["path"], message="Fix it"))
        assert obs.ok, obs.error
        new = obs.result
        assert sorted(new["files"]) == staged and new["parent_commit_id"] == \
            head["head_commit_id"]
        files = ep.query('SELECT path FROM "commit_file_changes" WHERE commit_id = ?',
                         (new["id"],))
        assert sorted(f["path"] for f in files) == staged
        left = ep.query('SELECT path, staged FROM "working_tree_changes" '
                        'WHERE repository_id = ?', (repo["id"],))
        assert not any(r["staged"] for r in left)  # the staging area is empty
        assert sorted(r["path"] for r in left) == sorted(
            c["path"] for c in changes if not c["staged"])
        branch = ep.query('SELECT head_commit_id FROM "branches" WHERE id = ?', (head["id"],))
        assert branch[0]["head_commit_id"] == new["id"]
        again = ep.step("git_commit", _args(tool, repo_path=repo["path"], message="Again"))
        assert not again.ok and "nothing to commit" in again.error.message


def test_reschedule_moves_the_slot_booking(built, rt):
    spec = built["clinic-booking-openapi"]
    appt = next(a for a in spec.rows["appointments"] if a["status"] == "booked")
    free = next(s for s in spec.rows["slots"] if not s["booked"] and s["status"] == "published")
    taken = next(s for s in spec.rows["slots"] if s["booked"] and s["id"] != appt["slot_id"])
    tool = spec.tool("rescheduleAppointment")
    with rt.open(spec) as ep:
        obs = ep.step("rescheduleAppointment", _args(tool, appointmentId=appt["id"],
                                                     slotId=free["id"]))
        assert obs.ok, obs.error
        assert obs.result["slot_id"] == free["id"]
        assert obs.result["starts_at"] == free["starts_at"]
        assert obs.result["reason"] == appt["reason"]  # not given: kept
        slots = {r["id"]: r for r in ep.query('SELECT id, booked, status FROM "slots" '
                                               'WHERE id IN (?, ?)', (appt["slot_id"], free["id"]))}
        assert (bool(slots[appt["slot_id"]]["booked"]), slots[appt["slot_id"]]["status"]) == \
            (False, "published")
        assert (bool(slots[free["id"]]["booked"]), slots[free["id"]]["status"]) == \
            (True, "booked")
        refused = ep.step("rescheduleAppointment", _args(tool, appointmentId=appt["id"],
                                                         slotId=taken["id"]))
        assert not refused.ok
        assert not invariant_violations(spec, ep.path)


def test_clinic_lookups_take_every_argument_the_source_gives_them(built, rt):
    """listClinicians ignored its location, searchPatients matched the given name only,
    listAvailableSlots dropped the last day of its range, registerPatient left the MRN and
    the registration time empty."""
    spec = built["clinic-booking-openapi"]
    links = spec.rows["clinician_locations"]
    loc = max({r["location_id"] for r in links}, key=[r["location_id"] for r in links].count)
    patient = next(p for p in spec.rows["patients"] if p["family_name"])
    slot = next(s for s in spec.rows["slots"] if s["starts_at"] and s["status"] == "published"
                and not s["booked"])
    taken = next(s for s in spec.rows["slots"] if s["booked"] and s["starts_at"])
    with rt.open(spec) as ep:
        at = ep.step("listClinicians", {"locationId": loc})
        assert at.ok, at.error
        assert sorted(c["id"] for c in at.result) == sorted(
            {r["clinician_id"] for r in links if r["location_id"] == loc})
        found = ep.step("searchPatients", {"name": patient["family_name"]})
        assert patient["id"] in [p["id"] for p in found.result]
        day = slot["starts_at"][:10]
        slots = ep.step("listAvailableSlots", {"clinicianId": slot["clinician_id"],
                                               "fromDate": day, "toDate": day})
        assert slot["id"] in [s["id"] for s in slots.result]  # the whole last day
        # "slots that are published and not yet booked": a booked slot is not open
        day = taken["starts_at"][:10]
        open_then = ep.step("listAvailableSlots", {"clinicianId": taken["clinician_id"],
                                                   "fromDate": day, "toDate": day})
        assert open_then.ok and taken["id"] not in [s["id"] for s in open_then.result]
        assert all(s["status"] == "published" and not s["booked"] for s in open_then.result)
        new = ep.step("registerPatient", {"givenName": "Ada", "familyName": "Lovelace",
                                          "birthDate": "1990-12-10"})
        assert new.ok, new.error
        mrns = [p["mrn"] for p in spec.rows["patients"] if p["mrn"]]
        assert new.result["mrn"] and new.result["mrn"] not in mrns
        assert new.result["mrn"][:4] == mrns[0][:4] and len(new.result["mrn"]) == len(mrns[0])
        assert new.result["registered_at"] == new.result["created_at"]


def test_book_appointment_books_and_cancel_keeps_what_it_was_not_given(built, rt):
    """bookAppointment made a checked-in appointment (the first state that says nothing holds
    it), which checkInAppointment then refused; cancelAppointment without a reason erased the
    appointment's reason."""
    spec = built["clinic-booking-openapi"]
    free = next(s for s in spec.rows["slots"] if not s["booked"] and s["status"] == "published")
    patient = spec.rows["patients"][0]
    tool = spec.tool("bookAppointment")
    with rt.open(spec) as ep:
        obs = ep.step("bookAppointment", _args(tool, slotId=free["id"], patientId=patient["id"],
                                               visitType="follow_up", reason="Back pain"))
        assert obs.ok, obs.error
        assert obs.result["status"] == "booked"
        checked = ep.step("checkInAppointment", {"appointmentId": obs.result["id"]})
        assert checked.ok, checked.error
    appt = next(a for a in spec.rows["appointments"] if a["status"] == "booked" and a["reason"])
    with rt.open(spec) as ep:
        obs = ep.step("cancelAppointment", {"appointmentId": appt["id"]})
        assert obs.ok, obs.error
        assert ep.query("SELECT reason FROM appointments WHERE id = ?", (appt["id"],)) == [
            {"reason": appt["reason"]}]


def test_a_patient_cannot_hold_two_appointments_at_overlapping_times(built, rt):
    """"Fails ... when the patient already has an appointment at an overlapping time": a second
    booking over the first one's period was taken (the slot was free, nothing else checked);
    the designer's own tests refuse it once the seed rows hold such a pair."""
    from agent_world.design.tool_designer import design_tools

    spec = built["clinic-booking-openapi"]
    a, b, c = [s for s in spec.rows["slots"] if s["booked"] is not None and not s["booked"]
               and s["status"] == "published"
               and s["clinician_id"] is not None][:3]
    moved = {**b, "starts_at": a["starts_at"], "ends_at": a["ends_at"]}  # another clinician
    rows = {**spec.rows, "slots": [moved if s["id"] == b["id"] else s
                                   for s in spec.rows["slots"]]}
    spec = spec.model_copy(update={"rows": rows})
    patient = spec.rows["patients"][0]["id"]
    tool = spec.tool("bookAppointment")
    with rt.open(spec) as ep:
        def book(slot: dict) -> Any:
            return ep.step("bookAppointment", _args(tool, slotId=slot["id"], patientId=patient,
                                                    visitType="follow_up"))
        assert book(a).ok
        clash = book(moved)
        assert not clash.ok and "overlapping time" in clash.error.message
        apart = book(c) if c["starts_at"] >= a["ends_at"] or c["ends_at"] <= a["starts_at"] \
            else None
        assert apart is None or apart.ok, apart.error
        assert ep.query("SELECT COUNT(*) AS n FROM appointments WHERE patient_id = ? AND "
                        "slot_id = ?", (patient, b["id"])) == [{"n": 0}]
    # a seed that already holds such a pair gives the designer a refusal test of its own
    booked = next(x for x in spec.rows["appointments"] if x["status"] == "booked")
    slot = next(s for s in spec.rows["slots"] if s["id"] == booked["slot_id"])
    rows = {**spec.rows, "slots": [{**s, "starts_at": slot["starts_at"],
                                    "ends_at": slot["ends_at"]} if s["id"] == c["id"] else s
                                   for s in spec.rows["slots"]]}
    design = design_tools(spec.model_copy(update={"rows": rows, "tools": []}), model=None)
    refusals = [t for t in design.tests if t["tool"] == "bookAppointment"
                and "overlapping" in t["name"]]
    assert refusals and refusals[0]["expect"]["ok"] is False


def test_no_schema_tool_repeats_a_source_tool_under_another_name(built):
    """getPatient and get_patient, bookAppointment and create_appointment, searchPatients and
    search_patients: the schema's own tools stood beside the source's doing the same thing."""
    names = {t.name for t in built["clinic-booking-openapi"].tools}
    assert {"getPatient", "bookAppointment", "searchPatients", "listClinicians"} <= names
    assert not names & {"get_patient", "create_appointment", "search_patients",
                        "list_patients", "list_clinicians", "get_appointment",
                        "list_locations", "create_patient"}
    # what no source tool does stays: a clinician found by a fragment of the name
    assert "search_clinicians" in names


def test_a_slot_listing_spans_at_most_the_days_its_source_allows(built, rt):
    """"Within a date range of at most 31 days": any range was listed."""
    spec = built["clinic-booking-openapi"]
    slot = next(s for s in spec.rows["slots"] if s["clinician_id"] is not None)
    start = date.fromisoformat(slot["starts_at"][:10])
    with rt.open(spec) as ep:
        def listed(days: int) -> Any:
            return ep.step("listAvailableSlots", {
                "clinicianId": slot["clinician_id"], "fromDate": start.isoformat(),
                "toDate": (start + timedelta(days=days)).isoformat()})
        assert listed(31).ok
        wide = listed(40)
        assert not wide.ok and "31 days" in wide.error.message


def test_cancelling_inside_the_notice_period_is_a_late_cancellation(built, rt):
    """"Cancelling less than 24 hours before the start is recorded as a late cancellation":
    every cancel was 'cancelled', whenever the appointment started."""
    spec = built["clinic-booking-openapi"]
    appt = next(a for a in spec.rows["appointments"] if a["status"] == "booked")
    clock = datetime.fromisoformat(spec.clock_start)
    for hours, state in ((3, "late_cancelled"), (30, "cancelled"), (-2, "late_cancelled")):
        starts = (clock + timedelta(hours=hours)).isoformat(timespec="seconds")
        rows = {**spec.rows, "appointments": [{**a, "starts_at": starts} if a["id"] == appt["id"]
                                              else a for a in spec.rows["appointments"]]}
        with rt.open(spec.model_copy(update={"rows": rows})) as ep:
            obs = ep.step("cancelAppointment", {"appointmentId": appt["id"]})
            assert obs.ok, obs.error
            assert obs.result["status"] == state, (hours, obs.result)
            assert ep.query("SELECT booked FROM slots WHERE id = ?", (appt["slot_id"],)) == [
                {"booked": False}]  # the slot is freed either way


def test_check_in_closes_a_renewed_loan(built, rt):
    """A renewed loan is still open: checking its copy in left it 'renewed' with no return
    time."""
    spec = built["book-lending-prd"]
    loan = next(r for r in spec.rows["loans"] if r["returned_at"] is None
                and r["status"] == "renewed" and r["copy_id"] is not None)
    copy = next(c for c in spec.rows["copies"] if c["id"] == loan["copy_id"])
    tool = spec.tool("check_in_copy")
    with rt.open(spec) as ep:
        obs = ep.step("check_in_copy", _args(tool, barcode=copy["barcode"], copy_id=copy["id"],
                                             branch_id=copy["current_branch_id"]))
        assert obs.ok, obs.error
        (after,) = ep.query("SELECT status, returned_at FROM loans WHERE id = ?", (loan["id"],))
        assert after["status"] == "returned" and after["returned_at"] is not None


def test_check_in_readies_the_oldest_waiting_hold_on_the_title(built, rt):
    """"When a copy is returned, the oldest waiting hold for that title is marked ready and
    the member has 5 days to collect it": check-in closed the loan and left every hold
    waiting."""
    spec = built["book-lending-prd"]
    waiting = [h for h in spec.rows["holds"] if h["status"] == "waiting"]
    copy = next(c for c in spec.rows["copies"] if c["status"] == "on_loan"
                and sum(h["title_id"] == c["title_id"] for h in waiting) >= 2)
    on_title = sorted((h for h in waiting if h["title_id"] == copy["title_id"]),
                      key=lambda h: (h["placed_at"] is not None, str(h["placed_at"]), h["id"]))
    tool = spec.tool("check_in_copy")
    with rt.open(spec) as ep:
        obs = ep.step("check_in_copy", _args(tool, barcode=copy["barcode"], copy_id=copy["id"],
                                             branch_id=copy["current_branch_id"]))
        assert obs.ok, obs.error
        today = date.fromisoformat(ep.query("SELECT updated_at FROM copies WHERE id = ?",
                                            (copy["id"],))[0]["updated_at"][:10])
        after = {h["id"]: h for h in ep.query("SELECT id, status, ready_until FROM holds "
                                              "WHERE title_id = ?", (copy["title_id"],))}
        shelved = ep.query("SELECT status FROM copies WHERE id = ?", (copy["id"],))
    first, rest = on_title[0], on_title[1:]
    assert after[first["id"]]["status"] == "ready"
    assert after[first["id"]]["ready_until"] == (today + timedelta(days=5)).isoformat()
    assert all(after[h["id"]]["status"] == "waiting" for h in rest)
    # the copy is put aside for that member, not back on the open shelf
    assert shelved == [{"status": "on_hold_shelf"}]
    free = next(c for c in spec.rows["copies"] if c["status"] == "on_loan"
                and not any(h["title_id"] == c["title_id"] for h in waiting))
    with rt.open(spec) as ep:
        assert ep.step("check_in_copy", _args(tool, barcode=free["barcode"], copy_id=free["id"],
                                              branch_id=free["current_branch_id"])).ok
        assert "holds" not in ep.diff().tables  # no hold waits on that title
        assert ep.query("SELECT status FROM copies WHERE id = ?", (free["id"],)) == [
            {"status": "available"}]


def test_a_copy_on_the_hold_shelf_goes_only_to_the_member_whose_hold_is_ready(built, rt):
    """A copy put aside for a ready hold: another member's check-out is refused and changes
    nothing; the holder's check-out lends it and collects the hold."""
    spec = built["book-lending-prd"]
    waiting = [h for h in spec.rows["holds"] if h["status"] == "waiting"]
    members = {m["id"]: m for m in spec.rows["members"]}
    unpaid: dict[int, float] = {}
    for f in spec.rows["fines"]:
        if f["status"] == "unpaid":
            unpaid[f["member_id"]] = unpaid.get(f["member_id"], 0) + (f["amount"] or 0)

    def may_borrow(m: dict) -> bool:
        return m["status"] == "active" and unpaid.get(m["id"], 0) <= 10

    copy, hold = next((c, min((h for h in waiting if h["title_id"] == c["title_id"]),
                              key=lambda h: (h["placed_at"] is not None, str(h["placed_at"]),
                                             h["id"])))
                      for c in spec.rows["copies"] if c["status"] == "on_loan"
                      and any(h["title_id"] == c["title_id"] for h in waiting))
    holder = members[hold["member_id"]]
    other = next(m for m in spec.rows["members"] if may_borrow(m) and m["id"] != holder["id"])
    with rt.open(spec) as ep:
        assert ep.step("check_in_copy", _args(spec.tool("check_in_copy"), copy_id=copy["id"],
                                              barcode=copy["barcode"],
                                              branch_id=copy["current_branch_id"])).ok
        before = ep.diff()
        refused = ep.step("check_out_copy", {"barcode": copy["barcode"],
                                             "card_number": other["card_number"]})
        assert not refused.ok and "kept for another member" in refused.error.message
        assert ep.diff() == before
        if not may_borrow(holder):
            return  # the holder may not borrow (suspended, owing): nothing more to check
        lent = ep.step("check_out_copy", {"barcode": copy["barcode"],
                                          "card_number": holder["card_number"]})
        assert lent.ok, lent.error
        assert lent.result["status"] == "on_loan"
        assert lent.result["loan"]["member_id"] == holder["id"]
        assert ep.query("SELECT status FROM holds WHERE id = ?", (hold["id"],)) == [
            {"status": "collected"}]


def test_cancelling_a_ready_hold_gives_its_copy_back_to_the_open_shelf(built, rt):
    """A copy kept for a hold that is then cancelled is available to anyone again (it was
    left on the hold shelf, where nobody could take it); a waiting hold's cancel frees
    nothing."""
    spec = built["book-lending-prd"]
    waiting = [h for h in spec.rows["holds"] if h["status"] == "waiting"]
    copy = next(c for c in spec.rows["copies"] if c["status"] == "on_loan"
                and any(h["title_id"] == c["title_id"] for h in waiting))
    with rt.open(spec) as ep:
        assert ep.step("check_in_copy", _args(spec.tool("check_in_copy"), copy_id=copy["id"],
                                              barcode=copy["barcode"],
                                              branch_id=copy["current_branch_id"])).ok
        (ready,) = ep.query("SELECT id FROM holds WHERE title_id = ? AND status = 'ready' "
                            "AND updated_at = (SELECT updated_at FROM copies WHERE id = ?)",
                            (copy["title_id"], copy["id"]))
        still = ep.query("SELECT id FROM holds WHERE title_id = ? AND status = 'waiting'",
                         (copy["title_id"],))
        if still:  # a waiting hold's cancel leaves the kept copy where it is
            assert ep.step("cancel_hold", {"hold_id": still[0]["id"]}).ok
            assert ep.query("SELECT status FROM copies WHERE id = ?", (copy["id"],)) == [
                {"status": "on_hold_shelf"}]
        def shelves() -> dict[str, int]:
            return {r["status"]: r["n"] for r in ep.query(
                "SELECT status, COUNT(*) AS n FROM copies WHERE title_id = ? GROUP BY status",
                (copy["title_id"],))}

        before = shelves()
        assert ep.step("cancel_hold", {"hold_id": ready["id"]}).ok
        after = shelves()
        # one kept copy of the title back on the open shelf, nothing else moved
        assert after.get("on_hold_shelf", 0) == before["on_hold_shelf"] - 1
        assert after.get("available", 0) == before.get("available", 0) + 1


def test_checking_in_an_overdue_loan_charges_the_fine_the_source_states(built, rt):
    """"An overdue loan accrues a fine of 0.25 per day, capped at the copy's replacement
    cost": check-in closed a late loan and charged nothing."""
    spec = built["book-lending-prd"]
    today = spec.clock_start[:10]
    copies = {c["id"]: c for c in spec.rows["copies"]}
    titles = {t["id"]: t for t in spec.rows["titles"]}
    open_loans = [r for r in spec.rows["loans"] if r["status"] in ("checked_out", "renewed")
                  and copies.get(r["copy_id"], {}).get("status") == "on_loan"]
    late = next(r for r in open_loans if r["due_on"] and r["due_on"][:10] < today)
    on_time = next((r for r in open_loans if r["due_on"] and r["due_on"][:10] >= today), None)
    tool = spec.tool("check_in_copy")
    copy = copies[late["copy_id"]]
    with rt.open(spec) as ep:
        assert ep.step("check_in_copy", _args(tool, copy_id=copy["id"], barcode=copy["barcode"],
                                              branch_id=copy["current_branch_id"])).ok
        (fine,) = ep.diff().tables["fines"].inserted
    days = (date.fromisoformat(today) - date.fromisoformat(late["due_on"][:10])).days
    cost = titles[copy["title_id"]]["replacement_cost"]
    assert (fine["loan_id"], fine["member_id"], fine["status"]) == (
        late["id"], late["member_id"], "unpaid")
    assert fine["amount"] == pytest.approx(min(round(0.25 * days, 2), cost))
    if on_time is not None:
        copy = copies[on_time["copy_id"]]
        with rt.open(spec) as ep:
            assert ep.step("check_in_copy", _args(tool, copy_id=copy["id"],
                                                  barcode=copy["barcode"],
                                                  branch_id=copy["current_branch_id"])).ok
            assert "fines" not in ep.diff().tables  # returned in time: nothing owed


def test_a_member_owing_more_than_the_limit_cannot_borrow_until_the_fines_go(built, rt):
    """"Members with more than 10.00 in unpaid fines cannot borrow until they pay": check-out
    only asked that the member be active."""
    spec = built["book-lending-prd"]
    owed: dict[int, list[dict]] = {}
    for f in spec.rows["fines"]:
        if f["status"] == "unpaid":
            owed.setdefault(f["member_id"], []).append(f)
    member = next(m for m in spec.rows["members"] if m["status"] == "active"
                  and sum(f["amount"] for f in owed.get(m["id"], [])) > 10)
    copy = next(c for c in spec.rows["copies"] if c["status"] == "available")
    args = {"barcode": copy["barcode"], "card_number": member["card_number"]}
    with rt.open(spec) as ep:
        refused = ep.step("check_out_copy", args)
        assert not refused.ok and "10.00" in refused.error.message and ep.diff().empty
        for fine in owed[member["id"]]:
            assert ep.step("waive_fine", _args(spec.tool("waive_fine"), fine_id=fine["id"],
                                               reason="Returned in time")).ok
        lent = ep.step("check_out_copy", args)
        assert lent.ok, lent.error
        assert lent.result["loan"]["member_id"] == member["id"]


def test_a_create_takes_what_a_new_record_has_and_nothing_it_gets_later(built, rt):
    """place_hold asked for `placed_at` and `ready_until` ("set when a copy is put aside") and
    let the member out; add_copies asked for the current branch beside the home one;
    create_order took `shipped_at` and `delivered_at` of an order not yet paid."""
    spec = built["book-lending-prd"]
    hold = spec.tool("place_hold").parameters
    assert set(hold["properties"]) == {"title_id", "member_id", "pickup_branch_id"}
    assert set(hold["required"]) == {"title_id", "member_id", "pickup_branch_id"}
    copies = spec.tool("add_copies").parameters
    assert "current_branch_id" not in copies["properties"] and "barcode" in copies["required"]
    order = built["sqlite"].tool("create_order").parameters["properties"]
    assert not {"ordered_at", "shipped_at", "delivered_at", "cancelled_at"} & set(order)
    home = spec.rows["branches"][1]["id"]
    title = spec.rows["titles"][0]["id"]
    with rt.open(spec) as ep:
        obs = ep.step("add_copies", {"title_id": title, "home_branch_id": home,
                                     "barcode": "9990000000001"})
        assert obs.ok, obs.error
        assert obs.result["current_branch_id"] == home and obs.result["status"] == "available"


def test_git_log_lists_the_newest_commits_first(built, rt):
    """git_log with max_count kept the oldest commits (it listed by ascending id)."""
    spec = built["git"]
    commits = spec.rows["commits"]
    repo_of = {r["id"]: r["path"] for r in spec.rows["repositories"]}
    repo = max(repo_of, key=lambda r: sum(c["repository_id"] == r for c in commits))
    ids = sorted(c["id"] for c in commits if c["repository_id"] == repo)
    assert len(ids) >= 2
    with rt.open(spec) as ep:
        obs = ep.step("git_log", {"repo_path": repo_of[repo], "max_count": 1})
        assert obs.ok, obs.error
        assert [c["id"] for c in obs.result] == [ids[-1]]


def test_an_edit_given_no_field_is_refused(built, rt):
    """update_commit, update_branch, update_member said "at least one" field and, given none,
    only stamped updated_at."""
    for env, tool, table in (("git", "update_branch", "branches"),
                             ("book-lending-prd", "update_member", "members")):
        spec = built[env]
        key = next(p for p in spec.tool(tool).parameters["required"])
        row = spec.rows[table][0]
        with rt.open(spec) as ep:
            obs = ep.step(tool, {key: row["id"]})
            assert not obs.ok and obs.error.kind == "tool_error", (tool, obs)
            assert not ep.diff().tables, tool


def test_place_hold_only_when_no_copy_is_available_at_the_pickup_branch(built, rt):
    spec = built["book-lending-prd"]
    copy = next(c for c in spec.rows["copies"] if c["status"] == "available")
    tool = spec.tool("place_hold")
    member = spec.rows["members"][0]
    with rt.open(spec) as ep:
        obs = ep.step("place_hold", _args(tool, title_id=copy["title_id"],
                                          pickup_branch_id=copy["current_branch_id"],
                                          member_id=member["id"]))
        assert not obs.ok and "no copy is available" in obs.error.message
    shelved = {(c["title_id"], c["current_branch_id"]) for c in spec.rows["copies"]
               if c["status"] == "available"}
    branch = next(b["id"] for b in spec.rows["branches"]
                  if (copy["title_id"], b["id"]) not in shelved)
    with rt.open(spec) as ep:
        obs = ep.step("place_hold", _args(tool, title_id=copy["title_id"],
                                          pickup_branch_id=branch, member_id=member["id"]))
        assert obs.ok, obs.error


@pytest.mark.parametrize("name", ["clinic-booking-openapi", "bikeshare"])
def test_random_writes_keep_the_declared_invariants(built, rt, name):
    """A walk of write calls drawn from the built tests (as the semantic audit's) leaves no
    invariant violation: a bike is in use iff a trip in progress holds it, a slot holds at
    most one live appointment and is booked iff it does."""
    spec = built[name]
    writes = {t.name for t in spec.tools if t.mutates}
    calls = [t for t in spec.tests if t.tool in writes]
    rng = random.Random(0)
    with rt.open(spec, seed=0) as ep:
        for _ in range(150):
            test = rng.choice(calls)
            ep.step(test.tool, test.arguments)
        assert [v.message for v in invariant_violations(spec, ep.path)] == []


def test_a_held_parent_is_changed_only_through_what_holds_it(built, rt):
    spec = built["clinic-booking-openapi"]
    appt = next(a for a in spec.rows["appointments"] if a["status"] == "booked")
    with rt.open(spec) as ep:
        for tool, args in (("set_slot_status", {"slot_id": appt["slot_id"],
                                                "status": "cancelled"}),
                           ("delete_appointment", {"appointment_id": appt["id"]})):
            if any(t.name == tool for t in spec.tools):
                obs = ep.step(tool, args)
                assert not obs.ok, tool
    bikes = built["bikeshare"]
    bike = next(b for b in bikes.rows["bikes"] if b["status"] == "available")
    rider = bikes.rows["riders"][0]
    with rt.open(bikes) as ep:
        first = ep.step("startTrip", {"riderId": rider["id"], "bikeId": bike["id"]})
        assert first.ok, first.error
        assert ep.query('SELECT status FROM "bikes" WHERE id = ?', (bike["id"],))[0][
            "status"] == "in_use"
        second = ep.step("startTrip", {"riderId": rider["id"], "bikeId": bike["id"]})
        assert not second.ok  # one trip in progress per bike
