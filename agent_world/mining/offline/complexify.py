"""Offline complexification (`complexify_offline`): per iteration two structural operations from
a rotating schedule (actors: a users table and an ownership FK; audit history; tags
many-to-many; status lifecycle; lookup table extracted from a low-cardinality column, or a
self-referencing category tree; notes/attachments child records), each on the most central
drafted table it has not been applied to; then every table grows by ~30% with Zipf-skewed
parent popularity, and edge cases are added: rows with every nullable column NULL,
duplicate-by-name rows, terminal states, boundary dates. History entries record real
old -> new values. The structural operations are in `complexify_ops`.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline import implied
from agent_world.mining.offline.cloud_regions import described_cloud
from agent_world.mining.offline.complexify_ops import StructureOps
from agent_world.mining.offline.described_values import described_file_types
from agent_world.mining.offline.naming import is_label, singular
from agent_world.mining.offline.rows import RowFactory
from agent_world.mining.offline.tables import table_kinds, table_order
from agent_world.mining.offline.vocabulary import TERMINAL_EDGE_STATES
from agent_world.mining.semantics.lifecycle_rule import lifecycle_columns
from agent_world.mining.semantics.routes import fk_routes
from agent_world.mining.semantics.times import time_group, time_pairs
from agent_world.mining.sources.base import SourceDocument

MAIN_KINDS = {"core": 4, "person": 3, "activity": 2, "reference": 1}


def _degree(spec_tables: list[TableSpec], name: str) -> int:
    out = sum(1 for c in next(t for t in spec_tables if t.name == name).columns if c.foreign_key)
    inn = sum(1 for t in spec_tables for c in t.columns
              if c.foreign_key and c.foreign_key.split(".")[0] == name and t.name != name)
    return out + inn


def _candidates(tables: list[TableSpec], kinds: dict[str, str], rows: dict[str, list],
                allowed: Iterable[str], added: Iterable[str] = ()) -> list[str]:
    """Tables an operation may target, most central first; tables added by earlier
    complexification iterations come after the drafted ones."""
    allowed, added = set(allowed), set(added)
    names = [t.name for t in tables
             if kinds.get(t.name, "core") in allowed and len(t.primary_key) == 1]
    return sorted(names, key=lambda n: (n in added, -MAIN_KINDS.get(kinds.get(n, "core"), 0),
                                        -_degree(tables, n), -len(rows.get(n, [])), n))


class _Complexifier(StructureOps):
    def __init__(self, spec: EnvSpec, iteration: int, seed: int,
                 doc: SourceDocument | None = None) -> None:
        self.doc = doc
        self.seed = seed
        self.hints: dict[str, dict[str, dict[str, Any]]] = dict(
            spec.provenance.stats.get("field_hints") or {})
        self.source_text = " ".join([spec.theme.description, *spec.theme.raw_descriptions,
                                     *(doc.text().split("\n") if doc else [])]).lower()
        self.tables = [t.model_copy(deep=True) for t in spec.tables]
        self.kinds = table_kinds(spec)
        self.iteration = iteration
        self.f = RowFactory(self.tables, spec.rows, f"{seed}:{iteration}", spec.clock_start,
                            self.hints, described_file_types(self.source_text),
                            described_cloud(self.source_text), spec.name)
        self.rng = random.Random(f"complexify:{seed}:{iteration}")
        self.clock = spec.clock_start
        self.notes: list[str] = []
        self.added: list[str] = list(spec.provenance.stats.get("added_tables") or [])

    def view(self) -> SimpleNamespace:
        """The current schema, as the coverage map reads it."""
        return SimpleNamespace(tables=self.tables)

    def cands(self, allowed: Iterable[str]) -> list[str]:
        return _candidates(self.tables, self.kinds, self.f.rows, allowed, self.added)

    # ---- helpers -------------------------------------------------------------------------
    def table(self, name: str) -> TableSpec:
        return next(t for t in self.tables if t.name == name)

    def has(self, name: str) -> bool:
        return any(t.name == name for t in self.tables)

    def new_table(self, table: TableSpec, kind: str) -> TableSpec:
        self.tables.append(table)
        self.kinds[table.name] = kind
        self.added.append(table.name)
        self.f.add_table(table)
        return table

    def add_column(self, tname: str, col: ColumnSpec, fill: Callable[[dict], Any]) -> None:
        t = self.table(tname)
        t.columns.append(col)
        self.f.tables[tname] = t
        for row in self.f.rows[tname]:
            row[col.name] = fill(row)
        self.f.reindex_column(tname)

    def person_table(self) -> str | None:
        people = [t.name for t in self.tables if self.kinds.get(t.name) == "person"]
        return sorted(people, key=lambda n: -len(self.f.rows[n]))[0] if people else None

    def pk(self, tname: str) -> str:
        return self.table(tname).primary_key[0]

    def fk_col(self, name: str, target: str, nullable: bool = False,
               description: str = "") -> ColumnSpec:
        pk = self.table(target).primary_key[0] if self.has(target) else "id"
        ptype = next((c.type for c in self.table(target).columns if c.name == pk), "integer") \
            if self.has(target) else "integer"
        return ColumnSpec(name=name, type=ptype, nullable=nullable,
                          foreign_key=f"{target}.{pk}", description=description)

    def fill(self, tname: str, n: int, *, skew: bool = True,
             overrides: Callable[[int], dict[str, Any]] | None = None) -> int:
        made = 0
        for i in range(n):
            if self.f.make(tname, skew=skew, overrides=overrides(i) if overrides else None):
                made += 1
        return made

    # ---- data operations -----------------------------------------------------------------
    def grow(self, factor: float) -> None:
        for tname in table_order(self.tables):
            kind = self.kinds.get(tname, "core")
            if kind in ("reference", "lookup"):
                continue
            n = len(self.f.rows[tname])
            extra = max(2, math.ceil(n * (factor - 1))) if kind != "tags" else 2
            if kind == "history":
                for _ in range(extra):
                    self.history_row(tname)
            else:
                self.fill(tname, extra, skew=True)

    def _plain_nullable(self, t: TableSpec) -> dict[str, None]:
        """Nullable columns no rule ties to another value (lifecycle stamps, routes and the
        times that order a row stay as generated)."""
        lc = lifecycle_columns(t)
        stamps = set(lc[1].values()) if lc else set()
        routed = {r.column for r in fk_routes(self.tables) if r.table == t.name} | {
            r.via for r in fk_routes(self.tables) if r.table == t.name}
        return {c.name: None for c in t.columns
                if c.nullable and not c.primary_key and c.name not in stamps | routed
                and c.type not in ("date", "datetime") and not c.unique
                and not is_label(c.name) and c.name != "email"
                and not (c.foreign_key and self.f.is_owner(t, c))}

    def _at_boundary(self, t: TableSpec, row: dict[str, Any], boundary: str) -> bool:
        """Move a new row's creation to a boundary date when its lifecycle allows it: not
        after the clock, not before a parent's creation, not after the row's later events."""
        created = [c for c in t.columns if c.type in ("date", "datetime")
                   and time_group(c.name) == "create"]
        if not created or boundary > self.clock:
            return False
        moved = {c.name: (boundary[:10] if c.type == "date" else boundary) for c in created}
        for c in t.columns:
            if c.foreign_key and row.get(c.name) is not None:
                parent = self.f.parent_row(c, row[c.name])
                if parent and str(parent.get("created_at") or "") > boundary:
                    return False
        for a, b in time_pairs(t):
            va, vb = moved.get(a, row.get(a)), moved.get(b, row.get(b))
            if isinstance(va, str) and isinstance(vb, str) and (a in moved or b in moved) \
                    and va[:len(min(va, vb, key=len))] > vb[:len(min(va, vb, key=len))]:
                return False
        row.update(moved)
        return True

    def edge_cases(self) -> None:
        boundary = ["2024-02-29T00:00:00", "2025-12-31T23:59:59", self.clock,
                    "2024-01-01T00:00:00"][(self.iteration - 1) % 4]
        added: Counter[str] = Counter()
        moved = 0
        for t in list(self.tables):
            kind = self.kinds.get(t.name, "core")
            if kind in ("reference", "lookup", "join", "history"):
                continue  # an audit entry is about a real change (history_row), not made up
            # a record in a terminal state; the enum is not widened with one nobody named (a
            # git branch or a book title that "expired" is no state of either)
            status = next((c for c in t.columns if c.name in ("status", "state") and c.enum),
                          None)
            terminal = next((s for s in TERMINAL_EDGE_STATES if status is not None
                             and s in (status.enum or [])), None)
            if terminal is not None and self.f.make(t.name, skew=True,
                                                    overrides={status.name: terminal}):
                added[t.name] += 1
            # every free nullable column NULL at once
            nullable = self._plain_nullable(t)
            if nullable and self.f.make(t.name, skew=True, overrides=nullable):
                added[t.name] += 1
            # duplicate label with a new id
            label = next((c for c in t.columns if c.name in ("name", "title", "subject")
                          and not c.unique and not (self.hints.get(t.name) or {}).get(
                              c.name, {}).get("unique")), None)
            if label is not None and self.f.rows[t.name]:
                src = self.f.rows[t.name][self.rng.randrange(len(self.f.rows[t.name]))]
                if src.get(label.name) is not None and self.f.make(
                        t.name, skew=True, overrides={label.name: src[label.name]}):
                    added[t.name] += 1
            # boundary dates, where the record's lifecycle allows them
            row = self.f.make(t.name, skew=True)
            if row is not None:
                added[t.name] += 1
                moved += self._at_boundary(t, row, boundary)
        if added:
            self.notes.append(f"edge cases: {sum(added.values())} rows in {len(added)} tables "
                              f"(NULLs, duplicate names, terminal states, {moved} created at "
                              f"boundary {boundary})")

    # ---- what the source implies ----------------------------------------------------------
    # generic structure only where the source speaks of it
    GATED = (("history", re.compile(r"\b(history|audit|changelog|activity log)\b")),
             ("tags", re.compile(r"\b(tags?|tagged|tagging|labels)\b")),
             ("children", re.compile(r"\b(notes?|comments?|attachments?)\b")),
             ("lookup", re.compile(r"\b(categor(y|ies)|taxonom(y|ies))\b")))

    def source_operations(self) -> list[Callable[[], str | None]]:
        ops: list[Callable[[], str | None]] = [
            lambda: implied.uncovered_tool(self, self.doc),
            lambda: implied.declared_fields(self, self.doc)]
        entities = {singular(t.name) for t in self.tables} | {
            singular(k) for k in self.kinds}
        for nouns, op in implied.IMPLIED:
            if nouns & entities:
                ops.append(lambda op=op: op(self))
        for op, words in self.GATED:
            if words.search(self.source_text):
                ops.append(lambda op=op: self._generic(op))
        return ops

    def _generic(self, op: str) -> str | None:
        before = len(self.notes)
        if getattr(self, f"op_{op}")():
            return self.notes.pop() if len(self.notes) > before else op
        return None

    def run(self) -> ComplexifyResult:
        applied = 0
        for op in self.source_operations():
            if applied >= 2:
                break
            note = op()
            if note:
                self.notes.append(note)
                applied += 1
        if not applied:
            self.notes.append("structure: nothing the source implies is missing; data only")
        self.grow(1.3)
        self.edge_cases()
        return ComplexifyResult(self.tables, self.f.rows, self.kinds, self.added, self.notes)


@dataclass
class ComplexifyResult:
    tables: list[TableSpec]
    rows: dict[str, list[dict[str, Any]]]
    kinds: dict[str, str]  # every table's role
    added: list[str]  # tables added by complexification so far (all iterations)
    notes: list[str]


def complexify_offline(spec: EnvSpec, iteration: int, seed: int,
                       doc: SourceDocument | None = None) -> ComplexifyResult:
    """One offline complexification iteration (not yet validated: the caller does that):
    structure the source implies (its uncovered tools, declared fields, what its entities
    imply), then more rows with skew, then edge cases."""
    return _Complexifier(spec, iteration, seed, doc).run()
