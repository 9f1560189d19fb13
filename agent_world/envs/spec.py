"""EnvSpec: one executable environment as a single, validated, fingerprinted JSON document.

An EnvSpec holds a theme (with its L1/L2/L3 taxonomy path), a relational schema, seed rows,
tools (JSON-schema arguments + Python source over the database), tool test cases and provenance.
The schema is kept in a portable form that `to_metadata()` turns into SQLAlchemy tables, so the
same spec yields DDL for SQLite (episodes) and PostgreSQL (a shared catalog or export).

The tables (`TableSpec`, `ColumnSpec`, ...) live in `table_spec`; the bounds on a spec as data
and the checks of a tool's argument schema in `spec_limits`.
"""

from __future__ import annotations

import ast
import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import sqlalchemy as sa
from pydantic import (
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.schema import CreateIndex, CreateTable

from agent_world import pysource
from agent_world.envs.spec_limits import MAX_SPEC_DEPTH, _path, _schema_problem, _too_deep
from agent_world.envs.table_spec import (
    _SA_TYPES,
    _SQL_RESERVED,
    ForeignKeySpec,
    Identifier,
    TableSpec,
    _Model,
    _server_default,
    _sql_name,
    _value_problem,
)
from agent_world.errors import SpecError

SPEC_FORMAT = "agent-world/env@1"


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


class ToolSpec(_Model):
    """A tool: its public interface (name, description, JSON schema) and its implementation.

    `source` defines a function with the tool's name taking `ctx` first and the arguments as
    keyword parameters; `ctx.db` is the episode's database (see agent_world.envs.tool_context).
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
        d = {"sqlite": sqlite.dialect(), "postgresql": postgresql.dialect()}[dialect]
        md = self.to_metadata()
        return [str(CreateTable(t).compile(dialect=d)).strip() for t in md.sorted_tables]

    def ddl_all(self, dialect: str = "sqlite") -> list[str]:
        """CREATE TABLE and CREATE INDEX statements for a dialect name."""
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
