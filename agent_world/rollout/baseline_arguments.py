"""How the baseline agent fills a tool's arguments: an observation field named like the
argument (from the list element that best matches the request), else a request literal whose
kind and context fit; optional arguments only from the request. See `baseline_agent`."""

from __future__ import annotations

import re
from typing import Any

from agent_world.rollout.baseline_literals import with_values, words


def flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(field name, scalar) pairs of an observation, nested dicts included."""
    out: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, dict):
                out += flatten(v, k)
            elif not isinstance(v, list):
                out.append((k, v))
    return out


def _pick_item(items: list[Any], instruction: str) -> Any:
    """The list element that best matches the instruction's literals and words."""
    text = with_values(instruction).lower()
    want = set(words(instruction))

    def score(item: Any) -> float:
        s = 0.0
        for _, v in flatten(item):
            sv = str(v).lower()
            if isinstance(v, str) and len(sv) >= 3 and sv in text:
                s += 2 + len(sv) / 20
            elif isinstance(v, int | float) and not isinstance(v, bool) and \
                    re.search(rf"(?<![\d.]){re.escape(str(v))}(?![\d.])", text):
                s += 1
            elif isinstance(v, str) and set(words(sv)) & want:
                s += 0.2
        return s

    dicts = [i for i in items if isinstance(i, dict)]
    if not dicts:
        return None
    return max(dicts, key=score)


def observed_records(history: list[dict[str, Any]], instruction: str) -> list[dict[str, Any]]:
    """Each successful observation as one dict (a list: its best-matching element)."""
    out = []
    for h in history:
        if not h["ok"]:
            continue
        v = h["value"]
        if isinstance(v, list):
            v = _pick_item(v, instruction)
        if isinstance(v, dict):
            out.append(v)
    return out


def fill_arguments(tool: dict[str, Any], lits: list[dict[str, Any]], history: list[dict[str, Any]],
          latest: dict[str, Any] | None, instruction: str) -> tuple[dict[str, Any] | None, int]:
    params = tool.get("parameters", {}) or {}
    props = params.get("properties", {}) or {}
    required = set(params.get("required", []) or [])
    observed = observed_records(history, instruction)
    latest_obs = observed_records([latest], instruction) if latest else []
    args: dict[str, Any] = {}
    from_latest = 0
    for pname, schema in props.items():
        value, source = _value_for(pname, schema, lits, observed, latest_obs,
                                   optional=pname not in required, instruction=instruction)
        if value is None:
            if pname in required:
                return None, 0
            continue
        args[pname] = value
        from_latest += source == "latest"
    return args, from_latest


def _types(schema: dict[str, Any]) -> set[str]:
    t = schema.get("type", "string")
    return set(t) if isinstance(t, list) else {t}


def _value_for(pname: str, schema: dict[str, Any], lits: list[dict[str, Any]],
               observed: list[dict[str, Any]], latest: list[dict[str, Any]], optional: bool,
               instruction: str) -> tuple[Any, str]:
    types = _types(schema)
    pwords = set(words(pname))
    if "enum" in schema:
        text = instruction.lower()
        hits = [e for e in schema["enum"] if isinstance(e, str)
                and re.search(rf"(?<![a-z0-9]){re.escape(e.lower().replace('_', ' '))}(?![a-z])",
                              text.replace("_", " "))]
        if hits:
            # "status 'active'" names the argument right before its value: that one first
            def named(e: str) -> int:
                at = text.replace("_", " ").find(e.lower().replace("_", " "))
                return len(set(words(text[max(0, at - 30): at])[-3:]) & pwords)
            return max(hits, key=lambda e: (named(e), len(e))), "instruction"
        return None, ""
    if "array" in types or "object" in types:
        return None, ""  # structured arguments come only from a more capable agent
    # observation fields named like the argument (ids flow along a chain)
    if not optional:
        for source, pool in (("latest", latest), ("earlier", list(reversed(observed)))):
            for obs in pool:
                fields = dict(flatten(obs))
                if pname in fields and fields[pname] is not None:
                    return _coerce(fields[pname], types), source
    # instruction literals whose kind and context fit
    best, best_score = None, 0.0
    for lit in lits:
        score = _fit(pname, pwords, types, lit)
        if score > best_score:
            best, best_score = lit, score
    if best is not None and best_score >= (1.5 if optional else 0.5):
        return _coerce(best["value"], types), "instruction"
    return None, ""


_DATE_WORDS = frozenset({"date", "day", "on", "from", "until", "since", "start", "end", "due",
                         "time", "deadline", "expire", "expiry", "birth", "dob", "when",
                         "departure", "arrival", "begin", "schedule", "scheduled"})
_MONEY_WORDS = frozenset({"price", "total", "amount", "fee", "cost", "balance", "refund",
                          "charge", "paid", "fare", "payment", "deposit", "fine", "credit",
                          "budget", "limit", "salary", "value"})


def _fit(pname: str, pwords: set[str], types: set[str], lit: dict[str, Any]) -> float:
    kind = lit["kind"]
    context = set(lit["context"])
    score = 1.0 * len(context & pwords)
    if lit["context"] and lit["context"][-1] in pwords:
        score += 0.5  # "holds of member 48", "reason 'late'": the word right before names it
    if kind == "email":
        return score + (2.0 if "email" in pwords else -5.0)
    if kind == "date":
        score -= 0.3 if lit.get("anchor") else 0.0  # the request's own date is a reference
        return score + (1.5 if pwords & _DATE_WORDS else -1.0)
    if kind == "number":
        if not types & {"integer", "number"}:
            return score - 0.5 if "string" not in types else score - 1.0
        return score + 0.3 + (0.5 if lit.get("money") and pwords & _MONEY_WORDS else 0.0)
    if kind == "code":
        if "string" not in types:
            return -1.0
        return score + (0.6 if pwords & {"id", "code", "number", "sku", "iata"} else 0.0)
    if "string" not in types:
        return -1.0
    return score + 0.2


def _coerce(value: Any, types: set[str]) -> Any:
    if "integer" in types and not isinstance(value, bool):
        try:
            if float(value) == int(float(value)):
                return int(float(value))
        except (TypeError, ValueError):
            pass
    if "number" in types and not isinstance(value, bool):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    if "string" in types and not isinstance(value, str):
        return str(value)
    return value


__all__ = ["fill_arguments", "flatten", "observed_records"]
