"""PRD entities: data-model sections (entity sub-headings, bullets, tables, ``CREATE TABLE``)
and the fields they declare, plus capitalised nouns the document stresses elsewhere."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent_world.mining.sources.base import FieldSpec
from agent_world.mining.sources.prd_markdown import _Block, _inline

__all__ = ["declared_field"]

# --------------------------------------------------------------------------- section matching

_ENTITY_HEADING = re.compile(
    r"data[- ]?model|domain[- ]?model|object model|information model|entit(y|ies)|"
    r"data (structures?|objects?|schemas?|dictionary|definitions?)|database( schema| design)?|"
    r"^(schema|tables|models|resources|core objects|core concepts|key objects)$",
    re.I,
)


def _entity_root(path: tuple[tuple[int, str], ...]) -> int | None:
    """Index in ``path`` of the nearest entity-section heading, if any."""
    for i in range(len(path) - 1, -1, -1):
        if _ENTITY_HEADING.search(path[i][1]):
            return i
    return None


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
        # a reference is required unless said otherwise: a hold names its member
        required=bool(re.search(r"\b(required|mandatory|not null)\b", low) or references)
        and not re.search(r"\b(optional|nullable|empty|if any|none)\b", low),
        minimum=minimum, maximum=maximum, description=_prose(text, enum)[:200])


def _prose(text: str, enum: list[str] | None) -> str:
    """What a note says beyond the type, constraints and allowed values the declaration
    already holds ("text, unique, printed on the library card" -> "printed on the library
    card"): a tool argument's description is these words, not "text, unique"."""
    if enum:
        text = re.sub(r"\bone of[:\s]+(.+?)(?=[.;(]|$)", "", text, flags=re.I)
    parts = [p.strip(" .") for p in re.split(r"[,;]", text)]
    return ", ".join(p for p in parts if p and p.lower() not in _TYPE_WORDS
                     and p.lower() not in _KEYWORDS and p not in (enum or []))


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
