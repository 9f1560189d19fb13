"""Bounds on a spec as data, and the checks of a tool's argument schema: nesting, references
(local only) and patterns, all bounded before anything compiles them.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import regex
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from agent_world.envs.arguments import NO_RETRIEVAL, clip

# A spec is data, not a program: bounds that keep reading and checking it linear and shallow.
# Nesting counts JSON objects and arrays. Checking a schema takes about 8 stack frames a level
# (jsonschema recurses), so a tool's argument schema may nest far less than the document.
MAX_SPEC_DEPTH = 64
MAX_SCHEMA_DEPTH = 32
# Patterns: the `regex` engine parses groups recursively, expands a counted repeat's minimum
# ((?:a{1000}){1000} compiles to a million nodes, ~170 bytes each) and compiles a long class
# slowly (1M characters: 20 s): all bounded before compiling. Size counts characters (a class's
# too) with repeats expanded: ~2 MB and ~0.1 s of compiling at most.
MAX_PATTERN_GROUPS = 32
MAX_PATTERN_SIZE = 10_000
_DATA_KEYWORDS = ("enum", "const", "default", "examples")  # values, not schemas
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_REF_KEYWORDS = ("$ref", "$dynamicRef")
_COUNTED = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_CLASS_BODY = re.compile(r"[^\]\\]*(?:\\.[^\]\\]*)*", re.DOTALL)  # up to a class's ']'


def _path(parts: list[str | int]) -> str:
    """'tools[0].parameters.properties' from its parts, clipped."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return clip(text or "(top level)", 200)


def _nests_past(value: Any, limit: int) -> bool:
    """Whether objects or arrays in `value` nest more than `limit` levels deep. Level by level,
    iteratively: the value may be deeper than Python's stack."""
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        level = [child for node in level
                 for child in (node.values() if isinstance(node, dict) else node)
                 if isinstance(child, dict | list)]
        if not level:
            return False
    return bool(level)


def _too_deep(value: Any, limit: int) -> list[str | int] | None:
    """The path of an object or array nested more than `limit` levels deep in `value` (None:
    none is)."""
    if not _nests_past(value, limit):
        return None
    path: list[str | int] = []
    while len(path) < limit:  # walk down to say where
        for key, child in value.items() if isinstance(value, dict) else enumerate(value):
            if isinstance(child, dict | list) and _nests_past(child, limit - len(path) - 1):
                path.append(key)
                value = child
                break
    return path


def _schema_objects(schema: Any) -> list[tuple[list[str | int], dict]]:
    """Every subschema object of `schema` with its path. The values of data keywords (`enum`,
    `default`, ...) are not schemas; the values of a name-to-schema map (`properties`, ...)
    are, whatever their names (a property may be called `default`)."""
    found: list[tuple[list[str | int], dict]] = []
    stack: list[tuple[Any, list[str | int], bool]] = [(schema, [], False)]
    while stack:
        node, path, named = stack.pop()
        if isinstance(node, dict) and named:
            stack.extend((v, [*path, k], False) for k, v in node.items())
        elif isinstance(node, dict):
            found.append((path, node))
            stack.extend((v, [*path, k], k in _SCHEMA_MAPS) for k, v in node.items()
                         if k not in _DATA_KEYWORDS)
        elif isinstance(node, list):
            stack.extend((v, [*path, i], False) for i, v in enumerate(node))
    return found


