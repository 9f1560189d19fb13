"""Schema features of EnvSpec: composite keys, table CHECKs, indexes, foreign keys that must
reference a key, and seed rows checked against their column types."""

from __future__ import annotations

import copy

import pytest

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.errors import SpecError

BASE = {
    "name": "flights",
    "theme": {"name": "Flights", "taxonomy": {"l3": "flights"}},
    "tables": [
        {"name": "flights", "columns": [
            {"name": "number", "type": "text", "primary_key": True},
            {"name": "date", "type": "date", "primary_key": True},
            {"name": "seats", "type": "integer", "nullable": False},
            {"name": "booked", "type": "integer", "nullable": False, "default": 0}],
         "checks": [{"name": "capacity", "sql": "booked <= seats"}],
         "indexes": [{"columns": ["date"]}]},
        {"name": "bookings", "columns": [
            {"name": "id", "type": "integer", "primary_key": True},
            {"name": "number", "type": "text", "nullable": False},
            {"name": "date", "type": "date", "nullable": False},
            {"name": "seat", "type": "text", "nullable": False}],
         "foreign_keys": [{"columns": ["number", "date"], "table": "flights",
                           "ref_columns": ["number", "date"], "on_delete": "CASCADE"}],
         "indexes": [{"columns": ["number", "date", "seat"], "unique": True,
                      "name": "one_per_seat"}]},
    ],
    "rows": {
        "flights": [{"number": "AW1", "date": "2026-03-01", "seats": 2, "booked": 1},
                    {"number": "AW1", "date": "2026-03-02", "seats": 2}],
        "bookings": [{"id": 1, "number": "AW1", "date": "2026-03-01", "seat": "1A"}],
    },
    "tools": [{"name": "sql", "description": "Run one statement.", "mutates": True,
               "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
               "source": "def sql(ctx, q):\n    return ctx.query(q)\n"}],
}


def _spec(**changes) -> EnvSpec:
    data = copy.deepcopy(BASE)
    for path, value in changes.items():
        target = data
        keys = path.split("__")
        for k in keys[:-1]:
            target = target[int(k)] if k.isdigit() else target[k]
        target[int(keys[-1]) if keys[-1].isdigit() else keys[-1]] = value
    return EnvSpec.from_dict(data)


def test_composite_keys_checks_and_indexes_hold_in_episodes():
    spec = _spec()
    with EnvRuntime() as rt:
        ep = rt.open(spec)
        pristine = ep.state_hash()
        bad_fk = "INSERT INTO bookings (number, date, seat) VALUES ('AW1', '2026-03-09', '2B')"
        assert ep.step("sql", {"q": bad_fk}).error.kind == "constraint_violation"
        twice = "INSERT INTO bookings (number, date, seat) VALUES ('AW1', '2026-03-01', '1A')"
        assert ep.step("sql", {"q": twice}).error.kind == "constraint_violation"
        over = "UPDATE flights SET booked = 3 WHERE date = '2026-03-01'"
        obs = ep.step("sql", {"q": over})
        assert obs.error.kind == "constraint_violation" and "capacity" in obs.error.message
        # ON DELETE CASCADE, then a reset that undoes the cascaded rows too
        assert ep.step("sql", {"q": "DELETE FROM flights WHERE date = '2026-03-01'"}).ok
        assert ep.query("SELECT count(*) AS n FROM bookings") == [{"n": 0}]
        assert ep.diff().counts()["bookings"]["deleted"] == 1
        ep.reset()
        assert ep.state_hash() == pristine
    ddl = spec.ddl_all("sqlite")
    assert any("CREATE UNIQUE INDEX one_per_seat" in s for s in ddl)
    assert any(s.startswith("CREATE INDEX ix_flights_0_date") for s in ddl)
    assert "FOREIGN KEY(number, date) REFERENCES flights (number, date) ON DELETE CASCADE" in \
        "\n".join(spec.ddl("postgresql"))


def test_foreign_keys_must_reference_a_key():
    with pytest.raises(SpecError, match=r"tables\[1\]\.foreign_keys\[0\] \(bookings\(number\)\)"
                                        r": references flights\(number\), which is neither"):
        _spec(tables__1__foreign_keys=[{"columns": ["number"], "table": "flights",
                                        "ref_columns": ["number"]}])
    with pytest.raises(SpecError, match=r"columns\[1\]\.foreign_key \(bookings\.number\): "
                                        r"references flights\(number\)"):
        _spec(**{"tables__1__columns__1": {"name": "number", "type": "text",
                                           "foreign_key": "flights.number"}})
    with pytest.raises(SpecError, match="differ in length"):
        _spec(tables__1__foreign_keys=[{"columns": ["number"], "table": "flights",
                                        "ref_columns": ["number", "date"]}])


@pytest.mark.parametrize("column, value, message", [
    ("seats", "not-an-int", "expected integer, got str"),
    ("seats", 1.5, "expected integer, got float"),
    ("seats", True, "expected integer, got bool"),
    ("seats", None, "NOT NULL"),
    ("date", "2026-13-01", "ISO date"),
    ("date", "2026-03-01T10:00:00", "YYYY-MM-DD"),
])
def test_seed_rows_are_type_checked(column, value, message):
    with pytest.raises(SpecError, match=rf"rows\[flights\]\[0\]\.{column}: .*{message}"):
        _spec(**{f"rows__flights__0__{column}": value})


def test_a_seed_row_breaking_a_table_check_is_named_at_build():
    spec = _spec(rows__flights__0__booked=5)
    with EnvRuntime() as rt, pytest.raises(SpecError, match=r"rows\[flights\]\[0\].*CHECK"):
        rt.open(spec)


def test_new_schema_fields_leave_old_fingerprints_alone(notes_spec):
    table = notes_spec.content()["tables"][0]
    assert not {"foreign_keys", "checks", "indexes"} & set(table)
    assert _spec().fingerprint != _spec(tables__0__checks=[]).fingerprint


def test_checks_are_single_expressions():
    with pytest.raises(SpecError, match="one SQL expression"):
        _spec(tables__0__checks=[{"name": "x", "sql": "1); DROP TABLE flights; --"}])
