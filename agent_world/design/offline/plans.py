"""Tool plans: what each designed tool does, as data, before any code is written.

A `ToolPlan` names the tool, its table, its kind (get, list, count_by, summary, create,
set_status, update, delete) and how each argument binds to the database (a key lookup, an
equality / substring / range filter, a reference resolved through another table, a value
written into a column, a row limit). The renderer turns a plan into toolkit-form code, and the
test writer evaluates the same plan over the seed rows in plain Python: two independent
readings of one intent, so a test does not just record what the code returned.

Planning has two sources: the source's own tools through the coverage map (each covered tool
keeps its name and arguments), then the schema itself (lookups, filters, aggregates and
state-changing actions for every entity table).
"""

from __future__ import annotations

import keyword
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent_world.design.offline.contracts import (
    BUSY_STATES,
    FREE_STATES,
    TERMINAL_STATES,
    Contract,
    ContractParam,
    Hold,
    book_parent,
    derive_contract,
    held_values,
    holds_of,
    plan_contract,
)
from agent_world.envs.spec import ColumnSpec, EnvSpec, TableSpec
from agent_world.mining.offline.naming import plural, safe_name, singular, snake, tokens
from agent_world.mining.offline.vocabulary import READ_VERBS, past_prefix
from agent_world.mining.semantics import fk_routes, spec_invariants, state_rank, time_group

Kind = Literal["get", "list", "count_by", "summary", "create", "set_status", "update", "delete",
               "contract"]
Role = Literal["key", "eq", "like", "ge", "le", "ref", "set", "limit", "ignore"]
WRITE_KINDS = frozenset({"create", "set_status", "update", "delete"})
_PLAIN_ROLES = frozenset({"key", "eq", "like", "ge", "le", "ref", "set", "limit", "ignore"})

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
_VERB_PHRASES = {("check", "in"): "checked_in", ("check", "out"): "checked_out",
                 ("checkin",): "checked_in", ("checkout",): "checked_out"}
CREATE_VERBS = frozenset({"add", "create", "register", "book", "place", "append", "insert",
                          "new", "write", "open", "submit", "make", "log", "record", "enroll",
                          "schedule", "issue", "post", "upload", "commit", "start"})
DELETE_VERBS = frozenset({"delete", "remove", "drop", "purge", "destroy", "unlink"})
# the mining vocabulary's read verbs, and `log` as a read (git_log) where a tool's name is
# planned: mining reads `log` as a write verb ("log a call")
PLAN_READ_VERBS = frozenset(READ_VERBS | {"log"})
SEARCH_VERBS = frozenset({"search", "find", "lookup", "browse", "query"})
LIMIT_ARGS = frozenset({"limit", "max_count", "max_results", "page_size", "count", "top", "n"})
_GE = re.compile(r"(^|_)(start|from|since|after|min)(_|$)")
_LE = re.compile(r"(^|_)(end|to|until|before|max)(_|$)")
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
    contract: Contract | None = None  # what the tool means (kind "contract": rendered from it)

    @property
    def write(self) -> bool:
        if self.kind == "contract":
            return self.contract is not None and self.contract.write
        return self.kind in WRITE_KINDS

    def param(self, role: str) -> ParamPlan | None:
        return next((p for p in self.params if p.role == role), None)


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
    return ParamPlan(name=f"{noun}_id", role="key", column=pk, type="integer", required=True,
                     description=f"Id of the {noun.replace('_', ' ')}.")


def _limit_param(name: str = "limit", default: int = DEFAULT_LIMIT) -> ParamPlan:
    return ParamPlan(name=name, role="limit", type="integer", default=default,
                     description="Maximum number of results.")


_CODE = re.compile(r"(?:^|_)(?:mrn|barcode|card_number|account_number|member_number|"
                   r"record_number|reference|ref_code)$")


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


