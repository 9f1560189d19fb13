"""The seed rows as the database returns them (`Rows`), and the small values tests are built
from: the episode's first write time, fresh and unknown values, whether a value fits an
argument, a word to search for.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta
from typing import Any

from agent_world.design.offline.plans import ParamPlan, pk_column
from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import singular

Test = dict[str, Any]


def _variant(base: str, i: int) -> str:
    """A fresh value shaped like a stored one, as a person would type it: the last number
    moved on (`FP-9372` → `FP-9373`), a hex digest redrawn, else a numbered copy
    (`America/New_York-2`); "new1-FP-9372" read as an artefact in every request."""
    if re.fullmatch(r"[0-9a-f]{7,64}", base):
        return hashlib.sha256(f"{base}:{i}".encode()).hexdigest()[:len(base)]
    if re.fullmatch(r"[^@\s]+@[^@\s]+", base):  # an address: another mailbox, same domain
        local, domain = base.split("@")
        return f"{local}{i + 1}@{domain}"
    m = list(re.finditer(r"\d+", base))
    if m:
        last = m[-1]
        n = str(int(last.group()) + i).zfill(len(last.group()))
        return base[:last.start()] + n + base[last.end():]
    return f"{base}-{i + 1}"


class Rows:
    """The seed rows of a spec as the database returns them (defaults filled, booleans as
    booleans, JSON columns left out)."""

    def __init__(self, spec: EnvSpec):
        self.spec = spec
        self._cache: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, table: str) -> list[dict[str, Any]]:
        if table not in self._cache:
            t = self.spec.table(table)
            out = []
            for raw in self.spec.rows.get(table, []):
                row: dict[str, Any] = {}
                for c in t.columns:
                    if c.type == "json":
                        continue
                    v = raw.get(c.name, c.default)
                    if c.type == "boolean" and v is not None:
                        v = bool(v)
                    elif c.type == "real" and isinstance(v, int) and not isinstance(v, bool):
                        v = float(v)
                    row[c.name] = v
                out.append(row)
            pk = pk_column(t)
            if pk:
                out.sort(key=lambda r: r[pk])
            self._cache[table] = out
        return self._cache[table]


def _now(spec: EnvSpec) -> str:
    """`ctx.now()` during the first write of a freshly reset episode (the episode clock is
    `clock_start` plus one minute per committed write, this one included)."""
    return (datetime.fromisoformat(spec.clock_start) + timedelta(minutes=1)
            ).isoformat(timespec="seconds")


def _noun(table: str) -> str:
    """What a refusal of an unknown record of `table` names (the renderer's noun)."""
    return singular(table).replace("_", " ")


def _unknown(spec: EnvSpec, table: str, column: str, py_type: str) -> Any:
    values = [r.get(column) for r in spec.rows.get(table, [])]
    if py_type in ("integer", "number"):
        nums = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        return int(max(nums, default=0)) + 1000
    return f"no-such-{column}"


def _fits(p: ParamPlan, value: Any) -> bool:
    if value is None:
        return False
    if p.type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if p.type == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if p.type == "boolean":
        return isinstance(value, bool)
    if p.type == "object":
        return isinstance(value, dict)
    if not isinstance(value, str):
        return False
    if p.enum and value not in p.enum:
        return False
    return not p.pattern or re.search(p.pattern, value) is not None


def _needle(value: str) -> str | None:
    """A word of a stored value to search for: a whole word, as a person types it (a test's
    "Americ" became the tasks' "timezones matching 'Americ'")."""
    words = [w for w in re.findall(r"[A-Za-z0-9]{3,}", value)]
    return words[0] if words else None


__all__ = ["Rows", "Test"]
