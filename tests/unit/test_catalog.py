"""The catalog: versions, idempotent themes, ledger, transactional writes, other URLs."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from agent_world.envs.catalog import Catalog
from agent_world.envs.spec import EnvSpec
from agent_world.errors import CatalogError


@pytest.fixture()
def catalog(tmp_path):
    cat = Catalog(f"sqlite:///{tmp_path / 'c.sqlite'}")
    yield cat
    cat.close()


def test_versions_only_when_content_changes(catalog, notes_spec):
    first = catalog.put_env(notes_spec, stage="manual")
    assert (first.version, first.fingerprint) == (1, notes_spec.fingerprint)
    assert catalog.put_env(notes_spec).version == 1  # unchanged: no new version
    raw = json.loads(notes_spec.to_json())
    raw["rows"]["users"].append({"id": 3, "name": "Cy"})
    second = catalog.put_env(EnvSpec.from_dict(raw), stage="mined")
    assert second.version == 2 and second.stage == "mined"
    assert catalog.get_env("notes").version == 2
    assert catalog.get_env("notes", 1) == notes_spec.model_copy(update={"version": 1})
    assert [v for v, _, _ in catalog.versions("notes")] == [1, 2]
    assert catalog.find_env(notes_spec.fingerprint).fingerprint == notes_spec.fingerprint
    [summary] = catalog.list_envs()
    assert summary.stats["rows"] == 4 and summary.taxonomy.endswith("/ notes")


def test_unknown_env_is_a_clear_error(catalog, notes_spec):
    catalog.put_env(notes_spec)
    with pytest.raises(CatalogError, match=r"no environment named 'nope'.*notes"):
        catalog.get_env("nope")
    with pytest.raises(CatalogError, match="has no version 9"):
        catalog.get_env("notes", 9)


def test_themes_are_idempotent(catalog, notes_spec):
    theme = notes_spec.theme
    tid, created = catalog.put_theme(theme, env_name="notes")
    tid2, created2 = catalog.put_theme(theme, env_name="notes", payload={"x": 1})
    assert created and not created2 and tid == tid2
    [row] = catalog.list_themes()
    assert row["l3"] == "notes" and row["payload"]["x"] == 1


def test_runs_and_ledger(catalog):
    run = catalog.start_run("mine")
    catalog.record("mine", "file:bad.yaml", "not an OpenAPI document", run_id=run)
    catalog.finish_run(run, "done", {"themes": 3})
    assert catalog.get_run(run)["summary"] == {"themes": 3}
    [entry] = catalog.ledger(stage="mine", run_id=run)
    assert entry.reason == "not an OpenAPI document"


def test_a_failed_write_leaves_nothing_behind(catalog, notes_spec, monkeypatch):
    from agent_world.envs import catalog as catalog_mod

    class Boom(Exception):
        pass

    def broken_stats(self):
        raise Boom()

    monkeypatch.setattr(catalog_mod.EnvSpec, "stats", broken_stats)
    with pytest.raises(Boom):
        catalog.put_env(notes_spec)
    monkeypatch.undo()
    assert catalog.list_envs() == []
    with catalog.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM environments")).scalar() == 0


def test_bad_url_is_a_clear_error():
    with pytest.raises(CatalogError, match="cannot open catalog"):
        Catalog("nosuchdialect://x")


def test_open_uses_home(home):
    cat = Catalog.open()
    assert cat.url == f"sqlite:///{home / 'catalog.sqlite'}"
    assert (home / "catalog.sqlite").exists()