# ---- plans from the schema ---------------------------------------------------------------------
def schema_plans(spec: EnvSpec) -> list[ToolPlan]:
    """Lookups, filters, aggregates and state-changing actions for every entity table."""
    plans: list[ToolPlan] = []
    for t in entity_tables(spec):
        plans.extend(_table_plans(spec, t))
    return plans


def _table_plans(spec: EnvSpec, t: TableSpec) -> list[ToolPlan]:
    noun, nouns = singular(t.name), t.name
    pk = pk_column(t)
    assert pk is not None
    out: list[ToolPlan] = []
    status = status_column(t)
    named = name_column(t)
    fks = fk_columns(t)
    out.append(ToolPlan(
        name=f"get_{noun}", kind="get", table=t.name, params=[_key_param(t)],
        description=f"Get one {_words(noun)} by id: every field of the record. Refused with "
                    f"an error naming the id when no {_words(noun)} has it."))
    filters: list[ParamPlan] = []
    for c in fks[:2]:
        filters.append(_column_param(c, "eq", description=f"Only {_words(nouns)} whose "
                                     f"{_words(c.name)} is this id."))
    if status is not None:
        filters.append(_column_param(status, "eq", description=f"Only {_words(nouns)} with "
                                     f"this {status.name}."))
    out.append(ToolPlan(
        name=f"list_{nouns}", kind="list", table=t.name, params=[*filters, _limit_param()],
        description=f"List {_words(nouns)} in id order, optionally filtered"
                    f"{' by ' + ', '.join(_words(p.name) for p in filters) if filters else ''}"
                    f"; at most `limit` rows."))
    if named is not None:
        out.append(ToolPlan(
            name=f"search_{nouns}", kind="list", table=t.name,
            params=[ParamPlan(name="query", role="like", column=named.name, required=True,
                              description=f"Text to find in the {_words(named.name)} "
                                          "(case-insensitive substring)."),
                    _limit_param()],
            description=f"Search {_words(nouns)} whose {_words(named.name)} contains the query "
                        "text (case-insensitive), in id order."))
    if status is not None:
        scope = fks[0] if fks else None
        params = [_column_param(scope, "eq", description=f"Only count {_words(nouns)} of this "
                                f"{_words(scope.name)}.")] if scope else []
        out.append(ToolPlan(
            name=f"count_{nouns}_by_{status.name}", kind="count_by", table=t.name,
            group_by=status.name, params=params,
            description=f"Count {_words(nouns)} per {status.name}: an object mapping each "
                        f"{status.name} present to its number of {_words(nouns)}."))
    numeric = [c for c in t.columns if c.type in ("real", "integer") and not c.primary_key
               and not c.foreign_key and not c.unique]
    if numeric:
        m = next((c for c in numeric if c.type == "real"), numeric[0])
        scope = fks[0] if fks else None
        params = [_column_param(scope, "eq", description=f"Only {_words(nouns)} of this "
                                f"{_words(scope.name)}.")] if scope else []
        out.append(ToolPlan(
            name=f"summarize_{nouns}_{m.name}", kind="summary", table=t.name, measure=m.name,
            params=params,
            description=f"Statistics of the {_words(m.name)} of {_words(nouns)}: count of "
                        "records with a value, total (rounded to 2 decimals), minimum and "
                        "maximum."))
    if is_history(t):
        return out
    out.extend(_write_plans(spec, t, status))
    return out


