"""The deep-research miner: questions, evidence, offline schema derivation, seed rows,
complexification (validated, monotonic, deterministic) and the LLM path with a fake model."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter

import pytest

from agent_world.envs.database import build_template
from agent_world.envs.spec import EnvSpec
from agent_world.mining import complexify_step
from agent_world.mining.complexify_step import complexify
from agent_world.mining.draft_step import draft_database
from agent_world.mining.llm_miner import (
    MinedTheme,
    gather_evidence,
    mine_theme,
    plan_questions,
)
from agent_world.mining.offline.complexify import (
    ComplexifyResult,
    _Complexifier,
    complexify_offline,
)
from agent_world.mining.offline.naming import plural, singular, tokens
from agent_world.mining.sources.base import SourceDocument, ToolDescription
from agent_world.mining.validation import MiningError, validate_database
from agent_world.models import set_chat_model
from tests.unit.miner_docs import (
    DOCS,
    calendar_doc,
    clinic_doc,
    git_doc,
    prd_doc,
    time_doc,
)


@pytest.fixture(scope="module")
def mined() -> dict[str, MinedTheme]:
    set_chat_model("miner", None)
    return {key: mine_theme(make(), iterations=3, seed=0) for key, make in DOCS.items()}


def _fk_map(spec: EnvSpec) -> dict[str, str]:
    return {f"{t.name}.{c.name}": c.foreign_key for t in spec.tables for c in t.columns
            if c.foreign_key}


# ---------------------------------------------------------------------------------------------
# Questions and evidence
# ---------------------------------------------------------------------------------------------


def test_questions_cover_entities_relations_lifecycles_and_volumes():
    qs = plan_questions(git_doc())
    text = "\n".join(qs).lower()
    assert len(qs) >= 6
    assert "branch" in text and "commit" in text and "repository" in text
    assert "states or lifecycle" in text and "relate" in text and "volumes" in text
    assert any("git_commit" in q for q in qs)  # a writing tool gets its own question


def test_evidence_reads_argument_types_enums_and_formats():
    ev = gather_evidence(git_doc(), plan_questions(git_doc()))
    args = {e.ref: e.data for e in ev if e.kind == "argument"}
    assert args["arg:git_branch.branch_type"]["enum"] == ["local", "remote", "all"]
    assert args["arg:git_branch.branch_type"]["enum_from"] == "description"
    assert args["arg:git_log.start_timestamp"]["type"] == "string"  # seen through anyOf
    assert args["arg:git_add.files"]["items"]["type"] == "array" or \
        args["arg:git_add.files"]["type"] == "array"
    assert all(e.question for e in ev if e.kind in ("tool", "argument"))

    tz = {e.ref: e.data for e in gather_evidence(time_doc(), []) if e.kind == "argument"}
    assert tz["arg:get_current_time.timezone"]["enum"] is None  # quoted examples, not an enum

    clinic = {e.ref: e.data for e in gather_evidence(clinic_doc(), []) if e.kind == "argument"}
    assert clinic["arg:createPatient.email"]["format"] == "email"  # request body flattened
    assert clinic["arg:createAppointment.start_time"]["format"] == "date-time"
    assert clinic["arg:listAppointments.status"]["enum_from"] == "schema"
    assert {e.kind for e in gather_evidence(prd_doc(), [])} >= {"feature", "entity"}


def test_evidence_uses_web_search_when_configured():
    asked: list[str] = []

    def search(query: str) -> list[str]:
        asked.append(query)
        if len(asked) == 2:
            raise TimeoutError("search backend down")
        return [f"Appointments are scheduled, confirmed or cancelled ({len(asked)})", "x", "y",
                "z"]

    qs = plan_questions(clinic_doc())
    ev = gather_evidence(clinic_doc(), qs, search=search)
    web = [e for e in ev if e.kind == "web"]
    assert asked == qs[:6]
    assert any(e.data.get("error") for e in web)  # a failing search is evidence, not a crash
    assert sum(1 for e in web if not e.data.get("error")) == 5 * 3  # at most 3 per query
    assert all(e.question in qs for e in web)


# ---------------------------------------------------------------------------------------------
# Offline derivation
# ---------------------------------------------------------------------------------------------


def test_draft_fills_theme_and_provenance_and_leaves_tools_empty():
    doc = time_doc()
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    assert spec.tools == [] and spec.tests == []
    assert spec.name == "time"
    assert spec.theme.name == "time" and spec.theme.source_kind == "mcp"
    assert spec.theme.source_ref == "uvx mcp-server-time"
    assert spec.theme.raw_descriptions == [
        "get_current_time: Get current time in a specific timezone",
        "convert_time: Convert time between timezones"]
    assert spec.theme.taxonomy.l1 == "Productivity & Time" and spec.theme.taxonomy.l3 == "time"
    assert spec.provenance.created_by == "miner" and spec.provenance.source_kind == "mcp"
    it0 = spec.provenance.stats["iterations"][0]
    assert it0["iteration"] == 0 and it0["tables"] == len(spec.tables)
    assert it0["rows"] == spec.row_count() and it0["fingerprint"] == spec.fingerprint


def test_a_source_read_from_another_folder_drafts_the_same_environment():
    """The theme keeps where a source came from without its folders: the default sqlite
    server's database lives in the arena home, and a path in the theme gave the same source
    another fingerprint (so other synthesized tasks) in every home."""
    specs = []
    for home in ("/tmp/home-a", "/srv/b"):
        doc = time_doc().model_copy(update={
            "reference": f"/opt/venv/bin/mcp-server-time --db-path {home}/sources/db.sqlite"})
        specs.append(draft_database(doc, gather_evidence(doc, []), seed=0))
    assert specs[0].theme.source_ref == "mcp-server-time --db-path db.sqlite"
    assert specs[0].fingerprint == specs[1].fingerprint


def test_time_server_gives_timezones_and_conversions():
    doc = time_doc()
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    assert [t.name for t in spec.tables] == ["timezones", "time_conversions"]
    fks = _fk_map(spec)
    assert fks["time_conversions.source_timezone_id"] == "timezones.id"
    assert fks["time_conversions.target_timezone_id"] == "timezones.id"
    zones = {r["name"] for r in spec.rows["timezones"]}
    assert {"America/New_York", "Europe/London", "Asia/Kolkata", "UTC"} <= zones
    conv = spec.table("time_conversions")
    assert not conv.column("time").nullable
    assert all(len(r["time"]) == 5 and r["time"][2] == ":" for r in spec.rows["time_conversions"])


def test_git_server_gives_repositories_branches_commits():
    doc = git_doc()
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    names = {t.name for t in spec.tables}
    assert {"repositories", "branches", "commits", "branch_commits", "repository_files"} <= names
    fks = _fk_map(spec)
    assert fks["branches.repository_id"] == "repositories.id"
    assert fks["branches.base_branch_id"] == "branches.id"  # base_branch -> self reference
    assert fks["commits.repository_id"] == "repositories.id"
    assert fks["branch_commits.commit_id"] == "commits.id"  # "commit sha that branch contains"
    branches = spec.table("branches")
    assert branches.column("branch_type").enum == ["local", "remote"]  # 'all' is a filter
    assert ["repository_id", "name"] in branches.unique_together
    assert "checked_out" in branches.column("status").enum  # git_checkout
    assert spec.table("repositories").column("path").unique
    assert spec.table("commits").column("sha").unique  # git_show(revision)
    assert not spec.table("commits").column("repository_id").nullable
    shas = [r["sha"] for r in spec.rows["commits"] if r["sha"]]
    assert all(len(s) == 40 for s in shas)


def test_clinic_openapi_gives_patients_doctors_appointments():
    doc = clinic_doc()
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    assert [t.name for t in spec.tables] == ["patients", "doctors", "appointments"]
    fks = _fk_map(spec)
    assert fks["appointments.patient_id"] == "patients.id"
    assert fks["appointments.doctor_id"] == "doctors.id"
    appt = spec.table("appointments")
    assert appt.column("status").enum[0] == "scheduled"
    assert {"cancelled", "confirmed", "completed"} <= set(appt.column("status").enum)
    assert appt.column("start_time").type == "datetime" and not appt.column("start_time").nullable
    assert spec.table("patients").column("date_of_birth").type == "date"
    assert spec.table("patients").column("email").unique
    for r in spec.rows["appointments"]:  # time consistency: end after start
        if r["end_time"]:
            assert r["end_time"] > r["start_time"]
    emails = [r["email"] for r in spec.rows["patients"] if r["email"]]
    assert all("@" in e for e in emails) and len(set(emails)) == len(emails)


def test_prd_features_give_lifecycle_members_comments_attachments():
    doc = prd_doc()
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    names = {t.name for t in spec.tables}
    assert {"users", "projects", "tasks", "project_members", "task_comments",
            "task_attachments"} <= names
    assert spec.table("tasks").column("status").enum == ["todo", "in_progress", "done"]
    fks = _fk_map(spec)
    assert fks["tasks.assignee_id"] == "users.id"  # a person role maps to the person entity
    assert fks["projects.owner_id"] == "users.id"
    assert fks["tasks.project_id"] == "projects.id"
    assert ["project_id", "user_id"] in spec.table("project_members").unique_together


def test_array_argument_becomes_child_table():
    doc = calendar_doc()
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    assert [t.name for t in spec.tables] == ["calendars", "events", "event_attendees"]
    fks = _fk_map(spec)
    assert fks["events.calendar_id"] == "calendars.id"
    assert fks["event_attendees.event_id"] == "events.id"
    assert all("@" in r["email"] for r in spec.rows["event_attendees"])


def test_a_batch_of_the_record_itself_is_no_child_table():
    """plane's update_issue(issues=["OPS-781"]) mined a table `issue_issues` (issue_id, issue)
    that repeated the issues; pinecone's upsert_records(records=[...]) a `record_records`."""
    doc = SourceDocument(name="tracker", kind="tool-list", reference="tracker.json", tools=[
        ToolDescription(name="update_issue", description="Update issues in bulk",
                        input_schema={"type": "object", "properties": {
                            "issue_id": {"type": "string"},
                            "issues": {"type": "array", "items": {"type": "string"}},
                            "labels": {"type": "array", "items": {"type": "string"}}},
                            "required": ["issue_id"]}),
        ToolDescription(name="list_issues", description="List issues", read_only=True,
                        input_schema={"type": "object", "properties": {}})])
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    names = [t.name for t in spec.tables]
    assert "issues" in names and "issue_issues" not in names
    assert "issue_labels" in names  # a list of other values still is one


