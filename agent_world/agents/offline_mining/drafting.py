"""The offline draft: `draft_tables_and_rows` derives the model, its tables and rows, with
`draft_volumes` filling tables in FK order by role (roots 15-20, children ~3 per parent,
activity logs 40, joins ~1.5x, reference tables their curated size); `scale_rows` and
`fill_column` serve the LLM path (topping tables up to a minimum, values for a new column).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from agent_world.agents.offline_mining.derivation import complete_model, derive_model
from agent_world.agents.offline_mining.evidence import Evidence
from agent_world.agents.offline_mining.naming import identifier, singular
from agent_world.agents.offline_mining.reference_data import CURATED_TABLES
from agent_world.agents.offline_mining.rows import RowFactory
from agent_world.agents.offline_mining.tables import model_to_tables, table_kinds, table_order
from agent_world.envs.spec import ColumnSpec, EnvSpec, TableSpec
from agent_world.tools.sources.base import SourceDocument


def draft_volumes(tables: list[TableSpec], kinds: dict[str, str],
                  factory: RowFactory) -> None:
    """Fill tables in FK order with volumes by role (step 7)."""
    for tname in table_order(tables):
        kind = kinds.get(tname, "core")
        t = factory.tables[tname]
        if kind == "reference":
            factory.curated_rows(tname)
            continue
        parents = [c.foreign_key.split(".")[0] for c in t.columns
                   if c.foreign_key and not c.nullable and c.foreign_key.split(".")[0] != tname]
        sizes = [len(factory.rows[p]) for p in parents]
        if kind == "join":
            n = min(int(1.5 * max(sizes or [10])), (sizes[0] * sizes[1]) if len(sizes) > 1
                    else 30)
        elif kind == "child":
            n = min(120, 2 * (sizes[0] if sizes else 10))
        elif kind == "activity":
            n = 40
        elif kind == "person":
            n = 20
        elif parents:
            n = min(80, max(12, 3 * min(sizes)))
        else:
            n = 15
        for _ in range(n):
            factory.make(tname)


def draft_tables_and_rows(doc: SourceDocument, evidence: list[Evidence], seed: int,
                          clock: str) -> tuple[list[TableSpec], dict[str, list[dict[str, Any]]],
                                               dict[str, str]]:
    m = derive_model(doc, evidence)
    if not m.entities:  # nothing named anything: one entity named after the source itself
        m.ensure(identifier(singular(doc.name), "item"), "core", doc.description)
        complete_model(m)
    tables, kinds = model_to_tables(m)
    from agent_world.agents.coverage import declared_hints  # what the source declares

    hints = declared_hints(doc, SimpleNamespace(tables=tables))
    factory = RowFactory(tables, None, seed, clock, hints)
    draft_volumes(tables, kinds, factory)
    return tables, factory.rows, kinds


def scale_rows(spec: EnvSpec, seed: int | str, minimum: dict[str, int]) -> dict[str, list]:
    """Top tables up to `minimum` rows with the offline generator (LLM path volumes)."""
    f = RowFactory(spec.tables, spec.rows, f"scale:{seed}", spec.clock_start,
                   spec.provenance.stats.get("field_hints"))
    kinds = table_kinds(spec)
    for tname in table_order(spec.tables):
        if kinds.get(tname) == "reference" and tname in CURATED_TABLES:
            f.curated_rows(tname, max(0, minimum.get(tname, 0) - len(f.rows[tname])))
        for _ in range(max(0, minimum.get(tname, 0) - len(f.rows[tname]))):
            if f.make(tname, skew=True) is None:
                break
    return f.rows


def fill_column(spec: EnvSpec, table: str, col: ColumnSpec, seed: int | str) -> list[Any]:
    """Values for a new column on a table's existing rows (LLM path)."""
    f = RowFactory(spec.tables, spec.rows, f"fill:{seed}:{table}.{col.name}", spec.clock_start)
    out = []
    for row in spec.rows.get(table, []):
        if col.foreign_key:
            v = f.pick_parent(table, col, True, own_id=row.get("id"))
            out.append(v if v is not None or col.nullable else col.default)
        elif col.default is not None:
            out.append(col.default)
        else:
            out.append(f.value(table, col, row))
    return out
