"""Plans from the schema: for every entity table a lookup, a filtered listing, a search, counts
by status, a summary of a measure, and the writes (create, set status, verb actions, update,
delete), each refusing what the table's states and holds forbid.
"""

from __future__ import annotations

import re
from typing import Any

from agent_world.design.offline.contract_holds import held_values, holds_of
from agent_world.design.offline.contracts import BUSY_STATES, FREE_STATES, final_states
from agent_world.design.offline.plans import (
    AUTO_COLUMNS,
    TERMINAL,
    VERB_STATUS,
    ParamPlan,
    ToolPlan,
    _column_param,
    _key_param,
    _limit_param,
    _settable,
    _words,
    children_of,
    entity_tables,
    fk_columns,
    is_history,
    name_column,
    next_code,
    pk_column,
    status_column,
)
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.naming import (
    placeholder_name,
    singular,
    tokens,
    with_article,
)
from agent_world.mining.offline.vocabulary import not_additive, past_prefix
from agent_world.mining.semantics.invariants import spec_invariants
from agent_world.mining.semantics.lifecycle_rule import state_rank
from agent_world.mining.semantics.routes import fk_routes
from agent_world.mining.semantics.times import time_group

# ---- plans from the schema ---------------------------------------------------------------------
# tables whose rows are facts or records of what happened, not things a person edits: a
# time zone's offsets and DST transitions (reference data), a logged fetch or conversion
# (activity), a change log (history); and a commit with what belongs to it (its file
# changes), which git never edits once made. Their rows change through the source's own
# tools only (git_commit), if any.
_RECORDED = frozenset({"reference", "activity", "history"})
_IMMUTABLE = frozenset({"commit"})


def _table_kind(spec: EnvSpec, t: TableSpec) -> str | None:
    """What the miner made of the table: core, child, join, reference, activity, history..."""
    return ((spec.provenance.stats or {}).get("table_kinds") or {}).get(t.name)


def _recorded(spec: EnvSpec, t: TableSpec) -> bool:
    kind = _table_kind(spec, t)
    return is_history(t) or kind in _RECORDED or singular(t.name) in _IMMUTABLE or any(
        singular((c.foreign_key or "").split(".")[0]) in _IMMUTABLE and not c.nullable
        and kind != "join" for c in fk_columns(t))


# (table, status column) -> {state: the source tool that sets it}: states a source tool
# reaches with writes to other rows too, which the generic setter leaves to that tool
Owned = dict[tuple[str, str], dict[str, str]]


def schema_plans(spec: EnvSpec, owned: Owned | None = None) -> list[ToolPlan]:
    """Lookups, filters, aggregates and state-changing actions for every entity table;
    `owned`: the states the source's own tools set (see `Owned`)."""
    plans: list[ToolPlan] = []
    for t in entity_tables(spec):
        plans.extend(_table_plans(spec, t, owned or {}))
    return plans


def _table_plans(spec: EnvSpec, t: TableSpec, owned: Owned) -> list[ToolPlan]:
    noun, nouns = singular(t.name), t.name
    pk = pk_column(t)
    assert pk is not None
    out: list[ToolPlan] = []
    status = status_column(t)
    named = name_column(t)
    fks = fk_columns(t)
    if _table_kind(spec, t) != "join":  # nobody looks up "slot visit type 14": a pair is read from its ends
        out.append(ToolPlan(
            name=f"get_{noun}", kind="get", table=t.name, params=[_key_param(t)],
            description=f"Get one {_words(noun)} by id: every field of the record. Refused "
                        f"with an error naming the id when no {_words(noun)} has it."))
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
    # a summary's total must mean something: not the sum of years or of HTTP status codes
    numeric = [c for c in t.columns if c.type in ("real", "integer") and not c.primary_key
               and not c.foreign_key and not c.unique and not not_additive(tokens(c.name))]
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
    if _recorded(spec, t):
        return out
    out.extend(_write_plans(spec, t, status, owned))
    return out