def _write_plans(spec: EnvSpec, t: TableSpec, status: ColumnSpec | None) -> list[ToolPlan]:
    noun = singular(t.name)
    out: list[ToolPlan] = []
    create = create_plan(spec, t, f"create_{noun}")
    if create is not None:
        out.append(create)
    if status is not None:
        # a state only a live record gives (a bike in use): set by that record's tools, never
        # by hand, and a record in it stays until what holds it ends
        held = held_values(spec, t.name).get(status.name)
        holds = holds_of(spec, t.name)
        clear = {i["column"]: list(i["states"]) for i in spec_invariants(spec)
                 if i.get("kind") == "set_only_in" and i.get("table") == t.name
                 and i.get("status_column") == status.name}
        enum = [s for s in status.enum or [] if s != held]
        out.append(ToolPlan(
            name=f"set_{noun}_{status.name}", kind="set_status", table=t.name,
            status_column=status.name,
            params=[_key_param(t), _column_param(status, "set", required=True,
                                                 description=f"The new {status.name}.")
                    .model_copy(update={"enum": enum})],
            now_columns=[c.name for c in t.columns if c.name in ("updated_at", "modified_at")],
            refuse_states=[held] if held is not None else [], holds=holds, clear_outside=clear,
            description=f"Change the {status.name} of a {_words(noun)}. Refused when the "
                        f"{_words(noun)} already has that {status.name} or is in a final "
                        f"{status.name} ({', '.join(sorted(TERMINAL & set(status.enum or [])))})"
                        + _held_note(noun, held) + "."
                        if TERMINAL & set(status.enum or []) else
                        f"Change the {status.name} of a {_words(noun)}. Refused when the "
                        f"{_words(noun)} already has that {status.name}"
                        + _held_note(noun, held) + "."))
        for value in enum:
            verb = next((v for v, s in VERB_STATUS.items() if s == value), None)
            if verb and value in TERMINAL:
                out.append(ToolPlan(
                    name=f"{verb}_{noun}", kind="set_status", table=t.name,
                    status_column=status.name, target_status=value, params=[_key_param(t)],
                    now_columns=[c.name for c in t.columns
                                 if c.name in ("updated_at", "modified_at")],
                    refuse_states=[held] if held is not None else [], holds=holds,
                    clear_outside={c: v for c, v in clear.items() if value not in v},
                    description=f"Mark a {_words(noun)} as {value}. Refused when it is already "
                                f"{value} or in another final {status.name}"
                                + _held_note(noun, held) + "."))
                break
    editable = [c for c in _settable(t) if c.type in ("text", "integer", "real")
                and not c.enum and not c.foreign_key and not c.unique
                and c.name not in (status.name if status else "",)][:4]
    if editable:
        out.append(ToolPlan(
            name=f"update_{noun}", kind="update", table=t.name,
            params=[_key_param(t), *[_column_param(c, "set") for c in editable]],
            now_columns=[c.name for c in t.columns if c.name in ("updated_at", "modified_at")],
            description=f"Edit a {_words(noun)}: set the given fields "
                        f"({', '.join(_words(c.name) for c in editable)}); at least one. "
                        "Refused for an unknown id."))
    children = children_of(spec, t)
    live = sorted({s for h in holds_of(spec, t.name) for s in h.holding}, key=str)
    out.append(ToolPlan(
        name=f"delete_{noun}", kind="delete", table=t.name, params=[_key_param(t)],
        children=children, refuse_states=live if status is not None else [],
        description=f"Delete a {_words(noun)}. Refused while other records refer to it"
                    f"{' (' + ', '.join(sorted({c for c, _ in children})) + ')' if children else ''}"
                    " or when the id is unknown"
                    + (f"; a {_words(noun)} that is {' or '.join(live)} holds what it names and "
                       "is not deleted" if live and status is not None else "") + "."))
    return out


def _held_note(noun: str, held: Any) -> str:
    return "" if held is None else (f"; {held} is set by the record that holds the "
                                    f"{_words(noun)}, and a {_words(noun)} that is {held} "
                                    "keeps it until that record ends")


HOLD_FLAGS = frozenset({"booked", "reserved", "taken", "occupied"})


def _hold_flag(col: ColumnSpec) -> bool:
    return col.type == "boolean" and col.name in HOLD_FLAGS


