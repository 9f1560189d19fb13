"""Episode databases: building a spec's template, and reading state (diff, hash, rows).

The template is built once per spec fingerprint (DDL from SQLAlchemy metadata, then the seed
rows), so resetting an episode is a file copy. Reading state is the project's own code and runs
in the caller's process with plain sqlite3 over the episode's file: a diff is a handful of SQL
set operations against the attached template.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel, Field

from agent_world.envs import worker as _worker  # noqa: F401  (registers the BOOLEAN converter)
from agent_world.envs.spec import EnvSpec
from agent_world.errors import SpecError


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _full_rows(spec: EnvSpec, table: str) -> list[dict[str, Any]]:
    """Seed rows with every column present (SQLAlchemy executemany wants uniform keys)."""
    t = spec.table(table)
    defaults = {c.name: c.default for c in t.columns}
    return [{**defaults, **row} for row in spec.rows.get(table, [])]


def build_template(spec: EnvSpec, path: Path) -> Path:
    """Create the prepared database for `spec` at `path` (atomically: build aside, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.building")
    tmp.unlink(missing_ok=True)
    engine = sa.create_engine(f"sqlite:///{tmp}")

    @sa.event.listens_for(engine, "connect")
    def _fk_on(dbapi_conn: Any, _: Any) -> None:
        dbapi_conn.execute("PRAGMA foreign_keys=ON")

    md = spec.to_metadata()
    try:
        md.create_all(engine)
        with engine.begin() as conn:
            for table in md.sorted_tables:
                rows = _full_rows(spec, table.name)
                if not rows:
                    continue
                try:
                    with conn.begin_nested():
                        conn.execute(table.insert(), rows)
                except sa.exc.DBAPIError:
                    # find the first offending row so the message names it
                    for i, row in enumerate(rows):
                        try:
                            with conn.begin_nested():
                                conn.execute(table.insert(), [row])
                        except sa.exc.DBAPIError as exc:
                            raise SpecError(
                                f"environment {spec.name!r}: rows[{table.name}][{i}] "
                                f"cannot be inserted: {exc.orig}"
                            ) from None
    finally:
        engine.dispose()
    try:
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    return path


class TableDiff(BaseModel):
    inserted: list[dict[str, Any]] = Field(default_factory=list)
    updated: list[dict[str, Any]] = Field(default_factory=list)  # {"key", "before", "after"}
    deleted: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.inserted or self.updated or self.deleted)


class StateDiff(BaseModel):
    """Rows inserted/updated/deleted per table since the episode's last reset."""

    tables: dict[str, TableDiff] = Field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.tables

    def counts(self) -> dict[str, dict[str, int]]:
        return {t: {"inserted": len(d.inserted), "updated": len(d.updated),
                    "deleted": len(d.deleted)} for t, d in self.tables.items()}


def _rows(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def read_connection(path: Path) -> sqlite3.Connection:
    # Opening read-write (not mode=ro) lets SQLite roll back a hot journal left by a killed worker.
    return sqlite3.connect(path, isolation_level=None, detect_types=sqlite3.PARSE_DECLTYPES)


def diff_databases(spec: EnvSpec, current: Path, base: Path) -> StateDiff:
    conn = read_connection(current)
    try:
        conn.execute("ATTACH DATABASE ? AS base", (str(base),))
        out: dict[str, TableDiff] = {}
        for t in spec.tables:
            name = _q(t.name)
            pk = t.primary_key
            cols = [c.name for c in t.columns]
            key = ", ".join(_q(k) for k in pk)
            join = " AND ".join(f"m.{_q(k)} IS b.{_q(k)}" for k in pk)
            same = " AND ".join(f"m.{_q(c)} IS b.{_q(c)}" for c in cols)
            d = TableDiff(
                inserted=_rows(conn.execute(
                    f"SELECT * FROM main.{name} WHERE ({key}) NOT IN "
                    f"(SELECT {key} FROM base.{name}) ORDER BY {key}")),
                deleted=_rows(conn.execute(
                    f"SELECT * FROM base.{name} WHERE ({key}) NOT IN "
                    f"(SELECT {key} FROM main.{name}) ORDER BY {key}")),
            )
            sel = ", ".join([f"m.{_q(c)}" for c in cols] + [f"b.{_q(c)}" for c in cols])
            cur = conn.execute(
                f"SELECT {sel} FROM main.{name} m JOIN base.{name} b ON {join} "
                f"WHERE NOT ({same}) ORDER BY {', '.join('m.' + _q(k) for k in pk)}")
            n = len(cols)
            for r in cur.fetchall():
                after, before = dict(zip(cols, r[:n], strict=True)), dict(zip(cols, r[n:], strict=True))
                changed = {c: after[c] for c in cols if after[c] != before[c]}
                d.updated.append({"key": {k: after[k] for k in pk},
                                  "before": {c: before[c] for c in changed}, "after": changed})
            if not d.empty:
                out[t.name] = d
        return StateDiff(tables=out)
    finally:
        conn.close()


def state_hash(spec: EnvSpec, path: Path) -> str:
    """One hash of every table's rows in key order: equal hashes, equal database states."""
    conn = read_connection(path)
    try:
        h = hashlib.sha256()
        for t in spec.tables:
            order = ", ".join(_q(k) for k in t.primary_key)
            for row in conn.execute(f"SELECT * FROM {_q(t.name)} ORDER BY {order}"):
                h.update(json.dumps([t.name, *row], default=str).encode())
        return h.hexdigest()[:16]
    finally:
        conn.close()


def read_rows(path: Path, sql: str, params: Any = ()) -> list[dict[str, Any]]:
    """Run a read-only query against an episode database (for verifiers and reports)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True,
                           detect_types=sqlite3.PARSE_DECLTYPES)
    try:
        return _rows(conn.execute(sql, params))
    finally:
        conn.close()
