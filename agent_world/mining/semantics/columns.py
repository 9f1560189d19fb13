"""How the semantic checks read a schema's columns: the table an FK points at and whether it
is containment (an FK named after its target), the stem of a time column's name, a table's
time columns, and time values compared by day where either is a date."""

from __future__ import annotations

import re
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from agent_world.envs.table_spec import ColumnSpec, TableSpec


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _fk_target(col: ColumnSpec) -> tuple[str, str] | None:
    if not col.foreign_key:
        return None
    t, c = col.foreign_key.split(".")
    return t, c


def _containment(col: ColumnSpec) -> bool:
    """An FK named after its target (``repository_id`` -> repositories, ``loan_id`` -> loans):
    the record belongs to that parent. Role-named links (``changed_by_id``,
    ``home_branch_id``) are associations, not containment."""
    target = _fk_target(col)
    return bool(target) and col.name == f"{_singular(target[0])}_id"


_STEM_SUFFIX = re.compile(r"_(at|on|date|time|ts|timestamp|datetime|day)$")


@lru_cache(maxsize=4096)
def time_stem(name: str) -> str:
    """``checked_out_at`` -> ``checked_out``; ``starts_at`` -> ``starts``; ``due_on`` -> ``due``."""
    n = name.lower()
    stem = _STEM_SUFFIX.sub("", n)
    return stem or n


def _time_columns(table: TableSpec) -> list[ColumnSpec]:
    return [c for c in table.columns if c.type in ("date", "datetime")]


def _as_time(v: Any) -> datetime | date | None:
    if not isinstance(v, str) or len(v) < 10:
        return None
    try:
        if len(v) == 10:
            return date.fromisoformat(v)
        return datetime.fromisoformat(v.replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        return None


def _before(a: datetime | date, b: datetime | date) -> bool:
    """a <= b, comparing by day when either is a date."""
    if isinstance(a, datetime) and isinstance(b, datetime):
        return a <= b
    da = a.date() if isinstance(a, datetime) else a
    db = b.date() if isinstance(b, datetime) else b
    return da <= db
