"""Records that hold others: taking an item opens the record that holds it (a loan), giving
it back closes that record, and a live record holds a parent (a trip its bike, an
appointment its slot) as the spec's invariants declare (`Hold`, booking and freeing it).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from agent_world.design.offline.contract_schema import (
    _has,
    _lookup_column,
    _now_columns,
    _period,
    _row_param,
    _time_column,
    _time_value,
    _words,
    children,
    fk_target,
    pk_of,
    source_lines,
    status_of,
)
from agent_world.design.offline.contracts import (
    FREE_STATES,
    OPEN_STATES,
    ContractParam,
    Effect,
    Guard,
    Value,
)
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.accrual import accrual_rules_in
from agent_world.mining.offline.naming import singular, tokens
from agent_world.mining.semantics.invariants import spec_invariants
from agent_world.mining.semantics.repair import free_value
from agent_world.mining.semantics.times import time_group


def _holders(spec: EnvSpec, entity: TableSpec) -> bool:
    """Whether a child table holds the entity while its record is live (loans hold copies)."""
    return any((st := status_of(t)) is not None and set(st.enum or []) & set(OPEN_STATES)
               and st.name for t, _ in children(spec, entity)
               if not t.name.endswith(("_history", "_log", "_audit")))


def _location_fk(entity: TableSpec) -> ColumnSpec | None:
    return next((c for c in entity.columns if c.foreign_key and c.name.startswith("current_")),
                None)


def _hold_record(spec: EnvSpec, entity: TableSpec, target: str, words: list[str],
                 text: set[str], params: list[ContractParam], guards: list[Guard]
                 ) -> list[Effect]:
    """Taking an item (check out a copy) opens the record that holds it (the loan): a child
    table with a timestamp named after the verb, or with an open state."""
    verb = (set(words) | {w + "ed" for w in words}) - set(tokens(entity.name)) - \
        {singular(entity.name)}
    best = None
    for t, fk in children(spec, entity):
        st = status_of(t)
        if st is None or not (set(st.enum or []) & set(OPEN_STATES)):
            continue
        at = _time_column(t, target) or next(
            (c.name for c in t.columns if c.type in ("datetime", "date")
             and (set(tokens(c.name)) - {"at", "on"}) & verb), None)
        score = (at is not None, len(t.columns))
        if best is None or score > best[0]:
            best = (score, t, fk, at)
    if best is None:
        return []
    _, record, fk, at = best
    st = status_of(record)
    assert st is not None
    open_state = next(s for s in OPEN_STATES if s in (st.enum or []))
    sets: dict[str, Value] = {fk.name: Value(source="entity", column=pk_of(entity))}
    for col in record.columns:
        if col.primary_key or col.name in sets:
            continue
        target_table = fk_target(col)
        if target_table and target_table != entity.name:
            same = next((e.name for e in entity.columns if fk_target(e) == target_table
                         and e.name.startswith("current_")), None) or next(
                (e.name for e in entity.columns if fk_target(e) == target_table), None)
            person = spec.table(target_table)
            if same is not None and not (_lookup_column(person, text) and
                                         singular(target_table) in text):
                sets[col.name] = Value(source="entity", column=same)
            elif not col.nullable or singular(target_table) in text:
                p = _row_param(spec, person, f"{singular(target_table)}_id", text, True,
                               f"The {singular(target_table).replace('_', ' ')}")
                if not any(q.name == p.name for q in params):
                    params.append(p)
                sets[col.name] = Value(source="row", arg=p.name, column=pk_of(person))
        elif col.name == at:
            sets[col.name] = _time_value(record, col.name)
        elif col.name == st.name:
            sets[col.name] = Value(source="const", value=open_state)
        elif col.type in ("date",) and re.match(r"(due|expires|ends)", col.name):
            days, alt, alt_col = _period(spec, entity, record)
            sets[col.name] = Value(source="days_after", value=days, alt_value=alt,
                                   alt_column=alt_col)
        elif col.type == "integer" and col.name.endswith("_count"):
            sets[col.name] = Value(source="const", value=0)
        elif col.name in ("created_at", "updated_at"):
            sets[col.name] = Value(source="now")
    for p in params:  # a person argument that names a row with a state must be in good standing
        if p.role == "row" and p.ref_table:
            pst = status_of(spec.table(p.ref_table))
            if pst is not None and "active" in (pst.enum or []):
                guards.append(Guard(kind="state_in", row=p.name, column=pst.name,
                                    values=["active"], message=f"the "
                                    f"{singular(p.ref_table).replace('_', ' ')} must be active"))
            guards += _owing(spec, p)
    collect = _collect_hold(spec, entity, params, guards)
    return [Effect(table=record.name, op="insert", rows="new", set=sets, coupled=True)] + (
        [collect] if collect else [])


_OWING = re.compile(r"\b([a-z ]+?) with more than (\d+(?:\.\d+)?) in ([a-z]+) ([a-z ]+?) "
                    r"(?:cannot|can't|may not) (?:borrow|check out|rent|book)", re.I)


def _owing(spec: EnvSpec, p: ContractParam) -> list[Guard]:
    """"Members with more than 10.00 in unpaid fines cannot borrow until they pay": taking an
    item is refused for a person whose unpaid rows add up past the limit."""
    for line in source_lines(spec):
        m = _OWING.search(line)
        if m is None or singular(m.group(1).strip().split()[-1]) != singular(p.ref_table or ""):
            continue
        state = m.group(3).lower()
        table = next((t for t in spec.tables if singular(t.name) == singular(
            m.group(4).strip().replace(" ", "_"))), None)
        st = status_of(table) if table is not None else None
        if table is None or st is None or state not in (st.enum or []):
            continue
        link = next((c.name for c in table.columns if fk_target(c) == p.ref_table), None)
        money = sorted((c for c in table.columns if c.type in ("real", "number", "numeric")
                        and not c.foreign_key), key=lambda c: c.name != "amount")
        if link is None or not money:
            continue
        limit = float(m.group(2))
        return [Guard(kind="sum_at_most", row=p.name, table=table.name, link=link,
                      column=money[0].name, where={st.name: [state]}, limit=limit,
                      message=f"the {singular(p.ref_table or '').replace('_', ' ')} owes more "
                              f"than {limit:.2f} in {state} {table.name.replace('_', ' ')}")]
    return []


def _release_records(spec: EnvSpec, entity: TableSpec, target: str, text: set[str],
                     params: list[ContractParam], sets: dict[str, Value]) -> list[Effect]:
    """Giving an item back (check in a copy) closes the open record that held it (its loan) and
    may put the item where it was given back (its current branch)."""
    out = []
    loc = _location_fk(entity)
    if loc is not None and ("branch" in text or "at" in text):
        table = spec.table(fk_target(loc) or "")
        p = _row_param(spec, table, f"{singular(table.name)}_id", set(), True,
                       f"The {singular(table.name).replace('_', ' ')} where it is handed in")
        params.append(p)
        sets[loc.name] = Value(source="row", arg=p.name, column=pk_of(table))
    for t, fk in children(spec, entity):
        st = status_of(t)
        if st is None:
            continue
        closed = next((s for s in ("returned", "closed", "completed") if s in (st.enum or [])),
                      None)
        opened = [s for s in OPEN_STATES if s in (st.enum or [])]
        if closed is None or not opened:
            continue
        close: dict[str, Value] = {st.name: Value(source="const", value=closed)}
        at = _time_column(t, closed)
        if at:
            close[at] = _time_value(t, at)
        for n in _now_columns(t):
            close[n] = Value(source="now")
        out += _charges(spec, t, fk.name, {st.name: opened})
        out.append(Effect(table=t.name, op="update", rows="children", link=fk.name,
                          where={st.name: opened}, set=close, coupled=True))
        break
    ready = _ready_next(spec, entity)
    return out + ([ready] if ready else [])


def _charges(spec: EnvSpec, closed: TableSpec, link: str, live: dict[str, list[Any]]
             ) -> list[Effect]:
    """"An overdue loan accrues a fine of 0.25 per day, capped at the copy's replacement cost":
    closing such a record past its due date charges it (a fine for the days it was late), with
    the record's own references (its member)."""
    due = next((c.name for c in closed.columns if c.type in ("date", "datetime")
                and time_group(c.name) == "due"), None)
    if due is None:
        return []
    out = []
    for table, money, rule in accrual_rules_in(" ".join(source_lines(spec)), spec):
        charge = spec.table(table)
        if fk_target(charge.column(rule["through"])) != closed.name:
            continue
        sets: dict[str, Value] = {rule["through"]: Value(source="child",
                                                         column=pk_of(closed))}
        for c in charge.columns:  # the charge is the borrower's
            if c.foreign_key and c.name not in sets and _has(closed, c.name):
                sets[c.name] = Value(source="child", column=c.name)
        sets[money] = Value(source="accrued", value=rule["rate"], column=due,
                            alt_column=rule.get("cap"))
        st = status_of(charge)
        if st is not None:  # a new charge is owed: unpaid, not paid or waived
            sets[st.name] = Value(source="const", value=next(
                (x for x in (st.enum or []) if x in ("unpaid", "open", "pending", "due")),
                (st.enum or [None])[0]))
        for c in charge.columns:
            if c.name in ("created_at", "updated_at") and c.name not in sets:
                sets[c.name] = Value(source="now")
        out.append(Effect(table=table, op="insert", rows="late", child=closed.name, link=link,
                          where=live, set=sets, coupled=True))
    return out


