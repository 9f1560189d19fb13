"""Steps 2-6 of the algorithm: `derive_model` turns evidence into a `DomainModel`. Entities from
hints, identifier arguments and tool objects; each tool's primary entity; fields and relations
from its arguments (foreign keys, identifiers, join and child tables, typed scalar columns);
states; and completion (`complete_model`: ids, labels, person name and email, status enums,
timestamps, curated reference columns).
"""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import combinations
from typing import Any

from agent_world.mining.coverage import _output_fields as fields_of
from agent_world.mining.offline.domain import Col, DomainModel, Entity
from agent_world.mining.offline.evidence import Evidence, argument_info, json_type
from agent_world.mining.offline.features import feature_entities, feature_relations
from agent_world.mining.offline.lifecycle import (
    attribute_states,
    set_as_status,
    state_token,
    verb_state,
)
from agent_world.mining.offline.naming import (
    ADDED_LABEL,
    identifier,
    is_person,
    plural,
    singular,
    snake,
    tokens,
)
from agent_world.mining.offline.record_bodies import PAGE_NOUNS
from agent_world.mining.offline.reference_data import CURATED
from agent_world.mining.offline.signatures import (
    REST_RESOURCE,
    RESULT_COLUMNS,
    ArgRole,
    ToolShape,
    classify_argument,
    column_type,
    known_suffix,
    namespace_prefix,
    new_value_field,
    resolve_object,
    search_results,
    tool_shape,
)
from agent_world.mining.offline.vocabulary import (
    ALIASES,
    COMMON_ENTITIES,
    DTO_WORDS,
    FILE_WORDS,
    FILTER_ENUM_DROP,
    LENT_STATES,
    PERSON_NOUNS,
    PERSON_ROLES,
    STATE_WORDS,
    TRANSFORM_VERBS,
    VALUE_ATTRS,
    VALUE_NOUNS,
)
from agent_world.mining.sources.base import SourceDocument


