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

Where the parts live: `validation` (validation, statistics, `MiningError`), `miner_answers`
(the JSON answers asked of the LLM, with retries), `draft_step` (`draft_database`),
`complexify_step` (`complexify`), `semantic_gate` (`semantic_gate`, `annotate_fidelity`);
this module plans, gathers and runs them all (`mine_theme`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from agent_world.envs.spec import EnvSpec, Theme
from agent_world.mining import miner_prompts as prompts
from agent_world.mining.complexify_step import complexify
from agent_world.mining.draft_step import draft_database
from agent_world.mining.miner_answers import QuestionPlan, _doc_brief, _with_retries
from agent_world.mining.offline.evidence import Evidence, SearchFn, collect_evidence
from agent_world.mining.offline.questions import plan_questions_offline
from agent_world.mining.semantic_gate import annotate_fidelity
from agent_world.mining.sources.base import SourceDocument
from agent_world.mining.validation import IterationStats, MiningError
from agent_world.models import chat_model

__all__ = ["MinedTheme", "gather_evidence", "mine_theme", "plan_questions"]

# Each complexification iteration grows the database; past ~10 it adds size, not realism.
MAX_ITERATIONS = 10
# A database is drafted from at most this many of a source's tools (an even spread over the
# list): reading stays linear in the source, the database stays a size an agent can learn.
MAX_MINED_TOOLS = 100
MAX_MINED_FEATURES = 200


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
    return plan_questions_offline(doc)


def gather_evidence(doc: SourceDocument, questions: list[str],
                    search: SearchFn | None = None) -> list[Evidence]:
    """Evidence from the source (tools, argument names/types/enums/formats, features,
    entities) and, when `search(query) -> list[str]` is given, from web snippets."""
    return collect_evidence(doc, questions, search)


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