_READY_NEXT = re.compile(r"\bwhen an? ([a-z ]+?) is (?:returned|checked in|given back)\b[^.]*?"
                         r"\bthe (?:oldest|first|earliest) ([a-z]+) ([a-z ]+?) for (?:that|the|its) "
                         r"([a-z ]+?) is (?:marked|made|set(?: to)?) ([a-z_]+)(?:[^.]*?\b(\d+) days?)?",
                         re.I)


def _ready_next(spec: EnvSpec, entity: TableSpec) -> Effect | None:
    """"When a copy is returned, the oldest waiting hold for that title is marked ready and
    the member has 5 days to collect it": the first such record (by when it was placed) of
    the returned one's parent moves on, with its pick-up deadline."""
    for line in source_lines(spec):
        m = _READY_NEXT.search(line)
        if m is None or singular(m.group(1).strip().replace(" ", "_")) != singular(entity.name):
            continue
        state, target = m.group(2).lower(), m.group(5).lower()
        table = next((t for t in spec.tables if singular(t.name) == singular(
            m.group(3).strip().replace(" ", "_"))), None)
        parent = next((t for t in spec.tables if singular(t.name) == singular(
            m.group(4).strip().replace(" ", "_"))), None)
        st = status_of(table) if table is not None else None
        if table is None or parent is None or st is None or \
                not {state, target} <= set(st.enum or []):
            continue
        via = next((c.name for c in entity.columns if fk_target(c) == parent.name), None)
        link = next((c.name for c in table.columns if fk_target(c) == parent.name), None)
        if via is None or link is None:
            continue
        sets: dict[str, Value] = {st.name: Value(source="const", value=target)}
        due = next((c.name for c in table.columns if c.type in ("date", "datetime")
                    and time_group(c.name) == "due"), None)
        if due and m.group(6):
            sets[due] = Value(source="days_after", value=int(m.group(6)))
        for n in _now_columns(table):
            sets[n] = Value(source="now")
        placed = next((c.name for c in table.columns if c.type in ("date", "datetime")
                       and time_group(c.name) == "create"), None)
        shelf = _shelf_state(entity)
        own = status_of(entity)
        return Effect(table=table.name, op="update", rows="shared", link=link, via=via,
                      where={st.name: [state]}, set=sets, coupled=True,
                      first_by=placed or pk_of(table),
                      then_entity={own.name: Value(source="const", value=shelf)}
                      if shelf and own is not None else {})
    return None


