"""Any LangChain chat model as a policy the rollout engine drives (`rollout.policy.Policy`):
an OpenAI-compatible endpoint such as vLLM, a hosted model, the heuristic baseline."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from agent_world import models
from agent_world.plain_chat import refuses_tools
from agent_world.rollout.policy import EpisodeState
from agent_world.rollout.toolcall import format_call


class ChatModelPolicy:
    """Any LangChain chat model as a policy. Models with native tool calling get the task's
    tools bound; their calls are written back in the text format so one parser validates every
    policy's calls alike. A model without tool calling (its server refuses a request carrying
    tools: HTTP 400/422/501; or marked plain, e.g. by AGENT_WORLD_PLAIN_CHAT) is asked without
    them: the system prompt already lists the tools in the text protocol (`toolcall`), and the
    conversation goes as text, earlier native calls and their results included. The switch is
    logged once per model (`models.use_plain_chat`)."""

    def __init__(self, model: Any, name: str = "chat", native_tools: bool = True,
                 max_concurrency: int = 16):
        self.model, self.name = model, name
        self.native_tools = native_tools and hasattr(model, "bind_tools")
        self.max_concurrency = max_concurrency
        self.compact_tools = False  # chat models read the full JSON schemas

    @staticmethod
    def to_langchain(messages: list[dict[str, Any]], plain: bool = False) -> list[Any]:
        """The conversation as LangChain messages; `plain`: no tool-call records (the calls stay
        in the assistant's text, results come as user turns) for a model without tools."""
        out: list[Any] = []
        for m in messages:
            role, content = m["role"], m["content"]
            if role == "system":
                out.append(SystemMessage(content))
            elif role == "user":
                out.append(HumanMessage(content))
            elif role == "assistant":
                calls = [] if plain else m.get("tool_calls") or []
                out.append(AIMessage(content="" if calls else content, tool_calls=[
                    {"id": c["id"], "name": c["name"], "args": c["args"]} for c in calls]))
            elif m.get("tool_call_id") and not plain:
                out.append(ToolMessage(content, tool_call_id=m["tool_call_id"]))
            else:
                out.append(HumanMessage(f"Tool result:\n{content}"))
        return out

    def _reply(self, state: EpisodeState) -> Any:
        refused = ""
        if self.native_tools and not models.plain_chat(self.model):
            bound = self.model.bind_tools([{"type": "function", "function": t}
                                           for t in state.tools])
            try:
                return bound.invoke(self.to_langchain(state.messages))
            except Exception as exc:
                if not refuses_tools(exc):
                    raise
                refused = f"tool calling refused ({type(exc).__name__}: {exc})"[:300]
        reply = self.model.invoke(self.to_langchain(state.messages, plain=True))
        if refused:  # the text request worked: the model is plain, not unreachable
            models.use_plain_chat(self.model, refused)
        return reply

    def _one(self, state: EpisodeState) -> str:
        reply = self._reply(state)
        calls = getattr(reply, "tool_calls", None) or []
        if calls:
            call = calls[0]
            state.native_call = {
                "id": call.get("id") or f"call_{len(state.messages)}", "name": call["name"],
                "args": call.get("args") or {}}
            return format_call(call["name"], call.get("args") or {})
        content = reply.content
        if isinstance(content, list):  # content blocks
            content = "".join(b.get("text", "") if isinstance(b, dict) else str(b)
                              for b in content)
        return content if isinstance(content, str) else json.dumps(content)

    def act(self, states: list[EpisodeState]) -> list[str]:
        if len(states) <= 1:
            return [self._one(s) for s in states]
        with ThreadPoolExecutor(min(self.max_concurrency, len(states))) as pool:
            return list(pool.map(self._one, states))


__all__ = ["ChatModelPolicy"]
