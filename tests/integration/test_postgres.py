"""The catalog and environment schemas on a real PostgreSQL (pgserver ships the binaries)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import sqlalchemy as sa

pgserver = pytest.importorskip("pgserver", reason="pgserver is in the dev extra")
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pg_url():
    # Not under pytest's tmp dir: run as root, pgserver starts postgres as its own user, who
    # cannot traverse pytest's private (0700) base directory.
    tmp = Path(tempfile.mkdtemp(prefix="aw-pg-"))
    server = pgserver.get_server(tmp / "pg", cleanup_mode="stop")
    try:
        server.psql("CREATE DATABASE arena;")
        host = server.get_uri().split("host=")[1]
        yield f"postgresql+psycopg://postgres@/arena?host={host}"
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


def test_catalog_on_postgres(pg_url, notes_spec):
    from agent_world.envs.catalog import Catalog

    cat = Catalog(pg_url)
    try:
        assert cat.put_env(notes_spec, stage="manual").version == 1
        assert cat.put_env(notes_spec).version == 1
        assert cat.get_env("notes") == notes_spec.model_copy(update={"version": 1})
        tid, created = cat.put_theme(notes_spec.theme, env_name="notes")
        assert created and cat.put_theme(notes_spec.theme, env_name="notes") == (tid, False)
        run = cat.start_run("mine")
        cat.record("mine", "file:x", "bad file", run_id=run)
        cat.finish_run(run, "done", {"themes": 1})
        assert [e.reason for e in cat.ledger(run_id=run)] == ["bad file"]
        assert cat.list_envs()[0].stats["tables"] == 2
    finally:
        cat.close()


@pytest.mark.parametrize("example", ["airline", "ecommerce"])
def test_environment_schema_and_rows_load_into_postgres(pg_url, example):
    """The same EnvSpec gives working DDL for PostgreSQL: tables, keys, checks, seed rows."""
    from agent_world.envs.database import _full_rows
    from agent_world.envs.examples import load_example

    spec = load_example(example)
    engine = sa.create_engine(pg_url)
    md = spec.to_metadata()
    schema = f"ex_{example}"
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
            conn.execute(sa.text(f"SET search_path TO {schema}"))
            md.create_all(conn)
            for table in md.sorted_tables:
                rows = _full_rows(spec, table.name)
                if rows:
                    conn.execute(table.insert(), rows)
            counts = {t.name: conn.execute(sa.select(sa.func.count()).select_from(t)).scalar()
                      for t in md.sorted_tables}
            # constraints are real: an orphan foreign key is refused
            child = next(t for t in spec.tables if any(c.foreign_key for c in t.columns))
            fk_col = next(c for c in child.columns if c.foreign_key)
            with pytest.raises(sa.exc.IntegrityError), conn.begin_nested():
                conn.execute(sa.text(f'UPDATE "{child.name}" SET "{fk_col.name}" = :v'),
                             {"v": 987654 if fk_col.type == "integer" else "no-such-key"})
    finally:
        engine.dispose()
    assert counts == {t: len(r) for t, r in spec.rows.items()} | {
        t.name: 0 for t in spec.tables if t.name not in spec.rows}