def test_a_page_id_names_a_page_record():
    """A browser's or a wiki's page_id names a page ("page" is otherwise a value noun: a page
    of results); Chrome DevTools' hover(pageId, uid) and Notion's page properties had a
    page_id column and no pages table."""
    obj = {"type": "object", "properties": {"pageId": {"type": "integer"},
                                            "uid": {"type": "string"}}, "required": ["pageId"]}
    doc = SourceDocument(name="browser", kind="tool-list", reference="browser.json", tools=[
        ToolDescription(name="close_page", description="Close a page",
                        input_schema={"type": "object", "properties": {
                            "pageId": {"type": "integer"}}, "required": ["pageId"]}),
        ToolDescription(name="hover", description="Hover over an element", input_schema=obj),
        ToolDescription(name="take_screenshot", description="Screenshot a page",
                        input_schema=obj)])
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    tables = {t.name for t in spec.tables}
    assert "pages" in tables
    # a hover or a screenshot acts on the page: no table of hovers or of pictures
    assert not tables & {"hovers", "screenshots", "takes"}
    # complexified too: a tab has no fetched URL to find links on
    spec = mine_theme(doc, iterations=1, seed=0).spec
    assert "pages" in {t.name for t in spec.tables}


def test_words_singular_plural():
    for one, many in [("repository", "repositories"), ("branch", "branches"),
                      ("timezone", "timezones"), ("status", "statuses"), ("person", "people"),
                      ("address", "addresses"), ("history", "history"), ("patient", "patients"),
                      ("time_conversion", "time_conversions"), ("fetch", "fetches")]:
        assert plural(one) == many
        assert singular(many) == one
    # a Latin -us after a consonant ('omnifocuses' is no plural of 'omnifocuse'), -i words'
    # plurals ('apis'), products, and acronyms' plurals that are no 'idses'
    for one, many in [("omnifocus", "omnifocuses"), ("servicebus", "servicebuses"),
                      ("radius", "radiuses"), ("house", "houses"), ("cause", "causes"),
                      ("abuse", "abuses"), ("api", "apis"), ("wiki", "wikis"),
                      ("emoji", "emojis"), ("redis", "redis"), ("whois", "whois"),
                      ("analysis", "analyses"), ("leave", "leaves"), ("bus", "buses"),
                      ("alias", "aliases")]:
        assert plural(one) == many, one
        assert singular(many) == one, many
    for many in ("message_ids", "node_js", "reserved_ips", "minutely_15s", "related_apis"):
        assert plural(many) == many
    assert tokens("listAppointmentsByDoctorId") == [
        "list", "appointments", "by", "doctor", "id"]


