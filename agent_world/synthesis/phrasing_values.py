"""Values by type and role: how a request states one value, never behind its argument's name
(a key as its entity, a date as a date, money as money, a count with its unit, a new value as
what it sets), and which element of a list a value singles out. See `phrasing`."""

from __future__ import annotations

import json
import re
from typing import Any

from agent_world.mining.offline.naming import plural_word, singular_word
from agent_world.mining.offline.vocabulary import PERSON_ROLES
from agent_world.tasks.check import normalise
from agent_world.tasks.words import FROM_ROLES, TO_ROLES, split_words


def field_words(name: str) -> str:
    """A field's name as words; a trailing number apart: `line2` → line 2, `address_line1` →
    address line 1."""
    return " ".join(re.sub(r"^([a-z]{4,})(\d)$", r"\1 \2", w) for w in split_words(name))


def noun(param: str) -> str:
    """How a user names an argument: `member_id` → member, `patientId` → patient."""
    words = split_words(param)
    if len(words) > 1 and words[-1] in ("id", "gid", "iid", "uid"):
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
# Asana's task_gid, GitLab's issue_iid and a service's user_uid name their record as an id
# does
_KEY_WORDS = ("id", "gid", "iid", "uid", "code", "number", "sku", "locator", "barcode", "sha",
              "uuid", "key")


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


def bare_value(name: str, value: Any, schema: dict[str, Any] | None = None) -> str:
    """A value that reads without quotes when it is one token (a zone name, a URL)."""
    if isinstance(value, str) and re.fullmatch(r"[\w./:@+?=&%#~-]+", value):
        return value
    return say(name, value, schema)


def _count(n: Any, word: str) -> str:
    unit = _UNITS.get(word, singular_word(word))
    return f"{value_text(n)} {unit if n == 1 else plural_word(unit)}"


# roles that qualify a noun and are none ("the pickup" of a hold is its pickup branch)
_QUALIFIERS = frozenset({"home", "pickup", "return", "billing", "shipping", "primary",
                         "secondary", "referring", "assigned"})
KEY_ROLES = frozenset({"source", "target", "origin", "destination", "parent", "child", "from",
                        "to", "primary", "secondary", "home", "pickup", "return", "billing",
                        "shipping", "sender", "receiver", "owner", "old", "new", "previous",
                        "next", "original", "replacement", "referring", "assigned"})


# roles that are prepositions: the key reads with them in front
DIRECTIONS = frozenset({"to", "from"})


def as_role(record: str, role: str, thing: str) -> str:
    """`record` said in its role: "timezone 33 as the source"; a role that is no noun on its
    own names the `thing` again: "branch 13 as the pickup branch"."""
    return f"{record} as the {role}" + (f" {thing}" if role in _QUALIFIERS else "")


def key_phrase(param: str, value: Any) -> str:
    """`member_id` 48 → member 48; `reservation_id` 'MGX7Q2' → reservation MGX7Q2."""
    n = noun(param) or "record"
    if split_words(param)[-1:] in (["code"], ["number"], ["sku"]) and len(split_words(param)) > 1:
        n = " ".join(split_words(param))
    v = value_text(value)
    if re.fullmatch(r"[\w./:@+-]+", str(value)):
        v = str(value)  # a code or number reads bare: "member 48", "order ORD-8D41E0B5"
    words = n.split()
    if len(words) > 1 and words[0] in DIRECTIONS:
        return f"{words[0]} {' '.join(words[1:])} {v}"  # "to branch 1", not "... as the to"
    if len(words) > 1 and words[0] in KEY_ROLES:
        # a key with a role: "timezone 33 as the source", not "source timezone 33"; a role
        # that is no noun on its own names the record again: "branch 13 as the pickup branch"
        return as_role(f"{' '.join(words[1:])} {v}", words[0], " ".join(words[1:]))
    return f"{n} {v}"


def _record_phrase(item: dict[str, Any]) -> str:
    """One element of a list argument as words: {"product_id": 51, "quantity": 2} → "2
    units of product 51"."""
    counts = [_count(v, split_words(k)[-1]) for k, v in item.items()
              if role(k, v) == "count"]
    keys = [key_phrase(k, v) for k, v in item.items() if role(k, v) == "key"]
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
    if words in _BOUNDS:  # a range's end (`from_`, `until`): "from December 5, 2025 at 12:30"
        return f"{words} {when}"
    return f"the {words} {when}"


# prepositions a date argument can be named by: its name is how it is said
_BOUNDS = frozenset({"from", "since", "after", "to", "until", "before", "by"})
# how an argument's phrase starts when it says where or when on its own ("at 09:45", "from
# UTC", "on November 25, 2025"): it follows the action, never "with at 09:45"
PREPOSITIONS = ("at ", "from ", "to ", "since ", "until ", "before ", "after ", "by ",
                "starting ", "ending ", "(just ", "in ", "that ", "on ", "next to ")


# an argument named as a verb and its preposition (refers_to, depends_on): said as what the
# record does
_VERB_NAMED = {"refers": "referring", "points": "pointing", "belongs": "belonging",
               "depends": "depending", "applies": "applying", "maps": "mapping",
               "links": "linking", "relates": "relating", "redirects": "redirecting"}


