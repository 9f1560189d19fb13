"""File reading shared by the file-based source adapters: every failure is a SourceError."""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

import yaml

from agent_world.errors import SourceError
from agent_world.mining.offline.naming import slug

MAX_FILE_BYTES = 20 * 1024 * 1024

JSON_SUFFIXES = {".json"}
YAML_SUFFIXES = {".yaml", ".yml"}
MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdown", ".mkd"}


def read_text(path: str | os.PathLike[str], what: str) -> str:
    """The file's text; SourceError naming ``what`` ("OpenAPI spec", ...) if it can't be read."""
    p = Path(path).expanduser()
    if not p.exists():
        raise SourceError(f"{what} {str(p)!r}: file not found")
    if p.is_dir():
        raise SourceError(f"{what} {str(p)!r}: is a directory, expected a file")
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SourceError(
                f"{what} {str(p)!r}: file is {size} bytes, more than the {MAX_FILE_BYTES} allowed"
            )
        data = p.read_bytes()
    except OSError as exc:
        raise SourceError(f"{what} {str(p)!r}: cannot be read ({exc.strerror or exc})") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(
            f"{what} {str(p)!r}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from exc
    if not text.strip():
        raise SourceError(f"{what} {str(p)!r}: file is empty")
    return text


def parse_structured(text: str, *, suffix: str, label: str) -> Any:
    """JSON or YAML text -> Python data. ``suffix`` picks the parser ('.json' tries JSON only,
    '.yaml'/'.yml' YAML only, anything else JSON then YAML)."""
    suffix = suffix.lower()
    if suffix in JSON_SUFFIXES or (suffix not in YAML_SUFFIXES and text.lstrip()[:1] in "{["):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            if suffix in JSON_SUFFIXES:
                raise SourceError(
                    f"{label}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
                ) from exc

    try:
        return json_safe(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SourceError(f"{label}: malformed YAML{where}: {problem}") from exc


def load_structured(path: str | os.PathLike[str], what: str) -> Any:
    """Read a JSON/YAML file (chosen by extension, sniffed otherwise)."""
    p = Path(path).expanduser()
    text = read_text(p, what)
    return parse_structured(text, suffix=p.suffix, label=f"{what} {str(p)!r}")


def name_from_path(path: str | os.PathLike[str]) -> str:
    return slug(Path(path).stem) or "source"


def json_safe(value: Any) -> Any:
    """YAML data made JSON-safe: dates/times become ISO strings, non-string keys strings
    (unquoted response codes such as ``200:`` are ints in YAML)."""
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, _dt.date | _dt.datetime | _dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value
