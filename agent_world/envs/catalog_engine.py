"""How the catalog talks to its database: SQLite's pragmas and transactions, and which failures
of a transaction are worth retrying (another writer got there first).
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

# Writers in other processes can make a transaction fail in ways that are fine to retry: two
# inserts of one key (IntegrityError), SQLite's busy/locked, PostgreSQL serialization failures
# and deadlocks. A retried transaction re-reads the rows, so it lands on the winner's result.
_RETRIES = 12
_TRANSIENT = ("database is locked", "database is busy", "deadlock detected",
              "could not serialize", "already exists", "duplicate key", "unique constraint",
              "tuple concurrently updated")


def _transient(exc: sa.exc.DBAPIError) -> bool:
    if isinstance(exc, sa.exc.IntegrityError):
        return True
    return any(t in str(exc.orig).lower() for t in _TRANSIENT)


def _backoff(attempt: int) -> None:
    time.sleep(min(0.5, 0.005 * 2 ** attempt) * (0.5 + random.random()))


def _reason(exc: sa.exc.DBAPIError) -> str:
    return str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)


def _sqlite_folder(database: str | None) -> Path | None:
    """The folder of a SQLite catalog file (None: in memory)."""
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        return None
    if database.startswith("file:"):  # a URI filename (?uri=true)
        database = database.removeprefix("file:").split("?")[0]
    return Path(database).parent


def _sqlite_pragmas(engine: sa.Engine) -> None:
    """Foreign keys on, WAL (readers never block the writer), a generous busy timeout, and
    transactions begun by this code rather than by the driver: writes say BEGIN IMMEDIATE."""

    @sa.event.listens_for(engine, "connect")
    def _connect(conn: Any, _: Any) -> None:
        conn.isolation_level = None  # the driver must not issue its own BEGIN
        conn.execute("PRAGMA busy_timeout=30000")  # first: the next pragma may wait for a lock
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA journal_mode=WAL")

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        write = conn.get_execution_options().get("catalog_write")
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
