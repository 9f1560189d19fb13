"""Mined data that means what its source says: typed fields from OpenAPI, PRD (bullets and
Markdown tables) and MCP schemas kept in columns and values; sources in domains the rules were
not written for; the semantic gate repairing or rejecting an iteration (into the ledger)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_world.envs.spec import EnvSpec
from agent_world.mining import complexify_step
from agent_world.mining.complexify_step import complexify
from agent_world.mining.draft_step import draft_database
from agent_world.mining.llm_miner import (
    MinedTheme,
    gather_evidence,
    mine_theme,
)
from agent_world.mining.offline.complexify import _Complexifier, complexify_offline
from agent_world.mining.offline.derivation import derive_model
from agent_world.mining.offline.domain import DomainModel, Entity
from agent_world.mining.offline.evidence import collect_evidence
from agent_world.mining.offline.questions import plan_questions_offline
from agent_world.mining.offline.tables import model_to_tables
from agent_world.mining.semantic_gate import SemanticRejection, semantic_gate
from agent_world.mining.semantics.checker import check_semantics
from agent_world.mining.semantics.repair import repair_semantics
from agent_world.mining.sources import DATA_DIR, read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources

UNSEEN = Path(__file__).resolve().parents[1] / "fixtures" / "sources" / "unseen"
SOURCES = ["bikeshare_openapi.yaml", "garden_prd.md", "podcast_tools.json",
           "ev_charging_tools.json"]


@pytest.fixture(scope="module")
def unseen() -> dict[str, MinedTheme]:
    return {f: mine_theme(read_source(f"file:{UNSEEN / f}"), iterations=2, seed=3)
            for f in SOURCES}


def _col(spec, table, name):
    return spec.table(table).column(name)


@pytest.mark.parametrize("source", SOURCES)
def test_unseen_sources_keep_declared_typing_and_mean_it(unseen, source):
    spec = unseen[source].spec
    assert check_semantics(spec) == []
    fidelity = spec.provenance.stats["declared_fidelity"]
    assert fidelity["checks"] >= 10 and fidelity["ratio"] >= 0.95, fidelity["lost"]
    assert spec.provenance.stats["tool_coverage"]["ratio"] >= 0.9


def test_openapi_types_enums_uniqueness_ranges_and_patterns(unseen):
    spec = unseen["bikeshare_openapi.yaml"].spec
    bikes = spec.rows["bikes"]
    assert _col(spec, "bikes", "serial_number").unique
    assert all(re.fullmatch(r"CR-\d{6}", b["serial_number"]) for b in bikes)
    assert set(_col(spec, "bikes", "bike_type").enum) == {"classic", "electric", "cargo"}
    assert set(_col(spec, "bikes", "status").enum) == {"available", "in_use", "maintenance",
                                                        "retired"}
    assert all(0 <= b["battery_level"] <= 100 for b in bikes if b["battery_level"] is not None)
    assert _col(spec, "stations", "opened_on").type == "date"
    assert _col(spec, "riders", "email").unique
    assert all("@" in r["email"] for r in spec.rows["riders"] if r["email"])
    # a tool that returns a documented entity acts on it (no table per operation)
    assert "report_bike_issues" not in {t.name for t in spec.tables}
    cov = spec.provenance.stats["tool_coverage"]["tools"]
    assert cov["reportBikeIssue"]["table"] == "maintenance_tickets"
    # trips: a trip ends after it starts; a completed trip has its end time
    for t in spec.rows["trips"]:
        if t["ended_at"] and t["started_at"]:
            assert t["ended_at"] >= t["started_at"]


def test_prd_markdown_tables_and_bullets_are_typed():
    garden = read_source(f"file:{UNSEEN / 'garden_prd.md'}")
    plot = next(e for e in garden.entities if e.name == "Plot")
    specs = {f.name: f for f in plot.field_specs}
    assert specs["garden_id"].references == "Garden"
    assert specs["code"].unique and specs["code"].type == "string"
    assert (specs["area_m2"].type, specs["area_m2"].minimum, specs["area_m2"].maximum) == (
        "number", 2, 40)
    assert specs["sun_exposure"].enum == ["full_sun", "partial_shade", "shade"]
    assert specs["raised_bed"].type == "boolean"
    library = read_source(f"file:{DATA_DIR / 'book_lending_prd.md'}")
    member = {f.name: f for f in next(e for e in library.entities
                                      if e.name == "Member").field_specs}
    assert member["card_number"].type == "string" and member["card_number"].unique
    assert member["status"].enum == ["active", "suspended", "expired"]
    assert member["joined_on"].format == "date"
    assert member["home_branch_id"].references == "Branch"


def test_prd_declarations_reach_the_database():
    spec = mine_theme(read_source(f"file:{DATA_DIR / 'book_lending_prd.md'}"), iterations=1,
                      seed=0).spec
    card = _col(spec, "members", "card_number")
    assert card.type == "text" and card.unique
    assert len({m["card_number"] for m in spec.rows["members"]}) == len(spec.rows["members"])
    assert _col(spec, "members", "status").enum == ["active", "suspended", "expired"]
    assert set(_col(spec, "copies", "status").enum) == {
        "available", "on_loan", "on_hold_shelf", "in_transit", "retired"}
    assert all(0 <= r["renewal_count"] <= 2 for r in spec.rows["loans"]
               if r["renewal_count"] is not None)
    assert all(re.fullmatch(r"97[89]-[\d-]+", t["isbn"]) for t in spec.rows["titles"]
               if t["isbn"])
    assert not any("/" in (b["name"] or "") for b in spec.rows["branches"])  # not git names
    # fines belong to their loan's member; a returned loan was checked out before
    loans = {r["id"]: r for r in spec.rows["loans"]}
    assert all(f["member_id"] == loans[f["loan_id"]]["member_id"] for f in spec.rows["fines"]
               if f["loan_id"] is not None and f["member_id"] is not None)
    for r in spec.rows["loans"]:
        if r["returned_at"] and r["checked_out_at"]:
            assert r["returned_at"] >= r["checked_out_at"]
        if r["status"] == "returned":
            assert r["returned_at"] is not None


def test_mcp_schemas_give_columns_and_values():
    spec = mine_theme(read_source(f"file:{UNSEEN / 'podcast_tools.json'}"), iterations=2,
                      seed=0).spec
    episodes = spec.rows["episodes"]
    assert _col(spec, "episodes", "explicit").type == "boolean"
    assert set(_col(spec, "episodes", "status").enum) >= {"draft", "scheduled", "published",
                                                          "archived"}
    assert all(1 <= e["duration_seconds"] <= 14400 for e in episodes
               if e["duration_seconds"] is not None)
    assert all(re.match(r"https?://", s["feed_url"]) for s in spec.rows["shows"]
               if s.get("feed_url"))
    hints = spec.provenance.stats["field_hints"]
    assert hints["episodes"]["duration_seconds"]["maximum"] == 14400
    ev = mine_theme(read_source(f"file:{UNSEEN / 'ev_charging_tools.json'}"), iterations=1,
                    seed=0).spec
    assert set(_col(ev, "chargers", "status").enum) == {"available", "charging", "faulted",
                                                         "offline"}
    assert all(re.fullmatch(r"[A-HJ-NPR-Z0-9]{17}", s["vehicle_vin"])
               for s in ev.rows["sessions"] if s["vehicle_vin"])


def test_scheduled_visits_keep_the_calendar():
    """Mined appointments read like a clinic's book: slots in opening hours, each with its
    end and its clinician; a visit still booked lies ahead, one long past was attended,
    missed or cancelled, and a check-in is stamped on arrival, shortly before the start."""
    from datetime import datetime, timedelta

    doc = read_source(f"file:{DATA_DIR / 'clinic_booking_openapi.yaml'}")
    spec = mine_theme(doc, iterations=1, seed=0).spec
    clock = datetime.fromisoformat(spec.clock_start)
    slots = spec.rows["slots"]
    assert all(8 <= datetime.fromisoformat(s["starts_at"]).hour < 18 for s in slots)
    assert all(s["ends_at"] > s["starts_at"] and s["clinician_id"] is not None for s in slots)
    appts = spec.rows["appointments"]
    for a in appts:
        start = datetime.fromisoformat(a["starts_at"])
        if a["status"] in ("booked", "checked_in"):
            assert start > clock - timedelta(hours=12), a
        if a["status"] in ("completed", "no_show", "checked_in"):
            assert start < clock, a
        if a["checked_in_at"]:
            assert timedelta(0) <= start - datetime.fromisoformat(a["checked_in_at"]) \
                <= timedelta(minutes=30), a
    assert {"booked", "completed"} <= {a["status"] for a in appts}
    assert any(a["checked_in_at"] for a in appts)


def test_fines_accrue_as_the_source_says():
    """"An overdue loan accrues a fine of 0.25 per day, capped at the copy's replacement cost":
    fines of 707.00, and fines of loans never late. Each fine is its loan's, sized by the rule."""
    from datetime import date, datetime

    doc = read_source(f"file:{DATA_DIR / 'book_lending_prd.md'}")
    spec = mine_theme(doc, iterations=1, seed=0).spec
    loans = {r["id"]: r for r in spec.rows["loans"]}
    copies = {r["id"]: r for r in spec.rows["copies"]}
    titles = {r["id"]: r for r in spec.rows["titles"]}
    clock = datetime.fromisoformat(spec.clock_start)
    assert spec.rows["fines"]
    for fine in spec.rows["fines"]:
        loan = loans[fine["loan_id"]]
        end = datetime.fromisoformat(loan["returned_at"]) if loan["returned_at"] else clock
        late = (end.date() - date.fromisoformat(loan["due_on"])).days
        cost = titles[copies[loan["copy_id"]]["title_id"]]["replacement_cost"]
        assert late > 0 and fine["member_id"] == loan["member_id"], (fine, loan)
        assert fine["amount"] == min(round(0.25 * late, 2), cost), (fine, late, cost)


