"""How the baseline agent answers: the field of the latest observations whose name best matches
the question's words; "how many" counts the matching list items, "total" sums and
"highest/lowest" picks by a numeric field. See `baseline_agent`."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from agent_world.rollout.baseline_arguments import flatten, observed_records
from agent_world.rollout.baseline_literals import with_values, words


def answer_text(instruction: str, history: list[dict[str, Any]], rng: random.Random) -> str:
    ok = [h for h in history if h["ok"]]
    if not ok:
        return "I could not find the information needed."
    text = instruction.lower()
    question = _question_part(instruction)
    qwords = set(words(question))
    last = ok[-1]["value"]
    lists = [h["value"] for h in reversed(ok) if isinstance(h["value"], list)]
    if lists and re.search(r"\bhow many\b|\bnumber of\b|\bcount\b", text):
        items = [i for i in lists[0] if isinstance(i, dict)]
        selected = filter_items(items, instruction)
        return str(len(selected))
    agg = re.search(r"\b(total|sum|combined|highest|largest|most|maximum|lowest|smallest|"
                    r"least|minimum|cheapest|average)\b", question)
    if lists and agg:
        items = filter_items([i for i in lists[0] if isinstance(i, dict)], instruction)
        field = _best_field(items[0] if items else {}, qwords, numeric=True)
        if field and items:
            vals = [(float(i[field]), i) for i in items
                    if isinstance(i.get(field), int | float) and not isinstance(i[field], bool)]
            if vals:
                word = agg.group(1)
                if word in ("total", "sum", "combined"):
                    return _fmt(sum(v for v, _ in vals))
                if word == "average":
                    return _fmt(sum(v for v, _ in vals) / len(vals))
                pick = max if word in ("highest", "largest", "most", "maximum") else min
                v, item = pick(vals, key=lambda x: x[0])
                other = _best_field(item, qwords - set(words(field)), numeric=False,
                                    exclude={field})
                return f"{other and item.get(other) or ''} {_fmt(v)}".strip()
    candidates = observed_records(list(reversed(ok)), instruction)
    numeric_q = re.search(r"\bhow (many|much)\b", text) is not None
    best_value, best_score = None, 0.0
    for depth, obs in enumerate(candidates):
        for field, value in flatten(obs):
            fw = set(words(field))
            score = len(fw & qwords) / (1 + 0.5 * len(fw - qwords)) - 0.15 * depth
            if numeric_q and isinstance(value, int | float) and not isinstance(value, bool):
                score += 0.3
            if score > best_score + 1e-9 or (abs(score - best_score) < 1e-9 and rng.random() < .5):
                best_value, best_score = value, score
    if best_value is None or best_score <= 0:
        return json.dumps(last, default=str)[:300]
    if isinstance(best_value, bool):
        return "yes" if best_value else "no"
    return str(best_value)


def _question_part(instruction: str) -> str:
    m = re.search(r"(what|which|tell me|let me know|reply with|report|how|give me|"
                  r"find out|i need to know)\b.*", instruction, flags=re.I | re.S)
    return m.group(0) if m else instruction


def filter_items(items: list[dict[str, Any]], instruction: str) -> list[dict[str, Any]]:
    """Items whose categorical values the instruction mentions (all items if none does)."""
    text = " " + re.sub(r"[^a-z0-9@._:-]+", " ", with_values(instruction).lower()) + " "
    by_field: dict[str, set[str]] = {}
    for i in items:
        for k, v in flatten(i):
            if isinstance(v, str) and 2 < len(v) < 30:
                by_field.setdefault(k, set()).add(v.lower())
    conds = []
    for k, vals in by_field.items():
        if len(vals) < 2:
            continue
        hits = {v for v in vals if f" {v.replace('_', ' ')} " in text.replace("_", " ")}
        if hits:
            conds.append((k, hits))
    if not conds:
        return items
    return [i for i in items if all(str(dict(flatten(i)).get(k, "")).lower() in h
                                    for k, h in conds)]


def _best_field(item: dict[str, Any], qwords: set[str], numeric: bool,
                exclude: set[str] | frozenset[str] = frozenset()) -> str | None:
    best, best_score = None, 0.0
    for k, v in flatten(item):
        if k in exclude:
            continue
        is_num = isinstance(v, int | float) and not isinstance(v, bool)
        if numeric and not is_num:
            continue
        score = len(set(words(k)) & qwords) + (0.1 if is_num else 0)
        if score > best_score:
            best, best_score = k, score
    return best


def _fmt(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:.2f}"


__all__ = ["answer_text", "filter_items"]
