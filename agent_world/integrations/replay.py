"""A stand-in model behind an OpenAI-compatible client, with no server and no network: it
replays each task's gold chain as native tool calls, then answers.

    client = replay_openai_client(tasks)            # openai.AsyncOpenAI on an in-process transport
    reply = await client.chat.completions.create(model="replay", messages=[...], tools=[...])

The task is found by the conversation's last user message (its instruction); the k-th
completion after it is the chain's k-th call (under the name the agent sees), and once the
chain is done the reference answer (or "Done."). `wrong=True` answers "I cannot help." at once.
Adapter tests and `benchmarks/adapter_bench.py` use it to drive peer libraries' own rollout
code with a policy whose outcome is known.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx

from agent_world.tasks.model import Task


def _reply(tasks: dict[str, Task], body: dict[str, Any], wrong: bool) -> dict[str, Any]:
    messages = body.get("messages") or []
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        raise ValueError("the conversation has no user message")
    instruction = messages[users[-1]].get("content")
    if isinstance(instruction, list):
        instruction = "".join(p.get("text", "") for p in instruction if isinstance(p, dict))
    task = tasks.get(str(instruction).strip())
    done = sum(1 for m in messages[users[-1]:] if m.get("role") == "assistant")
    message: dict[str, Any] = {"role": "assistant", "content": None}
    finish = "stop"
    if task is not None and not wrong and done < len(task.chain):
        call = task.chain[done]
        visible = {real: vis for vis, real in task.tool_view.items()}.get(call.tool, call.tool)
        message["tool_calls"] = [{"id": f"call_{done}", "type": "function", "function": {
            "name": visible, "arguments": json.dumps(call.arguments)}}]
        finish = "tool_calls"
    elif task is None or wrong:
        message["content"] = "I cannot help."
    else:
        ref = task.reference_answer
        message["content"] = "Done." if ref is None else (
            ref if isinstance(ref, str) else json.dumps(ref))
    return {"id": f"replay-{done}", "object": "chat.completion", "created": 0,
            "model": body.get("model", "replay"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish,
                         "logprobs": None}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def replay_transport(tasks: Sequence[Task], wrong: bool = False) -> Any:
    """An httpx transport answering POST /chat/completions like an OpenAI-compatible server."""
    by_instruction = {t.instruction.strip(): t for t in tasks}

    def handle(request: httpx.Request) -> httpx.Response:
        if not request.url.path.endswith("/chat/completions"):
            return httpx.Response(404, json={"error": {"message": "not found"}})
        return httpx.Response(200, json=_reply(by_instruction, json.loads(request.content),
                                               wrong))

    return httpx.MockTransport(handle)


def replay_openai_client(tasks: Sequence[Task], wrong: bool = False) -> Any:
    """An `openai.AsyncOpenAI` client whose requests go to `replay_transport`."""
    from openai import AsyncOpenAI  # an optional package (the openenv and verifiers extras)

    return AsyncOpenAI(base_url="http://replay.invalid/v1", api_key="replay",
                       http_client=httpx.AsyncClient(transport=replay_transport(tasks, wrong)))


__all__ = ["replay_openai_client", "replay_transport"]
