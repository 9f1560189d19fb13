"""The generic structural operations of offline complexification (`StructureOps`, mixed into
the complexifier): actors (a users table and an ownership FK), audit history whose entries
record real old -> new values, tags many-to-many, a status lifecycle, a lookup table extracted
from a low-cardinality column or a self-referencing category tree, and notes/attachments child
records."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.column_semantics import column_semantic
from agent_world.mining.offline.naming import identifier, plural, singular
from agent_world.mining.offline.row_times import WINDOW_START, parse_iso, to_iso
from agent_world.mining.offline.rows import RowFactory
from agent_world.mining.semantics.lifecycle_rule import NEGATIVE_ENDS, lifecycle_columns, state_rank
from agent_world.mining.semantics.times import time_group


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


class StructureOps:
    """The `op_*` operations and audit-history rows; mixed into the complexifier, whose
    tables, row factory (`f`), helpers (`table`, `has`, `new_table`, `add_column`, `fk_col`,
    `fill`, `cands`, ...) and notes they use."""

    f: RowFactory
    tables: list[TableSpec]
    kinds: dict[str, str]
    rng: random.Random
    clock: str
    notes: list[str]

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
            # a source's own tags table is no record to tag: its join held tag_id twice (asana)
            if target == "tags" or self.has(join) or not self.f.rows[target]:
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
