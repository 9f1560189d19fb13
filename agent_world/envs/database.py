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
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel, Field

from agent_world.envs.spec import EnvSpec

# tool_sql registers the BOOLEAN/JSONTEXT converters and names the bookkeeping tables
from agent_world.envs.tool_sql import COUNTERS_TABLE, INTERNAL_PREFIX
from agent_world.errors import SpecError


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _full_rows(spec: EnvSpec, table: str) -> list[dict[str, Any]]:
    """Seed rows with every column present (SQLAlchemy executemany wants uniform keys)."""
    t = spec.table(table)
    defaults = {c.name: c.default for c in t.columns}
    return [{**defaults, **row} for row in spec.rows.get(table, [])]


UNDO_TABLE = f"{INTERNAL_PREFIX}undo"
UNDOING = f"{INTERNAL_PREFIX}undoing"  # a counters row while a reset undoes: no audit entries


def _old_table(table: str) -> str:
    return f"{INTERNAL_PREFIX}old_{table}"


def _rowid_alias(spec: EnvSpec, table: str) -> bool:
    """Whether the table's primary key is SQLite's rowid (one INTEGER key column)."""
    t = spec.table(table)
    pk = t.primary_key
    return len(pk) == 1 and t.column(pk[0]).type == "integer"


_AUDIT_COLUMNS = {"action", "field_name", "old_value", "new_value", "changed_at"}
_NOT_AUDITED = {"created_at", "updated_at", "modified_at"}


def audit_logs(spec: EnvSpec) -> list[tuple[str, str, str]]:
    """(log table, entity table, FK naming the entity) for each audit log of the spec: a
    table of (entity FK, action, field_name, old_value, new_value, changed_at) rows over an
    entity with an `updated_at` (the `<entity>_history` tables mining adds when the source
    speaks of an audit log). The engine writes them (`bookkeeping_ddl`)."""
    out = []
    for t in spec.tables:
        if not _AUDIT_COLUMNS <= {c.name for c in t.columns}:
            continue
        for c in t.columns:
            target = c.foreign_key.split(".")[0] if c.foreign_key else None
            entity = next((e for e in spec.tables if e.name == target), None)
            if entity is not None and entity.name != t.name and not c.nullable and \
                    any(x.name == "updated_at" for x in entity.columns) and \
                    len(entity.primary_key) == 1:
                out.append((t.name, entity.name, c.name))
                break
    return out


def audited_changes(spec: EnvSpec, entity: str, before: dict[str, Any],
                    after: dict[str, Any]) -> list[str]:
    """The fields of one updated `entity` row its audit log records."""
    pk = spec.table(entity).primary_key[0]
    return [c.name for c in spec.table(entity).columns
            if c.name not in _NOT_AUDITED and c.name != pk and before.get(c.name) !=
            after.get(c.name)]


def _audit_ddl(spec: EnvSpec) -> list[str]:
    """Triggers that write every change of an audited record to its log: one row per changed
    field (old and new value as text, the record's `updated_at` as the time), so a log never
    disagrees with the records whatever tool made the change."""
    stmts = []
    for log, entity, fk in audit_logs(spec):
        t = spec.table(entity)
        pk = t.primary_key[0]
        for c in t.columns:
            if c.name in _NOT_AUDITED or c.name == pk:
                continue
            col = _q(c.name)
            text = (lambda v: f"CASE WHEN {v} IS NULL THEN NULL WHEN {v} THEN 'True' ELSE "
                    f"'False' END") if c.type == "boolean" else (lambda v: f"CAST({v} AS TEXT)")
            action = "status_changed" if c.name in ("status", "state") else "updated"
            stmts.append(
                f"CREATE TRIGGER {_q(INTERNAL_PREFIX + 'audit_' + entity + '_' + c.name)} "
                f"AFTER UPDATE OF {col} ON {_q(entity)} FOR EACH ROW "
                f"WHEN old.{col} IS NOT new.{col} AND NOT EXISTS (SELECT 1 FROM "
                f"{COUNTERS_TABLE} WHERE name = '{UNDOING}') BEGIN "
                f"INSERT INTO {_q(log)} ({_q(fk)}, action, field_name, old_value, new_value, "
                f"changed_at) VALUES (new.{_q(pk)}, '{action}', '{c.name}', "
                # (tool connections run with recursive_triggers on: the log's own undo
                # trigger records the entry, so a reset takes it back)
                f"{text('old.' + col)}, {text('new.' + col)}, new.updated_at); END")
    return stmts