# ---------------------------------------------------------------------------------------------
# Every mined database: valid, big enough, monotonic, deterministic, distinct
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", list(DOCS))
def test_mined_database_is_valid_and_big_enough(mined, key, tmp_path):
    spec = mined[key].spec
    path = build_template(spec, tmp_path / "t.sqlite")
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        for t in spec.tables:
            n = conn.execute(f'SELECT COUNT(*) FROM "{t.name}"').fetchone()[0]
            assert n == len(spec.rows.get(t.name, []))
    finally:
        conn.close()
    stats = spec.stats()
    assert stats["tables"] >= 3 and stats["foreign_keys"] >= 2 and stats["rows"] >= 100
    assert [i.iteration for i in mined[key].iterations] == [0, 1, 2, 3]
    assert spec.provenance.stats["semantic_violations"] == dict.fromkeys(
        spec.provenance.stats["semantic_violations"], 0)
    assert spec.tools == []


@pytest.mark.parametrize("key", list(DOCS))
def test_complexification_is_monotonic_and_recorded(mined, key):
    its = mined[key].iterations
    for before, after in zip(its, its[1:], strict=False):
        assert after.tables >= before.tables
        assert after.rows > before.rows  # more data every iteration, with edge cases
        assert after.constraints >= before.constraints
        assert after.foreign_keys >= before.foreign_keys
        assert after.changes  # what was done is recorded
    assert its[-1].fingerprint == mined[key].spec.fingerprint
    assert mined[key].spec.version == 4
    notes = "\n".join(mined[key].spec.provenance.notes)
    assert "iteration 3:" in notes and "edge cases" in notes


