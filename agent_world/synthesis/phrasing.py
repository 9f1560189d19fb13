"""Offline request writing: how a person would ask for a walk, from what the environment says.

The offline synthesizer has no language model, so it writes from the environment's own words:
each tool's entity (`list_holds` → hold, `getPatient` → patient), its kind (reads one record,
reads a list, writes), what a write does (its description's verb, cleaned of user-story
framing: "Members can renew a loan ..." → "renew the loan ..."), and the values of the walk.

Values are phrased by **type and role**, never behind their argument's name: a key as its
entity ("reservation MGX7Q2", "member 48"), a date as a date ("March 12, 2026"), money as money
("$74.96"), a person's name as a name, a count with its unit ("2 bags"), a new value as what it
sets ("change its status to expired"), free text quoted. The question is about what the chain
establishes: the new value after a write ("What is its status now?"), the total after an
aggregation, a field of the record the chain reached, asked with that record's name ("What is
the flight's aircraft?"). A step that picks a list element says which one by a readable field
("the reservation whose fare class is business"), never by a timestamp. Phrasing varies with
the walk's seed; `agent_world.tasks.artefacts` lists the template slips every emitted request
is checked against.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.tasks.check import normalise
from agent_world.tasks.walks import Plan
from agent_world.tasks.words import entity, entity_plural, plural, singular, split_words

_OPEN = ["", "", "", "Hi. ", "Hello! ", "Hi there. ", "Can you help me? "]
_LIST_VERBS = {"list", "search", "find", "browse"}
_PAGING = ("limit", "offset", "page", "page_size", "max_results")
_THEN = ["Then {a}.", "After that, {a}.", "Next, {a}.", "Once you have that, {a}.",
         "From there, {a}."]
_FIRST = ["Please {a}.", "I need you to {a}.", "Could you {a}?", "{A}.", "I'd like you to {a}."]


def field_words(name: str) -> str:
    return " ".join(split_words(name))


def noun(param: str) -> str:
    """How a user names an argument: `member_id` → member, `patientId` → patient."""
    words = split_words(param)
    if len(words) > 1 and words[-1] == "id":
        words = words[:-1]
    return " ".join(words)


def value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return normalise(value)
    if isinstance(value, dict | list):
        return json.dumps(value)
    text = str(value)
    if re.fullmatch(r"[\w.+-]+@[\w-]+(\.[\w-]+)+|\d{4}-\d{2}-\d{2}(T[\d:]+)?|[A-Z0-9][A-Z0-9_-]*"
                    r"\d[A-Z0-9_-]*|[A-Z]{2,}\d*", text):
        return text
    return f"'{text}'"


_THIRD_PERSON = re.compile(r"^(\w+?)(ches|shes|sses|xes|ies|s)\b")


def action_phrase(spec: EnvSpec, tool: str) -> str:
    """What a tool does, as a request: its description's first clause, user-story framing
    and third-person verbs removed, no tool name left in it."""
    desc = " ".join(spec.tool(tool).description.split())
    m = re.search(r"\bI want to (.+?)(?: so that\b|[.;]|$)", desc, re.I)
    if m:
        desc = m.group(1)
    else:
        m = re.match(r"^[A-Z][\w ]{0,40}? can (.+)", desc)
        if m:
            desc = m.group(1)
    # a condition or qualifier of the tool is no part of what the user asks: "place a hold on
    # a title when no copy is available", "cancel a hold at any time before it is collected"
    # and so is what the tool allows or what comes after it: "create a new branch from an
    # optional base branch", "suspend a member account and reactivate it later"
    clause = re.split(r"(?<=[a-z0-9)])[.:;](\s|$)|\s\(|,? unless\b|, optionally\b| in id order"
                      r"| (?:when|whenever|if|once|so that|provided|before) (?!\w+ing\b)| at any\b"
                      r"| (?:from|with|using|by|on|in) (?:an? )?optional\b"
                      r"|,? and \w+ (?:it|them) (?:later|again)\b|,? and optionally\b"
                      r"| by (?:scanning|entering|giving|passing|providing|specifying|using)\b"
                      r"|,? (?:that|which) (?:has|have|is|are)(?: not| already| still)? "
                      r"(?:been |yet )?\w+(?:ed|en)\b",
                      desc, maxsplit=1)[0].strip().rstrip(" .,;:")
    # "create a slot and return the new record": what the tool hands back is no request
    clause = re.sub(r",? (?:and )?(?:return(?:s|ing)?|giv(?:es|ing)) (?:the|a|it|its)\b.*$", "",
                    clause, flags=re.I)
    first = clause.split(" ", 1)[0]
    m = _THIRD_PERSON.match(first.lower())
    if m and first.lower() not in {"status", "access", "process", "address", "this", "is",
                                   "has", "was"}:
        stem, suffix = m.groups()
        base = stem + ("y" if suffix == "ies" else suffix[:-2] if suffix != "s" else "")
        clause = base + clause[len(first):]
    for t in spec.tools:  # a tool named like a common word must not leak into the text
        clause = re.sub(rf"\b{re.escape(t.name)}\b", entity(t.name), clause)
    if not clause:
        return "look it up"
    phrase = clause[0].lower() + clause[1:]
    # "create a appointment" reads badly in any generated description
    return re.sub(r"\ba (?=[aeiou])", "an ", phrase)


# ---- values by type and role ------------------------------------------------------------------
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?")
_MONEY = {"price", "total", "amount", "fee", "cost", "balance", "refund", "subtotal", "charge",
          "paid", "fare", "salary", "payment", "deposit", "spent", "owed", "fine", "fines"}
_NAME = {"name", "recipient", "author", "holder", "surname"}
_TEXT = {"reason", "note", "notes", "message", "comment", "content", "description", "title",
         "text", "query", "body", "subject", "label", "summary", "memo", "purpose"}
_UNITS = {"quantity": "unit", "qty": "unit", "bags": "bag", "passengers": "passenger",
          "nights": "night", "seats": "seat", "copies": "copy", "guests": "guest",
          "items": "item", "units": "unit", "tickets": "ticket", "days": "day"}
_KEY_WORDS = ("id", "code", "number", "sku", "locator", "barcode", "sha", "uuid", "key")


def date_text(text: str) -> str | None:
    """`2026-03-12` → March 12, 2026; `2026-03-12T22:30:00` → March 12, 2026 at 22:30
    (None: not an ISO date)."""
    m = _DATE.fullmatch(str(text).strip())
    if not m:
        return None
    y, mo, d, hh, mm, ss = m.groups()
    if not 1 <= int(mo) <= 12:
        return None
    out = f"{_MONTHS[int(mo) - 1]} {int(d)}, {y}"
    if hh is not None:
        out += f" at {hh}:{mm}" + (f":{ss}" if ss not in (None, "00") else "")
    return out


def role(name: str, value: Any = None, schema: dict[str, Any] | None = None) -> str:
    """What a value is, from its name, type and schema: key, email, date, money, count, name,
    flag, choice, text or plain."""
    words = split_words(name)
    schema = schema or {}
    if isinstance(value, bool):
        return "flag"
    if isinstance(value, str) and _DATE.fullmatch(value):
        return "date"
    if isinstance(value, str) and re.fullmatch(r"[\w.+-]+@[\w-]+(\.[\w-]+)+", value):
        return "email"
    if words and (words[-1] in _KEY_WORDS or name == "id") and \
            words[-2:] not in (["postal", "code"], ["zip", "code"], ["phone", "number"]):
        return "key"
    if isinstance(value, int | float) and set(words) & _MONEY and "count" not in words:
        return "money"
    if isinstance(value, int) and words and (words[-1] in _UNITS or words[0] == "num"):
        return "count"
    if "enum" in schema:
        return "choice"
    if isinstance(value, str) and (words[-1:] and words[-1] in _NAME or
                                   words[-2:] in (["first", "name"], ["last", "name"],
                                                  ["full", "name"])):
        return "name"
    if isinstance(value, str) and set(words) & _TEXT:
        return "text"
    return "plain"


def say(name: str, value: Any, schema: dict[str, Any] | None = None) -> str:
    """A value as a person writes it, by its role."""
    r = role(name, value, schema)
    if r == "flag":
        return "yes" if value else "no"
    if r == "date":
        return date_text(value) or str(value)
    if r == "money":
        return f"${float(value):,.2f}"
    if r in ("email", "name", "key", "count") or isinstance(value, int | float):
        return value_text(value).strip("'") if isinstance(value, str) else value_text(value)
    if r == "choice":
        return str(value).replace("_", " ") if re.fullmatch(r"[a-z_]+", str(value)) else \
            value_text(value)
    return value_text(value)


def _bare(name: str, value: Any, schema: dict[str, Any] | None = None) -> str:
    """A value that reads without quotes when it is one token (a zone name, a URL)."""
    if isinstance(value, str) and re.fullmatch(r"[\w./:@+?=&%#~-]+", value):
        return value
    return say(name, value, schema)


def _count(n: Any, word: str) -> str:
    unit = _UNITS.get(word, singular(word))
    return f"{value_text(n)} {unit if n == 1 else plural(unit)}"


_FROM = frozenset({"source", "from", "origin"})
_TO = frozenset({"target", "to", "destination"})
_KEY_ROLES = frozenset({"source", "target", "origin", "destination", "parent", "child", "from",
                        "to", "primary", "secondary", "home", "pickup", "return", "billing",
                        "shipping", "sender", "receiver", "owner", "old", "new", "previous",
                        "next", "original", "replacement", "referring", "assigned"})


def _key_phrase(param: str, value: Any) -> str:
    """`member_id` 48 → member 48; `reservation_id` 'MGX7Q2' → reservation MGX7Q2."""
    n = noun(param) or "record"
    if split_words(param)[-1:] in (["code"], ["number"], ["sku"]) and len(split_words(param)) > 1:
        n = " ".join(split_words(param))
    v = value_text(value)
    if re.fullmatch(r"[\w./:@+-]+", str(value)):
        v = str(value)  # a code or number reads bare: "member 48", "order ORD-8D41E0B5"
    words = n.split()
    if len(words) > 1 and words[0] in _KEY_ROLES:
        # a key with a role: "timezone 33 as the source", not "source timezone 33"
        return f"{' '.join(words[1:])} {v} as the {words[0]}"
    return f"{n} {v}"


def _record_phrase(item: dict[str, Any]) -> str:
    """One element of a list argument as words: {"product_id": 51, "quantity": 2} → "2
    units of product 51"."""
    counts = [_count(v, split_words(k)[-1]) for k, v in item.items()
              if role(k, v) == "count"]
    keys = [_key_phrase(k, v) for k, v in item.items() if role(k, v) == "key"]
    rest = [arg_phrase(k, v) for k, v in item.items() if role(k, v) not in ("count", "key")]
    head = " of ".join(x for x in (" ".join(counts), " and ".join(keys)) if x)
    return ", ".join(x for x in (head, *rest) if x)