def test_semantic_gate_repairs_routes_and_times():
    doc = read_source(f"file:{DATA_DIR / 'clinic_booking_openapi.yaml'}")
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    slots = {s["id"]: s for s in spec.rows["slots"]}
    assert all(s["clinician_id"] is not None for s in slots.values())  # "a clinician's calendar"
    appt = spec.rows["appointments"][0]
    appt["clinician_id"] = next(c["id"] for c in spec.rows["clinicians"]
                                if c["id"] != slots[appt["slot_id"]]["clinician_id"])
    appt["updated_at"] = "2020-01-01T00:00:00"  # before it was created
    assert {v.rule for v in check_semantics(spec)} == {"fk_route", "time_order"}
    fixed, notes = semantic_gate(spec, doc, "test")
    assert check_semantics(fixed) == []
    assert fixed.rows["appointments"][0]["clinician_id"] == slots[appt["slot_id"]][
        "clinician_id"]
    assert any("fk_route" in n for n in notes) and any("time_order" in n for n in notes)


def test_unrepairable_iteration_is_rejected_and_recorded(monkeypatch):
    doc = read_source(f"file:{DATA_DIR / 'clinic_booking_openapi.yaml'}")
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)

    def nonsense(s, iteration, seed, d=None):  # a required enum none of whose values the
        res = _Complexifier(s, iteration, seed, d).run()  # source declares
        for r in res.rows["appointments"]:
            r["visit_type"] = "home_visit"
        t = next(t for t in res.tables if t.name == "appointments")
        t.column("visit_type").enum = ["home_visit"]
        return res

    monkeypatch.setattr(complexify_step, "complexify_offline", nonsense)
    after = complexify(spec, 1, seed=0, doc=doc)
    assert after.fingerprint == spec.fingerprint  # the previous database is kept
    [rej] = after.provenance.stats["rejected_iterations"]
    assert rej["iteration"] == 1 and "enum" in rej["reason"] and "home_visit" in rej["reason"]
    assert after.provenance.stats["iterations"][-1]["strategy"] == "rejected"
    with pytest.raises(SemanticRejection):
        semantic_gate(complexify_offline(spec, 1, 0, doc).rows and
                      _rebuilt(spec, nonsense(spec, 1, 0, doc)), doc, "x")


