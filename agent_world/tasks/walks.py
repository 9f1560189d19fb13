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
from collections.abc import Callable
from typing import Any

import networkx as nx
from pydantic import BaseModel, Field

from agent_world.envs.episode import Episode, Observation
from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import snake
from agent_world.mining.offline.vocabulary import CREATE_VERBS, DELETE_VERBS
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.words import (
    FROM_ROLES,
    TO_ROLES,
    added_labels,
    entity,
    source_tools,
    split_words,
)


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
                 = None, skip: set[int] | None = None,
                 after_step: Callable[[int], None] | None = None) -> list[Observation | None]:
    """Run a plan in `episode`; one entry per step (None: skipped or unresolvable). Stops at
    the first failing call. `overrides` replaces given values, `skip` leaves steps out;
    `after_step(i)` hears of each call that succeeded (the episode then holds its state)."""
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
        if after_step is not None:
            after_step(i)
    return out


# ---- walking --------------------------------------------------------------------------------
_IDENTIFYING_SKIP = ("_id", "id")
# what a person knows a record by first: "the product named Pride and Prejudice", not "the
# product whose review count is 75"
_RECORD_NAMES = frozenset({"name", "title", "full_name", "display_name"})


def _timestamp(name: str, value: Any) -> bool:
    return name.endswith(("_at", "_time", "_date", "timestamp")) or (
        isinstance(value, str) and len(value) >= 10 and value[4:5] == "-" and value[7:8] == "-"
        and value[:4].isdigit())


def _quotable(text: str) -> bool:
    """A value a person would quote to point at a record: one line, a few words at most."""
    return "\n" not in text and len(text) <= 60


def _echoed(tool: Any) -> set[str]:
    """The listing tool's arguments, but states it filters by (an enum): a listed record's
    field named for one is mostly what some request asked for, not what a person knows the
    record by (SonarQube's "the component whose p is 'book'", Zotero's "the item whose tag is
    'users-tag'"); "the loan whose status is 'checked_out'" is the loan's own."""
    return {name for p, schema in tool.parameters.get("properties", {}).items()
            if not (isinstance(schema, dict) and schema.get("enum"))
            for name in (p, snake(p))}  # a record keeps `If-Match` as if_match


# a field named for what a request searches by is no field a record has (Word's footnotes kept
# add_footnote_robust's search_text: "the footnote whose search text is 'between room'")
_ASKED = frozenset({"search_text", "query", "q", "keyword", "keywords", "search",
                    "search_term", "search_query", "term", "pattern"})
# a credential is nothing a person finds a record by nor asks back ("the available document
# whose password is '2)22RNlpuZ+1@zkM'", "tell me its password")
SECRETS = frozenset({"password", "passphrase", "secret", "token", "api_key", "access_token",
                     "client_secret", "private_key", "refresh_token", "secret_key"})


def _selector(items: list[Any], item: dict[str, Any], avoid: set[str],
              rng: random.Random, labels: frozenset[str] = frozenset(),
              listing: Any = None) -> dict[str, Any]:
    """Field values that single out `item` among `items`, preferring its name, then readable
    fields; never a name the miner gave the record (`labels`: `words.added_labels`) nor a
    field named for an argument of the `listing` tool that returned them (`_echoed`)."""
    if listing is not None:
        avoid = {*avoid, *_echoed(listing)}
    fields = scalar_fields(item)
    unique = []
    for k, v in fields.items():
        if v is None or isinstance(v, bool) or isinstance(v, float) or str(v) in labels:
            continue
        if sum(1 for i in items if isinstance(i, dict) and field_value(i, k) == v) == 1:
            unique.append(k)
    # nor by a value the request already states (a filter every listed record shares, the
    # field the next step reads): "the slot with location 11" among slots of location 11
    unique = [k for k in unique if k not in avoid and k not in _ASKED and k not in SECRETS]
    # nobody picks a record by the second it was stamped ("the gke cluster created on
    # October 16, 2023 at 18:03:17"): where only a timestamp singles it out, no pick; nor by a
    # paragraph or a diff: a value to quote is one short line
    timeless = [k for k in unique if not _timestamp(k, fields[k])]
    readable = [k for k in timeless if not k.endswith(_IDENTIFYING_SKIP)
                and (not isinstance(fields[k], str) or _quotable(fields[k]))]
    pool = readable or [k for k in timeless
                        if not isinstance(fields[k], str) or _quotable(fields[k])]
    if not pool:
        return {}
    pool = [k for k in pool if k in _RECORD_NAMES] or pool
    key = rng.choice(sorted(pool))
    return {key: fields[key]}


