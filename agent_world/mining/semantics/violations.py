"""What a semantic check reports: the rule names (`RULES`), one `Violation` and the count
per rule (`summarize`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

RULES = ("fk_route", "time_order", "lifecycle", "enum", "type", "format", "range", "unique",
         "invariant")


@dataclass(frozen=True)
class Violation:
    rule: str
    table: str
    column: str
    row: Any  # the row's primary key (None: the schema itself)
    message: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        where = f"{self.table}.{self.column}" + (f" (row {self.row})" if self.row is not None
                                                 else "")
        return f"[{self.rule}] {where}: {self.message}"


def summarize(violations: list[Violation]) -> dict[str, int]:
    """Violations per rule (every rule present, zero included)."""
    counts = Counter(v.rule for v in violations)
    return {r: counts.get(r, 0) for r in RULES}