def _rebuilt(spec, res):
    from agent_world.mining.complexify_step import _next_spec

    return _next_spec(spec, res.tables, res.rows, res.kinds, [], res.added)


def test_rejection_goes_to_the_ledger(tmp_path, monkeypatch):
    from agent_world.envs.catalog import Catalog
    from agent_world.graphs import mine_graph
    from agent_world.graphs.runner import invoke

    real = complexify_offline

    def nonsense(s, iteration, seed, d=None):
        res = real(s, iteration, seed, d)
        if iteration == 2:
            t = next(t for t in res.tables if t.name == "appointments")
            t.column("visit_type").enum = ["home_visit"]
            for r in res.rows["appointments"]:
                r["visit_type"] = "home_visit"
        return res

    monkeypatch.setattr(complexify_step, "complexify_offline", nonsense)
    state = invoke(mine_graph.build_graph(),
                   {"sources": [f"file:{DATA_DIR / 'clinic_booking_openapi.yaml'}"],
                    "iterations": 2}, thread_id="rej", home=tmp_path)
    assert state["results"][0]["status"] == "mined"
    entries = [e for e in Catalog.open(tmp_path).ledger(stage="mine")
               if "iteration 2 rejected" in e.reason]
    assert entries and "home_visit" in entries[0].reason