def derive_model(doc: SourceDocument, evidence: list[Evidence]) -> DomainModel:
    """Steps 2-6 of the algorithm: entities, fields, relations and states from the evidence."""
    m = DomainModel()
    tools = [e for e in evidence if e.kind == "tool"]
    tool_docs = {t.name: t for t in doc.tools}
    args_by_tool: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in evidence:
        if e.kind == "argument":
            args_by_tool[e.data["tool"]].append(e.data)
    ns = namespace_prefix(doc.name, [t.data["tool"] for t in tools])

    # (a) entity hints (request/response/error schemas are no entities)
    hints = [e for e in evidence if e.kind == "entity" and not is_dto(e.data["name"])]
    for h in hints:
        m.ensure(h.data["name"], "core", h.data.get("description", "")).from_hint = True
    if not hints:
        feature_entities(m, [e.text for e in evidence if e.kind == "feature"])
    # (b) strong identifier arguments, then tool objects (compounds resolved against what is
    #     known: listPatientAppointments -> appointment in the context of a patient)
    shapes: dict[str, ToolShape] = {t.data["tool"]: tool_shape(
        t.data["tool"], t.data.get("read_only"), ns,
        rest=any(snake(i["argument"]) == "path" for i in args_by_tool[t.data["tool"]]),
        service=doc.name)
        for t in tools}
    for t in tools:
        for info in args_by_tool[t.data["tool"]]:
            role = classify_argument(info, set(m.entities))
            if role.kind == "ref" and role.via != "description" and role.entity and \
                    not role.entity.startswith("@"):
                m.ensure(role.entity, "core")
    singles = {sh.obj for sh in shapes.values() if sh.obj and "_" not in sh.obj}
    written = {sh.obj for sh in shapes.values() if sh.obj and not sh.read}
    known = set(m.entities) | singles
    for t in tools:
        tname = t.data["tool"]
        if search_results(shapes[tname], [i["argument"] for i in args_by_tool[tname]]):
            continue  # brave_local_search: no 'local' record, the results it finds
        shape = shapes[tname] = resolve_object(shapes[tname], known)
        if not shape.obj or shape.obj in VALUE_NOUNS:
            continue
        if shape.read and not args_by_tool[tname] and shape.obj not in m.entities and \
                shape.obj not in written and shape.obj not in COMMON_ENTITIES:
            shapes[tname] = ToolShape(shape.verb, None, shape.value_words, shape.read,
                                      shape.creates, shape.context)
            continue  # search_catalogue(), read_graph(): a view, not a stored entity
        if _returned_entity(m, tool_docs.get(tname), hints) is not None:
            continue  # reportBikeIssue: its record is the documented entity it returns
        m.ensure(shape.obj, "core", t.data.get("description", ""))
    # (d) hint fields first: the documented structure, which the tools then refine
    _hint_fields(m, hints)

    # (c) tools: primary entity, fields and relations
    parents_named: dict[str, list[set[str]]] = defaultdict(list)  # entity -> per create tool
    made: dict[str, list[dict[str, bool]]] = defaultdict(list)  # entity -> per create tool
    for t in tools:
        tname = t.data["tool"]
        shape = shapes[tname]
        infos = args_by_tool[tname]
        known = set(m.entities)
        roles = [classify_argument(i, known) for i in infos]
        for r in roles:
            if r.entity == "@person":
                r.entity = m.person().name
        primary: Entity | None = None
        returned = _returned_entity(m, tool_docs.get(tname), hints)
        from_obj = bool(shape.obj and shape.obj in m.entities) or returned is not None
        results = search_results(shape, [i["argument"] for i in infos])
        if returned is not None:  # reportBikeIssue returns a MaintenanceTicket
            primary = returned
        elif results:  # a web search's records are the pages it finds, not its calls
            primary = m.ensure(results, "core", f"what {tname} finds")
            for col in RESULT_COLUMNS:
                primary.add(Col(col, "text", nullable=col == "snippet"))
            from_obj = True
        elif from_obj:
            primary = m.entities[shape.obj]  # type: ignore[index]
        elif shape.verb in TRANSFORM_VERBS and infos and not shape.recordless:
            noun = "_".join([*shape.value_words, TRANSFORM_VERBS[shape.verb]])
            primary = m.ensure(noun, "activity", f"one record per {tname} call")
        else:
            refs = [r for r in roles if r.kind == "ref" and not r.many and r.via != "description"
                    and r.entity and not r.entity.startswith("@")]
            if refs:
                primary = m.ensure(refs[-1].entity)  # type: ignore[arg-type]
        if primary is None:
            continue
        if not shape.read:
            primary.written = True
        state = verb_state(shape.verb, primary.name, tname, t.data.get("description") or "")
        if state:
            primary.states.append(state)
        creating = shape.creates or primary.kind == "activity"
        if shape.context and primary.kind != "reference":  # list_appointments_by_doctor
            ctx = shape.context
            if ctx in PERSON_ROLES or (ctx in PERSON_NOUNS and ctx not in m.entities):
                ctx = m.person().name
            if ctx in m.entities or ctx in COMMON_ENTITIES:
                m.ensure(ctx)
                if ctx != primary.name and not any(c.fk == ctx for c in primary.cols.values()):
                    m.link(primary, f"{ctx}_id", ctx, False)
        if shape.read and not from_obj:  # get_balance(account_id) -> accounts.balance
            for w in shape.value_words:
                if w in VALUE_ATTRS:
                    primary.add(Col(w, VALUE_ATTRS[w]))
        said = {snake(i["argument"]) for i in infos}
        required_fks: set[str] = set()
        given: dict[str, bool] = {}  # column -> required, for what a create writes
        for info, r in zip(infos, roles, strict=True):
            field = new_value_field(snake(info["argument"]), said)
            if not shape.read and r.kind == "scalar" and field:
                info = {**info, "argument": field}
            linked = _apply_argument(m, primary, shape, info, r, creating, from_obj)
            if linked is not None and creating and info["required"]:
                required_fks.add(linked)
            column = linked or identifier(snake(info["argument"]) or "value", "col")
            given[column] = given.get(column, False) or bool(info["required"])
        if creating:
            parents_named[primary.name].append(required_fks)
            made[primary.name].append(given)
        if shape.obj == REST_RESOURCE and any(snake(i["argument"]) == "path" for i in infos):
            _add_identifier(primary, "path", True, m)  # a REST resource is the one at its path
        if primary.kind != "activity":
            _output_fields(m, primary, tool_docs.get(tname))

    _alternative_parents(m, parents_named)
    _alternative_fields(m, made)

    # (e) states attributed to the entity they are said of
    attribute_states(m, evidence)

    feature_relations(m, [e.text for e in evidence if e.kind == "feature"])

    complete_model(m)
    return m


