"""EnvSpec: validation names the bad field, JSON round trip, fingerprint, DDL."""

from __future__ import annotations

import copy
import json

import pytest

from agent_world.envs.spec import EnvSpec
from agent_world.errors import SpecError


def _raw(notes_spec):
    return json.loads(notes_spec.to_json())


def test_round_trip_keeps_everything(notes_spec):
    again = EnvSpec.from_json(notes_spec.to_json())
    assert again == notes_spec
    assert again.fingerprint == notes_spec.fingerprint


def test_fingerprint_tracks_content_not_name_or_provenance(notes_spec):
    renamed = notes_spec.model_copy(update={"name": "other", "version": 7})
    assert renamed.fingerprint == notes_spec.fingerprint
    raw = _raw(notes_spec)
    raw["rows"]["users"][1]["name"] = "Bob"
    assert EnvSpec.from_dict(raw).fingerprint != notes_spec.fingerprint


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda r: r["tables"][1]["columns"][2].update(foreign_key="people.id"), "tables[1]"),
        (lambda r: r["tables"][0]["columns"][0].update(name="1bad"), "tables[0].columns[0].name"),
        (lambda r: r["tables"][0]["columns"][1].update(type="varchar"), "tables[0].columns[1].type"),
        (lambda r: r["tools"][0].update(source="def list_notes(ctx, user_id):\n  return ("),
         "tools[0]"),
        (lambda r: r["tools"][0].update(source="def other(ctx):\n  return 1\n"), "tools[0]"),
        (lambda r: r["tools"][1]["parameters"].update(type="array"), "tools[1].parameters"),
        (lambda r: r["tools"][1]["parameters"]["properties"].update(x={"type": "nonsense"}),
         "tools[1].parameters"),
        (lambda r: r["rows"]["users"][0].update(email="a@b"), "rows[users][0]"),
        (lambda r: r["tests"][0].update(tool="missing"), "tests[0]"),
        (lambda r: r.update(surprise=1), "surprise"),
    ],
)
def test_validation_names_the_bad_field(notes_spec, mutate, field):
    raw = copy.deepcopy(_raw(notes_spec))
    mutate(raw)
    with pytest.raises(SpecError) as info:
        EnvSpec.from_dict(raw, origin="bad.json")
    message = str(info.value)
    assert message.startswith("bad.json: invalid environment spec")
    assert field in message, message


def test_malformed_json_is_one_clear_message(tmp_path):
    bad = tmp_path / "env.json"
    bad.write_text('{"name": "x",')
    with pytest.raises(SpecError, match=r"env.json: not valid JSON"):
        EnvSpec.load(bad)
    with pytest.raises(SpecError, match="cannot read"):
        EnvSpec.load(tmp_path / "missing.json")


def test_ddl_for_sqlite_and_postgres(notes_spec):
    sqlite_ddl = "\n".join(notes_spec.ddl("sqlite"))
    pg_ddl = "\n".join(notes_spec.ddl("postgresql"))
    for ddl in (sqlite_ddl, pg_ddl):
        assert "FOREIGN KEY(user_id) REFERENCES users (id)" in ddl
        assert "role IN ('admin', 'member')" in ddl
    assert "SERIAL" in pg_ddl  # integer keys become database-generated ids
    # users must be created before notes (dependency order)
    assert sqlite_ddl.index("CREATE TABLE users") < sqlite_ddl.index("CREATE TABLE notes")


def test_stats(notes_spec):
    assert notes_spec.stats() == {"tables": 2, "rows": 3, "foreign_keys": 1, "constraints": 7,
                                  "tools": 6, "tests": 2}
