"""Tool coverage: which tables and columns serve each source tool's arguments and outputs.

After mining, every tool the source describes is matched against the database, on both the
LLM and the offline path (the match reads only the tool's schema and the final tables):

* its **table**: the table of the tool's object noun (``list_appointments`` -> appointments,
  ``git_commit`` -> commits), of its activity record (``convert_time`` -> time_conversions),
  else the table most of its arguments live in;
* each **argument** and **output** field: a column of that table (``reason`` ->
  appointments.reason), a reference to another table through a foreign key
  (``patient_id`` -> patients.id via appointments.patient_id; ``repo_path`` ->
  repositories.path), the record's content column (``write_query(query)`` -> queries.content),
  a range filter over a column (``start_date`` -> events.starts_at), or a control argument
  that needs no column (``limit``, ``max_length``, ``cursor``, ...);
* **covered**: the tool has a table and every argument and output field is mapped.

The map is stored in ``spec.provenance.stats["tool_coverage"]`` (JSON; shape in
:func:`tool_coverage`) for the tool designer, which implements each covered tool under the
source's own name and arguments. An uncovered tool's ``missing`` list says what the database
lacks; the mine graph writes it to the ledger.
"""

from __future__ import annotations

import re
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import TableSpec
from agent_world.mining.offline.accrual import accrual_rules
from agent_world.mining.offline.evidence import argument_info, tool_arguments
from agent_world.mining.offline.lifecycle import set_as_status
from agent_world.mining.offline.naming import singular, snake
from agent_world.mining.offline.schema_examples import schema_shape
from agent_world.mining.offline.signatures import (
    ID_KINDS,
    is_option,
    namespace_prefix,
    new_value_field,
    resolve_object,
    search_results,
    tool_shape,
)
from agent_world.mining.offline.tables import LINK_VERBS, entity_table, link_table, table_for_noun
from agent_world.mining.offline.vocabulary import (
    ALIASES,
    DELETE_VERBS,
    FILTER_ARGS,
    KEY_SUFFIXES,
    SEARCH_ARGS,
    TRANSFORM_VERBS,
)
from agent_world.mining.semantics.values import declared_type_ok
from agent_world.mining.sources.base import SourceDocument, ToolDescription

__all__ = ["CONTROL_ARGS", "coverage_line", "declared_fidelity", "declared_hints",
           "entity_field_hints",
           "field_hints_from_coverage", "tool_coverage", "uncovered_reasons"]

# arguments that steer a call (paging, size, output shape) rather than name stored data
CONTROL_ARGS = FILTER_ARGS | {"max_length", "start_index", "raw", "timeout", "page",
                              "page_size", "limit", "offset", "cursor", "format"}
# the columns a free-text search argument matches, first found
_SEARCHED = ("name", "title", "subject", "summary", "description", "content", "text", "body")
# value nouns of tool names and the records they are read from
VALUE_TABLES = {"log": "commit", "diff": "file_change", "status": "file_change",
                "history": "commit", "content": "page", "contents": "page"}
_NAME_COLUMNS = ("name", "full_name", "display_name", "title", "given_name", "first_name",
                 "family_name", "last_name", "label")
_WHEN = re.compile(r"\b(?:date|time|timestamp|yyyy|expir\w*)\b|_(?:at|on|until|since|date)\b", re.I)
_RANGE = re.compile(r"^(start|end|from|to|since|until|before|after|min|max)_(.+)$|"
                    r"^(.+)_(before|after|since|until|from|to|min|max)$")