def _write_plans(spec: EnvSpec, t: TableSpec, status: ColumnSpec | None,
                 owned: Owned) -> list[ToolPlan]:
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
        # what the rendered code refuses (an order that is paid still ships)
        final = sorted(final_states(status.enum))
        # a state a source tool sets with writes to other rows is left to it (setting it by
        # hand made two checked-out branches of a repository); one state left to set (a slot
        # is published or held booked) makes a setter that only ever refuses
        taken = owned.get((t.name, status.name), {})
        settable = [s for s in enum if s not in taken]
        out.extend([] if len(settable) < 2 else [ToolPlan(
            name=f"set_{noun}_{status.name}", kind="set_status", table=t.name,
            status_column=status.name,
            params=[_key_param(t), _column_param(status, "set", required=True,
                                                 description=f"The new {status.name}.")
                    .model_copy(update={"enum": settable})],
            now_columns=[c.name for c in t.columns if c.name in ("updated_at", "modified_at")],
            refuse_states=[held] if held is not None else [], holds=holds, clear_outside=clear,
            description=(f"Change the {status.name} of {with_article(noun)}. Refused when the "
                         f"{_words(noun)} already has that {status.name} or is in a final "
                         f"{status.name} ({', '.join(final)})"
                         + _held_note(noun, held) + "."
                         if final else
                         f"Change the {status.name} of {with_article(noun)}. Refused when the "
                         f"{_words(noun)} already has that {status.name}"
                         + _held_note(noun, held) + ".") + _owned_note(taken))])
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
                    description=f"Mark {with_article(noun)} as {value}. Refused when it is already "
                                f"{value}" + (f" or {' or '.join(s for s in final if s != value)}"
                                              if set(final) - {value} else "")
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
            description=f"Edit {with_article(noun)}: set the given fields "
                        f"({', '.join(_words(c.name) for c in editable)}); at least one. "
                        "Refused for an unknown id."))
    children = children_of(spec, t)
    live = sorted({s for h in holds_of(spec, t.name) for s in h.holding}, key=str)
    out.append(ToolPlan(
        name=f"delete_{noun}", kind="delete", table=t.name, params=[_key_param(t)],
        children=children, refuse_states=live if status is not None else [],
        description=f"Delete {with_article(noun)}. Refused while other records refer to it"
                    f"{' (' + ', '.join(sorted({c for c, _ in children})) + ')' if children else ''}"
                    " or when the id is unknown"
                    + (f"; {with_article(noun)} that is {' or '.join(live)} holds what it names and "
                       "is not deleted" if live and status is not None else "") + "."))
    return out


def _owned_note(taken: dict[str, str]) -> str:
    """" Other tools set cancelled or late_cancelled: cancelAppointment." """
    by_tool: dict[str, list[str]] = {}
    for state, tool in taken.items():
        by_tool.setdefault(tool, []).append(str(state))
    note = "; ".join(f"{' or '.join(sorted(states))}: {tool}"
                     for tool, states in sorted(by_tool.items()))
    return f" Other tools set {note}." if note else ""


