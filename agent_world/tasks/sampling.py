"""Argument values for walks: what a person would state for a tool argument.

`ValueSampler` draws from the tool's own tests, database columns of the same name (a
product's name from products, not customers), enum members; `row_of` draws the values of one
call from one stored record so they agree with each other, and `edit_values` gives an edit
that would name only its record one of its fields to set.
"""

from __future__ import annotations

import posixpath
import random
import re
from collections import defaultdict
from typing import Any

from agent_world.design.offline.contract_expectations import STAND_IN_TEXT
from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import singular_word, snake
from agent_world.mining.offline.signatures import new_value_field
from agent_world.mining.offline.value_pools import NAMED_FILE_TYPES, is_named_value
from agent_world.mining.semantics.lifecycle_rule import state_rank, status_column
from agent_world.tasks.toolgraph import tested_values
from agent_world.tasks.words import PAGING, acted_table, entity, runs_sql, table_entity

_KEY = re.compile(r"(?:^|_)(?:id|code|number|sku|uuid|key)$|[a-z]Id$")
_EDIT_VERBS = frozenset({"edit", "update", "modify", "change", "set", "patch", "amend"})
_STATEMENT = re.compile(r"^\s*(?:SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|ALTER)\s", re.I)


SAYABLE = 120  # the longest text a request states as a value
_PERSON_NAMES = frozenset({"full_name", "first_name", "last_name", "given_name", "family_name",
                           "display_name"})
_CONTACTS = frozenset({"email", "phone", "email_address", "phone_number", "birth_date",
                       "date_of_birth"})


def is_edit(spec: EnvSpec, tool: str) -> bool:
    """A write that sets the fields it is given (`update_member`, "Edit a member: set the
    given fields"), as opposed to an action on a record (`cancel_slot`)."""
    t = spec.tool(tool)
    if not t.mutates:
        return False
    first = re.split(r"[_\W]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", tool).lower())[:1]
    said = t.description.split()[:1]
    return bool(set(first) & _EDIT_VERBS) or bool(said and said[0].lower() in _EDIT_VERBS)



# what the designer's tests pass for an argument the tool ignores (design's
# `read_expectations.filler`) or a value a write sets that nothing stored fits
# (`STAND_IN_TEXT`): no value a person would ask for ("the node ids set to 'x'", Expo's
# collect_app_logs "with the project root set to 'Damaged beyond repair'")
_FILLER = "x"
_STAND_INS = frozenset({_FILLER, STAND_IN_TEXT})


_OUTPUT_FILE = re.compile(r"(?:output|destination|target|save)_?(?:file_?(?:name|path)?|"
                          r"filename|path)")


def _stand_in(value: Any) -> bool:
    return isinstance(value, str) and value in _STAND_INS


def _unsayable(value: Any) -> bool:
    return isinstance(value, str) and (len(value) > SAYABLE or "\n" in value)


# stored values a list argument is drawn from at most
LISTED = 20
# the optional arguments a request gives a call at most, beside the required ones
MAX_OPTIONAL = 2


def _marked(value: object) -> bool:
    """A tool test's edit of a stored value: "-05:00 (edited)", "edited" where the stored
    value was empty, {"edited": true} for an object nothing stored could stand for; no value
    a person would ask for ("set its database to 'edited'", Jira's "update Jira resources:
    set its body to {"edited": true}")."""
    return isinstance(value, str) and (value.endswith(" (edited)") or value == "edited") \
        or value == {"edited": True}


def _of_made_type(tool: str, param: str, values: list[Any]) -> list[Any]:
    """`values` of an output file argument with the extension of the type the tool's name
    makes: Word's convert_to_pdf(output_filename) drew 'report-q3.docx' from the documents'
    table, a PDF no converter writes."""
    if not _OUTPUT_FILE.fullmatch(snake(param)):
        return values
    # the type a word of the tool's name names (convert_to_pdf, take_screenshot), as mined
    # file names take theirs
    made = next((NAMED_FILE_TYPES[w][0] for w in reversed(snake(tool).split("_"))
                 if w in NAMED_FILE_TYPES), None)
    if made is None:
        return values
    return list(dict.fromkeys(
        f"{posixpath.splitext(v)[0]}.{made}" if isinstance(v, str) and posixpath.splitext(v)[1]
        else v for v in values))


