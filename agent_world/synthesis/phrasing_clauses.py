"""Request clauses: one step of a walk as a clause — a read by the record it names, a list by
its filters, a write aimed at its record and what it sets (what a tool does, `action_phrase`,
comes from `action_phrases`). See `phrasing`."""

from __future__ import annotations

import random
import re
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.synthesis.action_phrases import action_phrase, routed
from agent_world.synthesis.phrasing_values import (
    DIRECTIONS,
    KEY_ROLES,
    PREPOSITIONS,
    arg_phrase,
    as_role,
    bare_value,
    by_key,
    field_words,
    key_phrase,
    noun,
    role,
    say,
    value_text,
    which,
)
from agent_world.tasks.walks import Binding, Plan, PlanStep
from agent_world.tasks.words import (
    FROM_ROLES,
    PAGING,
    TO_ROLES,
    entity,
    entity_plural,
    own_keys,
    runs_sql,
    split_words,
    table_entity,
    tool_entity,
    tool_namespace,
)

_LIST_VERBS = {"list", "search", "find", "browse"}
# flags named for what they do to the record (make_default, mark_paid), said as that
_FLAG_VERBS = {"make": "the ", "mark": "as "}

# ---- tool kinds -------------------------------------------------------------------------------
def _kind(spec: EnvSpec, tool: str, lists: bool) -> str:
    words = split_words(tool)
    if spec.tool(tool).mutates:
        return "write"
    if lists or (words and words[0] in _LIST_VERBS):
        return "list"
    return "read"


# a flag named by what the call does (Lark's useUAT, include_archived), not by what its
# records are: "with the use UAT set to no", never "the chats that are not use uat"
_SWITCH_VERBS = frozenset({"use", "include", "exclude", "allow", "show", "hide", "skip",
                           "ignore", "enable", "disable", "force", "return", "fetch", "send",
                           "await", "follow", "keep", "overwrite", "dry", "submit", "wait"})


def param_schema(spec: EnvSpec, tool: str, param: str) -> dict[str, Any]:
    return spec.tool(tool).parameters.get("properties", {}).get(param, {}) or {}


_WHERE = re.compile(r"\bwhere (?:it|the|they|a)\b", re.I)  # a place: "the branch where it is
# handed in"
_QUERIES = frozenset({"query", "q", "text", "keyword", "keywords", "search", "term"})


def key_kind(spec: EnvSpec, tool: str, param: str) -> str | None:
    """The kind of record a key argument names (`changed_by_id` → member), from the foreign
    key of the column of that name in the tool's table (or any table); None when unknown."""
    ent = tool_entity(spec, tool)
    tables = sorted(spec.tables, key=lambda t: table_entity(t.name) != ent)
    for t in tables:
        col = next((c for c in t.columns if c.name == param and c.foreign_key), None)
        if col is not None:
            return table_entity(col.foreign_key.split(".")[0])
    return None


def keyed_record(spec: EnvSpec, param: str) -> str | None:
    """The record a key that is one of its fields names (`barcode` → copy, `card_number` →
    member: a unique column of that name), when the key's own words name no record; None
    otherwise."""
    kinds = {table_entity(t.name) for t in spec.tables}
    if not noun(param) or noun(param).split()[-1] in {k.split()[-1] for k in kinds}:
        return None
    found = [table_entity(t.name) for t in spec.tables for c in t.columns
             if c.name == param and c.unique and not c.primary_key]
    return found[0] if len(found) == 1 else None


def list_filters(spec: EnvSpec, tool: str, given: dict[str, Any]) -> tuple[str, str, str]:
    """(words before the entity, words after it, owner) for a list's stated filters:
    "confirmed" reservations "departing on ..." "of customer 70"."""
    before, after, owner = [], [], ""
    for p, v in given.items():
        schema = param_schema(spec, tool, p)
        r = role(p, v, schema)
        acted = by_key(p, v, key_kind(spec, tool, p))
        if acted is not None:  # "changed by member 15"
            after.append(acted)
        elif p in PAGING:
            after.append(f"(just the first {value_text(v)})")
        elif p in _QUERIES:
            after.append(f"matching {value_text(v)}")
        elif r == "key" and not owner and noun(p).split()[0] in KEY_ROLES and \
                len(noun(p).split()) > 1:
            # "whose home branch is branch 14", as `which` writes it, not "... is 14"
            after.append(f"whose {noun(p)} is {noun(p).split()[-1]} {say(p, v, schema)}")
        elif r == "key" and not owner:
            owner = key_phrase(p, v)
        elif r == "choice" and isinstance(v, str) and len(v) < 20:
            before.append(say(p, v, schema))
        elif r == "flag" and (field_words(p).split() or [""])[0] not in _SWITCH_VERBS:
            words = field_words(p)
            after.append(f"that are {'' if v else 'not '}{re.sub(r'^(is|has) ', '', words)}")
        else:
            said = arg_phrase(p, v, schema)
            # "the mind maps named Backlog notes", not "with named Backlog notes"
            after.append(said if said.startswith((*PREPOSITIONS, "named ", "titled "))
                         else f"with {said}")
    # a restrictive "that ..." clause follows its noun phrase without a comma
    joined = "".join((" " if i and a.startswith("that ") else ", " if i else "") + a
                     for i, a in enumerate(after))
    return " ".join(before), joined, owner


