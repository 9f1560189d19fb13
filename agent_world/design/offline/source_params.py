"""How one argument of a source tool becomes a parameter of its plan: a column it sets or
filters, the record it names, a bound, a limit, or an option the plan ignores."""

from __future__ import annotations

import re
from typing import Any

from agent_world.design.offline.plans import (
    DEFAULT_LIMIT,
    ParamPlan,
    Role,
    _words,
    json_type,
    pk_column,
)
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import TableSpec
from agent_world.mining.offline.naming import safe_name, snake

LIMIT_ARGS = frozenset({"limit", "max_count", "max_results", "page_size", "count", "top", "n",
                        "number_of_results", "num_results", "n_results", "max_items", "top_n",
                        "per_page", "max_rows", "results_per_page"})
_GE = re.compile(r"(^|_)(start|from|since|after|min)(_|$)")
_LE = re.compile(r"(^|_)(end|to|until|before|max)(_|$)")


# a filter value naming every row rather than one kind ("all" branches)
_EVERY = frozenset({"all", "any", "both", "every"})


def source_param(spec: EnvSpec, table: TableSpec, arg: str, info: dict[str, Any],
                  read_only: bool, words: list[str]) -> ParamPlan:
    name = safe_name(arg)
    role_in = info.get("role")
    jtype = {"integer": "integer", "number": "number", "boolean": "boolean",
             "object": "object"}.get(
        str(info.get("type")), "string")
    required = bool(info.get("required"))
    # the source's words for the argument, else its name ("Repo path.")
    desc = str(info.get("description") or "") or f"{_words(snake(arg)).capitalize()}."
    enum = [str(e) for e in info["enum"]] if isinstance(info.get("enum"), list) else None
    base = ParamPlan(name=name, role="ignore", type=jtype, required=required, description=desc)
    tables = {t.name: t for t in spec.tables}
    if role_in == "control":
        if snake(arg) in LIMIT_ARGS and (jtype == "integer" or jtype == "number" and read_only):
            # a listing's count is often typed "number" (Coolify's per_page, monday's limit)
            return base.model_copy(update={"role": "limit", "type": "integer",
                                           "default": DEFAULT_LIMIT, "required": False})
        # required as the source says: a tool that cannot act on a required control (the
        # text replace_cells finds) is rejected for never reading it, not kept as an insert
        # that makes it optional
        return base
    col_table = tables.get(info.get("table") or "")
    column = info.get("column")
    if role_in == "column" and col_table is not None and col_table.name == table.name \
            and column in {c.name for c in table.columns}:
        col = table.column(column)
        # a JSON 'number' holds an integer column's values (DigitalOcean's droplet ID)
        if col.type == "json" and jtype == "object" and not read_only:
            # a JSON object argument written whole to a JSON column (a REST request's body)
            return base.model_copy(update={"role": "set", "column": column, "type": "object"})
        if col.type == "json" or jtype not in ("string", json_type(col)) and \
                not (jtype == "string" and col.type in ("date", "datetime", "text")) and \
                not (jtype == "number" and col.type == "integer"):
            return base
        role: Role = "eq" if read_only else "set"
        if col.primary_key:
            role = "key"
        extra = [e for e in enum or [] if e not in (col.enum or [])]
        if role == "eq" and col.enum and len(extra) == 1 and extra[0].lower() in _EVERY:
            # git_branch(branch_type='all'): one more value than the column holds, naming
            # every row ('local' and 'remote' branches)
            return base.model_copy(update={"role": role, "column": column, "type": "string",
                                           "enum": [*col.enum, extra[0]], "every": extra[0]})
        return base.model_copy(update={
            "role": role, "column": column, "type": json_type(col),
            "enum": list(col.enum) if col.enum and (enum is None or set(enum) <= set(col.enum))
            else None})
    if role_in == "self_reference":
        return base.model_copy(update={"role": "ref", "column": info["fk"],
                                       "ref_table": table.name, "ref_column": column,
                                       "type": "string"})
    # a bound on a column filters what a read returns; a write ('analyze voting from dateFrom
    # to dateTo', recorded as a new row) has nothing to filter and must not take the column
    if role_in == "filter" and col_table is not None and col_table.name == table.name \
            and read_only:
        snake_arg = snake(arg)
        role = "like" if info.get("match") == "like" else "ge" if _GE.search(snake_arg) \
            else "le" if _LE.search(snake_arg) else "eq"
        ctype = col_table.column(column).type if column in {c.name for c in
                                                            col_table.columns} else ""
        if role in ("ge", "le") and ctype in ("date", "datetime"):
            # the tool compares ISO strings: a source's "or relative dates ('2 weeks ago')"
            # would promise what it does not do
            desc = (f"Only rows whose {column} is on or {'after' if role == 'ge' else 'before'}"
                    " this ISO 8601 date or date-time (2024-01-15 or 2024-01-15T14:30:25"
                    + ("; a date keeps its whole day)." if role == "le" else ")."))
        # a bound on a number compares numbers (Backlog's minId: "id >= 20", not text)
        numeric = {"integer": "integer", "real": "number"}.get(ctype) if role in ("ge", "le") \
            else None
        return base.model_copy(update={"role": role, "column": column,
                                       "type": numeric or "string", "description": desc})
    if role_in == "reference" and col_table is not None and column:
        if col_table.name == table.name:
            if column == pk_column(table):
                return base.model_copy(update={"role": "key", "column": column,
                                               "type": json_type(table.column(column))})
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


__all__ = ["LIMIT_ARGS", "source_param"]