def _ids_phrase(param: str, value: Any) -> str | None:
    """Records a list of keys names, as their entity: Asana's task_ids=[17] is "task 17" (it
    read "for the task ids set to 17"), two are "tasks 17 and 18"."""
    parts = split_words(param)
    if len(parts) < 2 or parts[-1] not in ("ids", "gids", "uuids"):
        return None
    values = value if isinstance(value, list) else [value]
    if not values or len(values) > 3 or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in values):
        return None
    thing = " ".join(parts[:-1])
    if len(values) == 1:
        return f"{thing} {values[0]}"
    return (f"{' '.join([*parts[:-2], plural_word(parts[-2])])} "
            f"{', '.join(map(str, values[:-1]))} and {values[-1]}")


def _list_phrase(param: str, value: Any) -> str | None:
    """A few plain values as the things they are: MUI's fetchDocs(urls=['http://a']) is "the
    url 'http://a'", two are "the urls 'a' and 'b'" (it read "with urls [\"http://a\"]")."""
    if not isinstance(value, list) or not 1 <= len(value) <= 4 or not all(
            isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
        return None
    words = field_words(param).split()
    if not words:
        return None
    if len(value) == 1:
        words[-1] = singular_word(words[-1])
    said = [value_text(v) for v in value]
    listed = said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"
    return f"the {' '.join(words)} {listed}"


def arg_phrase(param: str, value: Any, schema: dict[str, Any] | None = None,
               writes: bool = False) -> str:
    """How a request states one argument, by its role (no argument name as such): a key as
    its entity, a count with its unit, a new value as what it sets."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return " and ".join(_record_phrase(v) for v in value)  # "1 unit of product 51"
    r = role(param, value, schema)
    words = field_words(param)
    if r == "key":
        return key_phrase(param, value)
    ids = _ids_phrase(param, value)
    if ids and not writes:
        return ids
    listed = _list_phrase(param, value) if not writes else None
    if listed:
        return listed
    if r == "email":
        return f"its email address to {value}" if writes else f"the email address {value}"
    if r == "count" and not writes:
        return _count(value, split_words(param)[-1])
    if r == "name" and not writes:
        return f"named {say(param, value, schema)}" if words == "name" else \
            f"the {words} {say(param, value, schema)}"
    head = words.split()[0] if words else ""
    if not writes and r not in ("key", "count") and head in FROM_ROLES | TO_ROLES and \
            len(words.split()) > 1:
        # "from America/New_York", "to Australia/Sydney": the ends of a conversion or a move
        prep = "from" if head in FROM_ROLES else "to"
        if head == "target" and words.split()[1] in ("text", "paragraph", "line"):
            # Word's target_text / target_paragraph_index: where the new content goes, beside
            # it ("insert a header next to paragraph 4"), no destination ("a header to '...'")
            prep = "next to" if words.split()[1] != "text" else "next to the text"
        if isinstance(value, int | float) and not isinstance(value, bool):
            # a number says what it counts: "to paragraph 4", not "to 4"
            what = [w for w in words.split()[1:] if w not in ("index", "number", "no")]
            return f"{prep} {' '.join(what)} {value}" if what else f"{prep} {value}"
        return f"{prep} {bare_value(param, value, schema)}"
    if not writes and param in ("max_length", "max_chars", "max_characters") and \
            isinstance(value, int):
        return f"(just the first {value} characters)"
    if not writes and param in ("max_count", "max_items", "top", "n") and isinstance(value, int):
        return f"(just the first {value})"  # git log's max_count is a page size, not a field
    if not writes and isinstance(value, str) and words.split()[-1:] == ["path"] and \
            value.startswith("/"):
        return f"in {value_text(value)}"  # "the branches in '/srv/git/x'", not "repo path set to"
    if not writes and isinstance(value, str) and words in ("contains", "not contains",
                                                            "containing", "not containing"):
        # git_branch(contains=sha): "that contain commit 554245e", not "with the not contains"
        what = f"commit {value}" if re.fullmatch(r"[0-9a-f]{7,40}", value) else value_text(value)
        return f"that {'do not ' if words.startswith('not') else ''}contain {what}"
    if not writes and param in ("start_index", "offset_chars") and isinstance(value, int):
        return f"starting at character {value}"
    if not writes and words == "time" and isinstance(value, str) and \
            re.fullmatch(r"\d{2}:\d{2}", value):
        return f"at {value}"
    several = len(words.split()) > 1
    if not writes and r == "flag" and isinstance(value, bool) and words.split()[0] in (
            "is", "has") and several:
        # is_new_release=True: "marked as new release", has_parking: "with parking", never
        # "the is new release set to yes"
        rest = " ".join(words.split()[1:])
        if words.startswith("is "):
            return f"{'' if value else 'not '}marked as {rest}"
        return f"{'with' if value else 'without'} {rest}"
    said_as = _VERB_NAMED.get(words.split()[0]) if len(words.split()) == 2 else None
    if said_as and words.split()[1] in ("to", "on", "with", "from"):
        # Excel's refers_to: "referring to '0.036'", never "the refers to set to '0.036'"
        return (f"what it {words} to " if writes else f"{said_as} {words.split()[1]} ") + \
            say(param, value, schema)
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
    if r == "flag" and isinstance(value, bool):  # "with learn turned off", not "with learn no"
        return f"{words} turned {'on' if value else 'off'}"
    return f"{words} {say(param, value, schema)}"


# the people whose name a record carries for what they did to it (author_name, owner_name)
_MAKERS = frozenset(PERSON_ROLES | {"committer", "uploader", "sender", "signer"})


# who made a record, said as "by": "the document by Stephen Harrington"
_AUTHORS = frozenset({"author", "creator", "reporter", "requester", "sender", "committer",
                      "uploader", "signer", "organizer"})


# `<x>_name` columns that name something other than the record (a change log's field)
_NAMES_OF_OTHERS = frozenset({"field", "table", "column", "attribute", "property", "parameter",
                              "key", "file", "event", "setting"})


def by_key(field: str, value: Any, kind: str | None) -> str | None:
    """A key named for who did something (`changed_by_id` of member 15) as the act: "changed
    by member 15", never "of changed by 15"; None for other fields. `kind`: the record the
    key names (None: said bare)."""
    words = noun(field).split()
    if len(words) < 2 or words[-1] != "by" or role(field, value) != "key":
        return None
    return f"{noun(field)} {kind} {value_text(value).strip(chr(39))}" if kind else \
        f"{noun(field)} {value_text(value)}"


# words before `name` that still say the record's own name ("display_name")
_OWN_NAME_WORDS = frozenset({"display", "full", "first", "last", "given", "short", "long",
                             "nick", "legal", "friendly", "common", "human", "official",
                             "canonical", "public"})


def which(field: str, value: Any, kind: str | None = None, own: str | None = None) -> str:
    """The words that single out a list element: "whose fare class is business". `kind`: the
    record a key names, where the caller knows it (`by_key`); `own`: the kind of record
    singled out, where the caller knows it (a run's `preset_name` names its preset)."""
    acted = by_key(field, value, kind)
    if acted is not None:
        return acted
    r = role(field, value)
    words = split_words(field)
    if len(words) > 1 and words[-1] == "by" and r not in ("key", "name"):
        return f"{field_words(field)} {say(field, value)}"  # "cancelled by 'clinic'"
    if isinstance(value, int) and not isinstance(value, bool) and r != "key" and words and \
            words[-1].endswith("s") and words[-1] not in ("status", "address", "class"):
        return f"with {value} {' '.join(words[:-1] + [singular_word(words[-1])] if value == 1 else words)}"
    if r == "name" and (len(words) > 1 and words[0] in _MAKERS or
                        len(words) == 1 and words[0] in _AUTHORS):
        return f"by {say(field, value)}"  # "the commits by Jeffrey Luna", never "named" him
    # a person the record names is not its name: "the document named Stephen Harrington"
    # had picked a document by its author
    own_name = not (len(words) > 1 and words[0] in _NAMES_OF_OTHERS) and \
        not (len(words) == 1 and words[0] in _MAKERS)
    if own is not None and len(words) > 1 and words[-1] == "name" and \
            not set(words[:-1]) & (set(split_words(own)) | _OWN_NAME_WORDS):
        # "the run named orders-service" had picked the run whose preset was so named, and
        # its answer was the run's own name, another one
        own_name = False
    if r == "name" and own_name or field in ("name", "title"):
        # the record's own name; a `field_name` of a change log names something else
        return f"named {say(field, value)}" if field != "title" else \
            f"titled {say(field, value)}"
    if r == "key" and field != "id" and len(split_words(field)) > 1:
        if noun(field).split()[-1] == split_words(field)[-1]:  # flight_number names its kind
            return f"whose {noun(field)} is {value_text(value).strip(chr(39))}"
        named = f"{noun(field).split()[-1]} {value_text(value).strip(chr(39))}"
        if len(noun(field).split()) == 1:  # "the hold for title 10", not "whose title is title 10"
            return f"for {named}"
        # "whose pickup branch is branch 4", not "whose pickup branch id is 4"
        return f"whose {noun(field)} is {named}"
    said = field_words(field)
    when = date_text(value) if isinstance(value, str) else None
    if when and re.fullmatch(r"\w+(?:ed|s) at", said):
        return date_phrase(said, when)  # "updated on May 2", not "whose updated at is May 2"
    if when and re.fullmatch(r"\w+ on", said):
        return f"{said} {when}"  # "joined on May 2", "due on May 2"
    if when and re.fullmatch(r"\w{3,}ed", said):
        return f"{said} on {when}"  # "modified on May 2", not "whose modified is May 2"
    return f"whose {said} is {say(field, value)}"


__all__ = ["KEY_ROLES", "PREPOSITIONS", "arg_phrase", "as_role", "bare_value", "by_key", "date_phrase", "date_text", "field_words",
           "key_phrase", "noun", "role", "say", "value_text", "which"]
