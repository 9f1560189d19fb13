"""The value rules: enum, type (a column keeps the type the source declared:
`declared_type_ok`), format (email, uri, date, date-time, uuid, time, ipv4, pattern, length),
range and unique, checked by `_check_values`."""

from __future__ import annotations

import json
import re
import uuid as _uuid
from typing import Any
from urllib.parse import urlparse

from agent_world.envs.spec import EnvSpec
from agent_world.mining.semantics.columns import _as_time
from agent_world.mining.semantics.violations import Violation

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$")
_IPV4 = re.compile(r"^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$")


def _type_ok(ctype: str, v: Any) -> bool:
    if ctype == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if ctype == "real":
        return isinstance(v, int | float) and not isinstance(v, bool)
    if ctype == "boolean":
        return isinstance(v, bool) or v in (0, 1)
    if ctype == "text":
        return isinstance(v, str)
    if ctype == "date":
        return isinstance(v, str) and len(v) == 10 and _as_time(v) is not None
    if ctype == "datetime":
        return isinstance(v, str) and len(v) > 10 and _as_time(v) is not None
    return True  # json


# declared JSON types -> the column types that keep them
_KEEPS = {"boolean": {"boolean"}, "integer": {"integer"}, "number": {"real", "integer"},
          "string": {"text", "date", "datetime"}, "array": {"json", "text"},
          "object": {"json"}}
_FORMAT_TYPES = {"date": {"date"}, "date-time": {"datetime"}}


def declared_type_ok(hint: dict[str, Any], ctype: str) -> bool:
    """Whether a column of type ``ctype`` keeps the type (and date format) the source declared."""
    fmt = hint.get("format")
    if fmt in _FORMAT_TYPES:
        return ctype in _FORMAT_TYPES[fmt]
    jt = hint.get("type")
    return jt not in _KEEPS or ctype in _KEEPS[jt]


def _format_ok(fmt: str, v: Any) -> bool:
    if not isinstance(v, str):
        return True  # the type rule reports it
    if fmt == "email":
        return bool(_EMAIL.match(v))
    if fmt in ("uri", "url", "uri-reference", "iri"):
        p = urlparse(v)
        return bool(p.scheme and (p.netloc or p.scheme in ("mailto", "urn", "file")))
    if fmt == "date":
        return len(v) == 10 and _as_time(v) is not None
    if fmt == "date-time":
        return len(v) > 10 and _as_time(v) is not None
    if fmt == "uuid":
        try:
            _uuid.UUID(v)
        except ValueError:
            return False
        return True
    if fmt == "time":
        return bool(_HHMM.match(v))
    if fmt == "ipv4":
        return bool(_IPV4.match(v))
    return True


def _check_values(spec: EnvSpec, hints: dict[str, dict[str, dict[str, Any]]]) -> list[Violation]:
    out: list[Violation] = []
    for t in spec.tables:
        pk = t.primary_key[0]
        rows = spec.rows.get(t.name, [])
        thints = hints.get(t.name) or {}
        for c in t.columns:
            h = thints.get(c.name) or {}
            if h and not declared_type_ok(h, c.type):
                declared = h.get("format") if h.get("format") in _FORMAT_TYPES else h.get("type")
                out.append(Violation("type", t.name, c.name, None,
                                     f"the source declares {declared}, the column is {c.type}"))
            enum = set(c.enum) if c.enum else None
            declared_enum = {str(e) for e in h["enum"]} if h.get("enum") else None
            fmt, pattern = h.get("format"), h.get("pattern")
            rx = None
            if isinstance(pattern, str):
                try:
                    rx = re.compile(pattern)
                except re.error:
                    rx = None
            lo, hi = h.get("minimum"), h.get("maximum")
            xlo, xhi = h.get("exclusiveMinimum"), h.get("exclusiveMaximum")
            minlen, maxlen = h.get("minLength"), h.get("maxLength")
            for row in rows:
                v = row.get(c.name)
                if v is None:
                    continue
                rid = row.get(pk)
                if not _type_ok(c.type, v):
                    out.append(Violation("type", t.name, c.name, rid,
                                         f"{v!r} is not a {c.type}"))
                    continue
                if enum is not None and str(v) not in enum:
                    out.append(Violation("enum", t.name, c.name, rid,
                                         f"{v!r} is not one of {sorted(enum)}"))
                elif declared_enum is not None and str(v) not in declared_enum:
                    out.append(Violation("enum", t.name, c.name, rid,
                                         f"{v!r} is not one of the declared "
                                         f"{sorted(declared_enum)}"))
                if fmt and not _format_ok(str(fmt), v):
                    out.append(Violation("format", t.name, c.name, rid,
                                         f"{v!r} is not a valid {fmt}"))
                elif rx is not None and isinstance(v, str) and not rx.search(v):
                    out.append(Violation("format", t.name, c.name, rid,
                                         f"{v!r} does not match {pattern!r}"))
                elif isinstance(v, str) and ((isinstance(minlen, int) and len(v) < minlen) or
                                             (isinstance(maxlen, int) and len(v) > maxlen)):
                    out.append(Violation("format", t.name, c.name, rid,
                                         f"length {len(v)} outside [{minlen}, {maxlen}]"))
                if isinstance(v, int | float) and not isinstance(v, bool):
                    bad = ((isinstance(lo, int | float) and v < lo)
                           or (isinstance(hi, int | float) and v > hi)
                           or (isinstance(xlo, int | float) and v <= xlo)
                           or (isinstance(xhi, int | float) and v >= xhi))
                    if bad:
                        out.append(Violation("range", t.name, c.name, rid,
                                             f"{v!r} outside the declared range "
                                             f"[{lo if lo is not None else xlo}, "
                                             f"{hi if hi is not None else xhi}]"))
        groups = [(c.name,) for c in t.columns
                  if (c.unique or (thints.get(c.name) or {}).get("unique")) and not c.primary_key]
        groups += [tuple(t.primary_key)] + [tuple(g) for g in t.unique_together]
        for g in dict.fromkeys(groups):
            seen: dict[tuple, Any] = {}
            for row in rows:
                # a JSON value (object/array) compares by its canonical text: dicts don't hash
                key = tuple(json.dumps(v, sort_keys=True, default=str)
                            if isinstance(v, dict | list) else v
                            for v in (row.get(c) for c in g))
                if any(k is None for k in key):
                    continue
                if key in seen:
                    out.append(Violation("unique", t.name, ",".join(g), row.get(pk),
                                         f"{dict(zip(g, key, strict=True))} repeats row "
                                         f"{seen[key]!r}"))
                else:
                    seen[key] = row.get(pk)
    return out
