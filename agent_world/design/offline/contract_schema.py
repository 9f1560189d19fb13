"""What contract derivation reads from the schema and from a source tool's declared
arguments: keys, states, names, time columns, loan periods, and the parameters built from
them (the key naming the entity row, the scope narrowing it, a row another argument names).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from agent_world.design.offline.contracts import (
    DEFAULT_PERIOD_DAYS,
    GENERIC_TOKENS,
    STATE_VERBS,
    ContractParam,
    Value,
)
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.naming import safe_name, singular, tokens

_PERIOD = re.compile(r"\blasts?\s+(\d+)\s+days?(?:\s*\((\d+)\s+days?\s+for\s+([^)]*)\))?", re.I)


# ---- schema reading ----------------------------------------------------------------------------
def pk_of(table: TableSpec) -> str | None:
    pk = table.primary_key
    return pk[0] if len(pk) == 1 else None


def status_of(table: TableSpec) -> ColumnSpec | None:
    return next((c for c in table.columns if c.enum and c.name in ("status", "state")), None)


def children(spec: EnvSpec, table: TableSpec) -> list[tuple[TableSpec, ColumnSpec]]:
    pk = pk_of(table)
    return [(t, c) for t in spec.tables for c in t.columns
            if c.foreign_key == f"{table.name}.{pk}" and t.name != table.name]


def fk_target(col: ColumnSpec) -> str | None:
    return col.foreign_key.split(".")[0] if col.foreign_key else None


def link_argument(rows: Any, q: ContractParam, value: Any) -> Any:
    """What the source passes for the record a link filter (`child_eq`) finds by its key
    `value`: the column it names it by (a commit's sha) where the filter has one; None: that
    record holds none. `rows`: table name -> its rows."""
    if not q.ref_column:
        return [value] if q.type == "array" else value
    return next((r.get(q.ref_column) for r in rows(q.ref_table or "")
                 if r.get(q.ref_key or "") == value), None)


def linked_pk(spec: EnvSpec, table: str, column: str) -> str:
    """The key of the record `table.column` names (a fine's member_id -> members.id)."""
    return pk_of(spec.table(fk_target(spec.table(table).column(column)) or "")) or "id"


def source_lines(spec: EnvSpec) -> list[str]:
    """The sentences of the source a rule may be stated in (the theme and its tools')."""
    return [spec.theme.description, *spec.theme.raw_descriptions]


def _has(table: TableSpec, name: str) -> bool:
    return any(c.name == name for c in table.columns)


def _words(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", text.lower()):
        out |= {w, singular(w)}
    return out


def _stem(word: str) -> str:
    return re.sub(r"(ing|ed|es|e|s)$", "", word)[:5]


def _lookup_column(table: TableSpec, text_words: set[str]) -> ColumnSpec | None:
    """A unique text column of `table` the text names ("the copy's barcode", "the member's
    card")."""
    for c in table.columns:
        if not c.unique or c.primary_key or c.type != "text":
            continue
        toks = [t for t in tokens(c.name) if t not in GENERIC_TOKENS]
        if toks and any(t in text_words for t in toks):
            return c
    return None


def _name_column(table: TableSpec) -> ColumnSpec | None:
    for n in ("name", "title", "path", "full_name", "label", "subject", "url", "email"):
        c = next((c for c in table.columns if c.name == n and c.type == "text"), None)
        if c is not None:
            return c
    return None


def _json_type(col: ColumnSpec) -> Literal["integer", "number", "string", "boolean"]:
    return {"integer": "integer", "real": "number", "boolean": "boolean"}.get(  # type: ignore[return-value]
        col.type, "string")


def key_type(table: TableSpec, column: str | None) -> Literal["integer", "number", "string",
                                                              "boolean"]:
    """The JSON type of a key argument: its column's (Gmail's label ids are strings)."""
    col = next((c for c in table.columns if c.name == column), None)
    return "integer" if col is None else _json_type(col)


def _now_columns(table: TableSpec) -> list[str]:
    return [c.name for c in table.columns if c.name in ("updated_at", "modified_at")]


def _time_column(table: TableSpec, state: str) -> str | None:
    """The timestamp a record gets on reaching `state` (returned -> returned_at)."""
    for name in (f"{state}_at", f"{state}_on", f"{state.removesuffix('ed')}ed_at"):
        col = next((c for c in table.columns if c.name == name), None)
        if col is not None and col.type in ("datetime", "date", "text"):
            return col.name
    return None


def _time_value(table: TableSpec, column: str) -> Value:
    col = table.column(column)
    return Value(source="today" if col.type == "date" else "now")


def _field_max(spec: EnvSpec, table: str, column: str) -> float | None:
    hints = ((spec.provenance.stats or {}).get("field_hints") or {}).get(table) or {}
    v = (hints.get(column) or {}).get("maximum")
    return float(v) if isinstance(v, int | float) else None


def _pick_state(status: ColumnSpec | None, candidates: tuple[str, ...]) -> str | None:
    if status is None or not status.enum:
        return None
    return next((c for c in candidates if c in status.enum), None)


def _target_state(words: list[str], status: ColumnSpec | None) -> str | None:
    for phrase, states in STATE_VERBS.items():
        n = len(phrase)
        if any(tuple(words[i:i + n]) == phrase for i in range(len(words))):
            hit = _pick_state(status, states)
            if hit:
                return hit
    return None


def _period(spec: EnvSpec, entity: TableSpec, record: TableSpec) -> tuple[int, int | None,
                                                                          str | None]:
    """(days, alternative days, boolean column of `entity` selecting them) from a sentence of
    the source such as "A loan lasts 21 days (7 days for copies marked as new releases)"."""
    noun = singular(record.name)
    for line in source_lines(spec):
        m = _PERIOD.search(line)
        if not m or noun.replace("_", " ") not in line.lower():
            continue
        days = int(m.group(1))
        if m.group(2):
            alt_words = _words(m.group(3))
            col = next((c for c in entity.columns if c.type == "boolean" and
                        all(t in alt_words for t in tokens(c.name) if t not in ("is", "has"))),
                       None)
            if col is not None:
                return days, int(m.group(2)), col.name
        return days, None, None
    return DEFAULT_PERIOD_DAYS, None, None


# ---- arguments -----------------------------------------------------------------------------
def _arg_type(info: dict[str, Any]) -> str:
    return {"integer": "integer", "number": "number", "boolean": "boolean",
            "array": "array"}.get(str(info.get("type")), "string")


def _resolve_ref(spec: EnvSpec, table: TableSpec, column: str | None, jtype: str
                 ) -> tuple[str, str] | None:
    """(table, column) an argument names a row by: a string argument declared against an
    integer id names the row by its name column (a time zone by "Europe/Paris")."""
    pk = pk_of(table)
    if pk is None:
        return None
    col = next((c for c in table.columns if c.name == column), None)
    if col is None:
        return None
    if col.type == "integer" and jtype == "string":
        named = _name_column(table)
        if named is None:
            return None
        return table.name, named.name
    return table.name, col.name


class _Args:
    """The declared arguments of one source tool, read against the schema."""

    def __init__(self, spec: EnvSpec, entity: TableSpec, entry: dict[str, Any]):
        self.spec = spec
        self.entity = entity
        self.raw: dict[str, dict[str, Any]] = dict(entry.get("arguments") or {})
        self.tables = {t.name: t for t in spec.tables}

    def names(self) -> list[str]:
        return list(self.raw)

    def safe(self, arg: str) -> str:
        return safe_name(arg)

    def refs_to(self, table: str) -> list[str]:
        return [a for a, i in self.raw.items() if i.get("role") == "reference"
                and i.get("table") == table]

    def by_role(self, role: str) -> list[str]:
        return [a for a, i in self.raw.items() if i.get("role") == role]


def _param(name: str, role: str, **kw: Any) -> ContractParam:
    return ContractParam(name=name, role=role, **kw)  # type: ignore[arg-type]


def _key_param(spec: EnvSpec, entity: TableSpec, args: _Args, text: set[str],
               used: set[str]) -> ContractParam:
    """The argument naming the entity row: a declared reference to it, else a unique column
    the description names (a barcode), else `<noun>_id`."""
    noun = singular(entity.name)
    for a in args.refs_to(entity.name):
        info = args.raw[a]
        ref = _resolve_ref(spec, entity, info.get("column"), _arg_type(info))
        if ref is not None:
            used.add(a)
            col = entity.column(ref[1])
            return _param(args.safe(a), "key", column=ref[1], ref_table=entity.name,
                          ref_column=ref[1], type=_json_type(col), required=True,
                          description=f"The {noun.replace('_', ' ')}'s {ref[1].replace('_', ' ')}.")
    look = _lookup_column(entity, text) if not args.raw else None
    if look is not None:
        return _param(look.name, "key", column=look.name, ref_table=entity.name,
                      ref_column=look.name, required=True,
                      description=f"{look.name.replace('_', ' ').capitalize()} of the "
                                  f"{noun.replace('_', ' ')}.")
    pk = pk_of(entity) or "id"
    return _param(f"{noun}_id", "key", column=pk, ref_table=entity.name, ref_column=pk,
                  type=key_type(entity, pk), required=True, description=f"Id of the {noun.replace('_', ' ')}.")


def _scope_params(spec: EnvSpec, entity: TableSpec, args: _Args, used: set[str]
                  ) -> list[ContractParam]:
    """References to a container the entity belongs to (a branch's repository): they narrow
    the key lookup, never move the row."""
    out = []
    for a, info in args.raw.items():
        if a in used or info.get("role") != "reference" or info.get("table") == entity.name:
            continue
        parent = args.tables.get(info.get("table") or "")
        if parent is None:
            continue
        fk = next((c for c in entity.columns if fk_target(c) == parent.name), None)
        ref = _resolve_ref(spec, parent, info.get("column"), _arg_type(info))
        if fk is None or ref is None or not info.get("via", "").endswith(fk.name):
            continue
        used.add(a)
        out.append(_param(args.safe(a), "scope", column=fk.name, ref_table=parent.name,
                          ref_column=ref[1], type=_json_type(parent.column(ref[1])),
                          required=bool(info.get("required", True)),
                          description=f"The {singular(parent.name).replace('_', ' ')} "
                                      f"({ref[1].replace('_', ' ')})."))
    return out


def _row_param(spec: EnvSpec, table: TableSpec, name: str, text: set[str], required: bool,
               description: str) -> ContractParam:
    look = _lookup_column(table, text)
    if look is not None:
        return _param(look.name, "row", ref_table=table.name, ref_column=look.name,
                      required=required, description=description + f" (its "
                      f"{look.name.replace('_', ' ')})")
    pk = pk_of(table) or "id"
    return _param(name, "row", ref_table=table.name, ref_column=pk, type=key_type(table, pk),
                  required=required, description=description + " (its id)")