def _shelf_state(entity: TableSpec) -> str | None:
    """The state of an item kept for the person whose hold is ready (a copy on the hold
    shelf), if the item's lifecycle has one."""
    st = status_of(entity)
    return next((s for s in (st.enum or []) if "hold" in s.split("_") or s == "held"),
                None) if st is not None else None


def _collect_hold(spec: EnvSpec, entity: TableSpec, params: list[ContractParam],
                  guards: list[Guard]) -> Effect | None:
    """Taking an item kept on the hold shelf: only the person whose hold on it is ready may
    take it (the shelf state joins the states it is taken from), and their hold is collected."""
    shelf, st = _shelf_state(entity), status_of(entity)
    taken = next((g for g in guards if g.kind == "state_in" and g.row == "entity"
                  and st is not None and g.column == st.name), None)
    if shelf is None or st is None or taken is None or shelf in taken.values:
        return None
    ready = _ready_next(spec, entity)  # the hold a check-in readies is the one collected
    if ready is None:
        return None
    table = spec.table(ready.table)
    (hst,) = ready.where
    kept = ready.set[hst].value  # the state a check-in readied it to
    collected = next((x for x in ("collected", "fulfilled", "completed")
                      if x in (status_of(table).enum or [])), None)  # type: ignore[union-attr]
    person = next(((h, p) for h in table.columns for p in params if p.role == "row"
                   and p.ref_table and fk_target(h) == p.ref_table), None)
    if collected is None or person is None or ready.link is None or ready.via is None:
        return None
    holder, p = person
    taken.values = [*taken.values, shelf]
    taken.message = f"{taken.message} or {shelf}"
    noun = singular(entity.name).replace("_", " ")
    guards.append(Guard(kind="held_for", state=st.name, values=[shelf], table=table.name,
                        link=ready.link, path=[ready.via], where={hst: [kept]},
                        column=holder.name, row=p.name,
                        message=f"the {noun} is kept for another "
                                f"{singular(p.ref_table or '').replace('_', ' ')}'s "
                                f"{singular(table.name).replace('_', ' ')}"))
    sets: dict[str, Value] = {hst: Value(source="const", value=collected)}
    for n in _now_columns(table):
        sets[n] = Value(source="now")
    return Effect(table=table.name, op="update", rows="shared", link=ready.link,
                  via=ready.via, where={hst: [kept]}, where_row={holder.name: p.name},
                  set=sets, coupled=True)


