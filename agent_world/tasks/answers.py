"""How an answer is read and compared with a reference: the typed values a short answer
states (`answer_values`, whose source generated verification scripts carry), the values a
request states, and the rule that an answer IS the reference (`answer_matches`). The check
(`agent_world.tasks.check`) applies it; see there for the rule in full."""

from __future__ import annotations

import inspect
import json
import math
import re
from typing import Any

MAX_ANSWER_CHARS = 200  # a short sentence at most: a longer text states nothing


# ---- answers ---------------------------------------------------------------------------------
# answer_values imports inside: verification scripts carry its source verbatim (and task ids
# hash the scripts), so it must bring its own imports and keep its text
def answer_values(answer, limit):
    """The values a short answer states, by kind: "datetime", "date", "time", "email", "code"
    (a token with letters and digits: NW684021611, 12A), "number", "bool" (yes/true, no/false),
    each list distinct and in order, and "rest": the text left over. A text over `limit`
    characters states nothing. Digits inside a date, a time, an e-mail or a code are not
    numbers; "1,234" is one number, "1,2,3" three.

    Self-contained on purpose: generated verification scripts (which run isolated, without
    this package) carry a copy of its source, so a script and the check read answers alike.
    """
    import re

    if answer is None:
        return {}
    if isinstance(answer, bool):
        return {"bool": [answer], "rest": ""}
    if isinstance(answer, (int, float)):
        return {"number": [float(answer)], "rest": ""}
    text = " ".join(str(answer).split())
    if not text or len(text) > limit:
        return {}
    out = {k: [] for k in ("datetime", "date", "time", "email", "code", "number", "bool")}

    def add(kind, value):
        if value not in out[kind]:
            out[kind].append(value)

    def cut(pattern, kind, canonical):
        def take(m):
            add(kind, canonical(m))
            return " "
        return re.sub(pattern, take, text, flags=re.IGNORECASE)

    text = cut(r"(?<![\w-])(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?(?:\.\d+)?"
               r"(?:Z|[+-]\d{2}:?\d{2})?(?![\w-])", "datetime",
               lambda m: f"{m[1]}T{m[2]}{m[3] or ':00'}")
    text = cut(r"(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])", "date", lambda m: m[0])
    text = cut(r"(?<![\w:])\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\b\.?)?(?![\w:])", "time",
               lambda m: m[0].lower())
    text = cut(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", "email", lambda m: m[0].lower())
    text = cut(r"(?<![\w-])(?=[\w-]*[^\W\d_])(?=[\w-]*\d)[^\W_](?:[\w-]*[^\W_])?(?![\w-])",
               "code", lambda m: m[0].lower())

    def number(m):
        body = m[2].rstrip(".,")
        sign = -1.0 if m[1] else 1.0
        if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", body):
            add("number", sign * float(body.replace(",", "")))
        else:  # "1,2,3", "1.2.3": several numbers
            for part in re.split(r"[.,]+", body):
                if part:
                    add("number", float(part))
        return " "

    text = re.sub(r"(?<![\w.,])(-?)(\d[\d,.]*)(?![^\W\d_])", number, text)
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
             "ten", "eleven", "twelve"]
    text = cut(r"\b(?:" + "|".join(words) + r")\b", "number",
               lambda m: float(words.index(m[0].lower())))
    text = cut(r"\b(?:yes|true|no|false)\b", "bool", lambda m: m[0].lower() in ("yes", "true"))
    out["rest"] = " ".join(text.split())
    return out


def answer_rule_source() -> str:
    """Python source that defines `answer_values` and `MAX_ANSWER_CHARS`: what a generated
    verification script starts with, so it reads an answer as the check does."""
    return f"MAX_ANSWER_CHARS = {MAX_ANSWER_CHARS}\n\n\n{inspect.getsource(answer_values)}\n\n"


