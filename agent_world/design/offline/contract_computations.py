"""Contracts of computing tools (SQL over the data, a table's schema, a repository's diff,
status and commit, time-zone conversion and clocks, fetching a stored page) and of staging
(a flag on the entity's child rows).
"""

from __future__ import annotations

import re
from typing import Any

from agent_world.design.offline.contract_compare import _compare
from agent_world.design.offline.contract_schema import (
    _arg_type,
    _Args,
    _has,
    _json_type,
    _key_param,
    _name_column,
    _param,
    _resolve_ref,
    _stem,
    children,
    fk_target,
    status_of,
)
from agent_world.design.offline.contracts import Contract, Effect, Guard, Value
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.naming import singular, snake
from agent_world.mining.offline.signatures import OTHER_QUERY_LANGUAGES, sql_argument

# -- computations ------------------------------------------------------------------------------
FETCH_MAX_LENGTH = 5000  # mcp-server-fetch's default page of content
# tables about the database itself (its catalogue, saved statements, memo), not its data
CATALOGUE_TABLES = ("queries", "tables", "insights")


def _fetch(spec: EnvSpec, c: Contract, words: list[str], args: _Args,
           entry: dict[str, Any]) -> Contract | None:
    """``fetch(url, max_length, start_index, raw)`` ("fetches a URL ... as markdown"): the page
    stored for the URL, its content cut to ``max_length`` characters from ``start_index``;
    refused for an unknown URL and for a page whose status is an HTTP error."""
    page = next((t for t in spec.tables
                 if {"url", "body", "status_code"} <= {col.name for col in t.columns}), None)
    url = next((a for a in args.names() if snake(a) in ("url", "uri")), None)
    if page is None or url is None or "fetch" not in words or entry.get("read_only") is False:
        return None
    c.entity = page.name
    c.verb, c.computation, c.returns = "compute", "fetch", "result"
    c.params = [_param(args.safe(url), "row", ref_table=page.name, ref_column="url",
                       required=True, description="The URL to fetch.")]
    options = {"max_length": ("integer", FETCH_MAX_LENGTH, "Characters of content to return "
                              f"at most (default {FETCH_MAX_LENGTH})."),
               "start_index": ("integer", 0, "Where the returned content starts, in "
                               "characters (to read on where a cut ended; default 0)."),
               "raw": ("boolean", False, "Accepted as the source has it: pages are stored "
                       "as Markdown, so the raw page is the same text.")}
    for a in args.names():
        if snake(a) in options:
            kind, default, text = options[snake(a)]
            c.params.append(_param(args.safe(a), "option", type=kind, default=default,
                                   description=text))
    c.options = {"content_type": "content_type" if _has(page, "content_type") else None}
    c.evidence = [f"the stored {singular(page.name)} of the URL, cut to max_length from "
                  "start_index; HTTP errors refused"]
    return c


def _transitions(spec: EnvSpec, zones: TableSpec) -> dict[str, str] | None:
    """The table of a zone's offset changes (DST transitions: when, and the offset after),
    when the environment has one: a zone's offset at an instant is its last change's."""
    for t in spec.tables:
        link = next((col.name for col in t.columns if fk_target(col) == zones.name), None)
        at = next((col.name for col in t.columns if col.type == "datetime"
                   and col.name.startswith("transition")), None)
        if link and at and _has(t, "offset_after"):
            return {"table": t.name, "link": link, "at": at, "after": "offset_after"}
    return None