def _initial_state(col: ColumnSpec, holder: bool = False) -> Any:
    """The state a new record starts in: a free one (available, published, ...), else the
    first initial one (`state_rank` 0) that has not ended. A held record never starts in a
    state that says something holds it; a record that holds another (an appointment its
    slot) starts in its live state ("booked", not "checked_in")."""
    enum = list(col.enum or [])
    free = next((s for s in FREE_STATES if s in enum), None)
    if free is not None:
        return free
    open_ = [s for s in enum if s not in TERMINAL and (holder or s not in BUSY_STATES)]
    return next((s for s in open_ if state_rank(s) == 0), None) or next(
        iter(open_), enum[0] if enum else None)


def newest_first(tool: str, description: str) -> bool:
    """A log or history lists its newest entries first ("git_log ... max_count" kept the
    oldest commits when it listed by ascending id)."""
    words = set(tokens(tool)) | set(re.findall(r"[a-z]+", description.lower())[:12])
    return bool(words & {"log", "logs", "history", "recent", "latest", "newest"})


def _named_state(tool: str, col: ColumnSpec) -> Any:
    """The state a create tool names with its verb: "bookAppointment" makes a booked
    appointment (not the first state that says nothing holds it, checked_in), "reserve_room" a
    reserved one, "register..." a registered one (None: the verb names none)."""
    words = past_prefix(tokens(tool))
    verb = words[0] if words else ""
    enum = list(col.enum or [])
    return next((s for s in (verb + "ed", verb + "d", verb + verb[-1:] + "ed") if verb
                 and s in enum), None)


def create_plan(spec: EnvSpec, t: TableSpec, name: str,
                params: list[ParamPlan] | None = None) -> ToolPlan | None:
    """Insert one row. Without `params` every settable column becomes an argument (required
    when NOT NULL without default); columns no argument names get fixed values."""
    noun = singular(t.name)
    status = status_column(t)
    rows = spec.rows.get(t.name, [])
    # values the container an FK names fixes (not a parent of the same table: a first commit
    # has no parent commit to take its repository from)
    routes = {r.column: r for r in fk_routes(spec.tables) if r.table == t.name
              and r.kind == "via" and r.column != r.via
              and t.column(r.via).foreign_key.split(".")[0] != t.name}  # type: ignore[union-attr]
    if params is None:
        params = []
        for c in _settable(t):
            if status is not None and c.name == status.name or _hold_flag(c) or \
                    c.name in routes and not t.column(routes[c.name].via).nullable:
                continue  # a copied value is the container's, not an argument
            required = not c.nullable and c.default is None
            desc = (f"Id of the {_words(c.foreign_key.split('.')[0])} record."
                    if c.foreign_key else "")
            params.append(_column_param(c, "set", required=required, description=desc))
        params.sort(key=lambda p: not p.required)
    named = {p.column for p in params if p.column}
    copied = {col: [r.via, t.column(r.via).foreign_key.split(".")[0],  # type: ignore[union-attr]
                    r.parent_column] for col, r in routes.items()
              if col not in named and r.via in named}
    fixed: dict[str, Any] = {}
    now_cols: list[str] = []
    codes: list[str] = []
    for c in t.columns:
        if c.primary_key or c.name in named or c.name in copied:
            continue
        if c.name in AUTO_COLUMNS and c.type in ("datetime", "date", "text") or (
                c.type == "datetime" and time_group(c.name) == "create"):
            now_cols.append(c.name)  # created_at, and registered_at of a registration
        elif c.type == "text" and not c.foreign_key and _CODE.search(c.name) and \
                next_code([r.get(c.name) for r in rows]) is not None:
            codes.append(c.name)
        elif status is not None and c.name == status.name:
            fixed[c.name] = _named_state(name, c) or (
                c.default if c.default is not None else _initial_state(
                    c, holder=bool(holds_of(spec, t.name))))
        elif _hold_flag(c):
            fixed[c.name] = False  # nothing holds a new record yet (a new slot is free)
        elif not c.nullable and c.default is None:
            if c.type == "json":
                fixed[c.name] = "{}"
            elif rows and rows[0].get(c.name) is not None and not c.unique:
                fixed[c.name] = rows[0][c.name]
            else:
                return None  # a NOT NULL column nobody can fill
    unique = [c.name for c in t.columns if c.unique and not c.primary_key]
    groups = [list(g) for g in t.unique_together if set(g) <= named]
    if any(not set(g) <= named for g in t.unique_together):
        return None  # a uniqueness rule over columns the caller cannot choose
    return ToolPlan(
        name=name, kind="create", table=t.name, params=params, fixed=fixed,
        now_columns=now_cols, code_columns=codes, copied=copied, unique=unique,
        unique_groups=groups,
        description=f"Create a {_words(noun)} and return the new record. Refused when a "
                    "referenced record does not exist"
                    + (f" or the {', '.join(_words(u) for u in unique)} is already taken"
                       if unique else "") + ".")


