"""Contracts that change a record's state: extend (renew a loan), move (reschedule an
appointment to another slot) and transitions (check out, cancel, ...), with the coupled
rows a transition changes (the record that holds an item, the one peer in a state).
"""

from __future__ import annotations

import re
from typing import Any

from agent_world.design.offline.contract_holds import (
    _free_kept,
    _hold_record,
    _holders,
    _location_fk,
    _release_parent,
    _release_records,
    holds_of,
)
from agent_world.design.offline.contract_schema import (
    _field_max,
    _has,
    _json_type,
    _key_param,
    _now_columns,
    _param,
    _period,
    _row_param,
    _scope_params,
    _target_state,
    _time_column,
    _time_value,
    _words,
    fk_target,
    key_type,
    pk_of,
    status_of,
)
from agent_world.design.offline.contracts import (
    BUSY_STATES,
    EXTEND_VERBS,
    FREE_STATES,
    OPEN_STATES,
    TERMINAL_STATES,
    Contract,
    ContractParam,
    Effect,
    Guard,
    Value,
    final_states,
)
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import TableSpec
from agent_world.mining.offline.naming import singular
from agent_world.mining.semantics.columns import time_stem

# -- extend (renew) ------------------------------------------------------------------------------
_UP_TO = re.compile(r"\bup to (\w+) times?\b", re.I)
_NUMBERS = {"one": 1, "once": 1, "two": 2, "twice": 2, "three": 3, "four": 4, "five": 5}
_HELD_BY_ANOTHER = re.compile(r"\bunless (?:another|some other|a different) (\w+) holds? "
                              r"(?:the|that|this|a) (\w+)", re.I)


def _fk_path(spec: EnvSpec, start: TableSpec, goal: str, avoid: str) -> list[str] | None:
    """FK columns from `start` to table `goal` (at most two hops, not through `avoid`)."""
    for col in start.columns:
        if fk_target(col) == goal:
            return [col.name]
    for col in start.columns:
        mid = fk_target(col)
        if mid in (None, start.name, avoid):
            continue
        nxt = next((c.name for c in spec.table(mid).columns if fk_target(c) == goal), None)
        if nxt is not None:
            return [col.name, nxt]
    return None


def _held_by_another(spec: EnvSpec, entity: TableSpec, desc: str) -> Guard | None:
    """"Renew a loan ... unless another member holds the title": refused while a live hold of
    the loan's title (reached through its copy) belongs to another member."""
    m = _HELD_BY_ANOTHER.search(desc)
    if m is None:
        return None
    who, what = singular(m.group(1).lower()), singular(m.group(2).lower())
    people = next((t.name for t in spec.tables if singular(t.name) == who), None)
    target = next((t.name for t in spec.tables if singular(t.name) == what), None)
    mine = next((c.name for c in entity.columns if people and fk_target(c) == people), None)
    if people is None or target is None or mine is None:
        return None
    for t in spec.tables:
        link = next((c.name for c in t.columns if fk_target(c) == target), None)
        owner = next((c.name for c in t.columns if fk_target(c) == people), None)
        st = status_of(t)
        if t.name in (entity.name, target) or not link or not owner or st is None:
            continue
        path = _fk_path(spec, entity, target, people)
        live = [s for s in st.enum or [] if s not in final_states(st.enum)]
        if path and live:
            return Guard(kind="none_held", table=t.name, link=link, column=owner, arg=mine,
                         path=path, where={st.name: live},
                         message=f"another {who.replace('_', ' ')} holds the "
                                 f"{what.replace('_', ' ')}")
    return None


