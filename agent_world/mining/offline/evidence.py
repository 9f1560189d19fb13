"""Step 1 of the algorithm: evidence. `collect_evidence` records one `Evidence` per tool, per tool
argument (`argument_info`: JSON type and format seen through anyOf/nullable, enum from the
schema or from quoted values in the description, required flag, item schema; request-body
objects are flattened by `tool_arguments`), per feature sentence, per entity hint, plus web
snippets from an optional search function, each linked to the research question it shares
most words with.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent_world.mining.offline.naming import word_set
from agent_world.mining.sources.base import SourceDocument, ToolDescription
from agent_world.mining.sources.openapi import RefResolver

EvidenceKind = Literal["source", "tool", "argument", "entity", "feature", "web"]
SearchFn = Callable[[str], list[str]]


class Evidence(BaseModel):
    """One fact the miner found, where it came from, and the research question it bears on."""

    kind: EvidenceKind
    ref: str  # "tool:git_commit", "arg:git_commit.message", "feature:2", "web:<query>#0"
    text: str
    question: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


# objects whose fields are the tool's own arguments: a request's body, and its path and query
# parameters where a server nests them (Chatwork's get_room(path={"room_id": 1}))
_BODY_KEYS = {"body", "requestbody", "request_body", "payload", "data", "json", "input",
              "path", "path_params", "pathparams", "query", "query_params", "queryparams"}
_QUOTED = re.compile(r"['\"`]([A-Za-z0-9_\-]+)['\"`]")


def tool_arguments(tool: ToolDescription) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """A tool's arguments (flattening a request-body object) and the required ones; local
    `$ref`s (a server's `$defs`) are inlined, so an argument typed by one is what it names (an
    object of cell formats), not a string."""
    schema = tool.input_schema or {}
    if "$ref" in json.dumps(schema):
        schema = RefResolver(schema, f"tool {tool.name}").resolve(schema)
    props = dict(schema.get("properties") or {})
    required = set(schema.get("required") or [])
    for key in list(props):
        sub = props[key]
        if (key.lower() in _BODY_KEYS and isinstance(sub, dict) and sub.get("type") == "object"
                and sub.get("properties")):
            props.pop(key)
            for k, v in sub["properties"].items():
                props.setdefault(k, v)
            required |= set(sub.get("required") or [])
    return props, required


def json_type(prop: dict[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
    """(type, format, the schema branch it came from), looking through anyOf/oneOf/nullable."""
    if not isinstance(prop, dict):
        return "string", None, {}
    t = prop.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    if t is None:
        for key in ("anyOf", "oneOf", "allOf"):
            for branch in prop.get(key) or []:
                if isinstance(branch, dict) and branch.get("type") not in (None, "null"):
                    bt, bf, bb = json_type(branch)
                    return bt, prop.get("format") or bf, bb
        t = "string"
    return str(t), prop.get("format"), prop


def argument_info(name: str, prop: dict[str, Any], required: bool) -> dict[str, Any]:
    jtype, fmt, branch = json_type(prop)
    desc = str(prop.get("description") or prop.get("title") or "")
    enum = prop.get("enum") or branch.get("enum")
    enum_from = "schema" if enum else None
    if not enum and desc and jtype not in ("object", "array"):
        # (an object's description quotes its example's keys: '{"title": "My PR"}')
        quoted = _QUOTED.findall(desc)
        lowered = desc.lower()
        examples = any(w in lowered for w in ("e.g", "for example", "such as", "like '"))
        if (len(set(quoted)) >= 2 and not examples
                and all(re.fullmatch(r"[a-z][a-z0-9_]*", q) for q in quoted)):
            enum, enum_from = list(dict.fromkeys(quoted)), "description"
    items = prop.get("items") if isinstance(prop.get("items"), dict) else None
    return {
        "argument": name, "type": jtype, "format": fmt,
        "enum": [str(e) for e in enum] if enum else None, "enum_from": enum_from,
        "required": required, "description": desc,
        "items": ({"type": json_type(items)[0], "format": json_type(items)[1],
                   "properties": items.get("properties") or {}} if items else None),
    }


def _best_question(text: str, questions: list[str]) -> str | None:
    if not questions:
        return None
    words = word_set(text)
    scored = [(len(words & word_set(q)), -i, q) for i, q in enumerate(questions)]
    best = max(scored)
    return best[2] if best[0] > 0 else None


def collect_evidence(doc: SourceDocument, questions: list[str], search: SearchFn | None = None,
                     *, max_web_queries: int = 6, max_web_results: int = 3) -> list[Evidence]:
    """Evidence from the source itself and, when `search` is given, from web snippets."""
    ev: list[Evidence] = []
    if doc.title or doc.description:
        ev.append(Evidence(kind="source", ref=f"source:{doc.name}",
                           text=" - ".join(p for p in (doc.title, doc.description) if p),
                           data={"name": doc.name, "kind": doc.kind}))
    for tool in doc.tools:
        props, required = tool_arguments(tool)
        sig = ", ".join(f"{a}{'' if a in required else '?'}" for a in props)
        ev.append(Evidence(kind="tool", ref=f"tool:{tool.name}",
                           text=f"{tool.name}({sig}): {tool.description}".strip(),
                           data={"tool": tool.name, "read_only": tool.read_only,
                                 "arguments": list(props), "required": sorted(required),
                                 "description": tool.description, "tags": list(tool.tags)}))
        for arg, prop in props.items():
            info = argument_info(arg, prop if isinstance(prop, dict) else {}, arg in required)
            bits = [info["type"]] + ([f"format={info['format']}"] if info["format"] else [])
            if info["enum"]:
                bits.append("one of " + "|".join(info["enum"]))
            ev.append(Evidence(kind="argument", ref=f"arg:{tool.name}.{arg}",
                               text=f"{tool.name}.{arg} ({', '.join(bits)}"
                                    f"{', required' if info['required'] else ''}): "
                                    f"{info['description']}".strip(),
                               data={"tool": tool.name, "read_only": tool.read_only, **info}))
    for i, feat in enumerate(doc.features):
        ev.append(Evidence(kind="feature", ref=f"feature:{i}", text=feat))
    for hint in doc.entities:
        ev.append(Evidence(kind="entity", ref=f"entity:{hint.name}",
                           text=f"{hint.name}: {', '.join(hint.fields)} {hint.description}".strip(),
                           data={"name": hint.name, "fields": list(hint.fields),
                                 "description": hint.description,
                                 "field_specs": [f.model_dump(exclude_defaults=True)
                                                 for f in hint.field_specs]}))
    if search is not None:
        for q in questions[:max_web_queries]:
            try:
                results = list(search(q) or [])
            except Exception as exc:  # a flaky search backend must not stop mining
                ev.append(Evidence(kind="web", ref=f"web:{q}", text=f"search failed: {exc}",
                                   question=q, data={"error": True}))
                continue
            for j, r in enumerate(results[:max_web_results]):
                ev.append(Evidence(kind="web", ref=f"web:{q}#{j}", text=str(r)[:2000],
                                   question=q))
    for e in ev:
        if e.question is None:
            e.question = _best_question(e.text, questions)
    return ev
