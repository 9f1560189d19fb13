"""Markdown product requirement documents (PRDs) as mining sources.

What is taken from the document (deterministic, no LLM):

* title: the first H1 (else a front-matter ``title``, else the first heading, else the file name);
* description: the first prose paragraph (``Status: Draft``-style metadata lines are skipped);
* features: top-level bullets / numbered items (and "As a ..." story paragraphs and table rows)
  under headings such as Features, Requirements, Functional requirements, User stories,
  Use cases, Capabilities, Scope - but not under Non-functional requirements, Out of scope,
  Non-goals, Open questions, Future ...;
* entities: under headings such as Data model, Domain model, Entities, Data objects, Schema:
  each sub-heading is an entity whose fields come from its bullets or table; bullets such as
  ``**Book**: id, title, isbn`` or ``**Book** - fields `id`, `title```; an entity table
  (Entity | Fields); ``CREATE TABLE`` statements in code blocks. Bold/backticked capitalised
  nouns mentioned elsewhere are added as field-less hints (mentioned twice or more, or at all
  when there is no data-model section);
* tools: action-like features ("Members can renew a loan", "As a member I want to cancel a
  reservation", "Search the catalog by author") become proposed tools (``renew_loan``,
  ``cancel_reservation``, ``search_catalog``) tagged ``from-prd-feature``, with an empty
  input schema; search/view/list-like verbs are read-only.

Here: the document (title, description, the whole record). The Markdown is read into blocks by
``prd_markdown.py``, features and their tools come from ``prd_features.py``, entities from
``prd_entities.py``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from agent_world.errors import SourceError
from agent_world.mining.sources._io import name_from_path, read_text
from agent_world.mining.sources.base import EntityHint, SourceDocument
from agent_world.mining.sources.prd_entities import (
    _entities_from_sections,
    _mentioned_nouns,
    _singular,
)
from agent_world.mining.sources.prd_features import _feature_tools, _features
from agent_world.mining.sources.prd_markdown import _blocks, _inline

__all__ = ["looks_like_prd", "parse_prd", "read_prd"]

# --------------------------------------------------------------------------- document


def looks_like_prd(text: str) -> bool:
    """Markdown-ish text: a heading line or a list."""
    return bool(re.search(r"^\s{0,3}#{1,6}\s+\S", text, re.M))


def _is_meta_paragraph(text: str) -> bool:
    parts = re.split(r"\s{2,}|(?<=\S)\s(?=\*\*?[A-Z][\w ]{0,20}:)", text)
    plain = _inline(text)
    if len(plain) < 200 and re.fullmatch(r"(?:[A-Z][\w ]{0,24}:\s*[^:]{0,60}\s*)+", plain):
        return True
    return len(parts) > 1 and all(re.match(r"^\**[A-Z][\w ]{0,24}:", p.strip()) for p in parts)


def parse_prd(text: str, *, reference: str, name: str | None = None) -> SourceDocument:
    """Markdown text -> SourceDocument(kind 'prd')."""
    label = f"PRD {reference!r}"
    blocks, front = _blocks(text)
    headings = [b for b in blocks if b.kind == "heading"]
    paras = [b for b in blocks if b.kind == "para"]
    if not headings and not paras and not any(b.kind == "item" for b in blocks):
        raise SourceError(f"{label}: no Markdown content (no headings, paragraphs or lists)")

    h1 = next((b.text for b in headings if b.level == 1), "")
    title = h1 or str(front.get("title") or "") or (headings[0].text if headings else "")
    if not title:
        title = Path(reference).stem.replace("_", " ").replace("-", " ").strip()
    description = str(front.get("description") or "")
    if not description:
        for para in paras:
            plain = _inline(para.text)
            if plain and not _is_meta_paragraph(para.text):
                description = plain
                break

    features = _features(blocks)
    drafts, has_model = _entities_from_sections(blocks)
    entities = [EntityHint(name=d.name, fields=d.fields,
                           description=" ".join(filter(None, [d.description, *(
                               [f"Fields: {'; '.join(d.notes)}."] if d.notes else [])])),
                           field_specs=[d.specs[f] for f in dict.fromkeys(d.fields)
                                        if f in d.specs])
                for d in drafts]
    known = {e.name.lower() for e in entities} | {_singular(e.name).lower() for e in entities}
    for noun, count in sorted(_mentioned_nouns(blocks).items(), key=lambda kv: (-kv[1], kv[0])):
        if len(entities) >= 40:
            break
        single = _singular(noun)
        if single.lower() in known or noun.lower() in known:
            continue
        if count >= 2 or not has_model:
            entities.append(EntityHint(name=single, description="mentioned in the document"))
            known.add(single.lower())

    if not (features or entities or description):
        raise SourceError(
            f"{label}: found no description, features or entities - is this a product "
            "requirements document?"
        )
    return SourceDocument(
        name=name or name_from_path(reference),
        kind="prd",
        reference=reference,
        title=title,
        description=description,
        tools=_feature_tools(features),
        features=features,
        entities=entities,
        metadata={
            "sections": [b.text for b in headings],
            **({"front_matter": {k: str(v) for k, v in front.items()}} if front else {}),
        },
    )


def read_prd(path: str | os.PathLike[str], *, name: str | None = None) -> SourceDocument:
    """Read a Markdown PRD file."""
    text = read_text(path, "PRD")
    return parse_prd(text, reference=str(Path(path)), name=name)