_KINDS = ("datetime", "date", "time", "email", "code", "number", "bool")
# a typed answer split into this many parts by ", ", ";" or new lines lists candidates (a
# date as people write it, "March 3, 2026", is two); "8,300" has no space and is one number
_LISTED = re.compile(r",\s+|;\s*|\n+")
LISTED_PARTS = 4
_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
# the value a one-sentence answer states: what follows its last copula or colon
_STATES = re.compile(r"\b(?:is|are|was|were|equals)\b|[:=]", re.IGNORECASE)
_FILLER = re.compile(r"^(?:(?:currently|now|still)\s+)+")


def _text(value: Any) -> str:
    """Canonical free text: lower case, underscores as spaces, single spaces, no surrounding
    punctuation or markup, no leading article."""
    text = " ".join(str(value).lower().replace("_", " ").split())
    text = text.strip(" .,;:!?\"'`*()[]")
    return _ARTICLE.sub("", text)


def _canonical(value: Any) -> tuple[str, Any]:
    """A reference value's kind and canonical value: ("number", 8300.0), ("date",
    "2026-03-12"), ("code", "nw684021611"), ("bool", False), ("text", "confirmed") ... A string
    is of a typed kind only when it is exactly one value of that kind."""
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, int | float):
        return "number", float(value)
    if isinstance(value, str):
        found = answer_values(value, max(len(value), 1))
        typed = [(k, v) for k in _KINDS for v in found.get(k, [])]
        if len(typed) == 1 and not found["rest"].strip(" .,;:!?\"'`*()[]$%"):
            return typed[0]
        return "text", _text(value)
    return "json", json.dumps(value, sort_keys=True, default=str).lower()


def _same(kind: str, a: Any, b: Any) -> bool:
    if kind == "number":
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def _stated_text(answer: str, value: str = "") -> str | None:
    """The value a one-sentence answer states after its last copula or colon ("The status is
    confirmed." -> "confirmed"); None for several sentences or no such word. A full stop of
    `value` itself ends no sentence ("The address is 12 Elm St. 4, Troy.")."""
    text = " ".join(answer.split()).rstrip(" .!")
    own = re.sub(re.escape(" ".join(value.split())), "", text, flags=re.I) if value else text
    if len(text) > MAX_ANSWER_CHARS or re.search(r"[.!?;]\s", own):
        return None
    marks = list(_STATES.finditer(text))
    if not marks:
        return None
    return _FILLER.sub("", _text(text[marks[-1].end():]))


def _scalar_matches(answer: Any, reference: Any, stated: dict[str, list[Any]] | None = None
                    ) -> bool:
    kind, want = _canonical(reference)
    if kind == "json":
        if isinstance(answer, str):
            try:
                answer = json.loads(answer)
            except ValueError:
                return False
        return _canonical(answer) == (kind, want)
    if kind == "text":
        if not isinstance(answer, str):
            return _canonical(answer) == (kind, want)
        return _text(answer) == want or _stated_text(answer, str(reference)) == want
    if isinstance(answer, str) and len(_LISTED.split(answer.strip())) >= LISTED_PARTS:
        return False  # "1, FP-9372, Widget, electronics, USD": a record's values, not an answer
    got = answer_values(answer, MAX_ANSWER_CHARS).get(kind, [])
    got = _beyond_request(kind, got, [want], stated)
    return len(got) == 1 and _same(kind, got[0], want)


def _beyond_request(kind: str, got: list[Any], wants: list[Any],
                    stated: dict[str, list[Any]] | None) -> list[Any]:
    """The values an answer states less those the request stated (`stated`), unless one is
    an answer wanted: a sentence may repeat the request without offering a candidate."""
    given = (stated or {}).get(kind, [])
    return [g for g in got if any(_same(kind, g, w) for w in wants)
            or not any(_same(kind, g, v) for v in given)]


def stated_values(request: str | None) -> dict[str, list[Any]]:
    """The typed values a request states (an id, a date, a count the user gave), by kind as
    `answer_values` reads them: an answer may repeat them without offering a second answer."""
    return answer_values(request, 100_000) if request else {}


