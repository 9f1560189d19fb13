"""Offline complexification (`complexify_offline`): per iteration two structural operations from
a rotating schedule (actors: a users table and an ownership FK; audit history; tags
many-to-many; status lifecycle; lookup table extracted from a low-cardinality column, or a
self-referencing category tree; notes/attachments child records), each on the most central
drafted table it has not been applied to; then every table grows by ~30% with Zipf-skewed
parent popularity, and edge cases are added: rows with every nullable column NULL,
duplicate-by-name rows, terminal states, boundary dates. History entries record real
old -> new values.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace
from typing import Any

from agent_world.envs.spec import ColumnSpec, EnvSpec, TableSpec
from agent_world.mining.offline import implied
from agent_world.mining.offline.naming import identifier, plural, singular
from agent_world.mining.offline.rows import (
    WINDOW_START,
    RowFactory,
    column_semantic,
    parse_iso,
    to_iso,
)
from agent_world.mining.offline.tables import table_kinds, table_order
from agent_world.mining.offline.vocabulary import TERMINAL_FOR
from agent_world.mining.semantics import (
    NEGATIVE_ENDS,
    fk_routes,
    lifecycle_columns,
    state_rank,
    time_group,
    time_pairs,
)
from agent_world.mining.sources.base import SourceDocument

MAIN_KINDS = {"core": 4, "person": 3, "activity": 2, "reference": 1}


def _reaches(tables: list[TableSpec], start: str, goal: str) -> bool:
    """Whether table `start` references `goal` through foreign keys (self references aside)."""
    by = {t.name: t for t in tables}
    seen, stack = set(), [start]
    while stack:
        cur = stack.pop()
        if cur == goal:
            return True
        if cur in seen or cur not in by:
            continue
        seen.add(cur)
        stack.extend(c.foreign_key.split(".")[0] for c in by[cur].columns
                     if c.foreign_key and c.foreign_key.split(".")[0] != cur)
    return False


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


class _Complexifier:
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
                            self.hints)
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

    # ---- structural operations -----------------------------------------------------------
    def op_actors(self) -> bool:
        person = self.person_table()
        targets = [n for n in self.cands(("core", "activity", "child")) if n != person]
        for target in targets:
            t = self.table(target)
            if person and (any(c.foreign_key and c.foreign_key.split(".")[0] == person
                               for c in t.columns) or _reaches(self.tables, person, target)):
                continue  # already owned, or the FK would close a cycle
            if person is None:
                users = TableSpec(
                    name="users" if not self.has("users") else "app_users",
                    description="people who own and act on the records",
                    columns=[ColumnSpec(name="id", type="integer", primary_key=True,
                                        nullable=False),
                             ColumnSpec(name="name", type="text", nullable=False),
                             ColumnSpec(name="email", type="text", unique=True, nullable=False),
                             ColumnSpec(name="role", type="text", nullable=False,
                                        enum=["admin", "member", "viewer"]),
                             (self.fk_col("timezone_id", "timezones", nullable=True)
                              if self.has("timezones") else
                              ColumnSpec(name="timezone", type="text")),
                             ColumnSpec(name="created_at", type="datetime", nullable=False)])
                self.new_table(users, "person")
                self.fill(users.name, 18, skew=False)
                person = users.name
            colname = "owner_id" if self.kinds.get(target) == "core" else "user_id"
            if colname in {c.name for c in t.columns}:
                colname = "created_by_id"
            if colname in {c.name for c in t.columns}:
                continue
            col = self.fk_col(colname, person, nullable=True,
                              description=f"the {singular(person)} responsible")
            ids = [r[self.pk(person)] for r in self.f.rows[person]]
            self.add_column(target, col, lambda _r, ids=ids, p=person: (
                None if self.rng.random() < 0.08 else self.f.zipf_choice(p, ids)))
            self.notes.append(f"actors: {target}.{colname} -> {person}")
            return True
        return False

    def op_history(self) -> bool:
        person = self.person_table()
        for target in self.cands(("core", "person", "reference")):
            name = identifier(f"{singular(target)}_history")
            if self.has(name) or not self.f.rows[target]:
                continue
            fk = f"{singular(target)}_id"
            cols = [ColumnSpec(name="id", type="integer", primary_key=True, nullable=False),
                    self.fk_col(fk, target),
                    ColumnSpec(name="action", type="text", nullable=False,
                               enum=["created", "updated", "status_changed", "archived",
                                     "restored"]),
                    ColumnSpec(name="field_name", type="text"),
                    ColumnSpec(name="old_value", type="text"),
                    ColumnSpec(name="new_value", type="text"),
                    ColumnSpec(name="changed_at", type="datetime", nullable=False)]
            if person and person != target:
                cols.insert(2, self.fk_col("changed_by_id", person, nullable=True))
            else:
                cols.insert(2, ColumnSpec(name="changed_by", type="text"))
            t = self.new_table(TableSpec(name=name, columns=cols,
                                         description=f"audit trail of changes to {target}"),
                               "history")
            created = [c.name for c in self.table(target).columns
                       if c.type in ("datetime", "date") and c.name == "created_at"] or [
                c.name for c in self.table(target).columns
                if c.type in ("datetime", "date") and time_group(c.name) == "create"]
            for parent in list(self.f.rows[target]):
                at = parent.get(created[0]) if created else None
                self.f.make(t.name, overrides={fk: parent[self.pk(target)], "action": "created",
                                               "field_name": None, "old_value": None,
                                               "new_value": None,
                                               "changed_at": to_iso(parse_iso(at)) if parse_iso(at)
                                               else to_iso(WINDOW_START)})
            for _ in range(len(self.f.rows[target])):
                self.history_row(t.name)
            self.notes.append(f"history: {name} ({len(self.f.rows[name])} rows) -> {target}")
            return True
        return False

    def op_tags(self) -> bool:
        for target in self.cands(("core", "activity", "person")):
            join = identifier(f"{singular(target)}_tags")
            if self.has(join) or not self.f.rows[target]:
                continue
            if not self.has("tags"):
                tags = TableSpec(name="tags", description="labels shared across records",
                                 columns=[ColumnSpec(name="id", type="integer", primary_key=True,
                                                     nullable=False),
                                          ColumnSpec(name="name", type="text", nullable=False,
                                                     unique=True),
                                          ColumnSpec(name="color", type="text"),
                                          ColumnSpec(name="created_at", type="datetime",
                                                     nullable=False)])
                self.new_table(tags, "tags")
                self.fill("tags", 14, skew=False)
            fk = f"{singular(target)}_id"
            self.new_table(TableSpec(
                name=join, description=f"tags on {target} (many-to-many)",
                columns=[ColumnSpec(name="id", type="integer", primary_key=True, nullable=False),
                         self.fk_col(fk, target), self.fk_col("tag_id", "tags"),
                         ColumnSpec(name="tagged_at", type="datetime", nullable=False)],
                unique_together=[[fk, "tag_id"]]), "join")
            want = int(1.5 * len(self.f.rows[target])) + 4
            self.fill(join, want, skew=True)
            self.notes.append(f"tags: {join} ({len(self.f.rows[join])} rows) joins "
                              f"{target} and tags")
            return True
        return False

    def op_status(self) -> bool:
        for target in self.cands(("core", "activity", "person")):
            t = self.table(target)
            if any(c.name in ("status", "state") for c in t.columns):
                continue
            vocab = (["succeeded", "failed", "pending"] if self.kinds.get(target) == "activity"
                     else ["active", "inactive", "archived"])
            col = ColumnSpec(name="status", type="text", nullable=False, enum=vocab,
                             default=vocab[0], description="lifecycle state")
            self.add_column(target, col, lambda _r, v=vocab: self.rng.choices(
                v, weights=[0.8, 0.12, 0.08], k=1)[0])
            self.notes.append(f"status: {target}.status in {vocab}")
            return True
        return False

    def _lookup_candidate(self) -> tuple[str, ColumnSpec] | None:
        for target in self.cands(("core", "person", "reference", "activity")):
            rows = self.f.rows[target]
            if len(rows) < 6:
                continue
            for c in self.table(target).columns:
                if c.primary_key or c.foreign_key or c.unique or c.type != "text" or \
                        c.name in ("status", "state", "name", "title", "email"):
                    continue
                sem = column_semantic(target, c)
                if not (c.enum or sem in ("category", "region", "specialty", "language",
                                          "currency", "country", "color", "timezone")):
                    continue
                values = [r.get(c.name) for r in rows if r.get(c.name) is not None]
                if 2 <= len(set(values)) <= max(2, len(values) // 2):
                    lookup = identifier(plural(c.name))
                    if self.has(lookup) or f"{c.name}_id" in {x.name for x in
                                                               self.table(target).columns}:
                        lookup = identifier(f"{singular(target)}_{plural(c.name)}")
                    if not self.has(lookup) and f"{c.name}_id" not in {
                            x.name for x in self.table(target).columns}:
                        return target, c
        return None

    def op_lookup(self) -> bool:
        cand = self._lookup_candidate()
        if cand is None:
            return self._op_categories()
        target, c = cand
        lookup = identifier(plural(c.name))
        if self.has(lookup):
            lookup = identifier(f"{singular(target)}_{plural(c.name)}")
        values = sorted({r.get(c.name) for r in self.f.rows[target] if r.get(c.name) is not None}
                        | set(c.enum or []))
        t = self.new_table(TableSpec(
            name=lookup, description=f"lookup of {target}.{c.name} values",
            columns=[ColumnSpec(name="id", type="integer", primary_key=True, nullable=False),
                     ColumnSpec(name="code", type="text", nullable=False, unique=True),
                     ColumnSpec(name="label", type="text", nullable=False),
                     ColumnSpec(name="description", type="text"),
                     ColumnSpec(name="sort_order", type="integer", nullable=False)]), "lookup")
        ids = {}
        for i, v in enumerate(values):
            row = self.f.make(t.name, overrides={"code": v, "label": str(v).replace("_", " ")
                                                 .replace("/", " / ").title(),
                                                 "sort_order": i + 1})
            if row:
                ids[v] = row["id"]
        col = self.fk_col(f"{c.name}_id", t.name, nullable=True,
                          description=f"normalised {c.name}")
        self.add_column(target, col, lambda r: ids.get(r.get(c.name)))
        self.notes.append(f"lookup: {lookup} ({len(values)} codes) <- {target}.{c.name}_id")
        return True

    def _op_categories(self) -> bool:
        for target in self.cands(("core", "activity", "person")):
            name = identifier(f"{singular(target)}_categories")
            if self.has(name) or "category_id" in {c.name for c in self.table(target).columns}:
                continue
            t = self.new_table(TableSpec(
                name=name, description=f"hierarchical categories of {target}",
                columns=[ColumnSpec(name="id", type="integer", primary_key=True, nullable=False),
                         ColumnSpec(name="name", type="text", nullable=False, unique=True),
                         ColumnSpec(name="description", type="text"),
                         self.fk_col("parent_id", name, nullable=True)]), "lookup")
            for i in range(8):
                self.f.make(t.name, overrides={"parent_id": None} if i < 3 else None)
            ids = [r["id"] for r in self.f.rows[name]]
            self.add_column(target, self.fk_col("category_id", name, nullable=True),
                            lambda _r, n=name, ids=ids: self.f.zipf_choice(n, ids)
                            if self.rng.random() > 0.1 else None)
            self.notes.append(f"lookup: {name} (self-referencing) <- {target}.category_id")
            return True
        return False

    def op_children(self) -> bool:
        person = self.person_table()
        for target in self.cands(("core", "person", "activity")):
            if not self.f.rows[target]:
                continue
            fk = f"{singular(target)}_id"
            notes = identifier(f"{singular(target)}_notes")
            files = identifier(f"{singular(target)}_attachments")
            if not self.has(notes):
                cols = [ColumnSpec(name="id", type="integer", primary_key=True, nullable=False),
                        self.fk_col(fk, target),
                        ColumnSpec(name="body", type="text", nullable=False),
                        ColumnSpec(name="pinned", type="boolean", nullable=False,
                                   default=False),
                        ColumnSpec(name="created_at", type="datetime", nullable=False),
                        ColumnSpec(name="deleted_at", type="datetime")]
                if person and person != target:
                    cols.insert(2, self.fk_col("author_id", person, nullable=True))
                else:
                    cols.insert(2, ColumnSpec(name="author", type="text"))
                self.new_table(TableSpec(name=notes, columns=cols,
                                         description=f"notes written on {target}"), "notes")
                self.fill(notes, int(1.2 * len(self.f.rows[target])) + 3)
                self.notes.append(f"children: {notes} ({len(self.f.rows[notes])} rows)")
                return True
            if not self.has(files):
                self.new_table(TableSpec(
                    name=files, description=f"files attached to {target}",
                    columns=[ColumnSpec(name="id", type="integer", primary_key=True,
                                        nullable=False),
                             self.fk_col(fk, target),
                             ColumnSpec(name="file_name", type="text", nullable=False),
                             ColumnSpec(name="file_path", type="text", nullable=False,
                                        unique=True),
                             ColumnSpec(name="mime_type", type="text"),
                             ColumnSpec(name="size_bytes", type="integer"),
                             ColumnSpec(name="uploaded_at", type="datetime", nullable=False)]),
                    "notes")
                self.fill(files, len(self.f.rows[target]) + 3)
                self.notes.append(f"children: {files} ({len(self.f.rows[files])} rows)")
                return True
        return False

    def history_row(self, hist: str) -> dict[str, Any] | None:
        """An 'updated'/'status_changed' entry that ends in the record's current value: its
        new value is the value the record holds now, its old value one the record held before
        (an earlier state, one less of a count), at a time between the record's creation and
        its last update (a state's own stamp when it has one). One entry per (record, field),
        so the log never disagrees with itself."""
        t = self.table(hist)
        fkc = next((c for c in t.columns if c.foreign_key and not c.nullable), None)
        if fkc is None or {"field_name", "old_value", "new_value"} - {c.name for c in t.columns}:
            return self.f.make(hist, skew=True)
        target = fkc.foreign_key.split(".")[0]  # type: ignore[union-attr]
        if not self.has(target) or not self.f.rows.get(target):
            return self.f.make(hist, skew=True)
        tcols = [c for c in self.table(target).columns
                 if not c.primary_key and not c.foreign_key and c.type in ("text", "integer",
                                                                           "real", "boolean")]
        logged = {(h.get(fkc.name), h.get("field_name")) for h in self.f.rows.get(hist, [])}
        for _ in range(6):
            pid = self.f.pick_parent(hist, fkc, True)
            parent = self.f.parent_row(fkc, pid)
            if parent is None or not tcols:
                break
            col = self.rng.choice(tcols)
            old = self._earlier_value(target, col, parent)
            if (pid, col.name) in logged or old is None:
                continue
            return self.f.make(hist, overrides={
                fkc.name: pid, "field_name": col.name,
                "action": "status_changed" if col.name in ("status", "state") else "updated",
                "old_value": str(old), "new_value": str(parent[col.name]),
                "changed_at": self._changed_at(target, col, parent)})
        return None  # nothing left to log that the records agree with

    def _earlier_value(self, table: str, col: ColumnSpec, row: dict[str, Any]) -> Any:
        """A value `row[col]` plausibly held before its current one (None: none to tell)."""
        now = row.get(col.name)
        if now is None:
            return None
        if col.name in ("status", "state") and col.enum:
            rank = state_rank(str(now))
            before = [st for st in col.enum if rank is not None and
                      (state_rank(st) or 0) < rank and st not in NEGATIVE_ENDS]
            return self.rng.choice(before) if before else None
        if col.type == "boolean":
            return not now
        if col.type == "integer" and col.name.endswith(("count", "_count", "total")):
            return now - 1 if isinstance(now, int) and now > 0 else None
        for _ in range(4):  # a change changes something
            old = self.f.value(table, col, row)
            if old is not None and old != now:
                return old
        return None

    def _changed_at(self, table: str, col: ColumnSpec, row: dict[str, Any]) -> str:
        lc = lifecycle_columns(self.table(table))
        if lc and col.name == lc[0] and isinstance(row.get(lc[1].get(str(row[col.name]), "")),
                                                   str):
            return str(row[lc[1][str(row[col.name])]])  # a state's change is its stamp
        lo = parse_iso(row.get("created_at")) or WINDOW_START
        hi = parse_iso(row.get("updated_at")) or datetime.fromisoformat(self.clock)
        return to_iso(self.f._rand_time(lo, max(lo, hi)))

    SCHEDULE = (("actors", "history"), ("tags", "status"), ("lookup", "children"),
                ("history", "children"), ("tags", "lookup"), ("children", "actors"))
    FALLBACK = ("history", "tags", "children", "lookup", "actors", "status")

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

    def _declared_enum(self, table: str, column: str) -> bool:
        return bool((self.hints.get(table) or {}).get(column, {}).get("enum"))

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
                and c.name not in ("name", "title", "full_name", "email")}

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
            # terminal states (an enum the source declared is not widened)
            status = next((c for c in t.columns if c.name in ("status", "state") and c.enum),
                          None)
            if status is not None:
                have = set(status.enum or [])
                for trigger, terminal in TERMINAL_FOR:
                    if terminal in have:
                        if self.f.make(t.name, skew=True, overrides={status.name: terminal}):
                            added[t.name] += 1
                        break
                    if have & trigger and not self._declared_enum(t.name, status.name):
                        status.enum = [*(status.enum or []), terminal]
                        have.add(terminal)
                        self.f.reindex_column(t.name)
                        self.notes.append(f"edge: {t.name}.status += {terminal}")
                        for _ in range(2):
                            if self.f.make(t.name, skew=True, overrides={status.name: terminal}):
                                added[t.name] += 1
                        break
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
