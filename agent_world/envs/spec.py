"""EnvSpec: one executable environment as a single, validated, fingerprinted JSON document.

An EnvSpec holds a theme (with its L1/L2/L3 taxonomy path), a relational schema, seed rows,
tools (JSON-schema arguments + Python source over the database), tool test cases and provenance.
The schema is kept in a portable form that `to_metadata()` turns into SQLAlchemy tables, so the
same spec yields DDL for SQLite (episodes) and PostgreSQL (a shared catalog or export).
"""

from __future__ import annotations

import ast
import hashlib
import json
import keyword
import re
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import jsonschema
import regex
import sqlalchemy as sa
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012
from sqlalchemy.dialects.postgresql.base import PGIdentifierPreparer
from sqlalchemy.dialects.sqlite.base import SQLiteIdentifierPreparer

from agent_world import pysource
from agent_world.envs.arguments import NO_RETRIEVAL, clip
from agent_world.errors import SpecError

SPEC_FORMAT = "agent-world/env@1"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")

ColumnType = Literal["integer", "real", "text", "boolean", "date", "datetime", "json"]

class SQLiteJSON(sa.types.UserDefinedType):
    """JSON on SQLite, declared JSONTEXT: TEXT affinity keeps the text as written (a NUMERIC
    affinity would turn '2.0' into the integer 2), and the name tells readers to decode it.
    None is SQL NULL."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return "JSONTEXT"

    def bind_processor(self, dialect: Any) -> Any:
        def process(value: Any) -> Any:
            return None if value is None else json.dumps(value, ensure_ascii=False)
        return process

    def result_processor(self, dialect: Any, coltype: Any) -> Any:
        def process(value: Any) -> Any:
            return json.loads(value) if isinstance(value, str | bytes) else value
        return process


def _json_type() -> sa.types.TypeEngine:
    return sa.JSON(none_as_null=True).with_variant(SQLiteJSON(), "sqlite")


# Words either dialect reserves (RETURNING is one to SQLite >= 3.35, though SQLAlchemy's SQLite
# list predates it): such a column is quoted in its definition and in the CHECKs we write.
_SQL_RESERVED = frozenset(SQLiteIdentifierPreparer.reserved_words
                          | PGIdentifierPreparer.reserved_words)


def _sql_name(name: str) -> str:
    return f'"{name}"' if name.lower() in _SQL_RESERVED else name


_SA_TYPES: dict[str, Any] = {
    "integer": sa.Integer,
    "real": sa.Float,
    "text": sa.Text,
    "boolean": sa.Boolean,
    # dates travel as ISO strings: tools and episodes see the same values SQLite stores
    "date": sa.String,
    "datetime": sa.String,
    "json": _json_type,
}


def _server_default(value: Any) -> Any:
    """A column default the database itself applies (tools may omit such columns)."""
    if value is None or isinstance(value, dict | list):
        return None
    if isinstance(value, bool):  # rendered per dialect: 1/0 on SQLite, true/false on PostgreSQL
        return sa.true() if value else sa.false()
    if isinstance(value, int | float):
        return sa.text(repr(value))
    return str(value)


def _value_problem(column: ColumnSpec, value: Any) -> str | None:
    """Why a seed value does not fit its column's type (None: it fits)."""
    if value is None:
        if column.nullable or (column.primary_key and column.type == "integer"):
            return None
        return "is None but the column is NOT NULL"
    kind = column.type
    ok = {
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "real": isinstance(value, int | float) and not isinstance(value, bool),
        "text": isinstance(value, str),
        "boolean": isinstance(value, bool) or value in (0, 1),
        "date": isinstance(value, str),
        "datetime": isinstance(value, str),
        "json": True,
    }[kind]
    if not ok:
        return f"expected {kind}, got {type(value).__name__} {value!r:.60}"
    if kind in ("date", "datetime"):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return f"expected an ISO {kind} string, got {value!r:.60}"
        if kind == "date" and (len(value) != 10 or parsed.time() != datetime.min.time()):
            return f"expected an ISO date (YYYY-MM-DD), got {value!r:.60}"
    if column.enum and value not in column.enum:
        return f"{value!r:.60} is not one of {column.enum}"
    return None