def bookkeeping_ddl(spec: EnvSpec) -> list[str]:
    """The engine's tables and triggers inside every episode database: id/clock counters, and
    an undo log that records every row change since reset so that `reset()` costs the number
    of changes, not the size of the database. Tool code cannot touch any of it."""
    stmts = [f"CREATE TABLE {COUNTERS_TABLE} (name TEXT PRIMARY KEY, n INTEGER NOT NULL)",
             f"CREATE TABLE {UNDO_TABLE} (seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, "
             "op TEXT NOT NULL, old_rowid INTEGER, new_rowid INTEGER)"]
    for t in spec.tables:
        name, old = _q(t.name), _q(_old_table(t.name))
        cols = [_q(c.name) for c in t.columns]
        olds = ", ".join(f"old.{c}" for c in cols)
        tag = _q(t.name)[1:-1].replace("'", "''")
        stmts.append(f"CREATE TABLE {old} (seq INTEGER PRIMARY KEY, {', '.join(cols)})")
        stmts.append(
            f"CREATE TRIGGER {_q(INTERNAL_PREFIX + 'i_' + t.name)} AFTER INSERT ON {name} BEGIN "
            f"INSERT INTO {UNDO_TABLE} (tbl, op, new_rowid) VALUES ('{tag}', 'I', new.rowid); "
            "END")
        for op, kind in (("DELETE", "D"), ("UPDATE", "U")):
            stmts.append(
                f"CREATE TRIGGER {_q(INTERNAL_PREFIX + kind.lower() + '_' + t.name)} AFTER {op} "
                f"ON {name} BEGIN "
                f"INSERT INTO {UNDO_TABLE} (tbl, op, old_rowid, new_rowid) VALUES "
                f"('{tag}', '{kind}', old.rowid, {'new.rowid' if kind == 'U' else 'NULL'}); "
                f"INSERT INTO {old} (seq, {', '.join(cols)}) VALUES (last_insert_rowid(), {olds}); "
                "END")
    return stmts + _audit_ddl(spec)


def undo_connection(path: Path) -> sqlite3.Connection:
    """A connection for `undo_changes` (keep it per episode: its parsed schema and statements
    make the next reset cheaper)."""
    return sqlite3.connect(path, isolation_level=None, check_same_thread=False)


def undo_changes(spec: EnvSpec, path: Path, conn: sqlite3.Connection | None = None) -> int:
    """Put an episode database back to its template state by undoing its logged changes in
    reverse order (one transaction). Returns the number of row changes undone."""
    own = conn is None
    conn = conn or undo_connection(path)
    try:
        # foreign keys stay off here (the default): the log already holds every cascaded change
        conn.execute("BEGIN IMMEDIATE")
        # putting records back is no change to log (the marker goes with the counters below)
        conn.execute(f"INSERT OR REPLACE INTO {COUNTERS_TABLE} (name, n) VALUES (?, 1)",
                     (UNDOING,))
        entries = conn.execute(f"SELECT seq, tbl, op, old_rowid, new_rowid FROM {UNDO_TABLE} "
                               "ORDER BY seq DESC").fetchall()
        touched = set()
        for seq, tbl, op, old_rowid, new_rowid in entries:
            name, old = _q(tbl), _q(_old_table(tbl))
            cols = ", ".join(_q(c.name) for c in spec.table(tbl).columns)
            alias = _rowid_alias(spec, tbl)
            touched.add(tbl)
            if op == "I":
                conn.execute(f"DELETE FROM {name} WHERE rowid = ?", (new_rowid,))
            elif op == "D":
                if alias:
                    conn.execute(f"INSERT INTO {name} ({cols}) SELECT {cols} FROM {old} "
                                 "WHERE seq = ?", (seq,))
                else:
                    conn.execute(f"INSERT INTO {name} (rowid, {cols}) SELECT ?, {cols} "
                                 f"FROM {old} WHERE seq = ?", (old_rowid, seq))
            else:
                rowid = "" if alias else ", rowid = ?"
                params = (seq, new_rowid) if alias else (seq, old_rowid, new_rowid)
                conn.execute(f"UPDATE {name} SET ({cols}) = (SELECT {cols} FROM {old} "
                             f"WHERE seq = ?){rowid} WHERE rowid = ?", params)
        conn.execute(f"DELETE FROM {UNDO_TABLE}")
        for tbl in touched:
            conn.execute(f"DELETE FROM {_q(_old_table(tbl))}")
        conn.execute(f"DELETE FROM {COUNTERS_TABLE}")
        conn.execute("COMMIT")
        return len(entries)
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise
    finally:
        if own:
            conn.close()


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
            for stmt in bookkeeping_ddl(spec):  # after the seed rows: they are not undone
                conn.exec_driver_sql(stmt)
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


def logged_tables(conn: sqlite3.Connection, schema: str = "main") -> set[str] | None:
    """The tables whose rows changed since an episode database was last reset, as its undo log
    names them (an update that wrote the same values counts too), or None for a database
    without the engine's undo log. Every other table is as the reset left it."""
    try:
        return {r[0] for r in conn.execute(f"SELECT DISTINCT tbl FROM {schema}.{UNDO_TABLE}")}
    except sqlite3.OperationalError:  # no such table: not an episode database
        return None