def test_complexification_follows_the_source_not_a_schedule(mined):
    """No users/tags/notes/history tables unless the source speaks of them; what an entity
    implies is added where the source names it."""
    for key in ("time", "fetch", "calendar"):
        names = {t.name for t in mined[key].spec.tables}
        assert not {n for n in names if n in ("users", "tags") or n.endswith(
            ("_tags", "_notes", "_history", "_attachments"))}, (key, names)
    git = mined["git"].spec
    commits = {c.name for c in git.table("commits").columns}
    assert {"author_name", "author_email", "parent_commit_id"} <= commits
    assert {"commit_file_changes", "working_tree_changes"} <= {t.name for t in git.tables}
    by_id = {r["id"]: r for r in git.rows["commits"]}
    # a branch points at a commit of its repository made before it (the one it was branched
    # off), unless the repository had none yet: 47 of 119 branches had no head before
    if "head_commit_id" in git.rows["branches"][0]:
        made = {c["id"]: c for c in git.rows["commits"]}
        for b in git.rows["branches"]:
            if b["head_commit_id"] is not None:
                head = made[b["head_commit_id"]]
                assert head["repository_id"] == b["repository_id"]
                assert head["created_at"] <= (b["created_at"] or head["created_at"])
        headless = [b for b in git.rows["branches"] if b["head_commit_id"] is None and any(
            c["repository_id"] == b["repository_id"] and c["created_at"] <= (b["created_at"] or "")
            for c in git.rows["commits"])]
        # a few edge-case rows keep every nullable column empty on purpose
        assert len(headless) <= 0.1 * len(git.rows["branches"]), len(headless)
    for r in git.rows["commits"]:  # a parent is an older commit of the same repository
        p = by_id.get(r["parent_commit_id"])
        if p is not None:
            assert p["repository_id"] == r["repository_id"]
            assert p["created_at"] <= r["created_at"]
    pages = mined["fetch"].spec.rows["pages"]
    assert pages and {200, 404} & {p["status_code"] for p in pages}
    text = {"text/html", "text/markdown", "text/plain", "application/json", "text/csv"}
    assert all(p["body"] for p in pages if p["status_code"] == 200 and p["content_type"] in text)
    # pages grown later too: HTTP codes, no body on an error, the byte length of the body
    assert {p["status_code"] for p in pages} <= {200, 201, 204, 301, 302, 304, 400, 401, 403,
                                                 404, 410, 429, 500, 502, 503}
    assert all(p["body"] is None for p in pages if p["status_code"] >= 400)
    assert all(p["byte_length"] == len(p["body"].encode()) for p in pages if p["body"])
    # the body is what the content type says: a redirect or an error page is HTML, a JSON
    # page parses, a CSV one has a header, a PDF or an image has no text body but a size
    assert all(p["content_type"] == "text/html" for p in pages if p["status_code"] != 200)
    for p in pages:
        if p["status_code"] != 200:
            continue
        if p["content_type"] == "application/json":
            assert json.loads(p["body"])["title"]
        elif p["content_type"] == "text/csv":
            assert p["body"].startswith("id,")
        elif p["content_type"] in ("text/html", "text/markdown"):
            assert p["body"].startswith("# ")
        elif p["content_type"] not in text:
            assert p["body"] is None and p["byte_length"] > 0
    fetches = mined["fetch"].spec.rows["fetches"]
    by_page = {p["id"]: p for p in pages}
    assert all(by_page[f["page_id"]]["url"] == f["url"] for f in fetches if f.get("page_id"))


