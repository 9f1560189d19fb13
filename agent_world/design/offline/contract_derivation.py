"""Deriving a source tool's contract: each kind is tried in turn (computations, staging,
extend, transition, move), then the plain kinds here (reads, creates, plain updates and
deletes) built on the tool's plain plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from agent_world.design.offline.contract_computations import _computed, _staging
from agent_world.design.offline.contract_holds import (
    _no_overlap,
    _none_available,
    _require,
    book_parent,
)
from agent_world.design.offline.contract_schema import (
    _Args,
    _json_type,
    _key_param,
    _name_column,
    _param,
    _words,
    children,
    fk_target,
    pk_of,
    status_of,
)
from agent_world.design.offline.contract_state_changes import _extend, _move, _transition
from agent_world.design.offline.contracts import (
    GENERIC_TOKENS,
    SEARCH_WORDS,
    Contract,
    ContractParam,
    Effect,
    Value,
)
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import TableSpec
from agent_world.mining.offline.naming import singular, snake, tokens
from agent_world.mining.offline.vocabulary import SEARCH_ARGS

# ---- derivation ----------------------------------------------------------------------------
# the plain plan of a source tool (source_plans.source_plan), passed in: the planner builds
# on the contracts, not the other way round
SourcePlan = Callable[[EnvSpec, str, dict[str, Any]], Any]


def derive_contract(spec: EnvSpec, tool: str, entry: dict[str, Any],
                    source_plan: SourcePlan) -> Contract | None:
    """The contract of one covered source tool (None: nothing in the schema it can act on);
    `source_plan` gives the plain kinds (lookup, listing, insert, field edit, delete)."""
    tables = {t.name: t for t in spec.tables}
    entity = tables.get(entry.get("table") or "")
    if entity is None or pk_of(entity) is None:
        return None
    words = tokens(tool)
    desc = " ".join(str(entry.get("description") or "").split())
    text = _words(desc) | set(words)
    args = _Args(spec, entity, entry)
    c = Contract(tool=tool, entity=entity.name, verb="list", description=_clip(desc) or
                 tool.replace("_", " ") + ".", source_tool=tool)
    for fn in (_computed, _staging, _extend, _transition, _move, partial(_plain, source_plan)):
        out = fn(spec, c, entity, words, text, desc, args, entry)
        if out is not None:
            return out
    return None


def _clip(text: str, limit: int = 400) -> str:
    """A description cut at its last whole sentence within `limit` characters (mid-word:
    "let the user kno")."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    return cut[:end + 1] if end > 0 else cut.rsplit(" ", 1)[0] + "..."


# -- reads, creates, plain updates and deletes ------------------------------------------------------
def _plain(source_plan, spec, c, entity, words, text, desc, args, entry) -> Contract | None:
    plan = source_plan(spec, c.tool, entry)
    if plan is None:
        return None
    read = not plan.write
    params = [ContractParam(**{k: v for k, v in p.model_dump().items()
                               if k in ContractParam.model_fields}) for p in plan.params]
    c.params = params
    if read:
        if plan.kind == "get":
            c.verb, c.returns = "read_one", "row"
            if not entry.get("arguments"):
                c.params = [_key_param(spec, entity, args, text, set())]
            c.embed = [(t.name, fk.name) for t, fk in children(spec, entity)
                       if singular(t.name) in text or t.name in text][:2]
            # "view loans": the table's plural name is a listing, not one record
            if entity.name in words and not (set(words) & {"get", "show"}):
                c.verb, c.returns = "list", "rows"
                c.params = c.params if entry.get("arguments") else \
                    _list_filters(spec, entity, text, desc)
        else:
            c.verb, c.returns = ("search" if set(words) & SEARCH_WORDS else "list"), "rows"
            # the arena's filters only where the source declares no arguments: a source's
            # list_servers(page, per_page) had become list_servers(limit), fetchRCA(testId)
            # fetchRCA(limit)
            if not any(p.role not in ("limit", "ignore") for p in c.params):
                arena = _list_filters(spec, entity, text, desc) if c.verb == "list" \
                    else _search_params(spec, entity, text, desc)
                c.params = _searched(c.params, arena) if entry.get("arguments") else arena
            c.params = [_sharpened(spec, entity, p, args) for p in c.params]
        c.evidence = [f"{c.verb} {entity.name}"]
        return c
    if plan.kind == "delete":
        c.verb, c.returns = "delete", "deleted"
        c.effects = [Effect(table=entity.name, op="delete", rows="entity")]
        return c
    if plan.kind == "create":
        c.verb, c.returns = "create", "row"
        sets = {p.column: Value(source="arg", arg=p.name) for p in plan.params
                if p.role in ("set", "ref") and p.column}
        sets.update({k: Value(source="const", value=v) for k, v in plan.fixed.items()})
        sets.update({k: Value(source="now") for k in plan.now_columns})
        sets.update({k: Value(source="next_code", column=k, value=entity.name)
                     for k in plan.code_columns})
        c.effects = [Effect(table=entity.name, op="insert", rows="new", set=sets)]
        st = status_of(entity)
        booked, guards = book_parent(spec, entity, c.params,
                                     plan.fixed.get(st.name) if st is not None else None)
        _require(c.params, guards)
        c.effects += booked
        c.guards += guards + _none_available(spec, entity, c.params, desc) + \
            _no_overlap(spec, entity, c.params, desc)
        _require(c.params, c.guards)
        c.options = {"plan": plan.model_dump()}
        c.evidence = [f"inserts one {singular(entity.name)}"] + [e.describe() for e in booked]
        return c
    # a keyed write that is none of the above: set the given fields
    if not any(p.role in ("set", "ref") for p in plan.params):
        return None
    c.verb, c.returns = "update_field", "row"
    c.effects = [Effect(table=entity.name, op="update", rows="entity", set={
        p.column: Value(source="arg", arg=p.name, column=None if p.required else p.column)
        for p in plan.params if p.role in ("set", "ref") and p.column})]
    c.options = {"plan": plan.model_dump()}
    return c


