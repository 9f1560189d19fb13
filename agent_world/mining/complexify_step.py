"""One complexification iteration of mining (`complexify`): the LLM proposes new tables,
columns, enum values and rows (what the source implies and the database lacks, quoted in the
prompt), else the offline strategy runs; the result is validated, never loses content, and
passes the semantic gate or is rejected (the previous database kept, the reason recorded)."""

from __future__ import annotations

import json
import time
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import TableSpec
from agent_world.mining import miner_prompts as prompts
from agent_world.mining.coverage import tool_coverage, uncovered_reasons
from agent_world.mining.miner_answers import (
    ComplexifyChange,
    _assign_ids,
    _one_line,
    _rows_from_blocks,
    _with_retries,
)
from agent_world.mining.offline.complexify import complexify_offline
from agent_world.mining.offline.drafting import fill_column, scale_rows
from agent_world.mining.offline.tables import table_kinds
from agent_world.mining.semantic_gate import SemanticRejection, semantic_gate
from agent_world.mining.sources.base import SourceDocument
from agent_world.mining.validation import (
    MiningError,
    _check_monotonic,
    _finish,
    validate_database,
)
from agent_world.models import chat_model


def _next_spec(spec: EnvSpec, tables: list[TableSpec], rows: dict[str, list[dict[str, Any]]],
               kinds: dict[str, str], notes: list[str], added: list[str] | None = None
               ) -> EnvSpec:
    prov = spec.provenance.model_copy(deep=True)
    prov.parent = spec.fingerprint
    prov.notes = [*prov.notes, *notes]
    old = {t.name for t in spec.tables}
    if added is None:
        added = [*(prov.stats.get("added_tables") or []),
                 *(t.name for t in tables if t.name not in old)]
    prov.stats = {**prov.stats, "table_kinds": kinds, "added_tables": added}
    data = spec.model_dump(mode="json")
    data.update(tables=[t.model_dump(mode="json") for t in tables],
                rows={k: v for k, v in rows.items() if v}, version=spec.version + 1,
                provenance=prov.model_dump(mode="json"))
    return EnvSpec.from_dict(data, origin=f"{spec.name} (complexified)")


def _source_gaps(doc: SourceDocument | None, spec: EnvSpec) -> str:
    """What the source implies and the database lacks, for the LLM's enrichment proposal."""
    if doc is None:
        return ""
    gaps = [f"- {tool}: {lacks}" for tool, lacks in uncovered_reasons(tool_coverage(doc, spec))]
    declared = [f"- {e.name}.{f.name}: {f.type or ''} {f.format or ''} "
                f"{'enum ' + '|'.join(f.enum) if f.enum else ''}".rstrip()
                for e in doc.entities for f in e.field_specs][:60]
    out = ""
    if gaps:
        out += "Source tools the database cannot serve yet:\n" + "\n".join(gaps[:30]) + "\n"
    if declared:
        out += "Fields the source declares (keep their types and enums):\n" + \
            "\n".join(declared) + "\n"
    return out


