"""The heuristic baseline agent: a LangChain chat model that solves tool tasks without an LLM.

    from agent_world.rollout.baseline_agent import BaselineChatModel
    agent = langchain.agents.create_agent(BaselineChatModel(seed=3), tools)

It is the offline verifier's policy and the training baseline. It sees exactly what any agent
sees — the instruction, the tools' names, descriptions and argument schemas, and the
observations that come back — and never the task's gold chain. Each turn it either calls one
tool or answers:

1. **Values it knows**: literals in the instruction (quoted text, e-mails, dates, codes
   such as `NW1234` or `C-00042`, numbers, money), each with the words just before it
   ("customer C-00042"), plus every field of every successful observation. Dates are read as
   a person writes them ("March 3, 2026 at 14:30", "3 March 2026", ISO) and, when the request
   states its own date ("today is March 1, 2026"), relative to it ("next Friday", "tomorrow",
   "in 3 days"); money as money ("$1,250.00" is 1250.0). They reach the tools as ISO dates and
   plain numbers.
2. **Which tool**: tools are ranked by the overlap between the instruction's words and the
   tool's name and description (rare words weigh more), with a bonus when an argument can be
   filled from the latest observation (chains progress) and a penalty for tools already used.
   Write tools need the instruction to use one of their verbs ("cancel", "book", ...). A tool
   is a candidate only when every required argument can be filled.
3. **Arguments**: an observation field with the argument's name (from the list element that
   best matches the instruction's literals), else an instruction literal whose kind and
   context fit the argument (an e-mail for `email`, "reservation ABC123" for
   `reservation_id`, an enum value the instruction mentions); optional arguments only from
   the instruction.
4. **Answer** when no relevant unused tool is left (or after `max_calls`): the field of the
   latest observations whose name best matches the question's words; "how many" counts the
   matching list items, "total" sums and "highest/lowest" picks by a numeric field.

`seed` and `temperature` make runs differ (ties and near-ties are broken at random), so five
verifier runs are five attempts, not one attempt five times. It can fail, and does: an
instruction that uses other words than the tool descriptions, or a value it cannot place,
leads it astray.

This module picks the next call; steps 1, 3 and 4 are in `baseline_literals`,
`baseline_arguments` and `baseline_answer`.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from agent_world.rollout.baseline_answer import answer_text, filter_items
from agent_world.rollout.baseline_arguments import fill_arguments
from agent_world.rollout.baseline_literals import literals, words

_WRITE_VERBS = frozenset("""book cancel change add update assign check upgrade place return
apply create delete remove set edit move modify save make register reserve issue refund
schedule submit send mark close open rename transfer redeem enroll renew pay charge""".split())


class BaselineChatModel(BaseChatModel):
    """Heuristic tool-using agent as a chat model (see the module docstring)."""

    seed: int = 0
    temperature: float = 0.35
    max_calls: int = 8
    tools: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "agent-world-baseline"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> BaselineChatModel:  # type: ignore[override]
        schemas = [convert_to_openai_tool(t)["function"] for t in tools]
        return self.model_copy(update={"tools": schemas})

    # -- one turn -------------------------------------------------------------------------------
    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        instruction = next((str(m.content) for m in messages if isinstance(m, HumanMessage)), "")
        history = _history(messages)
        rng = random.Random(f"{self.seed}:{len(history)}:{instruction}")
        call = None
        bulk = _BULK.search(instruction) is not None
        if len(history) < self.max_calls + (MAX_BULK if bulk else 0):
            call = self._bulk_call(instruction, history) if bulk else None
            if call is None and not (bulk and _latest_list(history) is not None):
                call = self._next_call(instruction, history, rng, writes=not bulk)
                if call is not None and bulk:  # "every ...": the largest page there is
                    call = (call[0], {**_largest_page(self.tools, call[0]), **call[1]})
        if call is None:
            msg = AIMessage(content=answer_text(instruction, history, rng))
        else:
            name, args = call
            msg = AIMessage(content="", tool_calls=[{
                "name": name, "args": args, "id": f"call_{len(history)}_{rng.randrange(10**6)}",
                "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _bulk_call(self, instruction: str, history: list[dict[str, Any]]
                   ) -> tuple[str, dict[str, Any]] | None:
        """"... every one whose status is 'pending' ...": once a list is observed, the write
        the instruction's verbs name, once per element the instruction's values single out
        (the element's bare `id` stands for `<entity>_id`)."""
        found = _latest_list(history)
        if found is None:
            return None
        list_tool, items = found
        items = filter_items(items, instruction)
        want = set(words(instruction))
        # a write by its verbs (opaque names hide them: the description's first words count)
        writes = [t for t in self.tools if t["name"] != list_tool and
                  (set(words(t["name"])) | set(words(t.get("description", ""))[:4]))
                  & _WRITE_VERBS & want and not
                  set(words(t["name"])[:1] + words(t.get("description", ""))[:1]) & _READS]
        writes.sort(key=lambda t: -len(want & (set(words(t["name"])) |
                                                set(words(t.get("description", ""))))))
        tried = {(h["tool"], json.dumps(h["args"], sort_keys=True)) for h in history}
        lits = literals(instruction)
        # what the listed things are called: the list tool's name and description words
        about = next((words(t["name"]) + words(t.get("description", ""))[:6]
                      for t in self.tools if t["name"] == list_tool), [])
        aliases = {f"{w}_id" for w in about}
        for tool in writes[:1]:
            required = (tool.get("parameters") or {}).get("required") or []
            for item in items:
                seen = dict(item)
                if "id" in item:
                    for alias in aliases:
                        seen.setdefault(alias, item["id"])
                args, _ = fill_arguments(tool, lits, [], {"ok": True, "value": seen}, instruction)
                # the element must feed the write (its key), not a value of the instruction
                if args is not None and any(p in seen and args.get(p) == seen[p]
                                            for p in required) and \
                        (tool["name"], json.dumps(args, sort_keys=True)) not in tried:
                    return tool["name"], args
        return None

    def _next_call(self, instruction: str, history: list[dict[str, Any]],
                   rng: random.Random, writes: bool = True) -> tuple[str, dict[str, Any]] | None:
        if not self.tools:
            return None
        want = Counter(words(instruction))
        lits = literals(instruction)
        docs = {t["name"]: Counter(words(t["name"]) * 2 + words(t.get("description", "")))
                for t in self.tools}
        df = Counter(w for d in docs.values() for w in set(d))
        n = len(docs)
        used = Counter(h["tool"] for h in history if h["ok"])
        tried = {(h["tool"], json.dumps(h["args"], sort_keys=True)) for h in history}
        failed = Counter(h["tool"] for h in history if not h["ok"])
        latest = next((h for h in reversed(history) if h["ok"]), None)
        scored = []
        for tool in self.tools:
            name = tool["name"]
            doc = docs[name]
            relevance = sum(math.log(1 + n / df[w]) for w in want if w in doc)
            relevance /= math.sqrt(1 + len(doc)) ** 0.5
            if relevance <= 0:
                continue
            if not writes and _is_write(tool):
                continue  # a bulk request writes only once it has the list
            writes_ = _is_write(tool)
            if writes_ and not (set(want) & set(words(tool["name"])) & _WRITE_VERBS):
                verbs = set(words(tool.get("description", ""))[:4]) & _WRITE_VERBS
                if not verbs & set(want):
                    continue
            if writes_ and used[name]:
                continue
            args, from_latest = fill_arguments(tool, lits, history, latest, instruction)
            if args is None:
                continue
            if (name, json.dumps(args, sort_keys=True)) in tried:
                continue
            score = relevance * (1.0 + 0.6 * from_latest) / (1 + used[name] + 2 * failed[name])
            scored.append((score, name, args))
        if not scored:
            return None
        scored.sort(key=lambda s: -s[0])
        best = scored[0][0]
        # stop when what is left is far less relevant than what the instruction asks for
        if history and best < 0.35 * max(self._relevance_ceiling(want, docs, df), 1e-9):
            return None
        near = [s for s in scored if s[0] >= best * (1 - self.temperature)]
        weights = [s[0] ** 4 for s in near]
        _, name, args = rng.choices(near, weights=weights)[0]
        return name, args

    @staticmethod
    def _relevance_ceiling(want: Counter, docs: dict[str, Counter], df: Counter) -> float:
        n = len(docs)
        return max(sum(math.log(1 + n / df[w]) for w in want if w in d)
                   / math.sqrt(1 + len(d)) ** 0.5 for d in docs.values())


_READS = frozenset({"list", "search", "get", "find", "count", "view", "show", "look",
                    "summarize", "statistic"})
_BULK = re.compile(r"\b(every|all)\b[^.?!]*\b(whose|with)\b", re.I)
MAX_BULK = 6  # extra calls a bulk request may take (one write per element)


def _largest_page(tools: list[dict[str, Any]], name: str) -> dict[str, Any]:
    props = next(((t.get("parameters") or {}).get("properties") or {} for t in tools
                  if t["name"] == name), {})
    return {p: props[p]["maximum"] for p in ("limit", "page_size", "max_results")
            if isinstance(props.get(p, {}).get("maximum"), int)}


def _latest_list(history: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]] | None:
    """The latest successful list observation (tool, its dict elements)."""
    for h in reversed(history):
        if h["ok"] and isinstance(h["value"], list):
            items = [i for i in h["value"] if isinstance(i, dict)]
            return (h["tool"], items) if items else None
    return None


def _is_write(tool: dict[str, Any]) -> bool:
    head = words(tool["name"])[:1] + words(tool.get("description", ""))[:1]
    return bool(set(head) & _WRITE_VERBS) and not set(head) & {"list", "search", "get",
                                                                "find", "check", "look"}


def _history(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """The calls made so far with their parsed observations."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    out = []
    for m in messages:
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                reply = results.get(tc["id"])
                text = str(reply.content) if reply is not None else ""
                ok = reply is not None and not text.startswith("Error") and \
                    getattr(reply, "status", "success") != "error"
                try:
                    value = json.loads(text) if ok else None
                except json.JSONDecodeError:
                    value = text
                out.append({"tool": tc["name"], "args": tc["args"], "ok": ok, "value": value})
    return out


__all__ = ["BaselineChatModel"]
