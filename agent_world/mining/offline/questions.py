"""Offline research questions (`plan_questions_offline`): from a quick scan of the source's tools
and entity hints, questions about the entities, their attributes and lifecycles, relations and
cardinalities, what the writing tools change, and realistic volumes and edge cases.
"""

from __future__ import annotations

from agent_world.mining.offline.derivation import derive_model
from agent_world.mining.offline.evidence import collect_evidence
from agent_world.mining.offline.naming import plural
from agent_world.mining.offline.signatures import tool_shape
from agent_world.mining.sources.base import SourceDocument


def plan_questions_offline(doc: SourceDocument, limit: int = 16) -> list[str]:
    """Research questions from a quick scan of the source's tools and entity hints: the
    entities, each one's attributes and lifecycle, the relations and their cardinalities, what
    the writing tools change, and realistic volumes/edge cases (each kind kept under `limit`)."""
    subject = doc.title or doc.name
    m = derive_model(doc, collect_evidence(doc, []))
    core = [e for e in m.entities.values() if e.kind in ("core", "activity", "reference")]
    attrs = [f"What attributes does a {e.name.replace('_', ' ')} have, which are required, "
             f"and what types and formats do they take?" for e in core]
    states = [f"Which states or lifecycle does a {e.name.replace('_', ' ')} go through "
              f"(created, active, cancelled, expired, archived)?"
              for e in core if e.kind != "reference"]
    relations = []
    for e in m.entities.values():
        for p in dict.fromkeys(e.parents()):
            child, parent = e.name.replace("_", " "), p.replace("_", " ")
            relations.append(f"How does a {child} relate to a {parent}, and how many "
                             f"{plural(e.name).replace('_', ' ')} does a typical {parent} have?")
    writes = [f"Which records does `{t.name}` create or change, and what can make it fail?"
              for t in doc.tools if not tool_shape(t.name, t.read_only, None).read]
    first = [f"What are the core entities managed by {subject}, and which identifiers do its "
             f"tools use to refer to them?"]
    last = [f"What realistic data volumes, skew and edge cases (missing values, duplicates, "
            f"cancelled or expired records) occur in {subject}?"]
    buckets = [attrs, states, relations, writes]
    out: list[str] = []
    budget = max(0, limit - len(first) - len(last))
    while budget > 0 and any(buckets):
        for b in buckets:  # round-robin so every kind of question is asked
            if b and budget > 0:
                out.append(b.pop(0))
                budget -= 1
    return list(dict.fromkeys(first + out + last))
