"""Tool plans: what each designed tool does, as data, before any code is written.

A `ToolPlan` names the tool, its table, its kind (get, list, count_by, summary, create,
set_status, update, delete) and how each argument binds to the database (a key lookup, an
equality / substring / range filter, a reference resolved through another table, a value
written into a column, a row limit). The renderer turns a plan into toolkit-form code, and the
test writer evaluates the same plan over the seed rows in plain Python: two independent
readings of one intent, so a test does not just record what the code returned.

Planning has two sources: the source's own tools through the coverage map (each covered tool
keeps its name and arguments; source_plans.py), then the schema itself (lookups, filters,
aggregates and state-changing actions for every entity table; schema_plans.py). This module
holds the plan model and the schema helpers both use.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent_world.design.offline.contract_holds import Hold
from agent_world.design.offline.contracts import TERMINAL_STATES, Contract, ContractParam
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.naming import singular, tokens

Kind = Literal["get", "list", "count_by", "summary", "create", "set_status", "update", "delete",
               "contract"]
Role = Literal["key", "eq", "like", "ge", "le", "ref", "set", "limit", "ignore"]
WRITE_KINDS = frozenset({"create", "set_status", "update", "delete"})

# statuses a record does not leave (the rule set_status/verb tools enforce)
TERMINAL = TERMINAL_STATES  # one list of final states for plans and contracts
# columns holding a content hash: a record is named by any prefix of it (git's short shas)
HASH_COLUMNS = frozenset({"sha", "commit_sha", "hash", "commit_hash", "revision"})
# verb of an action tool -> the status it sets
VERB_STATUS = {"cancel": "cancelled", "archive": "archived", "suspend": "suspended",
               "close": "closed", "complete": "completed", "approve": "approved",
               "reject": "rejected", "waive": "waived", "retire": "retired", "pay": "paid",
               "deactivate": "inactive", "activate": "active", "renew": "renewed",
               "collect": "collected", "return": "returned", "expire": "expired",
               "restore": "active", "reactivate": "active", "fail": "failed"}
NAME_COLUMNS = ("name", "title", "full_name", "display_name", "label", "given_name",
                "family_name", "last_name", "first_name", "subject", "path", "url", "email")
AUTO_COLUMNS = frozenset({"created_at", "updated_at", "modified_at", "changed_at"})
MAX_ROWS = 100  # lists without a limit argument return at most this many rows
DEFAULT_LIMIT = 20


# one argument and how it binds (key, filter, value, ...): the contract's parameter model
ParamPlan = ContractParam


class ToolPlan(BaseModel):
    name: str
    kind: Kind
    table: str
    description: str
    params: list[ParamPlan] = Field(default_factory=list)
    fixed: dict[str, Any] = Field(default_factory=dict)  # columns written with fixed values
    now_columns: list[str] = Field(default_factory=list)  # columns written with ctx.now()
    # identifier columns a create assigns: the next code after the stored ones (an MRN, a
    # card number), not NULL
    code_columns: list[str] = Field(default_factory=list)
    # columns a create takes from the container another column names (an appointment's start,
    # clinician and location from its slot): column -> [that FK column, container table, its
    # column]
    copied: dict[str, list[str]] = Field(default_factory=dict)
    group_by: str | None = None  # count_by
    measure: str | None = None  # summary
    status_column: str | None = None  # set_status
    target_status: str | None = None  # set_status with a fixed target (verb tools)
    children: list[tuple[str, str]] = Field(default_factory=list)  # delete: (table, fk column)
    unique: list[str] = Field(default_factory=list)  # create: columns that must stay unique
    unique_groups: list[list[str]] = Field(default_factory=list)  # create: ... together
    source_tool: str | None = None  # the source tool this implements
    # set_status / delete: states the record may not leave or be deleted in (a slot a live
    # appointment holds, a trip in progress); set_status: the parents it holds while live
    refuse_states: list[Any] = Field(default_factory=list)
    holds: list[Hold] = Field(default_factory=list)
    # set_status: a field set only in some states (a cancellation's `cancelled_by`) is cleared
    # when the record moves to another state (column -> those states)
    clear_outside: dict[str, list[Any]] = Field(default_factory=dict)
    # a listing's own conditions, from its description ("slots that are published and not yet
    # booked"): column -> the values it keeps
    where: dict[str, list[Any]] = Field(default_factory=dict)
    # the longest range its bounds may span, as its description says ("within a date range
    # of at most 31 days"): days
    max_span_days: int | None = None
    contract: Contract | None = None  # what the tool means (kind "contract": rendered from it)

    @property
    def write(self) -> bool:
        if self.kind == "contract":
            return self.contract is not None and self.contract.write
        return self.kind in WRITE_KINDS

    def param(self, role: str) -> ParamPlan | None:
        return next((p for p in self.params if p.role == role), None)

    def key_matches(self) -> list[ParamPlan]:
        """The arguments a get, edit or delete finds its record by beside its key (or instead
        of one): the note at (path, sheet, cell) of delete_note, not the first note of `path`;
        a reference (`ref`) names the record it must belong to. An edit's are matches only
        (`eq`, source_acts.as_locators): its references are values it writes."""
        if self.kind == "update":
            return [p for p in self.params if p.role == "eq" and p.column
                    and p.type != "object"]
        if self.kind not in ("get", "delete"):
            return []
        return [p for p in self.params if p.role in ("eq", "ref") and p.column
                and p.type != "object"]


# ---- schema helpers ------------------------------------------------------------------------
def pk_column(table: TableSpec) -> str | None:
    pk = table.primary_key
    return pk[0] if len(pk) == 1 else None


def json_type(col: ColumnSpec) -> str:
    return {"integer": "integer", "real": "number", "boolean": "boolean"}.get(col.type, "string")


def column_pattern(col: ColumnSpec) -> str | None:
    if col.type == "date":
        return r"^\d{4}-\d{2}-\d{2}$"
    return None


def range_bounds(params: list[Any]) -> tuple[Any, Any] | None:
    """The (lower, upper) bound arguments a listing takes on one column (fromDate, toDate)."""
    lo = next((p for p in params if p.role == "ge"), None)
    hi = next((p for p in params if lo is not None and p.role == "le"
               and p.column == lo.column), None)
    return (lo, hi) if hi is not None else None


def status_column(table: TableSpec) -> ColumnSpec | None:
    for c in table.columns:
        if c.enum and c.name in ("status", "state"):
            return c
    return None


def name_column(table: TableSpec) -> ColumnSpec | None:
    cols = {c.name: c for c in table.columns}
    for n in NAME_COLUMNS:
        if n in cols and cols[n].type == "text" and not cols[n].enum:
            return cols[n]
    return None


def own_reference(table: TableSpec, info: dict[str, Any]) -> dict[str, Any]:
    """A create tool's argument declared as a reference to its own table: the new row's
    value of that column (a new branch's name), or, for an id given as text, the row the new
    one derives from (a base branch, by name, through the table's self reference)."""
    col = info.get("column")
    pk = pk_column(table)
    if col and col != pk:
        return {**info, "role": "column"}
    named = name_column(table)
    self_fk = next((c for c in table.columns if c.foreign_key == f"{table.name}.{pk}"), None)
    if self_fk is None or named is None:
        return {**info, "role": "control"}
    return {**info, "role": "self_reference", "column": named.name, "fk": self_fk.name}


def is_history(table: TableSpec) -> bool:
    return table.name.endswith(("_history", "_log", "_logs", "_events", "_audit"))


def children_of(spec: EnvSpec, table: TableSpec) -> list[tuple[str, str]]:
    pk = pk_column(table)
    return [(t.name, c.name) for t in spec.tables for c in t.columns
            if c.foreign_key == f"{table.name}.{pk}"]


def fk_columns(table: TableSpec) -> list[ColumnSpec]:
    return [c for c in table.columns if c.foreign_key and not c.primary_key]


def entity_tables(spec: EnvSpec) -> list[TableSpec]:
    """Tables with a single integer key, the most connected and most populated first."""
    def weight(t: TableSpec) -> tuple[int, int]:
        return (-(len(children_of(spec, t)) + len(fk_columns(t))), -len(spec.rows.get(t.name, [])))

    out = [t for t in spec.tables if pk_column(t) and t.column(pk_column(t)).type == "integer"]
    return sorted(out, key=weight)


def _column_param(col: ColumnSpec, role: Role, *, name: str | None = None,
                  required: bool = False, description: str = "") -> ParamPlan:
    return ParamPlan(name=name or col.name, role=role, column=col.name, type=json_type(col),
                     enum=list(col.enum) if col.enum and role in ("eq", "set") else None,
                     required=required, pattern=column_pattern(col) if role in ("eq", "set")
                     else None,
                     description=description or col.description or
                     f"{col.name.replace('_', ' ').capitalize()}.")


def _key_param(table: TableSpec) -> ParamPlan:
    pk = pk_column(table)
    assert pk is not None
    noun = singular(table.name)
    return ParamPlan(name=f"{noun}_id", role="key", column=pk, type=json_type(table.column(pk)),
                     required=True,
                     description=f"Id of the {noun.replace('_', ' ')}.")


def _limit_param(name: str = "limit", default: int = DEFAULT_LIMIT) -> ParamPlan:
    return ParamPlan(name=name, role="limit", type="integer", default=default,
                     description="Maximum number of results.")


def next_code(values: list[Any]) -> str | None:
    """The code after `values` (stored identifiers of one form, "MRN-0174976"): the same
    prefix and width, one past the largest number; None when they share no such form."""
    found = [re.fullmatch(r"(\D*)(\d+)", v) for v in values if isinstance(v, str)]
    found = [m for m in found if m]
    if not found or len({m.group(1) for m in found}) != 1:
        return None
    width = max(len(m.group(2)) for m in found)
    return f"{found[0].group(1)}{max(int(m.group(2)) for m in found) + 1:0{width}d}"


def _settable(table: TableSpec) -> list[ColumnSpec]:
    """Columns a create/update call gives values for (not the key, not bookkeeping)."""
    return [c for c in table.columns if not c.primary_key and c.type != "json"
            and c.name not in AUTO_COLUMNS and c.name != "deleted_at"]


def _words(text: str) -> str:
    return text.replace("_", " ")


def newest_first(tool: str, description: str) -> bool:
    """A log or history lists its newest entries first ("git_log ... max_count" kept the
    oldest commits when it listed by ascending id)."""
    words = set(tokens(tool)) | set(re.findall(r"[a-z]+", description.lower())[:12])
    return bool(words & {"log", "logs", "history", "recent", "latest", "newest"})


__all__ = ["DEFAULT_LIMIT", "HASH_COLUMNS", "MAX_ROWS", "ParamPlan", "TERMINAL", "ToolPlan",
           "WRITE_KINDS", "newest_first", "next_code", "pk_column"]