def _mentions(act: str, record: str | None) -> bool:
    """Whether `act` speaks of a `record` ("check out a copy to a member": copy, member)."""
    return bool(record) and re.search(rf"\b{re.escape(record.split()[-1])}s?\b", act) is not None


def _aim(spec: EnvSpec, act: str, param: str, named: str, ent: str,
         record: str | None = None) -> str:
    """`act` aimed at the record key `param` names: by the key's own noun, or, for a field of
    the record (a copy's barcode), "the copy with barcode 40..." where the act says "a copy".
    `record`: `keyed_record` of `param`, when the caller has it."""
    record = record or keyed_record(spec, param)
    if record and _mentions(act, record):
        return _with_key(act, record, f"the {record} with {named}", ent)
    return _with_key(act, noun(param) or ent, named, ent)


# words that end a noun phrase: after a record's noun they are no thing of its own ("a
# member account": account is; "a hold for a member": for is not), and between an article and
# its noun they start another phrase ("a hold on a title" is no title)
PHRASE_ENDS = frozenset({"to", "for", "from", "in", "on", "at", "with", "as", "and", "or", "by",
                         "of", "into", "onto", "using", "that", "which", "who", "so", "when",
                         "if", "whose"})
_ENDS = "|".join(sorted(PHRASE_ENDS))
# up to three words between an article and its noun, none an article or a phrase end
MODIFIERS = rf"(?:(?!(?:a|an|one|the|{_ENDS})\b)[\w-]+\s+){{0,3}}?"


def _with_key(act: str, ent: str, key: str, whole: str = "") -> str:
    """Aim a write's clause at one record: "cancel a hold" → "cancel hold 3". `whole`: the
    tool's own entity when `ent` is a part of it ("branch" of "branch commit" is not aimed at
    in "create a branch commit")."""
    head = ent.split()[-1] if ent else ""
    if whole != ent and whole.endswith(" " + ent) and re.search(
            rf"\b{re.escape(whole)}s?\b", act):  # "commit" of "a branch commit" is not it
        head = ""
    if head:
        # in "place a hold on a title", "a title" is the title, not "a hold on a title"
        rest = whole.split()[len(ent.split()):] if whole.startswith(ent + " ") else []
        after = rf"(?!\s+{re.escape(rest[0])}\b)" if rest else ""
        # the record as the owner of what the act names: "suspend member 1's account", not
        # "suspend member 1 account"
        owned = rf"(?=\s+(?!(?:{_ENDS})\b)[a-z]+\b)"
        # the noun in any case: "fetch a URL" is aimed at a url
        noun_rx = rf"(?i:{re.escape(head)}s?)\b{after}"
        out, n = re.subn(rf"\b(?:a|an|one|the|their|its|another)\s+{MODIFIERS}{noun_rx}{owned}",
                         f"{key}'s", act, count=1)
        if not n:
            # the key names one record: "of the page or element" is "of page 25"
            out, n = re.subn(rf"\b(?:a|an|one|the|their|its|another)\s+{MODIFIERS}{noun_rx}"
                             rf"(?:\s+or\s+(?:an?\s+|the\s+)?[a-z]+\b(?!\s+(?!{_ENDS}\b)[a-z]))?",
                             key, act, count=1)
        if n:
            # "transfer a copy to another branch" + "to branch 1": one "to"
            return re.sub(r"\b(to|from) \1\b", r"\1", out)
    if key.split(" ", 1)[0] in DIRECTIONS:
        return f"{act} {key}"
    return f"{act} for {key}"


