"""PRD Markdown as a flat list of blocks (headings, paragraphs, list items, tables, code), each
knowing its enclosing headings, and inline markup reduced to plain text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from markdown_it import MarkdownIt


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