# ---- plans from the source's tools (coverage map) ----------------------------------------------
def _verb_tokens(name: str) -> list[str]:
    return tokens(name)


def _status_for(words: list[str], status: ColumnSpec | None) -> str | None:
    if status is None or not status.enum:
        return None
    for phrase, value in _VERB_PHRASES.items():
        n = len(phrase)
        if any(tuple(words[i:i + n]) == phrase for i in range(len(words))) and value in status.enum:
            return value
    for w in words:
        value = VERB_STATUS.get(w)
        if value and value in status.enum:
            return value
    return None


def source_plan(spec: EnvSpec, tool_name: str, entry: dict[str, Any]) -> ToolPlan | None:
    """The plan implementing one covered source tool under its own name and arguments."""
    tables = {t.name: t for t in spec.tables}
    table = tables.get(entry.get("table") or "")
    if table is None or pk_column(table) is None or not tool_name.isidentifier() \
            or keyword.iskeyword(tool_name):
        return None
    words = _verb_tokens(tool_name)
    status = status_column(table)
    read_only = entry.get("read_only")
    desc = " ".join(str(entry.get("description") or "").split())[:400]
    if read_only is None:
        read_only = not (set(words) & (CREATE_VERBS | DELETE_VERBS | set(VERB_STATUS))
                         or _status_for(words, status)) and bool(set(words) & PLAN_READ_VERBS)
    params: list[ParamPlan] = []
    used: set[str] = set()
    is_create = not read_only and bool(set(words) & CREATE_VERBS) and not _status_for(words,
                                                                                    status)
    for arg, info in (entry.get("arguments") or {}).items():
        if is_create and info.get("role") == "reference" and info.get("table") == table.name:
            info = _own_reference(table, info)
        p = _source_param(spec, table, arg, info, read_only, words)
        if p.name in used:
            continue
        used.add(p.name)
        params.append(p)
    description = desc or f"{tool_name.replace('_', ' ')}."
    if read_only:
        has_key = any(p.role == "key" for p in params)
        if has_key and all(p.role in ("key", "ignore") for p in params):
            return ToolPlan(name=tool_name, kind="get", table=table.name, params=params,
                            description=description, source_tool=tool_name)
        if not params and (set(words) & {"get", "view", "show", "describe"}) \
                and not (set(words) & {"list", "search"}) and len(spec.rows.get(table.name, [])):
            params = [_key_param(table)]
            return ToolPlan(name=tool_name, kind="get", table=table.name, params=params,
                            description=description, source_tool=tool_name)
        params = [p if p.role != "key" else p.model_copy(update={"role": "eq"}) for p in params]
        if set(words) & SEARCH_VERBS:
            params = [p.model_copy(update={"role": "like", "enum": None, "pattern": None})
                      if p.role == "eq" and p.type == "string" and not p.enum
                      and p.column != pk_column(table) else p for p in params]
        return ToolPlan(name=tool_name, kind="list", table=table.name, params=params,
                        description=description, source_tool=tool_name)
    # writes
    target = _status_for(words, status)
    key = next((p for p in params if p.role == "key"), None)
    sets = [p for p in params if p.role in ("set", "ref")]
    if set(words) & DELETE_VERBS and not target:
        if key is None:
            params = [_key_param(table), *params]
        return ToolPlan(name=tool_name, kind="delete", table=table.name, params=params,
                        children=children_of(spec, table), description=description,
                        source_tool=tool_name)
    now = [c.name for c in table.columns if c.name in ("updated_at", "modified_at")]
    if target and (key is not None or not (set(words) & CREATE_VERBS)):
        if key is None:
            params = [_key_param(table), *params]
        return ToolPlan(name=tool_name, kind="set_status", table=table.name, params=params,
                        status_column=status.name if status else None, target_status=target,
                        now_columns=now, description=description, source_tool=tool_name)
    if key is not None:
        if not sets:
            # an action with nothing to write but its timestamp: record that it happened
            if not now:
                return None
        return ToolPlan(name=tool_name, kind="update", table=table.name, params=params,
                        now_columns=now, description=description, source_tool=tool_name)
    creating = [p.model_copy(update={"role": "set"}) if p.role == "eq" else p for p in params]
    if not any(p.role in ("set", "ref") for p in creating) and not entry.get("arguments"):
        plan = create_plan(spec, table, tool_name)
        return plan.model_copy(update={"description": description, "source_tool": tool_name}) \
            if plan else None
    plan = create_plan(spec, table, tool_name, params=creating)
    if plan is None:
        return None
    return plan.model_copy(update={"description": description, "source_tool": tool_name})


