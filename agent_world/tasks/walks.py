"""Weighted random walks on the tool-dependency graph, executed as tool-call chains.

A walk is a **plan**: steps that each name a tool, the argument values the user states
(`given`) and the arguments that come from an earlier step's observation (`bound`: step index
and field). When an earlier observation is a list, the step that produced it carries a
`select` — field values that identify one element (e.g. the reservation whose flight number
is NW102) — and every later binding reads from that element. `execute_plan` resolves a plan
against a live episode, so the same plan replays in a fresh episode (gold solution), with a
perturbed argument or without its writes (known-wrong solutions).

`random_walk` grows a plan step by step while executing it: the next tool is drawn along the
graph's edges with probability proportional to the edge weight (mostly from the last step;
with `branch_p` from any earlier step, which gives branching chains), its bound arguments are
taken from the observations, its other required arguments sampled (from the tool's own tests,
from database columns of the same name, from enums), and a call that fails ends the walk. An
edit that would name only its record gets one of its fields to set (`ValueSampler.edit_values`),
a re-read of the entity the last step read is drawn less often, and `prune_detours` drops the
look-ups no later step uses.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from typing import Any

import networkx as nx
from pydantic import BaseModel, Field

from agent_world.envs.episode import Episode, Observation
from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import singular_word
from agent_world.tasks.toolgraph import tested_values
from agent_world.tasks.words import entity


class Binding(BaseModel):
    step: int
    field: str


class PlanStep(BaseModel):
    tool: str
    given: dict[str, Any] = Field(default_factory=dict)
    bound: dict[str, Binding] = Field(default_factory=dict)
    select: dict[str, Any] | None = None  # identifies one element when this step returns a list


class Plan(BaseModel):
    steps: list[PlanStep] = Field(default_factory=list)

    @property
    def branching(self) -> int:
        """Steps whose bound inputs come from more than one earlier step."""
        return sum(1 for s in self.steps if len({b.step for b in s.bound.values()}) > 1)

    def writes(self, spec: EnvSpec) -> list[int]:
        return [i for i, s in enumerate(self.steps) if spec.tool(s.tool).mutates]


# ---- reading observations -----------------------------------------------------------------
def field_value(obj: Any, name: str) -> Any:
    """A field of an observation: top level first, then nested objects (not lists)."""
    if not isinstance(obj, dict):
        return None
    if name in obj:
        return obj[name]
    for v in obj.values():
        if isinstance(v, dict):
            found = field_value(v, name)
            if found is not None:
                return found
    return None


def scalar_fields(obj: Any) -> dict[str, Any]:
    """Scalar fields of an observation object, nested objects flattened (first name wins)."""
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, dict):
                for k2, v2 in scalar_fields(v).items():
                    out.setdefault(k2, v2)
            elif not isinstance(v, list):
                out.setdefault(k, v)
    return out


def selected(result: Any, select: dict[str, Any] | None) -> Any:
    """The element of a list observation a plan step selected (the object itself if not a
    list; None when no element matches)."""
    if not isinstance(result, list):
        return result
    for item in result:
        if isinstance(item, dict) and all(field_value(item, k) == v
                                          for k, v in (select or {}).items()):
            return item
    return None


# ---- executing ----------------------------------------------------------------------------
def resolve(step: PlanStep, results: list[Any], plan: Plan) -> dict[str, Any] | None:
    """Concrete arguments of a step given earlier results (None: a binding cannot resolve)."""
    args = dict(step.given)
    for param, b in step.bound.items():
        if b.step >= len(results):
            return None
        value = field_value(selected(results[b.step], plan.steps[b.step].select), b.field)
        if value is None:
            return None
        args[param] = value
    return args


def execute_plan(plan: Plan, episode: Episode, overrides: dict[tuple[int, str], Any] | None
                 = None, skip: set[int] | None = None) -> list[Observation | None]:
    """Run a plan in `episode`; one entry per step (None: skipped or unresolvable). Stops at
    the first failing call. `overrides` replaces given values, `skip` leaves steps out."""
    results: list[Any] = []
    out: list[Observation | None] = []
    for i, step in enumerate(plan.steps):
        if skip and i in skip:
            results.append(None)
            out.append(None)
            continue
        patched = step
        if overrides:
            given = {k: overrides.get((i, k), v) for k, v in step.given.items()}
            patched = step.model_copy(update={"given": given})
        args = resolve(patched, results, plan)
        if args is None:
            out.append(None)
            break
        obs = episode.step(step.tool, args)
        out.append(obs)
        if not obs.ok:
            break
        results.append(obs.result)
    return out


# ---- sampling argument values -------------------------------------------------------------
_PAGING = ("limit", "offset", "page", "page_size", "max_results", "per_page")
_KEY = re.compile(r"(?:^|_)(?:id|code|number|sku|uuid|key)$|[a-z]Id$")
_EDIT_VERBS = frozenset({"edit", "update", "modify", "change", "set", "patch", "amend"})


def is_edit(spec: EnvSpec, tool: str) -> bool:
    """A write that sets the fields it is given (`update_member`, "Edit a member: set the
    given fields"), as opposed to an action on a record (`cancel_slot`)."""
    t = spec.tool(tool)
    if not t.mutates:
        return False
    first = re.split(r"[_\W]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", tool).lower())[:1]
    said = t.description.split()[:1]
    return bool(set(first) & _EDIT_VERBS) or bool(said and said[0].lower() in _EDIT_VERBS)