def _complexify_llm(model: Any, spec: EnvSpec, iteration: int, seed: int,
                    doc: SourceDocument | None = None) -> tuple[EnvSpec | None, list[str]]:
    system = prompts.COMPLEXIFY_SYSTEM
    samples = {t.name: spec.rows.get(t.name, [])[:2] for t in spec.tables}
    user = prompts.COMPLEXIFY_USER.format(
        theme=spec.theme.name, description=spec.theme.description, iteration=iteration,
        tables=json.dumps([t.model_dump(exclude_defaults=True) for t in spec.tables])[:12000],
        counts=json.dumps({k: len(v) for k, v in spec.rows.items()}),
        samples=json.dumps(samples, default=str)[:4000], gaps=_source_gaps(doc, spec))

    def accept(ch: ComplexifyChange) -> EnvSpec:
        tables = [t.model_copy(deep=True) for t in spec.tables]
        by = {t.name: t for t in tables}
        rows = {k: [dict(r) for r in v] for k, v in spec.rows.items()}
        for nt in ch.new_tables:
            if nt.name in by:
                raise MiningError(f"new table {nt.name!r} already exists")
            tables.append(nt)
            by[nt.name] = nt
        base = spec.model_copy(update={"tables": tables, "rows": rows})
        for nc in ch.new_columns:
            if nc.table not in by:
                raise MiningError(f"new column on unknown table {nc.table!r}")
            if nc.column.name in {c.name for c in by[nc.table].columns}:
                raise MiningError(f"column {nc.table}.{nc.column.name} already exists")
            if not nc.column.nullable and nc.column.default is None and rows.get(nc.table):
                raise MiningError(f"new NOT NULL column {nc.table}.{nc.column.name} needs a "
                                  "default for the existing rows")
            by[nc.table].columns.append(nc.column)
            vals = fill_column(base, nc.table, nc.column, f"{seed}:{iteration}")
            for r, v in zip(rows.get(nc.table, []), vals, strict=True):
                r[nc.column.name] = v
        for w in ch.widen_enums:
            col = by[w.table].column(w.column) if w.table in by else None
            if col is None or not col.enum:
                raise MiningError(f"{w.table}.{w.column} is not an enum column")
            col.enum = list(dict.fromkeys([*col.enum, *w.add_values]))
        added = _rows_from_blocks(ch.new_rows, tables)
        _assign_ids(tables, added, rows)
        for k, v in added.items():
            rows.setdefault(k, []).extend(v)
        kinds = table_kinds(spec)
        new = _next_spec(spec, tables, rows, kinds, [])
        new = validate_database(new)
        # volumes: new tables get the offline generator's rows, every table grows a little
        kinds = table_kinds(new)
        minimum = {t.name: max(len(new.rows.get(t.name, [])) + 2,
                               int(len(new.rows.get(t.name, [])) * 1.3))
                   if kinds.get(t.name) not in ("reference", "lookup") else 0
                   for t in new.tables}
        for nt in ch.new_tables:
            minimum[nt.name] = max(minimum.get(nt.name, 0), 15)
        new.rows = {k: v for k, v in scale_rows(new, f"{seed}:{iteration}",
                                                        minimum).items() if v}
        new.provenance.notes.append(f"iteration {iteration}: llm: {ch.summary[:300]}")
        new = validate_database(new)
        _check_monotonic(spec, new)
        if doc is not None:  # violations that cannot be repaired go back to the model
            semantic_gate(new.model_copy(deep=True), doc, f"iteration {iteration}")
        return new

    return _with_retries(model, ComplexifyChange, system, user, accept)


def complexify(spec: EnvSpec, iteration: int, seed: int = 0,
               doc: SourceDocument | None = None) -> EnvSpec:
    """One complexification iteration (1, 2, ...): more tables/relations, Zipf-skewed parent
    popularity, edge cases, more rows. Validated (build + FK check) and recorded in
    provenance.stats["iterations"]; raises MiningError if tables/rows/constraints decrease."""
    if iteration < 1:
        raise ValueError("complexification iterations count from 1 (0 is the draft)")
    t0 = time.perf_counter()
    model = chat_model("miner")
    strategy = "offline"
    if model is not None:
        new, errors = _complexify_llm(model, spec, iteration, seed, doc)
        if new is not None:
            return _gate_iteration(spec, new, doc, iteration, "llm", t0,
                                   [new.provenance.notes[-1]])
        strategy = "offline-fallback"
        fallback_note = (f"iteration {iteration}: LLM complexification failed {len(errors)} "
                         f"times (last error: {_one_line(errors[-1]) if errors else '?'}); used "
                         f"the offline strategy")
    res = complexify_offline(spec, iteration, seed, doc)
    notes = res.notes
    if strategy == "offline-fallback":
        notes = [fallback_note, *notes]
    new = _next_spec(spec, res.tables, res.rows, res.kinds,
                     [f"iteration {iteration}: {n}" for n in notes], res.added)
    new = validate_database(new)
    _check_monotonic(spec, new)
    return _gate_iteration(spec, new, doc, iteration, strategy, t0, notes)


def _gate_iteration(before: EnvSpec, new: EnvSpec, doc: SourceDocument | None, iteration: int,
                    strategy: str, t0: float, notes: list[str]) -> EnvSpec:
    """A complexified database through the semantic gate: repaired, or rejected (the previous
    database is kept and the reason recorded in ``provenance.stats["rejected_iterations"]``,
    which the mine graph writes to the ledger)."""
    try:
        new, repaired = semantic_gate(new, doc, f"iteration {iteration}")
    except SemanticRejection as exc:
        kept = before.model_copy(deep=True)
        kept.provenance.notes.append(f"iteration {iteration}: rejected ({exc})")
        rejected = [*(kept.provenance.stats.get("rejected_iterations") or []),
                    {"iteration": iteration, "reason": str(exc)}]
        kept.provenance.stats = {**kept.provenance.stats, "rejected_iterations": rejected}
        return _finish(kept, iteration, "rejected", time.perf_counter() - t0,
                       [f"rejected: {str(exc)[:300]}"])
    _check_monotonic(before, new)
    new.provenance.notes.extend(repaired)
    return _finish(new, iteration, strategy, time.perf_counter() - t0, [*notes, *repaired])
