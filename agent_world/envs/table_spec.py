"""The schema part of an EnvSpec: tables with their columns, keys, checks and indexes, and
how each column type maps to SQLAlchemy (one schema, DDL for SQLite and PostgreSQL alike).
"""

from __future__ import annotations

import json
import keyword
import re
from datetime import datetime
from typing import Annotated, Any, Literal

import sqlalchemy as sa
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator
from sqlalchemy.dialects.postgresql.base import PGIdentifierPreparer
from sqlalchemy.dialects.sqlite.base import SQLiteIdentifierPreparer

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
