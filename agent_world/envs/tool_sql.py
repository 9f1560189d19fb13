"""How tool SQL meets SQLite: the guard every connection that runs tool statements carries,
the rows tools read, the BOOLEAN/JSONTEXT converters, and the engine's bookkeeping names.

Importing this module registers the converters with sqlite3 (every module that opens an
episode database imports it, directly or through the worker's modules).
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from agent_world.envs.frames import loads_json

# sqlite3 authorizer action codes (sqlite3.h)
_READ, _INSERT, _UPDATE, _DELETE = 20, 18, 23, 9
_TRANSACTION, _SAVEPOINT, _ATTACH, _DETACH, _PRAGMA = 22, 32, 24, 25, 19
_CONTROL = {_TRANSACTION, _SAVEPOINT, _ATTACH, _DETACH, _PRAGMA}
_DDL = {1, 2, 3, 4, 5, 6, 7, 8,  # CREATE index/table/temp index/temp table/.../view
        10, 11, 12, 13, 14, 15, 16, 17,  # DROP ...
        26, 27, 28, 29, 30}  # ALTER, REINDEX, ANALYZE, CREATE/DROP VTABLE
_ROW_WRITES = {_INSERT, _UPDATE, _DELETE}
_WHAT = {_INSERT: "INSERT INTO", _UPDATE: "UPDATE", _DELETE: "DELETE FROM"}

# The engine's own bookkeeping inside every episode database (built with the template, see
# agent_world.envs.database): tool code never reads or writes these tables directly.
INTERNAL_PREFIX = "_aw_"
COUNTERS_TABLE = "_aw_counters"  # name -> n: id counters per prefix and the write clock
WRITES_COUNTER = "@writes"  # calls that changed the database; drives ctx.now()


class ToolTimeout(BaseException):
    """Raised inside tool code when its time is up (BaseException: `except Exception` in the
    tool must not swallow it)."""


class Row(dict):
    """One result row: a dict by column name (JSON-serialisable as an object) that also reads
    by position (`row[0]`) and unpacks to its values (`a, b = row`), like sqlite3.Row."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int | slice):
            return tuple(self.values())[key]
        return dict.__getitem__(self, key)

    def __iter__(self) -> Any:
        return iter(self.values())


class DuplicateColumnError(Exception):
    """A result names the same column twice (SELECT * over a join): alias them."""


def _unique(names: tuple[str, ...]) -> tuple[str, ...]:
    """A result's column names, refused when one repeats (a row is a dict by name)."""
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise DuplicateColumnError(
            f"result has duplicate column name(s) {dupes}; select them under distinct "
            "names (SELECT a.id AS a_id, b.id AS b_id ...)")
    return names


_names_cache: list[Any] = [None, ()]


def _row(cursor: sqlite3.Cursor, values: tuple) -> Row:
    desc = cursor.description
    if desc is not _names_cache[0]:  # once per statement result, not per row
        _names_cache[0], _names_cache[1] = desc, _unique(tuple(d[0] for d in desc))
    return Row(zip(_names_cache[1], values, strict=True))


# A conflict clause OR ROLLBACK (`INSERT OR ROLLBACK ...`) that fires ends the call's
# transaction, rolling back all its changes: later statements of the call are refused (they
# would commit one by one) and the call fails with the state as before it.
ENDED_MESSAGE = ("not authorized: the call's transaction was ended (a conflict clause OR "
                 "ROLLBACK fired); no statement runs after that")
TRANSACTION_ENDED = "the tool ended the transaction itself (an OR ROLLBACK conflict clause)"


def ended(reply: dict[str, Any]) -> dict[str, Any]:
    """The reply of a call whose transaction ended before the engine could settle it: a
    timeout stays one (an interrupted write ends SQLite's transaction); anything else was an
    OR ROLLBACK that fired."""
    if reply.get("kind") == "timeout":
        return reply
    return {"ok": False, "kind": "permission_denied", "message": TRANSACTION_ENDED}


def _sql_bool(value: bytes) -> bool:
    return value not in (b"0", b"", b"0.0", b"false", b"False")


def _sql_json(value: bytes) -> Any:
    try:
        return loads_json(value)
    except ValueError:  # not JSON after all (written around the CHECK): the text as stored
        return value.decode(errors="replace")


# Columns declared BOOLEAN (EnvSpec type "boolean") read back as True/False, not 1/0, and
# columns declared JSONTEXT (type "json") as decoded JSON; callers connect with
# detect_types=sqlite3.PARSE_DECLTYPES to get this. Dicts and lists bind as JSON text.
sqlite3.register_converter("BOOLEAN", _sql_bool)
sqlite3.register_converter("JSONTEXT", _sql_json)
sqlite3.register_adapter(dict, lambda v: json.dumps(v, ensure_ascii=False))
sqlite3.register_adapter(list, lambda v: json.dumps(v, ensure_ascii=False))


class Guard:
    """The SQLite authorizer and progress handler of a connection that runs tool SQL: rows
    only; no DDL, no transaction control, no attached files or pragmas, no writes from read
    tools, no access to the engine's bookkeeping tables, and no statement past the deadline.
    Inactive (everything allowed) while the engine runs its own statements."""

    __slots__ = ("active", "read_only", "deadline", "denied")

    def __init__(self) -> None:
        self.active = False
        self.read_only = False
        self.deadline = 0.0
        self.denied: tuple[int, str] | None = None  # the last statement refused, for messages

    def install(self, conn: sqlite3.Connection) -> None:
        conn.set_authorizer(self.authorize)
        conn.set_progress_handler(self.progress, 10000)  # ~0.1 ms of SQL between checks

    def authorize(self, action: int, arg1: Any, arg2: Any, db: Any, trigger: Any) -> int:
        if not self.active:
            return sqlite3.SQLITE_OK
        if action in _CONTROL or action in _DDL:
            self.denied = (action, arg1 or "")
            return sqlite3.SQLITE_DENY
        if action in _ROW_WRITES or action == _READ:
            if arg1 and arg1.startswith(INTERNAL_PREFIX) and not (
                    trigger and trigger.startswith(INTERNAL_PREFIX)):
                self.denied = (action, arg1)
                return sqlite3.SQLITE_DENY
            if self.read_only and action in _ROW_WRITES and not trigger:
                self.denied = (action, arg1 or "")
                return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def progress(self) -> int:
        # Interrupts a long-running SQL statement once the tool's time is up.
        return 1 if self.active and time.monotonic() > self.deadline else 0