def answer_matches(answer: Any, reference: Any, stated: dict[str, list[Any]] | None = None
                   ) -> bool:
    """Whether an attempt's answer IS the reference answer: one typed value compared exactly
    after normalisation (numbers numerically, thousands separators and trailing zeros aside;
    dates, times, codes, e-mails and free text without case, spacing or surrounding
    punctuation). A short sentence may carry a typed value when it states exactly one value of
    the reference's kind ("You have 8,300 miles." for 8300; "12 and 13" is a list of candidates
    and fails, and so is a record's values listed, "1, FP-9372, Widget, USD", for FP-9372); free text must be the whole answer or what a one-sentence answer states after
    its copula or colon ("The status is confirmed."), so "I could not find it" does not answer
    "I". A list reference needs exactly its values, in any order. `stated`: the request's own
    values (`stated_values`), which a sentence may repeat beside the answer ("There is 1
    clinician at location 2." for 1, asked about location 2): they are not candidates unless
    they are the answer."""
    if answer is None or (isinstance(answer, str) and not answer.strip()):
        return False
    if not isinstance(reference, list):
        return _scalar_matches(answer, reference, stated)
    wants = [_canonical(r) for r in reference]
    if isinstance(answer, list):
        return len(answer) == len(reference) and all(
            any(_scalar_matches(a, r) for a in answer) for r in reference) and all(
            any(_scalar_matches(a, r) for r in reference) for a in answer)
    kinds = {k for k, _ in wants}
    if len(kinds) == 1 and kinds <= set(_KINDS):
        (kind,) = kinds
        got = answer_values(answer, MAX_ANSWER_CHARS).get(kind, [])
        got = _beyond_request(kind, got, [w for _, w in wants], stated)
        return len(got) == len({json.dumps(w) for _, w in wants}) and all(
            any(_same(kind, g, w) for _, w in wants) for g in got) and all(
            any(_same(kind, g, w) for g in got) for _, w in wants)
    if not isinstance(answer, str) or len(answer) > MAX_ANSWER_CHARS:
        return False
    parts = [p for p in re.split(r"[,;\n]|\band\b", answer) if p.strip()]
    return sorted(_text(p) for p in parts) == sorted(_text(r) for r in reference)


def normalise(value: Any) -> str:
    """Canonical text of a scalar: lower case, single spaces, no surrounding punctuation;
    numbers without trailing zeros or thousands separators; booleans as yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return _num_text(float(value))
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, default=str).lower()
    text = " ".join(str(value).lower().split()).strip(" .,;:!?\"'`")
    if text in ("true", "yes"):
        return "yes"
    if text in ("false", "no"):
        return "no"
    try:
        return _num_text(float(text.replace(",", "").lstrip("$")))
    except ValueError:
        return text


def _num_text(x: float) -> str:
    if math.isfinite(x) and x == int(x):
        return str(int(x))
    return f"{x:.6f}".rstrip("0").rstrip(".")


def states_one_value(answer: Any, reference: Any, stated: dict[str, list[Any]] | None = None
                     ) -> tuple[str, bool]:
    """(the reference's kind, whether the answer states exactly one value of it besides the
    request's own values `stated`): what a programmatic task's check asks of an answer beside
    its script. Free text and JSON need no count."""
    kind, want = _canonical(reference)
    said = _beyond_request(kind, answer_values(answer, MAX_ANSWER_CHARS).get(kind, []), [want],
                           stated)
    return kind, kind not in _KINDS or len(said) == 1


def same_value(value: Any, reference: Any) -> bool:
    """Whether one observed scalar is the reference value (its kind and canonical value)."""
    kind, want = _canonical(reference)
    got_kind, got = _canonical(value)
    return got_kind == kind and _same(kind, got, want)


__all__ = ["MAX_ANSWER_CHARS", "answer_matches", "answer_rule_source", "answer_values",
           "normalise", "same_value", "stated_values", "states_one_value"]
