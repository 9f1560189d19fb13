"""The deep-research miner: a source document -> a validated, complexified database (EnvSpec).

Pipeline step 1 ("Mine") as pure functions; a LangGraph graph elsewhere wires them together:

    questions = plan_questions(doc)                       # what to find out about the theme
    evidence  = gather_evidence(doc, questions, search)   # from the source (+ web search)
    spec      = draft_database(doc, evidence, seed)       # schema + seed rows, validated
    spec      = complexify(spec, iteration, seed)         # x N: more tables, skew, edge cases
    mined     = mine_theme(doc, iterations=3, seed=0)     # all of the above, with statistics

Two strategies behind each step, chosen by `chat_model("miner")`:

* LLM: the model plans the questions and writes the schema + exemplar rows and each
  complexification change as JSON checked against Pydantic models (`with_structured_output`
  when the model supports it, else one JSON object in the reply: a model without tool calling
  is switched to text once, logged, by `agent_world.plain_chat.ask_structured`).
  Volumes are then scaled by the offline row generator (LLMs are poor at emitting hundreds of
  consistent rows). Every answer is validated like the offline output; an invalid answer is
  retried up to twice with the error in the prompt, then the step falls back to the offline
  strategy and says so in provenance.notes.
* Offline: the documented algorithm in `agent_world.mining.offline`.

Validation (`validate_database`) of every draft and every iteration: EnvSpec validation, the
template database built with `build_template` (DDL, FK-checked inserts, CHECK/UNIQUE/NOT NULL),
``PRAGMA foreign_key_check`` empty, ``PRAGMA integrity_check`` ok, row counts equal to the spec.
Complexification never lowers tables, rows or constraints (`MiningError` if it would).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agent_world.envs.database import build_template
from agent_world.envs.spec import (
    ColumnSpec,
    EnvSpec,
    Provenance,
    TableSpec,
    Theme,
    format_validation_error,
)
from agent_world.errors import AgentWorldError, SpecError
from agent_world.mining import miner_prompts as prompts
from agent_world.mining import offline, semantics
from agent_world.mining.coverage import (
    declared_fidelity,
    declared_hints,
    tool_coverage,
    uncovered_reasons,
)
from agent_world.mining.offline import Evidence, SearchFn
from agent_world.mining.sources.base import SourceDocument
from agent_world.mining.taxonomy import classify
from agent_world.models import chat_model
from agent_world.plain_chat import ask_structured

__all__ = [
    "Evidence", "IterationStats", "MinedTheme", "MiningError", "SearchFn", "SemanticRejection",
    "complexify", "semantic_gate", "source_hints",
    "annotate_fidelity", "database_stats", "draft_database", "gather_evidence", "mine_theme",
    "plan_questions",
    "validate_database",
]

log = logging.getLogger(__name__)

LLM_ATTEMPTS = 3  # one answer + two retries with the error in the prompt
# Each complexification iteration grows the database; past ~10 it adds size, not realism.
MAX_ITERATIONS = 10
# A database is drafted from at most this many of a source's tools (an even spread over the
# list): reading stays linear in the source, the database stays a size an agent can learn.
MAX_MINED_TOOLS = 100
MAX_MINED_FEATURES = 200
CLOCK_START = "2026-01-15T09:00:00"


class MiningError(AgentWorldError):
    """A mined database that fails validation, or a complexification that lost content."""


class IterationStats(BaseModel):
    iteration: int  # 0 = the draft
    tables: int
    rows: int
    foreign_keys: int
    constraints: int
    null_cells: int = 0
    max_parent_share: float = 0.0  # most popular parent's share of an FK's child rows
    strategy: str = "offline"  # offline, llm, offline-fallback
    seconds: float = 0.0
    fingerprint: str = ""
    changes: list[str] = Field(default_factory=list)


class MinedTheme(BaseModel):
    """What mining one source produced: the final spec and how it got there."""

    spec: EnvSpec
    iterations: list[IterationStats]
    questions: list[str]
    evidence_summary: dict[str, Any]
    evidence: list[Evidence] = Field(default_factory=list)
    seconds: float = 0.0

    @property
    def theme(self) -> Theme:
        return self.spec.theme


# ============================================================================================
# Validation and statistics
# ============================================================================================


def database_stats(spec: EnvSpec) -> dict[str, Any]:
    """spec.stats() plus data-shape figures: NULL cells and FK popularity skew."""
    s = dict(spec.stats())
    s["null_cells"] = sum(1 for rows in spec.rows.values() for r in rows
                          for v in r.values() if v is None)
    share = 0.0
    for t in spec.tables:
        for c in t.columns:
            if not c.foreign_key:
                continue
            parent = c.foreign_key.split(".")[0]
            vals = [r.get(c.name) for r in spec.rows.get(t.name, []) if r.get(c.name) is not None]
            if len(vals) >= 10 and len(spec.rows.get(parent, [])) >= 10:
                counts: dict[Any, int] = {}
                for v in vals:
                    counts[v] = counts.get(v, 0) + 1
                share = max(share, max(counts.values()) / len(vals))
    s["max_parent_share"] = round(share, 3)
    return s


def _scratch_dir() -> str | None:
    """Where validation builds go: RAM-backed where possible (a build commits once per table;
    on a disk each commit waits for it), else the temp dir. $AGENT_WORLD_WORKDIR overrides."""
    chosen = os.environ.get("AGENT_WORLD_WORKDIR")
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
        return chosen
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def validate_database(spec: EnvSpec | dict[str, Any]) -> EnvSpec:
    """Re-validate the spec model, build its template database, check FKs and integrity.

    Returns the (re-)validated EnvSpec; raises MiningError naming what is wrong.
    """
    try:
        data = spec.model_dump(mode="json") if isinstance(spec, EnvSpec) else spec
        checked = EnvSpec.model_validate(data)
    except ValidationError as exc:
        raise MiningError(format_validation_error(exc, "mined database")) from None
    with tempfile.TemporaryDirectory(prefix="aw-mine-", dir=_scratch_dir()) as tmp:
        path = Path(tmp) / "template.sqlite"
        try:
            build_template(checked, path)
        except SpecError as exc:
            raise MiningError(str(exc)) from None
        except Exception as exc:  # DDL errors from SQLAlchemy/SQLite
            raise MiningError(f"environment {checked.name!r}: the schema does not build: "
                              f"{exc}") from None
        conn = sqlite3.connect(path)
        try:
            bad = conn.execute("PRAGMA foreign_key_check").fetchall()
            if bad:
                raise MiningError(f"environment {checked.name!r}: foreign key violations "
                                  f"(table, rowid, parent, fk#): {bad[:5]}")
            ok = conn.execute("PRAGMA integrity_check").fetchone()[0]
            if ok != "ok":
                raise MiningError(f"environment {checked.name!r}: integrity check: {ok}")
            for t in checked.tables:
                n = conn.execute(f'SELECT COUNT(*) FROM "{t.name}"').fetchone()[0]
                if n != len(checked.rows.get(t.name, [])):
                    raise MiningError(f"environment {checked.name!r}: table {t.name} has {n} "
                                      f"rows, the spec {len(checked.rows.get(t.name, []))}")
        finally:
            conn.close()
    return checked


def _record(spec: EnvSpec, iteration: int, strategy: str, seconds: float,
            changes: list[str]) -> IterationStats:
    s = database_stats(spec)
    return IterationStats(iteration=iteration, tables=s["tables"], rows=s["rows"],
                          foreign_keys=s["foreign_keys"], constraints=s["constraints"],
                          null_cells=s["null_cells"], max_parent_share=s["max_parent_share"],
                          strategy=strategy, seconds=round(seconds, 4),
                          fingerprint=spec.fingerprint, changes=changes)


def _check_monotonic(before: EnvSpec, after: EnvSpec) -> None:
    a, b = before.stats(), after.stats()
    lost = [k for k in ("tables", "rows", "constraints", "foreign_keys") if b[k] < a[k]]
    if lost:
        raise MiningError("complexification must not remove content: "
                          + ", ".join(f"{k} {a[k]} -> {b[k]}" for k in lost))
    old_tables = {t.name: {c.name for c in t.columns} for t in before.tables}
    for t in after.tables:
        if t.name in old_tables and not old_tables.pop(t.name) <= {c.name for c in t.columns}:
            raise MiningError(f"complexification dropped columns of table {t.name}")
    if old_tables:
        raise MiningError(f"complexification dropped table(s) {sorted(old_tables)}")


# ============================================================================================
# LLM plumbing
# ============================================================================================


class QuestionPlan(BaseModel):
    questions: list[str] = Field(min_length=1, description="research questions, most useful first")


class RowBlock(BaseModel):
    """Rows of one table in compact form: column names once, then one value list per row."""

    table: str
    columns: list[str]
    values: list[list[str | int | float | bool | None]] = Field(default_factory=list)


class SchemaDraft(BaseModel):
    tables: list[TableSpec] = Field(min_length=1)
    rows: list[RowBlock] = Field(default_factory=list)
    notes: str = ""


class NewColumn(BaseModel):
    table: str
    column: ColumnSpec


class EnumWidening(BaseModel):
    table: str
    column: str
    add_values: list[str]


class ComplexifyChange(BaseModel):
    summary: str = ""
    new_tables: list[TableSpec] = Field(default_factory=list)
    new_columns: list[NewColumn] = Field(default_factory=list)
    widen_enums: list[EnumWidening] = Field(default_factory=list)
    new_rows: list[RowBlock] = Field(default_factory=list)


def _one_line(text: str, limit: int = 400) -> str:
    return " ".join(text.split())[:limit]


def _messages(system: str, user: str) -> list[Any]:
    from langchain_core.messages import HumanMessage, SystemMessage

    return [SystemMessage(content=system), HumanMessage(content=user)]


def _retry_message(error: str) -> Any:
    from langchain_core.messages import HumanMessage

    return HumanMessage(content=f"Your previous answer was invalid:\n{error[:1500]}\n"
                                "Return a corrected, complete JSON object only.")


def _with_retries(model: Any, schema: type[BaseModel], system: str, user: str,
                  accept: Any) -> tuple[Any, list[str]]:
    """Ask, validate with `accept(parsed) -> result`, retry with the error; (result|None, errors)."""
    messages = _messages(system, user)
    errors: list[str] = []
    for _attempt in range(LLM_ATTEMPTS):
        try:
            parsed = ask_structured(model, schema, messages)
            return accept(parsed), errors
        except ValidationError as exc:
            err = format_validation_error(exc, schema.__name__)
        except Exception as exc:  # model/transport error, JSON error, MiningError, SpecError
            err = f"{type(exc).__name__}: {exc}"
        errors.append(err)
        log.info("miner: LLM answer rejected (%s)", err.splitlines()[0][:200])
        messages = [*messages, _retry_message(err)]
    return None, errors


def _rows_from_blocks(blocks: list[RowBlock], tables: list[TableSpec]
                      ) -> dict[str, list[dict[str, Any]]]:
    by = {t.name: t for t in tables}
    out: dict[str, list[dict[str, Any]]] = {}
    for b in blocks:
        if b.table not in by:
            raise MiningError(f"rows given for unknown table {b.table!r}")
        for i, vals in enumerate(b.values):
            if len(vals) != len(b.columns):
                raise MiningError(f"rows[{b.table}][{i}]: {len(vals)} values for "
                                  f"{len(b.columns)} columns")
            out.setdefault(b.table, []).append(dict(zip(b.columns, vals, strict=True)))
    return out


def _assign_ids(spec_tables: list[TableSpec], rows: dict[str, list[dict[str, Any]]],
                existing: dict[str, list[dict[str, Any]]] | None = None) -> None:
    """Give integer primary keys to rows that lack them (after the existing maximum)."""
    for t in spec_tables:
        pk = t.primary_key
        if len(pk) != 1 or t.column(pk[0]).type != "integer":
            continue
        have = [r.get(pk[0]) for r in (existing or {}).get(t.name, []) + rows.get(t.name, [])]
        nxt = max([v for v in have if isinstance(v, int)], default=0) + 1
        for r in rows.get(t.name, []):
            if r.get(pk[0]) is None:
                r[pk[0]] = nxt
                nxt += 1




def _doc_brief(doc: SourceDocument, limit: int = 6000) -> str:
    return doc.text()[:limit]


def _evidence_brief(evidence: list[Evidence], limit: int = 60) -> str:
    lines = [f"- [{e.kind}] {e.text[:240]}" for e in evidence if e.kind != "tool"][:limit]
    return "\n".join(lines)


# ============================================================================================
# Public API
# ============================================================================================


def plan_questions(doc: SourceDocument) -> list[str]:
    """Research questions about the theme: entities, relations, lifecycles, volumes."""
    model = chat_model("miner")
    if model is not None:
        system = prompts.PLAN_SYSTEM
        user = prompts.PLAN_USER.format(name=doc.name, kind=doc.kind, brief=_doc_brief(doc))

        def accept(p: QuestionPlan) -> list[str]:
            qs = [q.strip() for q in p.questions if q and q.strip()]
            if not qs:
                raise MiningError("no questions")
            return list(dict.fromkeys(qs))[:20]

        result, _errors = _with_retries(model, QuestionPlan, system, user, accept)
        if result:
            return result
    return offline.plan_questions_offline(doc)


def gather_evidence(doc: SourceDocument, questions: list[str],
                    search: SearchFn | None = None) -> list[Evidence]:
    """Evidence from the source (tools, argument names/types/enums/formats, features,
    entities) and, when `search(query) -> list[str]` is given, from web snippets."""
    return offline.collect_evidence(doc, questions, search)


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
        source_ref=doc.reference,
        raw_descriptions=[f"{t.name}: {t.description}".strip() for t in doc.tools]
        + list(doc.features),
    )


def _provenance(doc: SourceDocument, kinds: dict[str, str], notes: list[str]) -> Provenance:
    return Provenance(created_by="miner", source_kind=doc.kind, source_ref=doc.reference,
                      created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                      notes=notes, stats={"table_kinds": kinds})


def _finish(spec: EnvSpec, iteration: int, strategy: str, seconds: float,
            changes: list[str]) -> EnvSpec:
    rec = _record(spec, iteration, strategy, seconds, changes)
    stats = dict(spec.provenance.stats)
    history = list(stats.get("iterations") or [])
    history = [h for h in history if h.get("iteration") != iteration]
    history.append(rec.model_dump())
    stats.update({k: v for k, v in database_stats(spec).items()})
    stats["iterations"] = history
    stats["iteration"] = iteration
    spec.provenance.stats = stats
    return spec


def _draft_offline(doc: SourceDocument, evidence: list[Evidence], seed: int,
                   notes: list[str]) -> EnvSpec:
    tables, rows, kinds, fixes = offline.draft_tables_and_rows(doc, evidence, seed, CLOCK_START)
    spec = EnvSpec(name=offline.identifier(doc.name), theme=_theme(doc), tables=tables,
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
            "name": offline.identifier(doc.name), "theme": _theme(doc).model_dump(),
            "tables": [t.model_dump() for t in d.tables], "rows": rows,
            "clock_start": CLOCK_START,
            "provenance": _provenance(doc, {}, []).model_dump()}, origin="LLM draft")
        spec = validate_database(spec)  # the LLM's own rows must be valid as written
        kinds = offline.table_kinds(spec)
        minimum = {t.name: _draft_minimum(t, kinds.get(t.name, "core")) for t in spec.tables}
        spec.rows = {k: v for k, v in offline.scale_rows(spec, seed, minimum).items() if v}
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
        return 100 if table.name in offline.CURATED_TABLES else 0
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
            vals = offline.fill_column(base, nc.table, nc.column, f"{seed}:{iteration}")
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
        kinds = offline.table_kinds(spec)
        new = _next_spec(spec, tables, rows, kinds, [])
        new = validate_database(new)
        # volumes: new tables get the offline generator's rows, every table grows a little
        kinds = offline.table_kinds(new)
        minimum = {t.name: max(len(new.rows.get(t.name, [])) + 2,
                               int(len(new.rows.get(t.name, [])) * 1.3))
                   if kinds.get(t.name) not in ("reference", "lookup") else 0
                   for t in new.tables}
        for nt in ch.new_tables:
            minimum[nt.name] = max(minimum.get(nt.name, 0), 15)
        new.rows = {k: v for k, v in offline.scale_rows(new, f"{seed}:{iteration}",
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
    res = offline.complexify_offline(spec, iteration, seed, doc)
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


def summarize_evidence(evidence: list[Evidence]) -> dict[str, Any]:
    by_kind: dict[str, int] = {}
    for e in evidence:
        by_kind[e.kind] = by_kind.get(e.kind, 0) + 1
    answered: dict[str, int] = {}
    for e in evidence:
        if e.question:
            answered[e.question] = answered.get(e.question, 0) + 1
    return {"total": len(evidence), "by_kind": by_kind,
            "questions_with_evidence": len(answered),
            "enums": sorted({f"{e.data['tool']}.{e.data['argument']}" for e in evidence
                             if e.kind == "argument" and e.data.get("enum")}),
            "formats": sorted({str(e.data["format"]) for e in evidence
                               if e.kind == "argument" and e.data.get("format")})}


class SemanticRejection(MiningError):
    """A database whose rows contradict their source and cannot be repaired."""


def semantic_gate(spec: EnvSpec, doc: SourceDocument | None, label: str, drop: bool = False
                  ) -> tuple[EnvSpec, list[str]]:
    """Check a mined database's meaning (`semantics.check_semantics`, the cross-table
    invariants of its schema included, declared in ``provenance.stats["invariants"]``)
    against what the source declares; repair what can be repaired (returned notes say what);
    with `drop`, columns whose violations remain are dropped (a note each, also in
    ``provenance.stats["schema_repairs"]``); raise SemanticRejection naming what remains."""
    hints = source_hints(doc, spec) if doc is not None else \
        dict(spec.provenance.stats.get("field_hints") or {})
    spec.provenance.stats = {**spec.provenance.stats, "field_hints": hints,
                             "invariants": semantics.derive_invariants(spec.tables)}
    if not semantics.check_semantics(spec, hints):
        return spec, []
    fixed, notes, left = semantics.repair_semantics(spec, hints)
    if left and drop:
        fixed, dropped = _drop_inconsistent(fixed, left)
        notes.extend(dropped)
        if dropped:
            fixed.provenance.stats = {
                **fixed.provenance.stats,
                "schema_repairs": [*(fixed.provenance.stats.get("schema_repairs") or []),
                                   *dropped],
                "invariants": semantics.derive_invariants(fixed.tables)}
            fixed, more, left = semantics.repair_semantics(fixed, hints)
            notes.extend(more)
    if left:
        counts = {k: n for k, n in semantics.summarize(left).items() if n}
        raise SemanticRejection(f"{label}: {len(left)} semantic violation(s) {counts} remain "
                                f"after repair, e.g. {'; '.join(str(v) for v in left[:3])}")
    fixed = validate_database(fixed)
    return fixed, [f"{label}: {n}" for n in notes]


def _drop_inconsistent(spec: EnvSpec, left: list[semantics.Violation]
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
    stats["semantic_violations"] = semantics.summarize(semantics.check_semantics(spec))
    return spec


def check_iterations(iterations: int) -> int:
    if not isinstance(iterations, int) or not 0 <= iterations <= MAX_ITERATIONS:
        raise MiningError(f"iterations must be between 0 and {MAX_ITERATIONS}, got "
                          f"{iterations!r}")
    return iterations


def _spread(items: list[Any], limit: int) -> list[Any]:
    """At most `limit` items, evenly spread over the list (first and last kept)."""
    if len(items) <= limit:
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def bounded_document(doc: SourceDocument) -> SourceDocument:
    """The part of a source the miner drafts from: at most MAX_MINED_TOOLS tools and
    MAX_MINED_FEATURES features, noted in the document's metadata when cut."""
    if len(doc.tools) <= MAX_MINED_TOOLS and len(doc.features) <= MAX_MINED_FEATURES:
        return doc
    meta = {**doc.metadata, "mined_tools": f"{min(len(doc.tools), MAX_MINED_TOOLS)} of "
            f"{len(doc.tools)} (an even spread)"}
    return doc.model_copy(update={"tools": _spread(doc.tools, MAX_MINED_TOOLS),
                                  "features": _spread(doc.features, MAX_MINED_FEATURES),
                                  "metadata": meta})


