"""Questions over the data for a tool that runs the SQL it is given.

A service whose tool takes a SQL statement (sqlite's `read_query`, Postgres' `query(sql)`) is
asked what a person asks a database: "How many orders in the `orders` table have status
'shipped'?", not "run the query 'SELECT ...' and tell me the row's name" (the statement pasted
into the request: a copying task). Each question comes with the statement that answers it; the
gold chain runs that statement, and an attempt may write its own: the check takes any
statement of that tool whose rows show the answer (`tasks.check.selecting_arguments` leaves the
statement out, `synthesis.gates.gate_solvable` does not ask for it in the request).

Forms, from the rows the environment stores (each answer one value of one row):
- lookup (level 1): a column of the record a unique value names;
- count, aggregate (sum, highest, lowest, average), with or without a condition (level 2);
- over a link: how many children, or their total, of the parent a unique value names.

A tool that runs the data-changing statements it is given (sqlite's `write_query`) is asked a
change in words ("set the status of the order whose ... to 'shipped'"), checked on the state.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from agent_world.design.offline.contract_computations import CATALOGUE_TABLES
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import TableSpec
from agent_world.mining.offline.vocabulary import not_additive
from agent_world.tasks.words import TIMESTAMPS, entity_plural, split_words, table_entity

SAYABLE = 40  # a value a person types into a question: one line, at most this long
# openers of a request to a database assistant
OPENERS = ("", "Hi. ", "Can you check the database? ", "Hello! ", "Quick question. ")
CHANGE_OPENERS = ("", "Hi. ", "Hello! ", "A correction for the database: ")
AGGREGATES = {"sum": ("SUM", "total"), "max": ("MAX", "highest"), "min": ("MIN", "lowest"),
              "avg": ("AVG", "average")}


@dataclass
class SqlQuestion:
    text: str  # the question, as a request says it
    sql: str  # the statement that answers it (one row, one column `column`)
    column: str
    form: str  # lookup | count | aggregate | link_count | link_total
    aggregation: bool


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def _said(value: Any) -> str:
    return str(value) if isinstance(value, int | float) else f"'{value}'"


def _words(column: str) -> str:
    return column.replace("_", " ")


def _data_tables(spec: EnvSpec) -> list[TableSpec]:
    return [t for t in spec.tables if t.name not in CATALOGUE_TABLES and spec.rows.get(t.name)]


def _pk(table: TableSpec) -> str | None:
    pk = table.primary_key
    return pk[0] if len(pk) == 1 else None


def _naming(spec: EnvSpec, table: TableSpec) -> list[str]:
    """Text columns whose stored values are all present, distinct and sayable: a value of one
    names one record (an email, a SKU, a customer's name)."""
    rows = spec.rows.get(table.name, [])
    out = []
    for c in table.columns:
        if c.type != "text" or c.enum or c.primary_key or c.foreign_key:
            continue
        values = [r.get(c.name) for r in rows]
        if all(isinstance(v, str) and 0 < len(v) <= SAYABLE and "\n" not in v
               and "'" not in v for v in values) and len(set(values)) == len(values):
            out.append(c.name)
    return out


def _categories(spec: EnvSpec, table: TableSpec) -> dict[str, list[Any]]:
    """Columns whose stored values repeat over a few categories (a status, a country)."""
    rows = spec.rows.get(table.name, [])
    out = {}
    for c in table.columns:
        if c.type != "text" or c.primary_key or c.foreign_key:
            continue
        values = [r.get(c.name) for r in rows if isinstance(r.get(c.name), str)]
        kinds = sorted(set(values))
        if len(values) >= 4 and 2 <= len(kinds) <= 8 and len(kinds) < len(values) and \
                all(0 < len(v) <= SAYABLE and "'" not in v for v in kinds):
            out[c.name] = kinds
    return out


def _measures(table: TableSpec) -> list[str]:
    """Numeric columns a total or an extreme means something of (no key, no link)."""
    return [c.name for c in table.columns if c.type in ("integer", "real") and not c.primary_key
            and not c.foreign_key and not c.name.endswith(("_id", "id", "_idx"))]


def _additive(column: str) -> bool:
    """Whether a total of the column means something: not of a year or a code, nor of a rate
    or a price each (the total unit price of order items is no amount anybody paid)."""
    words = split_words(column)
    return not not_additive(words) and not {"unit", "per", "rate", "price", "ratio"} & set(words)


def _rounded(expr: str, table: TableSpec, column: str) -> str:
    """`expr` rounded to cents for a real column; an integer's total stays an integer."""
    real = next((c.type == "real" for c in table.columns if c.name == column), True)
    return f"ROUND({expr}, 2)" if real else expr


def _readable(table: TableSpec, skip: set[str]) -> list[str]:
    return [c.name for c in table.columns if c.type != "json" and not c.primary_key
            and not c.foreign_key and c.name not in skip
            and c.name not in TIMESTAMPS]


def sql_question(spec: EnvSpec, rng: random.Random) -> SqlQuestion | None:
    """One question over `spec`'s stored rows with the statement that answers it; None when
    the data offers none."""
    tables = _data_tables(spec)
    if not tables:
        return None
    forms = ["lookup", "count", "aggregate", "link_count", "link_total"]
    rng.shuffle(forms)
    for form in forms:
        for table in rng.sample(tables, len(tables)):
            q = _FORMS[form](spec, table, rng)
            if q is not None:
                return q
    return None


def _lookup(spec: EnvSpec, table: TableSpec, rng: random.Random) -> SqlQuestion | None:
    naming = _naming(spec, table)
    if not naming:
        return None
    by = rng.choice(naming)
    row = rng.choice(spec.rows[table.name])
    asked = [c for c in _readable(table, {by}) if row.get(c) is not None
             and len(str(row[c])) <= 60]
    if not asked:
        return None
    col = rng.choice(asked)
    text = f"In the `{table.name}` table, what is {_of_whose(table, col, by, row[by])}?"
    return SqlQuestion(text, f"SELECT {_q(col)} FROM {_q(table.name)} "
                             f"{_where(by, row[by])}", col, "lookup", False)


def _of_whose(table: TableSpec, col: str, by: str, value: Any) -> str:
    """"the price of the product whose sku is 'TC-9165'": one field of one record."""
    return (f"the {_words(col)} of the {table_entity(table.name)} whose {_words(by)} is "
            f"{_said(value)}")


def _where(by: str, value: Any) -> str:
    return f"WHERE {_q(by)} = {_lit(value)}"


def _count(spec: EnvSpec, table: TableSpec, rng: random.Random) -> SqlQuestion | None:
    cats = _categories(spec, table)
    if not cats:
        return None
    col = rng.choice(sorted(cats))
    value = rng.choice(cats[col])
    ents = entity_plural(table_entity(table.name))
    text = f"How many {ents} in the `{table.name}` table have {_words(col)} {_said(value)}?"
    return SqlQuestion(text, f'SELECT COUNT(*) AS "count" FROM {_q(table.name)} WHERE '
                             f"{_q(col)} = {_lit(value)}", "count", "count", True)


def _aggregate(spec: EnvSpec, table: TableSpec, rng: random.Random) -> SqlQuestion | None:
    measures = _measures(table)
    if not measures:
        return None
    col = rng.choice(measures)
    kinds = sorted(AGGREGATES) if _additive(col) else ["avg", "max", "min"]
    fn, word = AGGREGATES[rng.choice(kinds)]
    cats = _categories(spec, table)
    where, cond = "", ""
    if cats and rng.random() < 0.6:
        c = rng.choice(sorted(cats))
        v = rng.choice(cats[c])
        where, cond = f" WHERE {_q(c)} = {_lit(v)}", f" whose {_words(c)} is {_said(v)}"
    ents = entity_plural(table_entity(table.name))
    text = f"What is the {word} {_words(col)} of the {ents}{cond} in the `{table.name}` table?"
    value = f"ROUND({fn}({_q(col)}), 2)" if fn == "AVG" else _rounded(f"{fn}({_q(col)})", table,
                                                                        col)
    return SqlQuestion(text, f'SELECT {value} AS "{word}" FROM {_q(table.name)}{where}', word,
                       "aggregate", True)


def _link(spec: EnvSpec, table: TableSpec, rng: random.Random, total: bool
          ) -> SqlQuestion | None:
    """Over a link from `table` (the children) to the parent a unique value names."""
    links = [(c.name, c.foreign_key.split(".")) for c in table.columns if c.foreign_key
             and not c.primary_key]
    rng.shuffle(links)
    measures = [m for m in _measures(table) if _additive(m)]
    if total and not measures:
        return None
    for fk, (parent_name, parent_key) in links:
        parent = next((t for t in spec.tables if t.name == parent_name), None)
        if parent is None or parent.name == table.name or _pk(parent) != parent_key:
            continue
        naming = _naming(spec, parent)
        linked = {r.get(fk) for r in spec.rows[table.name]}
        rows = [r for r in spec.rows.get(parent.name, []) if r.get(parent_key) in linked]
        if not naming or not rows:
            continue
        by, row = rng.choice(naming), rng.choice(rows)
        kids, parent_ent = entity_plural(table_entity(table.name)), table_entity(parent.name)
        join = (f"FROM {_q(table.name)} AS c JOIN {_q(parent.name)} AS p ON c.{_q(fk)} = "
                f"p.{_q(parent_key)} WHERE p.{_q(by)} = {_lit(row[by])}")
        whose = f"the {parent_ent} whose {_words(by)} is {_said(row[by])}"
        tables = f"`{table.name}` and `{parent.name}`"
        if total:
            col = rng.choice(measures)
            return SqlQuestion(
                f"What is the total {_words(col)} of the {kids} of {whose} (tables {tables})?",
                f'SELECT {_rounded(f"SUM(c.{_q(col)})", table, col)} AS "total" {join}', "total", "link_total",
                True)
        return SqlQuestion(f"How many {kids} does {whose} have (tables {tables})?",
                           f'SELECT COUNT(*) AS "count" {join}', "count", "link_count", True)
    return None


_FORMS = {"lookup": _lookup, "count": _count, "aggregate": _aggregate,
          "link_count": lambda s, t, r: _link(s, t, r, total=False),
          "link_total": lambda s, t, r: _link(s, t, r, total=True)}


def sql_change(spec: EnvSpec, rng: random.Random) -> SqlQuestion | None:
    """One change a person asks of the data, with the statement that makes it: a column of
    the record a unique value names set to another value the column holds (a status, a
    category, a price); None when the data offers none."""
    for table in rng.sample(_data_tables(spec), len(_data_tables(spec))):
        naming = _naming(spec, table)
        rows = spec.rows[table.name]
        cats = _categories(spec, table)
        settable = sorted(cats) + [m for m in _measures(table)]
        if not naming or not settable:
            continue
        by, row = rng.choice(naming), rng.choice(rows)
        col = rng.choice(settable)
        pool = cats.get(col) or sorted({r.get(col) for r in rows if r.get(col) is not None})
        pool = [v for v in pool if v != row.get(col) and not isinstance(v, bool)]
        if not pool:
            continue
        value = rng.choice(pool)
        text = (f"In the `{table.name}` table, set {_of_whose(table, col, by, row[by])} to "
                f"{_said(value)}.")
        return SqlQuestion(text, f"UPDATE {_q(table.name)} SET {_q(col)} = {_lit(value)} "
                                 f"{_where(by, row[by])}", col, "update", False)
    return None


def request(question: SqlQuestion, rng: random.Random) -> str:
    """The question (or change) as a request, after an opener."""
    opener = rng.choice(CHANGE_OPENERS if question.form == "update" else OPENERS)
    text = question.text
    if opener.endswith(": "):  # "A correction for the database: in the ..."
        text = text[0].lower() + text[1:]
    return f"{opener}{text}"


__all__ = ["SqlQuestion", "request", "sql_change", "sql_question"]
