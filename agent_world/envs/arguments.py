"""Checking a tool call's arguments against the tool's JSON schema, bounded in time.

Arguments come from the agent, schemas from whoever wrote the environment, and the check runs in
the caller's process: a schema `pattern` such as `^(a+)+$` with a crafted argument would
backtrack for minutes in Python's `re` while holding the GIL. Patterns are therefore matched
with the `regex` engine under a timeout and with the GIL released; an argument whose check runs
out of time is refused. References resolve within the schema only: the validator's registry
retrieves nothing, so no schema makes this process reach the network. Integers must fit the
64 bits the episode's SQLite database holds, and arguments nest at most MAX_ARGUMENT_DEPTH
levels. Messages quote at most a few hundred characters of an argument.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jsonschema
import regex
from jsonschema import ValidationError
from referencing import Registry
from referencing.exceptions import NoSuchResource, Unresolvable

PATTERN_TIMEOUT_S = 0.05
MAX_MESSAGE_CHARS = 300
# SQLite's INTEGER: a larger Python int cannot be bound (OverflowError in the tool's statement)
MIN_INTEGER, MAX_INTEGER = -(2 ** 63), 2 ** 63 - 1
# objects and arrays arguments may nest (the arguments object is the first level): jsonschema
# recurses along a recursive schema, and the worker's message encoding along any value
MAX_ARGUMENT_DEPTH = 32


def _retrieve_nothing(uri: str) -> Any:
    raise NoSuchResource(ref=uri)


# jsonschema's default registry fetches any URL a `$ref` names (urllib, in this process)
NO_RETRIEVAL: Registry = Registry(retrieve=_retrieve_nothing)


class PatternTimeout(Exception):
    """A schema pattern took too long on an argument."""


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    return regex.compile(pattern)  # regex.search's own cache lookup costs more than the match


def _search(pattern: str, text: str) -> bool:
    try:
        return _compiled(pattern).search(text, timeout=PATTERN_TIMEOUT_S,
                                         concurrent=True) is not None
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


# Keywords the fast check understands; annotations change nothing about validity.
_FAST_VALUE_KEYS = {"type", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                    "minLength", "maxLength", "pattern"}
_ANNOTATIONS = {"description", "title", "default", "examples", "deprecated", "readOnly",
                "writeOnly", "$comment"}
_FAST_TYPES = {"integer": lambda v: type(v) is int and MIN_INTEGER <= v <= MAX_INTEGER,
               "string": lambda v: type(v) is str, "boolean": lambda v: type(v) is bool,
               "null": lambda v: v is None,
               "number": lambda v: (type(v) is int and MIN_INTEGER <= v <= MAX_INTEGER)
               or (type(v) is float and v == v)}
_FAST_PLAIN = (str, bool, float, type(None))  # values an unnamed argument may be, unchecked


def _fast_value(schema: Any) -> Callable[[Any], bool] | None:
    """A predicate that is True only for values `schema` accepts (None: schema too rich)."""
    if not isinstance(schema, dict) or set(schema) - _FAST_VALUE_KEYS - _ANNOTATIONS:
        return None
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind
    if kinds is None or not isinstance(kinds, list) or not all(k in _FAST_TYPES for k in kinds):
        return None
    tests = [_FAST_TYPES[k] for k in kinds]
    enum = schema.get("enum")
    if enum is not None and (not isinstance(enum, list) or not all(
            isinstance(e, str | int) and not isinstance(e, bool) for e in enum)):
        return None  # only plain strings and integers: equality then means the same in JSON
    bounds = []
    for key, op in (("minimum", "ge"), ("maximum", "le"), ("exclusiveMinimum", "gt"),
                    ("exclusiveMaximum", "lt")):
        if key in schema:
            limit = schema[key]
            if not isinstance(limit, int | float) or isinstance(limit, bool):
                return None
            bounds.append((op, limit))
    lengths = (schema.get("minLength"), schema.get("maxLength"))
    if any(n is not None and type(n) is not int for n in lengths):
        return None
    pattern = schema.get("pattern")
    if pattern is not None and not isinstance(pattern, str):
        return None

    def check(value: Any) -> bool:
        if not any(t(value) for t in tests):
            return False
        if enum is not None and (type(value) not in (str, int) or value not in enum):
            return False
        if bounds and type(value) in (int, float):
            for op, limit in bounds:
                if not (value >= limit if op == "ge" else value <= limit if op == "le"
                        else value > limit if op == "gt" else value < limit):
                    return False
        if type(value) is str and lengths != (None, None):
            # JSON Schema counts code points, as len() does
            if lengths[0] is not None and len(value) < lengths[0]:
                return False
            if lengths[1] is not None and len(value) > lengths[1]:
                return False
        if pattern is not None and type(value) is str:
            try:  # the same bounded search the full validator uses
                return _search(pattern, value)
            except (PatternTimeout, regex.error):
                return False  # the full validator words it
        return True
    return check


def fast_accept(schema: Any) -> Callable[[dict[str, Any]], bool] | None:
    """For a flat object schema (typed scalar properties, `required`, `additionalProperties`
    false or absent, bounds, enums, lengths): a check that is True only for arguments the full
    validator accepts, at a small fraction of its cost. False means "ask the full validator"
    (which also words the message). None when the schema uses anything else."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    if set(schema) - {"type", "properties", "required", "additionalProperties"} - _ANNOTATIONS:
        return None
    props = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(props, dict) or not isinstance(required, list) or extra not in (True,
                                                                                       False):
        return None
    checks = {}
    for name, sub in props.items():
        check = _fast_value(sub)
        if check is None:
            return None
        checks[name] = check
    needed = tuple(required)

    def accept(arguments: dict[str, Any]) -> bool:
        for name in needed:
            if name not in arguments:
                return False
        for name, value in arguments.items():
            check = checks.get(name)
            if check is None:
                if not extra or not (type(value) in _FAST_PLAIN or (
                        type(value) is int and MIN_INTEGER <= value <= MAX_INTEGER)):
                    return False
            elif not check(value):
                return False
        return True
    return accept