LLM_DRAFT = {
    "tables": [
        {"name": "clinicians", "columns": [
            {"name": "id", "type": "integer", "primary_key": True},
            {"name": "full_name", "type": "text", "nullable": False}]},
        {"name": "slots", "columns": [
            {"name": "id", "type": "integer", "primary_key": True},
            {"name": "clinician_id", "type": "integer", "nullable": False,
             "foreign_key": "clinicians.id"},
            {"name": "starts_at", "type": "datetime", "nullable": False}]},
        {"name": "appointments", "columns": [
            {"name": "id", "type": "integer", "primary_key": True},
            {"name": "slot_id", "type": "integer", "nullable": False, "foreign_key": "slots.id"},
            {"name": "clinician_id", "type": "integer", "nullable": False,
             "foreign_key": "clinicians.id"},
            {"name": "booked_at", "type": "datetime", "nullable": False},
            {"name": "checked_in_at", "type": "datetime"},
            {"name": "status", "type": "text", "nullable": False,
             "enum": ["scheduled", "confirmed"]}]},
    ],
    "rows": [
        {"table": "clinicians", "columns": ["id", "full_name"],
         "values": [[1, "Ada Park"], [2, "Ben Cho"]]},
        {"table": "slots", "columns": ["id", "clinician_id", "starts_at"],
         "values": [[1, 1, "2026-01-20T10:00:00"], [2, 2, "2026-01-21T10:00:00"]]},
        {"table": "appointments",
         "columns": ["slot_id", "clinician_id", "booked_at", "checked_in_at", "status"],
         "values": [[1, 2, "2026-01-05T10:00:00", "2026-01-04T09:00:00", "confirmed"],
                    [2, 2, "2026-01-06T10:00:00", None, "scheduled"]]},
    ],
}


def test_llm_draft_passes_the_same_semantic_gate():
    """An LLM draft whose states the source does not declare goes back to the model with the
    violations; its next answer's rows (the clinician of another slot, a check-in before the
    booking) are repaired like the offline path's; the stored database has no violation."""
    import copy
    import json

    from agent_world.models import set_chat_model
    from tests.unit.miner_docs import clinic_doc
    from tests.unit.test_miner_llm_path import ScriptedChat

    undeclared = copy.deepcopy(LLM_DRAFT)
    undeclared["tables"][2]["columns"][-1]["enum"] = ["booked", "checked_in"]
    for row in undeclared["rows"][2]["values"]:
        row[-1] = "booked"
    model = ScriptedChat(script={"draft": [json.dumps(undeclared), json.dumps(LLM_DRAFT)]})
    set_chat_model("miner", model)
    try:
        doc = clinic_doc()
        spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    finally:
        set_chat_model("miner", None)
    assert spec.provenance.stats["iterations"][0]["strategy"] == "llm"
    assert model.seen.count("draft") == 2  # the undeclared states were sent back
    assert check_semantics(spec) == []
    first = spec.rows["appointments"][0]
    assert first["clinician_id"] == 1  # its slot's clinician
    assert first["checked_in_at"] >= first["booked_at"]
    assert any("repaired" in n and "fk_route" in n for n in spec.provenance.notes)