def _brief(text: str, limit: int = 300) -> str:
    """A description cut to `limit` characters at a sentence end, else at a word, never
    mid-word ("let the user kno")."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    end = max(head.rfind(". "), head.rfind(".\n"))
    if end >= limit // 2:
        return head[:end + 1]
    return head[:head.rfind(" ")].rstrip(" ,;:") + "…" if " " in head else head


def _tables(spec: EnvSpec) -> dict[str, TableSpec]:
    return {t.name: t for t in spec.tables}


# a response envelope's own fields ({"success", "message", "data"}): how the call went, not
# what the record holds (Dokploy's 67 tools made `success` and `message` columns of every table)
_ENVELOPE_STATUS = frozenset({"success", "ok", "error", "errors", "message", "messages", "status",
                              "warning", "warnings", "agent_hints", "pagination", "meta",
                              "metadata", "code", "request_id", "timestamp", "result_type"})
_ENVELOPE_PAYLOAD = frozenset({"data", "result", "results", "items", "payload", "response"})


def _unwrapped(prop: Any) -> dict[str, Any] | None:
    """The record properties inside a wrapper's field (an object, or an array of objects)."""
    inner = prop.get("items") if isinstance(prop, dict) and prop.get("type") == "array" else prop
    if isinstance(inner, dict) and isinstance(inner.get("properties"), dict):
        return inner["properties"]
    return None


def _output_fields(tool: ToolDescription) -> dict[str, dict[str, Any]]:
    schema = tool.output_schema or {}
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        schema = schema["items"]
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return {}
    # a wrapper ({"result": {...}} / {"items": [...]}) is unwrapped one level; one wrapping a
    # plain value (FastMCP's {"result": "..."}) holds no field: it had made a 'result' column
    # of success / failed values on Airflow's variables and 37 other tables of 12 servers
    if len(props) == 1:
        inner = _unwrapped(next(iter(props.values())))
        if inner is None and (schema.get("x-fastmcp-wrap-result") or
                              snake(next(iter(props))) in _ENVELOPE_PAYLOAD):
            return {}
        props = props if inner is None else inner
    else:
        keys = {snake(k): k for k in props}
        payload = [keys[k] for k in keys if k in _ENVELOPE_PAYLOAD]
        if len(payload) == 1 and all(k in _ENVELOPE_STATUS for k in keys
                                     if keys[k] != payload[0]):
            props = _unwrapped(props[payload[0]]) or {}  # an untyped payload: no fields
    return {k: v if isinstance(v, dict) else {} for k, v in props.items()}


def _mentioned_table(text: str, tables: dict[str, TableSpec]) -> str | None:
    """The first table whose noun a description mentions ("Search the catalogue by title")."""
    for word in re.findall(r"[a-z][a-z_]+", text.lower()):
        hit = table_for_noun(singular(word), tables)
        if hit:
            return hit
    return None


