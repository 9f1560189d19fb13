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

This module writes whole requests and their questions; values are phrased in
`phrasing_values`, a walk's steps as clauses in `phrasing_clauses`.
"""

from __future__ import annotations

import random
import re
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import is_plural_word
from agent_world.synthesis.action_phrases import action_phrase, summary_of
from agent_world.synthesis.phrasing_clauses import (
    EDITS,
    MODIFIERS,
    PHRASE_ENDS,
    bound_key_noun,
    list_filters,
    param_schema,
    qualified,
    requalify,
    step_clause,
    write_clause,
)
from agent_world.synthesis.phrasing_values import arg_phrase, field_words, role, say, which
from agent_world.tasks.walks import Plan
from agent_world.tasks.words import (
    PAGING,
    entity,
    entity_plural,
    split_words,
    table_entity,
    tool_entity,
)

_OPEN = ["", "", "", "Hi. ", "Hello! ", "Hi there. ", "Can you help me? "]
_THEN = ["Then {a}.", "After that, {a}.", "Next, {a}.", "Once you have that, {a}.",
         "From there, {a}."]
_FIRST = ["Please {a}.", "I need you to {a}.", "Could you {a}?", "{A}.", "I'd like you to {a}."]


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
    if ent and " ".join(words) in (ent, ent.split()[-1]) and not now:
        # "What is the title's title?", "the section title's section title": a field named as
        # its record is what it is called
        return rng.choice([f"What is the {ent} called?", f"Tell me what the {ent} is called."])
    if ent and not now and " ".join(words) in ent.split()[:-1] and not isinstance(value, dict):
        # "Tell me the time conversion's time": a field named as what its record is about
        # is what the record gives
        return rng.choice([f"What {words[0]} does the {ent} give?",
                           f"Tell me the {words[0]} the {ent} gives."])
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


_ORDINALS = ["first", "second", "third"]
# an item of a body's section, asked as a reader of the page asks it ({n}: "second")
_SECTION_QUESTIONS = {
    "Steps": ["What is the {n} step {the} lists?", "What does {the} say to do as step {k}?"],
    "Prerequisites": ["What is the {n} prerequisite {the} lists?",
                      "Which prerequisite does {the} list {n}?"],
    "Example": ["Which command does {the}'s example run?",
                "What command does the example in {the} show?"],
    "Decisions": ["What is the {n} decision {the} records?",
                  "Which decision does {the} list {n}?"],
    "Open questions": ["What is the {n} open question in {the}?",
                       "Which open question does {the} list {n}?"],
}


def ask_section(answer: dict[str, Any], ent: str, rng: random.Random) -> str:
    """The question for one item of a section of the reached record's body ("What is the
    second step the guide lists?")."""
    nth = answer["nth"]
    if ent.split()[-1:] in (["url"], ["link"], ["uri"]):
        ent = "page"  # a tool that reads a URL returns the page: "the url lists" reads badly
    return rng.choice(_SECTION_QUESTIONS[answer["section"]]).format(
        n=_ORDINALS[nth], k=nth + 1, the=f"the {ent}")


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
        if any(field_words(k).split()[-1:] == ["by"] or role(k, v) == "date"
               or field_words(k).endswith("ed") for k, v in where.items()):
            # "cancelled by 'clinic'" is what happened to them, not something they have; nor
            # is a date ("have modified on January 14")
            return f"How many {those} are there?"
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


# a summary tool's fields asked as a person asks them
_SUMMARY_QUESTIONS = {
    "count": ["How many {ents} have a {m}?", "For how many {ents} is a {m} recorded?"],
    "total": ["What is the total {m} of the {ents}?", "What do the {ents}' {m}s add up to?"],
    "min": ["What is the smallest {m} among the {ents}?", "Which is the lowest {m} of the {ents}?"],
    "max": ["What is the largest {m} among the {ents}?", "Which is the highest {m} of the {ents}?"],
}


def instruction(spec: EnvSpec, plan: Plan, answer: dict[str, Any], rng: random.Random,
                changed: set[str] | None = None) -> str:
    """The user's request for a walk and its answer spec (graph and aggregating tasks);
    `changed`: fields the chain's writes changed (asked about as "now")."""
    kind = answer.get("kind", "none")
    agg_step = answer.get("step") if kind in ("count", "sum", "max", "min") else None
    parts = [rng.choice(_OPEN), *_clauses(spec, plan, len(plan.steps), rng, agg_step)]
    summary = summary_of(spec, plan.steps[answer["step"]].tool) if kind == "field" else None
    if summary is not None and answer["field"] in _SUMMARY_QUESTIONS:
        measure, records = summary
        parts.append(rng.choice(_SUMMARY_QUESTIONS[answer["field"]]).format(
            m=measure, ents=records))
    elif kind == "field":
        step = plan.steps[answer["step"]]
        ent = qualified(spec, plan, answer["step"], len(plan.steps))
        f = answer["field"]
        now = bool(changed and f in changed)
        parts.append(ask_field(f, rng, ent=ent, now=now, value=answer.get("value"),
                               tool=step.tool))
    elif kind == "section":
        parts.append(ask_section(answer, qualified(spec, plan, answer["step"], len(plan.steps)),
                                 rng))
    elif agg_step is not None:
        ents = entity_plural(tool_entity(spec, plan.steps[agg_step].tool))
        parts.append(ask_aggregate(kind, answer.get("field"), answer.get("where") or {}, ents,
                                   rng))
    else:
        parts.append(rng.choice(["Let me know once it's done.", "Confirm when that's done.",
                                 "Thanks!", "Tell me when it's finished."]))
    return _join(parts)


