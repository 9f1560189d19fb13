"""The catalog and environment schemas on a real PostgreSQL (pgserver ships the binaries)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
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


# -- a shared deployment: processes writing one PostgreSQL catalog, threads checkpointed there ----
ROOT = Path(__file__).resolve().parents[2]
# one process's synthesis; every task it stores is also written to a file, to account for it
SYNTH = """
import json, sys
from agent_world.envs.catalog import Catalog
from agent_world.graphs.synthesize_graph import synthesize_tasks
put, out = Catalog.put_task, open(sys.argv[2], "a")
def logged(self, task_id, *a, **k):
    put(self, task_id, *a, **k)
    out.write(task_id + "\\n"); out.flush()
Catalog.put_task = logged
ids = synthesize_tasks(["airline", "ecommerce"], home=sys.argv[1], per_env=2,
                       seed=int(sys.argv[3]), levels=[1, 2], context={"runs": 1})
print(json.dumps(ids))
"""


def _env(pg_url: str, home: Path) -> dict[str, str]:
    return dict(os.environ, AGENT_WORLD_CATALOG_URL=pg_url, AGENT_WORLD_HOME=str(home),
                LANGSMITH_TRACING="false", PYTHONPATH=str(ROOT))


def _fresh_db(pg_url: str, name: str) -> str:
    engine = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name}"))
            conn.execute(sa.text(f"CREATE DATABASE {name}"))
    finally:
        engine.dispose()
    return pg_url.replace("/arena?", f"/{name}?")


@pytest.mark.timeout(600)
def test_two_processes_synthesize_into_one_postgres_catalog(pg_url, tmp_path):
    from agent_world.envs.catalog import Catalog

    url = _fresh_db(pg_url, "shared_synth")
    procs = []
    for i, seed in enumerate((0, 5)):  # same environments, different walks, at the same time
        home = tmp_path / f"p{i}"
        home.mkdir()
        procs.append((subprocess.Popen(
            [sys.executable, "-c", SYNTH, str(home), str(tmp_path / f"stored{i}"), str(seed)],
            env=_env(url, home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
            tmp_path / f"stored{i}"))
    emitted: list[set[str]] = []
    for proc, _ in procs:
        out, err = proc.communicate(timeout=500)
        assert proc.returncode == 0, err[-3000:]
        emitted.append(set(json.loads(out.strip().splitlines()[-1])))
    stored = [set(path.read_text().split()) for _, path in procs]
    cat = Catalog(url)
    try:
        rows = [t["id"] for t in cat.list_tasks()]
        runs = cat.list_runs(kind="synthesize")
    finally:
        cat.close()
    assert len(rows) == len(set(rows))  # nothing duplicated
    assert set(rows) == stored[0] | stored[1]  # nothing lost: every stored task is there
    assert all(len(e) == 4 for e in emitted)  # 2 per environment each
    assert emitted[0] | emitted[1] <= set(rows)
    assert sorted(r["status"] for r in runs) == ["done", "done"]
    assert sum(r["summary"]["kept"] for r in runs) == len(stored[0]) + len(stored[1])


def _thread_state(url: str, home: Path, thread: str) -> tuple[dict, list[str]]:
    from agent_world.graphs.runner import final_state, thread_config
    from agent_world.graphs.synthesize_graph import build_graph

    os.environ["AGENT_WORLD_CATALOG_URL"] = url
    try:
        return final_state(build_graph(), thread_config(thread, home))
    finally:
        del os.environ["AGENT_WORLD_CATALOG_URL"]


@pytest.mark.timeout(600)
def test_a_graph_killed_mid_run_resumes_from_the_postgres_checkpointer(pg_url, tmp_path):
    """`agent-world synthesize` on a PostgreSQL catalog checkpoints its thread in the same
    database; killed with SIGKILL while its branches run, `--resume` continues that thread."""
    from agent_world.envs.catalog import Catalog

    url = _fresh_db(pg_url, "resume")
    home = tmp_path / "home"
    home.mkdir()
    args = [sys.executable, "-m", "agent_world.cli", "synthesize", "--env", "airline", "--env",
            "ecommerce", "--per-env", "3", "--runs", "1", "--thread", "t1"]
    proc = subprocess.Popen(args, env=_env(url, home), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    cat = Catalog(url)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # kill once some tasks are stored, not all
            assert proc.poll() is None, f"finished before it could be killed: {proc.stderr.read()}"
            try:
                stored = len(cat.list_tasks())
            except Exception:  # noqa: BLE001 - the schema is being created
                stored = 0
            if stored >= 1:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        values, pending = _thread_state(url, home, "t1")
        assert set(pending) == {"synthesize_env"}, pending  # stopped mid-run
        run_id = values["run_id"]
        before = len(cat.list_tasks())
        assert before < 6
        assert not (home / "checkpoints.sqlite").exists()  # the thread lives in PostgreSQL

        done = subprocess.run([*args, "--resume"], env=_env(url, home), capture_output=True,
                              text=True, timeout=500)
        assert done.returncode == 0, done.stderr[-3000:]
        values, pending = _thread_state(url, home, "t1")
        assert pending == [] and values["run_id"] == run_id  # the same run, continued
        assert [r["id"] for r in cat.list_runs(kind="synthesize")] == [run_id]
        tasks = cat.list_tasks()
        assert len(tasks) == len({t["id"] for t in tasks}) == 6
    finally:
        cat.close()
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            n = conn.execute(sa.text("SELECT count(*) FROM checkpoints WHERE thread_id = 't1'"))
            assert n.scalar() > 0
    finally:
        engine.dispose()