def _extend(spec, c, entity, words, text, desc, args, entry) -> Contract | None:
    if not (set(words) & EXTEND_VERBS):
        return None
    due = next((col for col in entity.columns if col.type in ("date", "datetime") and
                re.match(r"(due|expires|ends|valid_until)", col.name)), None)
    if due is None:
        return None
    verb = next(w for w in words if w in EXTEND_VERBS)
    counter = next((col for col in entity.columns if col.type == "integer" and
                    col.name.startswith(verb[:4])), None)
    key = _key_param(spec, entity, args, text, set())
    days, _, _ = _period(spec, entity, entity)
    sets: dict[str, Value] = {due.name: Value(source="days_after", column=due.name, value=days)}
    if counter is not None:
        sets[counter.name] = Value(source="increment", column=counter.name, value=1)
    for n in _now_columns(entity):
        sets[n] = Value(source="now")
    c.verb, c.returns = "update_field", "row"
    c.params = [key]
    c.effects = [Effect(table=entity.name, op="update", rows="entity", set=sets)]
    status = status_of(entity)
    guards = []
    if status is not None and status.enum:
        open_states = [s for s in status.enum if s not in TERMINAL_STATES]
        guards.append(Guard(kind="state_in", column=status.name, values=open_states,
                            message=f"the {singular(entity.name)} must not be "
                                    f"{' or '.join(sorted(set(status.enum) - set(open_states)))}"))
    ended = next((col.name for col in entity.columns if col.name in
                  ("returned_at", "closed_at", "ended_at", "cancelled_at")), None)
    if ended:
        guards.append(Guard(kind="state_in", column=ended, values=[None],
                            message=f"{ended.replace('_', ' ')} must be empty"))
    if counter is not None:
        limit = _field_max(spec, entity.name, counter.name)
        m = _UP_TO.search(desc)
        if limit is None and m:
            limit = _NUMBERS.get(m.group(1).lower()) or (int(m.group(1))
                                                        if m.group(1).isdigit() else None)
        if limit is not None:
            guards.append(Guard(kind="below", column=counter.name, limit=limit,
                                message=f"{counter.name.replace('_', ' ')} must be below "
                                        f"{int(limit)}"))
    held = _held_by_another(spec, entity, desc)
    if held is not None:
        guards.append(held)
    c.guards = guards
    c.evidence = [f"{verb} moves {due.name} by {days} days" +
                  (f" and raises {counter.name}" if counter is not None else "")]
    return c


# -- moves (reschedule an appointment to another slot) ---------------------------------------------
MOVE_VERBS = frozenset({"move", "reschedule", "rebook", "reassign", "relocate", "swap"})


def _move(spec, c, entity, words, text, desc, args, entry) -> Contract | None:
    """A live record moved to another parent it holds (an appointment to another open slot):
    the old parent is freed, the new one taken (refused unless free, or the same one), and the
    record takes the new parent's time and owners (the slot's start, clinician, location)."""
    if entry.get("read_only") is True or not (set(words) | _words(desc)) & MOVE_VERBS \
            or not args.refs_to(entity.name):
        return None
    holds = {h.fk: h for h in holds_of(spec, entity.name) if h.held}
    target = next(((a, holds[i["via"].split(".", 1)[1]]) for a, i in args.raw.items()
                   if i.get("role") == "reference" and i.get("table") != entity.name
                   and str(i.get("via", "")).startswith(entity.name + ".")
                   and i["via"].split(".", 1)[1] in holds), None)
    status = status_of(entity)
    if target is None or status is None:
        return None
    arg, h = target
    parent = spec.table(h.parent)
    used: set[str] = {arg}
    key = _key_param(spec, entity, args, text, used)
    p = _param(args.safe(arg), "row", ref_table=parent.name, ref_column=pk_of(parent),
               type=key_type(parent, pk_of(parent)), required=True,
               description=f"The {singular(parent.name).replace('_', ' ')} to move to (its id).")
    params = [key, p]
    sets: dict[str, Value] = {h.fk: Value(source="row", arg=p.name, column=pk_of(parent))}
    for col in entity.columns:  # what the record copies from where it sits
        if col.name in sets or col.primary_key or col.name in ("created_at", "updated_at") \
                or not _has(parent, col.name) or parent.column(col.name).type != col.type:
            continue
        if col.foreign_key or col.type in ("datetime", "date"):
            sets[col.name] = Value(source="row", arg=p.name, column=col.name)
    for a, info in args.raw.items():
        if a in used or info.get("role") != "column" or info.get("table") != entity.name \
                or not _has(entity, info.get("column") or "") or info["column"] in sets:
            continue
        col = entity.column(info["column"])
        params.append(_param(args.safe(a), "set", column=col.name, type=_json_type(col),
                             enum=list(col.enum) if col.enum else None,
                             required=bool(info.get("required")),
                             description=f"{col.name.replace('_', ' ').capitalize()}."))
        # an optional argument left out keeps the record's value
        sets[col.name] = Value(source="arg", arg=args.safe(a),
                               column=None if info.get("required") else col.name)
    for n in _now_columns(entity):
        sets[n] = Value(source="now")
    live = [s for s in h.holding if s not in TERMINAL_STATES]
    live = [s for s in live if s in OPEN_STATES] or live
    noun, pnoun = (singular(t).replace("_", " ") for t in (entity.name, parent.name))
    guards = [Guard(kind="state_in", column=status.name, values=live,
                    message=f"the {noun} must be {' or '.join(live)}"),
              Guard(kind="differs", column=h.fk, arg=p.name,
                    message=f"the new {pnoun} must differ from the {noun}'s {pnoun}")]
    guards += [Guard(kind="state_in", row=p.name, column=col, values=values,
                     message=f"the new {pnoun} must be "
                             f"{'not ' + col if values == [False] else ' or '.join(values)}")
               for col, values in h.takes.items()]
    now = {n: Value(source="now") for n in _now_columns(parent)}
    c.verb, c.returns = "update_field", "row"
    c.params = params
    c.effects = [Effect(table=entity.name, op="update", rows="entity", set=sets),
                 Effect(table=parent.name, op="update", rows="parent", link=h.fk, coupled=True,
                        set={**{k: Value(source="const", value=v) for k, v in h.free.items()},
                             **now}),
                 Effect(table=parent.name, op="update", rows="parent", link=h.fk, link_arg=p.name,
                        coupled=True,
                        set={**{k: Value(source="const", value=v) for k, v in h.held.items()},
                             **now})]
    c.guards = guards
    c.evidence = [f"moves the {noun} to another {pnoun}: frees the old one, takes the new one"]
    return c