def _in_place(spec: EnvSpec, tool: str, act: str, given: dict[str, Any]) -> str:
    """`act` with each value the action names by its kind put in its place ("get current time
    in a specific timezone" -> "get current time in Europe/Paris"); those values leave
    `given`."""
    for p in [p for p in given if p not in PAGING and role(p, given[p]) != "key"]:
        head = noun(p).split()[-1] if noun(p) else ""
        put, n = _put(act, head, bare_value(p, given[p], param_schema(spec, tool, p)))
        if head and n:
            act = put
            given.pop(p)
    return act


def _put(act: str, head: str, said: str) -> tuple[str, int]:
    """`act` with "a/the (specific) <head>" replaced by `said`, and how many were."""
    return re.subn(rf"\b(?:a|an|the|one)\s+(?:specific\s+|given\s+|particular\s+)?"
                   rf"{re.escape(head)}s?\b", said, act, count=1, flags=re.I)


def qualified(spec: EnvSpec, plan: Plan, i: int, upto: int) -> str:
    """How a later clause names step `i`'s record: its entity, with a word that tells it from
    another record of its kind the steps before `upto` hold ("that new order" after "mark
    order 1 as paid ... create an order"; "that first time conversion" after another was
    created). A step bound to `i` (or `i` to it) holds the same record: no other."""
    ent = tool_entity(spec, plan.steps[i].tool)

    def linked(a: int, b: int) -> bool:  # one takes the other's own key: the same record
        return any(x.step == b and (x.field == "id" or noun(p) == ent)
                   for p, x in plan.steps[a].bound.items()) or \
            any(x.step == a and (x.field == "id" or noun(p) == ent)
                for p, x in plan.steps[b].bound.items())

    others = [k for k in range(upto)
              if k != i and tool_entity(spec, plan.steps[k].tool) == ent
              and not linked(k, i)]
    if not others:
        return ent
    if spec.tool(plan.steps[i].tool).mutates and _creates(action_phrase(spec, plan.steps[i].tool)):
        return f"new {ent}"
    return f"first {ent}" if all(k > i for k in others) else ent


def requalify(text: str, spec: EnvSpec, plan: Plan, src: int, upto: int,
              every: bool = False) -> str:
    """`text` with "that <entity>" of step `src` said as `qualified` says it (the first
    mention, or `every` one)."""
    ent, name = tool_entity(spec, plan.steps[src].tool), qualified(spec, plan, src, upto)
    if name == ent:
        return text
    return re.sub(rf"\bthat {re.escape(ent)}\b", f"that {name}", text, count=0 if every else 1)


def bound_key_noun(step: PlanStep) -> str:
    """The record a step's bound key names ("member" for member_id), or ""."""
    return next((noun(p) for p in step.bound if role(p) == "key" and noun(p)), "")


def step_clause(spec: EnvSpec, plan: Plan, i: int, rng: random.Random,
                lists: bool = False) -> str:
    """One step as a request clause (lower case, no final stop)."""
    clause = _step_clause(spec, plan, i, rng, lists)
    if plan.steps[i].bound:
        # every mention when the step takes only from that record
        sources = {b.step for b in plan.steps[i].bound.values()}
        clause = requalify(clause, spec, plan, next(iter(plan.steps[i].bound.values())).step,
                           i, every=len(sources) == 1)
    return clause


