"""Semantic validation of mined databases: one crafted database per rule that breaks it (and
must be reported with the right table, column and row), and its repaired twin that passes."""

from __future__ import annotations

import copy
import sqlite3
from typing import Any

import pytest

from agent_world.envs.database import build_template
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.column_semantics import column_semantic
from agent_world.mining.offline.naming import snake
from agent_world.mining.offline.rows import RowFactory
from agent_world.mining.semantics.checker import check_semantics
from agent_world.mining.semantics.invariants import (
    _check_invariants,
    derive_invariants,
    describe_invariant,
    invariant_violations,
)
from agent_world.mining.semantics.lifecycle_rule import lifecycle_columns
from agent_world.mining.semantics.repair import repair_semantics
from agent_world.mining.semantics.routes import fk_routes
from agent_world.mining.semantics.times import time_pairs
from agent_world.mining.semantics.violations import RULES, summarize
from agent_world.mining.semantics.zones import address_country, country_zones

CLOCK = "2026-01-15T09:00:00"


def _col(name: str, type_: str = "text", **kw: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **kw}


def _pk() -> dict[str, Any]:
    return _col("id", "integer", primary_key=True, nullable=False)


def _fk(name: str, target: str, nullable: bool = False) -> dict[str, Any]:
    return _col(name, "integer", foreign_key=f"{target}.id", nullable=nullable)


def clinic(**hints: Any) -> dict[str, Any]:
    """Clinicians, slots and appointments: an appointment's clinician is its slot's."""
    return {
        "name": "clinic",
        "clock_start": CLOCK,
        "theme": {"name": "clinic", "taxonomy": {"l3": "clinic"}},
        "tables": [
            {"name": "clinicians", "columns": [
                _pk(), _col("name", nullable=False), _col("email", unique=True),
                _col("accepting_new_patients", "boolean"), _col("created_at", "datetime")]},
            {"name": "slots", "columns": [
                _pk(), _fk("clinician_id", "clinicians"), _col("starts_at", "datetime"),
                _col("ends_at", "datetime"), _col("created_at", "datetime")]},
            {"name": "appointments", "columns": [
                _pk(), _fk("slot_id", "slots"), _fk("clinician_id", "clinicians"),
                _col("status", enum=["booked", "checked_in", "completed", "cancelled"]),
                _col("booked_at", "datetime"), _col("checked_in_at", "datetime"),
                _col("cancelled_at", "datetime"), _col("created_at", "datetime"),
                _col("duration_minutes", "integer")]},
        ],
        "rows": {
            "clinicians": [
                {"id": 1, "name": "Ann Lee", "email": "ann.lee@example.org",
                 "accepting_new_patients": True, "created_at": "2024-01-01T08:00:00"},
                {"id": 2, "name": "Bo Chen", "email": "bo.chen@example.org",
                 "accepting_new_patients": False, "created_at": "2024-02-01T08:00:00"}],
            "slots": [
                {"id": 1, "clinician_id": 1, "starts_at": "2026-01-20T09:00:00",
                 "ends_at": "2026-01-20T09:30:00", "created_at": "2025-12-01T08:00:00"},
                {"id": 2, "clinician_id": 2, "starts_at": "2026-01-21T10:00:00",
                 "ends_at": "2026-01-21T10:30:00", "created_at": "2025-12-02T08:00:00"}],
            "appointments": [
                {"id": 1, "slot_id": 1, "clinician_id": 1, "status": "booked",
                 "booked_at": "2026-01-02T10:00:00", "checked_in_at": None,
                 "cancelled_at": None, "created_at": "2026-01-02T10:00:00",
                 "duration_minutes": 30},
                {"id": 2, "slot_id": 2, "clinician_id": 2, "status": "checked_in",
                 "booked_at": "2026-01-03T10:00:00", "checked_in_at": "2026-01-21T09:55:00",
                 "cancelled_at": None, "created_at": "2026-01-03T10:00:00",
                 "duration_minutes": 30}],
        },
        "provenance": {"created_by": "test", "stats": {"field_hints": hints}},
    }


def _spec(data: dict[str, Any]) -> EnvSpec:
    return EnvSpec.from_dict(data)