def _free_kept(spec: EnvSpec, entity: TableSpec, target: str) -> list[Effect]:
    """Cancelling a ready hold (or letting it lapse) gives the copy kept for it back to the
    open shelf: one item of the hold's parent still on the hold shelf becomes free."""
    if target not in ("cancelled", "canceled", "expired"):
        return []
    for item in spec.tables:
        ready = _ready_next(spec, item) if item.name != entity.name else None
        if ready is None or ready.table != entity.name or not ready.then_entity:
            continue
        st, shelf = status_of(item), _shelf_state(item)
        free = next((s for s in FREE_STATES if st is not None and s in (st.enum or [])), None)
        if st is None or shelf is None or free is None or ready.link is None:
            return []
        (hst,) = ready.where
        sets: dict[str, Value] = {st.name: Value(source="const", value=free)}
        for n in _now_columns(item):
            sets[n] = Value(source="now")
        return [Effect(table=item.name, op="update", rows="shared", link=ready.via,
                       via=ready.link, where={st.name: [shelf]}, first_by=pk_of(item),
                       set=sets, when={hst: [ready.set[hst].value]}, coupled=True)]
    return []


class Hold(BaseModel):
    """A parent that a live record of a child table holds (a bike its trip in progress, a slot
    its booked appointment), from the spec's declared invariants: while a child row is in one
    of `holding` with `fk` naming the parent, the parent's `held` columns have those values
    (and at most one such child exists); otherwise they have the `free` values."""

    parent: str
    fk: str
    status: str  # the child's status column
    holding: list[Any]
    held: dict[str, Any] = Field(default_factory=dict)  # parent column -> value while held
    free: dict[str, Any] = Field(default_factory=dict)  # ... once nothing holds it
    takes: dict[str, list[Any]] = Field(default_factory=dict)  # ... values it can be taken in