def _pattern_problem(pattern: str) -> str | None:
    """Why `pattern` is too deep or too large to compile safely (None: it is not). A linear
    scan: groups' nesting, and a bound on the size once counted repeats are expanded."""
    depth = deepest = 0
    total = 0  # items so far, repeats expanded
    sizes = [0]  # items so far in each open group
    last = 0  # items a quantifier would repeat
    i, n = 0, len(pattern)
    while i < n and deepest <= MAX_PATTERN_GROUPS and total <= MAX_PATTERN_SIZE:
        ch = pattern[i]
        counted = _COUNTED.match(pattern, i) if ch == "{" else None
        if ch == "(":
            depth += 1
            deepest = max(deepest, depth)
            sizes.append(0)
            i += 1
        elif ch == ")" and depth:
            depth -= 1
            size = sizes.pop()
            last = max(size, 1)  # an empty group is a node too: (){1000000} hangs compiling
            sizes[-1] += last
            total += last - size
            i += 1
        elif counted and (counted[1] or counted[2]):
            low = counted[1] or "0"  # the minimum is what is expanded; the rest is a loop
            extra = last * (max(int(low) if len(low) <= 9 else 10 ** 9, 1) - 1)
            sizes[-1] += extra
            total += extra
            last += extra
            i = counted.end()
        else:
            start, last = i, 1
            if ch == "[":  # a class: its characters are items (a leading ']' is literal)
                i += 1 + pattern.startswith("^", i + 1)
                i += pattern.startswith("]", i)
                i = _CLASS_BODY.match(pattern, i).end()
                last = max(i - start - 1, 1)
            i += 2 if ch == "\\" else 1
            sizes[-1] += last
            total += last
    if deepest > MAX_PATTERN_GROUPS:
        return (f"nests groups more than {MAX_PATTERN_GROUPS} deep; write a flatter pattern")
    if total > MAX_PATTERN_SIZE:
        return (f"is too large (over {MAX_PATTERN_SIZE:,} items once counted repeats are "
                "expanded); write a smaller one, bounding lengths with minLength/maxLength")
    return None


def _schema_problem(schema: dict[str, Any]) -> str | None:
    """Why a tool's argument schema cannot be used (None: it can). Checked before anything
    compiles it: nesting, references (local only: a spec never makes this process fetch a
    URL), patterns; then the schema itself, its patterns compiled, its references resolved."""
    deep = _too_deep(schema, MAX_SCHEMA_DEPTH)
    if deep is not None:
        return f"nested more than {MAX_SCHEMA_DEPTH} levels deep (at {_path(deep)})"
    objects = _schema_objects(schema)
    refs: list[tuple[str, str, list[str | int]]] = []
    patterns: list[tuple[str, list[str | int]]] = []
    for path, node in objects:
        for key in _REF_KEYWORDS:
            ref = node.get(key)
            if isinstance(ref, str):
                if not ref.startswith("#"):
                    return (f"{key} {clip(ref, 200)!r} at {_path(path)}: only local references "
                            "('#/...') are allowed; a spec's schemas never load anything")
                refs.append((key, ref, path))
        if isinstance(node.get("$id"), str):
            return (f"$id at {_path(path)}: not allowed (it changes what references resolve "
                    "against; use $defs and '#/$defs/...')")
        if isinstance(node.get("pattern"), str):
            patterns.append((node["pattern"], [*path, "pattern"]))
        if isinstance(node.get("patternProperties"), dict):
            patterns += [(p, [*path, "patternProperties"]) for p in node["patternProperties"]]
    for pattern, path in patterns:
        problem = _pattern_problem(pattern)
        if problem:
            return f"pattern {clip(repr(pattern), 80)} at {_path(path)} {problem}"
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return f"invalid JSON schema: {clip(exc.message)}"
    for pattern, path in patterns:
        try:
            regex.compile(pattern)
        except regex.error as exc:
            return f"invalid pattern {clip(repr(pattern), 80)} at {_path(path)}: {exc}"
    if refs:
        resolver = NO_RETRIEVAL.with_resource(
            "", DRAFT202012.create_resource(schema)).resolver()
        for key, ref, path in refs:
            try:
                target = resolver.lookup(ref).contents
            except Unresolvable:
                return f"{key} {clip(ref, 200)!r} at {_path(path)} does not resolve"
            if not isinstance(target, dict | bool):
                return f"{key} {clip(ref, 200)!r} at {_path(path)} does not point at a schema"
    return None
