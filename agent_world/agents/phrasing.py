"""Offline instruction writing: how a user would ask for a walk, from entity and field names.

The offline synthesizer has no language model, so it writes from what the environment says
about itself: each tool's entity (`list_holds` → holds, `getPatient` → patient), its kind
(reads one record, reads a list, writes), the arguments the user states (folded into the
sentence: "look up member 48", "the slots of clinician 3"), the element a step singles out
("the one whose title is 'Dune'"), and the field asked for, worded from its name ("When was it
created?" for `created_at`, "Is it active?" for `is_active`). Writes keep the verb of their
tool's description (cleaned of user-story framing: "Members can renew a loan ..." → "renew
the loan ..."), so the request says what to do without naming a tool. Phrasing varies with the
walk's seed: several openings, sentence shapes, connectives and question forms.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.tasks.check import normalise
from agent_world.tasks.walks import Plan

_OPEN = ["", "", "Hi. ", "Hello! ", "Hi there. ", "Quick one: ", "Can you help me? "]
_READ_VERBS = {"get", "list", "search", "find", "view", "show", "read", "fetch", "lookup",
               "look", "count", "summarize", "check", "describe"}
_LIST_VERBS = {"list", "search", "find", "browse"}
_PAGING = ("limit", "offset", "page", "page_size", "max_results")
_THEN = ["Then {a}.", "After that, {a}.", "Next, {a}.", "Once you have that, {a}.",
         "From there, {a}."]
_FIRST = ["Please {a}.", "I need you to {a}.", "Could you {a}?", "{A}.", "First, {a}."]


def split_words(name: str) -> list[str]:
    """`listPatientAppointments` / `list_patient_appointments` → list, patient, appointments."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w for w in re.split(r"[_\W]+", name.lower()) if w]


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def plural(word: str) -> str:
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def entity(tool: str) -> str:
    """The thing a tool is about, singular: `list_holds` → hold, `set_member_status` →
    member, `count_loans_by_status` → loan."""
    words = split_words(tool)
    rest = words[1:] if len(words) > 1 else words
    if "by" in rest:
        rest = rest[: rest.index("by")] or rest
    if len(rest) > 1 and rest[-1] in ("status", "details", "history", "count"):
        rest = rest[:-1]
    return " ".join([*rest[:-1], singular(rest[-1])]) if rest else "record"


def entity_plural(ent: str) -> str:
    words = ent.split()
    return " ".join([*words[:-1], plural(words[-1])])


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
    clause = re.split(r"(?<=[a-z0-9)])[.:;](\s|$)|\s\(|, unless\b|, optionally\b| in id order",
                      desc, maxsplit=1)[0].strip().rstrip(" .,;:")
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


def _kind(spec: EnvSpec, tool: str, lists: bool) -> str:
    words = split_words(tool)
    if spec.tool(tool).mutates:
        return "write"
    if lists or (words and words[0] in _LIST_VERBS):
        return "list"
    return "read"


def _filters(given: dict[str, Any]) -> str:
    parts = []
    for p, v in given.items():
        if p in _PAGING:
            parts.append(f"the first {value_text(v)} only")
        elif p in ("query", "q", "text", "keyword", "keywords"):
            parts.append(f"matching {value_text(v)}")
        elif p.endswith("_id") or p.endswith("Id"):
            parts.append(f"of {noun(p)} {value_text(v)}")
        else:
            parts.append(f"with {noun(p)} {value_text(v)}")
    return (" " + ", ".join(parts)) if parts else ""


def step_clause(spec: EnvSpec, plan: Plan, i: int, rng: random.Random,
                lists: bool = False) -> str:
    """One step as a request clause (lower case, no final stop)."""
    step = plan.steps[i]
    ent = entity(step.tool)
    kind = _kind(spec, step.tool, lists or step.select is not None)
    given = dict(step.given)
    prev = entity(plan.steps[next(iter(step.bound.values())).step].tool) if step.bound else ""
    if kind == "list":
        ents = entity_plural(ent)
        tail = _filters(given)
        if step.bound:
            tail += rng.choice([f" of that {prev}", f" for that {prev}", " that go with it"])
        a = rng.choice(["look through the {e}{t}", "pull up the {e}{t}", "check the {e}{t}",
                        "go over the {e}{t}", "find the {e}{t}"]).format(e=ents, t=tail)
        if step.select and i < len(plan.steps) - 1:
            (k, v), = step.select.items()
            a += rng.choice([f" and pick the one whose {field_words(k)} is {value_text(v)}",
                             f", the one with {field_words(k)} {value_text(v)}"])
        return a
    if kind == "read":
        key = next((p for p in given if p in ("id", "code", "number") or p.endswith("_id")
                    or p.endswith("Id")), None)
        if key is not None:
            v = given.pop(key)
            # "member 48" when the key names the entity, else "the hold with member 48"
            who = f"{ent} {value_text(v)}" if noun(key) in (ent, "") or key in ("id",) else \
                f"the {ent} of {noun(key)} {value_text(v)}"
            a = rng.choice(["look up {w}", "pull up {w}", "open {w}", "find {w}"]).format(w=who)
        elif step.bound:
            a = rng.choice([f"look up its {ent}", f"open the {ent} it points to",
                            f"find the {ent} that goes with it"])
        else:
            a = action_phrase(spec, step.tool)
        return a + _filters(given)
    a = action_phrase(spec, step.tool)
    if step.bound:
        a += rng.choice([" for it", f" for that {prev}", " for the one you found"])
    return a + (":" + _filters(given) if given else "")


