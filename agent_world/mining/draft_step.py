"""Iteration 0 of mining (`draft_database`): the theme and provenance of a source, and a
validated schema with seed rows, drafted by the LLM (its rows scaled by the offline generator)
or by the offline strategy, then passed through the semantic gate."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from typing import Any

from agent_world.envs.spec import EnvSpec, Provenance, Theme
from agent_world.envs.table_spec import TableSpec
from agent_world.mining import miner_prompts as prompts
from agent_world.mining.miner_answers import (
    SchemaDraft,
    _assign_ids,
    _doc_brief,
    _evidence_brief,
    _one_line,
    _rows_from_blocks,
    _with_retries,
)
from agent_world.mining.offline.drafting import draft_tables_and_rows, scale_rows
from agent_world.mining.offline.evidence import Evidence
from agent_world.mining.offline.naming import identifier
from agent_world.mining.offline.reference_data import CURATED_TABLES
from agent_world.mining.offline.tables import table_kinds
from agent_world.mining.semantic_gate import semantic_gate
from agent_world.mining.sources.base import SourceDocument
from agent_world.mining.taxonomy import classify
from agent_world.mining.validation import _finish, validate_database
from agent_world.models import chat_model

CLOCK_START = "2026-01-15T09:00:00"


def _first_sentence(text: str, limit: int = 90) -> str:
    sentence = re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def theme_description(doc: SourceDocument) -> str:
    """The source's own description; for a bare server (MCP servers often give only a name),
    a summary of what its tools do."""
    if doc.description and doc.description != doc.title:
        return doc.description
    head = doc.title or doc.name
    if not doc.tools:
        return f"{head} ({doc.kind} source)"
    shown = "; ".join(f"{t.name} ({_first_sentence(t.description)})" if t.description else t.name
                      for t in doc.tools[:4])
    more = f"; and {len(doc.tools) - 4} more" if len(doc.tools) > 4 else ""
    return f"{head}: {len(doc.tools)} tool{'s' if len(doc.tools) != 1 else ''}: {shown}{more}."


def _theme(doc: SourceDocument) -> Theme:
    return Theme(
        name=doc.name,
        description=theme_description(doc),
        taxonomy=classify(doc, use_llm=False),  # provisional; the taxonomy stage decides
        source_kind=doc.kind,
        source_ref=doc.portable_reference(),
        raw_descriptions=[f"{t.name}: {t.description}".strip() for t in doc.tools]
        + list(doc.features),
    )


def _provenance(doc: SourceDocument, kinds: dict[str, str], notes: list[str]) -> Provenance:
    return Provenance(created_by="miner", source_kind=doc.kind, source_ref=doc.reference,
                      created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                      notes=notes, stats={"table_kinds": kinds})


def _draft_offline(doc: SourceDocument, evidence: list[Evidence], seed: int,
                   notes: list[str]) -> EnvSpec:
    tables, rows, kinds, fixes = draft_tables_and_rows(doc, evidence, seed, CLOCK_START)
    spec = EnvSpec(name=identifier(doc.name), theme=_theme(doc), tables=tables,
                   rows={k: v for k, v in rows.items() if v}, clock_start=CLOCK_START,
                   provenance=_provenance(doc, kinds, notes))
    if fixes:
        spec.provenance.notes.extend(f"iteration 0: {n}" for n in fixes)
        spec.provenance.stats["schema_repairs"] = fixes
    return validate_database(spec)


def _draft_llm(model: Any, doc: SourceDocument, evidence: list[Evidence], seed: int
               ) -> tuple[EnvSpec | None, list[str]]:
    questions = list(dict.fromkeys(e.question for e in evidence if e.question))
    system = prompts.DRAFT_SYSTEM
    user = prompts.DRAFT_USER.format(
        name=doc.name, kind=doc.kind, brief=_doc_brief(doc),
        questions="\n".join(f"- {q}" for q in questions[:15]),
        evidence=_evidence_brief(evidence))

    def accept(d: SchemaDraft) -> EnvSpec:
        rows = _rows_from_blocks(d.rows, d.tables)
        _assign_ids(d.tables, rows)
        spec = EnvSpec.from_dict({
            "name": identifier(doc.name), "theme": _theme(doc).model_dump(),
            "tables": [t.model_dump() for t in d.tables], "rows": rows,
            "clock_start": CLOCK_START,
            "provenance": _provenance(doc, {}, []).model_dump()}, origin="LLM draft")
        spec = validate_database(spec)  # the LLM's own rows must be valid as written
        kinds = table_kinds(spec)
        minimum = {t.name: _draft_minimum(t, kinds.get(t.name, "core")) for t in spec.tables}
        spec.rows = {k: v for k, v in scale_rows(spec, seed, minimum).items() if v}
        spec.provenance.stats["table_kinds"] = kinds
        if d.notes:
            spec.provenance.notes.append(f"llm: {d.notes[:300]}")
        spec = validate_database(spec)
        # the meaning of the rows: repaired, or the violations go back to the model
        spec, repaired = semantic_gate(spec, doc, "iteration 0")
        spec.provenance.notes.extend(repaired)
        return spec

    return _with_retries(model, SchemaDraft, system, user, accept)


def _draft_minimum(table: TableSpec, kind: str) -> int:
    """Rows an LLM-drafted table is scaled to: like the offline volumes (roots ~15, tables
    with required parents ~25); reference tables keep what they have unless curated."""
    if kind == "reference":
        return 100 if table.name in CURATED_TABLES else 0
    required_parent = any(c.foreign_key and not c.nullable for c in table.columns)
    return 25 if required_parent or kind == "join" else 15


def draft_database(doc: SourceDocument, evidence: list[Evidence], seed: int = 0) -> EnvSpec:
    """A validated EnvSpec: relational schema + seed rows from the evidence (iteration 0).

    Theme from the doc (provisional taxonomy), no tools (a later stage designs them),
    provenance created_by="miner" with the statistics of iteration 0."""
    t0 = time.perf_counter()
    model = chat_model("miner")
    if model is not None:
        spec, errors = _draft_llm(model, doc, evidence, seed)
        if spec is not None:
            spec.provenance.notes.append(
                f"iteration 0: drafted by LLM{' after ' + str(len(errors)) + ' retries' if errors else ''}")
            spec, repaired = _gated(spec, doc)
            return _finish(spec, 0, "llm", time.perf_counter() - t0, ["llm draft", *repaired])
        note = (f"iteration 0: LLM draft failed {len(errors)} times (last error: "
                f"{_one_line(errors[-1]) if errors else '?'}); used the offline strategy")
        spec, repaired = _gated(_draft_offline(doc, evidence, seed, [note]), doc)
        return _finish(spec, 0, "offline-fallback", time.perf_counter() - t0,
                       ["offline draft", *repaired])
    spec, repaired = _gated(_draft_offline(doc, evidence, seed, []), doc)
    tables = ", ".join(t.name for t in spec.tables)
    return _finish(spec, 0, "offline", time.perf_counter() - t0,
                   [f"offline draft: {tables}", *repaired])


def _gated(spec: EnvSpec, doc: SourceDocument) -> tuple[EnvSpec, list[str]]:
    """The draft through the semantic gate; a column that cannot be made consistent is
    dropped (noted in ``provenance.stats["schema_repairs"]``), never the source."""
    spec, repaired = semantic_gate(spec, doc, "iteration 0", drop=True)
    spec.provenance.notes.extend(repaired)
    return spec, repaired
