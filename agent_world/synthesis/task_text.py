"""A task's request and rubric in words: from the "synthesizer" chat model when one is
configured (`llm_text`, `llm_bulk_text`; a reply that names a tool or drops a stated value is
refused), else offline from `phrasing` (`offline_text`, `bulk_text`); the rubric from the
ground truth (`rubric_for`)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from agent_world.envs.spec import EnvSpec
from agent_world.synthesis import phrasing
from agent_world.synthesis.action_phrases import action_phrase
from agent_world.synthesis.phrasing_values import arg_phrase, field_words, noun, value_text
from agent_world.synthesis.synthesizer_prompts import WRITE_TASK_SYSTEM, WRITE_TASK_USER
from agent_world.tasks.truth import Truth
from agent_world.tasks.walks import Plan
from agent_world.tasks.words import PAGING, entity_plural, table_entity


def _words(name: str) -> str:
    return field_words(name)


def _noun(param: str) -> str:
    return noun(param)


def _value_text(value: Any) -> str:
    return value_text(value)


def offline_text(spec: EnvSpec, plan: Plan, answer: dict[str, Any],
                 rng: random.Random, changed: set[str] | None = None,
                 value: Any = None) -> tuple[str, list[str]]:
    """Instruction (phrased by the values' types and roles, see `phrasing`) and no rubric:
    the caller derives the rubric from the ground truth. `changed`: fields the chain's
    writes changed; `value`: the answer (its type picks the question's form)."""
    return phrasing.instruction(spec, plan, {**answer, "value": value}, rng, changed), []


def bulk_text(spec: EnvSpec, plan: Plan, bulk: dict[str, Any],
              rng: random.Random) -> tuple[str, list[str]]:
    """Instruction and rubric of a programmatic task that writes."""
    (k, v), = bulk["where"].items()
    ents = entity_plural(table_entity(bulk["table"]))
    rubric = [f"Changes every one of the {ents} whose {_words(k)} is {_value_text(v)}, "
              "each the same way, and no other record.",
              "Skips none of them and stops at none of them halfway."]
    if bulk["answer"] == "count":
        rubric.append("The reply states how many were changed.")
    return phrasing.bulk_instruction(spec, plan, bulk, rng), rubric


def rubric_for(spec: EnvSpec, plan: Plan, answer: dict[str, Any], truth: Truth) -> list[str]:
    out = []
    kind = answer.get("kind", "none")
    if kind == "field":
        out.append(f"The reply states the {_words(answer['field'])}: {_value_text(truth.answer)}.")
    elif kind == "section":
        out.append(f"The reply states item {answer['nth'] + 1} of the {answer['section']!r} "
                   f"section: {_value_text(truth.answer)}.")
    elif kind != "none":
        what = "number of matching items" if kind == "count" else \
            f"{kind} of the {_words(answer['field'])}"
        out.append(f"The reply states the {what}: {_value_text(truth.answer)}.")
    for step in plan.steps:
        for param, value in step.given.items():
            if param not in PAGING:
                out.append(f"Works with {arg_phrase(param, value)} as the user "
                           "asked.")
    if truth.expected_changes:
        changed = ", ".join(f"{t} ({sum(len(v) for v in d.values())} row change(s))"
                            for t, d in truth.expected_changes.items())
        out.append(f"Makes the requested change and nothing else: {changed}.")
    else:
        out.append("Changes nothing in the system.")
    return out


def llm_text(model: Any, spec: EnvSpec, plan: Plan, answer: dict[str, Any],
             truth: Truth) -> tuple[str, list[str]] | None:
    """Instruction and rubric from a chat model; None when its reply breaks a rule."""
    facts = {
        "environment": spec.theme.name,
        "user_states": [{"what": _noun(k), "value": v} for s in plan.steps
                        for k, v in s.given.items()],
        "steps": [{"does": action_phrase(spec, s.tool),
                   "choose_item_with": s.select} for s in plan.steps],
        "final_answer": {"kind": answer.get("kind"), "field": answer.get("field"),
                         "where": answer.get("where"), "section": answer.get("section"),
                         "item": None if "nth" not in answer else answer["nth"] + 1},
    }
    return _written(model, spec, facts)


def llm_bulk_text(model: Any, spec: EnvSpec, plan: Plan,
                  bulk: dict[str, Any]) -> tuple[str, list[str]] | None:
    """A programmatic task that writes, worded by a chat model; None when it breaks a rule."""
    (k, v), = bulk["where"].items()
    ents = entity_plural(table_entity(bulk["table"]))
    states = [{"what": _noun(p), "value": x} for s in plan.steps for p, x in s.given.items()
              if p not in ("limit", "offset", "page", "page_size", "max_results")]
    states += [{"what": _noun(p), "value": x} for p, x in bulk["args"].items()]
    states.append({"what": f"condition on the {ents}: {_words(k)}", "value": v})
    facts = {
        "environment": spec.theme.name, "user_states": states,
        "steps": [{"does": action_phrase(spec, s.tool),
                   "choose_item_with": s.select} for s in plan.steps[:-1]]
        + [{"does": f"for every one of the {ents} whose {_words(k)} is {_value_text(v)}: "
                    f"{action_phrase(spec, bulk['write'])}; no other record"}],
        "final_answer": {"kind": "how many were changed" if bulk["answer"] == "count"
                         else "none (confirm it is done)"},
    }
    return _written(model, spec, facts)


def _written(model: Any, spec: EnvSpec, facts: dict[str, Any]
             ) -> tuple[str, list[str]] | None:
    try:
        reply = model.invoke([SystemMessage(WRITE_TASK_SYSTEM), HumanMessage(
            WRITE_TASK_USER.format(facts=json.dumps(facts, default=str),
                                   forbidden=", ".join(t.name for t in spec.tools)))])
        text = str(reply.content)
        data = json.loads(text[text.index("{"): text.rindex("}") + 1])
        instruction, rubric = str(data["instruction"]), [str(r) for r in data.get("rubric", [])]
    except Exception:  # any malformed reply: the caller falls back to templates
        return None
    if names_a_tool(instruction, spec, {}):
        return None
    for state in facts["user_states"]:
        v = state["value"]
        if isinstance(v, str | int) and str(v).lower() not in instruction.lower():
            return None
    return instruction, rubric


def request_writer(model: Any, text: Any) -> str:
    """Who wrote a request: the model's name, "offline" (no model configured) or
    "offline-fallback" (the model's reply could not be used: the templates wrote it, and
    synthesis counts and reports it)."""
    if model is None:
        return "offline"
    return "offline-fallback" if text is None else getattr(model, "model_name",
                                                            type(model).__name__)


def names_a_tool(text: str, spec: EnvSpec, view: dict[str, str]) -> bool:
    """Whether `text` gives a tool's identifier away (get_order, listClinicians, an opaque
    name). A tool named by one plain word (the fetcher's fetch) is named by the word anyone
    asking would use: "fetch https://..." is no leak."""
    names = {n for n in {t.name for t in spec.tools} | set(view)
             if not re.fullmatch(r"[a-z]+", n)}
    return any(re.search(rf"\b{re.escape(n)}\b", text) for n in names)



__all__ = ["bulk_text", "llm_bulk_text", "llm_text", "names_a_tool", "offline_text",
           "request_writer", "rubric_for"]