class ValueSampler:
    """Valid-looking values for a tool argument: its tests' values, database columns of the
    same name (or the key of the table it names), enum members."""

    def __init__(self, spec: EnvSpec):
        self.spec = spec
        self.tested = tested_values(spec)
        self.columns: dict[str, list[Any]] = defaultdict(list)
        # (table, column) -> values: a product's name is drawn from products, not customers
        self.own: dict[tuple[str, str], list[Any]] = {}
        for t in spec.tables:
            rows = spec.rows.get(t.name, [])
            for c in t.columns:
                values = [r[c.name] for r in rows if r.get(c.name) is not None]
                self.columns[c.name].extend(values)
                self.own[(singular_word(t.name), c.name)] = values
                if c.primary_key:
                    one = t.name[:-1] if t.name.endswith("s") else t.name
                    self.columns[f"{one}_{c.name}" if c.name == "id" else c.name] \
                        .extend(values)

    def candidates(self, tool: str, param: str, schema: dict[str, Any]) -> list[Any]:
        if "enum" in schema:
            return list(schema["enum"])
        types = schema.get("type", "string")
        types = set(types) if isinstance(types, list) else {types}
        if types & {"array", "object"}:
            return [v for v in self.tested.get((tool, param), []) if v is not None]
        ent = entity(tool).split()[-1]
        columns = self.own.get((ent, param)) or self.columns.get(param, [])
        tested = self.tested.get((tool, param), [])
        if columns and tested:
            # a test's edited copy of a stored value ("-05:00 (edited)") is no value a
            # person would ask for when the stored ones are at hand
            known = {c for c in columns if isinstance(c, str)}
            tested = [v for v in tested if not (isinstance(v, str) and " (" in v
                                                and v[: v.index(" (")] in known)]
        pool = list(tested) + list(columns)
        plain = [v for v in pool if not (isinstance(v, str) and v.endswith("(edited)"))]
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
        return ok

    def row_of(self, tool: str, rng: random.Random) -> dict[str, Any]:
        """One stored record of the tool's own table ({} when it has none): the values of one
        call drawn from it agree with each other (a DST transition's year, instant and offsets
        are one transition's, not four draws that contradict each other)."""
        ent = entity(tool).split()[-1]
        table = next((t for t in self.spec.tables if singular_word(t.name) == ent), None)
        rows = self.spec.rows.get(table.name, []) if table is not None else []
        if not rows or table is None:
            return {}
        # a unique value copied from a stored record would only be refused as taken; the
        # records a call points at are drawn on their own
        unique = {c.name for c in table.columns if c.unique or c.primary_key or c.foreign_key
                  } | {c for group in table.unique_together for c in group}
        return {k: v for k, v in rng.choice(rows).items() if k not in unique}

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
        stored value of that argument (else the value without its mark)."""
        props = self.spec.tool(tool).parameters.get("properties", {})
        out = {}
        for k, v in args.items():
            if isinstance(v, str) and v.endswith(" (edited)"):
                plain = v.removesuffix(" (edited)")
                v = self.sample(tool, k, props.get(k, {}), rng, avoid=plain) or plain
            out[k] = v
        return out

    def start_args(self, tool: str, rng: random.Random) -> dict[str, Any] | None:
        """Arguments for a first call: a successful test's, or sampled per required argument."""
        spec_tool = self.spec.tool(tool)
        tests = [t.arguments for t in self.spec.tests if t.tool == tool and t.expect.ok
                 and t.expect.error_kind is None]
        required = set(spec_tool.parameters.get("required", []))
        if tests and rng.random() < 0.4:
            # a page size is not something a person asks for: the tool's default page
            return self.edit_values(tool, self._unmarked(tool, {
                k: v for k, v in rng.choice(tests).items()
                if k in required or k not in _PAGING}, rng), rng)
        args = {}
        props = spec_tool.parameters.get("properties", {})
        row = self.row_of(tool, rng)
        for param in spec_tool.parameters.get("required", []):
            value = self.draw(tool, param, props.get(param, {}), rng, row)
            if value is None:
                return self.edit_values(tool, self._unmarked(tool, {
                    k: v for k, v in rng.choice(tests).items()
                    if k in required or k not in _PAGING}, rng), rng) if tests else None
            args[param] = value
        return self.edit_values(tool, args, rng)

    def edit_values(self, tool: str, args: dict[str, Any] | None, rng: random.Random,
                    keys: set[str] = frozenset()) -> dict[str, Any] | None:
        """An edit that names only its record ("Please edit appointment 57.") sets nothing a
        person asked for: it gets one of its optional fields to set (None: there is no value
        to set). `keys`: arguments bound from earlier calls."""
        if args is None or not self.spec.tool(tool).mutates:
            return args
        props = self.spec.tool(tool).parameters.get("properties", {})
        if not args and not keys and props:
            # a write that takes nothing required ("place a hold") is still asked with what
            # it is about: its keys first, then up to three of its fields
            names = sorted(p for p in props if p not in _PAGING
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
        if any(not _KEY.search(k) for k in [*args, *keys] if k not in _PAGING):
            return args
        optional = sorted(p for p in props if p not in args and p not in keys
                          and p not in _PAGING and not _KEY.search(p)
                          and self.candidates(tool, p, props[p]))
        if not optional:
            return None
        p = rng.choice(optional)
        return {**args, p: self.sample(tool, p, props[p], rng)}


# ---- walking --------------------------------------------------------------------------------
_IDENTIFYING_SKIP = ("_id", "id")


def _timestamp(name: str, value: Any) -> bool:
    return name.endswith(("_at", "_time", "_date", "timestamp")) or (
        isinstance(value, str) and len(value) >= 10 and value[4:5] == "-" and value[7:8] == "-"
        and value[:4].isdigit())


def _quotable(text: str) -> bool:
    """A value a person would quote to point at a record: one line, a few words at most."""
    return "\n" not in text and len(text) <= 60


def _selector(items: list[Any], item: dict[str, Any], avoid: set[str],
              rng: random.Random) -> dict[str, Any]:
    """Field values that single out `item` among `items`, preferring readable fields."""
    fields = scalar_fields(item)
    unique = []
    for k, v in fields.items():
        if v is None or isinstance(v, bool) or isinstance(v, float):
            continue
        if sum(1 for i in items if isinstance(i, dict) and field_value(i, k) == v) == 1:
            unique.append(k)
    # nor by a value the request already states (a filter every listed record shares, the
    # field the next step reads): "the slot with location 11" among slots of location 11
    unique = [k for k in unique if k not in avoid]
    # nobody picks a record by its timestamp: dates and times only when nothing else is unique;
    # nor by a paragraph or a diff: a value to quote is one short line
    timeless = [k for k in unique if not _timestamp(k, fields[k])]
    readable = [k for k in timeless if not k.endswith(_IDENTIFYING_SKIP)
                and (not isinstance(fields[k], str) or _quotable(fields[k]))]
    pool = readable or timeless or unique
    if not pool:
        return {}
    key = rng.choice(sorted(pool))
    return {key: fields[key]}


def _next_tools(graph: nx.DiGraph, plan: Plan, rng: random.Random, branch_p: float,
                spec: EnvSpec, every: bool = False) -> list[tuple[str, float, int]]:
    """(tool, weight, source step) the walk may take next: edges from the last step (from
    any step with `branch_p`, or with `every`); a tool at most twice in a chain (another
    record the second time), never right after itself."""
    used = {s.tool: sum(1 for x in plan.steps if x.tool == s.tool) for s in plan.steps}
    sources = [len(plan.steps) - 1]
    if len(plan.steps) > 1 and (every or rng.random() < branch_p):
        sources = list(range(len(plan.steps)))
    out = []
    for i in sources:
        src = plan.steps[i].tool
        for _, dst, data in graph.out_edges(src, data=True):
            if used.get(dst, 0) >= 2 or dst == plan.steps[-1].tool or \
                    (used.get(dst) and spec.tool(dst).mutates):
                continue
            w = sum(b["strength"] for b in data.get("bindings", []) if b.get("required"))
            if w > 0 and not spec.tool(dst).mutates and entity(dst) == entity(src):
                # "find the member, then open that member's full record": a re-read mostly
                # shows what the first read showed (the no-shortcut gate drops those tasks)
                w *= RE_READ_WEIGHT
            if w > 0:
                out.append((dst, w, i))
    return out


RE_READ_WEIGHT = 0.2
# refusals the engine rolls back (the call changed nothing)
REFUSALS = frozenset({"tool_error", "invalid_arguments", "constraint_violation",
                      "permission_denied", "not_found"})


def random_walk(spec: EnvSpec, graph: nx.DiGraph, episode: Episode, rng: random.Random,
                length: int, start: str | None = None, branch_p: float = 0.25,
                sampler: ValueSampler | None = None, writes: bool = True) -> Plan | None:
    """A plan of up to `length` successful calls, executed in `episode` (reset first)."""
    sampler = sampler or ValueSampler(spec)
    episode.reset()
    tools = [t.name for t in spec.tools if writes or not t.mutates]
    if start is None:
        weights = [1.0 + graph.out_degree(t, weight="weight") for t in tools]
        start = rng.choices(tools, weights=weights)[0]
    args = sampler.start_args(start, rng)
    if args is None:
        return None
    before = episode.state_hash() if spec.tool(start).mutates else ""
    obs = episode.step(start, args)
    if not obs.ok or _no_change(episode, before):
        return None
    plan = Plan(steps=[PlanStep(tool=start, given=args)])
    results: list[Any] = [obs.result]
    stuck = 0
    while len(plan.steps) < length and stuck < 3:
        options = [o for o in _next_tools(graph, plan, rng, branch_p, spec, every=stuck > 0)
                   if writes or not spec.tool(o[0]).mutates]
        if not options:
            break
        dst = rng.choices([o[0] for o in options], weights=[o[1] for o in options])[0]
        selects = [s.select for s in plan.steps]
        step = _bind_step(spec, graph, plan, results, dst, sampler, rng)
        args = resolve(step, results, plan) if step is not None else None
        repeat = args is not None and any(s.tool == dst and r_args == args
                                          for s, r_args in zip(plan.steps, _args_of(plan, results),
                                                               strict=True))
        calls = args is not None and not repeat
        before = episode.state_hash() if calls and spec.tool(dst).mutates else ""
        obs = episode.step(dst, args) if calls else None
        unchanged = obs is not None and obs.ok and _no_change(episode, before)
        if obs is None or not obs.ok or unchanged:
            # undo the selection a failed step introduced; try another way on (a few times)
            for s, sel in zip(plan.steps, selects, strict=True):
                s.select = sel
            if obs is not None and not unchanged and spec.tool(dst).mutates and \
                    (obs.error is None or obs.error.kind not in REFUSALS):
                break  # a write that failed otherwise may have left traces: the walk ends
            # a refused write is rolled back: the walk tries another way on (it ended here,
            # and book lending's refusals left its walks at one or two calls)
            stuck += 1
            continue
        stuck = 0
        plan.steps.append(step)
        results.append(obs.result)
    return plan


def _no_change(episode: Episode, before: str) -> bool:
    """A write that left the database as it was ("set its currency to USD" on a product in
    USD, "mark that order as paid" on a paid one): nobody asks for it, and a policy that skips
    the call ends in the same state (`before`: the state hash before the call; "" for reads)."""
    return bool(before) and episode.state_hash() == before


def prune_detours(plan: Plan, spec: EnvSpec) -> tuple[Plan, list[int]]:
    """The plan without the look-ups that feed nothing after them ("find the patient of
    that appointment", then never use the patient): a step the request would ask for and the
    task never needs. Writes stay (the task checks what they change), the last step stays
    (the answer is read from it). Returns the plan and the indices of the steps kept."""
    kept = list(range(len(plan.steps)))
    while True:
        used = {b.step for i in kept for b in plan.steps[i].bound.values()}
        drop = next((i for i in kept[:-1] if i not in used
                     and not spec.tool(plan.steps[i].tool).mutates), None)
        if drop is None:
            break
        kept.remove(drop)
    if len(kept) == len(plan.steps):
        return plan, kept
    at = {old: new for new, old in enumerate(kept)}
    steps = []
    for old in kept:
        step = plan.steps[old].model_copy(deep=True)
        step.bound = {p: Binding(step=at[b.step], field=b.field) for p, b in step.bound.items()}
        steps.append(step)
    return Plan(steps=steps), kept


def without_step(plan: Plan, seen: list[Any], answer: dict[str, Any], j: int
                 ) -> tuple[Plan, dict[str, Any]] | None:
    """`plan` without step `j`, its dependents rebound to an earlier step that shows the same
    value under the same field (and the answer read there); None when one cannot be."""
    def earlier(field: str, value: Any) -> int | None:
        return next((i for i in reversed(range(j)) if value is not None and
                     field_value(seen[i], field) == value), None)

    new_answer = dict(answer)
    if answer.get("step") == j:
        if answer.get("kind") != "field":
            return None
        i = earlier(answer["field"], field_value(seen[j], answer["field"]))
        if i is None:
            return None
        new_answer["step"] = i
    steps = []
    for k, step in enumerate(plan.steps):
        if k == j:
            continue
        bound = {}
        for param, b in step.bound.items():
            if b.step == j:
                i = earlier(b.field, field_value(seen[j], b.field))
                if i is None:
                    return None
                b = Binding(step=i, field=b.field)
            bound[param] = Binding(step=b.step - (b.step > j), field=b.field)
        steps.append(step.model_copy(update={"bound": bound}))
    if new_answer.get("step") is not None and new_answer["step"] > j:
        new_answer["step"] -= 1
    return Plan(steps=steps), new_answer


def collapse_rereads(plan: Plan, results: list[Any], spec: EnvSpec
                     ) -> tuple[Plan, list[Any]]:
    """The plan without the reads (but the last) whose every dependent can read the same
    value from an earlier step ("find the customer's reservation, then open that reservation"
    for a field the list already shows): a shorter chain the no-shortcut gate would find.
    `results`: the plan's results, re-indexed with it."""
    seen = [selected(r, s.select) for r, s in zip(results, plan.steps, strict=False)]
    j = len(plan.steps) - 2
    while j > 0:
        if not spec.tool(plan.steps[j].tool).mutates:
            shorter = without_step(plan, seen, {"kind": "none"}, j)
            if shorter is not None:
                plan = shorter[0]
                results = results[:j] + results[j + 1:]
                seen = seen[:j] + seen[j + 1:]
        j -= 1
    return plan, results


def _args_of(plan: Plan, results: list[Any]) -> list[dict[str, Any] | None]:
    out = []
    for i, s in enumerate(plan.steps):
        out.append(resolve(s, results[:i], plan))
    return out


# a record's own words: a customer named after a product ("create a customer, setting its
# name to that product's name") is no request anyone makes
# a record's own words, and its own lifecycle: "setting its status to that slot's status" on
# an appointment copies a state of another kind of record
_OWN_WORDS = frozenset({"name", "title", "full_name", "description", "content", "body",
                        "message", "note", "notes", "summary", "status", "state"})


def _self_copy(src: str, dst: str, param: str, field: str) -> bool:
    """A value (not a key) that a write would copy from a record of its own kind ("create a
    customer, setting its name to that customer's name", "change appointment 78, setting its
    status to that appointment's status"), or a record's own words copied into another kind
    of record. Nobody asks for these; the value is sampled instead."""
    key = param == "id" or bool(re.search(r"(_id|Id|_ids|Ids)$", param))
    return not key and (entity(src) == entity(dst) or param == field and param in _OWN_WORDS)


def _bind_step(spec: EnvSpec, graph: nx.DiGraph, plan: Plan, results: list[Any], dst: str,
               sampler: ValueSampler, rng: random.Random) -> PlanStep | None:
    tool = spec.tool(dst)
    props = tool.parameters.get("properties", {})
    required = tool.parameters.get("required", [])
    step = PlanStep(tool=dst)
    row = sampler.row_of(dst, rng)
    for param in required:
        sources = []
        for i in reversed(range(len(plan.steps))):
            data = graph.get_edge_data(plan.steps[i].tool, dst)
            for b in (data or {}).get("bindings", []):
                if b["param"] == param and \
                        not _self_copy(plan.steps[i].tool, dst, param, b["field"]):
                    sources.append((i, b["field"], b["strength"]))
        if sources:
            i, field, _ = max(sources, key=lambda s: (s[2], s[0]))
            src = plan.steps[i]
            if isinstance(results[i], list) and src.select is None:
                items = [x for x in results[i] if isinstance(x, dict)
                         and field_value(x, field) is not None]
                if not items:
                    return None
                item = rng.choice(items)
                # not by a value the step was asked with ("the cancelled ones ... whose
                # status is cancelled")
                src.select = _selector(results[i], item, {field, *src.given}, rng) or None
                if src.select is None and len(items) > 1:
                    return None
            value = field_value(selected(results[i], src.select), field)
            if value is None:
                return None
            step.bound[param] = Binding(step=i, field=field)
        else:
            value = sampler.draw(dst, param, props.get(param, {}), rng, row)
            if value is None:
                return None
            step.given[param] = value
    if not step.bound:
        return None
    given = sampler.edit_values(dst, step.given, rng, keys=set(step.bound))
    if given is None:
        return None
    step.given = given
    return step


__all__ = ["Binding", "Plan", "PlanStep", "ValueSampler", "collapse_rereads", "execute_plan",
           "field_value", "is_edit", "prune_detours", "random_walk", "resolve",
           "scalar_fields", "selected", "without_step"]