def holds_of(spec: EnvSpec, child: str) -> list[Hold]:
    """The parents a record of `child` holds while live, one per foreign key, in schema order."""
    out: dict[str, Hold] = {}
    tables = {t.name: t for t in spec.tables}
    for inv in spec_invariants(spec):
        kind = inv.get("kind")
        if kind not in ("held_iff", "capacity"):
            continue
        name = inv.get("child") if kind == "held_iff" else inv.get("table")
        parent = inv.get("table") if kind == "held_iff" else inv.get("parent")
        if name != child or parent not in tables:
            continue
        h = out.setdefault(inv["fk"], Hold(
            parent=parent, fk=inv["fk"], holding=list(inv["holding"]),
            status=inv["child_column"] if kind == "held_iff" else inv["column"]))
        if kind != "held_iff":
            continue
        col = tables[parent].column(inv["column"])
        h.held[col.name] = inv["value"]
        h.free[col.name] = free_value(col, inv["value"])
        if inv["value"] is True:
            h.takes[col.name] = [False]
        else:
            free = [s for s in FREE_STATES if s in (col.enum or []) and s != inv["value"]]
            h.takes[col.name] = free[:1] or [h.free[col.name]]
    return [out[c.name] for c in tables[child].columns if c.name in out]


def held_values(spec: EnvSpec, parent: str) -> dict[str, Any]:
    """Columns of `parent` that only a live child record may set (column -> held value)."""
    return {inv["column"]: inv["value"] for inv in spec_invariants(spec)
            if inv.get("kind") == "held_iff" and inv.get("table") == parent}


def _release_parent(spec: EnvSpec, entity: TableSpec, target: str,
                    allowed: list[str]) -> list[Effect]:
    """Ending a booking frees what it booked (a cancelled appointment's slot, an ended trip's
    bike): the parent's held columns go back to their free values. Only from states that
    hold it: a record that never held its parent leaves it alone."""
    out = []
    for h in holds_of(spec, entity.name):
        if target in h.holding or not h.free or not set(allowed) <= set(h.holding):
            continue
        t = spec.table(h.parent)
        sets = {c: Value(source="const", value=v) for c, v in h.free.items()}
        for n in _now_columns(t):
            sets[n] = Value(source="now")
        out.append(Effect(table=t.name, op="update", rows="parent", link=h.fk, set=sets,
                          coupled=True))
    return out


def book_parent(spec: EnvSpec, entity: TableSpec, params: list[ContractParam],
                state: Any = None) -> tuple[list[Effect], list[Guard]]:
    """Creating a live record takes what it holds (an appointment's slot, a trip's bike): the
    parent gets its held values, and a parent not free to take is refused. `state` is the new
    record's state (None: it holds from the start)."""
    effects, guards = [], []
    holds = {h.fk: h for h in holds_of(spec, entity.name)}
    for p in params:
        h = holds.get(p.column or "")
        if h is None or not h.held or (state is not None and state not in h.holding):
            continue
        t = spec.table(h.parent)
        sets = {c: Value(source="const", value=v) for c, v in h.held.items()}
        for n in _now_columns(t):
            sets[n] = Value(source="now")
        effects.append(Effect(table=t.name, op="update", rows="parent", link=h.fk,
                              set=sets, coupled=True))
        noun = singular(h.parent).replace("_", " ")
        for c, values in h.takes.items():
            want = "not " + c if values == [False] else " or ".join(map(str, values))
            guards.append(Guard(kind="state_in", row=p.name, column=c, values=values,
                                message=f"the {noun} must be {want} (nothing may hold it yet)"))
    return effects, guards


