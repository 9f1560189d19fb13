"""An object a JSON schema describes, for a JSON column mined from an object argument: Excel's
format_range(style) holds {"bold": true, "font_color": "#3A7F21"}, not {} — the seed rows, the
tool tests drawn from them and the tasks drawn from those then say something a user of the
service would send. Only what the schema gives is filled: enums, consts, booleans, bounded
numbers, formats and the examples descriptions give (`described_values`); a string it says
nothing about is left out unless required (then a value named after the field)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from agent_world.mining.offline.described_values import described_value

Fill = Callable[[str], Any]
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_MAX_DEPTH = 3
_OPTIONAL = 2  # optional fields filled beside the required ones
_TYPE_LIMIT = 2 ** 31  # an int32's, beyond it a JavaScript number's safe integers


def _type(schema: dict[str, Any]) -> str | None:
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if t is None:
        for key in ("anyOf", "oneOf"):
            branch = next((b for b in schema.get(key) or [] if isinstance(b, dict)
                           and b.get("type") not in (None, "null")), None)
            if branch is not None:
                return _type(branch)
        if schema.get("properties"):
            return "object"
    return t if isinstance(t, str) else None


def _branch(schema: dict[str, Any]) -> dict[str, Any]:
    for key in ("anyOf", "oneOf"):
        branch = next((b for b in schema.get(key) or [] if isinstance(b, dict)
                       and b.get("type") not in (None, "null")), None)
        if branch is not None:
            return {**branch, **{k: v for k, v in schema.items() if k != key}}
    return schema


_SHAPE_KEYS = ("type", "enum", "const", "format", "minimum", "maximum", "default", "required")


def schema_shape(schema: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """The part of an object argument's schema that says what a value of it holds (kept with
    the column's hints; descriptions cut to what an example needs)."""
    out: dict[str, Any] = {k: schema[k] for k in _SHAPE_KEYS if k in schema}
    if schema.get("description"):
        out["description"] = str(schema["description"])[:160]
    for key in ("anyOf", "oneOf"):
        branch = next((b for b in schema.get(key) or [] if isinstance(b, dict)
                       and b.get("type") not in (None, "null")), None)
        if branch is not None and "type" not in out:
            out.update(schema_shape(branch, depth))
    if depth < 3 and isinstance(schema.get("properties"), dict):
        out["properties"] = {k: schema_shape(v, depth + 1) for k, v in schema["properties"].items()
                             if isinstance(v, dict)}
    if depth < 3 and isinstance(schema.get("items"), dict):
        out["items"] = schema_shape(schema["items"], depth + 1)
    return out


def schema_example(schema: dict[str, Any], rng: random.Random, name: str = "value",
                   depth: int = 0, fill: Fill | None = None) -> Any:
    """A value `schema` allows, or None when it says too little to write one. `fill(key)`:
    a value of the kind a required field's name says, where its schema says nothing more."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    schema = _branch(schema)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("default"), str | int | float | bool) and rng.random() < 0.3:
        return schema["default"]
    if schema.get("enum"):
        return rng.choice([e for e in schema["enum"] if e is not None] or [None])
    kind = _type(schema)
    desc = str(schema.get("description") or "")
    if kind == "object":
        return _object(schema, rng, depth, fill)
    if kind == "array":
        item = schema_example(schema.get("items") or {}, rng, name, depth + 1, fill)
        return [] if item is None else [item]
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", 1))
        if abs(lo) >= _TYPE_LIMIT:  # a bound at the type's own limit says nothing of the
            lo = 0  # field (Plane's counts were -9007199254740987 issues)
        hi = schema.get("maximum", schema.get("exclusiveMaximum", max(lo, 0) + 20))
        if abs(hi) >= _TYPE_LIMIT:
            hi = max(lo, 0) + 20
        described = described_value(desc, rng, integer=True)
        if isinstance(described, int) and lo <= described <= hi:
            return described
        if kind == "integer" or rng.random() < 0.5:
            return rng.randint(int(lo), int(max(lo, min(hi, lo + 100))))
        return round(rng.uniform(lo, min(hi, lo + 100)), 1)
    if kind == "string" or kind is None:
        fmt = schema.get("format")
        described = described_value(desc, rng)
        if isinstance(described, str) and _DATE.match(described):
            # an example date redrawn digit by digit is no date ('4038-01-33'): a real one
            fmt = "date" if len(described) == 10 else "date-time"
        if fmt in ("date", "date-time"):
            day = date(2026, 1, 5) + timedelta(days=rng.randint(0, 300))
            return day.isoformat() if fmt == "date" else f"{day.isoformat()}T09:30:00"
        return described if isinstance(described, str) else None
    return None


def _object(schema: dict[str, Any], rng: random.Random, depth: int, fill: Fill | None
            ) -> dict[str, Any]:
    props = {k: v for k, v in (schema.get("properties") or {}).items() if isinstance(v, dict)}
    required = [k for k in schema.get("required") or [] if k in props]
    optional = [k for k in props if k not in required]
    out: dict[str, Any] = {}
    for key in required:
        value = schema_example(props[key], rng, key, depth + 1, fill)
        if value is None and fill is not None:
            # Plane's labels were {"color": "color 3", "name": "name 9"}, and tasks counted
            # "labels whose color is 'color 3'"
            value = fill(key)
        out[key] = value if value is not None else f"{key.replace('_', ' ')} {rng.randint(1, 9)}"
    for key in rng.sample(optional, len(optional)):  # the first few it can fill
        if len(out) >= len(required) + _OPTIONAL:
            break
        value = schema_example(props[key], rng, key, depth + 1, fill)
        if value is not None:
            out[key] = value
    return out


__all__ = ["schema_example", "schema_shape"]