def _searched(params: list[ContractParam], arena: list[ContractParam]) -> list[ContractParam]:
    """A source's own search text (Hostinger's search, a query) as the arena's text match,
    under the source's name; its other arguments as they are."""
    match = next((p for p in arena if p.role in ("like", "any_like")), None)
    if match is None:
        return params
    out, done = [], False
    for p in params:
        if not done and p.role == "ignore" and p.type == "string" and snake(p.name) in SEARCH_ARGS:
            p = match.model_copy(update={"name": p.name, "required": p.required,
                                         "description": p.description or match.description})
            done = True
        out.append(p)
    return out


_GIVEN = ("given_name", "first_name")
_FAMILY = ("family_name", "last_name", "surname")


def _sharpened(spec: EnvSpec, entity: TableSpec, p: ContractParam, args: _Args
               ) -> ContractParam:
    """A listing's filter as the source means it: a `name` matched against the given name
    alone matches the whole name (given or family); a reference to records the entity links
    to through a join table ("clinicians ... filtered by location", clinician_locations)
    filters through that table instead of being ignored."""
    raw = next((i for a, i in args.raw.items() if args.safe(a) == p.name), {})
    if p.role in ("like", "eq") and p.column in _GIVEN and snake(p.name) in (
            "name", "full_name", "query", "q"):
        family = next((col.name for col in entity.columns if col.name in _FAMILY), None)
        if family is not None:
            return p.model_copy(update={"role": "any_like", "columns": [p.column, family],
                                        "column": None, "description": "A fragment of the "
                                        "given or family name."})
    child = spec.table(raw["table"]) if raw.get("role") == "column" and raw.get("table") \
        not in (None, entity.name) and raw["table"] in {t.name for t in spec.tables} else None
    link = next((col.name for col in child.columns if fk_target(col) == entity.name), None) \
        if child is not None else None
    if p.role == "ignore" and raw.get("type") == "array" and link and raw.get("column") in {
            col.name for col in child.columns}:
        # a list of values its records' child rows hold (MUI's fetchDocs(urls): the docs at
        # those URLs, doc_urls.url), not an argument to ignore
        return p.model_copy(update={
            "role": "child_eq", "type": "array", "via_table": child.name, "via_link": link,
            "via_column": raw["column"],
            "description": p.description or f"Only {entity.name.replace('_', ' ')} with one "
                                             f"of these {raw['column'].replace('_', ' ')}s."})
    if p.role == "ignore" and raw.get("role") == "reference" and raw.get("table"):
        target = raw["table"]
        # the association table first (clinician_locations), before a record that happens to
        # hold both (a slot of a clinician at a location)
        for t in sorted(spec.tables, key=lambda t: (
                not (singular(entity.name) in t.name and singular(target) in t.name),
                len(t.columns), t.name)):
            mine = next((col.name for col in t.columns if fk_target(col) == entity.name), None)
            theirs = next((col.name for col in t.columns if fk_target(col) == target), None)
            if t.name not in (entity.name, target) and mine and theirs:
                # the record named as the source names it (git_branch(contains=<sha>): the
                # commit by its sha, not its row id), and "not_contains" the rows not linked
                by = raw.get("column")
                named = spec.table(target).column(by) if by and by in {
                    c.name for c in spec.table(target).columns} else None
                by = by if named is not None and not named.primary_key else None
                negate = snake(p.name).startswith(("not_", "exclude_"))
                what = f"{singular(target).replace('_', ' ')}" + (f" (by its {by})" if by else "")
                return p.model_copy(update={
                    "role": "child_eq", "via_table": t.name, "via_link": mine,
                    "via_column": theirs, "ref_table": target if by else None, "ref_column": by,
                    "ref_key": t.column(theirs).foreign_key.split(".")[1] if by else None,
                    "negate": negate,
                    "type": _json_type(named if by else t.column(theirs)),
                    "description": f"Only {entity.name.replace('_', ' ')} "
                                   f"{'not ' if negate else ''}linked to this {what} "
                                   f"({t.name})."})
    return p