def _own_reference(table: TableSpec, info: dict[str, Any]) -> dict[str, Any]:
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


def _source_param(spec: EnvSpec, table: TableSpec, arg: str, info: dict[str, Any],
                  read_only: bool, words: list[str]) -> ParamPlan:
    name = safe_name(arg)
    role_in = info.get("role")
    jtype = {"integer": "integer", "number": "number", "boolean": "boolean"}.get(
        str(info.get("type")), "string")
    required = bool(info.get("required"))
    desc = f"{_words(snake(arg)).capitalize()}."
    enum = [str(e) for e in info["enum"]] if isinstance(info.get("enum"), list) else None
    base = ParamPlan(name=name, role="ignore", type=jtype, required=required, description=desc)
    tables = {t.name: t for t in spec.tables}
    if role_in == "control":
        if snake(arg) in LIMIT_ARGS and jtype == "integer":
            return base.model_copy(update={"role": "limit", "default": DEFAULT_LIMIT,
                                           "required": False})
        return base.model_copy(update={"required": False})
    col_table = tables.get(info.get("table") or "")
    column = info.get("column")
    if role_in == "column" and col_table is not None and col_table.name == table.name \
            and column in {c.name for c in table.columns}:
        col = table.column(column)
        if col.type == "json" or jtype not in ("string", json_type(col)) and \
                not (jtype == "string" and col.type in ("date", "datetime", "text")):
            return base
        role: Role = "eq" if read_only else "set"
        if col.primary_key:
            role = "key"
        return base.model_copy(update={
            "role": role, "column": column, "type": json_type(col),
            "enum": list(col.enum) if col.enum and (enum is None or set(enum) <= set(col.enum))
            else None})
    if role_in == "self_reference":
        return base.model_copy(update={"role": "ref", "column": info["fk"],
                                       "ref_table": table.name, "ref_column": column,
                                       "type": "string"})
    if role_in == "filter" and col_table is not None and col_table.name == table.name:
        snake_arg = snake(arg)
        role = "ge" if _GE.search(snake_arg) else "le" if _LE.search(snake_arg) else "eq"
        return base.model_copy(update={"role": role, "column": column, "type": "string"})
    if role_in == "reference" and col_table is not None and column:
        if col_table.name == table.name:
            if column == pk_column(table):
                return base.model_copy(update={"role": "key", "column": column,
                                               "type": "integer"})
            col = table.column(column)
            return base.model_copy(update={"role": "key", "column": column,
                                           "type": json_type(col)})
        target_pk = pk_column(col_table)
        fk = next((c for c in table.columns if c.foreign_key == f"{col_table.name}.{target_pk}"),
                  None)
        if fk is None or target_pk is None:
            return base
        ref_col = col_table.column(column) if column in {c.name for c in col_table.columns} \
            else None
        if ref_col is None:
            return base
        contains = snake(arg).removeprefix("not_").removeprefix("exclude_")
        parent = next((c.name for c in col_table.columns if c.foreign_key ==
                       f"{col_table.name}.{target_pk}"), None)
        return base.model_copy(update={
            "role": "ref", "column": fk.name, "ref_table": col_table.name,
            "ref_column": column, "type": json_type(ref_col),
            "negate": snake(arg).startswith(("not_", "exclude_")),
            # "contains" a commit: the head is the commit or one of its descendants
            "closure": parent if contains in ("contains", "containing") else None})
    return base