def is_dto(name: str) -> bool:
    """An OpenAPI request/response/error schema rather than a domain entity."""
    toks = tokens(name)
    return bool(toks) and (toks[-1] in DTO_WORDS and (len(toks) > 1 or toks[-1] in (
        "error", "errors", "problem", "exception", "dto")))


def _alternative_parents(m: DomainModel, parents_named: dict[str, list[set[str]]]) -> None:
    """A record made under one parent or another is made under either: Shortcut's comment on
    a story (stories-create-comment) or on an epic (epics-create-comment), Teams' message in
    a channel or in a chat. Two creates of one entity that each require a parent the other
    does not name make both parents optional; required in both, no create of a story comment
    could run (it had no epic to give)."""
    for name, named in parents_named.items():
        ent = m.entities.get(name)
        if ent is None:
            continue
        for one, other in combinations(named, 2):
            if one - other and other - one:
                for col in one ^ other:
                    c = ent.cols.get(col)
                    if c is not None and not c.declared:
                        c.nullable = True


def _alternative_fields(m: DomainModel, made: dict[str, list[dict[str, bool]]]) -> None:
    """A field one create of an entity requires and another create of it never takes is
    optional: Word's add_footnote_after_text requires the text the footnote follows, and
    add_footnote_to_document, which places it by paragraph, takes none (required, no footnote
    could be added by paragraph)."""
    for name, writes in made.items():
        ent = m.entities.get(name)
        if ent is None:
            continue
        for one, other in combinations(writes, 2):
            for col in {c for c, req in one.items() if req and c not in other} | \
                    {c for c, req in other.items() if req and c not in one}:
                c = ent.cols.get(col)
                if c is not None and not c.declared:
                    c.nullable = True


def _apply_argument(m: DomainModel, primary: Entity, shape: ToolShape, info: dict[str, Any],
                    r: ArgRole, creating: bool, from_obj: bool) -> str | None:
    """Step 4 for one argument of a tool whose primary entity is `primary`; the foreign key
    of `primary` it links, if any."""
    required = bool(info["required"]) and creating
    arg = snake(info["argument"]) or "value"
    if r.kind == "scalar" and set_as_status(shape.value_words, arg, info["enum"]):
        # Chatwork's update_room_task_status(body: open|done) sets the task's status: its
        # tasks' body (their text) had held 'open' and 'done'
        primary.states.extend(state_token(str(e).lower()) for e in info["enum"])
        return None
    if singular(arg) == primary.name and r.kind in ("filter", "scalar") and \
            info["type"] == "string":  # write_query(query), append_insight(insight)
        _scalar(primary, "content", {**info, "enum": None}, required)
        return
    if r.kind == "filter":
        return
    if r.kind == "ref" and r.entity:
        target = primary.name if r.entity == "@self" else singular(r.entity)
        m.ensure(target)
        if target == primary.name:
            if r.role:  # base_branch / parent -> self reference
                primary.add(Col(f"{r.role}_{target}_id" if r.role != "parent" else "parent_id",
                                "integer", fk=target, description=info["description"]))
            elif r.ident:
                _add_identifier(primary, r.ident, required, m)
            elif r.via == "description" and creating and arg in _LABELS:
                # "Workflow name" of create_workflow(name) is the new workflow's own name (no
                # column had held it, and the argument was bound to the project's name)
                _scalar(primary, arg, info, required)
            return None
        related = any(c.fk == target for c in primary.cols.values()) or \
            f"{primary.name}_{plural(target)}" in m.entities or \
            f"{target}_{plural(primary.name)}" in m.entities
        if shape.read and related and not r.role:
            return  # a filter over a relation the schema already has
        if r.many or r.via == "description":
            m.join(primary.name, target)
            return
        col = arg if (arg.endswith("_id") or r.via == "numbered") and not r.role else (
            f"{r.role}_{target}_id" if r.role else f"{target}_id")
        if singular(arg.removesuffix("_id")) in PERSON_ROLES and arg.endswith("_id"):
            col = arg
        m.link(primary, col, target, required, info["description"])
        if r.ident:
            _add_identifier(m.entities[target], r.ident, False, m)
        linked = primary.cols.get(identifier(col, "col"))
        return linked.name if linked is not None and linked.fk == target else None
    elif r.kind == "array":
        items = info.get("items") or {}
        if singular(arg) == primary.name and items.get("type") == "object" and \
                items.get("properties"):  # create_entities(entities=[{...}]): bulk create
            known = set(m.entities)
            for k, p in items["properties"].items():
                sub = argument_info(k, p if isinstance(p, dict) else {}, False)
                _apply_argument(m, primary, shape, sub, classify_argument(sub, known),
                                creating, from_obj)
            return
        if singular(arg) == primary.name:
            # a batch of the record itself (plane's issues=["OPS-781"], pinecone's records):
            # its rows are the records, no child table ('issue_issues') repeats them
            return
        _child_table(m, primary, arg, info)
    elif r.kind == "scalar":
        # a reading tool's scalar arguments describe its object's attributes (listDoctors(
        # specialty)); those of a derived view (git_diff(target)) do not, enums always do
        if shape.read and not info["enum"] and primary.kind != "activity" and not from_obj:
            return
        if shape.read and not info["enum"] and primary.from_hint and arg not in primary.cols:
            return  # documented entities: a search argument is a filter, not a new field
        if shape.read and not info["enum"] and re.match(
                r"^(start|end|from|to|since|until|before|after|min|max)(_|$)|_(before|after|"
                r"since|until|from|to)$", arg):
            return  # range filters
        _scalar(primary, arg, info, required and (not shape.read or primary.kind == "activity"))