# ---- every unseen source mines; rows agree across tables -----------------------------------

ALL_UNSEEN = sorted(p.name for p in UNSEEN.iterdir() if p.is_file())


@pytest.fixture(scope="module")
def refused_before() -> dict[str, MinedTheme]:
    """Sources the miner used to refuse (semantic violations after repair, or a duplicate
    escaped column name)."""
    return {f: mine_theme(read_source(f"file:{UNSEEN / f}"), iterations=1, seed=0)
            for f in ("calendar_tools.json", "invoicing_prd.md", "tracker_openapi.yaml",
                      "memory_server_tools.json")}


def test_every_unseen_fixture_mines_and_keeps_its_invariants(unseen, refused_before):
    assert len(ALL_UNSEEN) >= 8
    mined = {**unseen, **refused_before}
    for f in ALL_UNSEEN:
        spec = mined[f].spec if f in mined else mine_theme(
            read_source(f"file:{UNSEEN / f}"), iterations=1, seed=0).spec
        assert check_semantics(spec) == [], f
        assert isinstance(spec.provenance.stats["invariants"], list)


def test_calendar_event_status_comes_from_the_declared_enum(refused_before):
    """"Cancelled events are returned ..." no longer makes 'returned' (or a default
    'active') an event status: the values come from the declared enum."""
    spec = refused_before["calendar_tools.json"].spec
    declared = {"confirmed", "tentative", "cancelled"}
    assert set(_col(spec, "events", "status").enum) == declared
    assert {e["status"] for e in spec.rows["events"]} <= declared


def test_a_tool_saying_what_it_returns_gives_no_record_a_returned_state():
    """Xero's "a deep link to the invoice in Xero is returned" and Hostinger's "the existing
    tag is returned" describe the response: no contact, quote or tag is 'returned'."""
    refs = {r.name: r for r in corpus_sources()}
    for service in ("xero", "hostinger"):
        doc = read_source(refs[service])
        model = derive_model(doc, collect_evidence(doc, plan_questions_offline(doc)))
        returned = sorted(n for n, e in model.entities.items() if "returned" in e.states)
        assert returned == [], service
        if service == "xero":  # "This includes Draft, Submitted, and Paid invoices."
            assert set(model.entities["invoice"].states) == {"draft", "submitted", "paid"}


def test_an_archive_path_names_an_archive():
    """Hostinger's archivePath ("Supported formats: zip, tar, tar.gz, tgz") held '.odp' and
    '.tiff' files: an archive column's files are archives."""
    [ref] = [r for r in corpus_sources() if r.name == "hostinger"]
    spec = mine_theme(read_source(ref), iterations=1, seed=0).spec
    paths = [r["archive_path"] for t in spec.tables if "archive_path" in
             {c.name for c in t.columns} for r in spec.rows[t.name] if r["archive_path"]]
    assert paths and all(p.endswith((".zip", ".tar.gz", ".tgz")) for p in paths), paths
    dumps = [r["sql_path"] for t in spec.tables if "sql_path" in {c.name for c in t.columns}
             for r in spec.rows[t.name] if r["sql_path"]]
    assert dumps and all(p.endswith((".sql", ".sql.gz")) for p in dumps), dumps


def test_draft_invoice_has_no_lifecycle_dates(refused_before):
    spec = refused_before["invoicing_prd.md"].spec
    assert _col(spec, "invoices", "issued_on").nullable  # a draft has not been issued
    drafts = [r for r in spec.rows["invoices"] if r["status"] == "draft"]
    assert drafts and all(r["issued_on"] is None and r["paid_at"] is None
                          and r["voided_at"] is None for r in drafts)
    assert all(r["voided_at"] is None for r in spec.rows["invoices"] if r["status"] != "void")
    assert any("issued_on" in n for n in spec.provenance.stats["schema_repairs"])


def test_milestone_keeps_the_declared_string_type(refused_before):
    spec = refused_before["tracker_openapi.yaml"].spec
    assert _col(spec, "issues", "milestone").type == "text"
    assert all(isinstance(r["milestone"], str) for r in spec.rows["issues"] if r["milestone"])