_NONE_AVAILABLE = re.compile(r"\bwhen no (\w+) is (available|free|open)\b(?: at (?:their|the|"
                             r"its) (?:chosen )?([\w ]+?))?(?:[.,;]|$)", re.I)


def _none_available(spec: EnvSpec, entity: TableSpec, params: list[ContractParam], desc: str
                    ) -> list[Guard]:
    """"Place a hold on a title when no copy is available at their chosen pickup branch": a
    new record only while no item of what it names is in that state where it says (no
    available copy of the title at the pickup branch)."""
    m = _NONE_AVAILABLE.search(desc)
    if m is None:
        return []
    items = next((t for t in spec.tables if singular(t.name) == singular(m.group(1).lower())),
                 None)
    st = status_of(items) if items is not None else None
    if items is None or st is None or m.group(2).lower() not in (st.enum or []):
        return []
    place = set(_words(m.group(3) or ""))
    match: dict[str, str] = {}
    for p in params:
        col = entity.column(p.column) if p.column and _has(entity, p.column) else None
        parent = fk_target(col) if col is not None else None
        if parent is None:
            continue
        at = [c for c in items.columns if fk_target(c) == parent]
        if not at:
            continue
        if len(at) > 1 or place & set(tokens(col.name)):  # a place: where the item is now
            if not place & set(tokens(col.name)):
                continue
            at.sort(key=lambda c: not c.name.startswith("current_"))
        match[at[0].name] = p.name
    if len(match) < 1 + bool(place):
        return []
    return [Guard(kind="none_where", table=items.name, where={st.name: [m.group(2).lower()]},
                  match=match, message=f"no {singular(items.name).replace('_', ' ')} is "
                                       f"{m.group(2).lower()}" + (f" at the {m.group(3)}"
                                                                  if m.group(3) else ""))]


_OVERLAP = re.compile(r"\b(?:the )?(\w+) already has an? (\w+) (?:at an overlapping time|"
                      r"that overlaps|at the same time)", re.I)


def _span(t: TableSpec) -> list[str] | None:
    """[start, end] columns of a table whose rows are periods (a slot), if it has both."""
    times = [c.name for c in t.columns if c.type in ("datetime", "date")]
    start = next((c for c in times if time_group(c) == "start"), None)
    end = next((c for c in times if time_group(c) == "end"), None)
    return [start, end] if start and end else None


def _no_overlap(spec: EnvSpec, entity: TableSpec, params: list[ContractParam], desc: str
                ) -> list[Guard]:
    """"Fails ... when the patient already has an appointment at an overlapping time": a new
    record is refused while the person named has a live one whose period (its slot's start
    and end) overlaps the period the new one takes."""
    m = _OVERLAP.search(desc)
    if m is None or singular(m.group(2).lower()) != singular(entity.name):
        return []
    person = next((p for p in params if p.ref_table and p.column
                   and singular(p.ref_table) == singular(m.group(1).lower())), None)
    period = next((p for p in params if p.ref_table and p.column and p is not person
                   and _span(spec.table(p.ref_table))), None)
    st = status_of(entity)
    if person is None or period is None or st is None:
        return []
    hold = next((h for h in holds_of(spec, entity.name) if h.fk == period.column), None)
    live = list(hold.holding) if hold else [s for s in OPEN_STATES if s in (st.enum or [])]
    if not live:
        return []
    return [Guard(kind="no_overlap", row=person.name, table=entity.name, link=person.column,
                  column=period.column, arg=period.name, where={st.name: live},
                  path=_span(spec.table(period.ref_table or "")) or [],
                  message=f"the {m.group(1).lower()} already has an "
                          f"{singular(entity.name).replace('_', ' ')} at an overlapping time")]


def _require(params: list[ContractParam], guards: list[Guard]) -> None:
    """The arguments a guard reads are required (a trip needs its bike)."""
    named = {g.row for g in guards} | {a for g in guards for a in g.match.values()}
    for p in params:
        if p.name in named:
            p.required = True


__all__ = ["Hold", "book_parent", "held_values", "holds_of"]
