"""How a policy sees tools and how its tool calls are read back from its text.

The format is the Hermes / Qwen chat-template convention: the system prompt lists the task's
tools as JSON schemas inside `<tools>…</tools>`, the model calls one with
`<tool_call>{"name": …, "arguments": {…}}</tool_call>` and ends the episode with
`<answer>…</answer>` (plain text without a call is taken as the answer too). A reply that
tries to call a tool but cannot be read (bad JSON, no name, arguments not an object) is
*malformed*: the episode goes on with an error observation telling the model what was wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

from agent_world.envs.spec import EnvSpec
from agent_world.tasks.model import Task

_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_ANSWER = re.compile(r"<answer>\s*(.*?)\s*(?:</answer>|$)", re.S)

SYSTEM_TEMPLATE = """You are an agent that solves the user's task with tools.
Tools (JSON schemas):
<tools>
{tools}
</tools>
Call one tool per reply: <tool_call>{{"name": "NAME", "arguments": {{...}}}}</tool_call>
When done, reply <answer>ANSWER</answer>."""
COMPACT_DESCRIPTION_CHARS = 60
COMPACT_TEMPLATE = """Tools:
{tools}
Reply <tool_call>{{"name":..,"arguments":{{..}}}}</tool_call> or <answer>..</answer>."""


@dataclass(frozen=True)
class ParsedReply:
    """What one policy reply asks for: a call, an answer, or a malformed call."""

    kind: Literal["call", "answer", "malformed"]
    name: str | None = None
    arguments: Any = None
    answer: Any = None
    error: str = ""


def tool_views(task: Task, spec: EnvSpec) -> list[dict[str, Any]]:
    """The tools the agent may use, under the names it sees, as function schemas."""
    by_name = {t.name: t for t in spec.tools}
    view = task.tool_view or {t.name: t.name for t in spec.tools}
    out = []
    for visible, real in view.items():
        tool = by_name.get(real)
        if tool is not None:
            out.append({"name": visible, "description": tool.description,
                        "parameters": tool.parameters})
    return out


def short_description(text: str, limit: int = COMPACT_DESCRIPTION_CHARS) -> str:
    """The first sentence of a tool description, at most `limit` characters."""
    first = re.split(r"(?<=[.!?])\s|:\s", (text or "").strip(), maxsplit=1)[0].rstrip(".")
    return first if len(first) <= limit else first[:limit - 1].rstrip() + "…"


def system_prompt(task: Task, spec: EnvSpec, compact: bool = False) -> str:
    """The system prompt: tool schemas in the chat template's tool format. `compact` lists
    each tool as `name(arguments)` (small models with short contexts); a tool shown under an
    obscured name adds the first sentence of its description, since its name says nothing."""
    real = task.tool_view or {}
    return tools_prompt(tool_views(task, spec), compact,
                        described={v for v, r in real.items() if r != v})


def tools_prompt(views: list[dict[str, Any]], compact: bool = False,
                 described: Collection[str] = ()) -> str:
    """The system prompt for tool schemas `views` (name, description, parameters); compact:
    the tools named in `described` add the first sentence of their description."""
    if compact:
        return COMPACT_TEMPLATE.format(tools="\n".join(
            f"{v['name']}({', '.join((v.get('parameters') or {}).get('properties', {}))})"
            + (f": {short_description(v.get('description', ''))}"
               if v["name"] in described else "") for v in views))
    tools = "\n".join(json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in views)
    return SYSTEM_TEMPLATE.format(tools=tools)


def format_call(name: str, arguments: dict[str, Any]) -> str:
    """A tool call as the model writes it (gold demonstrations, chat-model replies)."""
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments},
                                      ensure_ascii=False, separators=(",", ":")) + "</tool_call>"


def format_answer(answer: Any) -> str:
    text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False,
                                                             default=str)
    return f"<answer>{text}</answer>"


def gold_replies(task: Task) -> list[str]:
    """The replies of the task's gold solution as the policy writes them: each chain call under
    its visible name, then the answer ("done" for a task that has none)."""
    visible = {real: vis for vis, real in task.tool_view.items()}
    answer = task.reference_answer if task.reference_answer is not None else "done"
    return [format_call(visible.get(c.tool, c.tool), c.arguments) for c in task.chain] + [
        format_answer(answer)]


def _answer_value(text: str) -> Any:
    text = text.strip()
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text


def parse_reply(text: str) -> ParsedReply:
    """Read one reply. A `<tool_call>` wins over an `<answer>` (the model acts first)."""
    call = _CALL.search(text)
    if call is not None:
        body = call.group(1)
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, ValueError) as exc:
            return ParsedReply("malformed", error=f"tool call is not valid JSON ({exc.msg} at "
                               f"char {exc.pos}); write <tool_call>{{\"name\": ..., "
                               f"\"arguments\": {{...}}}}</tool_call>")
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            return ParsedReply("malformed", error="tool call needs a string \"name\"")
        arguments = data.get("arguments", {})
        if isinstance(arguments, str):  # some templates carry arguments as a JSON string
            try:
                arguments = json.loads(arguments)
            except (json.JSONDecodeError, ValueError):
                return ParsedReply("malformed", name=data["name"],
                                   error="tool call \"arguments\" is not a JSON object")
        if not isinstance(arguments, dict):
            return ParsedReply("malformed", name=data["name"],
                               error="tool call \"arguments\" must be a JSON object")
        return ParsedReply("call", name=data["name"], arguments=arguments)
    answer = _ANSWER.search(text)
    if answer is not None:
        return ParsedReply("answer", answer=_answer_value(answer.group(1)))
    return ParsedReply("answer", answer=_answer_value(text))


__all__ = ["ParsedReply", "SYSTEM_TEMPLATE", "format_answer", "format_call", "gold_replies",
           "parse_reply",
           "short_description", "system_prompt", "tool_views", "tools_prompt"]
