"""The offline draft: `draft_tables_and_rows` derives the model, its tables and rows, with
`draft_volumes` filling tables in FK order by role (roots 15-20, children ~3 per parent,
activity logs 40, joins ~1.5x, reference tables their curated size); `scale_rows` and
`fill_column` serve the LLM path (topping tables up to a minimum, values for a new column).
`reconcile_with_source` makes the schema say what the source declares before any row is
made, so that values come from the declared enums, types and ranges in the first place.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.coverage import declared_hints  # what the source declares
from agent_world.mining.offline.cloud_regions import described_cloud
from agent_world.mining.offline.derivation import complete_model, derive_model
from agent_world.mining.offline.described_values import described_file_types
from agent_world.mining.offline.evidence import Evidence
from agent_world.mining.offline.naming import identifier, singular
from agent_world.mining.offline.record_bodies import give_pages_content
from agent_world.mining.offline.reference_data import CURATED_TABLES
from agent_world.mining.offline.rows import RowFactory
from agent_world.mining.offline.tables import model_to_tables, table_kinds, table_order
from agent_world.mining.semantics.lifecycle_rule import lifecycle_columns, state_rank
from agent_world.mining.semantics.values import declared_type_ok
from agent_world.mining.sources.base import SourceDocument


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


# a declared JSON type (or date format) -> the column type that keeps it
_DECLARED_TYPE = {"boolean": "boolean", "integer": "integer", "number": "real",
                  "string": "text", "date": "date", "date-time": "datetime"}


def reconcile_with_source(tables: list[TableSpec], hints: dict[str, dict[str, dict[str, Any]]]
                          ) -> list[str]:
    """Make the schema keep what the source declares (in place), before rows are made: a
    declared enum is the column's enum (states that tools and sentences suggested go), a
    declared type is the column's type, and a lifecycle stamp of a later state may be empty
    (a draft invoice has not been issued). Returns one note per change."""
    notes: list[str] = []
    for t in tables:
        thints = hints.get(t.name) or {}
        for c in t.columns:
            h = thints.get(c.name) or {}
            if c.primary_key and not c.foreign_key and h and c.type == "integer" and \
                    not declared_type_ok(h, c.type) and _DECLARED_TYPE.get(
                        str(h.get("type"))) == "text":
                _text_key(tables, t, c, notes)
            if c.primary_key or c.foreign_key or not h:
                continue
            if not declared_type_ok(h, c.type):
                want = _DECLARED_TYPE.get(str(h.get("format"))) or \
                    _DECLARED_TYPE.get(str(h.get("type")))
                if want == "real" and h.get("enum") and all(
                        _integral(v) for v in h["enum"]):  # 300 | 3600 | 86400: whole numbers
                    want = "integer"
                if want and want != c.type:
                    notes.append(f"{t.name}.{c.name}: typed {want} as the source declares "
                                 f"(was {c.type})")
                    c.type = want  # type: ignore[assignment]
            if c.enum and c.type != "text":  # an enum is a text CHECK: the type's values rule
                notes.append(f"{t.name}.{c.name}: {c.type} values, not {'|'.join(c.enum)}")
                c.enum = None
            declared = [str(v) for v in h.get("enum") or []]
            if declared and c.type == "text" and c.enum and set(c.enum) != set(declared):
                dropped = [v for v in c.enum if v not in declared]
                if dropped:
                    notes.append(f"{t.name}.{c.name}: the declared values "
                                 f"{'|'.join(declared)} only (not {'|'.join(dropped)})")
                c.enum = declared
        lc = lifecycle_columns(t)
        if lc is None:
            continue
        status = t.column(lc[0])
        initial = (status.enum or [None])[0]
        for state, stamp in lc[1].items():
            col = t.column(stamp)
            if not col.nullable and state != initial and state_rank(state) != 0:
                col.nullable = True
                notes.append(f"{t.name}.{stamp}: may be empty (set when {lc[0]} reaches "
                             f"{state!r}, not while {initial!r})")
    return notes


def _integral(v: Any) -> bool:
    try:
        return float(v) == int(float(v))
    except (TypeError, ValueError, OverflowError):
        return False


def _text_key(tables: list[TableSpec], t: TableSpec, key: ColumnSpec,
              notes: list[str]) -> None:
    """A key the source declares a string (ids like 'recXYZ', 'a1b2'): the key is text, and
    so is every foreign key to it, so that rows and references keep one type."""
    key.type = "text"
    refs = [f"{o.name}.{c.name}" for o in tables for c in o.columns
            if c.foreign_key == f"{t.name}.{key.name}"]
    for o in tables:
        for c in o.columns:
            if c.foreign_key == f"{t.name}.{key.name}":
                c.type = "text"
    notes.append(f"{t.name}.{key.name}: text ids as the source declares (was integer"
                 + (f"; so are {', '.join(refs)})" if refs else ")"))


def draft_tables_and_rows(doc: SourceDocument, evidence: list[Evidence], seed: int,
                          clock: str) -> tuple[list[TableSpec], dict[str, list[dict[str, Any]]],
                                               dict[str, str], list[str]]:
    """Tables, rows, table kinds and the notes of `reconcile_with_source`."""
    m = derive_model(doc, evidence)
    if not m.entities:  # nothing named anything: one entity named after the source itself
        m.ensure(identifier(singular(doc.name), "item"), "core", doc.description)
        complete_model(m)
    tables, kinds = model_to_tables(m)

    hints = declared_hints(doc, SimpleNamespace(tables=tables))
    notes = reconcile_with_source(tables, hints) + give_pages_content(tables, kinds)
    factory = RowFactory(tables, None, seed, clock, hints, described_file_types(doc.text()),
                         described_cloud(doc.text()), identifier(doc.name))
    draft_volumes(tables, kinds, factory)
    return tables, factory.rows, kinds, notes


def theme_text(spec: EnvSpec) -> str:
    """What the environment's source said (its theme keeps it): where its file types and
    cloud provider are read."""
    return " ".join([spec.theme.description, *spec.theme.raw_descriptions])


def scale_rows(spec: EnvSpec, seed: int | str, minimum: dict[str, int]) -> dict[str, list]:
    """Top tables up to `minimum` rows with the offline generator (LLM path volumes)."""
    f = RowFactory(spec.tables, spec.rows, f"scale:{seed}", spec.clock_start,
                   spec.provenance.stats.get("field_hints"),
                   described_file_types(theme_text(spec)), described_cloud(theme_text(spec)),
                   spec.name)
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
    f = RowFactory(spec.tables, spec.rows, f"fill:{seed}:{table}.{col.name}", spec.clock_start,
                   file_types=described_file_types(theme_text(spec)),
                   cloud=described_cloud(theme_text(spec)), service=spec.name)
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