def _only(spec: EnvSpec, rule: str) -> list:
    found = check_semantics(spec)
    assert {v.rule for v in found} == {rule}, [str(v) for v in found]
    return found


def test_consistent_database_has_no_violations():
    spec = _spec(clinic())
    assert check_semantics(spec) == []
    assert summarize([]) == dict.fromkeys(RULES, 0)


def test_fk_route_clinician_must_be_the_slots():
    data = clinic()
    data["rows"]["appointments"][0]["clinician_id"] = 2  # slot 1 belongs to clinician 1
    [v] = _only(_spec(data), "fk_route")
    assert (v.table, v.column, v.row) == ("appointments", "clinician_id", 1)
    assert "slot_id" in v.message


def test_fk_route_siblings_share_their_container():
    data = {
        "name": "git", "clock_start": CLOCK,
        "theme": {"name": "git", "taxonomy": {"l3": "git"}},
        "tables": [
            {"name": "repositories", "columns": [_pk(), _col("path", unique=True)]},
            {"name": "branches", "columns": [_pk(), _fk("repository_id", "repositories"),
                                             _fk("base_branch_id", "branches", True),
                                             _col("name")]},
            {"name": "commits", "columns": [_pk(), _fk("repository_id", "repositories"),
                                            _col("sha", unique=True)]},
            {"name": "branch_commits", "columns": [_pk(), _fk("branch_id", "branches"),
                                                   _fk("commit_id", "commits")],
             "unique_together": [["branch_id", "commit_id"]]},
        ],
        "rows": {
            "repositories": [{"id": 1, "path": "/srv/a"}, {"id": 2, "path": "/srv/b"}],
            "branches": [{"id": 1, "repository_id": 1, "base_branch_id": None, "name": "main"},
                         {"id": 2, "repository_id": 2, "base_branch_id": None, "name": "main"},
                         {"id": 3, "repository_id": 1, "base_branch_id": 1, "name": "dev"}],
            "commits": [{"id": 1, "repository_id": 1, "sha": "a" * 40},
                        {"id": 2, "repository_id": 2, "sha": "b" * 40}],
            "branch_commits": [{"id": 1, "branch_id": 1, "commit_id": 1},
                               {"id": 2, "branch_id": 2, "commit_id": 2}],
        },
    }
    kinds = {(r.kind, r.table) for r in fk_routes(_spec(data).tables)}
    assert kinds == {("via", "branches"), ("siblings", "branch_commits")}
    assert check_semantics(_spec(data)) == []
    bad = copy.deepcopy(data)
    bad["rows"]["branch_commits"][1]["commit_id"] = 1  # repo-2 branch, repo-1 commit
    bad["rows"]["branches"][2]["base_branch_id"] = 2  # base branch in another repository
    found = check_semantics(_spec(bad))
    assert sorted((v.rule, v.table, v.row) for v in found) == [
        ("fk_route", "branch_commits", 2), ("fk_route", "branches", 3)]


def test_time_order_check_in_before_booking_is_rejected():
    data = clinic()
    data["rows"]["appointments"][1]["checked_in_at"] = "2026-01-01T09:00:00"  # before booked_at
    found = _only(_spec(data), "time_order")
    assert {(v.table, v.column, v.row) for v in found} == {("appointments", "checked_in_at", 2)}
    assert ("booked_at", "checked_in_at") in time_pairs(_spec(data).table("appointments"))


def test_time_order_end_before_start_future_creation_and_child_before_parent():
    data = clinic()
    data["rows"]["slots"][0]["ends_at"] = "2026-01-20T08:00:00"
    data["rows"]["slots"][1]["created_at"] = "2026-01-16T08:00:00"  # after the clock
    data["rows"]["clinicians"][0]["created_at"] = "2025-12-15T08:00:00"  # after its slot
    found = {(v.table, v.column, v.row) for v in _only(_spec(data), "time_order")}
    assert found == {("slots", "ends_at", 1), ("slots", "created_at", 2),
                     ("slots", "created_at", 1),
                     ("appointments", "created_at", 2)}  # booked before its slot existed