def _declared_field(m: DomainModel, ent: Entity, spec: dict[str, Any]) -> None:
    """A field the source types (OpenAPI property, PRD field line): its declared type, format,
    enum, uniqueness and requiredness become the column, a reference an FK or join table."""
    fname = identifier(snake(spec["name"]), "field")
    if fname == "id":
        return
    jtype, fmt = spec.get("type"), spec.get("format")
    desc = spec.get("description", "")
    ref = spec.get("references")
    if ref:
        target = identifier(singular(snake(ref)), "entity")
        m.ensure(target)
        if jtype == "array":
            m.join(ent.name, target)
            return
        col = fname if fname.endswith("_id") else f"{fname}_id"
        if target == ent.name:
            ent.add(Col(col, "integer", fk=ent.name))
        else:
            m.link(ent, col, target, bool(spec.get("required")), desc)
        return
    enum = [str(e) for e in spec.get("enum") or []] or None
    if jtype == "array":  # a list of values: a child table, one row per value
        items = {"type": "string", "format": fmt, "properties": {}}
        _child_table(m, ent, fname, {"items": items, "enum": enum, "description": desc})
        return
    if fname in ("status", "state") and enum:
        ent.declared_states = [state_token(e) for e in enum]
        return
    ctype = "text" if enum else column_type(fname, jtype, fmt, desc)
    ent.add(Col(fname, ctype, nullable=not spec.get("required"), unique=bool(spec.get("unique")),
                enum=enum, description=desc[:200], declared=bool(jtype or enum)))