ProgressFn = Callable[[IterationStats], None]


def mine_theme(doc: SourceDocument, iterations: int = 3, seed: int = 0,
               search: SearchFn | None = None, progress: ProgressFn | None = None
               ) -> MinedTheme:
    """Plan, gather, draft and complexify `iterations` (0..MAX_ITERATIONS) times; every step
    validated. `progress` hears about the draft (iteration 0) and each iteration as it ends."""
    check_iterations(iterations)
    t0 = time.perf_counter()
    doc = bounded_document(doc)
    questions = plan_questions(doc)
    evidence = gather_evidence(doc, questions, search)
    spec = draft_database(doc, evidence, seed)
    if progress:
        progress(IterationStats.model_validate(spec.provenance.stats["iterations"][-1]))
    for i in range(1, iterations + 1):
        spec = complexify(spec, i, seed, doc)
        if progress:
            progress(IterationStats.model_validate(spec.provenance.stats["iterations"][-1]))
    spec = annotate_fidelity(doc, spec)
    history = [IterationStats.model_validate(h) for h in spec.provenance.stats["iterations"]]
    return MinedTheme(spec=spec, iterations=history, questions=questions,
                      evidence_summary=summarize_evidence(evidence), evidence=evidence,
                      seconds=round(time.perf_counter() - t0, 3))
