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
  ``git_status`` / ``git_diff_(un)staged`` compute the status and the diff text of those
  rows; ``git_diff(target)`` the file changes of the commits in the head's ancestry or the
  target's (a branch, a commit hash prefix) but not both;
* ``read_query`` - runs the caller's SELECT read-only over the environment's data.

This module holds the vocabulary and the models; contract_derivation.py reads a source tool
into a contract. The renderer (render_contracts.py) writes code from a contract and the test
writer (contract_expectations.py) evaluates the same contract over the seed rows in plain
Python: a tool passes only if it does what the contract says, on the right rows and nowhere
else.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Verb = Literal["read_one", "list", "search", "create", "update_field", "transition", "delete",
               "compute"]
Computation = Literal["sql_select", "sql_write", "create_table", "describe_table", "diff",
                      "status", "convert", "clock", "commit", "compare"]
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


class Value(BaseModel):
    """How one written column gets its value."""

    source: Literal["arg", "const", "now", "today", "entity", "row", "days_after", "increment",
                    "new_id", "next_code", "sql_table_name", "notice", "child", "accrued"]
    arg: str | None = None  # arg / row / sql_table_name: the argument
    # arg: the entity's column kept when the (optional) argument is not given
    value: Any = None  # const: the value; days_after: days; increment: the step
    column: str | None = None  # entity/row: the column read; days_after/increment: base column
    alt_value: Any = None  # days_after: days when the entity's `alt_column` is true
    alt_column: str | None = None
    # notice: `value`, or `alt_value` when the entity's `column` (its start) is less than
    # `hours` away ("cancelling less than 24 hours before the start is a late cancellation")
    hours: float | None = None
    # child: `column` of the closed row a `late` effect inserts for; accrued: `value` per day
    # that row's `column` (its due date) lies before today, capped at the `alt_column` its
    # references lead to (a loan's copy's title's replacement cost)


class Effect(BaseModel):
    """One write: which rows of which table, and what each gets."""

    table: str
    op: Literal["insert", "update", "delete"]
    rows: Literal["entity", "children", "peers", "parent", "new", "shared", "late"]
    link: str | None = None  # children: FK naming the entity; peers: the shared container
    # column; parent: the FK column (of the entity or of an argument's row) naming the row
    link_arg: str | None = None  # parent: the row this argument names (else the entity's FK)
    where: dict[str, list[Any]] = Field(default_factory=dict)  # column -> allowed values
    where_arg: dict[str, str] = Field(default_factory=dict)  # column -> argument (list: IN)
    latest: bool = False  # only the newest matching row
    # shared: rows whose `link` equals the entity's `via` column (the holds on a copy's title)
    via: str | None = None
    first_by: str | None = None  # only the first matching row in this column's order
    # column -> argument: only rows whose column holds the id of the row the argument names
    # (the hold of the member checking the copy out)
    where_row: dict[str, str] = Field(default_factory=dict)
    set: dict[str, Value] = Field(default_factory=dict)
    coupled: bool = False  # a row other than the one the tool names
    # when this effect changed a row, the tool's own row gets these values too (a returned
    # copy that readies a hold goes to the hold shelf)
    then_entity: dict[str, Value] = Field(default_factory=dict)
    # only when the tool's row had these values before the call (a cancelled hold frees the
    # copy kept for it only if it was ready)
    when: dict[str, list[Any]] = Field(default_factory=dict)
    # late: an insert per row of this table (`link` naming the tool's row, `where`) that the
    # call closes past its due date (a fine for each overdue loan a check-in ends)
    child: str | None = None

    def describe(self) -> str:
        which = {"entity": "the row", "children": f"rows whose {self.link} is the row's id",
                 "peers": f"other rows of the same {self.link}", "parent": f"the row its "
                 f"{self.link} names", "new": "a new row",
                 "shared": f"rows whose {self.link} is the row's {self.via}",
                 "late": f"a new row for each {self.child} row whose {self.link} is the "
                         f"row's id, closed past its due date"}[self.rows]
        if self.first_by:
            which = f"the first of the {which} by {self.first_by}"
        cond = "".join(f" with {c} in {v}" for c, v in self.where.items()) + "".join(
            f" with {c} = the {a} row's id" for c, a in self.where_row.items())
        sets = ", ".join(f"{c}={_show_value(v)}" for c, v in self.set.items())
        then = ", ".join(f"{c}={_show_value(v)}" for c, v in self.then_entity.items())
        when = " and ".join(f"its {c} was in {v}" for c, v in self.when.items())
        return (f"if {when}: " if when else "") + f"{self.op} {self.table}: {which}{cond}" + (
            f" ({sets})" if sets else "") + (
            f"; if a row changed, the row itself: {then}" if then else "")


class Guard(BaseModel):
    """A refusal rule: the call fails (and changes nothing) unless it holds."""

    kind: Literal["state_in", "below", "differs", "exists_where", "none_where", "none_held",
                  "sum_at_most", "no_overlap", "held_for"]
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
    # sum_at_most: the `column` total of the rows of `table` (`where`) whose `link` names the
    # checked row is at most `limit` (unpaid fines of the member)
    # no_overlap: no live row of `table` (`where`) whose `link` names the checked row (the
    # patient) holds a period (its `column`: slot_id, that row's `path`: [start, end]) that
    # overlaps the period the new row takes (the slot `arg` names)
    # held_for: while the entity's `state` column is in `values` (a copy on the hold shelf),
    # a row of `table` (`where`: a ready hold) whose `link` is the entity's `path[0]` (its
    # title) has `column` (member_id) naming the row the `row` argument names (the borrower)
    state: str | None = None
    message: str = ""


class ContractParam(BaseModel):
    """An argument and how it binds (a subset of plans.ParamPlan, kept here so a contract is
    self-contained)."""

    name: str
    role: Literal["key", "scope", "row", "eq", "like", "any_like", "ge", "le", "ref", "set",
                  "child_eq", "child_state", "paths", "limit", "ignore", "text", "option"]
    column: str | None = None
    columns: list[str] = Field(default_factory=list)  # any_like
    type: Literal["integer", "number", "string", "boolean", "array", "object"] = "string"
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
    ref_key: str | None = None  # child_eq by `ref_column`: the key of `ref_table` it finds
    pattern: str | None = None
    # ref: the rows NOT naming that record ("not_contains"), and the self-reference along which
    # a record holds its descendants ("contains": a branch whose history holds the commit)
    negate: bool = False
    closure: str | None = None
    # eq: the source's value that names every row ("all" branches, local and remote)
    every: str | None = None


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
    if v.source == "notice":
        return f"{v.value!r} ({v.alt_value!r} under {v.hours:g}h before {v.column})"
    if v.source == "child":
        return f"closed.{v.column}"
    if v.source == "accrued":
        return f"{v.value} per day past closed.{v.column}, at most {v.alt_column}"
    return v.source


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
           "Guard", "VERBS", "Value", "Verb", "WRITE_VERBS", "plan_contract"]