def one_looked_up(result: Any, given: dict[str, Any]) -> bool:
    """Whether `result` is the one record a batch look-up of one key returned (MUI's
    fetchDocs(urls=[a URL])): that record, with nothing to single out."""
    return isinstance(result, list) and len(result) == 1 and \
        any(isinstance(v, list) for v in given.values())


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
# a walk starts at one of the service's own tools this many times as often as at a look-up
# of its database (the fetcher's fetch, taking no other tool's output, was the start of
# 3 % of walks and of no kept task); a task must call one (`gate_serves_source`), and at 3
# the time server's walks gave 3 such tasks of 12 asked, at 10 six
SOURCE_START = 10.0
_ROLES = FROM_ROLES | TO_ROLES | {"old", "new"}


def _unroled(param: str) -> str:
    """`source_timezone` and `target_timezone` name one kind of value: `timezone`."""
    head, _, rest = param.partition("_")
    return rest if rest and head in _ROLES else param


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
        served = source_tools(spec)
        weights = [(1.0 + graph.out_degree(t, weight="weight")) *
                   (SOURCE_START if t in served else 1.0) for t in tools]
        start = rng.choices(tools, weights=weights)[0]
    args = sampler.start_args(start, rng)
    if args is None:
        return None
    before = _content_hash(episode) if spec.tool(start).mutates else ""
    obs = episode.step(start, args)
    if not obs.ok or _no_change(episode, before):
        return None
    plan = Plan(steps=[PlanStep(tool=start, given=args)])
    results: list[Any] = [obs.result]
    # records read so far -> the writes made before the read: reading one again with nothing
    # written since ("open order 5", then "open that item's order": order 5) shows nothing new
    writes_made = int(spec.tool(start).mutates)
    seen: dict[Any, int] = {}
    if not spec.tool(start).mutates:
        seen[_record(obs.result)] = 0
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
        before = _content_hash(episode) if calls and spec.tool(dst).mutates else ""
        obs = episode.step(dst, args) if calls else None
        unchanged = obs is not None and obs.ok and _no_change(episode, before)
        read = _record(obs.result) if obs is not None and obs.ok and \
            not spec.tool(dst).mutates else None
        again = read is not None and seen.get(read, -1) == writes_made
        if obs is None or not obs.ok or unchanged or again:
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
        if spec.tool(dst).mutates:
            writes_made += 1
        elif read is not None:
            seen[read] = writes_made
    return plan


def _record(result: Any) -> tuple[Any, frozenset[str]] | None:
    """The record a read returned: its id and its table's columns (get_title and
    view_title_details return one title), None for anything else."""
    if isinstance(result, dict) and result.get("id") is not None:
        return result["id"], frozenset(k for k, v in result.items()
                                       if not isinstance(v, list | dict))
    return None


# the time a write stamps on its record is no change anybody asked for: update_sitemap
# setting the feedpath the sitemap had moved only its updated_at ("edit that sitemap: set its
# feedpath to" the URL it was just submitted with)
_STAMPS = frozenset({"updated_at", "modified_at"})


def _content_hash(episode: Episode) -> str:
    """The episode's state hash without the write times the engine stamps."""
    return episode.state_hash(ignore={t.name: [c.name for c in t.columns if c.name in _STAMPS]
                                      for t in episode.spec.tables})


def _no_change(episode: Episode, before: str) -> bool:
    """A write that left the database as it was ("set its currency to USD" on a product in
    USD, "mark that order as paid" on a paid one) but for its write time: nobody asks for it
    (`before`: `_content_hash` before the call; "" for reads)."""
    return bool(before) and _content_hash(episode) == before


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
        if answer.get("kind") not in ("field", "section"):  # a section: of the same body
            return None
        i = earlier(answer["field"], field_value(seen[j], answer["field"]))
        if i is None:
            return None
        new_answer["step"] = i
    # what the request told step j: a value it only hands on is the request's to give
    # ("look up the fetch whose url is X, then fetch that fetch's url")
    told = [v for v in [*plan.steps[j].given.values(), *(plan.steps[j].select or {}).values()]
            if v is not None and not isinstance(v, (dict, list))]
    steps = []
    for k, step in enumerate(plan.steps):
        if k == j:
            continue
        bound, given = {}, dict(step.given)
        for param, b in step.bound.items():
            if b.step == j:
                value = field_value(seen[j], b.field)
                i = earlier(b.field, value)
                if i is None and value is not None and value in told:
                    given[param] = value
                    continue
                if i is None:
                    return None
                b = Binding(step=i, field=b.field)
            bound[param] = Binding(step=b.step - (b.step > j), field=b.field)
        steps.append(step.model_copy(update={"bound": bound, "given": given}))
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
# an appointment copies a state of another kind of record; so is what one request asked for
# ("run the kusto command, using that monitor's intent"), and what kind of record it is ("create
# an association, using that property's type")
_OWN_WORDS = frozenset({"name", "title", "full_name", "description", "content", "body",
                        "message", "note", "notes", "summary", "status", "state", "path",
                        "intent", "goal", "objective", "prompt", "type"})


