"""Step 7 of the algorithm: rows. `RowFactory` makes valid rows with seeded Faker and
`random.Random`: foreign keys point at existing rows (optionally Zipf-skewed), unique columns
and groups stay unique, enums and NOT NULL hold, and times are consistent (children after
parents, end after start, updated after created). Column kinds are in `column_semantics`, the
values in `row_values` (`RowValues`), the times and column order in `row_times` (`RowTimes`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime
from typing import Any

from faker import Faker

from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.column_semantics import column_semantic
from agent_world.mining.offline.naming import is_label, singular
from agent_world.mining.offline.reference_data import CURATED, CURATED_TABLES
from agent_world.mining.offline.row_times import RowTimes, parse_iso
from agent_world.mining.offline.row_values import RowValues
from agent_world.mining.semantics.invariants import SURPLUS_KINDS, derive_invariants
from agent_world.mining.semantics.routes import Route, fk_routes

# rules that derive columns of a new row from the rest of it (registered by the modules that
# add such columns: a conversion's converted time, a fetch's URL from its page)
ROW_RULES: list[Callable[[RowFactory, str, dict[str, Any]], None]] = []


class RowFactory(RowValues, RowTimes):
    """Makes valid rows for a set of tables: FKs point at existing rows, unique columns and
    unique_together groups stay unique, enums and NOT NULL hold, times are consistent."""

    def __init__(self, tables: list[TableSpec], rows: dict[str, list[dict[str, Any]]] | None,
                 seed: int | str, clock: str = "2026-01-15T09:00:00",
                 hints: dict[str, dict[str, dict[str, Any]]] | None = None,
                 file_types: list[str] | None = None, cloud: str | None = None,
                 service: str = "") -> None:
        self.tables = {t.name: t for t in tables}
        self.hints = hints or {}  # what the source declares per column (enum, range, format)
        self.file_types = list(file_types or [])  # ("xlsx", ...): what the source's files are
        self.cloud = cloud  # the cloud provider the source names ("gcp"): its regions' style
        self.rows: dict[str, list[dict[str, Any]]] = {
            t.name: [dict(r) for r in (rows or {}).get(t.name, [])] for t in tables}
        # the service the rows are of (the source's name): it seeds the draws, so two services
        # do not share their people and addresses, and its docs live on its own host
        self.service = service
        self.rng = random.Random(f"rows:{service}:{seed}")
        self.fake = Faker("en_US")
        self.fake.seed_instance(f"faker:{service}:{seed}")
        self.clock = datetime.fromisoformat(clock)
        self._unique: dict[tuple[str, tuple[str, ...]], set[Any]] = {}
        self._zipf: dict[tuple[str, int], tuple[list[Any], list[float]]] = {}
        self._by_id: dict[str, dict[Any, dict[str, Any]]] = {}
        self._cache: dict[tuple[str, str], Any] = {}
        for t in tables:
            self._index(t.name)


    # ---- bookkeeping -------------------------------------------------------------------
    def invariants(self, kind: str, table: str) -> list[dict[str, Any]]:
        """The schema's cross-table invariants of one kind on one table (see semantics)."""
        key = ("invariants", "")
        if key not in self._cache:
            self._cache[key] = derive_invariants(list(self.tables.values()))
        return [i for i in self._cache[key] if i["kind"] == kind and i["table"] == table]

    def add_table(self, table: TableSpec) -> None:
        self._cache.clear()
        self.tables[table.name] = table
        self.rows.setdefault(table.name, [])
        self._index(table.name)

    def _groups(self, table: TableSpec) -> list[tuple[str, ...]]:
        groups = [(c.name,) for c in table.columns if c.unique and not c.primary_key]
        groups += [tuple(table.primary_key)] + [tuple(g) for g in table.unique_together]
        return groups

    def _index(self, tname: str) -> None:
        table = self.tables[tname]
        for g in self._groups(table):
            self._unique[(tname, g)] = {_unique_key(r, g) for r in self.rows[tname]}
        pk = table.primary_key[0]
        self._by_id[tname] = {r.get(pk): r for r in self.rows[tname]}

    def reindex_column(self, tname: str) -> None:
        self._cache.clear()
        self._index(tname)

    def next_id(self, tname: str) -> int:
        pk = self.tables[tname].primary_key
        if len(pk) != 1:
            return len(self.rows[tname]) + 1
        ids = [r.get(pk[0]) for r in self.rows[tname] if isinstance(r.get(pk[0]), int)]
        return (max(ids) if ids else 0) + 1

    def ok_unique(self, tname: str, row: dict[str, Any]) -> bool:
        for g in self._groups(self.tables[tname]):
            key = _unique_key(row, g)
            if any(v is None for v in key):
                continue
            if key in self._unique[(tname, g)]:
                return False
        return True

    def commit(self, tname: str, row: dict[str, Any]) -> dict[str, Any]:
        for g in self._groups(self.tables[tname]):
            key = _unique_key(row, g)
            if not any(v is None for v in key):
                self._unique[(tname, g)].add(key)
        self.rows[tname].append(row)
        self._by_id[tname][row.get(self.tables[tname].primary_key[0])] = row
        return row

    # ---- choices -----------------------------------------------------------------------
    def zipf_choice(self, tname: str, ids: list[Any], s: float = 1.1) -> Any:
        key = (tname, len(ids))
        if key not in self._zipf:
            order = list(ids)
            random.Random(f"zipf:{tname}:{len(ids)}").shuffle(order)
            weights = [1.0 / (rank + 1) ** s for rank in range(len(order))]
            self._zipf[key] = (order, weights)
        order, weights = self._zipf[key]
        return self.rng.choices(order, weights=weights, k=1)[0]

    def pick_parent(self, table: str, col: ColumnSpec, skew: bool,
                    own_id: Any = None) -> Any:
        ptable, pcol = col.foreign_key.split(".")  # type: ignore[union-attr]
        candidates = [r.get(pcol) for r in self.rows.get(ptable, []) if r.get(pcol) is not None]
        if ptable == table:
            candidates = [c for c in candidates if own_id is None or c != own_id]
            if not candidates or self.rng.random() < 0.5:
                return None
        if not candidates:
            return None
        if skew:
            return self.zipf_choice(ptable, candidates)
        return self.rng.choice(candidates)

    def parent_row(self, col: ColumnSpec, value: Any) -> dict[str, Any] | None:
        if value is None or not col.foreign_key:
            return None
        ptable = col.foreign_key.split(".")[0]
        return self._by_id.get(ptable, {}).get(value)

    # ---- foreign keys along routes ---------------------------------------------------------
    def _routes(self, table: str) -> list[Route]:
        key = ("routes", table)
        if key not in self._cache:
            self._cache[key] = [r for r in fk_routes(list(self.tables.values()))
                                if r.table == table]
        return self._cache[key]

    def _implied(self, tname: str, column: str, row: dict[str, Any]) -> Any:
        """The value a route through an already chosen parent fixes for `column`."""
        t = self.tables[tname]
        for r in self._routes(tname):
            if r.kind == "via" and r.column == column and row.get(r.via) is not None:
                parent = self.parent_row(t.column(r.via), row[r.via])
                if parent is not None and parent.get(r.parent_column) is not None:
                    return parent[r.parent_column]
        return None

    def route_fk(self, tname: str, c: ColumnSpec, row: dict[str, Any], skew: bool,
                 own_id: Any) -> tuple[bool, Any]:
        """(decided, value) for an FK column that a route fixes or narrows."""
        ptable = c.foreign_key.split(".")[0]  # type: ignore[union-attr]
        filters = []
        for r in self._routes(tname):
            t = self.tables[tname]
            if r.kind == "via":
                if r.column == c.name and row.get(r.via) is not None:
                    parent = self.parent_row(t.column(r.via), row[r.via])
                    if parent is not None and parent.get(r.parent_column) is not None:
                        return True, parent[r.parent_column]
                    if parent is not None and c.nullable:  # the route leaves it unknown
                        return True, None
                if r.via == c.name:
                    want = row.get(r.column)
                    if want is None:  # another route may already fix the column
                        want = self._implied(tname, r.column, row)
                    if want is not None:
                        pc = r.parent_column
                        filters.append(lambda p, w=want, pc=pc: p.get(pc) == w)
            else:
                for mine, other in ((r.via, r.column), (r.column, r.via)):
                    if mine == c.name and row.get(other) is not None:
                        op = self.parent_row(t.column(other), row[other])
                        if op is not None and op.get(r.parent_column) is not None:
                            want, pc = op[r.parent_column], r.parent_column
                            filters.append(lambda p, w=want, pc=pc: p.get(pc) == w)
        if not filters:
            return False, None
        pcol = c.foreign_key.split(".")[1]  # type: ignore[union-attr]
        cands = [p.get(pcol) for p in self.rows.get(ptable, [])
                 if all(f(p) for f in filters) and p.get(pcol) is not None
                 and (ptable != tname or p.get(pcol) != own_id)]
        if ptable == tname and (not cands or self.rng.random() < 0.5):
            return True, None
        if not cands:
            return True, None
        return True, (self.zipf_choice(f"{ptable}|{len(cands)}|{cands[0]}", cands) if skew
                      else self.rng.choice(cands))

    def is_owner(self, table: TableSpec, col: ColumnSpec) -> bool:
        """Whether `col` names the record `table`'s rows belong to, as its description says
        ("a bookable period in a clinician's calendar": a slot's clinician): never left NULL,
        though the source did not mark it required."""
        parent = singular((col.foreign_key or "").split(".")[0]).replace("_", " ")
        text = (table.description or "").lower()
        return bool(parent) and (f"{parent}'s" in text or f"of a {parent}" in text
                                 or f"of the {parent}" in text)

    def make(self, tname: str, *, skew: bool = False, overrides: dict[str, Any] | None = None,
             nulls: float = 0.05, tries: int = 8) -> dict[str, Any] | None:
        """Generate, check and append one row (None when uniqueness cannot be met)."""
        table = self.tables[tname]
        overrides = overrides or {}
        for attempt in range(tries):
            row: dict[str, Any] = {}
            rid = self.next_id(tname)
            dead_end = False
            for c in self._ordered(table):
                if c.name in overrides:
                    row[c.name] = overrides[c.name]
                elif c.primary_key and not c.foreign_key:
                    row[c.name] = rid if c.type == "integer" else self.fake.uuid4()
                elif c.foreign_key:
                    decided, v = self.route_fk(tname, c, row, skew, rid)
                    if not decided:
                        v = self.pick_parent(tname, c, skew, own_id=rid)
                    if v is None and not c.nullable:
                        if not decided:
                            return None  # no parent rows to point at
                        dead_end = True  # no parent on this route: try other parents
                        break
                    if v is not None and c.nullable and not decided and \
                            not self.is_owner(table, c) and self.rng.random() < nulls:
                        v = None
                    row[c.name] = v
                elif (copied := self._implied(tname, c.name, row)) is not None:
                    if c.type in ("date", "datetime") and \
                            (parse_iso(copied) or self.clock) < self._floor(tname, row):
                        dead_end = True  # a slot that started before the patient existed:
                        break  # other parents on the next try
                    row[c.name] = copied
                elif c.nullable and not c.unique and self.rng.random() < nulls and \
                        not is_label(c.name) and c.type not in ("date", "datetime", "boolean"):
                    # a flag is set or not: a slot 'booked: NULL' was neither free nor taken
                    row[c.name] = None
                else:
                    row[c.name] = self.value(tname, c, row)
            if dead_end:
                continue
            for rule in ROW_RULES:
                rule(self, tname, row)
            if attempt < tries - 1 and not overrides and self._over_capacity(tname, row):
                continue  # another parent (a free slot), or another state, on the next try
            if not self.ok_unique(tname, row):
                for c in table.columns:  # make unique text columns unique by suffix
                    if (c.unique or any(c.name in g for g in table.unique_together)) and \
                            c.type == "text" and isinstance(row.get(c.name), str) and \
                            not c.enum and not c.foreign_key and c.name not in overrides and \
                            attempt >= 2 and \
                            column_semantic(tname, c) not in ("table_name", "isbn", "barcode"):
                        taken = {r.get(c.name) for r in self.rows[tname]}
                        row[c.name] = _suffix(row[c.name], rid, column_semantic(tname, c),
                                              taken)
                if not self.ok_unique(tname, row):
                    continue
            return self.commit(tname, row)
        return None

    def _over_capacity(self, tname: str, row: dict[str, Any]) -> bool:
        """Whether the row would be a second live record of a parent that holds one (a
        second live appointment in a slot, a second active loan of a copy, a second
        checked-out branch of a repository)."""
        for inv in (i for kind in SURPLUS_KINDS for i in self.invariants(kind, tname)):
            if row.get(inv["column"]) not in inv["holding"] or row.get(inv["fk"]) is None:
                continue
            holding = set(inv["holding"])
            if sum(1 for r in self.rows[tname] if r.get(inv["fk"]) == row[inv["fk"]]
                   and r.get(inv["column"]) in holding) >= inv["limit"]:
                return True
        return False

    def curated_rows(self, tname: str, n: int | None = None) -> int:
        entity = CURATED_TABLES.get(tname) or singular(tname)
        data = CURATED.get(entity, {}).get("rows", [])
        made = 0
        have = {r.get("name") or r.get("code") for r in self.rows[tname]}
        for rec in data:
            if n is not None and made >= n:
                break
            if (rec.get("name") or rec.get("code")) in have:
                continue
            over = {k: v for k, v in rec.items() if k in {c.name for c in
                                                           self.tables[tname].columns}}
            if self.make(tname, overrides=over, nulls=0.0, tries=1) is not None:
                made += 1
        return made


def _unique_key(row: dict[str, Any], group: tuple[str, ...]) -> tuple[Any, ...]:
    """The hashable value of a unique group: a JSON column (object or array) by its
    canonical text, so two equal objects still collide."""
    values = (row.get(c) for c in group)
    return tuple(json.dumps(v, sort_keys=True, default=str) if isinstance(v, (dict, list)) else v
                 for v in values)


def _suffix(value: str, rid: Any, sem: str, taken: set[Any]) -> str:
    """`value` told apart from the same value of another record. A name or a label takes the
    next free number as people number copies ('billing-dataset-2', 'Q3 review (2)'), never
    the record's id ('later 19' read as part of the name, and gave the id away)."""
    if sem == "email" and "@" in value:
        user, _, dom = value.partition("@")
        return f"{user}{rid}@{dom}"
    if sem in ("url", "file_path", "repo_path"):
        return f"{value.rstrip('/')}-{rid}"
    slug = " " not in value.strip()
    return next(c for n in range(2, len(taken) + 3)
                if (c := f"{value}-{n}" if slug else f"{value} ({n})") not in taken)