def _held_note(noun: str, held: Any) -> str:
    return "" if held is None else (f"; {held} is set by the record that holds the "
                                    f"{_words(noun)}, and {with_article(noun)} that is {held} "
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


def _named_state(tool: str, col: ColumnSpec) -> Any:
    """The state a create tool names with its verb: "bookAppointment" makes a booked
    appointment (not the first state that says nothing holds it, checked_in), "reserve_room" a
    reserved one, "register..." a registered one (None: the verb names none)."""
    words = past_prefix(tokens(tool))
    verb = words[0] if words else ""
    enum = list(col.enum or [])
    return next((s for s in (verb + "ed", verb + "d", verb + verb[-1:] + "ed") if verb
                 and s in enum), None)


_CODE = re.compile(r"(?:^|_)(?:mrn|barcode|card_number|account_number|member_number|"
                   r"record_number|reference|ref_code)$")


_SET_LATER = re.compile(r"^(?:set|filled|recorded|stamped) (?:when|once|after|on)\b", re.I)


def _not_yet(c: ColumnSpec, status: ColumnSpec | None) -> bool:
    """A time a new record does not have yet, so no argument of its create: when it was made
    (`placed_at`: now), the time of a later state of its own (an order's `shipped_at`, an
    appointment's `checked_in_at`) or one its source says is set later ("ready_until: set when
    a copy is put aside")."""
    if c.type not in ("date", "datetime"):
        return False
    if c.type == "datetime" and time_group(c.name) == "create":
        return True  # filled with now
    if not c.nullable and c.default is None:
        return False  # a NOT NULL time the call must give (else no create at all)
    stem = re.sub(r"_(at|on|date|time)$", "", c.name)
    states = set(status.enum or []) if status is not None else set()
    return stem in states or bool(_SET_LATER.match(c.description or ""))


def _home_of(t: TableSpec, column: str) -> str | None:
    """`home_branch_id` for `current_branch_id` when both name the same table."""
    if not column.startswith("current_"):
        return None
    home = next((c for c in t.columns if c.name == "home_" + column.removeprefix("current_")),
                None)
    col = next((c for c in t.columns if c.name == column), None)
    return home.name if home is not None and col is not None and col.foreign_key and \
        home.foreign_key == col.foreign_key else None


# a self-reference naming the record a new one is made from
_BASE = re.compile(r"^(base|source|template|origin)_")


def _named_kind(tool: str, col: ColumnSpec) -> Any:
    """The one kind of an enum column the create tool's name says (Teams' send_chat_message
    and send_channel_message write messages of scope 'chats' and 'channels'); None when its
    name says none or several."""
    words = set(tokens(tool))
    said = [v for v in col.enum or [] if isinstance(v, str) and v
            and set(map(singular, tokens(v))) <= words | {singular(w) for w in words}]
    return said[0] if len(said) == 1 else None


def _usual(rows: list[dict[str, Any]], column: str) -> Any:
    """The most common value of an enum column the stored records almost always fill (nine
    in ten); None for one filled only in some states (who cancelled an appointment)."""
    values = [r.get(column) for r in rows]
    filled = [v for v in values if v is not None]
    if not values or len(filled) < 0.9 * len(values):
        return None
    return max(sorted(set(filled), key=str), key=filled.count)


def _default_value(c: ColumnSpec, rows: list[dict[str, Any]], noun: str) -> Any:
    """What a new record holds in a NOT NULL column its caller cannot name; None when
    nothing sensible: the value every stored record has, a yes/no most records have, an
    empty object, or the name an application gives a new thing ("Untitled item"). Never one
    stored record's own text: Figma's create_child had named every new node after the first
    stored one, and Monday's create_item given every item the first item's title."""
    if c.type == "json":
        return {}
    if c.unique:
        return None
    values = [r.get(c.name) for r in rows]
    if values and values[0] is not None and all(v == values[0] for v in values):
        return values[0]
    if c.type == "boolean":
        return _usual(rows, c.name)
    if c.name in _DEFAULT_NAMED and c.type == "text" and not c.foreign_key:
        return placeholder_name(noun)
    return None


# columns a new record gets a placeholder for when its creator says none
_DEFAULT_NAMED = frozenset({"name", "title", "label", "display_name"})


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
            if _not_yet(c, status) or _home_of(t, c.name):
                continue
            # a text no two records share is how one is found (a copy by its barcode)
            required = not c.nullable and c.default is None or c.unique and c.type == "text"
            desc = (f"Id of the {_words(c.foreign_key.split('.')[0])} record."
                    if c.foreign_key else "")
            params.append(_column_param(c, "set", required=required, description=desc))
        params.sort(key=lambda p: not p.required)
    named = {p.column for p in params if p.column}
    copied = {col: [r.via, t.column(r.via).foreign_key.split(".")[0],  # type: ignore[union-attr]
                    r.parent_column] for col, r in routes.items()
              if col not in named and r.via in named}
    for c in t.columns:
        home = _home_of(t, c.name)
        if home and home in named and c.name not in named and c.name not in copied:
            # a new copy is where its home is: current_branch_id starts as home_branch_id
            parent = (t.column(home).foreign_key or "").split(".")
            copied[c.name] = [home, parent[0], parent[1]]
    base = next((c.name for c in t.columns if c.name in named and _BASE.match(c.name)
                 and c.foreign_key == f"{t.name}.{pk_column(t)}"), None)
    if base is not None:
        # a record made from a base one starts where the base is (a branch made from main
        # points at main's head commit)
        for c in t.columns:
            if c.foreign_key and c.name not in named and c.name not in copied \
                    and c.foreign_key.split(".")[0] != t.name:
                copied[c.name] = [base, t.name, c.name]
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
        elif c.enum and (kind := _named_kind(name, c)) is not None:
            fixed[c.name] = kind  # send_chat_message writes a message of scope 'chats'
        elif c.enum and c.default is None and (usual := _usual(rows, c.name)) is not None:
            # a kind every record has (a branch is local or remote): the usual one, so that
            # a listing by kind finds the new record
            fixed[c.name] = usual
        elif not c.nullable and c.default is None:
            value = _default_value(c, rows, noun)
            if value is None:
                return None  # a NOT NULL column nobody can fill
            fixed[c.name] = value
    unique = [c.name for c in t.columns if c.unique and not c.primary_key]
    groups = [list(g) for g in t.unique_together if set(g) <= named]
    if any(not set(g) <= named for g in t.unique_together):
        return None  # a uniqueness rule over columns the caller cannot choose
    return ToolPlan(
        name=name, kind="create", table=t.name, params=params, fixed=fixed,
        now_columns=now_cols, code_columns=codes, copied=copied, unique=unique,
        unique_groups=groups,
        description=f"{_link_phrase(spec, t) or f'Create {with_article(noun)}'} and return the "
                    "new record. Refused when a referenced record does not exist"
                    + (f" or the {', '.join(_words(u) for u in unique)} is already taken"
                       if unique else "") + ".")


def _link_phrase(spec: EnvSpec, t: TableSpec) -> str | None:
    """What a new row of a join table does: "Add a commit to a branch" (branch_commits), not
    "Create a branch commit" (a pair of records is no thing a person creates)."""
    ends = [c.foreign_key.split(".")[0] for c in fk_columns(t)]  # type: ignore[union-attr]
    if _table_kind(spec, t) != "join" or len(ends) != 2:
        return None
    owner = next((e for e in ends if t.name.startswith(singular(e) + "_")), ends[0])
    member = next(e for e in ends if e != owner) if len(set(ends)) == 2 else None
    if member is None:
        return None
    return f"Add {with_article(singular(member))} to {with_article(singular(owner))}"


__all__ = ["create_plan", "schema_plans"]
