"""The fk_route rule: `fk_routes` lists the foreign-key routes a table's rows must agree on
(a column its container also carries, two parents inside one container), `_check_routes`
checks the rows against them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import TableSpec
from agent_world.mining.semantics.columns import _containment, _fk_target, time_stem
from agent_world.mining.semantics.violations import Violation


@dataclass(frozen=True)
class Route:
    """``table.column`` must equal ``parent(table.via).parent_column`` (kind ``via``), or the
    parents of two columns must share ``parent_column`` (kind ``siblings``: ``column`` and
    ``via`` are the two FK columns of ``table``)."""

    kind: str  # via | siblings
    table: str
    column: str
    via: str
    parent_column: str


# columns a contained record shares with its container when both have them: scheduled times
# and identifiers of the thing itself (not created_at, status or names, which are each row's own)
_SCHEDULE_STEMS = frozenset({"start", "starts", "end", "ends", "begin", "begins", "scheduled",
                             "scheduled_for"})
_IDENTITY = frozenset({"url", "uri", "isbn", "sku", "barcode", "mrn"})


def _copied(name: str) -> bool:
    return time_stem(name) in _SCHEDULE_STEMS or name in _IDENTITY


def fk_routes(tables: list[TableSpec]) -> list[Route]:
    """Every route the rows must agree on (see the package docstring)."""
    by = {t.name: t for t in tables}
    routes: list[Route] = []
    for t in tables:
        fks = [c for c in t.columns if c.foreign_key]
        for via in fks:
            ptable = _fk_target(via)[0]  # type: ignore[index]
            parent = by.get(ptable)
            if parent is None:
                continue
            pcols = {c.name: c for c in parent.columns}
            for col in fks:
                if col is via:
                    continue
                pc = pcols.get(col.name)
                if pc is None or pc.foreign_key != col.foreign_key:
                    continue
                if ptable == t.name or not _containment(via):
                    if not (_containment(col) and _containment(pc)):
                        continue  # a role link (an actor, a base branch) only keeps the
                        # record inside its container (a base branch in its own repository)
                routes.append(Route("via", t.name, col.name, via.name, col.name))
            if ptable != t.name and _containment(via):
                # a value the record copies from its container (an appointment's start is its
                # slot's, a fetch's URL its page's)
                for col in t.columns:
                    pc = pcols.get(col.name)
                    if pc is not None and not col.foreign_key and not col.primary_key and \
                            pc.type == col.type and _copied(col.name):
                        routes.append(Route("via", t.name, col.name, via.name, col.name))
        # two parents inside the same container
        for i, a in enumerate(fks):
            for b in fks[i + 1:]:
                ta, tb = _fk_target(a)[0], _fk_target(b)[0]  # type: ignore[index]
                if ta == tb or t.name in (ta, tb) or ta not in by or tb not in by:
                    continue
                acols = {c.name: c for c in by[ta].columns if _containment(c)}
                for c in by[tb].columns:
                    other = acols.get(c.name)
                    if other is not None and _containment(c) and \
                            other.foreign_key == c.foreign_key and \
                            c.name not in {x.name for x in fks}:
                        routes.append(Route("siblings", t.name, a.name, b.name, c.name))
    return routes


def _check_routes(spec: EnvSpec, index: dict[str, dict[Any, dict[str, Any]]]) -> list[Violation]:
    out: list[Violation] = []
    by = {t.name: t for t in spec.tables}
    for r in fk_routes(spec.tables):
        t = by[r.table]
        pk = t.primary_key[0]
        via_parent = _fk_target(t.column(r.via))[0]  # type: ignore[index]
        for row in spec.rows.get(r.table, []):
            if r.kind == "via":
                v, p = row.get(r.column), row.get(r.via)
                if v is None or p is None:
                    continue
                parent = index.get(via_parent, {}).get(p)
                if parent is None or parent.get(r.parent_column) is None:
                    continue
                if parent[r.parent_column] != v:
                    out.append(Violation(
                        "fk_route", r.table, r.column, row.get(pk),
                        f"{r.column}={v!r} but its {r.via} ({via_parent} {p!r}) has "
                        f"{r.parent_column}={parent[r.parent_column]!r}"))
            else:
                a_parent = _fk_target(t.column(r.column))[0]  # type: ignore[index]
                pa = index.get(a_parent, {}).get(row.get(r.column))
                pb = index.get(via_parent, {}).get(row.get(r.via))
                if pa is None or pb is None:
                    continue
                va, vb = pa.get(r.parent_column), pb.get(r.parent_column)
                if va is not None and vb is not None and va != vb:
                    out.append(Violation(
                        "fk_route", r.table, f"{r.column},{r.via}", row.get(pk),
                        f"its {a_parent} row has {r.parent_column}={va!r} but its "
                        f"{via_parent} row has {r.parent_column}={vb!r}"))
    return out