def _computed(spec, c, entity, words, text, desc, args, entry) -> Contract | None:
    fetched = _fetch(spec, c, words, args, entry)
    if fetched is not None:
        return fetched
    query_arg = next((a for a in args.names() if snake(a) in ("query", "sql", "statement")
                      and _arg_type(args.raw[a]) == "string"), None)
    business = [t for t in spec.tables if t.name not in CATALOGUE_TABLES]
    if query_arg is not None and OTHER_QUERY_LANGUAGES.search(
            f"{desc} {(args.raw[query_arg] or {}).get('description') or ''}"):
        query_arg = None  # neo4j's read_neo4j_cypher(query) runs Cypher, not SQL SELECTs
    if query_arg is not None:
        p = _param(args.safe(query_arg), "text", required=True,
                   description="The SQL statement.")
        # whole words: NotebookLM's search_notebooks ("... chain into `select_notebook`")
        # had become a runner of SELECTs over the whole database
        up = desc.upper()
        said = set(re.findall(r"[A-Z]+", re.sub(r"[A-Z]+_\w*", " ", up)))
        if {"CREATE", "TABLE"} <= said:
            name_col = _name_column(entity)
            if name_col is None:
                return None
            c.verb, c.computation, c.returns = "create", "create_table", "row"
            c.params = [p]
            c.effects = [Effect(table=entity.name, op="insert", rows="new", set={
                name_col.name: Value(source="sql_table_name", arg=p.name),
                **{n: Value(source="now") for n in ("created_at", "updated_at")
                   if _has(entity, n)}})]
            c.guards = [Guard(kind="none_where", table=entity.name, message=f"no table of that "
                              f"name is listed yet ({entity.name}.{name_col.name})")]
            c.options = {"name_column": name_col.name}
            c.evidence = ["a CREATE TABLE statement registers the table"]
            return c
        if re.search(r"\b(INSERT|UPDATE|DELETE)\b", up):
            c.verb, c.computation, c.returns = "compute", "sql_write", "result"
            c.params = [p]
            c.options = {"tables": [t.name for t in business]}
            c.evidence = ["executes a data-changing statement"]
            return c
        if "SELECT" in said or "read" in words or sql_argument([query_arg], desc) and \
                entry.get("read_only") is not False:
            # "Run a read-only SQL query" (Postgres' query(sql)), "Execute a SQL query against
            # a D1 database": what sqlite's read_query does; a statement that changes data is
            # refused (the description says no write)
            c.verb, c.computation, c.returns = "compute", "sql_select", "rows"
            c.params = [p]
            c.options = {"tables": [t.name for t in business]}
            c.evidence = ["runs the caller's SELECT read-only over the data"]
            return c
    if "schema" in text and entity.name == "tables" and args.refs_to(entity.name):
        key = _key_param(spec, entity, args, text, set())
        c.verb, c.computation, c.returns = "compute", "describe_table", "rows"
        c.params = [key]
        c.evidence = ["describes the columns of a table"]
        return c
    commit = _commit(spec, c, entity, words, args, entry)
    if commit is not None:
        return commit
    compared = _compare(spec, c, entity, words, text, desc, args, entry)
    if compared is not None:
        return compared
    diff_table = _diff_table(spec, entity)
    if "diff" in words and diff_table is not None:
        child, fk, staged = diff_table
        used: set[str] = set()
        key = _key_param(spec, entity, args, text, used)
        c.verb, c.computation, c.returns = "compute", "diff", "result"
        c.params = [key]
        for a, info in args.raw.items():
            if a in used:
                continue
            if info.get("role") == "reference" and info.get("table") in args.tables:
                t = args.tables[info["table"]]
                link = next((col.name for col in t.columns if fk_target(col) == entity.name),
                            None)
                look = _resolve_ref(spec, t, info.get("column"), _arg_type(info))
                if look is None:
                    continue
                c.params.append(_param(args.safe(a), "row", ref_table=t.name,
                                       ref_column=look[1], required=bool(info.get("required")),
                                       column=link, description=f"The "
                                       f"{singular(t.name).replace('_', ' ')} to compare with."))
            elif info.get("role") == "control":
                c.params.append(_param(args.safe(a), "ignore", type=_arg_type(info),
                                       description=f"{snake(a).replace('_', ' ').capitalize()}"
                                                   " (accepted, no effect here)."))
        stage = None if "unstaged" not in words and "staged" not in words else \
            "unstaged" not in words
        c.options = {"table": child.name, "link": fk.name, "staged_column": staged,
                     "staged": stage, "path": "path", "diff": "diff"}
        c.evidence = [f"the diff text of {child.name} rows"
                      + ("" if stage is None else f" with {staged} = {stage}")]
        return c
    if "status" in words and diff_table is not None and entry.get("read_only") is not False:
        child, fk, staged = diff_table
        c.verb, c.computation, c.returns = "compute", "status", "result"
        c.params = [_key_param(spec, entity, args, text, set())]
        c.options = {"table": child.name, "link": fk.name, "staged_column": staged,
                     "path": "path", "change": _change_column(child)}
        c.evidence = [f"the staged / unstaged / untracked paths of {child.name}"]
        return c
    zone_table = next((args.tables[i["table"]] for i in args.raw.values()
                       if i.get("role") == "reference" and i.get("table") in args.tables
                       and _offset_column(args.tables[i["table"]])), entity)
    offset = _offset_column(zone_table)
    if offset is not None and "convert" in words:
        entity = zone_table
        zones = [a for a, i in args.raw.items() if i.get("role") == "reference"
                 and i.get("table") == entity.name] or \
            [a for a, i in args.raw.items() if "timezone" in snake(a) or "zone" in snake(a)]
        time_arg = next((a for a in args.names() if snake(a) == "time"), None)
        if len(zones) < 2 or time_arg is None or entry.get("read_only") is False:
            return None
        named = _name_column(entity)
        if named is None:
            return None
        c.entity = entity.name
        c.verb, c.computation, c.returns = "compute", "convert", "result"
        src, dst = zones[0], zones[1]
        c.params = [_param(args.safe(src), "row", ref_table=entity.name, ref_column=named.name,
                           required=True, description="Source time zone name."),
                    _param(args.safe(time_arg), "text", required=True,
                           pattern=r"^([01]\d|2[0-3]):[0-5]\d$",
                           description="Time in the source zone, HH:MM (24-hour)."),
                    _param(args.safe(dst), "row", ref_table=entity.name, ref_column=named.name,
                           required=True, description="Target time zone name.")]
        c.options = {"offset": offset.name, "name": named.name,
                     "dst": next((col.name for col in entity.columns
                                  if col.type == "boolean" and "dst" in col.name), None),
                     "transitions": _transitions(spec, entity)}
        c.evidence = [f"shifts the time by the zones' {offset.name}"]
        return c
    if offset is not None and "current" in words and "time" in words:
        named = _name_column(entity)
        zone = next(iter(args.names()), None)
        if named is None or zone is None:
            return None
        c.verb, c.computation, c.returns = "compute", "clock", "result"
        c.params = [_param(args.safe(zone), "row", ref_table=entity.name,
                           ref_column=named.name, required=True,
                           description="Time zone name.")]
        c.options = {"offset": offset.name, "name": named.name,
                     "transitions": _transitions(spec, entity)}
        c.evidence = ["the environment clock in the zone"]
        return c
    return None


