"""Charges that accrue as the source says: "an overdue loan accrues a fine of 0.25 per day,
capped at the copy's replacement cost" makes every generated fine a charge for a loan that
was overdue, of the rate times the days it was late, capped at the replacement cost the loan
reaches (its copy's title). The rule comes from the source (`accrual_rules`, kept in
the column's hint as ``accrues``); `accrued` is applied to every generated row."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import snake
from agent_world.mining.offline.row_times import parse_iso
from agent_world.mining.offline.tables import entity_table
from agent_world.mining.semantics.times import time_group
from agent_world.mining.sources.base import SourceDocument


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



_ACCRUES = re.compile(r"\b(?:an? )?overdue (\w+) accrues an? (\w+) of (\d+(?:\.\d+)?) per day"
                      r"(?:, capped at the (\w+)'s ([a-z ]+?))?[.;]", re.I)


def accrual_rules(doc: SourceDocument, spec: EnvSpec) -> list[tuple[str, str, dict[str, Any]]]:
    """"An overdue loan accrues a fine of 0.25 per day, capped at the copy's replacement
    cost": (fines, amount, {rate, through: the fine's column naming the loan, cap: the
    column that caps it}) for each such sentence whose tables and columns the spec has."""
    return accrual_rules_in(doc.text(), spec)


def accrual_rules_in(text: str, spec: EnvSpec) -> list[tuple[str, str, dict[str, Any]]]:
    """`accrual_rules` of a source's text (what the tool designer reads)."""
    tables = {t.name: t for t in spec.tables}
    out = []
    for m in _ACCRUES.finditer(" ".join(text.split())):
        owed, charge = entity_table(m.group(1), tables), entity_table(m.group(2), tables)
        if owed is None or charge is None:
            continue
        money = next((c.name for c in tables[charge].columns if c.type in ("real", "numeric")
                      and not c.foreign_key), None)
        through = next((c.name for c in tables[charge].columns
                        if (c.foreign_key or "").split(".")[0] == owed), None)
        cap = snake(m.group(5)) if m.group(5) else None
        if money is None or through is None or (cap and not any(
                cap in {c.name for c in t.columns} for t in tables.values())):
            continue
        out.append((charge, money, {"rate": float(m.group(3)), "through": through,
                                    "cap": cap}))
    return out


__all__ = ["accrual_rules", "accrual_rules_in", "accrued"]