def diff_databases(spec: EnvSpec, current: Path, base: Path) -> StateDiff:
    """Rows inserted, deleted and updated in the episode database `current` since it was last
    reset to `base`; only the tables its undo log names are compared."""
    conn = read_connection(current)
    try:
        out: dict[str, TableDiff] = {}
        logged = logged_tables(conn)
        if logged is not None and not logged:  # nothing changed since the reset
            return StateDiff(tables=out)
        conn.execute("ATTACH DATABASE ? AS base", (str(base),))
        for t in spec.tables:
            if logged is not None and t.name not in logged:
                continue
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
                after = dict(zip(cols, r[:n], strict=True))
                before = dict(zip(cols, r[n:], strict=True))
                changed = {c: after[c] for c in cols if after[c] != before[c]}
                d.updated.append({"key": {k: after[k] for k in pk},
                                  "before": {c: before[c] for c in changed}, "after": changed})
            if not d.empty:
                out[t.name] = d
        return StateDiff(tables=out)
    finally:
        conn.close()


def _table_rows(conn: sqlite3.Connection, t: Any, dropped: set[str]) -> list[dict[str, Any]]:
    order = ", ".join(_q(k) for k in t.primary_key)
    rows = _rows(conn.execute(f"SELECT * FROM {_q(t.name)} ORDER BY {order}"))
    if dropped:
        rows = sorted(({k: v for k, v in r.items() if k not in dropped} for r in rows),
                      key=lambda r: json.dumps(r, sort_keys=True, default=str))
    return rows


def dump_tables(spec: EnvSpec, path: Path,
                ignore: dict[str, list[str]] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every table of the spec (in spec order) with its rows in primary-key order; JSON
    columns decoded. `ignore` drops columns per table (e.g. generated ids) and then orders the
    rows by their remaining values, so states that differ only there compare equal."""
    ignore = ignore or {}
    conn = read_connection(path)
    try:
        return {t.name: _table_rows(conn, t, set(ignore.get(t.name, ()))) for t in spec.tables}
    finally:
        conn.close()


_ENCODE = json.JSONEncoder(default=str).encode  # json.dumps(x, default=str), built once
# the hashed bytes of template tables, by (template file, its version, table, ignored columns):
# an episode's untouched tables are its template's, and most calls touch one or two
_TEMPLATE_BYTES: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()
_TEMPLATE_BYTES_LIMIT = 64 << 20
_TEMPLATE_LOCK = threading.Lock()  # episodes hash from many threads (graph nodes, pools)


def _table_bytes(conn: sqlite3.Connection, t: Any, dropped: set[str]) -> bytes:
    return b"".join(_ENCODE([t.name, *row.values()]).encode()
                    for row in _table_rows(conn, t, dropped))


def _template_bytes(base: Path, t: Any, dropped: set[str]) -> bytes:
    st = base.stat()
    key = (str(base), st.st_mtime_ns, st.st_size, t.name, tuple(sorted(dropped)))
    with _TEMPLATE_LOCK:
        got = _TEMPLATE_BYTES.get(key)
        if got is not None:
            _TEMPLATE_BYTES.move_to_end(key)
            return got
    conn = read_connection(base)
    try:
        got = _table_bytes(conn, t, dropped)
    finally:
        conn.close()
    with _TEMPLATE_LOCK:
        _TEMPLATE_BYTES[key] = got
        while sum(map(len, _TEMPLATE_BYTES.values())) > _TEMPLATE_BYTES_LIMIT \
                and len(_TEMPLATE_BYTES) > 1:
            _TEMPLATE_BYTES.popitem(last=False)
    return got


def state_hash(spec: EnvSpec, path: Path, ignore: dict[str, list[str]] | None = None,
               base: Path | None = None) -> str:
    """One hash of every table's rows in key order: equal hashes, equal database states
    (the engine's bookkeeping excluded). `ignore` as in `dump_tables`. With `base`, the
    template an episode database was reset to, tables its undo log does not name are read
    from the template's cached bytes (the same hash, without reading them again)."""
    ignore = ignore or {}
    h = hashlib.sha256()
    conn = read_connection(path)
    try:
        logged = logged_tables(conn) if base is not None else None
        for t in spec.tables:
            dropped = set(ignore.get(t.name, ()))
            if base is not None and logged is not None and t.name not in logged:
                h.update(_template_bytes(base, t, dropped))
            else:
                h.update(_table_bytes(conn, t, dropped))
    finally:
        conn.close()
    return h.hexdigest()[:16]


def read_rows(path: Path, sql: str, params: Any = ()) -> list[dict[str, Any]]:
    """Run a read-only query against an episode database (for verifiers and reports)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True,
                           detect_types=sqlite3.PARSE_DECLTYPES)
    try:
        return _rows(conn.execute(sql, params))
    finally:
        conn.close()