def _step_clause(spec: EnvSpec, plan: Plan, i: int, rng: random.Random,
                 lists: bool = False) -> str:
    step = plan.steps[i]
    ent = tool_entity(spec, step.tool)
    kind = _kind(spec, step.tool, lists or step.select is not None)
    given = dict(step.given)
    prev = tool_entity(spec, plan.steps[next(iter(step.bound.values())).step].tool) \
        if step.bound else ""
    # the record a bound key names: "the loans of that fine's member" (a fine has no loans),
    # "of that loan's member" (not "the loans like that one")
    keyed = bound_key_noun(step)
    if kind == "list" and step.select is None and any(
            noun(p) == ent and role(p, v) == "key" for p, v in given.items()):
        # a listing given its own record's key reads that one record (Xero's
        # list_contact_groups(contactGroupId)): "look up contact group 1", not "go over the
        # contact groups of contact group 1"
        kind = "read"
    if kind == "list":
        before, after, owner = list_filters(spec, step.tool, given)
        ents = entity_plural(ent)
        what = " ".join(x for x in (before, ents) if x)
        of_prev = f" of that {prev}'s {keyed}" if keyed and keyed not in (prev, ent) else \
            " like that one" if prev == ent else f" of that {prev}"
        if owner:
            what += f" of {owner}"
        elif step.bound:
            what += of_prev
        if after:
            what += " " + after
        if step.select and i < len(plan.steps) - 1 or step.select and lists is False:
            (k, v), = step.select.items()
            one = " ".join(x for x in (before, ent) if x)
            tail = f" of {owner}" if owner else (of_prev if step.bound else "")
            if prev == ent and step.bound and not owner:
                one = f"other {one}"
            verb = rng.choice(["find", "look up", "pull up"])
            if k == "id":  # "pull up appointment 16", not "... whose id is 16"
                return f"{verb} {ent} {value_text(v).strip(chr(39))}{tail}" + (
                    f" among the {what}" if after and not tail else "")
            picked = which(k, v, key_kind(spec, step.tool, k), own=ent)
            if runs_sql(spec, step.tool) and "query" in given:
                # "run the query SELECT ... and find the row whose email is ...", not "search
                # the queries for 'SELECT ...'"
                return f"run the query {value_text(given['query'])} and {verb} the row {picked}"
            query = next((str(given[q]) for q in given if q in _QUERIES), None)
            if query and isinstance(v, str) and re.search(
                    rf"(?<!\w){re.escape(query.lower())}(?!\w)", v.lower()):
                # "the customer named Jeffrey Luna", not "... matching 'Jeffrey'" (nor "the
                # repository whose path is '/srv/git/x' matching 'srv'"): the value says
                # the search
                after = re.sub(r"(?:^|, )matching '[^']*'|(?:^|, )matching \S+", "",
                               after).lstrip(", ")
            if after and picked.startswith("whose ") and after.startswith("whose "):
                after = f"and {after}"  # "whose message is M and whose parent commit is 8"
            if query and after == f"matching {value_text(query)}" and not tail:
                # the search's words are not in what singles the record out: "search the
                # members for 'Christopher' and pull up the one whose card number is 27...",
                # not "the member whose card number is 27... matching 'Christopher'"
                return f"search the {entity_plural(one)} for {value_text(query)} and {verb} " \
                       f"the one {picked}"
            return f"{verb} the {one}{tail} {picked}" + (f" {after}" if after else "")
        return rng.choice(["look through the {e}", "pull up the {e}", "check the {e}",
                           "go over the {e}"]).format(e=what)
    if kind == "read":
        key = next((p for p in given if role(p, given[p]) == "key"), None)
        if key is not None:
            v = given.pop(key)
            who = key_phrase(key, v)
            if noun(key) not in (ent, "") and key != "id":
                who = f"the {ent} of {who}"
            a = rng.choice(["look up {w}", "pull up {w}", "open {w}", "find {w}"]).format(w=who)
        elif step.bound and keyed and keyed not in (prev, ent):
            # a role of the record itself ("pickup branch" of a branch): that record
            a = rng.choice([f"open that {prev}'s {keyed}", f"look up that {prev}'s {keyed}"]) \
                if keyed.split()[-1] == ent.split()[-1] else \
                rng.choice([f"look up the {ent} of that {prev}'s {keyed}",
                            f"pull up the {ent} of that {prev}'s {keyed}"])
        elif step.bound and any(role(p) == "key" for p in step.bound):
            a = rng.choice([f"look up the {ent} of that {prev}",
                            f"find the {ent} that {prev} points to",
                            f"open that {prev}'s {ent}"]) if prev != ent else \
                rng.choice([f"open that {ent}'s full record", f"look up that {ent}'s details"])
        else:
            a = _in_place(spec, step.tool, routed(action_phrase(spec, step.tool), given), given)
        rest = [arg_phrase(p, v, param_schema(spec, step.tool, p)) for p, v in given.items()
                if p not in PAGING]
        if step.bound and not any(role(p) == "key" for p in step.bound):
            # an action given an earlier record's value, not a record it leads to: "convert
            # time from that current time's timezone to America/New_York at 14:00"
            for p, b in step.bound.items():
                head = field_words(p).split()[0]
                said = _copied(spec, plan, i, b)
                # the value in the action's own words for it: "fetch that fetch's url from the
                # internet", not "fetch a URL from the internet for that fetch's url"
                a, n = _put(a, field_words(p).split()[-1], said)
                if n:
                    continue
                rest.append(f"from {said}" if head in FROM_ROLES else
                            f"to {said}" if head in TO_ROLES else said)
        # "from X to Y at 16:00", "(just the first 200 characters)" follow the action; other
        # values are what it is for
        lead = ("in", "from", "to", "at", "starting", "(just")
        ends = sorted((x for x in rest if x.split(" ", 1)[0] in lead),
                      key=lambda x: lead.index(x.split(" ", 1)[0]))
        if ends:  # "convert time between timezones from X to Y": the ends say between what
            a = re.sub(r" between \w+$", "", a)
        rest = [x for x in rest if x not in ends]
        return a + "".join(f" {x}" for x in ends) + (" for " + " and ".join(rest) if rest else "")
    clause = write_clause(spec, step.tool, given, rng, prev=prev if step.bound else "",
                          bound_keys=tuple(p for p in step.bound if role(p) == "key"),
                          own_roles=frozenset(p for p, b in step.bound.items() if b.field == p),
                          fields={p: b.field for p, b in step.bound.items()},
                          origins={p: tool_entity(spec, plan.steps[b.step].tool)
                                   for p, b in step.bound.items()})
    # a value the write takes from an earlier record is said as that record's field ("set
    # its status to that slot's status"), never left out
    copied = [(p, _copied(spec, plan, i, b))
              for p, b in step.bound.items() if role(p) != "key"
              and not _names_said_record(spec, tool_entity(spec, plan.steps[b.step].tool),
                                         b.field, clause)]
    if not copied:
        return clause
    if clause.split(" ", 1)[0] in EDITS:
        return clause + ", setting " + " and ".join(f"its {field_words(p)} to {v}"
                                                    for p, v in copied)
    # an action given a value of an earlier record ("record changes ... using that
    # repository's path"): nothing of the record is set
    return clause + ", using " + " and ".join(v for _, v in copied)