def test_time_conversions_follow_daylight_saving_rules(mined):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    spec = mined["time"].spec
    zones = {z["id"]: z for z in spec.rows["timezones"]}
    assert zones and all(z["observes_dst"] == (z["name"] in (
        "America/New_York", "Europe/London", "Europe/Paris", "Australia/Sydney",
        "America/Los_Angeles")) for z in zones.values() if z["name"] in (
        "America/New_York", "Europe/London", "Europe/Paris", "Australia/Sydney",
        "America/Los_Angeles", "Asia/Kolkata", "Asia/Tokyo", "UTC"))
    checked = 0
    for r in spec.rows["time_conversions"]:
        if not r.get("converted_time"):
            continue
        hh, mm = map(int, r["time"].split(":"))
        d = datetime.fromisoformat(r["on_date"])
        local = datetime(d.year, d.month, d.day, hh, mm,
                         tzinfo=ZoneInfo(zones[r["source_timezone_id"]]["name"]))
        there = local.astimezone(ZoneInfo(zones[r["target_timezone_id"]]["name"]))
        assert r["converted_time"] == there.strftime("%H:%M")
        assert r["source_is_dst"] == bool(local.dst())
        checked += 1
    assert checked >= 20
    ny = next(z["id"] for z in zones.values() if z["name"] == "America/New_York")
    moves = [t for t in spec.rows["dst_transitions"] if t["timezone_id"] == ny]
    assert {(t["offset_before"], t["offset_after"]) for t in moves} == {
        ("-05:00", "-04:00"), ("-04:00", "-05:00")}


def test_complexification_adds_edge_cases_and_skew(mined):
    spec = mined["clinic"].spec
    rows = spec.rows
    # NULLs in nullable columns; a scheduled period always has its end
    assert any(r.get("reason") is None for r in rows["appointments"])
    assert all(r["end_time"] > r["start_time"] for r in rows["appointments"])
    # duplicate-by-name rows with different ids
    names = Counter(r["name"] for r in rows["doctors"])
    assert names.most_common(1)[0][1] >= 2
    # the declared states stay as declared: no terminal state the source did not name
    states = {r["status"] for r in rows["appointments"]}
    assert "cancelled" in states and states <= {"scheduled", "confirmed", "completed",
                                                "cancelled"}
    # boundary dates where a record's lifecycle allows them
    moved = [int(m) for m in re.findall(r"(\d+) created at boundary",
                                        " ".join(spec.provenance.notes))]
    assert len(moved) == 3 and sum(moved) >= 1
    # Zipf-like popularity of parents
    counts = Counter(r["doctor_id"] for r in rows["appointments"])
    assert counts.most_common(1)[0][1] / sum(counts.values()) > 2 / len(rows["doctors"])


def test_complexify_never_loses_content(monkeypatch):
    doc = time_doc()
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)

    def lossy(s: EnvSpec, iteration: int, seed: int, doc=None):  # a valid database with fewer rows
        rows = {**s.rows, "time_conversions": s.rows["time_conversions"][:5]}
        return ComplexifyResult(s.tables, rows, {}, [], ["lossy"])

    monkeypatch.setattr(complexify_step, "complexify_offline", lossy)
    with pytest.raises(MiningError, match="must not remove content: rows 82 -> 47"):
        complexify(spec, 1, seed=0)

    def dropping(s: EnvSpec, iteration: int, seed: int, doc=None):
        res = _Complexifier(s, iteration, seed).run()
        res.tables = [t for t in res.tables if t.name != "time_conversions"]
        res.rows.pop("time_conversions")
        for t in res.tables:  # nothing may point at the dropped table
            t.columns = [c for c in t.columns
                         if not (c.foreign_key or "").startswith("time_conversions.")]
        return res

    monkeypatch.setattr(complexify_step, "complexify_offline", dropping)
    with pytest.raises(MiningError, match=r"foreign_keys \d -> \d|dropped table\(s\)"):
        complexify(spec, 1, seed=0)


