"""The semantic gate every mined database passes: `semantic_gate` checks what the rows mean
against what the source declares, repairs what can be repaired, drops (on a draft) columns that
cannot be made consistent, and raises `SemanticRejection` naming what remains;
`annotate_fidelity` records the coverage map, field hints, declared fidelity and violations."""

from __future__ import annotations

from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.mining.coverage import declared_fidelity, declared_hints, tool_coverage
from agent_world.mining.semantics.checker import check_semantics
from agent_world.mining.semantics.invariants import derive_invariants
from agent_world.mining.semantics.repair import repair_semantics
from agent_world.mining.semantics.violations import Violation, summarize
from agent_world.mining.sources.base import SourceDocument
from agent_world.mining.validation import MiningError, validate_database


class SemanticRejection(MiningError):
    """A database whose rows contradict their source and cannot be repaired."""


def semantic_gate(spec: EnvSpec, doc: SourceDocument | None, label: str, drop: bool = False
                  ) -> tuple[EnvSpec, list[str]]:
    """Check a mined database's meaning (`check_semantics`, the cross-table
    invariants of its schema included, declared in ``provenance.stats["invariants"]``)
    against what the source declares; repair what can be repaired (returned notes say what);
    with `drop`, columns whose violations remain are dropped (a note each, also in
    ``provenance.stats["schema_repairs"]``); raise SemanticRejection naming what remains."""
    hints = source_hints(doc, spec) if doc is not None else \
        dict(spec.provenance.stats.get("field_hints") or {})
    spec.provenance.stats = {**spec.provenance.stats, "field_hints": hints,
                             "invariants": derive_invariants(spec.tables)}
    if not check_semantics(spec, hints):
        return spec, []
    fixed, notes, left = repair_semantics(spec, hints)
    if left and drop:
        fixed, dropped = _drop_inconsistent(fixed, left)
        notes.extend(dropped)
        if dropped:
            fixed.provenance.stats = {
                **fixed.provenance.stats,
                "schema_repairs": [*(fixed.provenance.stats.get("schema_repairs") or []),
                                   *dropped],
                "invariants": derive_invariants(fixed.tables)}
            fixed, more, left = repair_semantics(fixed, hints)
            notes.extend(more)
    if left:
        counts = {k: n for k, n in summarize(left).items() if n}
        raise SemanticRejection(f"{label}: {len(left)} semantic violation(s) {counts} remain "
                                f"after repair, e.g. {'; '.join(str(v) for v in left[:3])}")
    fixed = validate_database(fixed)
    return fixed, [f"{label}: {n}" for n in notes]


def _drop_inconsistent(spec: EnvSpec, left: list[Violation]
                       ) -> tuple[EnvSpec, list[str]]:
    """Drop the columns whose violations repair could not remove (never a key, a column other
    tables point at, or a whole table); one note per column saying why."""
    referenced = {c.foreign_key for t in spec.tables for c in t.columns if c.foreign_key}
    reasons: dict[tuple[str, str], str] = {}
    for v in left:
        reasons.setdefault((v.table, v.column), str(v))
    spec = spec.model_copy(deep=True)
    notes = []
    for (tname, cname), why in reasons.items():
        t = spec.table(tname)
        col = next((c for c in t.columns if c.name == cname), None)
        if col is None or col.primary_key or f"{tname}.{cname}" in referenced or \
                len(t.columns) <= 2:
            continue
        t.columns = [c for c in t.columns if c.name != cname]
        t.unique_together = [g for g in t.unique_together if cname not in g]
        for row in spec.rows.get(tname, []):
            row.pop(cname, None)
        notes.append(f"dropped column {tname}.{cname}: it cannot be made consistent with the "
                     f"source ({why[:200]})")
    return (validate_database(spec) if notes else spec), notes


def source_hints(doc: SourceDocument, spec: EnvSpec) -> dict[str, dict[str, dict[str, Any]]]:
    """What the source declares about the spec's columns (see `coverage.declared_hints`)."""
    return declared_hints(doc, spec)


def annotate_fidelity(doc: SourceDocument, spec: EnvSpec) -> EnvSpec:
    """Record what the tool designer and the reports read: the tool coverage map
    (``provenance.stats["tool_coverage"]``), the field hints the source declares
    (``["field_hints"]``), how much of the declared typing the database keeps
    (``["declared_fidelity"]``) and the semantic violations per rule
    (``["semantic_violations"]``)."""
    stats = dict(spec.provenance.stats)
    coverage = tool_coverage(doc, spec)
    stats.update(tool_coverage=coverage, field_hints=declared_hints(doc, spec, coverage),
                 declared_fidelity=declared_fidelity(doc, spec, coverage))
    spec.provenance.stats = stats
    stats["semantic_violations"] = summarize(check_semantics(spec))
    return spec
