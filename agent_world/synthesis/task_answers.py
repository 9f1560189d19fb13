"""What a task asks about the walk's last observation: a field of the record it reached (after a
write, only what the write changed), an item of a section of its body (`tasks.sections`), or
an aggregate of a list (how many match, a total, a maximum or minimum)."""

from __future__ import annotations

import random
from typing import Any

from agent_world.mining.offline.naming import is_placeholder
from agent_world.mining.offline.vocabulary import LABEL_NUMBERS, not_additive
from agent_world.tasks.check import normalise
from agent_world.tasks.sections import askable_sections
from agent_world.tasks.walks import (
    SECRETS,
    Plan,
    _selector,
    _timestamp,
    field_value,
    one_looked_up,
    scalar_fields,
)
from agent_world.tasks.words import PAGING, TIMESTAMPS, split_words


def echoed(plan: Plan) -> set[str]:
    return {normalise(v) for s in plan.steps for v in s.given.values()}


def answer_options(plan: Plan, last: Any, rng: random.Random, aggregate: bool,
                   changed: set[str] | None = None,
                   labels: frozenset[str] = frozenset(), listing: Any = None) -> list[dict]:
    """Answer specs worth asking about the last observation, best first. After a write
    (`changed`: the columns it changed), only what it changed: the new status, not a field
    any lookup gives; never a timestamp a write stamps (the engine's clock) nor a record's
    bookkeeping times ("when was the shared label updated?" asks what no one keeps track
    of), nor a name the miner gave a record (`labels`: `words.added_labels`), nor the
    placeholder name a create gives (Word's create_custom_style(style_name='Heading 1') had
    been asked its new style's name: 'Untitled custom style'). A listed
    record is picked as `walks._selector` picks it (`listing`: the tool that listed it)."""
    i = len(plan.steps) - 1
    echo = echoed(plan)
    if isinstance(last, list):
        items = [x for x in last if isinstance(x, dict)]
        if len(items) == 1 and not aggregate and one_looked_up(last, plan.steps[i].given):
            # what a batch look-up of one key returns is that record: MUI's fetchDocs(urls=
            # [one URL]) gives the page at it ("what is the page at that URL called?")
            last = items[0]
            plan.steps[i].select = None  # nothing to single out: the URL named it
        elif len(items) < 2:
            return []
    if isinstance(last, list):
        if aggregate:
            return _aggregations(i, items, rng, labels)
        step = plan.steps[i]
        item = rng.choice(items)
        step.select = _selector(items, item, set(step.given), rng, labels, listing) or None
        if step.select is None:
            return []
        last = item
    if not isinstance(last, dict):
        return []
    # never a field the request names as the call's argument: git_diff(target='fix/x') shows
    # target=<sha>, and "what is the diff's target?" asks back what the user said
    asked = set(plan.steps[i].select or {}) | set(plan.steps[i].given)
    fields = [(k, v) for k, v in scalar_fields(last).items()
              if v is not None and not isinstance(v, bool) and normalise(v) not in echo
              and len(str(v)) <= 60 and str(v).strip() and k not in asked
              and str(v) not in labels and k not in TIMESTAMPS and not is_placeholder(v)
              and k not in SECRETS]
    if changed is not None:
        fields = [(k, v) for k, v in fields if k in changed and not _timestamp(k, v)]
    rng.shuffle(fields)
    # readable fields first; identifiers and timestamps are fair answers but less interesting
    fields.sort(key=lambda kv: (kv[0].endswith("_id") or kv[0] == "id") + _timestamp(*kv))
    options = [{"kind": "field", "step": i, "field": k} for k, _ in fields[:4]]
    # a page's body asked about (its second step, its example's command) before its fields:
    # a docs server's tasks had asked only a fetched page's id
    sections = askable_sections(last, asked | SECRETS) if changed is None else []
    if sections:
        k, section, nth = rng.choice(sections)
        options.insert(0, {"kind": "section", "step": i, "field": k, "section": section,
                           "nth": nth})
    return options


def _not_additive(field: str) -> bool:
    return not_additive(split_words(field))


def _aggregations(i: int, items: list[dict], rng: random.Random,
                  labels: frozenset[str] = frozenset()) -> list[dict]:
    options = []
    cats, nums = {}, []
    for k in scalar_fields(items[0]):
        values = [field_value(x, k) for x in items]
        if all(isinstance(x, str) for x in values) and 2 <= len(set(values)) <= 6 \
                and len(set(values)) < len(values) and not labels & set(values):
            cats[k] = sorted(set(values))
        # no "highest page idx", no "add up the created by" (a user's id), no "highest
        # start" (where a page began)
        if all(isinstance(x, int | float) and not isinstance(x, bool) for x in values) and \
                not k.endswith(("id", "idx", "_by", "ids")) and len(set(values)) > 1 and \
                k not in PAGING and k not in ("start", "skip", "from_", "page_token") and \
                not set(split_words(k)[-1:]) & LABEL_NUMBERS:
            nums.append(k)
    for k, values in cats.items():
        options.append({"kind": "count", "step": i, "where": {k: rng.choice(values)}})
    for k in nums:
        where = {}
        if cats and rng.random() < 0.5:
            c = rng.choice(sorted(cats))
            where = {c: rng.choice(cats[c])}
        kinds = ["max", "min"] if _not_additive(k) else ["sum", "max", "min"]
        options.append({"kind": rng.choice(kinds), "step": i, "field": k, "where": where})
    rng.shuffle(options)
    return options[:4]


__all__ = ["answer_options", "echoed"]