def test_memory_server_relation_fields_do_not_collide(refused_before):
    spec = refused_before["memory_server_tools.json"].spec
    names = [c.name for c in spec.table("relations").columns]
    assert len(names) == len(set(names)) and "from_" in names and "to" in names


def test_a_column_that_cannot_be_made_consistent_is_dropped_not_the_source():
    doc = read_source(f"file:{DATA_DIR / 'clinic_booking_openapi.yaml'}")
    spec = draft_database(doc, gather_evidence(doc, []), seed=0)
    t = spec.table("appointments")
    t.column("visit_type").enum = ["home_visit"]  # no value the source declares
    for r in spec.rows["appointments"]:
        r["visit_type"] = "home_visit"
    with pytest.raises(SemanticRejection):
        semantic_gate(spec.model_copy(deep=True), doc, "iteration 1")
    fixed, notes = semantic_gate(spec, doc, "iteration 0", drop=True)
    assert "visit_type" not in {c.name for c in fixed.table("appointments").columns}
    assert check_semantics(fixed) == []
    [note] = [n for n in fixed.provenance.stats["schema_repairs"] if "visit_type" in n]
    assert note.startswith("dropped column appointments.visit_type") and note in " ".join(notes)


@pytest.fixture(scope="module")
def defaults() -> dict[str, MinedTheme]:
    return {f: mine_theme(read_source(f"file:{DATA_DIR / f}"), iterations=3, seed=0)
            for f in ("book_lending_prd.md", "clinic_booking_openapi.yaml")}


def test_library_copies_loans_and_fines_agree(defaults):
    spec = defaults["book_lending_prd.md"].spec
    live = {"active", "renewed", "checked_out", "on_loan"}
    loans: dict[int, list[str]] = {}
    for r in spec.rows["loans"]:
        if r["status"] in live and r["copy_id"] is not None:
            loans.setdefault(r["copy_id"], []).append(r["status"])
    copies = spec.rows["copies"]
    assert any(c["status"] == "on_loan" for c in copies)
    assert all((c["status"] == "on_loan") == (c["id"] in loans) for c in copies)
    assert all(len(v) == 1 for v in loans.values())
    assert all(f["waived_reason"] is None for f in spec.rows["fines"] if f["status"] != "waived")
    kinds = {i["kind"] for i in spec.provenance.stats["invariants"]}
    assert {"held_iff", "capacity", "set_only_in"} <= kinds


def test_library_titles_read_like_titles(defaults):
    from agent_world.mining.offline.reference_data import BOOK_SUBJECTS

    titles = defaults["book_lending_prd.md"].spec.rows["titles"]
    # not a random pair of words ("Congress and Manager", "Inside and Several")
    assert not any(re.fullmatch(r"[A-Z][a-z]+ and [A-Z][a-z]+", t["title"]) for t in titles)
    assert all(t["subject"] in BOOK_SUBJECTS for t in titles if t["subject"])


def test_clinic_slots_hold_one_live_appointment_and_zones_fit_the_country(defaults):
    from agent_world.mining.semantics.zones import address_country, country_zones

    spec = defaults["clinic_booking_openapi.yaml"].spec
    held: dict[int, int] = {}
    for a in spec.rows["appointments"]:
        if a["status"] in ("booked", "checked_in", "completed"):
            held[a["slot_id"]] = held.get(a["slot_id"], 0) + 1
    assert held and max(held.values()) == 1
    assert all(s["booked"] == (s["id"] in held) for s in spec.rows["slots"]
               if s["booked"] is not None)
    for loc in [r for r in spec.rows["locations"] if r["address"]]:  # edge cases: NULLs
        cc = address_country(loc["address"])
        assert cc == "US" and loc["timezone"] in (None, *country_zones(cc)), loc


def test_an_appointment_keeps_its_slots_time_and_is_not_attended_in_the_future(defaults):
    spec = defaults["clinic_booking_openapi.yaml"].spec
    slots = {s["id"]: s for s in spec.rows["slots"]}
    appointments = spec.rows["appointments"]
    assert appointments and all("starts_at" in a for a in appointments)  # the column stays
    for a in appointments:
        slot = slots.get(a["slot_id"])
        if slot is None:
            continue
        assert (a["starts_at"], a["clinician_id"], a["location_id"]) == (
            slot["starts_at"], slot["clinician_id"], slot["location_id"]), a
        assert a["booked_at"] is None or a["booked_at"] <= a["starts_at"], a
        if a["starts_at"] > spec.clock_start:
            assert a["status"] not in ("checked_in", "completed", "no_show"), a


