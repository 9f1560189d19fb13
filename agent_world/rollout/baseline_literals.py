"""What the baseline agent reads in a request: its content words, and the values it states
(quoted text, e-mails, dates written as people write them and relative to the request's own
date, codes, numbers, money), each with the words just before it. See `baseline_agent`."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from dateutil import parser as date_parser
from dateutil.relativedelta import FR, MO, SA, SU, TH, TU, WE, relativedelta

_WORD = re.compile(r"[a-z][a-z0-9]+")
_STOP = frozenset("""a an the of for to in on at by with from and or is are was be been it its
this that these those my me i you your we our their his her them they what which who whose
how please can could would should will do does did has have had not no any all each every
one two as if then than so also into out up about just tell give let reply need want
there here get find look show let want use using via per""".split())
_LITERAL = re.compile(
    r"'([^']{1,80})'|\"([^\"]{1,80})\"|([\w.+-]+@[\w-]+(?:\.[\w-]+)+)|(\d{4}-\d{2}-\d{2}(?:T[\d:]+)?)"
    r"|\b([A-Z][A-Z0-9]*[-_]?\d[A-Z0-9-]*|[A-Z]{2,}\d*)\b"
    r"|(-?\$?(?<![\d,.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|-?\$?\d+(?:\.\d+)?)")

def words(text: str) -> list[str]:
    """Content words of a text (lower case, identifiers split, stop words dropped)."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(text)).replace("_", " ").lower()
    return [_stem(w) for w in _WORD.findall(text) if w not in _STOP]


def _stem(w: str) -> str:
    for suffix in ("ies", "es", "s"):
        if w.endswith(suffix) and len(w) > len(suffix) + 3:
            return w[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return w


# dates as people write them: "March 3, 2026", "Mar 3rd 2026", "3 March 2026", with "at 14:30"
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_CLOCK = r"(?:,?\s+(?:at\s+)?\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?)?"
_NATURAL_DATE = re.compile(rf"\b(?:{_MONTH}\s+{_DAY},?\s+\d{{4}}|{_DAY}\s+(?:of\s+)?{_MONTH},?"
                           rf"\s+\d{{4}}){_CLOCK}", re.I)
_WEEKDAYS = {"monday": MO, "tuesday": TU, "wednesday": WE, "thursday": TH, "friday": FR,
             "saturday": SA, "sunday": SU}
_RELATIVE = re.compile(
    r"\b(?:(next|this|coming|last)\s+(monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday)|(today|tomorrow|yesterday)|in\s+(\d+|a|one|two|three)\s+(day|week)s?|"
    r"(\d+|a|one|two|three)\s+(day|week)s?\s+(from\s+(?:today|now)|ago))\b", re.I)
# the date a request says it is written on: what relative dates count from
_ANCHOR = re.compile(r"\b(?:today is|today's date is|it is|it's|as of|the date is|"
                     r"current date is)\s*$", re.I)
_SMALL = {"a": 1, "one": 1, "two": 2, "three": 3}


def _natural_date(text: str) -> str | None:
    """"March 3, 2026" → 2026-03-03; with a time → 2026-03-03T14:30:00 (None: not a date)."""
    clean = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text, flags=re.I).replace(" at ", " ")
    try:
        when = date_parser.parse(clean, default=datetime(2000, 1, 1))
    except (ValueError, OverflowError):
        return None
    return when.isoformat() if ":" in text else when.date().isoformat()


def _relative_date(m: re.Match[str], anchor: date) -> str:
    """A relative date counted from the request's own date: "next Friday" is the first Friday
    after it, "this Friday" the first on or after it, "last Friday" the one before it."""
    which, weekday, word, n_in, unit_in, n_ago, unit_ago, direction = m.groups()
    if weekday:
        wd = _WEEKDAYS[weekday.lower()]
        w = which.lower()
        if w == "last":
            return (anchor + relativedelta(days=-1, weekday=wd(-1))).isoformat()
        start = anchor + timedelta(days=1) if w == "next" else anchor
        return (start + relativedelta(weekday=wd(+1))).isoformat()
    if word:
        return (anchor + timedelta(days={"today": 0, "tomorrow": 1,
                                         "yesterday": -1}[word.lower()])).isoformat()
    n, unit = (n_in, unit_in) if n_in else (n_ago, unit_ago)
    days = (int(n) if n.isdigit() else _SMALL[n.lower()]) * (7 if unit.lower() == "week" else 1)
    if direction and direction.lower() == "ago":
        days = -days
    return (anchor + timedelta(days=days)).isoformat()


def _natural_values(text: str) -> list[tuple[int, int, dict[str, Any]]]:
    """(start, end, literal) for the dates a request writes in words, relative ones included
    when it states its own date."""
    out = []
    anchor: date | None = None
    for m in _NATURAL_DATE.finditer(text):
        iso = _natural_date(m.group(0))
        if iso is None:
            continue
        said = _ANCHOR.search(text[max(0, m.start() - 25): m.start()])
        if said and anchor is None:
            anchor = date.fromisoformat(iso[:10])
        # "today is March 1, 2026": the phrase is the anchor, its "today" no other date
        start = m.start() - 25 + said.start() if said and m.start() >= 25 else \
            (said.start() if said else m.start())
        out.append((start, m.end(), {"value": iso, "kind": "date", "anchor": bool(said)}))
    taken = [(a, b) for a, b, _ in out]
    for m in _RELATIVE.finditer(text):
        if anchor is None or any(a <= m.start() < b for a, b in taken):
            continue
        out.append((m.start(), m.end(), {"value": _relative_date(m, anchor), "kind": "date",
                                         "anchor": False}))
    return out


def literals(text: str) -> list[dict[str, Any]]:
    """Values the instruction states, each with its kind and the words just before it."""
    found = _natural_values(text)
    masked = list(text)
    for a, b, _ in found:  # a date in words is one value, not a day and a year
        masked[a:b] = " " * (b - a)
    found += [(m.start(), m.end(), lit) for m in _LITERAL.finditer("".join(masked))
              if (lit := _literal(m)) is not None]
    out = []
    for start, end, lit in sorted(found, key=lambda f: f[0]):
        lit["context"] = words(text[max(0, start - 40): start])[-3:]
        role = _ROLE_AFTER.match(text, end)  # "timezone 33 as the source"
        if role:
            lit["context"].append(_stem(role.group(1).lower()))
        out.append(lit)
    return out


_ROLE_AFTER = re.compile(r"\s+as the ([A-Za-z]+)")


def _literal(m: re.Match[str]) -> dict[str, Any] | None:
    quoted, email, day, code, number = (m.group(1) or m.group(2)), m.group(3), \
        m.group(4), m.group(5), m.group(6)
    if quoted:
        return {"value": quoted, "kind": "text"}
    if email:
        return {"value": email, "kind": "email"}
    if day:
        return {"value": day, "kind": "date"}
    if code:
        return {"value": code, "kind": "code"}
    if number:
        raw = number.replace("$", "").replace(",", "")
        value: Any = float(raw) if "." in raw else int(raw)
        return {"value": value, "kind": "number", "money": "$" in number}
    return None


def with_values(instruction: str) -> str:
    """The instruction with the ISO form of each date it writes in words appended, so a
    record's stored date matches the request's "March 3, 2026"."""
    extra = [lit["value"] for _, _, lit in _natural_values(instruction)]
    return instruction + (" " + " ".join(extra) if extra else "")


__all__ = ["literals", "with_values", "words"]
