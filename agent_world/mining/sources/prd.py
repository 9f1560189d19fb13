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
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from agent_world.errors import SourceError
from agent_world.mining.sources._io import name_from_path, read_text
from agent_world.mining.sources.base import (
    EntityHint,
    FieldSpec,
    SourceDocument,
    ToolDescription,
)

__all__ = ["declared_field", "feature_tool_name", "looks_like_prd", "parse_prd", "read_prd"]

# --------------------------------------------------------------------------- markdown blocks


@dataclass
class _Block:
    kind: str  # heading | para | item | table | code
    text: str = ""
    level: int = 0  # heading level; list item depth
    rows: list[list[str]] = field(default_factory=list)  # table rows (header first)
    lang: str = ""
    path: tuple[tuple[int, str], ...] = ()  # enclosing headings (level, text)
    ordered: bool = False


_COMMENT = re.compile(r"<!--.*?-->", re.S)
_MARKDOWN = MarkdownIt("commonmark").enable("table")


def _front_matter(text: str) -> tuple[str, dict[str, Any]]:
    """(text without it, the YAML front matter as a dict)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return text, {}
    for end in range(1, min(len(lines), 200)):
        if lines[end].strip() in ("---", "..."):
            front: dict[str, Any] = {}
            try:
                import yaml

                loaded = yaml.safe_load("\n".join(lines[1:end]))
                if isinstance(loaded, dict):
                    front = loaded
            except Exception:  # noqa: BLE001 - front matter is optional decoration
                front = {}
            return "\n".join(lines[end + 1:]), front
    return text, {}


def _blocks(text: str) -> tuple[list[_Block], dict[str, Any]]:
    """Markdown -> flat list of blocks, each knowing its enclosing headings (parsed by
    markdown-it-py: CommonMark plus GitHub tables)."""
    text = _COMMENT.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text, front = _front_matter(text)
    tokens = _MARKDOWN.parse(text)
    blocks: list[_Block] = []
    path: list[tuple[int, str]] = []
    lists: list[bool] = []  # open lists, ordered or not
    item: _Block | None = None  # the list item whose first paragraph is being read
    table: _Block | None = None
    row: list[str] | None = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if kind == "heading_open":
            level = int(tok.tag[1])
            title = _inline(tokens[i + 1].content)
            while path and path[-1][0] >= level:
                path.pop()
            blocks.append(_Block("heading", title, level=level, path=tuple(path)))
            path.append((level, title))
            i += 3
            continue
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists.append(kind == "ordered_list_open")
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            body = re.sub(r"^\[[ xX]\]\s+", "", "")  # filled from the first paragraph
            item = _Block("item", body, level=len(lists) - 1, path=tuple(path),
                          ordered=bool(lists and lists[-1]))
        elif kind == "inline" and item is not None and not item.text:
            item.text = re.sub(r"^\[[ xX]\]\s+", "", " ".join(tok.content.split()))
            blocks.append(item)
        elif kind == "list_item_close":
            item = None
        elif kind == "inline" and table is not None and row is not None:
            row.append(tok.content.strip())
        elif kind == "inline" and tokens[i - 1].type == "paragraph_open":
            blocks.append(_Block("para", " ".join(tok.content.split()), path=tuple(path)))
        elif kind == "table_open":
            table = _Block("table", path=tuple(path))
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close" and table is not None and row is not None:
            table.rows.append(row)
            row = None
        elif kind == "table_close" and table is not None:
            blocks.append(table)
            table = None
        elif kind in ("fence", "code_block"):
            blocks.append(_Block("code", tok.content, lang=(tok.info or "").strip().lower(),
                                 path=tuple(path)))
        i += 1
    return blocks, front


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def _inline(text: str) -> str:
    """Markdown inline markup -> plain text."""
    text = _LINK.sub(r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])[*_](?!\s)(.+?)(?<!\s)[*_](?![\w*])", r"\1", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"~~(.+?)~~", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


# --------------------------------------------------------------------------- section matching

_FEATURE_HEADING = re.compile(
    r"\b(features?|requirements?|user stor(y|ies)|stories|use cases?|capabilit(y|ies)|"
    r"functionality|functions|scope|mvp|epics?|jobs to be done|key flows?|workflows?)\b",
    re.I,
)
_NOT_FEATURE_HEADING = re.compile(
    r"non[- ]?functional|out of scope|not in scope|non[- ]?goals?|open questions?|future|"
    r"later (phases?|releases?)|risks?|assumptions?|dependencies|metrics|success criteria|kpis?|"
    r"glossary|appendix|references|timeline|milestones|acceptance criteria|data model|"
    r"domain model|entit(y|ies)|schema|personas?|changelog|revision history",
    re.I,
)
_ENTITY_HEADING = re.compile(
    r"data[- ]?model|domain[- ]?model|object model|information model|entit(y|ies)|"
    r"data (structures?|objects?|schemas?|dictionary|definitions?)|database( schema| design)?|"
    r"^(schema|tables|models|resources|core objects|core concepts|key objects)$",
    re.I,
)


def _classify(path: tuple[tuple[int, str], ...], include: re.Pattern[str]) -> bool:
    """Nearest heading decides: an excluding heading wins over an enclosing including one."""
    for _, heading in reversed(path):
        if include is _FEATURE_HEADING and _NOT_FEATURE_HEADING.search(heading):
            return False
        if include.search(heading):
            return True
    return False


def _entity_root(path: tuple[tuple[int, str], ...]) -> int | None:
    """Index in ``path`` of the nearest entity-section heading, if any."""
    for i in range(len(path) - 1, -1, -1):
        if _ENTITY_HEADING.search(path[i][1]):
            return i
    return None


# --------------------------------------------------------------------------- features

_STORY = re.compile(r"^as an?\s", re.I)


def _table_feature(header: list[str], row: list[str]) -> str:
    cells = [_inline(c) for c in row]
    lowered = [h.lower().strip() for h in header]
    if len(cells) >= 2 and lowered and lowered[0].startswith("as a"):
        article = "an" if cells[0][:1].lower() in "aeiou" else "a"
        parts = [f"As {article} {cells[0]}"]
        if len(cells) > 1 and cells[1]:
            want = cells[1]
            parts.append(want if want.lower().startswith("i ") else f"I want to {want}")
        if len(cells) > 2 and cells[2]:
            so = cells[2]
            parts.append(so if so.lower().startswith("so ") else f"so that {so}")
        return ", ".join(parts[:2]) + (f" {parts[2]}" if len(parts) > 2 else "")
    keep = [
        c
        for c, h in zip(cells, lowered + [""] * len(cells), strict=False)
        if c and h not in ("id", "#", "priority", "status", "owner", "estimate", "points")
    ]
    return " - ".join(keep)


def _features(blocks: list[_Block]) -> list[str]:
    features: list[str] = []
    parent_colon: dict[int, bool] = {}
    for block in blocks:
        if not _classify(block.path, _FEATURE_HEADING):
            continue
        if block.kind == "item":
            text = _inline(block.text)
            parent_colon[block.level] = text.endswith(":")
            if block.level == 0 or parent_colon.get(block.level - 1):
                if text and not text.endswith(":"):
                    features.append(text)
        elif block.kind == "para" and _STORY.match(_inline(block.text)):
            features.append(_inline(block.text))
        elif block.kind == "table" and len(block.rows) > 1:
            for row in block.rows[1:]:
                text = _table_feature(block.rows[0], row)
                if text:
                    features.append(text)
    return list(dict.fromkeys(features))


# --------------------------------------------------------------------------- entities

_NAME_SPLIT = re.compile(r"\s*(?::|—|–|\s-\s|\(|=|,)\s*")
_IDENT = re.compile(r"^[A-Za-z_][\w .-]{0,40}$")
_FIELD_HEADER = re.compile(r"field|attribute|column|propert|name|key", re.I)
_ENTITY_HEADER = re.compile(r"entit|table|object|model|resource|record|concept", re.I)
_FIELDS_HEADER = re.compile(r"fields|attributes|columns|properties|key fields", re.I)


def _snake(text: str) -> str:
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text.strip())
    return re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower()


def _field_name(text: str) -> str | None:
    """'`due_at` (datetime) - when it is due' -> 'due_at'; 'Due date: date' -> 'due_date'."""
    raw = text.strip()
    m = re.match(r"^\s*(?:\*\*|__)?`?([A-Za-z_][\w.-]*)`?(?:\*\*|__)?", raw)
    lead = _NAME_SPLIT.split(_inline(raw), maxsplit=1)[0].strip()
    if m and (raw.startswith("`") or raw.startswith("**") or raw.startswith("__")):
        lead = m.group(1)
    lead = lead.strip(" .*`")
    if not lead or len(lead.split()) > 4 or not _IDENT.match(lead):
        return None
    return _snake(lead) or None


def _entity_name(text: str) -> str | None:
    plain = _inline(text)
    plain = re.sub(r"^(\d+[.)]\s*)+", "", plain)
    plain = re.sub(r"^(entity|table|object|model)\s*[:\-]\s*", "", plain, flags=re.I)
    lead = _NAME_SPLIT.split(plain, maxsplit=1)[0].strip(" .`*")
    lead = re.sub(r"\s+(entity|table|object|record)$", "", lead, flags=re.I)
    if not lead or len(lead.split()) > 4 or not _IDENT.match(lead):
        return None
    return lead


def _split_fields(text: str) -> list[str]:
    """'id, title, author_id and isbn' / '`id`, `title`' -> field names."""
    ticks = re.findall(r"`([^`]+)`", text)
    if len(ticks) >= 2:
        parts = ticks
    else:
        text = re.sub(
            r"^(?:fields|attributes|columns|properties)\s*[:\-]\s*", "", _inline(text), flags=re.I
        )
        parts = re.split(r",|;|\band\b", text)
    names = [_field_name(p) for p in parts]
    return list(dict.fromkeys(n for n in names if n))


@dataclass
class _EntityDraft:
    name: str
    fields: list[str] = field(default_factory=list)
    description: str = ""
    notes: list[str] = field(default_factory=list)  # "status: one of active, suspended"
    specs: dict[str, FieldSpec] = field(default_factory=dict)

    def add_field(self, text: str) -> None:
        """A field bullet: its name, and what the document says of it (types, allowed
        values, references) as a note and as a typed declaration."""
        name = _field_name(text)
        if not name:
            return
        self.fields.append(name)
        rest = _NAME_SPLIT.split(_inline(text), maxsplit=1)
        note = rest[1].strip(" .:-—–*`_") if len(rest) > 1 else ""
        if note:
            self.notes.append(f"{name}: {note}")
        self.specs[name] = declared_field(name, note)

    def add_row(self, name: str, type_text: str, note: str) -> None:
        """A row of a field table (Field | Type | Notes)."""
        self.fields.append(name)
        if note or type_text:
            self.notes.append(f"{name}: {', '.join(p for p in (type_text, note) if p)}")
        self.specs[name] = declared_field(name, note, type_text)


# what a PRD says of a field: "text, unique", "one of active, suspended", "references Branch",
# "integer, 0 to 2", "datetime, empty while on loan"
_TYPE_WORDS: dict[str, tuple[str, str | None]] = {
    "integer": ("integer", None), "int": ("integer", None), "count": ("integer", None),
    "number": ("number", None), "decimal": ("number", None), "float": ("number", None),
    "real": ("number", None), "money": ("number", None), "amount": ("number", None),
    "currency amount": ("number", None), "numeric": ("number", None),
    "text": ("string", None), "string": ("string", None), "varchar": ("string", None),
    "char": ("string", None), "enum": ("string", None),
    "boolean": ("boolean", None), "bool": ("boolean", None), "flag": ("boolean", None),
    "yes/no": ("boolean", None),
    "date": ("string", "date"), "datetime": ("string", "date-time"),
    "date-time": ("string", "date-time"), "timestamp": ("string", "date-time"),
    "date and time": ("string", "date-time"), "time": ("string", "time"),
    "email": ("string", "email"), "e-mail": ("string", "email"), "url": ("string", "uri"),
    "uri": ("string", "uri"), "link": ("string", "uri"), "uuid": ("string", "uuid"),
    "json": ("object", None), "object": ("object", None), "list": ("array", None),
    "array": ("array", None),
}
_REF = re.compile(r"\b(?:references?|refers to|foreign key to|fk to|points to|→|->)\s+"
                  r"`?([A-Z][A-Za-z0-9_]*|[a-z][a-z0-9_]*)`?", re.I)
_RANGE = re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:to|-|–|\.\.)\s*(-?\d+(?:\.\d+)?)")
_IDENT_WORD = re.compile(r"^[a-z][a-z0-9_]*$")
_KEYWORDS = {"unique", "optional", "nullable", "required", "mandatory", "primary key",
             "not null", "indexed", "pk"}


def declared_field(name: str, note: str, type_text: str = "") -> FieldSpec:
    """A field declaration from its PRD note (and type cell)."""
    text = _inline(note)
    low = text.lower()
    jtype = fmt = None
    for part in [type_text, *re.split(r"[,;]", text)]:
        key = _inline(part).strip().lower().rstrip(".")
        if key in _TYPE_WORDS:
            jtype, fmt = _TYPE_WORDS[key]
            break
    ref = _REF.search(text)
    references = ref.group(1) if ref else None
    enum = None
    m = re.search(r"\bone of[:\s]+(.+?)(?:[.;(]|$)", text, re.I)
    if m:
        candidates = [p.strip(" `'\"") for p in re.split(r",|\bor\b", m.group(1))]
    else:
        candidates = [p.strip(" `'\"") for p in text.split(",")
                      if p.strip().lower() not in _KEYWORDS and p.strip().lower() not in
                      _TYPE_WORDS]
    candidates = [c for c in candidates if c]
    if len(candidates) >= 2 and all(_IDENT_WORD.match(c) for c in candidates) and not references:
        enum = list(dict.fromkeys(candidates))
        jtype = jtype or "string"
    minimum = maximum = None
    r = _RANGE.search(low)
    if r and jtype in ("integer", "number", None) and not references:
        minimum, maximum = float(r.group(1)), float(r.group(2))
        if jtype == "integer" or (jtype is None and "." not in r.group(0)):
            minimum, maximum = int(minimum), int(maximum)
    if references and jtype is None:
        jtype = "integer"
    return FieldSpec(
        name=name, type=jtype, format=fmt, enum=enum, references=references,
        unique=bool(re.search(r"\bunique\b", low)) and "primary key" not in low,
        required=bool(re.search(r"\b(required|mandatory|not null)\b", low))
        and not re.search(r"\b(optional|nullable|empty)\b", low),
        minimum=minimum, maximum=maximum, description=text[:200])


_CREATE_TABLE = re.compile(
    r"create\s+table\s+(?:if\s+not\s+exists\s+)?[`\"\[]?(\w+)[`\"\]]?\s*\((.*?)\)\s*;",
    re.I | re.S,
)
_SQL_NOT_COLUMN = re.compile(r"^(primary|foreign|unique|constraint|check|key|index)\b", re.I)


def _sql_entities(code: str) -> list[_EntityDraft]:
    drafts = []
    for m in _CREATE_TABLE.finditer(code):
        cols = []
        depth, cur = 0, ""
        for ch in m.group(2):  # split on top-level commas only
            depth += ch == "("
            depth -= ch == ")"
            if ch == "," and depth == 0:
                cols.append(cur)
                cur = ""
            else:
                cur += ch
        cols.append(cur)
        fields = []
        for col in cols:
            col = col.strip()
            if col and not _SQL_NOT_COLUMN.match(col):
                fields.append(col.split()[0].strip('`"[]'))
        drafts.append(_EntityDraft(m.group(1), fields))
    return drafts


def _cell(row: list[str], k: int | None) -> str:
    return _inline(row[k]) if k is not None and k < len(row) else ""


def _entities_from_sections(blocks: list[_Block]) -> tuple[list[_EntityDraft], bool]:
    drafts: dict[str, _EntityDraft] = {}
    found_section = False

    def draft(name: str) -> _EntityDraft:
        key = name.lower()
        if key not in drafts:
            drafts[key] = _EntityDraft(name)
        return drafts[key]

    current_item_entity: _EntityDraft | None = None
    for block in blocks:
        if block.kind == "heading":
            if _ENTITY_HEADING.search(block.text):
                found_section = True
            root = _entity_root(block.path)
            if (
                root is not None
                and root == len(block.path) - 1
                and not _ENTITY_HEADING.search(block.text)
            ):
                name = _entity_name(block.text)  # a sub-heading directly under "Data model"
                if name:
                    draft(name)
            current_item_entity = None
            continue
        root = _entity_root(block.path)
        if root is None:
            continue
        found_section = True
        sub = block.path[root + 1] if len(block.path) > root + 1 else None
        owner = drafts.get(_entity_name(sub[1]).lower()) if sub and _entity_name(sub[1]) else None

        if owner is not None:  # inside an entity's own sub-section
            if block.kind == "item" and block.level == 0:
                text = _inline(block.text)
                if _FIELDS_HEADER.match(text) and (":" in text) and len(_split_fields(text)) > 1:
                    owner.fields += _split_fields(text.split(":", 1)[1])
                else:
                    owner.add_field(block.text)
            elif block.kind == "item" and block.level > 0:
                owner.add_field(block.text)
            elif block.kind == "table" and len(block.rows) > 1:
                header = [h.lower() for h in block.rows[0]]
                col = next((i for i, h in enumerate(header) if _FIELD_HEADER.search(h)), 0)
                tcol = next((i for i, h in enumerate(header) if re.search(r"\btype\b", h)),
                            None)
                ncol = next((i for i, h in enumerate(header) if re.search(
                    r"note|descr|constraint|detail|comment|values|rule", h)), None)
                for row in block.rows[1:]:
                    if col < len(row):
                        name = _field_name(row[col])
                        if name:
                            owner.add_row(name, _cell(row, tcol), _cell(row, ncol))
            elif block.kind == "para":
                text = _inline(block.text)
                m = re.match(r"^(?:fields|attributes|columns|properties)\s*:\s*(.+)$", text, re.I)
                if m:
                    owner.fields += _split_fields(m.group(1))
                elif not owner.description:
                    owner.description = text
            elif block.kind == "code":
                for d in _sql_entities(block.text):
                    draft(d.name).fields += d.fields
            continue

        # directly in the data-model section: entity bullets, an entity table, SQL
        if block.kind == "item" and block.level == 0:
            raw = block.text
            name = _entity_name(raw)
            current_item_entity = draft(name) if name else None
            if current_item_entity is not None:
                plain = _inline(raw)
                rest = _NAME_SPLIT.split(plain, maxsplit=1)
                rest_text = rest[1] if len(rest) > 1 else ""
                raw_rest = raw.split(name, 1)[1] if name in raw else raw
                m = re.search(
                    r"(?:fields|attributes|columns|properties)\s*[:\-]?\s*(.+)$", raw_rest, re.I
                )
                if m:
                    current_item_entity.fields += _split_fields(m.group(1))
                    desc = raw_rest[: m.start()]
                else:
                    ticks = re.findall(r"`([^`]+)`", raw_rest)
                    trimmed = raw_rest.strip(" *`_")
                    paren = re.match(r"^\(([^)]*)\)", trimmed)
                    if len(ticks) >= 2:
                        current_item_entity.fields += _split_fields(raw_rest)
                        desc = ""
                    elif paren:
                        current_item_entity.fields += _split_fields(paren.group(1))
                        desc = trimmed[paren.end() :]
                    elif "," in rest_text and all(
                        len(p.split()) <= 3 for p in rest_text.split(",")
                    ):
                        current_item_entity.fields += _split_fields(rest_text)
                        desc = ""
                    else:
                        desc = rest_text
                desc = _inline(desc.strip(" *`_")).strip(" .:-—–*`_")
                if desc and not current_item_entity.description:
                    current_item_entity.description = desc
        elif block.kind == "item" and block.level > 0 and current_item_entity is not None:
            text = _inline(block.text)
            if _FIELDS_HEADER.match(text) and ":" in text:
                current_item_entity.fields += _split_fields(text.split(":", 1)[1])
            else:
                current_item_entity.add_field(block.text)
        elif block.kind == "table" and len(block.rows) > 1:
            header = block.rows[0]
            ent_col = next((i for i, h in enumerate(header) if _ENTITY_HEADER.search(h)), None)
            fld_col = next((i for i, h in enumerate(header) if _FIELDS_HEADER.search(h)), None)
            desc_col = next(
                (i for i, h in enumerate(header) if re.search(r"descr|purpose|notes?", h, re.I)),
                None,
            )
            if ent_col is None and fld_col is not None:
                ent_col = 0 if fld_col != 0 else None
            if ent_col is not None:
                for row in block.rows[1:]:
                    if ent_col >= len(row):
                        continue
                    name = _entity_name(row[ent_col])
                    if not name:
                        continue
                    d = draft(name)
                    if fld_col is not None and fld_col < len(row):
                        d.fields += _split_fields(row[fld_col])
                    if desc_col is not None and desc_col < len(row) and not d.description:
                        d.description = _inline(row[desc_col])
        elif block.kind == "code":
            for d in _sql_entities(block.text):
                draft(d.name).fields += d.fields
        elif block.kind == "para":
            current_item_entity = None
    for d in drafts.values():
        d.fields = list(dict.fromkeys(d.fields))
    return list(drafts.values()), found_section


_NOUN = re.compile(r"^[A-Z][a-z]+(?:[A-Z][a-z]+)*(?: [A-Z][a-z]+){0,2}$")
_NOT_NOUNS = frozenset(
    """
    Note Notes Important Warning Tip Example Goal Goals Status Draft Owner Author Authors
    Version Date Priority High Medium Low Must Should Could Yes No None True False Problem
    Solution Summary Overview Background Context Why What How When Who Done Todo
    """.split()
)


def _mentioned_nouns(blocks: list[_Block]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for block in blocks:
        if block.kind in ("heading", "code"):
            continue
        texts = [block.text] if block.kind != "table" else [c for r in block.rows for c in r]
        for text in texts:
            for m in re.finditer(r"\*\*([^*]+)\*\*|__([^_]+)__|`([^`]+)`", text):
                word = (m.group(1) or m.group(2) or m.group(3) or "").strip().rstrip(":.")
                if _NOUN.match(word) and word not in _NOT_NOUNS:
                    counts[word] = counts.get(word, 0) + 1
    return counts


def _singular(word: str) -> str:
    lw = word.lower()
    if lw.endswith("ies") and len(lw) > 4:
        return word[:-3] + "y"
    if lw.endswith("ses") or lw.endswith("xes"):
        return word[:-2]
    if lw.endswith("s") and not lw.endswith("ss") and len(lw) > 3:
        return word[:-1]
    return word


# --------------------------------------------------------------------------- feature -> tool

_ACTION_VERBS = frozenset(
    """
    add approve archive assign block book borrow browse buy cancel change check check_in
    check_out claim close comment compare confirm create deactivate delete download edit export
    extend filter find flag follow generate import invite issue join leave list log_in look_up
    mark merge message open order pay place print publish purchase rate reactivate redeem refund
    register reject remove renew reopen report request reschedule reserve resolve restore return
    review scan schedule search see sell send share sign_up sort submit subscribe suspend track
    transfer unsubscribe update upload view void waive withdraw upgrade downgrade tag rename
    split configure enable disable invoice charge refer accept decline retire move
    """.split()
)
_READ_ONLY_VERBS = frozenset(
    """
    browse check compare download export filter find list look_up print search see sort track
    view
    """.split()
)
_PARTICLES = {"in", "out", "up", "off", "on"}
_PHRASAL = {"check", "sign", "log", "look", "opt"}
_DETERMINERS = frozenset(
    """
    a an the their his her its my our your any all one some each every new existing multiple
    several other own this that these those current upcoming past single
    """.split()
)
_STOP = frozenset(
    """
    for to by with from in on at and or so that when if via using without within before after
    until as into onto per which who while through across online instantly quickly easily
    directly automatically again later anytime now here there it them themselves up out is are
    be they about between over under than even only also but not no once where whose of
    """.split()
)
_HEAD_OF = {"list", "lists", "history", "details", "status", "summary", "number", "count"}
_MODALS = frozenset("can could may shall will to".split())  # "... can renew", "want to renew"
_LETS = frozenset("let lets".split())  # "lets members renew"
_ADVERBS = frozenset("also easily quickly instantly directly still".split())


def _action_candidates(text: str) -> list[str]:
    """Texts that may start with the action verb: after a modal / "to" / "lets X", then the
    whole text (an imperative feature: "Search the catalog by author")."""
    words = text.split()
    out = []
    for i, word in enumerate(words):
        w = word.lower().strip(",;:")
        starts = [i + 1] if w in _MODALS else [i + 2, i + 3] if w in _LETS else []
        for j in starts:
            while j < len(words) and words[j].lower() in _ADVERBS:
                j += 1
            if j < len(words):
                out.append(" ".join(words[j:]))
    out.append(text)
    return out


def feature_tool_name(feature: str) -> tuple[str, bool] | None:
    """'Members can renew a loan online' -> ('renew_loan', False); None if not action-like."""
    text = _inline(feature)
    text = re.sub(r"^\s*(?:[A-Z]{1,5}-?\d+[.:)]?|\d+[.)])\s*", "", text)  # FR-1: / 1.
    for cand in _action_candidates(text):
        words = re.findall(r"[A-Za-z][A-Za-z'-]*", cand.lower())
        if not words:
            continue
        verb, rest = words[0], words[1:]
        if verb in _PHRASAL and rest and rest[0] in _PARTICLES:
            verb, rest = f"{verb}_{rest[0]}", rest[1:]
        if verb not in _ACTION_VERBS:
            continue
        if verb == "check" and rest and rest[0] in ("if", "whether"):
            continue
        obj: list[str] = []
        suffix = ""
        i = 0
        while i < len(rest) and rest[i] in _DETERMINERS:
            i += 1
        if i + 1 < len(rest) and rest[i] in _HEAD_OF and rest[i + 1] == "of":
            suffix = "" if rest[i].startswith("list") else rest[i]
            i += 2
            while i < len(rest) and rest[i] in _DETERMINERS:
                i += 1
        if rest[i : i + 2] == ["up", "to"]:  # "purchase up to 8 tickets"
            i += 2
        # a participle before the noun ("a returned copy") is not part of the tool name
        if i + 1 < len(rest) and rest[i].endswith("ed"):
            if rest[i + 1] in ("or", "and") and i + 3 < len(rest):
                i += 3  # "a damaged or lost copy"
            elif rest[i + 1] not in _STOP:
                i += 1
        while i < len(rest) and len(obj) < 2:
            word = rest[i].strip("'-")
            if word in _STOP or word in _DETERMINERS or not word:
                break
            obj.append(word.replace("'s", "").replace("-", "_"))
            i += 1
        if not obj:
            continue
        name = "_".join([verb, *obj] + ([suffix] if suffix else []))
        name = re.sub(r"[^a-z0-9_]+", "_", name).strip("_")
        return name, verb in _READ_ONLY_VERBS
    return None


def _feature_tools(features: list[str]) -> list[ToolDescription]:
    tools: dict[str, ToolDescription] = {}
    for feature in features:
        hit = feature_tool_name(feature)
        if hit is None:
            continue
        name, read_only = hit
        if name not in tools:
            tools[name] = ToolDescription(
                name=name, description=feature, read_only=read_only, tags=["from-prd-feature"]
            )
    return list(tools.values())


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