def ask_field(field: str, rng: random.Random) -> str:
    words = split_words(field)
    if words and words[-1] == "at" and len(words) > 1 and words[-2].endswith("ed"):
        w = " ".join(words[:-1])
        return rng.choice([f"When was it {w}?", f"What is the {w} time?",
                           f"Tell me when it was {w}."])
    if words and words[0] in ("is", "has") and len(words) > 1:
        return rng.choice([f"{words[0].capitalize()} it {' '.join(words[1:])}?",
                           f"Tell me whether it {words[0]} {' '.join(words[1:])}."])
    f = " ".join(words)
    return rng.choice([f"What is its {f}?", f"Which {f} does it have?", f"Tell me its {f}.",
                       f"I'd like to know its {f}.", f"What {f} does it show?",
                       f"Reply with the {f}."])


def where_text(where: dict[str, Any]) -> str:
    return " and ".join(f"{field_words(k)} {value_text(v)}" for k, v in where.items())


def ask_aggregate(kind: str, field: str | None, where: dict[str, Any], ents: str,
                  rng: random.Random) -> str:
    w = where_text(where)
    if kind == "count":
        if not w:
            return rng.choice([f"How many {ents} are there?", f"How many {ents} is that?"])
        return rng.choice([f"How many of those {ents} have {w}?",
                           f"How many {ents} with {w} are there? Just the number.",
                           f"Count the {ents} with {w} and tell me how many."])
    f = field_words(field or "")
    scope = f" among the ones with {w}" if w else ""
    return rng.choice({
        "sum": [f"What is the total {f}{scope}?", f"Add up the {f}{scope}: what's the total?"],
        "max": [f"What is the highest {f}{scope}?", f"Which is the largest {f}{scope}?"],
        "min": [f"What is the lowest {f}{scope}?", f"What is the smallest {f}{scope}?"],
    }[kind])


def _sentence(template: str, a: str) -> str:
    return template.format(a=a, A=a[0].upper() + a[1:])


def instruction(spec: EnvSpec, plan: Plan, answer: dict[str, Any], rng: random.Random) -> str:
    """The user's request for a walk and its answer spec (graph and aggregating tasks)."""
    kind = answer.get("kind", "none")
    agg_step = answer.get("step") if kind in ("count", "sum", "max", "min") else None
    parts = [rng.choice(_OPEN)]
    for i in range(len(plan.steps)):
        a = step_clause(spec, plan, i, rng, lists=i == agg_step)
        parts.append(_sentence(rng.choice(_FIRST if i == 0 else _THEN), a))
    if kind == "field":
        last = plan.steps[answer["step"]]
        if last.select and answer["step"] == len(plan.steps) - 1:
            (k, v), = last.select.items()
            parts.append(rng.choice([f"I mean the one whose {field_words(k)} is "
                                     f"{value_text(v)}.",
                                     f"It's the one with {field_words(k)} {value_text(v)}."]))
        parts.append(ask_field(answer["field"], rng))
    elif agg_step is not None:
        ents = entity_plural(entity(plan.steps[agg_step].tool))
        parts.append(ask_aggregate(kind, answer.get("field"), answer.get("where") or {}, ents,
                                   rng))
    else:
        parts.append(rng.choice(["Let me know once it's done.", "Confirm when that's done.",
                                 "Thanks!", "Tell me when it's finished."]))
    return " ".join(p.strip() for p in parts if p.strip())


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
    ctx = _filters({p: v for p, v in step.given.items() if p not in _PAGING})
    if step.bound:
        ctx += f" of that {entity(plan.steps[next(iter(step.bound.values())).step].tool)}"
    (k, v), = bulk["where"].items()
    cond = f"{field_words(k)} is {value_text(v)}"
    act = action_phrase(spec, bulk["write"])
    extra = ", ".join(f"{noun(p)} {value_text(x)}" for p, x in bulk["args"].items())
    extra = f" (use {extra})" if extra else ""
    if bulk["args"] and act.split(" ", 1)[0] in ("change", "edit", "update", "set", "modify"):
        # an edit reads as what it sets: "set its status to 'shipped'"
        sets = " and ".join(f"{{whose}} {noun(p)} to {value_text(x)}"
                            for p, x in bulk["args"].items())
        act, extra = "set " + sets, ""
    else:
        sets = ""
    parts = [rng.choice(_OPEN)]
    for i in range(bulk["step"]):
        parts.append(_sentence(rng.choice(_FIRST if i == 0 else _THEN),
                               step_clause(spec, plan, i, rng)))
    def aim(pronoun: str, whose: str) -> str:
        return act.format(whose=whose) if sets else _them(act, ent, pronoun)

    shape = rng.randrange(3)
    if shape == 0:
        parts.append(f"Go through the {ents}{ctx}, and for every one whose {cond}, "
                     f"{aim('it', 'its')}{extra}.")
    elif shape == 1:
        parts.append(f"Every {ent}{ctx} whose {cond} needs the same change: "
                     f"{aim('each of them', 'the')}{extra}.")
    else:
        parts.append(f"Find all {ents}{ctx} with {field_words(k)} {value_text(v)} and "
                     f"{aim('all of them', 'their')}{extra}.")
    if bulk["answer"] == "count":
        parts.append(rng.choice(["Tell me how many you changed.",
                                 f"How many {ents} was that?",
                                 "Then let me know how many there were."]))
    else:
        parts.append(rng.choice(["Leave the others alone.", "Don't touch any other ones.",
                                 "Only those, please."]))
    return " ".join(p.strip() for p in parts if p.strip())


__all__ = ["action_phrase", "ask_aggregate", "ask_field", "bulk_instruction", "entity",
           "instruction", "noun", "singular", "split_words", "step_clause", "value_text"]