def test_an_audit_log_ends_in_the_records_current_values(defaults):
    spec = defaults["book_lending_prd.md"].spec
    loans = {r["id"]: r for r in spec.rows["loans"]}
    changes = [h for h in spec.rows["loan_history"] if h["field_name"]]
    assert changes and all(h["field_name"] in loans[h["loan_id"]] for h in changes)
    seen = set()
    for h in changes:
        loan = loans[h["loan_id"]]
        assert h["new_value"] == str(loan[h["field_name"]]) != h["old_value"], h
        assert (h["loan_id"], h["field_name"]) not in seen  # one entry per field: no two ends
        seen.add((h["loan_id"], h["field_name"]))
        assert loan["created_at"] <= h["changed_at"], h


# ---- shapes of real MCP tool lists (the shipped corpus) the offline miner once refused ----

def _obj(props: dict, required: tuple[str, ...] = ()) -> dict:
    return {"type": "object", "properties": props, "required": list(required)}


def _tool_list(tmp_path: Path, name: str, tools: list[dict]) -> MinedTheme:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"name": name, "description": f"{name} server", "tools": tools}))
    return mine_theme(read_source(f"file:{path}"), iterations=0, seed=0)


def test_object_valued_columns_are_checked_for_uniqueness(tmp_path):
    # notion-style: an object and an array of objects as required arguments
    # (was: TypeError unhashable type: 'dict' in the row factory's unique check)
    spec = _tool_list(tmp_path, "comments", [{
        "name": "create_comment", "description": "Create a comment on a page",
        "inputSchema": _obj({"parent": _obj({"page_id": {"type": "string"}}),
                             "rich_text": {"type": "array", "items": {"type": "object"}}},
                            ("parent", "rich_text"))}]).spec
    [texts] = [t for t in spec.tables if [c for c in t.columns if c.type == "json" and
               any(c.name in g for g in t.unique_together)]]
    assert all(isinstance(r["rich_text"], dict) for r in spec.rows[texts.name])
    assert check_semantics(spec) == []


def test_a_declared_string_id_gives_text_ids_and_text_references(tmp_path):
    # airtable-style: records are read by a string id (was: the semantic gate refused the
    # source, "records.id: the source declares string, the column is integer")
    spec = _tool_list(tmp_path, "records", [
        {"name": "get_record", "description": "Get a specific record by ID",
         "inputSchema": _obj({"baseId": {"type": "string"}, "recordId": {"type": "string"}},
                             ("baseId", "recordId")),
         "outputSchema": _obj({"id": {"type": "string"}, "fields": {"type": "object"}},
                              ("id", "fields"))},
        {"name": "create_comment", "description": "Add a comment to a record",
         "inputSchema": _obj({"recordId": {"type": "string"}, "text": {"type": "string"}},
                             ("recordId", "text"))}]).spec
    assert _col(spec, "records", "id").type == "text"
    assert _col(spec, "comments", "record_id").type == "text"
    ids = {r["id"] for r in spec.rows["records"]}
    assert ids and all(isinstance(i, str) for i in ids)
    assert {r["record_id"] for r in spec.rows["comments"]} <= ids
    assert any("records.id: text ids" in n for n in spec.provenance.notes)


def test_typed_columns_keep_no_text_enum_and_draw_declared_numbers(tmp_path):
    # firecrawl-style: a boolean whose description names fields (was: highlights seeded
    # 'description'), and a number declared by an enum of strings (cloudbase: '300' rows)
    spec = _tool_list(tmp_path, "search", [{
        "name": "web_search", "description": "Search the web",
        "inputSchema": _obj({
            "query": {"type": "string"},
            "highlights": {"type": "boolean", "description":
                           "Return excerpts. Highlights appear in web `description` and news "
                           "`snippet`; otherwise original snippets."},
            "period": {"type": "number", "enum": ["300", "3600", "86400"]}}, ("query",))}]).spec
    assert _col(spec, "web_results", "highlights").enum is None
    assert _col(spec, "web_results", "period").type == "integer"
    rows = spec.rows["web_results"]
    assert {type(r["highlights"]) for r in rows} <= {bool, type(None)}
    assert {r["period"] for r in rows} - {None} <= {300, 3600, 86400}
    assert check_semantics(spec) == []


