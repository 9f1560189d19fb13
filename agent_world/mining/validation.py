"""What every mined database passes, and what is recorded about it: `validate_database`
(the spec model, the template database built with `build_template`, ``PRAGMA
foreign_key_check`` empty, ``PRAGMA integrity_check`` ok, row counts equal to the spec),
`_check_monotonic` (complexification never lowers tables, rows or constraints: `MiningError`),
and the statistics of each iteration (`database_stats`, `IterationStats`, `_finish`)."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agent_world.envs.database import build_template
from agent_world.envs.spec import EnvSpec, format_validation_error
from agent_world.errors import AgentWorldError, SpecError


class MiningError(AgentWorldError):
    """A mined database that fails validation, or a complexification that lost content."""


class IterationStats(BaseModel):
    iteration: int  # 0 = the draft
    tables: int
    rows: int
    foreign_keys: int
    constraints: int
    null_cells: int = 0
    max_parent_share: float = 0.0  # most popular parent's share of an FK's child rows
    strategy: str = "offline"  # offline, llm, offline-fallback
    seconds: float = 0.0
    fingerprint: str = ""
    changes: list[str] = Field(default_factory=list)


def database_stats(spec: EnvSpec) -> dict[str, Any]:
    """spec.stats() plus data-shape figures: NULL cells and FK popularity skew."""
    s = dict(spec.stats())
    s["null_cells"] = sum(1 for rows in spec.rows.values() for r in rows
                          for v in r.values() if v is None)
    share = 0.0
    for t in spec.tables:
        for c in t.columns:
            if not c.foreign_key:
                continue
            parent = c.foreign_key.split(".")[0]
            vals = [r.get(c.name) for r in spec.rows.get(t.name, []) if r.get(c.name) is not None]
            if len(vals) >= 10 and len(spec.rows.get(parent, [])) >= 10:
                counts: dict[Any, int] = {}
                for v in vals:
                    counts[v] = counts.get(v, 0) + 1
                share = max(share, max(counts.values()) / len(vals))
    s["max_parent_share"] = round(share, 3)
    return s


def _scratch_dir() -> str | None:
    """Where validation builds go: RAM-backed where possible (a build commits once per table;
    on a disk each commit waits for it), else the temp dir. $AGENT_WORLD_WORKDIR overrides."""
    chosen = os.environ.get("AGENT_WORLD_WORKDIR")
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
        return chosen
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def validate_database(spec: EnvSpec | dict[str, Any]) -> EnvSpec:
    """Re-validate the spec model, build its template database, check FKs and integrity.

    Returns the (re-)validated EnvSpec; raises MiningError naming what is wrong.
    """
    try:
        data = spec.model_dump(mode="json") if isinstance(spec, EnvSpec) else spec
        checked = EnvSpec.model_validate(data)
    except ValidationError as exc:
        raise MiningError(format_validation_error(exc, "mined database")) from None
    with tempfile.TemporaryDirectory(prefix="aw-mine-", dir=_scratch_dir()) as tmp:
        path = Path(tmp) / "template.sqlite"
        try:
            build_template(checked, path)
        except SpecError as exc:
            raise MiningError(str(exc)) from None
        except Exception as exc:  # DDL errors from SQLAlchemy/SQLite
            raise MiningError(f"environment {checked.name!r}: the schema does not build: "
                              f"{exc}") from None
        conn = sqlite3.connect(path)
        try:
            bad = conn.execute("PRAGMA foreign_key_check").fetchall()
            if bad:
                raise MiningError(f"environment {checked.name!r}: foreign key violations "
                                  f"(table, rowid, parent, fk#): {bad[:5]}")
            ok = conn.execute("PRAGMA integrity_check").fetchone()[0]
            if ok != "ok":
                raise MiningError(f"environment {checked.name!r}: integrity check: {ok}")
            for t in checked.tables:
                n = conn.execute(f'SELECT COUNT(*) FROM "{t.name}"').fetchone()[0]
                if n != len(checked.rows.get(t.name, [])):
                    raise MiningError(f"environment {checked.name!r}: table {t.name} has {n} "
                                      f"rows, the spec {len(checked.rows.get(t.name, []))}")
        finally:
            conn.close()
    return checked


def _record(spec: EnvSpec, iteration: int, strategy: str, seconds: float,
            changes: list[str]) -> IterationStats:
    s = database_stats(spec)
    return IterationStats(iteration=iteration, tables=s["tables"], rows=s["rows"],
                          foreign_keys=s["foreign_keys"], constraints=s["constraints"],
                          null_cells=s["null_cells"], max_parent_share=s["max_parent_share"],
                          strategy=strategy, seconds=round(seconds, 4),
                          fingerprint=spec.fingerprint, changes=changes)


def _check_monotonic(before: EnvSpec, after: EnvSpec) -> None:
    a, b = before.stats(), after.stats()
    lost = [k for k in ("tables", "rows", "constraints", "foreign_keys") if b[k] < a[k]]
    if lost:
        raise MiningError("complexification must not remove content: "
                          + ", ".join(f"{k} {a[k]} -> {b[k]}" for k in lost))
    old_tables = {t.name: {c.name for c in t.columns} for t in before.tables}
    for t in after.tables:
        if t.name in old_tables and not old_tables.pop(t.name) <= {c.name for c in t.columns}:
            raise MiningError(f"complexification dropped columns of table {t.name}")
    if old_tables:
        raise MiningError(f"complexification dropped table(s) {sorted(old_tables)}")


def _finish(spec: EnvSpec, iteration: int, strategy: str, seconds: float,
            changes: list[str]) -> EnvSpec:
    rec = _record(spec, iteration, strategy, seconds, changes)
    stats = dict(spec.provenance.stats)
    history = list(stats.get("iterations") or [])
    history = [h for h in history if h.get("iteration") != iteration]
    history.append(rec.model_dump())
    stats.update({k: v for k, v in database_stats(spec).items()})
    stats["iterations"] = history
    stats["iteration"] = iteration
    spec.provenance.stats = stats
    return spec