def _copied(spec: EnvSpec, plan: Plan, i: int, b: Binding) -> str:
    """An earlier record's value that step `i` is given, in words: "the same username" where
    the request itself stated it for that record and for no other step ("repair the database
    with username 'jamie', then generate an upload URL using the same username"), else that
    record's field ("that branch's repository path")."""
    said = b
    while said.field not in plan.steps[said.step].given and \
            said.field in plan.steps[said.step].bound:  # passed on unchanged: still the same
        said = plan.steps[said.step].bound[said.field]
    if said.field in plan.steps[said.step].given and not any(
            said.field in s.given for j, s in enumerate(plan.steps[:i]) if j != said.step):
        return f"the same {field_words(said.field)}"
    return f"that {tool_entity(spec, plan.steps[b.step].tool)}'s {field_words(b.field)}"


def _names_said_record(spec: EnvSpec, record: str, field: str, clause: str) -> bool:
    """Whether `field` is what identifies `record` (a repository's path) and `clause` already
    names that record ("unstage all staged changes in that repository"): saying the path too
    would be saying it twice."""
    if not re.search(rf"\bthat {re.escape(record)}\b(?!')", clause):
        return False
    return _identifies(spec, record, field)


def _identifies(spec: EnvSpec, record: str, field: str) -> bool:
    """Whether `field` singles out one `record` (a repository's path)."""
    return any(table_entity(t.name) == record and c.name == field and c.unique
               for t in spec.tables for c in t.columns)


EDITS = frozenset({"change", "edit", "update", "set", "modify", "rename", "correct"})


def _creates(act: str) -> bool:
    return act.split(" ", 1)[0] in ("create", "add", "insert", "register", "open", "new",
                                    "save", "make", "book", "log", "record", "submit", "post",
                                    "place")