def ahead(states: list[str], now: str) -> list[str]:
    """The states a record in `now` may still move to: those its source lists after it (a
    source lists a lifecycle in its order: pending, paid, shipped, delivered), none from an
    end no state of the way follows (delivered, cancelled; paid is no end for an order that
    ships after it), and a standing state it left."""
    later = states[states.index(now) + 1:]
    if state_rank(now) == 2 and all(state_rank(s) == 2 for s in later):
        return []
    # a standing state is returned to (a suspended member made active again, a copy back
    # from loan available); a waiting one is not (a shipped order is never pending again)
    return [s for s in states[:states.index(now)] if s in _STANDING] + later


_STANDING = frozenset({"active", "enabled", "available", "published", "open", "visible",
                       "online", "in_stock"})


class ValueSampler:
    """Valid-looking values for a tool argument: its tests' values, database columns of the
    same name (or the key of the table it names), enum members."""

    def __init__(self, spec: EnvSpec):
        self.spec = spec
        self.tested = tested_values(spec)
        self.columns: dict[str, list[Any]] = defaultdict(list)
        # (table, column) -> values: a product's name is drawn from products, not customers
        self.own: dict[tuple[str, str], list[Any]] = {}
        self.tables = {table_entity(t.name): t for t in spec.tables}  # entity -> its table
        self.tools = {t.name for t in spec.tools}
        self.sql_runners = {t for t in self.tools if runs_sql(spec, t)}
        for t in spec.tables:
            rows = spec.rows.get(t.name, [])
            for c in t.columns:
                values = [r[c.name] for r in rows if r.get(c.name) is not None]
                self.columns[c.name].extend(values)
                self.own[(table_entity(t.name), c.name)] = values
                if c.primary_key:
                    one = t.name[:-1] if t.name.endswith("s") else t.name
                    self.columns[f"{one}_{c.name}" if c.name == "id" else c.name] \
                        .extend(values)

    def _own_entity(self, tool: str) -> str:
        """The entity of the table a tool acts on: its whole name when a table has it
        (`create_dst_transition` → dst transition), else its last word (`list_open_holds` →
        hold)."""
        ent = entity(tool)
        if ent in self.tables:
            return ent
        # the table its code writes or reads (Hostinger's repairDatabaseV1 writes
        # hosting_repair_databases): a database's name from databases, never a contact's
        acted = acted_table(self.spec, tool) if tool in self.tools else None
        return table_entity(acted) if acted and table_entity(acted) in self.tables \
            else ent.split()[-1]

    def candidates(self, tool: str, param: str, schema: dict[str, Any]) -> list[Any]:
        if "enum" in schema:
            return list(schema["enum"])
        types = schema.get("type", "string")
        types = set(types) if isinstance(types, list) else {types}
        if types & {"array", "object"}:
            tested = [v for v in self.tested.get((tool, param), [])
                      if v is not None and not _stand_in(v) and not _marked(v)]
            return tested + self._listed(tool, param, schema)
        columns = self.own.get((self._own_entity(tool), param))
        if not columns:
            columns = self.columns.get(param, [])
            if tool in self.tools and tool not in self.sql_runners:
                # another table's SQL is no search text: "the notebooks matching 'SELECT
                # "id", "name" FROM "sessions" ...'" (NotebookLM's search_notebooks(query))
                columns = [v for v in columns if not (isinstance(v, str) and _STATEMENT.match(v))]
        tested = [v for v in self.tested.get((tool, param), []) if not _stand_in(v)]
        if columns and tested:
            # a test's edited copy of a stored value ("-05:00 (edited)") is no value a
            # person would ask for when the stored ones are at hand
            known = {c for c in columns if isinstance(c, str)}
            tested = [v for v in tested if not (isinstance(v, str) and " (" in v
                                                and v[: v.index(" (")] in known)]
        pool = list(tested) + list(columns)
        plain = [v for v in pool if not _marked(v)]
        # a test's marked edit only when nothing else is at hand, and then without its mark:
        # "set its utc offset to '-05:00 (edited)'" asks for no value the field ever holds
        pool = plain or [v.removesuffix(" (edited)") if isinstance(v, str) else v for v in pool]
        ok = []
        for v in pool:
            if isinstance(v, bool) and "boolean" not in types:
                continue
            if isinstance(v, int | float) and not isinstance(v, bool) and \
                    not types & {"integer", "number"} and "string" not in types:
                continue
            if isinstance(v, str) and "string" not in types:
                continue
            ok.append(v)
        if re.search(r"(?:^|_)(?:quantity|qty|units)$", param):
            # nobody orders 0 units: a stored 0 is an edge case, not a request
            ok = [v for v in ok if v != 0] or ok
        ok = _of_made_type(tool, param, ok)
        # a page body of paragraphs is no value a person types into a request
        sayable = [v for v in ok if not _unsayable(v)]
        stored = [v for v in columns if isinstance(v, str)]
        if stored and all(_unsayable(v) for v in stored):
            # nor is any value of a field that only ever holds such text (a diff): a test's
            # short stand-in ("set the diff to 'one'") is no edit a person asks for
            return [v for v in sayable if not isinstance(v, str)]
        return sayable

    def _listed(self, tool: str, param: str, schema: dict[str, Any]) -> list[list[Any]]:
        """Stored values of the item a list argument names, one or two to a list: MUI's
        fetchDocs(urls) takes [a stored doc url] (only its test's one URL had been at hand)."""
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        if items.get("type") not in ("string", "integer") or "enum" in items:
            return []
        one = singular_word(param)
        if one == param:
            return []
        stored = self.own.get((self._own_entity(tool), one)) or self.columns.get(one, [])
        kind = str if items["type"] == "string" else int
        values = [v for v in dict.fromkeys(stored) if isinstance(v, kind) and
                  not isinstance(v, bool) and not _unsayable(v) and not _marked(v)]
        # one key, or two (a batch the next call picks one record of, by what tells it apart)
        return [[v] for v in values[:LISTED // 2]] + \
            [list(p) for p in zip(values[:LISTED // 2], values[1:LISTED // 2 + 1], strict=False)]

    def row_of(self, tool: str, rng: random.Random,
               match: dict[str, Any] | None = None) -> dict[str, Any]:
        """One stored record of the tool's own table ({} when it has none): the values of one
        call drawn from it agree with each other (a DST transition's year, instant and offsets
        are one transition's, not four draws that contradict each other). `match`: values
        the call already has (bound keys); a record that holds them is preferred (Rome's
        offsets for a transition of Rome, not New York's)."""
        ent = self._own_entity(tool)
        table = self.tables.get(ent)
        rows = self.spec.rows.get(table.name, []) if table is not None else []
        if not rows or table is None:
            return {}
        match = match or {}
        mine = [r for r in rows if all(r.get(k) == v for k, v in match.items() if k in r)]
        if mine and any(set(g) & set(match) for g in table.unique_together):
            # the bound record's own rows would leave their unique group out (an instant of
            # 2026 with the year 2025): a whole record of another one agrees with itself
            mine = [r for r in rows if r not in mine] or mine
        row = rng.choice(mine or rows)
        # a unique value copied from a stored record would only be refused as taken; the
        # records a call points at are drawn on their own. A unique group is kept when the
        # call's own key already makes it new (another zone's transition of the same year)
        unique = {c.name for c in table.columns if c.unique or c.primary_key or c.foreign_key}
        for group in table.unique_together:
            if not any(k in match and row.get(k) != match[k] for k in group):
                unique |= set(group)
        return {k: v for k, v in row.items() if k not in unique}

    def draw(self, tool: str, param: str, schema: dict[str, Any], rng: random.Random,
             row: dict[str, Any]) -> Any:
        """`param`'s value from `row` (a record of the tool's table, `row_of`) when the record
        has one that fits the schema, else a sampled one."""
        v = row.get(param)
        if v is not None and v in self.candidates(tool, param, schema):
            return v
        return self.sample(tool, param, schema, rng)

    def sample(self, tool: str, param: str, schema: dict[str, Any], rng: random.Random,
               avoid: Any = None) -> Any:
        pool = [v for v in self.candidates(tool, param, schema) if v != avoid]
        return rng.choice(pool) if pool else None

    def _unmarked(self, tool: str, args: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        """A test's arguments without its edit marks: "http://x.com (edited)" becomes another
        stored value of that argument (else the value without its mark); `{"edited": true}`
        another value, else the argument is left out (Roblox's and Cloudflare's synthesis had
        stopped at one)."""
        props = self.spec.tool(tool).parameters.get("properties", {})
        out = {}
        for k, v in args.items():
            if _marked(v):
                plain = v.removesuffix(" (edited)") if isinstance(v, str) else None
                v = self.sample(tool, k, props.get(k, {}), rng, avoid=plain or v) or plain
                if v is None:
                    continue
            out[k] = v
        return out

    def _stored_state(self, tool: str, args: dict[str, Any], known: dict[str, Any] | None
                      ) -> tuple[str, list[str]] | None:
        """(state column, the states it may move to) when `args` set the state of a stored
        record of the write's own table (found by its key in `args` or `known`)."""
        if not self.spec.tool(tool).mutates:
            return None
        table = self.tables.get(self._own_entity(tool))
        status = status_column(table) if table is not None else None
        if status is None or status.name not in args:
            return None
        called = {**(known or {}), **args}
        pk = next((c.name for c in table.columns if c.primary_key), "id")
        one = table_entity(table.name).replace(" ", "_")
        keys = {k: v for k, v in called.items() if _KEY.search(k) and k != status.name}
        record = next((r for r in self.spec.rows.get(table.name, []) for k, v in keys.items()
                       if (k in (pk, f"{one}_{pk}", f"{one}Id") and r.get(pk) == v)
                       or (k in r and k != pk and not k.endswith("_id") and r[k] == v)), None)
        now = record.get(status.name) if record else None
        if now not in (status.enum or []):
            return None
        return status.name, ahead(list(status.enum or []), now)

    def sets_back(self, tool: str, args: dict[str, Any], known: dict[str, Any] | None = None
                  ) -> bool:
        """Whether the write sets its record's state back ("set shipped order 14 to
        pending")."""
        found = self._stored_state(tool, args, known)
        return found is not None and args[found[0]] not in found[1]

    def onward(self, tool: str, args: dict[str, Any] | None, rng: random.Random,
               known: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """`args` with a state the write sets moved forward from the record's stored one: a
        shipped order is not set back to pending, a cancelled appointment not to booked
        (None: the record's state has nowhere to go). `known`: its bound arguments (its key)."""
        found = self._stored_state(tool, args, known) if args is not None else None
        if found is None or args[found[0]] in found[1]:
            return args
        column, onward = found
        return {**args, column: rng.choice(onward)} if onward else None

    def start_args(self, tool: str, rng: random.Random) -> dict[str, Any] | None:
        """Arguments for a first call: a successful test's, or sampled per required argument."""
        spec_tool = self.spec.tool(tool)
        # nor a test's page of text (Lark's docx import "with markdown '# Q1 backlog\n\n...'")
        tests = [t.arguments for t in self.spec.tests if t.tool == tool and t.expect.ok
                 and t.expect.error_kind is None
                 and not any(_stand_in(v) or _unsayable(v) for v in t.arguments.values())]
        required = set(spec_tool.parameters.get("required", []))

        def asked(args: dict[str, Any]) -> dict[str, Any] | None:
            return self.onward(tool, self.edit_values(tool, self._renamed(tool, args, rng),
                                                      rng), rng)

        def tested() -> dict[str, Any] | None:
            # a page size is not something a person asks for: the tool's default page; nor
            # every optional field a tool test filled in ("create a connection, using the
            # name ... and count 5 and ... and the upserted count set to 1"): two at most
            args = {k: v for k, v in rng.choice(tests).items()
                    if k in required or k not in PAGING}
            optional = [k for k in args if k not in required]
            for k in rng.sample(optional, max(0, len(optional) - MAX_OPTIONAL)):
                del args[k]
            # an output file takes the type the tool makes, as the candidates' do ("convert to
            # PDF ... the output filename 'budget-q3.docx'" came from convert_to_pdf's test)
            return asked({k: _of_made_type(tool, k, [v])[0]
                          for k, v in self._unmarked(tool, args, rng).items()})

        if tests and rng.random() < 0.4:
            return tested()
        args = {}
        props = spec_tool.parameters.get("properties", {})
        row = self.row_of(tool, rng)
        for param in spec_tool.parameters.get("required", []):
            value = self.draw(tool, param, props.get(param, {}), rng, row)
            if value is None:
                return tested() if tests else None
            args[param] = value
        return asked(args)

    def _renamed(self, tool: str, args: dict[str, Any], rng: random.Random
                 ) -> dict[str, Any] | None:
        """A new name, path or title that differs from the one the call names the record by:
        LSP's rename_symbol drew symbol_name and new_name from one stored symbol ("rename the
        symbol named gateway-symbol: set its new name to gateway-symbol"). None: no other name."""
        props = self.spec.tool(tool).parameters.get("properties", {})
        out = dict(args)
        for k, v in args.items():
            base = new_value_field(snake(k), frozenset())  # new_name, newTitle: name, title
            if base and v in [w for q, w in args.items() if q != k]:
                # its tests may know one new name alone: then another stored name
                pool = [w for w in self.candidates(tool, k, props.get(k, {}))
                        + self.own.get((self._own_entity(tool), base), []) if w != v]
                if not pool:
                    return None
                out[k] = rng.choice(pool)
        return out

    def edit_values(self, tool: str, args: dict[str, Any] | None, rng: random.Random,
                    keys: set[str] = frozenset()) -> dict[str, Any] | None:
        """An edit that names only its record ("Please edit appointment 57.") sets nothing a
        person asked for: it gets one of its optional fields to set (None: there is no value
        to set). `keys`: arguments bound from earlier calls. No write sets a value the miner
        made from its field's own name (`_unnamed`)."""
        if args is None or not self.spec.tool(tool).mutates:
            return args
        out = self._stated(tool, args, rng, keys)
        return self._unnamed(tool, out, rng) if out else out

    def _unnamed(self, tool: str, args: dict[str, Any], rng: random.Random
                 ) -> dict[str, Any] | None:
        """`args` with each value made from its field's own name redrawn: Datadog's "set its
        scope to 'import-scope'", Google Calendar's "create an event private extended property
        with the private extended property set to 'metrics-extended-property'" (None: the
        field has no other value)."""
        props = self.spec.tool(tool).parameters.get("properties", {})
        out = dict(args)
        for k, v in args.items():
            if not _KEY.search(k) and is_named_value(k, v):
                pool = self._new_values(tool, k, props.get(k, {}))
                if not pool:
                    return None
                out[k] = rng.choice(pool)
        return out

    def _stated(self, tool: str, args: dict[str, Any], rng: random.Random,
                keys: set[str]) -> dict[str, Any] | None:
        props = self.spec.tool(tool).parameters.get("properties", {})
        if not args and not keys and props:
            # a write that takes nothing required ("place a hold") is still asked with what
            # it is about: its keys first, then up to three of its fields
            names = sorted(p for p in props if p not in PAGING
                           and self.candidates(tool, p, props[p]))
            names.sort(key=lambda p: not _KEY.search(p))
            out = {}
            for p in names[:3]:
                value = self.sample(tool, p, props[p], rng)
                if value is not None:
                    out[p] = value
            return out or None
        if not is_edit(self.spec, tool):
            return args
        if any(not _KEY.search(k) for k in [*args, *keys] if k not in PAGING):
            return args
        settable = {p: self._new_values(tool, p, props[p]) for p in props
                    if p not in args and p not in keys and p not in PAGING
                    and not _KEY.search(p)}
        optional = sorted(p for p, values in settable.items() if values)
        if not optional:
            return None
        # a person's name changes rarely (another person's name as the new one even more
        # rarely): their contact details, dates and states are what people edit
        p = rng.choice([q for q in optional if not self._persons_name(tool, q)] or optional)
        return {**args, p: rng.choice(settable[p])}

    def _new_values(self, tool: str, param: str, schema: dict[str, Any]) -> list[Any]:
        """The values an edit may set `param` to: its candidates but those made from the
        field's own name ('import-scope')."""
        return [v for v in self.candidates(tool, param, schema) if not is_named_value(param, v)]

    def _persons_name(self, tool: str, param: str) -> bool:
        """Whether `param` of `tool` is the name of the person its record is (a clinician's
        full name; not a branch's or a repository's name)."""
        if param in _PERSON_NAMES:
            return True
        table = self.tables.get(self._own_entity(tool))
        return param == "name" and table is not None and any(
            c.name in _CONTACTS for c in table.columns)


__all__ = ["ValueSampler", "ahead", "is_edit"]