def plan_tools(spec: EnvSpec, max_tools: int = 40) -> tuple[list[ToolPlan], dict[str, str]]:
    """Every covered source tool first (name and arguments kept), then schema tools, at most
    `max_tools` in all with at least 30 % writes. Also (source tool -> why not implemented)."""
    coverage = (spec.provenance.stats or {}).get("tool_coverage") or fallback_coverage(spec)
    plans: list[ToolPlan] = []
    skipped: dict[str, str] = {}
    for name, entry in (coverage.get("tools") or {}).items():
        if not entry.get("covered", True):
            skipped[name] = "not covered by the database: " + "; ".join(entry.get("missing", []))
            continue
        plan = contract_plan(spec, name, entry)
        if plan is None:
            skipped[name] = "no implementable plan (no keyed table or nothing to act on)"
            continue
        plans.append(plan)
    names = {p.name for p in plans}
    extra = [_schema_contract(spec, p) for p in schema_plans(spec) if p.name not in names]
    room = max(0, max_tools - len(plans))
    writes = [p for p in extra if p.write]
    reads = [p for p in extra if not p.write]
    want_writes = max(0, int(0.4 * max_tools) - sum(p.write for p in plans))
    chosen = writes[:min(len(writes), want_writes, room)]
    chosen += reads[:room - len(chosen)]
    if len(chosen) < room:
        chosen += [p for p in writes if p not in chosen][:room - len(chosen)]
    order = {id(p): i for i, p in enumerate(extra)}
    plans.extend(sorted(chosen, key=lambda p: order[id(p)]))
    return plans, skipped


def _schema_contract(spec: EnvSpec, plan: ToolPlan) -> ToolPlan:
    """A schema tool with its contract; a create that books a record (a new appointment's
    slot) takes it, as the source's booking tool does."""
    contract = plan_contract(plan)
    if plan.kind != "create":
        return plan.model_copy(update={"contract": contract})
    table = spec.table(plan.table)
    params = []
    for p in plan.params:
        col = table.column(p.column) if p.column and p.role == "set" else None
        if col is not None and col.foreign_key and p.ref_table is None:
            parent, parent_col = col.foreign_key.split(".")
            p = p.model_copy(update={"ref_table": parent, "ref_column": parent_col})
        params.append(p)
    status = status_column(table)
    booked, guards = book_parent(spec, table, params,
                                 plan.fixed.get(status.name) if status is not None else None)
    named = {g.row for g in guards}
    params = [p.model_copy(update={"required": True}) if p.name in named else p
              for p in params]
    if not booked:
        return plan.model_copy(update={"contract": contract})
    contract = contract.model_copy(update={
        "params": params, "effects": [*contract.effects, *booked], "guards": guards,
        "options": {"plan": plan.model_dump()}})
    return plan.model_copy(update={"kind": "contract", "params": params, "contract": contract})


_NOT = r"(?:not(?: yet)?|never|un)\s*"