def write_clause(spec: EnvSpec, tool: str, given: dict[str, Any], rng: random.Random,
                 prev: str = "", bound_keys: tuple[str, ...] = (),
                 own_roles: frozenset[str] = frozenset(),
                 fields: dict[str, str] | None = None,
                 origins: dict[str, str] | None = None) -> str:
    """A write as a request: its action aimed at the stated record, then what it sets.
    `own_roles`: bound keys whose field has the argument's own name (a conversion's
    `source_timezone_id` feeding `source_timezone_id`); `fields`: the earlier record's field
    each bound argument takes; `origins`: the record each bound argument came from, where it
    is not `prev`."""
    base_prev = prev
    ent = tool_entity(spec, tool)
    given = dict(given)
    act = routed(action_phrase(spec, tool), given)
    key = next((p for p in given if role(p, given[p]) == "key" and noun(p) in
                (ent, ent.split()[-1], "")), None) or \
        next((p for p in given if role(p, given[p]) == "key"), None)
    found_by = own_keys(spec, tool)
    by_field = next((p for p in found_by if p in given and p != key), None)
    if by_field is not None and key is None:
        # the record named by a field of it (HubSpot's propertyName, a REST path): "update
        # the property named Q2 invoice", never "set its property name to Q2 invoice"
        column, value = found_by[by_field], bare_value(by_field, given.pop(by_field))
        act = _with_key(act, ent, f"the {ent} named {value}" if column in ("name", "title") else
                        f"the {ent} at {value}" if column in ("path", "url") else
                        f"{ent} {value}", ent)
    elif key is not None:
        # aimed at the record the key names: "add a coupon to a pending order" → "... to
        # order ORD-1", not "add order ORD-1 ..."
        base = act  # the other keys are aimed by the action's own words, not the first key's
        named = key_phrase(key, given.pop(key))
        aimed = _aim(spec, act, key, named, ent)
        if aimed == f"{act} for {named}" and _WHERE.search(
                str(param_schema(spec, tool, key).get("description", ""))):
            aimed = f"{act} at {named}"  # a place the act happens at: "check in ... at branch 6"
        act = aimed
        for p in [p for p in given if role(p, given[p]) == "key"]:
            named = key_phrase(p, given.pop(p))
            record = keyed_record(spec, p)
            if _mentions(base, record):
                # "check out the copy with barcode 40... to the member with card number 27..."
                act = _aim(spec, act, p, named, ent, record)
                continue
            if not re.search(rf"\b{re.escape(noun(p).split()[-1])}s?\b", base):
                # a place the act happens at: "check in copy 39 at branch 28"
                where = _WHERE.search(str(param_schema(spec, tool, p).get("description", "")))
                act = f"{act} {'at' if where else 'with'} {named}"
                continue
            # "branch" in "a branch commit" is part of the tool's own noun: "create a branch
            # commit for commit 17 and branch 41", not "create branch 41 commit"
            aimed = _with_key(act, noun(p), named, ent)
            act = f"{act} and {named}" if aimed == f"{act} for {named}" and \
                re.search(r" for \w+ [\w-]+$", act) else aimed
    if prev:
        # aimed at the record the earlier one leads to, by the key it passes on: "place a hold
        # on that copy's title", "create a commit for that branch's repository"
        # (a create that only copies values is aimed at nothing: "create a query, setting its
        # content to that insight's content")
        # a tool named for an action, not a record (git_reset's "reset"): aimed at the record
        # itself, "unstage all changes in that repository", not "that repository's reset"
        own = ent if any(table_entity(t.name) == entity(tool, tool_namespace(spec))
                         for t in spec.tables) else prev
        # a value copied from another record aims the act at that record only where it is
        # what identifies it ("unstage all changes in that repository": its path); else it
        # is only a value: "apply alternating rows ..., using the same filename", never "...
        # for that header's table alternating row" nor "... for that table width"
        names_own = any(_identifies(spec, prev, f) for f in (fields or {}).values()) \
            if own == prev else own == ent == prev or any(
                noun(p).split()[0] == ent.split()[-1] for p in (fields or {}))
        aims = [(p, noun(p) or ent) for p in bound_keys] or \
            ([] if _creates(act) or key is not None or by_field is not None or not names_own
             else [("", own)])
        missed = []
        for p, n in aims:
            words = n.split()
            # each key said as the record it came from: "for that loan's member", not "that
            # copy's member" when the copy was read after the loan
            prev = (origins or {}).get(p, base_prev)
            # the earlier record's own name for what it passes on: "to that hold's pickup
            # branch", not "that hold's home branch" (a hold has no home branch)
            field = noun((fields or {}).get(p, ""))
            said = field if field != n and len(field.split()) > 1 and \
                field.split()[-1] == words[-1] else ""
            that = f"that {prev}" if prev == n else f"that {prev}'s {said or n}"
            record = keyed_record(spec, p) if p else None
            if record and _mentions(act, record):
                # a field that names its record (a member's card number): "to that member"
                that = f"that {prev}" if prev == record else f"that {prev}'s {record}"
                act = _with_key(act, record, that, ent)
                continue
            if len(words) > 1 and words[0] in DIRECTIONS and p not in own_roles:
                # "to that hold's branch"
                that = f"{words[0]} that {prev}'s {said or ' '.join(words[1:])}"
            elif len(words) > 1 and words[0] in KEY_ROLES and p not in own_roles:
                # "that transition's timezone as the source"; a record that has the role
                # itself says it: "that conversion's source timezone"
                that = as_role(f"that {prev}'s {said or ' '.join(words[1:])}", words[0],
                               " ".join(words[1:]))
            aimed = _with_key(act, n, that, ent)
            if aimed == f"{act} for {that}" and _WHERE.search(
                    str(param_schema(spec, tool, p).get("description", ""))):
                act += f" at {that}"  # "check in that loan's copy at that loan's branch"
            elif aimed == f"{act} for {that}":
                missed.append(that)
            else:
                act = aimed
        if missed:
            act += " for " + " and ".join(missed)
    rest, does = [], []
    # an act that already says what it sets ("set table columns to auto-fit based on
    # content", "set text alignment for a table cell") is given the record it acts on, not
    # values: never "set its filename to ..."
    sets = act.split(" ", 1)[0] in EDITS and not re.match(r"set \S.* (?:to|for) \S", act)
    marks: dict[str, str] = {}
    for p, v in given.items():
        if p in PAGING:
            continue
        schema = param_schema(spec, tool, p)
        r = role(p, v, schema)
        flag_words = split_words(p) if r == "flag" else []
        if sets and len(flag_words) > 1 and flag_words[0] in _FLAG_VERBS:
            # make_default=True: "make it the default", never "set its make default to yes"
            does.append(f"{'' if v else 'do not '}{flag_words[0]} it "
                        f"{_FLAG_VERBS[flag_words[0]]}{' '.join(flag_words[1:])}")
        elif sets and r != "key":  # what finds the record is no value it sets
            rest.append(arg_phrase(p, v, schema, writes=p not in found_by))
        elif r == "key":
            rest.append(key_phrase(p, v))
        elif r == "flag" and len(flag_words) > 1 and flag_words[0] in ("is", "has"):
            marks[p] = arg_phrase(p, v, schema)  # "marked as new release": said apart
        else:
            rest.append(arg_phrase(p, v, schema))
    if marks:
        act += ", " + " and ".join(marks.values())
        given = {p: v for p, v in given.items() if p not in marks}
    if not sets:
        # "create a time conversion ... at 09:45", never "... with at 09:45"
        ends = [r for r in rest if r.startswith(PREPOSITIONS)]
        act += "".join(f" {r}" for r in ends)
        rest = [r for r in rest if r not in ends]
        given = {p: v for p, v in given.items() if p not in PAGING
                 and not arg_phrase(p, v, param_schema(spec, tool, p)).startswith(PREPOSITIONS)}
    if sets and does and not rest and " " in act:
        # nothing set but the flag: "make address 2 of customer 1 the default", not "edit
        # address 2 ... or make it the default: make it the default"
        target = act.split(" ", 1)[1].split(" or ", 1)[0]
        return " and ".join(d.replace(" it ", f" {target} ", 1) for d in does)
    if sets and (rest or does):
        return f"{act}: " + " and ".join(([f"set {' and '.join(rest)}"] if rest else []) + does)
    if not rest:
        return act
    if len(rest) > 1:  # "using the name X and ...", not "using named X"
        rest = [f"the name {r.removeprefix('named ')}" if r.startswith("named ") else r
                for r in rest]
    only = next(iter(given)), next(iter(given.values()))
    if len(rest) == 1 and (role(*only) == "date" or rest[0].startswith("named ")):
        return f"{act} {rest[0]}"  # "create a slot for clinician 4 ending March 4, 2026"
    if len(rest) > 1 or role(*only) == "key":
        return f"{act}, using " + " and ".join(rest)
    named = re.match(r"the ([a-z]+) ", rest[0])
    if named:
        # "waive fine 32 with the reason 'lost'", not "... with a written reason with the
        # reason 'lost'": the description's own mention gives way to the stated value
        act = re.sub(rf" with (?:a|an|the)(?: [a-z]+)? {named[1]}\b", "", act, count=1)
    return f"{act} with {rest[0]}"


__all__ = ["EDITS", "list_filters", "param_schema", "qualified",
           "requalify", "step_clause", "write_clause"]