# -- transitions -----------------------------------------------------------------------------------
def _transition(spec, c, entity, words, text, desc, args, entry) -> Contract | None:
    if entry.get("read_only") is True:
        return None
    status = status_of(entity)
    target = _target_state(words, status)
    if target is None or status is None:
        return None
    if set(words) & {"create", "add", "new", "register"} and not args.refs_to(entity.name):
        return None
    used: set[str] = set()
    key = _key_param(spec, entity, args, text, used)
    params = [key, *_scope_params(spec, entity, args, used)]
    noun = singular(entity.name).replace("_", " ")
    sets: dict[str, Value] = {status.name: _late_notice(entity, status.enum or [], target,
                                                        desc)
                              or Value(source="const", value=target)}
    at = _time_column(entity, target)
    if at:
        sets[at] = _time_value(entity, at)
    for n in _now_columns(entity):
        sets[n] = Value(source="now")
    effects: list[Effect] = []
    guards: list[Guard] = []
    enum = list(status.enum or [])
    final = final_states(enum)
    busy_now = target in BUSY_STATES
    freeing = target in FREE_STATES or target in ("returned", "checked_in")
    if busy_now:
        allowed = [s for s in FREE_STATES if s in enum][:1] or \
            [s for s in enum if s not in final and s != target]
    elif freeing:
        allowed = [s for s in enum if s in BUSY_STATES] or \
            [s for s in enum if s not in final and s != target]
    elif target == "in_transit":
        allowed = [s for s in FREE_STATES if s in enum][:1]
    else:
        allowed = [s for s in enum if s not in final and s != target]
        if _holders(spec, entity):  # ending a copy on loan would strand its loan
            allowed = [s for s in allowed if s not in BUSY_STATES]
    if "before" in text and "collected" in text:  # "cancel ... any time before it is collected"
        allowed = [s for s in allowed if s != "collected"]
    guards.append(Guard(kind="state_in", column=status.name, values=allowed,
                        message=f"the {noun} must be {' or '.join(allowed)}"))
    # declared arguments that write columns of the entity
    for a, info in args.raw.items():
        if a in used:
            continue
        if info.get("role") == "column" and info.get("table") == entity.name \
                and _has(entity, info.get("column") or ""):
            col = entity.column(info["column"])
            params.append(_param(args.safe(a), "set", column=col.name, type=_json_type(col),
                                 enum=list(col.enum) if col.enum else None,
                                 required=bool(info.get("required")),
                                 description=f"{col.name.replace('_', ' ').capitalize()}."))
            # left out, it keeps the record's value ("cancel" without a reason kept none)
            sets[col.name] = Value(source="arg", arg=args.safe(a),
                                   column=None if info.get("required") else col.name)
            used.add(a)
    # "with a written reason": a reason column named after the verb
    reason = next((col for col in entity.columns if col.type == "text" and
                   col.name.endswith("reason") and col.name not in sets), None)
    if reason is not None and "reason" in text and not any(p.column == reason.name
                                                           for p in params):
        params.append(_param("reason", "set", column=reason.name, required=True,
                             description=f"Why the {noun} is {target}."))
        sets[reason.name] = Value(source="arg", arg="reason")
    if busy_now:
        effects += _hold_record(spec, entity, target, words, text, params, guards)
    elif freeing:
        effects += _release_records(spec, entity, target, text, params, sets)
    elif target == "in_transit":
        dest = _location_fk(entity)
        if dest is not None:
            p = _row_param(spec, spec.table(fk_target(dest) or ""), "to_" + singular(
                fk_target(dest) or "") + "_id", set(), True, "Where the " + noun + " goes")
            params.append(p)
            sets[dest.name] = Value(source="row", arg=p.name, column=pk_of(
                spec.table(fk_target(dest) or "")))
            guards.append(Guard(kind="differs", column=dest.name, arg=p.name,
                                message=f"the destination must differ from the {noun}'s "
                                        f"{dest.name.replace('_', ' ')}"))
    effects += _release_parent(spec, entity, target, allowed)
    effects += _free_kept(spec, entity, target)
    exclusive = _exclusive_peers(spec, entity, status.name, target, params,
                                 bool({"switch", "switches"} & text))
    if exclusive is not None:
        effects.append(exclusive)
    c.verb, c.returns = "transition", "row"
    c.params = params
    # the entity's own change last built: the coupled rules above add to `sets`
    c.effects = [Effect(table=entity.name, op="update", rows="entity", set=sets), *effects]
    c.guards = guards
    c.evidence = [f"{'/'.join(allowed)} -> {target}"] + [e.describe() for e in effects]
    return c


