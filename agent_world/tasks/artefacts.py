"""The artefact suite: template slips a person would not write, checked on every emitted task.

`artefacts(text, spec, chain)` lists what is wrong with a request (empty: nothing found). Each
check is a regular expression or a small grammar rule; the ones that need the environment
(argument names leaking into the text) take its spec and the task's gold chain:

- `colon-of`: ": of", ": with" (an argument list glued to a clause);
- `statistic-of`: "statistic of", "statistics of" (a tool description read as a verb phrase);
- `what-is-its`: "What is its <field>?" with no record named (which "it"?);
- `argument-name`: an argument's name used as a word right before its value ("with total
  baggages 2", "of payment pm_1"), for the arguments of the task's own tools;
- `doubled-word`: "total total", "the the";
- `a-an`: "a" before a vowel sound ("a appointment");
- `machine-timestamp`: an ISO timestamp with a "T" ("2026-01-15T09:01:00");
- `paging`: "the first 2 only" (a page size is not something a person asks for);
- `raw-identifier`: snake_case or camelCase words outside quotes and code spans
  ("no_longer_needed");
- `lower-sentence`: a sentence that starts in lower case;
- `punctuation`: doubled or clashing punctuation (",.", "?.", " ,", "..");
- `bare-flag`: a yes/no glued to a field name ("with accepting new patients yes");
- `same-ends`: a call of the chain that goes from a value to itself ("convert the time from
  UTC to UTC", a transfer to the account it comes from, a rename to the same name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from agent_world.mining.offline.naming import A_BEFORE_VOWEL_SOUND
from agent_world.tasks.words import FROM_ROLES, TO_ROLES

_CHECKS: list[tuple[str, re.Pattern[str]]] = [
    ("colon-of", re.compile(r":\s+(of|with)\b", re.I)),
    ("statistic-of", re.compile(r"\bstatistics? of\b", re.I)),
    ("what-is-its", re.compile(r"\bWhat is its [\w ]{1,40}\?")),
    ("doubled-word", re.compile(r"\b([A-Za-z]{2,})\s+\1\b", re.I)),
    ("a-an", A_BEFORE_VOWEL_SOUND),
    ("machine-timestamp", re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")),
    ("paging", re.compile(r"\bthe first \d+ only\b|\bjust the first \d+\b", re.I)),
    ("lower-sentence", re.compile(r"(?:^|[.!?]\s+)[a-z]")),
    ("punctuation", re.compile(r",\s*[.?!]|[?!]\s*\.|\s[,.?!](?!\d)|\.\.(?!\.)|,,|::")),
    ("bare-flag", re.compile(r"\bwith [a-z]+(?: [a-z]+){0,3} (?:yes|no)\b", re.I)),
]
# quoted values, code spans (a table named as code: "the `order_items` table"), emails, URLs
# and paths say an identifier as one
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|\S+@\S+|https?://\S+|/\S+")
_IDENTIFIER = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b|\b[a-z]+[A-Z][a-zA-Z]*\b")


def _words(name: str) -> str:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return " ".join(w for w in re.split(r"[_\W]+", name.lower()) if w)


# a pair of ends one call takes: source_timezone / target_timezone, from / to, old / new name
_OTHER_END = {**{w: TO_ROLES for w in FROM_ROLES}, "old": frozenset({"new"}),
              # a span whose two ends are one instant ("since 23:54:17, until 23:54:17")
              "since": frozenset({"until"}), "after": frozenset({"before"}),
              "start": frozenset({"end"}), "min": frozenset({"max"})}


def same_ends(arguments: dict[str, Any]) -> bool:
    """Whether a call goes from a value to the same value (its two ends given alike)."""
    named = {tuple(_words(k).split()): v for k, v in arguments.items()
             if v not in (None, "") and not isinstance(v, (dict, list, bool))}
    for words, value in named.items():
        # a move to the place it is in (Plane's transfer_cycle_issues(cycle_id=42,
        # new_cycle_id=42)), a rename to the name it has
        if words[:1] == ("new",) and words[1:] in named and \
                str(named[words[1:]]).strip().lower() == str(value).strip().lower():
            return True
        for i, w in enumerate(words):
            for other in _OTHER_END.get(w, ()):
                twin = (*words[:i], other, *words[i + 1:])
                if twin in named and str(named[twin]).strip().lower() == \
                        str(value).strip().lower() and not _DAY.fullmatch(str(value).strip()):
                    return True
    return False


# a day as both ends of a span is that one day (an all-day event, a report "from March 3 to
# March 3"), no slip; an instant or a place as both ends is one
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def argument_names(spec: Any, tools: Iterable[str]) -> set[str]:
    """Argument names of these tools as words, the ones a sentence would not use as they are
    (several words, or an id): "total baggages", "payment method id"."""
    out = set()
    for tool in tools:
        try:
            props = spec.tool(tool).parameters.get("properties", {})
        except Exception:  # a tool the spec no longer has: nothing to look for
            continue
        for p in props:
            words = _words(p)
            if len(words.split()) >= 2:
                out.add(words)  # "payment method id pm_1" is a leak; "payment method pm_1" not
    return out


def artefacts(text: str, spec: Any = None, chain: Iterable[Any] = ()) -> list[str]:
    """What in `text` reads like a template, by check name (see the module docstring)."""
    found = [name for name, rx in _CHECKS if rx.search(text)]
    bare = _QUOTED.sub(" ", text)
    if _IDENTIFIER.search(bare):
        found.append("raw-identifier")
    if any(same_ends(getattr(c, "arguments", None) or {}) for c in chain):
        found.append("same-ends")
    if spec is not None:
        names = argument_names(spec, {getattr(c, "tool", c) for c in chain})
        for words in names:
            # the name right before a value: a digit, a quote, a code or a capitalised word
            # the name in any case; the value as it is: "[A-Z]{2,}" under re.I would take
            # any word ("utc offset is '-06:00'" is English, "utc offset '-06:00'" is not)
            if re.search(rf"\b(?i:{re.escape(words)})\s+(?:[\d'\"$]|[A-Z]{{2,}}|[a-z]+_)",
                         text):
                found.append("argument-name")
                break
    return found


def artefact_free(text: str, spec: Any = None, chain: Iterable[Any] = ()) -> bool:
    return not artefacts(text, spec, chain)


CHECKS = tuple([name for name, _ in _CHECKS] + ["raw-identifier", "argument-name", "same-ends"])

__all__ = ["CHECKS", "argument_names", "artefact_free", "artefacts", "same_ends"]
