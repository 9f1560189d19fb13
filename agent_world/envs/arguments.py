"""Checking a tool call's arguments against the tool's JSON schema, bounded in time.

Arguments come from the agent, schemas from whoever wrote the environment, and the check runs in
the caller's process: a schema `pattern` such as `^(a+)+$` with a crafted argument would
backtrack for minutes in Python's `re` while holding the GIL. Patterns are therefore matched
with the `regex` engine under a timeout and with the GIL released; an argument whose check runs
out of time is refused. Messages quote at most a few hundred characters of an argument.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import regex
from jsonschema import ValidationError

PATTERN_TIMEOUT_S = 0.05
MAX_MESSAGE_CHARS = 300


class PatternTimeout(Exception):
    """A schema pattern took too long on an argument."""


def _search(pattern: str, text: str) -> bool:
    try:
        return regex.search(pattern, text, timeout=PATTERN_TIMEOUT_S, concurrent=True) is not None
    except TimeoutError:
        raise PatternTimeout(pattern) from None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{clip(repr(instance))} does not match {pattern!r}")


def _extra_properties(instance: dict, schema: dict) -> list[str]:
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    return [k for k in instance
            if k not in properties and not any(_search(p, k) for p in patterns)]


def _pattern_properties(validator: Any, patterns: dict, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    extras = _extra_properties(instance, schema)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        names = ", ".join(clip(repr(e), 60) for e in extras[:5])
        yield ValidationError(f"unexpected argument(s) {names}")


ArgumentValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    {"pattern": _pattern, "patternProperties": _pattern_properties,
     "additionalProperties": _additional_properties},
)


def clip(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text` cut to `limit` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def argument_problem(validator: Any, arguments: dict[str, Any]) -> str | None:
    """Why `arguments` fail the schema (the most relevant error, clipped), or None."""
    try:
        problem = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    except PatternTimeout as exc:
        return (f"arguments: checking pattern {clip(repr(exc.args[0]), 80)} took over "
                f"{PATTERN_TIMEOUT_S:g}s; send a shorter or simpler value")
    if problem is None:
        return None
    where = "arguments" + "".join(f"[{clip(repr(p), 60)}]" for p in problem.absolute_path)
    return clip(f"{where}: {problem.message}")


__all__ = ["ArgumentValidator", "PATTERN_TIMEOUT_S", "argument_problem", "clip"]
