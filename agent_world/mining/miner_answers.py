"""The LLM path's structured answers: the JSON models the miner asks for (`QuestionPlan`,
`SchemaDraft`, `ComplexifyChange`, rows as compact `RowBlock`s), asking with retries that put
the error in the prompt (`_with_retries`), rows and integer ids from row blocks, and the
briefs of a source and its evidence that prompts quote."""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from agent_world.envs.spec import format_validation_error
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.evidence import Evidence
from agent_world.mining.sources.base import SourceDocument
from agent_world.mining.validation import MiningError
from agent_world.plain_chat import ask_structured

log = logging.getLogger(__name__)

LLM_ATTEMPTS = 3  # one answer + two retries with the error in the prompt


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
    return [SystemMessage(content=system), HumanMessage(content=user)]


def _retry_message(error: str) -> Any:
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