def _self_copy(src: str, dst: str, param: str, field: str) -> bool:
    """A value (not a key) that a write would copy from a record of its own kind ("create a
    customer, setting its name to that customer's name", "change appointment 78, setting its
    status to that appointment's status"), or a record's own words copied into another kind
    of record. Nobody asks for these; the value is sampled instead."""
    key = param == "id" or bool(re.search(r"(_id|Id|_ids|Ids)$", param))
    return not key and (entity(src) == entity(dst) or param == field and param in _OWN_WORDS)


# verbs that edit a record's fields (not its state: "book it, then check it in" is a workflow)
FIELD_EDITS = frozenset({"update", "edit", "modify", "patch", "change", "rename"})
# an argument that says which record (an id, a key, a sha, an address), not a value to write
IDENTIFIES = re.compile(r"(?:^|_)(?:id|ids|key|uuid|slug|sha|hash|email|url|uri|path)$|"
                         r"[a-z](?:Id|Ids|Key|Uuid|Sha|Url|Path)$")


def _own_key(result: Any) -> str | None:
    """The key of the record a call returned: its first field, where that is an id (rows
    come back in column order, the key first)."""
    first = next(iter(result), None) if isinstance(result, dict) else None
    return first if isinstance(first, str) and IDENTIFIES.search(first) else None


def _bind_step(spec: EnvSpec, graph: nx.DiGraph, plan: Plan, results: list[Any], dst: str,
               sampler: ValueSampler, rng: random.Random) -> PlanStep | None:
    tool = spec.tool(dst)
    props = tool.parameters.get("properties", {})
    required = tool.parameters.get("required", [])
    step = PlanStep(tool=dst)
    drawn = []  # arguments no earlier call feeds: drawn from one record, after the bound ones
    known: dict[str, Any] = {}
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
                # status is cancelled"); nor the one record a look-up of one key returns
                # (MUI's fetchDocs(urls=[a URL]) gave "the doc named Webhooks with the url")
                src.select = None if one_looked_up(results[i], src.given) else _selector(
                    results[i], item, {field, *src.given}, rng, added_labels(spec),
                    spec.tool(src.tool)) or None
                if src.select is None and len(items) > 1:
                    return None
            value = field_value(selected(results[i], src.select), field)
            if value is None:
                return None
            step.bound[param] = Binding(step=i, field=field)
            known[param] = value
        else:
            drawn.append(param)
    if not step.bound:
        return None
    if any(IDENTIFIES.search(p) for p in drawn) and \
            not any(IDENTIFIES.search(p) for p in step.bound):
        # a record named apart from the chain given a plain value copied from another
        # ("pull up sheet 25, then set borders on spreadsheet 5 with that sheet's range"):
        # nothing ties the two records, and the request reads as two errands glued together
        return None
    if split_words(dst)[:1] and split_words(dst)[0] in FIELD_EDITS and any(
            split_words(plan.steps[b.step].tool)[:1] and
            split_words(plan.steps[b.step].tool)[0] in CREATE_VERBS
            and b.field in ("id", _own_key(results[b.step])) for b in step.bound.values()):
        # editing what the chain just created ("create a hotel note with body A, then set
        # its body to B"): a person creates it as wanted, and the create's values go unchecked
        return None
    if split_words(dst)[:1] and split_words(dst)[0] in DELETE_VERBS and any(
            spec.tool(plan.steps[b.step].tool).mutates for b in step.bound.values()):
        # deleting what the chain just created or changed undoes it: "create an order ...,
        # then delete that order" leaves the state the first call left, and asks nothing
        return None
    row = sampler.row_of(dst, rng, match=known)
    for param in drawn:
        value = sampler.draw(dst, param, props.get(param, {}), rng, row)
        # one record in two roles ("from America/New_York to America/New_York") asks
        # nothing: a role's value is not its bound counterpart's
        twins = [v for q, v in known.items() if _unroled(q) == _unroled(param)]
        if any(value == v for v in twins):
            value = sampler.sample(dst, param, props.get(param, {}), rng, avoid=value)
        if value is None:
            return None
        step.given[param] = value
    given = sampler.onward(dst, sampler.edit_values(dst, step.given, rng,
                                                    keys=set(step.bound)), rng, known)
    if given is None:
        return None
    step.given = given
    return step


__all__ = ["FIELD_EDITS", "IDENTIFIES", "Binding", "Plan", "PlanStep", "ValueSampler",
           "collapse_rereads", "execute_plan",
           "field_value", "prune_detours", "random_walk", "resolve",
           "scalar_fields", "selected", "without_step"]