def date_phrase(words: str, when: str) -> str:
    """A date argument as a clause: "ending March 4, 2026 at 21:45" (ends_at), "ordered on
    ..." (ordered_at), "on ..." (date), "the due date March 4, 2026" (due_date)."""
    w = words.split()
    if w[-1:] == ["at"] and len(w) == 2 and w[0].endswith("s") and not w[0].endswith("ss"):
        return f"{w[0][:-1].removesuffix('e')}ing {when}"  # ends at → ending, starts → starting
    if w[-1:] == ["at"] and len(w) == 2 and w[0].endswith("ed"):
        return f"{w[0]} on {when}"
    if words in ("date", "day", "at", "on"):
        return f"on {when}"
    return f"the {words} {when}"


def arg_phrase(param: str, value: Any, schema: dict[str, Any] | None = None,
               writes: bool = False) -> str:
    """How a request states one argument, by its role (no argument name as such): a key as
    its entity, a count with its unit, a new value as what it sets."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return " and ".join(_record_phrase(v) for v in value)  # "1 unit of product 51"
    r = role(param, value, schema)
    words = field_words(param)
    if r == "key":
        return _key_phrase(param, value)
    if r == "email":
        return f"its email address to {value}" if writes else f"the email address {value}"
    if r == "count" and not writes:
        return _count(value, split_words(param)[-1])
    if r == "name" and not writes:
        return f"named {say(param, value, schema)}" if words == "name" else \
            f"the {words} {say(param, value, schema)}"
    head = words.split()[0] if words else ""
    if not writes and r not in ("key", "count") and head in _FROM | _TO and len(words.split()) > 1:
        # "from America/New_York", "to Australia/Sydney": the ends of a conversion or a move
        return f"{'from' if head in _FROM else 'to'} {_bare(param, value, schema)}"
    if not writes and param in ("max_length", "max_chars", "max_characters") and \
            isinstance(value, int):
        return f"(just the first {value} characters)"
    if not writes and param in ("start_index", "offset_chars") and isinstance(value, int):
        return f"starting at character {value}"
    if not writes and words == "time" and isinstance(value, str) and \
            re.fullmatch(r"\d{2}:\d{2}", value):
        return f"at {value}"
    several = len(words.split()) > 1
    if writes:  # "set its name to Emily Thomas", never "set the name Emily Thomas"
        return f"its {words} to {say(param, value, schema)}"
    if r == "date":
        return date_phrase(words, say(param, value, schema))
    if several and r != "text":
        # a name of several words reads as a name, not as English: "the offset before set
        # to '+00:00'", never "offset before '+00:00'"
        return f"the {words} set to {say(param, value, schema)}"
    if r == "text":
        return f"the {words} {say(param, value, schema)}"
    return f"{words} {say(param, value, schema)}"


# ---- tool kinds -------------------------------------------------------------------------------
def _kind(spec: EnvSpec, tool: str, lists: bool) -> str:
    words = split_words(tool)
    if spec.tool(tool).mutates:
        return "write"
    if lists or (words and words[0] in _LIST_VERBS):
        return "list"
    return "read"


def _schema(spec: EnvSpec, tool: str, param: str) -> dict[str, Any]:
    return spec.tool(tool).parameters.get("properties", {}).get(param, {}) or {}


def _list_filters(spec: EnvSpec, tool: str, given: dict[str, Any]) -> tuple[str, str, str]:
    """(words before the entity, words after it, owner) for a list's stated filters:
    "confirmed" reservations "departing on ..." "of customer 70"."""
    before, after, owner = [], [], ""
    for p, v in given.items():
        schema = _schema(spec, tool, p)
        r = role(p, v, schema)
        if p in _PAGING:
            after.append(f"(just the first {value_text(v)})")
        elif p in ("query", "q", "text", "keyword", "keywords", "search", "term"):
            after.append(f"matching {value_text(v)}")
        elif r == "key" and not owner and noun(p).split()[0] in _KEY_ROLES and \
                len(noun(p).split()) > 1:
            after.append(f"whose {noun(p)} is {say(p, v, schema)}")
        elif r == "key" and not owner:
            owner = _key_phrase(p, v)
        elif r == "choice" and isinstance(v, str) and len(v) < 20:
            before.append(say(p, v, schema))
        elif r == "flag":
            words = field_words(p)
            after.append(f"that are {'' if v else 'not '}{re.sub(r'^(is|has) ', '', words)}")
        else:
            after.append(f"with {arg_phrase(p, v, schema)}")
    return " ".join(before), ", ".join(after), owner


def which(field: str, value: Any) -> str:
    """The words that single out a list element: "whose fare class is business"."""
    r = role(field, value)
    words = split_words(field)
    if isinstance(value, int) and not isinstance(value, bool) and r != "key" and words and \
            words[-1].endswith("s") and words[-1] not in ("status", "address", "class"):
        return f"with {value} {' '.join(words[:-1] + [singular(words[-1])] if value == 1 else words)}"
    if r == "name" or field in ("name", "title"):
        return f"named {say(field, value)}" if field != "title" else \
            f"titled {say(field, value)}"
    if r == "key" and field != "id" and len(split_words(field)) > 1:
        # "whose pickup branch is branch 4", not "whose pickup branch id is 4"
        return f"whose {noun(field)} is {noun(field).split()[-1]} {value_text(value).strip(chr(39))}"
    return f"whose {field_words(field)} is {say(field, value)}"


def _with_key(act: str, ent: str, key: str, whole: str = "") -> str:
    """Aim a write's clause at one record: "cancel a hold" → "cancel hold 3". `whole`: the
    tool's own entity when `ent` is a part of it ("branch" of "branch commit" is not aimed at
    in "create a branch commit")."""
    head = ent.split()[-1] if ent else ""
    if whole != ent and whole.endswith(" " + ent):  # "commit" of "a branch commit" is not it
        head = ""
    if head:
        # the words between determiner and noun are no determiner or preposition: in "place
        # a hold on a title", "a title" is the title, not "a hold on a title"
        between = r"(?:(?!(?:a|an|the|on|of|to|for|in|at|with|from)\b)[\w-]+\s+){0,3}?"
        rest = whole.split()[len(ent.split()):] if whole.startswith(ent + " ") else []
        after = rf"(?!\s+{re.escape(rest[0])}\b)" if rest else ""
        out, n = re.subn(rf"\b(?:a|an|one|the|their|its|another)\s+{between}"
                         rf"{re.escape(head)}s?\b{after}", key, act, count=1)
        if n:
            return out
    return f"{act} for {key}"


def _in_place(spec: EnvSpec, tool: str, act: str, given: dict[str, Any]) -> str:
    """`act` with each value the action names by its kind put in its place ("get current time
    in a specific timezone" -> "get current time in Europe/Paris"); those values leave
    `given`."""
    for p in [p for p in given if p not in _PAGING and role(p, given[p]) != "key"]:
        head = noun(p).split()[-1] if noun(p) else ""
        put, n = re.subn(rf"\b(?:a|an|the|one)\s+(?:specific\s+|given\s+|particular\s+)?"
                         rf"{re.escape(head)}s?\b", _bare(p, given[p], _schema(spec, tool, p)),
                         act, count=1, flags=re.I)
        if head and n:
            act = put
            given.pop(p)
    return act


def step_clause(spec: EnvSpec, plan: Plan, i: int, rng: random.Random,
                lists: bool = False) -> str:
    """One step as a request clause (lower case, no final stop)."""
    step = plan.steps[i]
    ent = entity(step.tool)
    kind = _kind(spec, step.tool, lists or step.select is not None)
    given = dict(step.given)
    prev = entity(plan.steps[next(iter(step.bound.values())).step].tool) if step.bound else ""
    if kind == "list":
        before, after, owner = _list_filters(spec, step.tool, given)
        ents = entity_plural(ent)
        what = " ".join(x for x in (before, ents) if x)
        of_prev = " like that one" if prev == ent else f" of that {prev}"
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
            return f"{verb} the {one}{tail} {which(k, v)}" + (f" {after}" if after else "")
        return rng.choice(["look through the {e}", "pull up the {e}", "check the {e}",
                           "go over the {e}"]).format(e=what)
    if kind == "read":
        key = next((p for p in given if role(p, given[p]) == "key"), None)
        if key is not None:
            v = given.pop(key)
            who = _key_phrase(key, v)
            if noun(key) not in (ent, "") and key != "id":
                who = f"the {ent} of {who}"
            a = rng.choice(["look up {w}", "pull up {w}", "open {w}", "find {w}"]).format(w=who)
        elif step.bound:
            a = rng.choice([f"look up the {ent} of that {prev}",
                            f"find the {ent} that {prev} points to",
                            f"open that {prev}'s {ent}"]) if prev != ent else \
                rng.choice([f"open that {ent}'s full record", f"look up that {ent}'s details"])
        else:
            a = _in_place(spec, step.tool, action_phrase(spec, step.tool), given)
        rest = [arg_phrase(p, v, _schema(spec, step.tool, p)) for p, v in given.items()
                if p not in _PAGING]
        # "from X to Y at 16:00", "(just the first 200 characters)" follow the action; other
        # values are what it is for
        lead = ("from", "to", "at", "starting", "(just")
        ends = sorted((x for x in rest if x.split(" ", 1)[0] in lead),
                      key=lambda x: lead.index(x.split(" ", 1)[0]))
        if ends:  # "convert time between timezones from X to Y": the ends say between what
            a = re.sub(r" between \w+$", "", a)
        rest = [x for x in rest if x not in ends]
        return a + "".join(f" {x}" for x in ends) + (" for " + " and ".join(rest) if rest else "")
    clause = write_clause(spec, step.tool, given, rng, prev=prev if step.bound else "",
                          bound_keys=tuple(p for p in step.bound if role(p) == "key"))
    # a value the write takes from an earlier record is said as that record's field ("set
    # its status to that slot's status"), never left out
    copied = [(p, f"that {entity(plan.steps[b.step].tool)}'s {field_words(b.field)}")
              for p, b in step.bound.items() if role(p) != "key"]
    if not copied:
        return clause
    if clause.split(" ", 1)[0] in _EDITS:
        return clause + ", setting " + " and ".join(f"its {field_words(p)} to {v}"
                                                    for p, v in copied)
    # an action given a value of an earlier record ("record changes ... using that
    # repository's path"): nothing of the record is set
    return clause + ", using " + " and ".join(v for _, v in copied)


_EDITS = frozenset({"change", "edit", "update", "set", "modify", "rename", "correct"})


def _creates(act: str) -> bool:
    return act.split(" ", 1)[0] in ("create", "add", "insert", "register", "open", "new",
                                    "save", "make", "book", "log", "record", "submit", "post")


def write_clause(spec: EnvSpec, tool: str, given: dict[str, Any], rng: random.Random,
                 prev: str = "", bound_keys: tuple[str, ...] = ()) -> str:
    """A write as a request: its action aimed at the stated record, then what it sets."""
    ent = entity(tool)
    act = action_phrase(spec, tool)
    given = dict(given)
    key = next((p for p in given if role(p, given[p]) == "key" and noun(p) in
                (ent, ent.split()[-1], "")), None) or \
        next((p for p in given if role(p, given[p]) == "key"), None)
    if key is not None:
        # aimed at the record the key names: "add a coupon to a pending order" → "... to
        # order ORD-1", not "add order ORD-1 ..."
        base = act  # the other keys are aimed by the action's own words, not the first key's
        act = _with_key(act, noun(key) or ent, _key_phrase(key, given.pop(key)), ent)
        for p in [p for p in given if role(p, given[p]) == "key"]:
            named = _key_phrase(p, given.pop(p))
            if not re.search(rf"\b{re.escape(noun(p).split()[-1])}s?\b", base):
                act = f"{act} with {named}"
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
        own = ent if any(" ".join(split_words(singular(t.name))) == ent for t in spec.tables) \
            else prev
        aims = [noun(p) or ent for p in bound_keys] or \
            ([] if _creates(act) or key is not None else [own])
        missed = []
        for n in aims:
            words = n.split()
            that = f"that {prev}" if prev == n else f"that {prev}'s {n}"
            if len(words) > 1 and words[0] in _KEY_ROLES:  # "that transition's timezone as
                that = f"that {prev}'s {' '.join(words[1:])} as the {words[0]}"  # the source"
            aimed = _with_key(act, n, that, ent)
            if aimed == f"{act} for {that}":
                missed.append(that)
            else:
                act = aimed
        if missed:
            act += " for " + " and ".join(missed)
    rest = []
    sets = act.split(" ", 1)[0] in _EDITS
    for p, v in given.items():
        if p in _PAGING:
            continue
        schema = _schema(spec, tool, p)
        r = role(p, v, schema)
        if sets and r != "key":
            rest.append(arg_phrase(p, v, schema, writes=True))
        elif r == "key":
            rest.append(_key_phrase(p, v))
        else:
            rest.append(arg_phrase(p, v, schema))
    if not rest:
        return act
    if sets:
        return f"{act}: set " + " and ".join(rest)
    if len(rest) > 1:  # "using the name X and ...", not "using named X"
        rest = [f"the name {r.removeprefix('named ')}" if r.startswith("named ") else r
                for r in rest]
    only = next(iter(given)), next(iter(given.values()))
    if len(rest) == 1 and (role(*only) == "date" or rest[0].startswith("named ")):
        return f"{act} {rest[0]}"  # "create a slot for clinician 4 ending March 4, 2026"
    return f"{act}, using " + " and ".join(rest) if len(rest) > 1 or role(*only) == "key" \
        else f"{act} with {rest[0]}"


# ---- questions --------------------------------------------------------------------------------
def _counted_by(tool: str) -> bool:
    words = split_words(tool)
    return bool({"count", "counts", "stats", "statistics", "summary", "summarize",
                 "breakdown"} & set(words)) or "by" in words or "per" in words


def ask_field(field: str, rng: random.Random, ent: str = "", now: bool = False,
              value: Any = None, tool: str = "") -> str:
    """The question for one field of the record the chain reached (`now`: a field the
    chain's write just changed)."""
    words = split_words(field)
    the = f"the {ent}'s" if ent else "its"
    subject = f"the {ent}" if ent else "it"
    if tool and _counted_by(tool) and isinstance(value, int | float):
        ents = entity_plural(entity(tool))
        f = " ".join(words)
        return rng.choice([f"How many {ents} are {f}?", f"How many {f} {ents} are there?"])
    r = role(field, value)
    f = " ".join(words)
    if now:
        return rng.choice([f"What is {the} {f} now?", f"Tell me {the} new {f}.",
                           f"What {f} does {subject} have now?"])
    if words and words[-1] == "at" and len(words) > 1 and words[-2].endswith("ed"):
        w = " ".join(words[:-1])
        return rng.choice([f"When was {subject} {w}?", f"Tell me when {subject} was {w}."])
    if words and words[0] in ("is", "has") and len(words) > 1:
        return rng.choice([f"{words[0].capitalize()} {subject} {' '.join(words[1:])}?",
                           f"Tell me whether {subject} {words[0]} {' '.join(words[1:])}."])
    if r == "flag":
        return rng.choice([f"Is {subject} {f}?", f"Tell me whether {subject} is {f}."])
    if r == "money":
        return rng.choice([f"How much is {the} {f}?", f"What is {the} {f}?"])
    if r == "count" or (isinstance(value, int) and words and words[-1].endswith("s")
                        and words[-1] not in ("status", "address", "class")):
        return rng.choice([f"How many {f} does {subject} have?", f"What is {the} number of {f}?"])
    if r == "date":
        return rng.choice([f"What is {the} {f}?", f"Which {f} does {subject} have?"])
    return rng.choice([f"What is {the} {f}?", f"Tell me {the} {f}.",
                       f"I'd like to know {the} {f}.", f"Which {f} does {subject} have?"])


def where_text(where: dict[str, Any]) -> str:
    return " and ".join(which(k, v).removeprefix("whose ") for k, v in where.items())


def ask_aggregate(kind: str, field: str | None, where: dict[str, Any], ents: str,
                  rng: random.Random) -> str:
    scope = " and ".join(which(k, v) for k, v in where.items())  # "whose ...", "named ..."
    those = f"{ents} {scope}".strip()
    if kind == "count":
        if not where:
            return rng.choice([f"How many {ents} are there?", f"How many {ents} is that?"])
        have = " and ".join(f"{field_words(k)} {say(k, v)}" for k, v in where.items())
        return rng.choice([f"How many {those} are there?",
                           f"How many of those {ents} have {have}?",
                           f"Count the {those} and tell me how many there are."])
    f = field_words(field or "")
    r = role(field or "", 1.0)
    counted = r == "count" or (f.endswith("s") and f.split()[-1] not in ("status", "class"))
    if kind == "sum":
        if r == "money" and f in ("total", "amount", "price", "cost"):
            return rng.choice([f"What do the {those} come to in total?",
                               f"How much do the {those} add up to?"])
        if counted:
            return rng.choice([f"How many {f} do the {those} have in total?",
                               f"Add up the {f} of the {those}: how many is that?"])
        return rng.choice([f"What is the combined {f} of the {those}?",
                           f"Add up the {f} of the {those}: what is the total?"])
    high = kind == "max"
    if counted:
        return rng.choice([f"What is the {'largest' if high else 'smallest'} number of {f} "
                           f"among the {those}?",
                           f"Among the {those}, what is the {'highest' if high else 'lowest'} "
                           f"number of {f}?"])
    adj = ["highest", "largest"] if high else ["lowest", "smallest"]
    return rng.choice([f"What is the {adj[0]} {f} among the {those}?",
                       f"Among the {those}, which is the {adj[1]} {f}?"])


def _join(parts: list[str]) -> str:
    return " ".join(p.strip() for p in parts if p and p.strip())


def _sentence(template: str, a: str) -> str:
    return template.format(a=a, A=a[0].upper() + a[1:])


def _clauses(spec: EnvSpec, plan: Plan, upto: int, rng: random.Random,
             agg_step: int | None = None) -> list[str]:
    """The sentences of steps 0..upto-1: a first request, then connectives."""
    out = []
    for i in range(upto):
        a = step_clause(spec, plan, i, rng, lists=i == agg_step)
        out.append(_sentence(rng.choice(_FIRST if i == 0 else _THEN), a))
    return out


def instruction(spec: EnvSpec, plan: Plan, answer: dict[str, Any], rng: random.Random,
                changed: set[str] | None = None) -> str:
    """The user's request for a walk and its answer spec (graph and aggregating tasks);
    `changed`: fields the chain's writes changed (asked about as "now")."""
    kind = answer.get("kind", "none")
    agg_step = answer.get("step") if kind in ("count", "sum", "max", "min") else None
    parts = [rng.choice(_OPEN), *_clauses(spec, plan, len(plan.steps), rng, agg_step)]
    if kind == "field":
        step = plan.steps[answer["step"]]
        ent = entity(step.tool)
        f = answer["field"]
        now = bool(changed and f in changed)
        parts.append(ask_field(f, rng, ent=ent, now=now, value=answer.get("value"),
                               tool=step.tool))
    elif agg_step is not None:
        ents = entity_plural(entity(plan.steps[agg_step].tool))
        parts.append(ask_aggregate(kind, answer.get("field"), answer.get("where") or {}, ents,
                                   rng))
    else:
        parts.append(rng.choice(["Let me know once it's done.", "Confirm when that's done.",
                                 "Thanks!", "Tell me when it's finished."]))
    return _join(parts)


def conditional_instruction(spec: EnvSpec, plan: Plan, cond: dict[str, Any],
                            rng: random.Random) -> str:
    """A request that branches on an observed value: the reads, then "if its status is
    pending, cancel it; otherwise tell me its total" (`cond`: the condition spec the
    synthesizer recorded, see `agent_world.synthesis.synthesizer`)."""
    i = cond["step"]
    parts = [rng.choice(_OPEN), *_clauses(spec, plan, i + 1, rng)]
    ent = entity(plan.steps[i].tool)
    test = f"{field_words(cond['field'])} is {say(cond['field'], cond['value'])}"
    # the write is aimed at the record it is fed by: the branch's, or one read before it
    fed = sorted({b["step"] for b in (cond["write"].get("bound") or {}).values()})
    src = i if not fed or i in fed else fed[-1]
    bound = cond["write"].get("bound") or {}
    act = write_clause(spec, cond["write"]["tool"], cond["write"]["given"], rng,
                       prev=entity(plan.steps[src].tool),
                       bound_keys=tuple(p for p in bound if role(p) == "key"))
    if entity(cond["write"]["tool"]) == ent and src == i:
        act, n = re.subn(rf"\bthat {re.escape(ent)}'s\b", "its", act, count=1)
        if not n:
            act = re.sub(rf"\bthat {re.escape(ent)}\b", "it", act, count=1)
    other = field_words(cond["else_field"])
    shape = rng.randrange(2)
    if shape == 0:
        parts.append(f"If its {test}, {act}. If not, don't change anything; just tell me "
                     f"the {ent}'s {other}.")
    else:
        parts.append(f"Only if the {ent}'s {test}: {act}. Otherwise leave it as it is and "
                     f"tell me its {field_words(cond['else_field'])}.")
    return _join(parts)


def _them(act: str, ent: str, pronoun: str) -> str:
    """The write's clause aimed at the targets: "cancel a hold" → "cancel it"."""
    head = ent.split()[-1]
    out, n = re.subn(rf"\b(?:a|an|one|the)\s+(?:[\w-]+\s+){{0,3}}?{re.escape(head)}s?\b",
                     pronoun, act, count=1)
    return out if n else f"{act} for {pronoun}"


def bulk_instruction(spec: EnvSpec, plan: Plan, bulk: dict[str, Any],
                     rng: random.Random) -> str:
    """The request of a programmatic task that writes: one change for every list element
    that meets a condition."""
    ent = " ".join(split_words(singular(bulk["table"])))
    ents = entity_plural(ent)
    step = plan.steps[bulk["step"]]
    # "every" already says all of them: no page size in the request
    before, after, owner = _list_filters(spec, step.tool, {p: v for p, v in step.given.items()
                                                           if p not in _PAGING})
    ctx = f" of {owner}" if owner else ""
    if step.bound and not owner:
        ctx += f" of that {entity(plan.steps[next(iter(step.bound.values())).step].tool)}"
    if after:
        ctx += f" {after}"
    if before:
        ents, ent = f"{before} {ents}", f"{before} {ent}"
    (k, v), = bulk["where"].items()
    cond = which(k, v)
    act = action_phrase(spec, bulk["write"])
    writes = act.split(" ", 1)[0] in _EDITS
    extra = [arg_phrase(p, x, _schema(spec, bulk["write"], p), writes=writes)
             for p, x in bulk["args"].items()]
    if extra and writes:
        # an edit reads as what it sets: "set its status to shipped"
        sets = " and ".join(extra)
        def aim(pronoun: str, whose: str) -> str:
            return "set " + sets.replace("its ", f"{whose} ")
        extra_text = ""
    else:
        def aim(pronoun: str, whose: str) -> str:
            return _them(act, ent, pronoun)
        extra_text = f", using {' and '.join(extra)}" if extra else ""
    parts = [rng.choice(_OPEN)]
    for i in range(bulk["step"]):
        parts.append(_sentence(rng.choice(_FIRST if i == 0 else _THEN),
                               step_clause(spec, plan, i, rng)))
    shape = rng.randrange(3)
    if shape == 0:
        parts.append(f"Go through the {ents}{ctx}, and for every one {cond}, "
                     f"{aim('it', 'its')}{extra_text}.")
    elif shape == 1:
        parts.append(f"Every {ent}{ctx} {cond} needs the same change: "
                     f"{aim('each of them', 'the')}{extra_text}.")
    else:
        parts.append(f"Find all {ents}{ctx} {cond} and "
                     f"{aim('all of them', 'their')}{extra_text}.")
    if bulk["answer"] == "count":
        parts.append(rng.choice(["Tell me how many you changed.",
                                 f"How many {entity_plural(ent)} was that?",
                                 "Then let me know how many there were."]))
    else:
        parts.append(rng.choice(["Leave the others alone.", "Don't touch any other ones.",
                                 "Only those, please."]))
    return _join(parts)


__all__ = ["action_phrase", "arg_phrase", "ask_aggregate", "ask_field", "bulk_instruction",
           "conditional_instruction", "date_text", "entity", "instruction", "noun", "role",
           "say", "singular", "split_words", "step_clause", "value_text", "which",
           "write_clause"]