def test_reserved_word_columns_build(tmp_path):
    # hubspot-style: arguments named `to` and `values` (was: the CHECK constraint on the
    # JSON column left them unquoted, `near "to": syntax error`)
    mined = _tool_list(tmp_path, "crm", [{
        "name": "create_association", "description": "Associate two objects",
        "inputSchema": _obj({"from": _obj({"id": {"type": "string"}}),
                             "to": _obj({"id": {"type": "string"}}),
                             "values": {"type": "object"}}, ("from", "to"))}])
    names = {c.name for c in mined.spec.table("associations").columns}
    assert {"to", "values"} <= names
    assert mined.spec.rows["associations"]


def test_entities_that_name_one_table_get_two_tables():
    # postman-style: a `spec_file` (core, pluralised) and a `spec_files` child entity
    # (was: EnvSpec refused the draft, "duplicate table names")
    m = DomainModel()
    m.ensure("spec_file", "core")
    m.entities["spec_files"] = Entity(name="spec_files", kind="child")
    tables, kinds = model_to_tables(m)
    assert [t.name for t in tables] == ["spec_files", "spec_files_2"]
    assert kinds == {"spec_files": "core", "spec_files_2": "child"}


def test_route_repair_never_empties_a_required_reference():
    # monday-style: an upload names its item and its column; the column's own item was just
    # cleared (a duplicate in a nullable unique column) when the route repair read it
    # (was: uploads.item_id set to None on a NOT NULL column, the draft refused)
    def col(name, fk=None, **kw):
        return {"name": name, "type": "integer", "foreign_key": fk, **kw}

    spec = EnvSpec.model_validate({
        "name": "boards", "theme": {"name": "boards", "taxonomy": {"l3": "boards"}},
        "tables": [
            {"name": "items", "columns": [col("id", primary_key=True)]},
            {"name": "columns", "columns": [col("id", primary_key=True),
                                            col("item_id", "items.id", unique=True)]},
            {"name": "uploads", "columns": [col("id", primary_key=True),
                                            col("column_id", "columns.id", nullable=False),
                                            col("item_id", "items.id", nullable=False)]}],
        "rows": {"items": [{"id": 1}, {"id": 2}],
                 "columns": [{"id": 1, "item_id": 1}, {"id": 2, "item_id": 1},
                             {"id": 3, "item_id": 2}],
                 "uploads": [{"id": 1, "column_id": 2, "item_id": 2}]}})
    fixed, _, left = repair_semantics(spec)
    assert fixed.rows["uploads"] == [{"id": 1, "column_id": 3, "item_id": 2}]
    assert left == []


def test_a_response_envelope_is_no_part_of_the_record(tmp_path):
    # dokploy-style: every tool answers {"success", "message", "data"} (was: `success` and
    # `message` columns on every table, seeded with random booleans and words)
    envelope = _obj({"success": {"type": "boolean"}, "message": {"type": "string"},
                     "data": {}}, ("success",))
    typed = _obj({"success": {"type": "boolean"}, "message": {"type": "string"},
                  "data": _obj({"projectId": {"type": "string"}, "name": {"type": "string"},
                                "region": {"type": "string"}, "plan": {"type": "string"}})})
    spec = _tool_list(tmp_path, "deploys", [
        {"name": "project_create", "description": "Creates a new project.",
         "inputSchema": _obj({"name": {"type": "string"}, "description": {"type": "string"}},
                             ("name",)), "outputSchema": envelope},
        {"name": "project_one", "description": "Gets a specific project by its ID.",
         "inputSchema": _obj({"projectId": {"type": "string"}}, ("projectId",)),
         "outputSchema": typed}]).spec
    columns = {c.name for c in spec.table("projects").columns}
    assert not columns & {"success", "message", "data"}, columns
    assert {"region", "plan"} <= columns  # a typed payload's fields are the record's