def _verb_be(words: str) -> str:
    """"opening hours are", "status is": a plural last word (not alias, https, status)."""
    last = words.split()[-1] if words else ""
    plural = is_plural_word(last) and not last.endswith(("as", "is", "us", "ss", "ps"))
    return "are" if plural else "is"


def conditional_instruction(spec: EnvSpec, plan: Plan, cond: dict[str, Any],
                            rng: random.Random) -> str:
    """A request that branches on an observed value: the reads, then "if its status is
    pending, cancel it; otherwise tell me its total" (`cond`: the condition spec the
    synthesizer recorded, see `agent_world.synthesis.synthesizer`)."""
    i = cond["step"]
    parts = [rng.choice(_OPEN), *_clauses(spec, plan, i + 1, rng)]
    ent = tool_entity(spec, plan.steps[i].tool)
    words = field_words(cond["field"])
    test = f"{words} {_verb_be(words)} {say(cond['field'], cond['value'])}"
    # the write is aimed at the record it is fed by: the branch's, or one read before it
    fed = sorted({b["step"] for b in (cond["write"].get("bound") or {}).values()})
    src = i if not fed or i in fed else fed[-1]
    bound = cond["write"].get("bound") or {}
    act = write_clause(spec, cond["write"]["tool"], cond["write"]["given"], rng,
                       prev=tool_entity(spec, plan.steps[src].tool),
                       bound_keys=tuple(p for p in bound if role(p) == "key"),
                       own_roles=frozenset(p for p, b in bound.items() if b["field"] == p),
                       origins={p: tool_entity(spec, plan.steps[b["step"]].tool)
                                for p, b in bound.items()})
    act = requalify(act, spec, plan, src, i + 1)
    if tool_entity(spec, cond["write"]["tool"]) == ent and src == i:
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


# the targets as the owner of what the write names ("suspend a member account")
_OWNERS = {"it": ("its", False), "each of them": ("each one's", False),
           "all of them": ("all of their", True)}


def _them(act: str, ent: str, pronoun: str) -> str:
    """The write's clause aimed at the targets: "cancel a hold" → "cancel it", "suspend a
    member account" → "suspend all of their accounts"."""
    head = ent.split()[-1]
    m = re.search(rf"\b(?:a|an|one|the)\s+{MODIFIERS}{re.escape(head)}s?\b", act)
    if m is None:
        return f"{act} for {pronoun}"
    rest = act[m.end():]
    owned = re.match(r"\s+([\w-]+)", rest)
    if owned and owned.group(1) not in PHRASE_ENDS and pronoun in _OWNERS:
        owner, many = _OWNERS[pronoun]
        noun = owned.group(1)
        return f"{act[:m.start()]}{owner} {entity_plural(noun) if many else noun}" \
               f"{rest[owned.end():]}"
    out = f"{act[:m.start()]}{pronoun}{rest}"
    # a phrasal verb keeps "it" inside: "check it in", not "check in it"
    return re.sub(r"^(\w+) (in|out|up|off) it\b", r"\1 it \2", out)


def bulk_instruction(spec: EnvSpec, plan: Plan, bulk: dict[str, Any],
                     rng: random.Random) -> str:
    """The request of a programmatic task that writes: one change for every list element
    that meets a condition."""
    ent = table_entity(bulk["table"])
    ents = entity_plural(ent)
    step = plan.steps[bulk["step"]]
    # "every" already says all of them: no page size in the request
    before, after, owner = list_filters(spec, step.tool, {p: v for p, v in step.given.items()
                                                           if p not in PAGING})
    ctx = f" of {owner}" if owner else ""
    if step.bound and not owner:
        src = next(iter(step.bound.values())).step
        prev = tool_entity(spec, plan.steps[src].tool)
        # the record the bound key names: "every task of that task's project", not "of that
        # task" (Asana's task counts were taken of the project a task belongs to)
        keyed = bound_key_noun(step)
        ctx += f" of that {prev}'s {keyed}" if keyed and keyed not in (prev, ent) else \
            f" of that {prev}"
    if after:
        ctx += f" {after}"
    if before:
        ents, ent = f"{before} {ents}", f"{before} {ent}"
    (k, v), = bulk["where"].items()
    cond = which(k, v)
    # "whose source is X and whose time is Y", not "whose source is X whose time is Y"
    also = f"and {cond}" if cond.startswith("whose ") and " whose " in f" {after}" else cond
    act = action_phrase(spec, bulk["write"])
    writes = act.split(" ", 1)[0] in EDITS
    extra = [arg_phrase(p, x, param_schema(spec, bulk["write"], p), writes=writes)
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
        parts.append(f"Every {ent}{ctx} {also} needs the same change: "
                     f"{aim('each of them', 'the')}{extra_text}.")
    else:
        parts.append(f"Find all {ents}{ctx} {also} and "
                     f"{aim('all of them', 'their')}{extra_text}.")
    if bulk["answer"] == "count":
        parts.append(rng.choice(["Tell me how many you changed.",
                                 f"How many {entity_plural(ent)} was that?",
                                 "Then let me know how many there were."]))
    else:
        parts.append(rng.choice(["Leave the others alone.", "Don't touch any other ones.",
                                 "Only those, please."]))
    return _join(parts)


__all__ = ["ask_aggregate", "ask_field", "bulk_instruction", "conditional_instruction",
           "instruction", "where_text"]
