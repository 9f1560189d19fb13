"""The sections of a record's Markdown body, and the items each lists: what a task may ask of a
page a docs server fetches ("what is the second step of the Installation guide?") instead of
its id or title. A docs page lists its prerequisites, steps and an example command; a document
its steps, decisions and open questions (`agent_world.mining.offline.record_bodies`).

Only sections whose items each state one thing are asked: an owner line ('Ann Lee (design)')
or a dated milestone reads as two values, an error line ('`401`: the key is missing') as a
sentence whose copula an answer check would split."""

from __future__ import annotations

import re
from typing import Any

ASKED_SECTIONS = ("Steps", "Prerequisites", "Example", "Decisions", "Open questions")
_HEADING = re.compile(r"^##\s+(.+?)\s*$")
_ITEM = re.compile(r"^(?:[-*]|\d+\.)\s+(.+)$")


def body_sections(text: Any) -> dict[str, list[str]]:
    """The items under each '## ' heading of a Markdown body, in order: list items without
    their markers, the lines of a fenced block (an example's command); {} for any other
    value."""
    if not isinstance(text, str) or "\n## " not in text:
        return {}
    out: dict[str, list[str]] = {}
    current: str | None = None
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        heading = None if fenced else _HEADING.match(line)
        if heading:
            current = heading.group(1)
            out[current] = []
        elif current is not None and line.strip():
            item = line.strip() if fenced else (m.group(1).strip() if (
                m := _ITEM.match(line.strip())) else None)
            if item:
                out[current].append(item)
    return {k: v for k, v in out.items() if v}


def section_item(text: Any, section: str, nth: int) -> str | None:
    """Item `nth` (from 0) of a body's section; None when the body has no such item."""
    items = body_sections(text).get(section, [])
    return items[nth] if 0 <= nth < len(items) else None


def askable_sections(record: dict[str, Any], skip: set[str]) -> list[tuple[str, str, int]]:
    """(field, section, item index) a question may ask of a record's bodies: the first three
    items of each asked section (an example: its command), fields in `skip` left out."""
    out = []
    for field, value in record.items():
        if field in skip:
            continue
        for section, items in body_sections(value).items():
            if section in ASKED_SECTIONS:
                out += [(field, section, n) for n in range(1 if section == "Example"
                                                           else min(len(items), 3))]
    return out


__all__ = ["ASKED_SECTIONS", "askable_sections", "body_sections", "section_item"]