def test_lifecycle_status_and_timestamps_agree():
    data = clinic()
    spec = _spec(data)
    assert lifecycle_columns(spec.table("appointments")) == (
        "status", {"checked_in": "checked_in_at", "cancelled": "cancelled_at"})
    data["rows"]["appointments"][1]["checked_in_at"] = None  # checked in, no check-in time
    data["rows"]["appointments"][0]["cancelled_at"] = "2026-01-05T10:00:00"  # still booked
    found = {(v.table, v.column, v.row) for v in _only(_spec(data), "lifecycle")}
    assert found == {("appointments", "checked_in_at", 2), ("appointments", "cancelled_at", 1)}


def test_enum_values_outside_the_declared_enum():
    data = clinic(appointments={"status": {"type": "string",
                                           "enum": ["booked", "checked_in", "cancelled"]}})
    data["rows"]["appointments"][0]["status"] = "completed"  # in the column, not the source
    [v] = _only(_spec(data), "enum")
    assert (v.column, v.row) == ("status", 1) and "declared" in v.message


def test_type_declared_boolean_stored_as_text_and_bad_values():
    data = clinic(clinicians={"accepting_new_patients": {"type": "boolean"}})
    data["tables"][0]["columns"][3]["type"] = "text"
    data["rows"]["clinicians"][0]["accepting_new_patients"] = "size"
    data["rows"]["clinicians"][1]["accepting_new_patients"] = "no"
    found = _only(_spec(data), "type")
    assert [(v.column, v.row) for v in found] == [("accepting_new_patients", None)]
    data2 = clinic()
    data2["rows"]["appointments"][0]["duration_minutes"] = "thirty"
    # rows as written: EnvSpec validation itself refuses the value (seed rows are type-checked)
    spec = EnvSpec.model_construct(**{**_spec(clinic()).__dict__, "rows": data2["rows"]})
    [v] = [v for v in check_semantics(spec) if v.rule == "type"]
    assert (v.table, v.column, v.row) == ("appointments", "duration_minutes", 1)


def test_format_email_and_pattern():
    data = clinic(clinicians={"email": {"type": "string", "format": "email"},
                              "name": {"type": "string", "pattern": "^[A-Z]"}})
    data["rows"]["clinicians"][1]["email"] = "not-an-email"
    data["rows"]["clinicians"][0]["name"] = "ann lee"
    found = {(v.column, v.row) for v in _only(_spec(data), "format")}
    assert found == {("email", 2), ("name", 1)}


def test_range_declared_minimum_and_maximum():
    data = clinic(appointments={"duration_minutes": {"type": "integer", "minimum": 5,
                                                     "maximum": 240}})
    data["rows"]["appointments"][1]["duration_minutes"] = 600
    [v] = _only(_spec(data), "range")
    assert (v.column, v.row) == ("duration_minutes", 2)


def test_unique_columns_and_declared_unique_fields():
    data = clinic(clinicians={"name": {"type": "string", "unique": True}})
    data["rows"]["clinicians"][1]["name"] = "Ann Lee"  # declared unique by the source
    data["rows"]["clinicians"][1]["email"] = "ann.lee@example.org"  # unique column
    found = {(v.column, v.row) for v in _only(_spec(data), "unique")}
    assert found == {("name", 2), ("email", 2)}


@pytest.mark.parametrize("rule", RULES)
def test_every_rule_is_exercised(rule):
    """The crafted databases above cover every rule the validator knows."""
    assert rule in {"fk_route", "time_order", "lifecycle", "enum", "type", "format", "range",
                    "unique", "invariant"}


# ---- cross-table invariants --------------------------------------------------------------