def _list_filters(spec: EnvSpec, entity: TableSpec, text: set[str], desc: str
                  ) -> list[ContractParam]:
    """Filters a listing tool takes: its parents (the member whose loans), its state."""
    out = []
    for col in entity.columns:
        parent = fk_target(col)
        if parent and not col.primary_key and parent != entity.name:
            out.append(_param(col.name, "eq", column=col.name, type=_json_type(col),
                              description=f"Only {entity.name.replace('_', ' ')} of this "
                                          f"{singular(parent).replace('_', ' ')}."))
    mentioned = [p for p in out if singular(fk_target(entity.column(p.column or "")) or "")
                 in text]
    out = (mentioned or out)[:2]
    if re.search(r"\b(their|my)\b", desc, re.I) and mentioned:
        out[0].required = True
    st = status_of(entity)
    if st is not None:
        out.append(_param(st.name, "eq", column=st.name, enum=list(st.enum or []),
                          description=f"Only {entity.name.replace('_', ' ')} in this "
                                      f"{st.name}."))
    out.append(_param("limit", "limit", type="integer", default=20,
                      description="Maximum number of results."))
    return out


def _search_params(spec: EnvSpec, entity: TableSpec, text: set[str], desc: str
                   ) -> list[ContractParam]:
    """A search's arguments from its description: "by title, author, ISBN or subject" is one
    text matched against those columns; "filters for branch and availability" are a branch
    holding an item of the entity and an item in the available state."""
    cols = [c.name for c in entity.columns if c.type == "text" and not c.enum
            and not c.primary_key and any(t in text or singular(t) in text
                                          for t in tokens(c.name) if t not in GENERIC_TOKENS)]
    if not cols:
        named = _name_column(entity)
        cols = [named.name] if named else []
    out: list[ContractParam] = []
    if cols:
        out.append(_param("query", "any_like", columns=cols, required=False,
                          description="Text to find in the " + ", ".join(
                              c.replace("_", " ") for c in cols) + " (case-insensitive)."))
    for t, fk in children(spec, entity):
        for col in sorted(t.columns, key=lambda c: not c.name.startswith("current_")):
            parent = fk_target(col)
            if parent and parent != entity.name and singular(parent) in text and \
                    not any(p.name == f"{singular(parent)}_id" for p in out):
                out.append(_param(f"{singular(parent)}_id", "child_eq", type=_json_type(col),
                                  via_table=t.name, via_link=fk.name, via_column=col.name,
                                  description=f"Only {entity.name} with a {singular(t.name)} "
                                              f"at this {singular(parent)}."))
        st = status_of(t)
        if st is not None and "available" in (st.enum or []) and \
                ({"availability", "available"} & text):
            out.append(_param("available", "child_state", type="boolean", via_table=t.name,
                              via_link=fk.name, via_column=st.name, via_value="available",
                              description=f"True: only {entity.name} with an available "
                                          f"{singular(t.name)}; false: only those without."))
    out.append(_param("limit", "limit", type="integer", default=20,
                      description="Maximum number of results."))
    return out


__all__ = ["derive_contract"]