def test_complexify_validates_the_database(monkeypatch):
    doc = time_doc()
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    real = complexify_offline

    def dangling(s: EnvSpec, iteration: int, seed: int, doc=None):
        res = real(s, iteration, seed, doc)
        res.rows["time_conversions"][0]["source_timezone_id"] = 99999
        return res

    monkeypatch.setattr(complexify_step, "complexify_offline", dangling)
    with pytest.raises(MiningError, match=r"rows\[time_conversions\]\[0\]"):
        complexify(spec, 1, seed=0)


def test_validate_database_names_the_problem(mined):
    data = json.loads(mined["git"].spec.to_json())
    data["tables"][1]["columns"][1]["foreign_key"] = "nowhere.id"
    with pytest.raises(MiningError, match="unknown table 'nowhere'"):
        validate_database(data)
    data = json.loads(mined["git"].spec.to_json())
    data["rows"]["branches"][0]["branch_type"] = "sideways"
    with pytest.raises(MiningError, match=r"rows\[branches\]\[0\].*(CHECK|not one of)"):
        validate_database(data)


def test_same_seed_same_fingerprint_other_seed_other_rows(mined):
    again = mine_theme(git_doc(), iterations=3, seed=0)
    assert again.spec.fingerprint == mined["git"].spec.fingerprint
    assert [i.fingerprint for i in again.iterations] == [i.fingerprint
                                                        for i in mined["git"].iterations]
    other = mine_theme(git_doc(), iterations=3, seed=1)
    assert other.spec.fingerprint != mined["git"].spec.fingerprint
    assert [t.name for t in other.spec.tables] == [t.name for t in mined["git"].spec.tables]


def test_different_sources_give_different_schemas(mined):
    sets = {k: frozenset(t.name for t in mined[k].spec.tables) for k in ("time", "git", "clinic")}
    assert len(set(sets.values())) == 3
    drafted = {k: {t for t in sets[k] if t not in
                   (mined[k].spec.provenance.stats.get("added_tables") or [])}
               for k in sets}
    assert drafted["time"] & drafted["git"] == set()
    assert drafted["git"] & drafted["clinic"] == set()
    assert drafted["time"] & drafted["clinic"] == set()


def test_mined_theme_reports_questions_and_evidence(mined):
    m = mined["clinic"]
    assert m.questions and m.evidence_summary["by_kind"]["argument"] >= 10
    assert "listAppointments.status" in m.evidence_summary["enums"]
    assert {"email", "date-time", "date"} <= set(m.evidence_summary["formats"])
    assert m.seconds < 10


# ---------------------------------------------------------------------------------------------
# LLM path with a fake chat model
def test_person_roles_cycles_and_dto_schemas(mined):
    spec = mined["offices"].spec
    fks = _fk_map(spec)
    assert fks["employees.manager_id"] == "employees.id"  # a person role on a person: self FK
    assert fks["teams.lead_id"] == "employees.id"
    assert "errors" not in {t.name for t in spec.tables}  # an error schema is no entity
    assert not any(c.foreign_key == "employees.id" for c in spec.table("offices").columns)


@pytest.mark.parametrize("filename", ["clinic_booking_openapi.yaml", "book_lending_prd.md"])
def test_bundled_documents_mine_cleanly(filename, tmp_path):
    sources = pytest.importorskip("agent_world.mining.sources")
    path = sources.DATA_DIR / filename if hasattr(sources, "DATA_DIR") else None
    if path is None or not path.is_file():
        pytest.skip("bundled source documents not available")
    doc = sources.read_source(str(path))
    m = mine_theme(doc, iterations=3, seed=0)
    stats = m.spec.stats()
    assert stats["tables"] >= 4 and stats["foreign_keys"] >= 3 and stats["rows"] >= 200
    conn = sqlite3.connect(build_template(m.spec, tmp_path / "t.sqlite"))
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()