def _identifier(value: str) -> str:
    if not _IDENT.match(value) or keyword.iskeyword(value):
        raise ValueError(f"{value!r} is not a valid identifier (letters, digits, '_'; not a keyword)")
    return value


Identifier = Annotated[str, AfterValidator(_identifier)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class TaxonomyPath(_Model):
    """Three-level theme taxonomy: L1 category / L2 sub-category / L3 server."""

    l1: str = "Uncategorized"
    l2: str = "General"
    l3: str

    def as_tuple(self) -> tuple[str, str, str]:
        return (self.l1, self.l2, self.l3)

    def __str__(self) -> str:
        return f"{self.l1} / {self.l2} / {self.l3}"


class Theme(_Model):
    name: str = Field(min_length=1)
    description: str = ""
    taxonomy: TaxonomyPath
    source_kind: str = "manual"  # mcp, mcp-url, tool-list, openapi, prd, manual
    source_ref: str = ""
    raw_descriptions: list[str] = Field(default_factory=list)


class ColumnSpec(_Model):
    name: Identifier
    type: ColumnType
    primary_key: bool = False
    nullable: bool = True
    unique: bool = False
    default: Any = None
    foreign_key: str | None = None  # "table.column"
    enum: list[str] | None = None  # allowed values (a CHECK constraint)
    description: str = ""

    @field_validator("foreign_key")
    @classmethod
    def _fk_form(cls, v: str | None) -> str | None:
        if v is not None:
            parts = v.split(".")
            if len(parts) != 2 or not all(_IDENT.match(p) for p in parts):
                raise ValueError(f"foreign_key must look like 'table.column', got {v!r}")
        return v


def _table_name(value: str) -> str:
    if value.lower().startswith(("_aw_", "sqlite_")):
        raise ValueError(f"table name {value!r} is reserved (names starting with _aw_ or "
                         "sqlite_ belong to the engine and to SQLite)")
    return value


class ForeignKeySpec(_Model):
    """A (possibly composite) foreign key: `columns` reference `ref_columns` of `table`, which
    must be that table's primary key or a unique column set."""

    columns: list[Identifier] = Field(min_length=1)
    table: Identifier
    ref_columns: list[Identifier] = Field(min_length=1)
    on_delete: Literal["CASCADE", "SET NULL", "RESTRICT", "NO ACTION"] | None = None

    @model_validator(mode="after")
    def _arity(self) -> ForeignKeySpec:
        if len(self.columns) != len(self.ref_columns):
            raise ValueError(f"columns {self.columns} and ref_columns {self.ref_columns} "
                             "differ in length")
        return self


class CheckSpec(_Model):
    """A table-level CHECK constraint: an SQL expression over the table's columns."""

    name: Identifier
    sql: str = Field(min_length=1)

    @field_validator("sql")
    @classmethod
    def _one_expression(cls, v: str) -> str:
        if ";" in v or "--" in v or "/*" in v:
            raise ValueError("a CHECK is one SQL expression (no ';' or comments)")
        return v


class IndexSpec(_Model):
    columns: list[Identifier] = Field(min_length=1)
    unique: bool = False
    name: Identifier | None = None


class TableSpec(_Model):
    name: Annotated[Identifier, AfterValidator(_table_name)]
    description: str = ""
    columns: list[ColumnSpec] = Field(min_length=1)
    unique_together: list[list[str]] = Field(default_factory=list)
    # added after the first format (left out of the fingerprint while empty)
    foreign_keys: list[ForeignKeySpec] = Field(default_factory=list)
    checks: list[CheckSpec] = Field(default_factory=list)
    indexes: list[IndexSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _columns_ok(self) -> TableSpec:
        names = [c.name for c in self.columns]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise ValueError(f"duplicate column name(s) {sorted(dupes)}")
        if not any(c.primary_key for c in self.columns):
            raise ValueError(f"table {self.name!r} has no primary key column")
        groups = [("unique_together", g) for g in self.unique_together]
        groups += [(f"foreign_keys[{i}].columns", fk.columns)
                   for i, fk in enumerate(self.foreign_keys)]
        groups += [(f"indexes[{i}].columns", ix.columns) for i, ix in enumerate(self.indexes)]
        for where, group in groups:
            missing = [c for c in group if c not in names]
            if missing:
                raise ValueError(f"{where} names unknown column(s) {missing}")
        checks = [c.name for c in self.checks]
        if len(set(checks)) != len(checks):
            raise ValueError(f"checks: duplicate names {checks}")
        return self

    def unique_sets(self) -> list[frozenset[str]]:
        """Column sets whose values are unique: the primary key, unique columns,
        unique_together groups and unique indexes (what a foreign key may reference)."""
        sets = [frozenset(self.primary_key)]
        sets += [frozenset([c.name]) for c in self.columns if c.unique]
        sets += [frozenset(g) for g in self.unique_together]
        sets += [frozenset(ix.columns) for ix in self.indexes if ix.unique]
        return sets

    def all_foreign_keys(self) -> list[ForeignKeySpec]:
        """Column-level `foreign_key`s and table-level `foreign_keys` alike."""
        out = []
        for c in self.columns:
            if c.foreign_key:
                table, col = c.foreign_key.split(".")
                out.append(ForeignKeySpec(columns=[c.name], table=table, ref_columns=[col]))
        return out + list(self.foreign_keys)

    def column(self, name: str) -> ColumnSpec:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def primary_key(self) -> list[str]:
        return [c.name for c in self.columns if c.primary_key]


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


class ToolSpec(_Model):
    """A tool: its public interface (name, description, JSON schema) and its implementation.

    `source` defines a function with the tool's name taking `ctx` first and the arguments as
    keyword parameters; `ctx.db` is the episode's database (see agent_world.envs.worker).
    """

    name: Identifier
    description: str = Field(min_length=1)
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    source: str
    mutates: bool = False  # a write tool changes the database; read tools never do

    @field_validator("parameters")
    @classmethod
    def _schema_ok(cls, v: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        if v.get("type") != "object":
            raise ValueError("parameters must be a JSON schema with type 'object'")
        problem = _schema_problem(v)
        if problem:
            tool = info.data.get("name")
            raise ValueError(f"tool {tool!r}: {problem}" if tool else problem)
        return v

    @property
    def arguments_schema(self) -> dict[str, Any]:
        """The schema calls are checked against: `parameters`, rejecting arguments it does not
        name unless it sets `additionalProperties` itself."""
        if "additionalProperties" in self.parameters:
            return self.parameters
        return {**self.parameters, "additionalProperties": False}

    @model_validator(mode="after")
    def _source_ok(self) -> ToolSpec:
        # Parse only: the source is never executed outside the worker.
        try:
            tree = pysource.parse(self.source)
        except SyntaxError as exc:
            raise ValueError(f"source does not compile: {exc.msg} (line {exc.lineno})") from None
        funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == self.name]
        if not funcs:
            raise ValueError(f"source must define a function named {self.name!r}")
        args = funcs[0].args
        if not args.args or args.args[0].arg != "ctx":
            raise ValueError(f"function {self.name!r} must take 'ctx' as its first parameter")
        return self


class RowChange(_Model):
    """One expected change of the database by a tool call, e.g. one row inserted in `loans`
    with these values, or the row with this key updated to these values."""

    table: str
    op: Literal["insert", "update", "delete"]
    count: int = Field(default=1, ge=1)
    key: dict[str, Any] | None = None  # update/delete: the row's primary key
    values: dict[str, Any] = Field(default_factory=dict)  # insert/update: the row has these after


class ToolExpectation(_Model):
    ok: bool = True  # False: the call must give an error observation
    error_kind: str | None = None
    # words the error message holds (case and underscores aside): an unknown loan's refusal
    # names the loan, so a tool answering for another kind of record fails the test
    error_contains: str | None = None
    equals: Any = None  # the whole result equals this (when not None)
    contains: dict[str, Any] | None = None  # result (a dict) has these key/values
    min_items: int | None = None  # result (a list) has at least this many items
    # with `equals`: compare [item[pluck] for item in result] instead of the whole result list
    pluck: str | None = None
    # the database changes the call makes, exactly (None: not checked; [] : no change at all)
    changes: list[RowChange] | None = None

    @model_serializer(mode="wrap")
    def _omit_unused(self, handler: Any) -> dict[str, Any]:
        # fields added after the first format stay out of the JSON (and the fingerprint) while
        # unused, so specs that do not use them keep their bytes and fingerprints
        data = handler(self)
        for key in ("pluck", "changes", "error_contains"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class ToolTest(_Model):
    name: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    expect: ToolExpectation = Field(default_factory=ToolExpectation)


class Provenance(_Model):
    created_by: str = "manual"  # miner, designer, manual, ...
    source_kind: str = "manual"
    source_ref: str = ""
    created_at: str = ""
    parent: str | None = None  # fingerprint this spec was derived from
    notes: list[str] = Field(default_factory=list)
    stats: dict[str, Any] = Field(default_factory=dict)


class EnvSpec(_Model):
    format: Literal["agent-world/env@1"] = SPEC_FORMAT
    name: Identifier
    version: int = 1
    theme: Theme
    tables: list[TableSpec] = Field(min_length=1)
    rows: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    tools: list[ToolSpec] = Field(default_factory=list)
    tests: list[ToolTest] = Field(default_factory=list)
    # Python source run once per environment in the worker before its tools; every tool sees
    # its top-level names (functions, constants) as globals, so shared code is not copied.
    helpers: str = ""
    clock_start: str = "2026-01-15T09:00:00"  # episodes' deterministic clock starts here
    provenance: Provenance = Field(default_factory=Provenance)

    @model_validator(mode="before")
    @classmethod
    def _shallow(cls, data: Any) -> Any:
        # before anything else walks it (pydantic, jsonschema, json.dumps all recurse)
        deep = _too_deep(data, MAX_SPEC_DEPTH)
        if deep is not None:
            raise ValueError(f"{_path(deep)}: nested more than {MAX_SPEC_DEPTH} levels deep")
        return data

    @field_validator("clock_start")
    @classmethod
    def _iso(cls, v: str) -> str:
        datetime.fromisoformat(v)
        return v

    @field_validator("helpers")
    @classmethod
    def _helpers_compile(cls, v: str) -> str:
        # Parse only: the source is never executed outside the worker.
        try:
            pysource.parse(v)
        except SyntaxError as exc:
            raise ValueError(f"helpers do not compile: {exc.msg} (line {exc.lineno})") from None
        return v

    @model_validator(mode="after")
    def _references(self) -> EnvSpec:
        tables = {t.name: t for t in self.tables}
        if len(tables) != len(self.tables):
            raise ValueError("tables: duplicate table names")
        for ti, t in enumerate(self.tables):
            fks = [(f"tables[{ti}].columns[{ci}].foreign_key ({t.name}.{c.name})",
                    ForeignKeySpec(columns=[c.name], table=c.foreign_key.split(".")[0],
                                   ref_columns=[c.foreign_key.split(".")[1]]))
                   for ci, c in enumerate(t.columns) if c.foreign_key]
            fks += [(f"tables[{ti}].foreign_keys[{i}] ({t.name}({', '.join(fk.columns)}))", fk)
                    for i, fk in enumerate(t.foreign_keys)]
            for where, fk in fks:
                ref = tables.get(fk.table)
                if ref is None:
                    raise ValueError(f"{where}: references unknown table {fk.table!r}")
                unknown = [c for c in fk.ref_columns if c not in {x.name for x in ref.columns}]
                if unknown:
                    raise ValueError(f"{where}: references unknown column "
                                     f"{fk.table}.{unknown[0]}")
                if frozenset(fk.ref_columns) not in ref.unique_sets():
                    cols = ", ".join(fk.ref_columns)
                    raise ValueError(
                        f"{where}: references {fk.table}({cols}), which is neither the primary "
                        f"key of {fk.table} nor unique (mark it unique, or reference "
                        f"{fk.table}({', '.join(ref.primary_key)}))")
        for tname, rows in self.rows.items():
            if tname not in tables:
                raise ValueError(f"rows[{tname}]: rows given for unknown table {tname!r}")
            columns = {c.name: c for c in tables[tname].columns}
            for i, row in enumerate(rows):
                extra = set(row) - set(columns)
                if extra:
                    raise ValueError(f"rows[{tname}][{i}]: unknown column(s) {sorted(extra)}")
                for name, value in row.items():
                    problem = _value_problem(columns[name], value)
                    if problem:
                        raise ValueError(f"rows[{tname}][{i}].{name}: {problem}")
        tool_names = [t.name for t in self.tools]
        dupes = sorted({n for n in tool_names if tool_names.count(n) > 1})
        if dupes:
            raise ValueError(f"tools: duplicate tool name(s) {dupes}")
        for i, test in enumerate(self.tests):
            if test.tool not in tool_names:
                raise ValueError(f"tests[{i}].tool ({test.name}): unknown tool {test.tool!r}")
        return self

    # ---- identity -------------------------------------------------------------------------
    def content(self) -> dict[str, Any]:
        """What the fingerprint covers: everything but name, version and provenance."""
        data = self.model_dump(mode="json")
        for key in ("name", "version", "provenance"):
            data.pop(key)
        # fields added after the first format are left out while unused, so the fingerprints
        # of specs that do not use them stay what they were
        if not data["helpers"]:
            data.pop("helpers")
        for table in data["tables"]:
            for key in ("foreign_keys", "checks", "indexes"):
                if not table[key]:
                    table.pop(key)
        return data

    @property
    def fingerprint(self) -> str:
        blob = json.dumps(self.content(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    # ---- schema ---------------------------------------------------------------------------
    def table(self, name: str) -> TableSpec:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(name)

    def tool(self, name: str) -> ToolSpec:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(name)

    def to_metadata(self) -> sa.MetaData:
        """The schema as SQLAlchemy metadata (DDL for SQLite, PostgreSQL, ...)."""
        md = sa.MetaData()
        for t in self.tables:
            cols: list[Any] = []
            for c in t.columns:
                args: list[Any] = []
                if c.foreign_key:
                    args.append(sa.ForeignKey(c.foreign_key))
                cols.append(
                    sa.Column(
                        c.name,
                        _SA_TYPES[c.type](),
                        *args,
                        quote=True if c.name.lower() in _SQL_RESERVED else None,
                        server_default=_server_default(c.default),
                        primary_key=c.primary_key,
                        nullable=c.nullable and not c.primary_key,
                        unique=c.unique or None,
                        # integer single-column keys get ids from the database
                        autoincrement=bool(c.primary_key and c.type == "integer"
                                           and len(t.primary_key) == 1),
                    )
                )
                if c.type == "json":  # PostgreSQL's json type checks this itself
                    cols.append(sa.CheckConstraint(
                        f"{_sql_name(c.name)} IS NULL OR json_valid({_sql_name(c.name)})",
                        name=f"ck_{t.name}_{c.name}_json").ddl_if(dialect="sqlite"))
                if c.enum:
                    values = ", ".join("'" + v.replace("'", "''") + "'" for v in c.enum)
                    cols.append(sa.CheckConstraint(f"{_sql_name(c.name)} IN ({values})",
                                                   name=f"ck_{t.name}_{c.name}"))
            for group in t.unique_together:
                cols.append(sa.UniqueConstraint(*group))
            for fk in t.foreign_keys:
                cols.append(sa.ForeignKeyConstraint(
                    fk.columns, [f"{fk.table}.{c}" for c in fk.ref_columns],
                    ondelete=fk.on_delete))
            for check in t.checks:
                cols.append(sa.CheckConstraint(check.sql, name=f"ck_{t.name}_{check.name}"))
            for i, ix in enumerate(t.indexes):
                cols.append(sa.Index(ix.name or f"ix_{t.name}_{i}_{'_'.join(ix.columns)}",
                                     *ix.columns, unique=ix.unique))
            sa.Table(t.name, md, *cols, comment=t.description or None)
        return md

    def ddl(self, dialect: str = "sqlite") -> list[str]:
        """CREATE TABLE statements for a dialect name ('sqlite', 'postgresql')."""
        from sqlalchemy.dialects import postgresql, sqlite
        from sqlalchemy.schema import CreateTable

        d = {"sqlite": sqlite.dialect(), "postgresql": postgresql.dialect()}[dialect]
        md = self.to_metadata()
        return [str(CreateTable(t).compile(dialect=d)).strip() for t in md.sorted_tables]

    def ddl_all(self, dialect: str = "sqlite") -> list[str]:
        """CREATE TABLE and CREATE INDEX statements for a dialect name."""
        from sqlalchemy.dialects import postgresql, sqlite
        from sqlalchemy.schema import CreateIndex

        d = {"sqlite": sqlite.dialect(), "postgresql": postgresql.dialect()}[dialect]
        indexes = [str(CreateIndex(ix).compile(dialect=d)).strip()
                   for t in self.to_metadata().sorted_tables for ix in sorted(
                       t.indexes, key=lambda ix: ix.name or "")]
        return self.ddl(dialect) + indexes

    def row_count(self) -> int:
        return sum(len(r) for r in self.rows.values())

    def stats(self) -> dict[str, int]:
        fks = sum(len(t.all_foreign_keys()) for t in self.tables)
        constraints = sum(
            1 for t in self.tables for c in t.columns
            if c.foreign_key or c.enum or c.unique or not c.nullable or c.primary_key
        ) + sum(len(t.unique_together) + len(t.foreign_keys) + len(t.checks)
                for t in self.tables)
        return {"tables": len(self.tables), "rows": self.row_count(), "foreign_keys": fks,
                "constraints": constraints, "tools": len(self.tools), "tests": len(self.tests)}

    # ---- serialization --------------------------------------------------------------------
    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes, *, origin: str = "<string>") -> EnvSpec:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SpecError(f"{origin}: not valid JSON: {exc.msg} at line {exc.lineno}") from None
        except RecursionError:  # json's parser recurses: far past MAX_SPEC_DEPTH anyway
            raise SpecError(f"{origin}: invalid environment spec: JSON nested more than "
                            f"{MAX_SPEC_DEPTH} levels deep") from None
        return cls.from_dict(data, origin=origin)

    @classmethod
    def from_dict(cls, data: Any, *, origin: str = "<dict>") -> EnvSpec:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise SpecError(format_validation_error(exc, origin)) from None

    @classmethod
    def load(cls, path: str | Path) -> EnvSpec:
        p = Path(path)
        try:
            text = p.read_text()
        except OSError as exc:
            raise SpecError(f"{p}: cannot read: {exc.strerror}") from None
        return cls.from_json(text, origin=str(p))

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_text(self.to_json())
        return p


def format_validation_error(exc: ValidationError, origin: str) -> str:
    """One readable message naming each bad field, e.g. 'tables[2].columns[0].name: ...';
    one line when one field is bad."""
    lines = []
    for err in exc.errors()[:8]:
        loc = ""
        for part in err["loc"]:
            loc += f"[{part}]" if isinstance(part, int) else (f".{part}" if loc else str(part))
        msg = err["msg"].removeprefix("Value error, ")
        lines.append(f"  {loc}: {msg}" if loc else f"  {msg}")
    more = len(exc.errors()) - 8
    if more > 0:
        lines.append(f"  ... and {more} more")
    if len(lines) == 1:
        return f"{origin}: invalid environment spec: {lines[0].strip()}"
    return f"{origin}: invalid environment spec\n" + "\n".join(lines)