def _primary_table(tool: ToolDescription, ns: str | None, spec: EnvSpec,
                   fields: dict[str, dict[str, Any]], service: str) -> str | None:
    tables = _tables(spec)
    known = {singular(t) for t in tables}
    shape = tool_shape(tool.name, tool.read_only, ns, rest="path" in fields, service=service)
    hit = table_for_noun(search_results(shape, list(fields)), tables)
    if hit:  # a web search: the results it finds
        return hit
    shape = resolve_object(shape, known)
    refs = [m["table"] for name, prop in fields.items()
            if (m := _map_field(name, argument_info(name, prop, False), None, spec))
            and m.get("role") == "reference"]
    if shape.obj and shape.context and shape.verb in LINK_VERBS:
        hit = link_table(table_for_noun(shape.obj, tables), table_for_noun(shape.context,
                                                                             tables), refs, spec)
        if hit:  # add_tag_to_task(task_gid, tag_gid) files a tag on a task: no new tag
            return hit
    if shape.obj:
        hit = table_for_noun(shape.obj, tables)
        if hit:
            return hit
    if shape.recordless and shape.verb in TRANSFORM_VERBS:
        return None  # a chart drawn from its arguments: no table holds it (nor its calls)
    if shape.verb in TRANSFORM_VERBS:
        noun = "_".join([*shape.value_words, TRANSFORM_VERBS[shape.verb]])
        hit = table_for_noun(noun, tables)
        if hit:
            return hit
    for w in shape.value_words:  # git_log -> a table of log entries, if one exists
        hit = table_for_noun(VALUE_TABLES.get(w, w), tables)
        if hit:
            return hit
    # the table whose columns the tool returns (reportBikeIssue -> maintenance_tickets)
    outputs = {snake(k) for k in _output_fields(tool)} - {"id"}
    if len(outputs) >= 3:
        best = max(spec.tables, key=lambda t: (len(outputs & {c.name for c in t.columns}),
                                               -len(t.columns)))
        if len(outputs & {c.name for c in best.columns}) >= max(2, len(outputs) // 2):
            return best.name
    # the most specific table the arguments reference (git_show(repo_path, revision) -> commits)
    if refs:
        return refs[-1]
    hit = table_for_noun(shape.context, tables) or _mentioned_table(tool.description, tables)
    if hit:
        return hit
    # the table most argument names live in
    best, score = None, 0
    for t in spec.tables:
        cols = {c.name for c in t.columns}
        sc = sum(1 for n in fields if snake(n) in cols)
        if sc > score:
            best, score = t.name, sc
    return best


def _map_field(name: str, info: dict[str, Any], table: str | None, spec: EnvSpec,
               output: bool = False, siblings: frozenset[str] = frozenset(),
               existing: bool = False) -> dict[str, Any] | None:
    """Where one argument/output field lives; None when nowhere. `siblings`: the snake names
    of the tool's other arguments; `existing`: the tool's name says it deletes a record."""
    tables = _tables(spec)
    arg = snake(name) or name
    primary = tables.get(table) if table else None
    pcols = {c.name: c for c in primary.columns} if primary else {}
    # the record's own content (write_query(query) -> queries.content); its name where the
    # tool finds a record that exists (rename_sheet(sheet, new_name), delete_sheet(sheet):
    # bound to sheets.content, rename_sheet wrote the sheet's name into its content and
    # delete_sheet took a sheet_id its source does not have)
    if primary is not None and singular(arg) == singular(table or "") and arg not in pcols:
        finds = existing or any(s.startswith("new_") for s in siblings)
        for alt in ("name", "content", "body", "text") if finds else \
                ("content", "body", "text", "name"):
            if alt in pcols:
                return {"role": "column", "table": table, "column": alt}
    if arg in SEARCH_ARGS and primary is not None:
        # what to look for: a match within what the records are called, not an ignored knob
        col = next((c for c in _SEARCHED if c in pcols), None)
        if col is not None:
            return {"role": "filter", "table": table, "column": col, "match": "like"}
    if arg in CONTROL_ARGS or re.fullmatch(r"(max|min)_(count|results|items|length|tokens)",
                                           arg) or \
            is_option(arg, str(info.get("description") or ""), info.get("enum")):
        return {"role": "control"}
    if arg == "name" and primary is not None and "name" not in pcols:
        alt = next((c for c in _NAME_COLUMNS if c in pcols), None)
        if alt:
            return {"role": "column", "table": table, "column": alt}
    field = new_value_field(arg, siblings)
    if field and arg not in pcols and field in pcols:
        arg = field  # what a write's new value sets: newName -> the record's name
    if arg in pcols:
        c = pcols[arg]
        if c.foreign_key:
            ptable, pcol = c.foreign_key.split(".")
            return {"role": "reference", "table": ptable, "column": pcol,
                    "via": f"{table}.{arg}"}
        return {"role": "column", "table": table, "column": arg}
    if arg == "id" and primary is not None:
        return {"role": "column", "table": table, "column": primary.primary_key[0]}
    # a reference: X_id / X_path / X_name / alias, directly or through an FK of the table
    base = re.sub(r"_(id|ids|gid|gids|guid|path|name|key|code|slug|uuid|sha|number|email|url)$",
                  "", arg)
    ident = arg[len(base) + 1:] if arg != base else ""
    candidates = [base]
    if base in ALIASES:
        candidates.insert(0, ALIASES[base][0])
        ident = ident or (ALIASES[base][1] or "")
    parts = base.split("_")
    candidates += ["_".join(parts[i:]) for i in range(1, len(parts))]  # source_timezone
    if len(parts) > 1 and parts[-1] in ID_KINDS:
        # epicPublicId names an epic by its public id: not the comments' epic_public_id
        # column, which had made Shortcut's epics-get-by-id a listing that ignored its id
        candidates.insert(1, "_".join(parts[:-1]))
    for cand in candidates:
        target = table_for_noun(singular(cand), tables)
        if target is None:
            continue
        tcols = {c.name for c in tables[target].columns}
        column = ident if ident in tcols else ("id" if ident in ("", *KEY_SUFFIXES) and
                                                ident != "uuid" else None)
        if column is None:
            for alt in ("name", "path", "code", "sha", "email", "title", "url"):
                if alt in tcols:
                    column = alt
                    break
        if column is None:
            continue
        via = None
        if primary is not None and target != table:
            fk = next((c.name for c in primary.columns if c.foreign_key
                       and c.foreign_key.split(".")[0] == target
                       and (c.name.startswith(parts[0]) or c.name == f"{singular(target)}_id")),
                      None) or next((c.name for c in primary.columns if c.foreign_key and
                                     c.foreign_key.split(".")[0] == target), None)
            via = f"{table}.{fk}" if fk else None
        return {"role": "reference", "table": target, "column": column,
                **({"via": via} if via else {})}
    # a range filter over a column of the table
    m = _RANGE.match(arg)
    bare = arg in ("from", "to", "since", "until", "before", "after")
    if (m or bare) and primary is not None:
        stem = "time" if bare else (m.group(2) or m.group(3))
        for c in primary.columns:
            if c.name == stem or c.name.startswith(stem) or (
                    stem in ("date", "time", "timestamp", "datetime")
                    and c.type in ("date", "datetime")):
                return {"role": "filter", "table": table, "column": c.name}
    # an array of files / values kept in a child table of the primary one
    if info.get("type") == "array" and primary is not None:
        for t in spec.tables:
            if any(c.foreign_key and c.foreign_key.split(".")[0] == table for c in t.columns) \
                    and singular(arg) in t.name:
                col = next((c.name for c in t.columns if c.name in ("path", "name", "value",
                                                                   singular(arg))), None)
                if col:
                    return {"role": "column", "table": t.name, "column": col}
    # a column of the same name elsewhere (prefer tables linked to the primary one); an
    # output field describes the tool's own record, so it is not looked for elsewhere
    hits = [t.name for t in spec.tables if arg in {c.name for c in t.columns}
            and (not output or t.name == table)]
    if hits:
        linked = [h for h in hits if primary is not None and any(
            c.foreign_key and c.foreign_key.split(".")[0] == h for c in primary.columns)]
        return {"role": "column", "table": (linked or hits)[0], "column": arg}
    # a reference the description names ("The commit sha that branch should contain")
    desc_table = _mentioned_table(str(info.get("description") or ""), tables)
    if desc_table is not None and info.get("type") in ("string", "integer"):
        tcols = {c.name for c in tables[desc_table].columns}
        column = next((c for c in ("sha", "name", "code", "path", "id") if c in tcols), "id")
        return {"role": "reference", "table": desc_table, "column": column}
    return None


def tool_coverage(doc: SourceDocument, spec: EnvSpec) -> dict[str, Any]:
    """The coverage map of a source's tools over a mined database::

        {"tools": {NAME: {"table": "appointments" | None, "read_only": bool | None,
                          "description": str, "covered": bool,
                          "arguments": {ARG: {"role": "column" | "reference" | "filter" |
                                                      "control" | None,
                                              "table": ..., "column": ..., "via": ...,
                                              "type": ..., "format": ..., "enum": [...],
                                              "required": bool, "description": str}},
                          "outputs": {FIELD: {same as arguments}},
                          "missing": ["argument x: no column", ...]}},
         "covered": int, "total": int, "ratio": float}
    """
    ns = namespace_prefix(doc.name, [t.name for t in doc.tools])
    tools: dict[str, Any] = {}
    for tool in doc.tools:
        props, required = tool_arguments(tool)
        outputs = _output_fields(tool)
        table = _primary_table(tool, ns, spec, {k: v if isinstance(v, dict) else {}
                                                for k, v in props.items()}, doc.name)
        entry: dict[str, Any] = {"table": table, "read_only": tool.read_only,
                                 "description": _brief(tool.description), "arguments": {},
                                 "outputs": {}, "missing": []}
        if table is None:
            entry["missing"].append("no table holds what the tool acts on")
        deletes = bool(set(snake(tool.name).split("_")) & DELETE_VERBS)
        # the record's status column, for an argument of a status tool that sets it
        status = next((c.name for c in _tables(spec)[table].columns
                       if c.name in ("status", "state")), None) if table else None
        for kind, fields in (("arguments", props), ("outputs", outputs)):
            for name, prop in fields.items():
                info = argument_info(name, prop if isinstance(prop, dict) else {},
                                     name in required)
                where = _map_field(name, info, table, spec, output=kind == "outputs",
                                   siblings=frozenset(snake(k) for k in fields) - {snake(name)},
                                   existing=deletes)
                if where is None and kind == "arguments" and info["type"] == "string" \
                        and not _WHEN.search(f"{snake(name)} {info.get('description') or ''}"):
                    # git_diff(target): "differences between branches or commits"; a date
                    # (pg_manage_users' validUntil) names no record of what the tool manages
                    where = _map_field(name, {**info, "description": tool.description},
                                       table, spec)
                    if where is not None and where.get("role") != "reference":
                        where = None
                if kind == "arguments" and status and set_as_status(
                        snake(tool.name).split("_"), snake(name), info["enum"]):
                    where = {"role": "column", "table": table, "column": status}
                typed = {"type": info["type"], "format": info["format"], "enum": info["enum"],
                         "required": bool(info["required"]) if kind == "arguments" else None,
                         # the source's own words for the argument, shown to the agent
                         "description": _brief(" ".join(str(prop["description"]).split()), 240)
                         if kind == "arguments" and isinstance(prop, dict)
                         and prop.get("description") else None}
                typed = {k: v for k, v in typed.items() if v is not None}
                entry[kind][name] = {**(where or {"role": None}), **typed}
                if where is None:
                    entry["missing"].append(f"{kind[:-1]} {name}: no table or column holds it")
        entry["covered"] = not entry["missing"]
        tools[tool.name] = entry
    covered = sum(1 for e in tools.values() if e["covered"])
    return {"tools": tools, "covered": covered, "total": len(tools),
            "ratio": round(covered / len(tools), 3) if tools else 1.0}


def uncovered_reasons(coverage: dict[str, Any]) -> list[tuple[str, str]]:
    """(tool, what the database lacks) for every tool the map leaves uncovered."""
    return [(name, "; ".join(e["missing"])) for name, e in coverage.get("tools", {}).items()
            if not e.get("covered")]


def coverage_line(coverage: dict[str, Any] | None) -> str:
    """'5/6 tools (83%)' for reports; '-' when there is no map."""
    if not coverage or not coverage.get("total"):
        return "-"
    return (f"{coverage['covered']}/{coverage['total']} tools "
            f"({100 * coverage['covered'] / coverage['total']:.0f}%)")


_HINT_KEYS = ("type", "format", "enum", "minimum", "maximum", "exclusiveMinimum",
              "exclusiveMaximum", "minLength", "maxLength", "pattern")
_DROP_ENUM = {"all", "any", "both", "none", "asc", "desc", "*"}


def field_hints_from_coverage(doc: SourceDocument, coverage: dict[str, Any]
                              ) -> dict[str, dict[str, dict[str, Any]]]:
    """What the source's tool schemas declare about the columns the coverage map found for
    their fields: ``{table: {column: {"type", "format", "enum", "minimum", ..., "from"}}}``.
    Enums of several tools are united (filter words such as "all" left out)."""
    hints: dict[str, dict[str, dict[str, Any]]] = {}
    by_tool = {t.name: t for t in doc.tools}
    for tname, entry in coverage.get("tools", {}).items():
        tool = by_tool.get(tname)
        if tool is None:
            continue
        props, _ = tool_arguments(tool)
        fields = {**{k: ("arguments", v) for k, v in props.items()},
                  **{k: ("outputs", v) for k, v in _output_fields(tool).items()}}
        for name, (kind, prop) in fields.items():
            where = entry.get(kind, {}).get(name) or {}
            if where.get("role") != "column" or not isinstance(prop, dict):
                continue
            info = argument_info(name, prop, False)
            branch = prop
            for key in ("anyOf", "oneOf"):
                for b in prop.get(key) or []:
                    if isinstance(b, dict) and b.get("type") not in (None, "null"):
                        branch = {**b, **{k: v for k, v in prop.items() if k != key}}
            declared = {k: branch[k] for k in _HINT_KEYS if k in branch and k != "enum"}
            declared["type"] = info["type"]
            if info["type"] in ("object", "array"):  # what its JSON holds (schema_examples)
                shape = schema_shape(branch)
                if shape.get("properties") or (shape.get("items") or {}).get("properties"):
                    declared["shape"] = shape
            if info["format"]:
                declared["format"] = info["format"]
            if info["enum"] and info.get("enum_from") == "schema":
                declared["enum"] = [e for e in info["enum"] if e.lower() not in _DROP_ENUM]
            have = hints.setdefault(where["table"], {}).setdefault(where["column"], {})
            if "enum" in have and "enum" in declared:
                declared["enum"] = list(dict.fromkeys([*have["enum"], *declared["enum"]]))
            for k, v in declared.items():
                if k == "enum" or k not in have:
                    have[k] = v
            have.setdefault("from", f"{tname}.{name}")
    return hints


def declared_hints(doc: SourceDocument, spec: EnvSpec, coverage: dict[str, Any] | None = None
                   ) -> dict[str, dict[str, dict[str, Any]]]:
    """What the source declares about the spec's columns: entity schemas first, then the
    fields of its tools (``provenance.stats["field_hints"]``)."""
    hints = entity_field_hints(doc, spec)
    coverage = coverage if coverage is not None else tool_coverage(doc, spec)
    for table, cols in field_hints_from_coverage(doc, coverage).items():
        for col, hint in cols.items():
            hints.setdefault(table, {}).setdefault(col, hint)
    for table, col, rule in accrual_rules(doc, spec):
        hints.setdefault(table, {}).setdefault(col, {})["accrues"] = rule
    return hints


def entity_field_hints(doc: SourceDocument, spec: EnvSpec
                       ) -> dict[str, dict[str, dict[str, Any]]]:
    """What the source's entity schemas declare, keyed by the table and column that hold
    each field (fields with no column are left out; references are checked as relations)."""
    tables = _tables(spec)
    hints: dict[str, dict[str, dict[str, Any]]] = {}
    for ent in doc.entities:
        table = entity_table(ent.name, tables)
        if table is None:
            continue
        cols = {c.name for c in tables[table].columns}
        for f in ent.field_specs:
            col = snake(f.name)
            if f.references or f.type in ("array", "object") or col not in cols or col == "id":
                continue
            hint = f.hint()
            if hint:
                hints.setdefault(table, {})[col] = {**hint, "from": f"{ent.name}.{f.name}"}
    return hints


def declared_fidelity(doc: SourceDocument, spec: EnvSpec,
                      coverage: dict[str, Any] | None = None) -> dict[str, Any]:
    """How much of what the source declares the database keeps: for every declared entity
    field that a column holds, its type (and date format), its enum (the same set of values)
    and its uniqueness; for references, a foreign key to the referenced table.
    ``{"fields": n, "checks": n, "kept": n, "ratio": r, "lost": ["table.col: enum ..."]}``."""
    tables = _tables(spec)
    fields = checks = kept = 0
    lost: list[str] = []

    def check(ok: bool, what: str) -> None:
        nonlocal checks, kept
        checks += 1
        kept += ok
        if not ok:
            lost.append(what)

    for ent in doc.entities:
        table = entity_table(ent.name, tables)
        if table is None:
            continue
        cols = {c.name: c for c in tables[table].columns}
        for f in ent.field_specs:
            col = snake(f.name)
            if col == "id":
                continue
            if f.references:
                target = entity_table(f.references, tables)
                if target is None:
                    continue
                fields += 1
                linked = any(c.foreign_key and c.foreign_key.split(".")[0] == target
                             for c in cols.values()) or any(
                    t.name not in (table, target) and {c.foreign_key.split(".")[0] for c in
                                                       t.columns if c.foreign_key}
                    >= {table, target} for t in spec.tables)
                check(linked, f"{table}.{col}: no relation to {target}")
                continue
            if f.type == "array":
                child = next((t for t in spec.tables if t.name.startswith(f"{singular(table)}_")
                              and t.name.endswith(col)), None)
                if child is None and col not in cols:
                    continue
                fields += 1
                if f.enum and child is not None:
                    vcol = next((c for c in child.columns if c.enum), None)
                    check(vcol is not None and set(vcol.enum or []) == set(f.enum),
                          f"{child.name}: enum {f.enum} not kept")
                else:
                    check(True, "")
                continue
            c = cols.get(col)
            if c is None and col in ("status", "state"):
                c = cols.get("status") or cols.get("state")
            if c is None:
                continue
            fields += 1
            if f.type:
                check(declared_type_ok({"type": f.type, "format": f.format}, c.type),
                      f"{table}.{col}: declared {f.format or f.type}, column {c.type}")
            if f.enum:
                check(set(c.enum or []) == set(f.enum),
                      f"{table}.{col}: declared enum {f.enum}, column {c.enum}")
            if f.unique:
                check(c.unique or any(g == [col] for g in tables[table].unique_together),
                      f"{table}.{col}: declared unique, column is not")
    # what the tools declare of the fields they read and return
    coverage = coverage if coverage is not None else tool_coverage(doc, spec)
    by_tool = {t.name: t for t in doc.tools}
    seen: set[tuple[str, str]] = set()
    for tname, entry in coverage["tools"].items():
        tool = by_tool[tname]
        props, _ = tool_arguments(tool)
        declared = {**{k: ("arguments", v) for k, v in props.items()},
                    **{k: ("outputs", v) for k, v in _output_fields(tool).items()}}
        for name, (kind, prop) in declared.items():
            where = entry[kind].get(name) or {}
            if where.get("role") != "column" or not isinstance(prop, dict):
                continue
            key = (where["table"], where["column"])
            c = next((c for c in tables[key[0]].columns if c.name == key[1]), None)
            info = argument_info(name, prop, False)
            if c is None or key in seen:
                continue
            seen.add(key)
            fields += 1
            check(declared_type_ok({"type": info["type"], "format": info["format"]}, c.type),
                  f"{tname}.{name} -> {key[0]}.{key[1]}: declared "
                  f"{info['format'] or info['type']}, column {c.type}")
            enum = {e for e in info["enum"] or [] if e.lower() not in _DROP_ENUM}
            if enum and info.get("enum_from") == "schema":
                check(enum <= set(c.enum or []),
                      f"{tname}.{name} -> {key[0]}.{key[1]}: declared enum {sorted(enum)}, "
                      f"column {c.enum}")
    return {"fields": fields, "checks": checks, "kept": kept,
            "ratio": round(kept / checks, 3) if checks else 1.0, "lost": lost}