def library() -> dict[str, Any]:
    """Copies, loans and fines: a copy is on loan iff it has an active loan; a fine carries a
    waived_reason only when waived."""
    return {
        "name": "library", "clock_start": CLOCK,
        "theme": {"name": "library", "taxonomy": {"l3": "library"}},
        "tables": [
            {"name": "copies", "columns": [
                _pk(), _col("barcode", unique=True),
                _col("status", nullable=False,
                     enum=["available", "on_loan", "in_transit", "retired"])]},
            {"name": "loans", "columns": [
                _pk(), _fk("copy_id", "copies"),
                _col("status", nullable=False, enum=["active", "overdue", "returned"])]},
            {"name": "fines", "columns": [
                _pk(), _fk("loan_id", "loans"), _col("amount", "real"),
                _col("waived_reason"),
                _col("status", nullable=False, enum=["unpaid", "paid", "waived"])]},
        ],
        "rows": {
            "copies": [{"id": 1, "barcode": "A1", "status": "on_loan"},
                       {"id": 2, "barcode": "A2", "status": "available"},
                       {"id": 3, "barcode": "A3", "status": "available"}],
            "loans": [{"id": 1, "copy_id": 1, "status": "active"},
                      {"id": 2, "copy_id": 2, "status": "returned"}],
            "fines": [{"id": 1, "loan_id": 2, "amount": 1.5, "waived_reason": None,
                       "status": "unpaid"},
                      {"id": 2, "loan_id": 2, "amount": 0.5,
                       "waived_reason": "first offence", "status": "waived"}],
        },
    }


def test_library_invariants_are_derived_and_described():
    spec = _spec(library())
    found = {describe_invariant(i) for i in derive_invariants(spec.tables)}
    assert found == {
        "a copy's status is 'on_loan' iff it has a loan in active|overdue (loans.copy_id)",
        "a copy holds at most 1 loan in active|overdue (loans.copy_id)",
        "a fine's waived_reason is set only when its status is waived"}
    assert check_semantics(spec) == []


def test_copy_on_loan_without_an_active_loan_and_active_loan_on_a_free_copy():
    data = library()
    data["rows"]["copies"][0]["status"] = "available"  # its loan 1 is active
    data["rows"]["copies"][2]["status"] = "on_loan"  # copy 3 has no loan at all
    found = _only(_spec(data), "invariant")
    assert {(v.table, v.column, v.row) for v in found} == {("copies", "status", 1),
                                                          ("copies", "status", 3)}
    fixed, notes, left = repair_semantics(_spec(data))
    assert left == [] and any("invariant" in n for n in notes)
    assert [c["status"] for c in fixed.rows["copies"]] == ["on_loan", "available",
                                                           "available"]


def test_two_active_loans_of_one_copy_break_its_capacity():
    data = library()
    data["rows"]["loans"].append({"id": 3, "copy_id": 1, "status": "overdue"})
    [v] = _only(_spec(data), "invariant")
    assert (v.table, v.column, v.row) == ("loans", "status", 3)
    fixed, _notes, left = repair_semantics(_spec(data))
    assert left == [] and fixed.rows["loans"][2]["status"] == "returned"


def test_unpaid_fine_with_a_waived_reason():
    data = library()
    data["rows"]["fines"][0]["waived_reason"] = "staff discretion"
    [v] = _only(_spec(data), "invariant")
    assert (v.table, v.column, v.row) == ("fines", "waived_reason", 1)


def test_slot_holds_at_most_one_live_appointment():
    data = clinic()
    data["tables"][1]["columns"].append(_col("booked", "boolean"))
    for slot in data["rows"]["slots"]:
        slot["booked"] = True
    data["rows"]["appointments"][1].update(slot_id=1, clinician_id=1)  # both in slot 1
    found = _only(_spec(data), "invariant")
    assert {(v.table, v.column, v.row) for v in found} == {
        ("appointments", "status", 2),  # a second live appointment in slot 1
        ("slots", "booked", 2)}  # booked, and nothing in it
    fixed, _notes, left = repair_semantics(_spec(data))
    assert left == []
    assert fixed.rows["appointments"][1]["status"] == "cancelled"
    assert fixed.rows["appointments"][1]["cancelled_at"] is not None  # its lifecycle follows
    assert [s["booked"] for s in fixed.rows["slots"]] == [True, False]