_NOTICE = re.compile(r"\bless than (\d+) (hours?|days?) before\b")
_START_STEMS = frozenset({"start", "starts", "begin", "begins", "scheduled", "scheduled_for"})


def _late_notice(entity: TableSpec, enum: list[str], target: str, desc: str) -> Value | None:
    """The state a move takes when its record starts soon: "cancelling less than 24 hours
    before the start is recorded as a late cancellation" -> late_cancelled under 24 hours."""
    m = _NOTICE.search(desc.lower())
    late = f"late_{target}"
    start = next((c.name for c in entity.columns if c.type == "datetime"
                  and time_stem(c.name) in _START_STEMS), None)
    if m is None or late not in enum or start is None:
        return None
    hours = int(m.group(1)) * (24 if m.group(2).startswith("day") else 1)
    return Value(source="notice", value=target, alt_value=late, column=start, hours=hours)


def _exclusive_peers(spec: EnvSpec, entity: TableSpec, status: str, target: str,
                     params: list[ContractParam], switching: bool) -> Effect | None:
    """A state only one row per container holds (the checked-out branch of a repository): the
    peer that held it goes back to the usual state."""
    scope = next((p for p in params if p.role == "scope"), None)
    if scope is None or target in TERMINAL_STATES:
        return None
    rows = spec.rows.get(entity.name, [])
    per: dict[Any, int] = {}
    for r in rows:
        if r.get(status) == target:
            per[r.get(scope.column)] = per.get(r.get(scope.column), 0) + 1
    # switching (git checkout "switches branches") leaves the previous one; otherwise the seed
    # rows say whether the state is one per container
    if not switching and any(n > 1 for n in per.values()):
        return None
    enum = status_of(entity).enum or []  # type: ignore[union-attr]
    back = next((s for s in FREE_STATES if s in enum and s != target), None)
    if back is None:
        return None
    sets: dict[str, Value] = {status: Value(source="const", value=back)}
    for n in _now_columns(entity):
        sets[n] = Value(source="now")
    return Effect(table=entity.name, op="update", rows="peers", link=scope.column,
                  where={status: [target]}, set=sets, coupled=True)