def _returned_entity(m: DomainModel, tool: Any, hints: list[Evidence]) -> Entity | None:
    """The documented entity a tool returns: the hint whose fields its output repeats."""
    if tool is None or not tool.output_schema or not hints:
        return None

    out = {snake(k) for k in fields_of(tool)} - {"id"}
    if len(out) < 3:
        return None
    best, score = None, 0
    for h in hints:
        fields = {snake(f) for f in h.data["fields"]} - {"id"}
        overlap = len(out & fields)
        if overlap > score:
            best, score = h.data["name"], overlap
    if best is None or score < max(3, len(out) * 2 // 3):
        return None
    name = identifier(singular(best), "entity")
    return m.entities.get(name)


def _output_fields(m: DomainModel, primary: Entity, tool: Any) -> None:
    """What a tool returns about its record: typed columns of the record (its own id and
    references to known entities aside)."""
    if tool is None or not tool.output_schema:
        return

    for name, prop in fields_of(tool).items():
        fname = identifier(snake(name), "field")
        if fname in ("id", f"{primary.name}_id") or not isinstance(prop, dict):
            continue
        info = argument_info(name, prop, False)
        if fname.endswith("_id"):
            target = singular(fname.removesuffix("_id"))
            if target in m.entities and target != primary.name:
                m.link(primary, fname, target, False)
            continue
        if info["type"] in ("object", "array"):
            continue
        _declared_field(m, primary, {"name": name, "type": info["type"],
                                     "format": info["format"],
                                     "enum": info["enum"] if info.get("enum_from") == "schema"
                                     else None, "description": info["description"]})


def _hint_fields(m: DomainModel, hints: list[Evidence]) -> None:
    """Step 2a continued: an entity hint's fields become columns and foreign keys (typed as
    declared where the source types them)."""
    for h in hints:
        ent = m.ensure(h.data["name"])
        typed = {identifier(snake(f["name"]), "field"): f
                 for f in h.data.get("field_specs") or []}
        for f in h.data["fields"]:
            if identifier(snake(f), "field") in typed:
                _declared_field(m, ent, typed[identifier(snake(f), "field")])
                continue
            fname = identifier(snake(f), "field")
            if fname == "id":
                continue
            base = fname.removesuffix("_ids").removesuffix("_id")
            if fname.endswith("_ids"):
                m.join(ent.name, singular(base))
                continue
            if not (fname.endswith("_id") or (singular(fname) in m.entities
                                               and singular(fname) != ent.name)):
                _scalar(ent, fname, {"type": None, "format": None, "enum": None,
                                     "description": ""}, fname in ("name", "title", "email"))
                continue
            col = fname if fname.endswith("_id") else f"{singular(base)}_id"
            toks = base.split("_")
            prefix, suffix_ent = known_suffix(toks, set(m.entities))
            if base in ALIASES:
                target, required = ALIASES[base][0], True
            elif singular(base) in m.entities:
                target, required = singular(base), True
            elif suffix_ent and prefix:  # captain_employee_id -> employees
                target, required = suffix_ent, False
            elif singular(base) in PERSON_ROLES or toks[-1] in PERSON_ROLES:
                target, required = m.person().name, False  # owner_id, lead_id -> people
            else:
                target, required = singular(base), True
            m.ensure(target)
            if target == ent.name:
                ent.add(Col(col, "integer", fk=ent.name))
            else:
                m.link(ent, col, target, required)


def _add_identifier(ent: Entity, ident: str, required: bool, m: DomainModel) -> None:
    col = {"id": None, "ids": None, "uuid": "uuid", "number": "number", "email": "email",
           "handle": "handle", "uri": "url"}.get(ident, ident)
    if col is None:
        return
    parents = ent.parents()
    if col == "name" and parents:
        ent.add(Col("name", "text", nullable=False))
        group = [f"{parents[0]}_id" if f"{parents[0]}_id" in ent.cols else next(
            c.name for c in ent.cols.values() if c.fk == parents[0]), "name"]
        if group not in ent.unique_together:
            ent.unique_together.append(group)
    else:
        ent.add(Col(col, "text", nullable=not required and col != "path", unique=True))


def _scalar(ent: Entity, arg: str, info: dict[str, Any], required: bool) -> None:
    if arg in ("id",) or arg in ent.cols and ent.cols[arg].fk:
        return
    enum = [e for e in (info.get("enum") or []) if e.lower() not in FILTER_ENUM_DROP]
    desc = str(info.get("description", "")).lower()
    if arg in ("status", "state") and not re.search(r"\bcode\b|abbreviation|province|"
                                                    r"us state|country", desc):
        if enum:
            ent.states.extend(state_token(e) for e in enum)
        else:
            ent.wants_status = True
        return
    ctype = column_type(arg, info.get("type"), info.get("format"), info.get("description", ""))
    if enum:
        ent.add(Col(arg, "text", nullable=not required, enum=list(dict.fromkeys(enum)),
                    description=info.get("description", "")))
        return
    ent.add(Col(arg, ctype, nullable=not required,
                unique=arg in ("email", "sku", "slug", "isbn", "sha"),
                description=info.get("description", "")[:200]))


def _child_table(m: DomainModel, parent: Entity, arg: str, info: dict[str, Any]) -> None:
    items = info.get("items") or {}
    value = singular(arg)
    name = f"{parent.name}_{plural(value)}"
    head, *rest = value.split("_")
    if rest and head == parent.name.split("_")[-1] and \
            f"{parent.name}_{plural('_'.join(rest))}" not in m.entities:
        # a resource's resource_refs are "resource_refs", not "resource_resource_refs"
        name = f"{parent.name}_{plural('_'.join(rest))}"
    child = m.raw(name, "child", f"{arg} of each {parent.name}")
    child.add(Col(f"{parent.name}_id", "integer", nullable=False, fk=parent.name))
    props = items.get("properties") or {}
    if items.get("type") == "object" and props:
        for k, p in props.items():
            jt, fmt, _ = json_type(p)
            child.add(Col(snake(k) or "value", column_type(snake(k), jt, fmt,
                                                           str(p.get("description", "")))))
        return
    word = value.split("_")[-1]
    if word in FILE_WORDS:
        child.add(Col("path", "text", nullable=False))
    elif word in PERSON_NOUNS or items.get("format") == "email":
        child.add(Col("email", "text", nullable=False))
        child.add(Col("name", "text"))
        child.unique_together.append([f"{parent.name}_id", "email"])
    elif word in ("tag", "label", "keyword", "category"):
        child.add(Col("name", "text", nullable=False))
    elif word in ("url", "link", "uri"):
        # a page's address is of one page: MUI's doc URLs had each named several docs, so a
        # fetch by URL returned pages nothing told apart (a hotel's or a product's URLs stay
        # as they were: generated ones may repeat, and the gate then drops the column)
        child.add(Col("url", "text", nullable=False,
                      unique=parent.name.split("_")[-1] in PAGE_NOUNS))
    else:
        enum = info.get("enum")
        child.add(Col(identifier(value, "value"), "text" if enum else column_type(
            value, items.get("type"), items.get("format")), nullable=False, enum=enum,
            declared=bool(enum)))
        child.unique_together.append([f"{parent.name}_id", identifier(value, "value")])


_LABELS = ("name", "title", "subject", "label", "code", "email", "message", "path", "url",
           "first_name", "sha", "headline", "body", "content", "username", "full_name",
           "given_name", "display_name", "mrn", "isbn", "barcode", "card_number", "sku")


def complete_model(m: DomainModel) -> None:
    for ent in m.entities.values():
        if ent.kind == "reference":
            for cname, ctype, unique in CURATED[ent.name]["columns"]:
                ent.add(Col(cname, ctype, nullable=not unique, unique=unique))
            continue
        if ent.kind in ("join", "child"):
            if ent.kind == "join":
                ent.add(Col("created_at", "datetime", nullable=False))
            continue
        if is_person(ent.name):
            if not any(c in ent.cols for c in ("name", "first_name", "full_name", "given_name",
                                               "display_name")):
                ent.add(Col("name", "text", nullable=False))
            ent.add(Col("email", "text", nullable=True, unique=True))
        elif ent.kind == "core" and not any(c in ent.cols for c in _LABELS) and \
                not ent.parents():
            # roots need a label; children are known by their parents
            ent.add(Col("name", "text", nullable=False, description=ADDED_LABEL))
        if ent.declared_states:
            ent.add(Col("status", "text", nullable=False, enum=list(dict.fromkeys(
                ent.declared_states)), declared=True))
        elif ent.wants_status and not ent.states:
            ent.states = ["active", "inactive", "archived"]
        if ent.states and not ent.declared_states:
            states = list(dict.fromkeys(state_token(s) for s in ent.states))
            # one name for being out on loan, the first the source used ("checked out",
            # "on loan", "borrowed" are one state), which records start in when their
            # lifecycle goes on from it (a loan); alone it is one state of an active record
            # (the checked-out branch)
            lent = [s for s in states if s in LENT_STATES]
            states = [s for s in states if s not in lent[1:]]
            first = next((s for s in STATE_WORDS if s in states and s in (
                "draft", "pending", "scheduled", "booked", "todo", "open", "new", "active")),
                lent[0] if lent and len(states) > 1 else None)
            if first:
                states = [first] + [s for s in states if s != first]
            else:  # only later states were named: records start out active
                states = ["active", *states]
            if len(states) == 1:
                # one state is no status: Gmail's drafts were all 'draft', draw.io's diagrams
                # all 'open' (open_drawio_xml opens the editor), Trello's boards all 'active'
                states = ["active", "inactive", "archived"] if ent.wants_status else []
            if states:
                ent.add(Col("status", "text", nullable=False, enum=states))
        ent.add(Col("created_at", "datetime", nullable=False))
        if ent.kind == "core" and (ent.written or ent.states):
            ent.add(Col("updated_at", "datetime"))