class CompiledArguments:
    """A tool's argument check: the fast accept path where the schema allows it, the full
    (pattern-safe) validator for everything else and for the message."""

    __slots__ = ("validator", "fast")

    def __init__(self, schema: dict[str, Any]):
        self.validator = ArgumentValidator(schema, registry=NO_RETRIEVAL)
        self.fast = fast_accept(schema)


def _shape(arguments: dict[str, Any]) -> tuple[list[Any] | None, tuple[list[Any], int] | None]:
    """(The path of an object or array nested past MAX_ARGUMENT_DEPTH, the path and value of
    an integer outside SQLite's 64 bits) in `arguments`, each None when there is none.
    Iterative: arguments may nest deeper than Python's stack."""
    wide = None
    stack: list[tuple[Any, list[Any]]] = [(arguments, [])]
    while stack:
        node, path = stack.pop()
        if len(path) >= MAX_ARGUMENT_DEPTH:
            return path, wide
        for key, value in node.items() if isinstance(node, dict) else enumerate(node):
            if type(value) is int:
                if wide is None and not MIN_INTEGER <= value <= MAX_INTEGER:
                    wide = [*path, key], value
            elif isinstance(value, dict | list | tuple):
                stack.append((value, [*path, key]))
    return None, wide


def argument_problem(validator: Any, arguments: dict[str, Any]) -> str | None:
    """Why `arguments` nest too deep, hold an integer past 64 bits or fail the schema (the
    most relevant error, clipped), or None. `validator`: an `ArgumentValidator` or a
    `CompiledArguments`."""
    if isinstance(validator, CompiledArguments):
        if validator.fast is not None and validator.fast(arguments):
            return None
        validator = validator.validator
    # first: jsonschema recurses along the value, and words a huge integer with repr()
    deep, wide = _shape(arguments)
    if deep is not None:
        return clip(f"{_where(deep)}: nested more than {MAX_ARGUMENT_DEPTH} levels deep; send "
                    "flatter arguments")
    if wide is not None:
        path, value = wide
        shown = str(value) if value.bit_length() <= 256 else f"of {value.bit_length():,} bits"
        return (f"{_where(path)}: integer {clip(shown, 40)} is out of range (integers must "
                f"lie within {MIN_INTEGER}..{MAX_INTEGER}, 64 bits)")
    try:
        problem = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    except PatternTimeout as exc:
        return (f"arguments: checking pattern {clip(repr(exc.args[0]), 80)} took over "
                f"{PATTERN_TIMEOUT_S:g}s; send a shorter or simpler value")
    except Unresolvable as exc:  # a schema that never passed spec validation
        return clip(f"arguments: cannot be checked: the tool's schema refers to "
                    f"{clip(str(exc.ref), 200)!r}, which does not resolve within the schema")
    if problem is None:
        return None
    return clip(f"{_where(problem.absolute_path)}: {problem.message}")


def _where(path: Any) -> str:
    return "arguments" + "".join(f"[{clip(repr(p), 60)}]" for p in path)


__all__ = ["ArgumentValidator", "CompiledArguments", "MAX_ARGUMENT_DEPTH", "MAX_INTEGER",
           "MIN_INTEGER", "NO_RETRIEVAL", "PATTERN_TIMEOUT_S", "argument_problem", "clip",
           "fast_accept"]