def stated_conditions(table: TableSpec, description: str) -> dict[str, list[Any]]:
    """What a listing's description says its rows are: "slots that are published and not yet
    booked" -> status in (published), booked = false. Only the table's own states and flags,
    named as words; a state said with "not" is left out."""
    text = " " + " ".join(description.lower().replace("_", " ").split()) + " "
    if not re.search(r"\b(?:that|which|who) (?:are|is)\b", text):
        return {}
    out: dict[str, list[Any]] = {}
    status = status_column(table)
    if status is not None:
        said = [st for st in status.enum or [] if re.search(
            rf"(?<!not )(?<!not yet )(?<!un)\b{re.escape(st.replace('_', ' '))}\b", text)]
        if said and len(said) < len(status.enum or []):
            out[status.name] = said
    for c in table.columns:
        if c.type == "boolean" and re.search(rf"\b{_NOT}{re.escape(c.name.replace('_', ' '))}\b",
                                             text):
            out[c.name] = [False]
    return out


def contract_plan(spec: EnvSpec, name: str, entry: dict[str, Any]) -> ToolPlan | None:
    """The plan of one source tool, from its behaviour contract: the plain kinds (a lookup, a
    listing, an insert, a field edit, a delete) keep their renderer and test writer; anything
    with coupled effects, guards or a computation is rendered from the contract itself."""
    contract = derive_contract(spec, name, entry, source_plan)
    if contract is None:
        return None
    plain = contract.options.get("plan")
    roles = {p.role for p in contract.params}
    if plain is not None and len(contract.effects) <= 1 and not contract.guards:
        return ToolPlan.model_validate({**plain, "contract": contract})
    if contract.verb in ("read_one", "list", "search") and roles <= _PLAIN_ROLES \
            and not contract.embed and contract.computation is None:
        kind = "get" if contract.verb == "read_one" else "list"
        if kind == "get" and not any(p.role == "key" for p in contract.params):
            return None
        where = stated_conditions(spec.table(contract.entity), contract.description) \
            if kind == "list" else {}
        return ToolPlan(name=name, kind=kind, table=contract.entity,
                        description=contract.description, params=contract.params,
                        where=where, source_tool=name, contract=contract)
    if contract.verb == "delete":
        plan = source_plan(spec, name, entry)
        return plan.model_copy(update={"contract": contract}) if plan else None
    base = ToolPlan.model_validate(plain) if plain is not None else None
    return ToolPlan(name=name, kind="contract", table=contract.entity,
                    description=contract.description, params=contract.params,
                    fixed=base.fixed if base else {}, now_columns=base.now_columns if base else [],
                    code_columns=base.code_columns if base else [],
                    copied=base.copied if base else {}, unique=base.unique if base else [],
                    unique_groups=base.unique_groups if base else [],
                    source_tool=name, contract=contract)


def fallback_coverage(spec: EnvSpec) -> dict[str, Any]:
    """A coverage map from the theme's raw tool descriptions when the mined spec has none:
    each 'name: description' line mapped to the table its name's nouns point at."""
    tables = {t.name for t in spec.tables}
    tools: dict[str, Any] = {}
    for line in spec.theme.raw_descriptions:
        name, _, desc = line.partition(":")
        name = name.strip()
        if not name.isidentifier():
            continue
        table = None
        for w in reversed(tokens(name)):
            for cand in (plural(w), w, plural(singular(w))):
                if cand in tables:
                    table = cand
                    break
            if table:
                break
        tools[name] = {"table": table, "read_only": None, "description": desc.strip(),
                       "arguments": {}, "covered": table is not None,
                       "missing": [] if table else ["no table holds what the tool acts on"]}
    return {"tools": tools}


__all__ = ["DEFAULT_LIMIT", "HASH_COLUMNS", "MAX_ROWS", "ParamPlan", "TERMINAL", "ToolPlan",
           "WRITE_KINDS", "contract_plan", "fallback_coverage", "pk_column", "plan_tools", "schema_plans", "source_plan"]
