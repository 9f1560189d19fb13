"""Charges that accrue as the source says: "an overdue loan accrues a fine of 0.25 per day,
capped at the copy's replacement cost" makes every generated fine a charge for a loan that
was overdue, of the rate times the days it was late, capped at the replacement cost the loan
reaches (its copy's title). The rule comes from the source (`coverage.accrual_rules`, kept in
the column's hint as ``accrues``); `accrued` is applied to every generated row."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_world.mining.offline.row_times import parse_iso
from agent_world.mining.semantics.times import time_group


def _days_late(factory: Any, table: str, row: dict[str, Any]) -> int:
    """Whole days between a record's due date and its end (or the clock while it is open)."""
    cols = factory.tables[table].columns
    due = next((parse_iso(row.get(c.name)) for c in cols if time_group(c.name) == "due"), None)
    end = next((parse_iso(row.get(c.name)) for c in cols
                if time_group(c.name) == "end" and row.get(c.name)), None)
    if due is None:
        return 0
    until: datetime = end or factory.clock
    return (until.date() - due.date()).days


def _reach(factory: Any, table: str, row: dict[str, Any], column: str, depth: int = 3) -> Any:
    """`column` of `row` or of the first record its references lead to (a loan's copy's
    title's replacement cost)."""
    if column in row:
        return row[column]
    if depth == 0:
        return None
    for c in factory.tables[table].columns:
        parent = factory.parent_row(c, row.get(c.name)) if c.foreign_key else None
        if parent is not None:
            found = _reach(factory, c.foreign_key.split(".")[0], parent, column, depth - 1)
            if found is not None:
                return found
    return None


def accrued(factory: Any, table: str, row: dict[str, Any]) -> None:
    """Size a generated charge by the source's accrual rule, moving it to an overdue record
    (with that record's other references: its member) when the one drawn was never late."""
    for col, hint in (factory.hints.get(table) or {}).items():
        rule = (hint or {}).get("accrues")
        if not rule:
            continue
        fk = next((c for c in factory.tables[table].columns if c.name == rule["through"]), None)
        owed = factory.parent_row(fk, row.get(fk.name)) if fk is not None else None
        if fk is None or owed is None:
            continue
        owed_table = fk.foreign_key.split(".")[0]
        if _days_late(factory, owed_table, owed) <= 0:
            late = [r for r in factory.rows[owed_table] if _days_late(factory, owed_table, r) > 0]
            if not late:
                continue
            owed = factory.rng.choice(late)
            row[fk.name] = owed[fk.foreign_key.split(".")[1]]
            for c in factory.tables[table].columns:  # the fine is the borrower's
                if c.foreign_key and c.name != fk.name and c.name in owed:
                    row[c.name] = owed[c.name]
        amount = round(rule["rate"] * _days_late(factory, owed_table, owed), 2)
        cap = _reach(factory, owed_table, owed, rule["cap"]) if rule.get("cap") else None
        row[col] = min(amount, cap) if isinstance(cap, int | float) and cap > 0 else amount


__all__ = ["accrued"]