def test_states_go_to_the_record_they_are_said_of():
    """A lifecycle is the record's own: the hold (not the title after "for") is marked ready,
    "checked out" and "on loan" name one state of a loan, a title has no status the source
    never gave it, and complexification adds no final state nobody named."""
    from agent_world.mining.sources import DATA_DIR, read_source

    spec = mine_theme(read_source(str(DATA_DIR / "book_lending_prd.md")), iterations=2,
                      seed=0).spec
    statuses = {t.name: t.column("status").enum for t in spec.tables
                if any(c.name == "status" for c in t.columns)}
    assert "titles" not in statuses
    assert statuses["loans"] == ["checked_out", "renewed", "returned"]
    assert statuses["holds"] == ["waiting", "ready", "collected", "cancelled", "expired"]
    git = mine_theme(git_doc(), iterations=2, seed=0).spec
    assert git.table("branches").column("status").enum == ["active", "checked_out"]
    assert {r["status"] for r in git.rows["branches"]} <= {"active", "checked_out"}


def test_escaped_field_names_never_collide():
    """A source field `from` reached as a tool argument and as a declared field (already
    escaped to `from_`) is one column; two fields that escape to one name get two."""
    from agent_world.mining.offline.domain import Col, DomainModel
    from agent_world.mining.offline.tables import model_to_tables

    m = DomainModel()
    rel = m.ensure("relation")
    rel.add(Col("from"))
    rel.add(Col("from_", declared=True))
    rel.add(Col("to"))
    assert list(rel.cols) == ["from_", "to"]
    rel.cols["class"] = Col("class")  # written around add(): escapes onto a taken name
    rel.cols["class_"] = Col("class_")
    [table], _kinds = model_to_tables(m)
    names = [c.name for c in table.columns]
    assert names == ["id", "from_", "to", "class_", "class_2"]


def test_a_placeholder_argument_is_no_field():
    """howtocook's getAllRecipes(no_param) and variflight's random_string: placeholders a
    server declares for a tool without arguments, never columns ("the recipe whose no param
    is 'dream'")."""
    doc = SourceDocument(name="cook", kind="tool-list", reference="cook.json", tools=[
        ToolDescription(name="get_all_recipes", description="List all recipes", read_only=True,
                        input_schema={"type": "object", "properties": {
                            "no_param": {"type": "string", "description": "无参数"}}}),
        ToolDescription(name="create_recipe", description="Create a recipe",
                        input_schema={"type": "object", "properties": {
                            "name": {"type": "string"},
                            "random_string": {"type": "string",
                                              "description": "Optional placeholder parameter."}},
                            "required": ["name"]}),
        # the GraphQL server's introspect_schema(__ignore__): "with ignore turned on"
        ToolDescription(name="update_recipe", description="Update a recipe",
                        input_schema={"type": "object", "properties": {
                            "recipe_id": {"type": "integer"}, "title": {"type": "string"},
                            "__ignore__": {"type": "boolean"}}, "required": ["recipe_id"]})])
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    columns = {c.name for t in spec.tables for c in t.columns}
    assert "name" in columns and not {"no_param", "random_string", "ignore", "__ignore__"} & \
        columns, columns


def test_an_uncovered_read_keeps_what_it_returns_not_a_table_named_after_the_call():
    """Datadog's get_logs(query, service) got a table 'get_logses', drawio's list_pages a
    'list_pageses'; the records a read returns are logs and pages."""
    set_chat_model("miner", None)
    doc = SourceDocument(name="datadog", kind="tool-list", reference="datadog.json", tools=[
        ToolDescription(name="get_logs", description="Search and retrieve logs.",
                        input_schema={"type": "object", "properties": {
                            "query": {"type": "string"}, "service": {"type": "string"},
                            "level": {"type": "string", "enum": ["info", "warn", "error"]}}}),
        ToolDescription(name="list_monitors", description="List monitors.", read_only=True,
                        input_schema={"type": "object", "properties": {}}),
        ToolDescription(name="create_monitor", description="Create a monitor.",
                        input_schema={"type": "object", "properties": {
                            "name": {"type": "string"}}, "required": ["name"]})])
    names = [t.name for t in mine_theme(doc, iterations=1, seed=0).spec.tables]
    assert not any(n.startswith("get_log") for n in names), names
