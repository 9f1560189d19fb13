"""Structured answers from any chat model, with or without tool calling.

    answer = ask_structured(model, Diagnosis, messages)   # a Diagnosis, or ValueError/ValidationError

A model with structured output (tool calling or a JSON-schema response format) is asked that
way. A model without it — its integration raises NotImplementedError, or its server refuses a
request carrying tools or a response format (HTTP 400/422/501: vLLM without a tool parser,
Ollama models without tools, llama.cpp without --jinja) — is asked in plain text for one JSON
object matching the schema; the switch is logged once per model (`models.use_plain_chat`) and
later calls go straight to text. Any other error (transport, auth) is raised as it is.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from agent_world import models

# HTTP statuses a server answers a request it cannot serve as asked (tools, response_format)
REFUSAL_STATUS = frozenset({400, 422, 501})

JSON_INSTRUCTION = ("Answer with one JSON object only (no tool call, no prose around it) that "
                    "matches this JSON schema:\n{schema}")


def refuses_tools(exc: BaseException) -> bool:
    """Whether `exc` says the model or its server cannot take tools / structured output."""
    if isinstance(exc, NotImplementedError):
        return True
    status = getattr(exc, "status_code", None)
    if status is None:
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status in REFUSAL_STATUS


def json_from_text(text: str) -> str:
    """The JSON object (or array) in a reply: a ```json fence's body, else the outermost
    braces; ValueError when there is none."""
    t = text.strip()
    if "```" in t:
        for p in t.split("```")[1::2]:
            p = p.removeprefix("json").strip()
            if p.startswith(("{", "[")):
                return p
    start = min((i for i in (t.find("{"), t.find("[")) if i >= 0), default=-1)
    end = max(t.rfind("}"), t.rfind("]"))
    if start < 0 or end < start:
        raise ValueError("the answer contains no JSON object")
    return t[start:end + 1]


def content_text(msg: Any) -> str:
    """A reply's text (content blocks joined)."""
    content = getattr(msg, "content", msg)
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def json_instruction(schema: type[BaseModel]) -> str:
    return JSON_INSTRUCTION.format(schema=json.dumps(schema.model_json_schema(),
                                                     separators=(",", ":")))


def _from_structured(schema: type[BaseModel], out: Any) -> BaseModel:
    parsed = out.get("parsed") if isinstance(out, dict) else out
    if isinstance(parsed, schema):
        return parsed
    if isinstance(parsed, dict):
        return schema.model_validate(parsed)
    raw = out.get("raw") if isinstance(out, dict) else None
    text = content_text(raw) if raw is not None else ""
    if not text.strip():
        err = out.get("parsing_error") if isinstance(out, dict) else None
        raise ValueError(f"no structured answer ({err or 'empty response'})")
    return schema.model_validate_json(json_from_text(text))


def ask_structured(model: Any, schema: type[BaseModel], messages: list[Any]) -> BaseModel:
    """Ask for a `schema` object: structured output where the model has it, else one JSON
    object in the text (see the module docstring). Raises ValueError/ValidationError when the
    answer does not parse."""
    reason = ""
    if not models.plain_chat(model):
        try:
            runnable = model.with_structured_output(schema, include_raw=True)
        except (NotImplementedError, TypeError, ValueError, AttributeError) as exc:
            runnable, reason = None, f"no structured output ({type(exc).__name__}: {exc})"
        if runnable is not None:
            try:
                return _from_structured(schema, runnable.invoke(messages))
            except Exception as exc:
                if not refuses_tools(exc):
                    raise
                reason = f"structured output refused ({type(exc).__name__}: {exc})"[:300]
    reply = model.invoke([*messages, HumanMessage(json_instruction(schema))])
    if reason:  # the text request worked: the model is plain, not unreachable
        models.use_plain_chat(model, reason)
    return schema.model_validate_json(json_from_text(content_text(reply)))


__all__ = ["REFUSAL_STATUS", "ask_structured", "content_text", "json_from_text",
           "json_instruction", "refuses_tools"]