def _commit(spec: EnvSpec, c: Contract, entity: TableSpec, words: list[str], args: _Args,
            entry: dict[str, Any]) -> Contract | None:
    """``git_commit`` ("records changes to the repository"): the repository's staged changes
    become a commit (its file changes), leave the staging area, and the checked-out branch
    moves to the new commit; refused when nothing is staged."""
    if "commit" not in words or entry.get("read_only") is True or not _has(entity, "message"):
        return None
    repo_fk = next((col for col in entity.columns if fk_target(col) and
                    _diff_table(spec, spec.table(fk_target(col) or "")) is not None), None)
    if repo_fk is None:
        return None
    repo = spec.table(fk_target(repo_fk) or "")
    changes, link, staged = _diff_table(spec, repo)  # type: ignore[misc]
    ref = next((a for a in args.refs_to(repo.name)), None)
    msg = next((a for a, i in args.raw.items() if i.get("column") == "message"), None)
    if ref is None or msg is None:
        return None
    look = _resolve_ref(spec, repo, args.raw[ref].get("column"), _arg_type(args.raw[ref]))
    if look is None:
        return None
    files = next(((t, fk) for t, fk in children(spec, entity) if _has(t, "path")), None)
    branch = next((t for t, _ in children(spec, repo) if (st := status_of(t)) is not None
                   and "checked_out" in (st.enum or []) and any(
                       fk_target(col) == entity.name for col in t.columns)), None)
    c.verb, c.computation, c.returns = "create", "commit", "row"
    c.params = [_param(args.safe(ref), "row", ref_table=repo.name, ref_column=look[1],
                       type=_json_type(repo.column(look[1])), required=True,
                       description=f"The {singular(repo.name).replace('_', ' ')} "
                                   f"({look[1].replace('_', ' ')})."),
                _param(args.safe(msg), "text", required=True, description="Commit message.")]
    o: dict[str, Any] = {"repo_fk": repo_fk.name, "changes": changes.name, "link": link.name,
                         "staged": staged, "path": "path", "change": _change_column(changes),
                         "diff": "diff" if _has(changes, "diff") else None,
                         "sha": "sha" if _has(entity, "sha") else None,
                         "parent": next((col.name for col in entity.columns
                                         if fk_target(col) == entity.name), None),
                         "now": [n for n in ("created_at", "updated_at") if _has(entity, n)]}
    if files is not None:
        ft, ffk = files
        o["files"] = {"table": ft.name, "link": ffk.name, "change": _change_column(ft),
                      "additions": "additions" if _has(ft, "additions") else None,
                      "deletions": "deletions" if _has(ft, "deletions") else None}
    if branch is not None:
        head = next(col.name for col in branch.columns if fk_target(col) == entity.name)
        blink = next(col.name for col in branch.columns if fk_target(col) == repo.name)
        through = next((t for t in spec.tables if {fk_target(col) for col in t.columns}
                        >= {branch.name, entity.name} and t.name != branch.name), None)
        o["branch"] = {"table": branch.name, "link": blink, "head": head,
                       "status": status_of(branch).name, "through": None if through is None  # type: ignore[union-attr]
                       else {"table": through.name,
                             "branch": next(col.name for col in through.columns
                                            if fk_target(col) == branch.name),
                             "commit": next(col.name for col in through.columns
                                            if fk_target(col) == entity.name),
                             "now": "created_at" if _has(through, "created_at") else None}}
    c.options = o
    c.effects = [Effect(table=entity.name, op="insert", rows="new", coupled=False),
                 Effect(table=changes.name, op="delete", rows="children", link=link.name,
                        where={staged: [True]}, coupled=True)]
    if files is not None:
        c.effects.append(Effect(table=files[0].name, op="insert", rows="new", coupled=True))
    c.guards = [Guard(kind="exists_where", table=changes.name, link=link.name,
                      where={staged: [True]}, message="something is staged")]
    c.evidence = [f"staged {changes.name} become the commit's {files[0].name if files else 'files'}"
                  + (f"; the checked-out {branch.name} moves to it" if branch else "")]
    return c


