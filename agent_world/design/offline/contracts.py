"""Behaviour contracts: what a source tool does, derived from the source before any code.

A `Contract` says, for one tool, the entity (table) it acts on, its verb (read one / list /
search / create / update field / transition state / delete / compute), its arguments and how
each binds, which tables and columns change and how (`Effect`: the entity row and the rows
coupled to it), what is refused (`Guard`), and what it returns. It is read from the tool's
name, its description, its declared arguments and the schema the source was mined into:

* ``check_out_copy`` ("check out a copy to a member ... the member's card and the copy's
  barcode") - transition copies available -> on_loan, keyed by barcode, and insert the loan
  (copy, member by card number, branch, checked-out time, due date from "a loan lasts 21 days
  (7 days for copies marked as new releases)", renewal count 0);
* ``renew_loan`` - update field: the due date moves by the loan period and the renewal count
  goes up, refused at the declared maximum (two) or for a returned loan;
* ``git_add`` - the repository's working-tree changes named by ``files`` become staged;
  ``git_status`` / ``git_diff*`` compute the status and the diff text of those rows;
* ``read_query`` - runs the caller's SELECT read-only over the environment's data.

The renderer (render.py) writes code from a contract and the test writer (expectations.py)
evaluates the same contract over the seed rows in plain Python: a tool passes only if it does
what the contract says, on the right rows and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent_world.envs.spec import ColumnSpec, EnvSpec, TableSpec
from agent_world.mining.offline.naming import safe_name, singular, snake, tokens
from agent_world.mining.semantics import free_value, spec_invariants

Verb = Literal["read_one", "list", "search", "create", "update_field", "transition", "delete",
               "compute"]
Computation = Literal["sql_select", "sql_write", "create_table", "describe_table", "diff",
                      "status", "convert", "clock", "commit"]
VERBS: tuple[str, ...] = ("read_one", "list", "search", "create", "update_field", "transition",
                          "delete", "compute")
WRITE_VERBS = frozenset({"create", "update_field", "transition", "delete"})

# verb phrase of a tool name -> the states it moves a record into, most specific first
STATE_VERBS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("check", "out"): ("checked_out", "on_loan", "borrowed", "in_use"),
    ("checkout",): ("checked_out", "on_loan", "borrowed", "in_use"),
    ("check", "in"): ("checked_in", "available", "returned"),
    ("checkin",): ("checked_in", "available", "returned"),
    ("cancel",): ("cancelled", "canceled"), ("archive",): ("archived",),
    ("suspend",): ("suspended",), ("close",): ("closed",), ("complete",): ("completed",),
    ("approve",): ("approved",), ("reject",): ("rejected",), ("waive",): ("waived",),
    ("retire",): ("retired",), ("pay",): ("paid",), ("deactivate",): ("inactive",),
    ("activate",): ("active",), ("collect",): ("collected",), ("return",): ("returned",),
    ("expire",): ("expired",), ("restore",): ("active",), ("reactivate",): ("active",),
    ("fail",): ("failed",), ("transfer",): ("in_transit", "transferred"),
    ("publish",): ("published",), ("ship",): ("shipped",), ("deliver",): ("delivered",),
    ("lock",): ("locked",), ("unlock",): ("unlocked", "active"),
}
# states a record is "busy" in: something (a loan, a booking) holds it
BUSY_STATES = frozenset({"on_loan", "checked_out", "borrowed", "in_use", "rented", "booked",
                         "reserved", "occupied"})
FREE_STATES = ("available", "published", "open", "free", "active")
# ("renewed" last: a renewed loan is still open, but no record is opened renewed)
OPEN_STATES = ("active", "open", "on_loan", "checked_out", "borrowed", "overdue", "booked",
               "pending", "waiting", "ready", "renewed")
TERMINAL_STATES = frozenset({"cancelled", "canceled", "archived", "closed", "completed",
                             "deleted", "retired", "expired", "returned", "paid", "waived",
                             "failed", "succeeded", "collected", "refunded", "rejected",
                             "delivered", "done", "late_cancelled", "no_show"})
# states after which a record still moves on when its enum has them: an order is paid, then
# shipped and delivered (a fine's `paid` is final; an order's is not)
_FULFILMENT = frozenset({"shipped", "delivered", "fulfilled", "in_transit", "dispatched"})


def final_states(enum: list[str] | None) -> frozenset[str]:
    """The states of `enum` a record never leaves."""
    states = set(enum or [])
    final = TERMINAL_STATES & states
    if states & _FULFILMENT:
        final -= {"paid", "succeeded"}
    return frozenset(final)


EXTEND_VERBS = frozenset({"renew", "extend", "prolong"})
SEARCH_WORDS = frozenset({"search", "find", "lookup", "browse"})
GENERIC_TOKENS = frozenset({"id", "number", "name", "code", "the", "a", "of", "and", "or"})
DEFAULT_PERIOD_DAYS = 14
_PERIOD = re.compile(r"\blasts?\s+(\d+)\s+days?(?:\s*\((\d+)\s+days?\s+for\s+([^)]*)\))?", re.I)
_UP_TO = re.compile(r"\bup to (\w+) times?\b", re.I)
_NUMBERS = {"one": 1, "once": 1, "two": 2, "twice": 2, "three": 3, "four": 4, "five": 5}


class Value(BaseModel):
    """How one written column gets its value."""

    source: Literal["arg", "const", "now", "today", "entity", "row", "days_after", "increment",
                    "new_id", "next_code", "sql_table_name"]
    arg: str | None = None  # arg / row / sql_table_name: the argument
    # arg: the entity's column kept when the (optional) argument is not given
    value: Any = None  # const: the value; days_after: days; increment: the step
    column: str | None = None  # entity/row: the column read; days_after/increment: base column
    alt_value: Any = None  # days_after: days when the entity's `alt_column` is true
    alt_column: str | None = None


class Effect(BaseModel):
    """One write: which rows of which table, and what each gets."""

    table: str
    op: Literal["insert", "update", "delete"]
    rows: Literal["entity", "children", "peers", "parent", "new"]
    link: str | None = None  # children: FK naming the entity; peers: the shared container
    # column; parent: the FK column (of the entity or of an argument's row) naming the row
    link_arg: str | None = None  # parent: the row this argument names (else the entity's FK)
    where: dict[str, list[Any]] = Field(default_factory=dict)  # column -> allowed values
    where_arg: dict[str, str] = Field(default_factory=dict)  # column -> argument (list: IN)
    latest: bool = False  # only the newest matching row
    set: dict[str, Value] = Field(default_factory=dict)
    coupled: bool = False  # a row other than the one the tool names

    def describe(self) -> str:
        which = {"entity": "the row", "children": f"rows whose {self.link} is the row's id",
                 "peers": f"other rows of the same {self.link}", "parent": f"the row its "
                 f"{self.link} names", "new": "a new row"}[self.rows]
        cond = "".join(f" with {c} in {v}" for c, v in self.where.items())
        sets = ", ".join(f"{c}={_show_value(v)}" for c, v in self.set.items())
        return f"{self.op} {self.table}: {which}{cond}" + (f" ({sets})" if sets else "")


class Guard(BaseModel):
    """A refusal rule: the call fails (and changes nothing) unless it holds."""

    kind: Literal["state_in", "below", "differs", "exists_where", "none_where", "none_held"]
    row: str = "entity"  # "entity" or the argument whose resolved row is checked
    column: str | None = None
    values: list[Any] = Field(default_factory=list)  # state_in
    limit: float | None = None  # below: column < limit
    arg: str | None = None  # differs: the argument whose row's id must differ from column
    table: str | None = None  # exists_where / none_where: rows of this table ...
    link: str | None = None  # ... whose `link` is the entity's id ...
    where: dict[str, list[Any]] = Field(default_factory=dict)  # ... and match this
    match: dict[str, str] = Field(default_factory=dict)  # none_where: column -> argument value
    # none_held: no live row of `table` (`where`) whose `link` names the record the entity
    # reaches along `path` (its FK columns: a loan's copy_id, the copy's title_id) for another
    # owner (its `column` differs from the entity's `arg`)
    path: list[str] = Field(default_factory=list)
    message: str = ""


class ContractParam(BaseModel):
    """An argument and how it binds (a subset of plans.ParamPlan, kept here so a contract is
    self-contained)."""

    name: str
    role: Literal["key", "scope", "row", "eq", "like", "any_like", "ge", "le", "ref", "set",
                  "child_eq", "child_state", "paths", "limit", "ignore", "text", "option"]
    column: str | None = None
    columns: list[str] = Field(default_factory=list)  # any_like
    type: Literal["integer", "number", "string", "boolean", "array"] = "string"
    enum: list[str] | None = None
    required: bool = False
    default: Any = None
    description: str = ""
    ref_table: str | None = None  # key/scope/row/ref: the table the argument names a row of
    ref_column: str | None = None  # ... by this column
    via_table: str | None = None  # child_eq / child_state: the child table ...
    via_link: str | None = None  # ... its FK to the entity ...
    via_column: str | None = None  # ... the column compared ...
    via_value: Any = None  # child_state: ... with this value
    pattern: str | None = None
    # ref: the rows NOT naming that record ("not_contains"), and the self-reference along which
    # a record holds its descendants ("contains": a branch whose history holds the commit)
    negate: bool = False
    closure: str | None = None


class Contract(BaseModel):
    tool: str
    entity: str
    verb: Verb
    computation: Computation | None = None
    description: str = ""
    params: list[ContractParam] = Field(default_factory=list)
    effects: list[Effect] = Field(default_factory=list)
    guards: list[Guard] = Field(default_factory=list)
    returns: Literal["row", "rows", "counts", "summary", "deleted", "result"] = "row"
    embed: list[tuple[str, str]] = Field(default_factory=list)  # read_one: (child, fk) lists
    options: dict[str, Any] = Field(default_factory=dict)  # computation settings
    source_tool: str | None = None
    evidence: list[str] = Field(default_factory=list)  # what decided the verb and effects

    @property
    def write(self) -> bool:
        return self.verb in WRITE_VERBS or self.computation in ("sql_write", "create_table")

    def param(self, name: str) -> ContractParam | None:
        return next((p for p in self.params if p.name == name), None)

    def key(self) -> ContractParam | None:
        return next((p for p in self.params if p.role == "key"), None)

    def tables_written(self) -> set[str]:
        return {e.table for e in self.effects}

    def text(self) -> str:
        """The contract as lines for a reader (and the LLM designer's prompt)."""
        verb = self.verb + (f" ({self.computation})" if self.computation else "")
        lines = [f"{self.tool}: {verb} on {self.entity}; returns {self.returns}"]
        for p in self.params:
            bind = p.role + (f" {p.column}" if p.column else "") + (
                f" of {p.ref_table}.{p.ref_column}" if p.ref_table else "")
            lines.append(f"  arg {p.name}: {p.type}{'' if p.required else ' optional'} -> {bind}")
        lines += [f"  effect: {e.describe()}" for e in self.effects]
        lines += [f"  refuse unless: {g.message}" for g in self.guards]
        if self.embed:
            lines.append("  includes: " + ", ".join(f"{c} by {fk}" for c, fk in self.embed))
        return "\n".join(lines)


def _show_value(v: Value) -> str:
    if v.source == "arg":
        return f"<{v.arg}>"
    if v.source == "const":
        return repr(v.value)
    if v.source in ("entity", "row"):
        return f"{v.arg or 'row'}.{v.column}"
    if v.source == "days_after":
        alt = f" ({v.alt_value} if {v.alt_column})" if v.alt_column else ""
        return f"{v.column or 'today'}+{v.value}d{alt}"
    if v.source == "increment":
        return f"{v.column}+{v.value}"
    return v.source


# ---- schema reading ----------------------------------------------------------------------------
def pk_of(table: TableSpec) -> str | None:
    pk = table.primary_key
    return pk[0] if len(pk) == 1 else None


def status_of(table: TableSpec) -> ColumnSpec | None:
    return next((c for c in table.columns if c.enum and c.name in ("status", "state")), None)


def children(spec: EnvSpec, table: TableSpec) -> list[tuple[TableSpec, ColumnSpec]]:
    pk = pk_of(table)
    return [(t, c) for t in spec.tables for c in t.columns
            if c.foreign_key == f"{table.name}.{pk}" and t.name != table.name]


def fk_target(col: ColumnSpec) -> str | None:
    return col.foreign_key.split(".")[0] if col.foreign_key else None


def _has(table: TableSpec, name: str) -> bool:
    return any(c.name == name for c in table.columns)


def _words(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", text.lower()):
        out |= {w, singular(w)}
    return out


def _stem(word: str) -> str:
    return re.sub(r"(ing|ed|es|e|s)$", "", word)[:5]


def _lookup_column(table: TableSpec, text_words: set[str]) -> ColumnSpec | None:
    """A unique text column of `table` the text names ("the copy's barcode", "the member's
    card")."""
    for c in table.columns:
        if not c.unique or c.primary_key or c.type != "text":
            continue
        toks = [t for t in tokens(c.name) if t not in GENERIC_TOKENS]
        if toks and any(t in text_words for t in toks):
            return c
    return None


def _name_column(table: TableSpec) -> ColumnSpec | None:
    for n in ("name", "title", "path", "full_name", "label", "subject", "url", "email"):
        c = next((c for c in table.columns if c.name == n and c.type == "text"), None)
        if c is not None:
            return c
    return None


def _json_type(col: ColumnSpec) -> Literal["integer", "number", "string", "boolean"]:
    return {"integer": "integer", "real": "number", "boolean": "boolean"}.get(  # type: ignore[return-value]
        col.type, "string")


def _now_columns(table: TableSpec) -> list[str]:
    return [c.name for c in table.columns if c.name in ("updated_at", "modified_at")]


def _time_column(table: TableSpec, state: str) -> str | None:
    """The timestamp a record gets on reaching `state` (returned -> returned_at)."""
    for name in (f"{state}_at", f"{state}_on", f"{state.removesuffix('ed')}ed_at"):
        col = next((c for c in table.columns if c.name == name), None)
        if col is not None and col.type in ("datetime", "date", "text"):
            return col.name
    return None


def _time_value(table: TableSpec, column: str) -> Value:
    col = table.column(column)
    return Value(source="today" if col.type == "date" else "now")


def _field_max(spec: EnvSpec, table: str, column: str) -> float | None:
    hints = ((spec.provenance.stats or {}).get("field_hints") or {}).get(table) or {}
    v = (hints.get(column) or {}).get("maximum")
    return float(v) if isinstance(v, int | float) else None


def _pick_state(status: ColumnSpec | None, candidates: tuple[str, ...]) -> str | None:
    if status is None or not status.enum:
        return None
    return next((c for c in candidates if c in status.enum), None)


def _target_state(words: list[str], status: ColumnSpec | None) -> str | None:
    for phrase, states in STATE_VERBS.items():
        n = len(phrase)
        if any(tuple(words[i:i + n]) == phrase for i in range(len(words))):
            hit = _pick_state(status, states)
            if hit:
                return hit
    return None


def _period(spec: EnvSpec, entity: TableSpec, record: TableSpec) -> tuple[int, int | None,
                                                                          str | None]:
    """(days, alternative days, boolean column of `entity` selecting them) from a sentence of
    the source such as "A loan lasts 21 days (7 days for copies marked as new releases)"."""
    noun = singular(record.name)
    for line in [spec.theme.description, *spec.theme.raw_descriptions]:
        m = _PERIOD.search(line)
        if not m or noun.replace("_", " ") not in line.lower():
            continue
        days = int(m.group(1))
        if m.group(2):
            alt_words = _words(m.group(3))
            col = next((c for c in entity.columns if c.type == "boolean" and
                        all(t in alt_words for t in tokens(c.name) if t not in ("is", "has"))),
                       None)
            if col is not None:
                return days, int(m.group(2)), col.name
        return days, None, None
    return DEFAULT_PERIOD_DAYS, None, None


# ---- arguments -----------------------------------------------------------------------------
def _arg_type(info: dict[str, Any]) -> str:
    return {"integer": "integer", "number": "number", "boolean": "boolean",
            "array": "array"}.get(str(info.get("type")), "string")


def _resolve_ref(spec: EnvSpec, table: TableSpec, column: str | None, jtype: str
                 ) -> tuple[str, str] | None:
    """(table, column) an argument names a row by: a string argument declared against an
    integer id names the row by its name column (a time zone by "Europe/Paris")."""
    pk = pk_of(table)
    if pk is None:
        return None
    col = next((c for c in table.columns if c.name == column), None)
    if col is None:
        return None
    if col.type == "integer" and jtype == "string":
        named = _name_column(table)
        if named is None:
            return None
        return table.name, named.name
    return table.name, col.name


class _Args:
    """The declared arguments of one source tool, read against the schema."""

    def __init__(self, spec: EnvSpec, entity: TableSpec, entry: dict[str, Any]):
        self.spec = spec
        self.entity = entity
        self.raw: dict[str, dict[str, Any]] = dict(entry.get("arguments") or {})
        self.tables = {t.name: t for t in spec.tables}

    def names(self) -> list[str]:
        return list(self.raw)

    def safe(self, arg: str) -> str:
        return safe_name(arg)

    def refs_to(self, table: str) -> list[str]:
        return [a for a, i in self.raw.items() if i.get("role") == "reference"
                and i.get("table") == table]

    def by_role(self, role: str) -> list[str]:
        return [a for a, i in self.raw.items() if i.get("role") == role]


# ---- derivation ----------------------------------------------------------------------------
# the plain plan of a source tool (plans.source_plan), passed in: the planner builds on the
# contracts, not the other way round
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


def _param(name: str, role: str, **kw: Any) -> ContractParam:
    return ContractParam(name=name, role=role, **kw)  # type: ignore[arg-type]


def _key_param(spec: EnvSpec, entity: TableSpec, args: _Args, text: set[str],
               used: set[str]) -> ContractParam:
    """The argument naming the entity row: a declared reference to it, else a unique column
    the description names (a barcode), else `<noun>_id`."""
    noun = singular(entity.name)
    for a in args.refs_to(entity.name):
        info = args.raw[a]
        ref = _resolve_ref(spec, entity, info.get("column"), _arg_type(info))
        if ref is not None:
            used.add(a)
            col = entity.column(ref[1])
            return _param(args.safe(a), "key", column=ref[1], ref_table=entity.name,
                          ref_column=ref[1], type=_json_type(col), required=True,
                          description=f"The {noun.replace('_', ' ')}'s {ref[1].replace('_', ' ')}.")
    look = _lookup_column(entity, text) if not args.raw else None
    if look is not None:
        return _param(look.name, "key", column=look.name, ref_table=entity.name,
                      ref_column=look.name, required=True,
                      description=f"{look.name.replace('_', ' ').capitalize()} of the "
                                  f"{noun.replace('_', ' ')}.")
    pk = pk_of(entity) or "id"
    return _param(f"{noun}_id", "key", column=pk, ref_table=entity.name, ref_column=pk,
                  type="integer", required=True, description=f"Id of the {noun.replace('_', ' ')}.")


def _scope_params(spec: EnvSpec, entity: TableSpec, args: _Args, used: set[str]
                  ) -> list[ContractParam]:
    """References to a container the entity belongs to (a branch's repository): they narrow
    the key lookup, never move the row."""
    out = []
    for a, info in args.raw.items():
        if a in used or info.get("role") != "reference" or info.get("table") == entity.name:
            continue
        parent = args.tables.get(info.get("table") or "")
        if parent is None:
            continue
        fk = next((c for c in entity.columns if fk_target(c) == parent.name), None)
        ref = _resolve_ref(spec, parent, info.get("column"), _arg_type(info))
        if fk is None or ref is None or not info.get("via", "").endswith(fk.name):
            continue
        used.add(a)
        out.append(_param(args.safe(a), "scope", column=fk.name, ref_table=parent.name,
                          ref_column=ref[1], type=_json_type(parent.column(ref[1])),
                          required=bool(info.get("required", True)),
                          description=f"The {singular(parent.name).replace('_', ' ')} "
                                      f"({ref[1].replace('_', ' ')})."))
    return out


def _row_param(spec: EnvSpec, table: TableSpec, name: str, text: set[str], required: bool,
               description: str) -> ContractParam:
    look = _lookup_column(table, text)
    if look is not None:
        return _param(look.name, "row", ref_table=table.name, ref_column=look.name,
                      required=required, description=description + f" (its "
                      f"{look.name.replace('_', ' ')})")
    pk = pk_of(table) or "id"
    return _param(name, "row", ref_table=table.name, ref_column=pk, type="integer",
                  required=required, description=description + " (its id)")


# -- computations ------------------------------------------------------------------------------
FETCH_MAX_LENGTH = 5000  # mcp-server-fetch's default page of content


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
    business = [t for t in spec.tables if t.name not in ("queries", "tables", "insights")]
    if query_arg is not None:
        p = _param(args.safe(query_arg), "text", required=True,
                   description="The SQL statement.")
        up = desc.upper()
        if "CREATE" in up and "TABLE" in up:
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
        if "SELECT" in up or "read" in words:
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


# -- extend (renew) ------------------------------------------------------------------------------
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
               type="integer", required=True,
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
    sets: dict[str, Value] = {status.name: Value(source="const", value=target)}
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
    return [Effect(table=record.name, op="insert", rows="new", set=sets, coupled=True)]


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
        out.append(Effect(table=t.name, op="update", rows="children", link=fk.name,
                          where={st.name: opened}, set=close, coupled=True))
        break
    return out


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


def _require(params: list[ContractParam], guards: list[Guard]) -> None:
    """The arguments a guard reads are required (a trip needs its bike)."""
    named = {g.row for g in guards} | {a for g in guards for a in g.match.values()}
    for p in params:
        if p.name in named:
            p.required = True


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
                c.params = _list_filters(spec, entity, text, desc)
        else:
            c.verb, c.returns = ("search" if set(words) & SEARCH_WORDS else "list"), "rows"
            if not any(p.role not in ("limit", "ignore") for p in c.params):
                c.params = _list_filters(spec, entity, text, desc) if c.verb == "list" \
                    else _search_params(spec, entity, text, desc)
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
        c.guards += guards + _none_available(spec, entity, c.params, desc)
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
                return p.model_copy(update={
                    "role": "child_eq", "via_table": t.name, "via_link": mine,
                    "via_column": theirs, "type": "integer",
                    "description": f"Only {entity.name.replace('_', ' ')} linked to this "
                                   f"{singular(target).replace('_', ' ')} ({t.name})."})
    return p


def _list_filters(spec: EnvSpec, entity: TableSpec, text: set[str], desc: str
                  ) -> list[ContractParam]:
    """Filters a listing tool takes: its parents (the member whose loans), its state."""
    out = []
    for col in entity.columns:
        parent = fk_target(col)
        if parent and not col.primary_key and parent != entity.name:
            out.append(_param(col.name, "eq", column=col.name, type="integer",
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
                out.append(_param(f"{singular(parent)}_id", "child_eq", type="integer",
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


# ---- schema tools' contracts (their plans say all there is) ---------------------------------------
def plan_contract(plan: Any) -> Contract:
    """The contract of a tool planned from the schema (get_x, list_x, set_x_status, ...)."""
    verb = {"get": "read_one", "list": "search" if plan.name.startswith("search_") else "list",
            "count_by": "compute", "summary": "compute", "create": "create",
            "set_status": "transition", "update": "update_field", "delete": "delete"}[plan.kind]
    effects = []
    if plan.kind == "create":
        effects = [Effect(table=plan.table, op="insert", rows="new")]
    elif plan.kind in ("set_status", "update"):
        effects = [Effect(table=plan.table, op="update", rows="entity")]
    elif plan.kind == "delete":
        effects = [Effect(table=plan.table, op="delete", rows="entity")]
    return Contract(tool=plan.name, entity=plan.table, verb=verb, description=plan.description,
                    effects=effects, returns={"get": "row", "list": "rows",
                                              "count_by": "counts", "summary": "summary",
                                              "delete": "deleted"}.get(plan.kind, "row"))


__all__ = ["BUSY_STATES", "Computation", "Contract", "ContractParam", "Effect", "FREE_STATES",
           "Guard", "Hold", "VERBS", "Value", "Verb", "WRITE_VERBS", "book_parent", "derive_contract", "held_values", "holds_of",
           "plan_contract"]