def test_time_zone_belongs_to_the_country_of_the_address():
    assert address_country("130 Christina Road Apt. 373, Michelleberg, WA 82419") == "US"
    assert address_country("12 High Street, Leeds") is None
    assert "America/Los_Angeles" in country_zones("US")
    assert "Asia/Kathmandu" not in country_zones("US")
    data = clinic()
    data["tables"].append({"name": "locations", "columns": [
        _pk(), _col("address"), _col("timezone")]})
    data["rows"]["locations"] = [
        {"id": 1, "address": "130 Christina Road, Michelleberg, WA 82419",
         "timezone": "Asia/Kathmandu"},
        {"id": 2, "address": "4 Elm St, Dover, DE 19901", "timezone": "America/New_York"}]
    [v] = _only(_spec(data), "invariant")
    assert (v.table, v.column, v.row) == ("locations", "timezone", 1)
    fixed, _notes, left = repair_semantics(_spec(data))
    assert left == [] and fixed.rows["locations"][0]["timezone"] in country_zones("US")


def test_invariant_violations_reads_a_database_after_writes(tmp_path):
    spec = _spec(library())
    db = tmp_path / "lib.sqlite"
    build_template(spec, db)
    assert invariant_violations(spec, db) == []
    conn = sqlite3.connect(db)
    with conn:  # a check-out that inserts a loan but leaves the copy available
        conn.execute("INSERT INTO loans (id, copy_id, status) VALUES (3, 3, 'active')")
    conn.close()
    [v] = invariant_violations(spec, db)
    assert (v.rule, v.table, v.column, v.row) == ("invariant", "copies", "status", 3)


def test_a_role_name_column_holds_a_person():
    """A commit's `author_name` ("who wrote the change") is a person's name, not a word."""
    from_role = ColumnSpec(name="author_name", type="text", description="who wrote the change")
    assert column_semantic("commits", from_role) == "person_name"
    said = ColumnSpec(name="approver_name", type="text")
    assert column_semantic("expenses", said) == "person_name"
    assert column_semantic("tables", ColumnSpec(name="table_name", type="text")) != "person_name"


def test_a_product_name_in_camel_case_is_one_word():
    """Hostinger's 'WordPress' plugins were 'word_press_plugins' ("the word press plugins")
    beside its 'wordpress_themes'."""
    assert snake("getWordPressPlugins") == "get_wordpress_plugins"
    assert snake("listGitHubRepos") == "list_github_repos"
    assert snake("PostgreSQLConfig") == "postgresql_config"
    assert snake("createAppointment") == "create_appointment"
    assert snake("press_release") == "press_release"


def test_a_repository_has_one_checked_out_branch_and_a_library_many_checked_out_copies():
    """git's seed rows had seven checked-out branches in one repository (a commit then went
    onto any of them); a library's copies may all be checked out at once."""
    def parent_child(parent: str, fk: str, child: str, states: list[str]) -> list[TableSpec]:
        return [TableSpec(name=parent, columns=[
                    ColumnSpec(name="id", type="integer", primary_key=True),
                    ColumnSpec(name="name", type="text", nullable=False)]),
                TableSpec(name=child, columns=[
                    ColumnSpec(name="id", type="integer", primary_key=True),
                    ColumnSpec(name=fk, type="integer", nullable=False,
                               foreign_key=f"{parent}.id"),
                    ColumnSpec(name="status", type="text", nullable=False, enum=states)])]

    git = parent_child("repositories", "repository_id", "branches", ["active", "checked_out"])
    one = [i for i in derive_invariants(git) if i["kind"] == "one_per_parent"]
    assert one == [{"kind": "one_per_parent", "table": "branches", "fk": "repository_id",
                    "parent": "repositories", "column": "status",
                    "holding": ["checked_out"], "limit": 1}]
    f = RowFactory(git, None, seed=0, service="git")
    for _ in range(3):
        f.make("repositories")
    for _ in range(20):
        f.make("branches")
    heads = [b["repository_id"] for b in f.rows["branches"] if b["status"] == "checked_out"]
    assert heads and len(heads) == len(set(heads))
    two = {**f.rows, "branches": [*f.rows["branches"], {
        "id": 99, "repository_id": heads[0], "status": "checked_out"}]}
    found = _check_invariants({t.name: t for t in git}, two, one)
    assert [v.row for v in found] == [99]
    library = parent_child("libraries", "library_id", "copies", ["available", "checked_out"])
    assert not [i for i in derive_invariants(library) if i["kind"] == "one_per_parent"]