def _offset_column(table: TableSpec) -> ColumnSpec | None:
    return next((col for col in table.columns if "offset" in col.name and col.type == "text"),
                None)


def _diff_table(spec: EnvSpec, entity: TableSpec) -> tuple[TableSpec, ColumnSpec, str] | None:
    """A child of `entity` that holds working changes: a path, a diff text and a staged flag."""
    for t, fk in children(spec, entity):
        staged = next((c.name for c in t.columns if c.type == "boolean" and "stag" in c.name),
                      None)
        if staged and _has(t, "path") and _has(t, "diff"):
            return t, fk, staged
    return None


def _change_column(table: TableSpec) -> str | None:
    return next((c.name for c in table.columns if c.enum and "change" in c.name), None)


# -- staging (a flag on the entity's child rows) ----------------------------------------------------
def _staging(spec, c, entity, words, text, desc, args, entry) -> Contract | None:
    if entry.get("read_only") is True:
        return None
    diff = _diff_table(spec, entity)
    if diff is None:
        return None
    child, fk, staged = diff
    stem = _stem(staged)
    mentions = {w for w in text if w.startswith(stem) or w.startswith("un" + stem)}
    if not mentions:
        return None
    unstage = any(w.startswith("un" + stem) for w in text) or "reset" in words
    used: set[str] = set()
    key = _key_param(spec, entity, args, text, used)
    params = [key]
    where_arg: dict[str, str] = {}
    for a, info in args.raw.items():
        if a in used:
            continue
        if _arg_type(info) == "array" and info.get("column") == "path":
            params.append(_param(args.safe(a), "paths", type="array", required=True,
                                 description="Paths of the changed files."))
            where_arg["path"] = args.safe(a)
    c.verb, c.returns = "update_field", "result"
    c.params = params
    c.effects = [Effect(table=child.name, op="update", rows="children", link=fk.name,
                        where={staged: [bool(unstage)]}, where_arg=where_arg,
                        set={staged: Value(source="const", value=not unstage)}, coupled=True)]
    if where_arg:
        c.guards = [Guard(kind="exists_where", table=child.name, link=fk.name,
                          message=f"every path is a change in the {singular(entity.name)}'s "
                                  f"{child.name}")]
    c.options = {"path": "path"}
    c.evidence = [f"{'un' if unstage else ''}stages {child.name} rows ({staged})"]
    return c
