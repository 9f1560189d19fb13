"""A trained policy behind an OpenAI-compatible chat-completions endpoint (`agent-world
serve-policy`), so any OpenAI client, `vf-eval` or an agent framework can drive it.

    served = load_served("runs/r1/checkpoints/step-000020/model")  # or smollm2, tiny
    serve(served, host="127.0.0.1", port=8767, token="...")        # GET /v1/models,
                                                                     # POST /v1/chat/completions

The policy sees a request the way the arena's rollouts show an episode (`rollout.run_rollouts`):
the request's `tools` become the system prompt of `toolcall.tools_prompt` (compact or full, as
the checkpoint was trained), then the user's message, the assistant's replies as the policy
wrote them (`tool_calls` as `<tool_call>` text, final answers as `<answer>` text) and tool
results as role "tool" messages. Its reply is read with `toolcall.parse_reply`: a call comes
back in OpenAI's `tool_calls` (finish_reason "tool_calls"), an answer as content. A reply that
tries a call but cannot be read comes back as its raw text: the client sees what was written.

Sampling is the rollouts' own (`HFPolicy`); `temperature` (default 1, as OpenAI's), `top_p`,
`max_tokens` / `max_completion_tokens`, `seed`, `n` and `stop` are honoured; options that would
change the reply but are not implemented (logprobs, penalties, forced tool choice, JSON
response formats) are refused with a 400 rather than ignored.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent_world.errors import AgentWorldError
from agent_world.rollout.policy import EpisodeState
from agent_world.rollout.toolcall import (
    COMPACT_TEMPLATE,
    SYSTEM_TEMPLATE,
    format_answer,
    format_call,
    parse_reply,
    tools_prompt,
)
from agent_world.serving import BearerAuth
from agent_world.training.api import load_policy
from agent_world.training.lm import ADAPTER_CONFIG, load_lm
from agent_world.training.policies import STOP_STRINGS, HFPolicy

DEFAULT_PORT = 8767
MAX_CHOICES = 16  # `n`: one decoding batch


# -- request and response bodies (the subset of OpenAI's chat-completions API served) ---------
class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class FunctionCall(BaseModel):
    name: str
    arguments: str = "{}"  # JSON text, as OpenAI sends it


class ToolCall(BaseModel):
    id: str = ""
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(BaseModel):
    # clients add fields this server has no use for (`name`, `refusal`, `reasoning_content`)
    model_config = ConfigDict(extra="ignore")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None


class FunctionDef(BaseModel):
    model_config = ConfigDict(extra="ignore")  # `strict`: the policy's text is not constrained
    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}})


class ToolDef(BaseModel):
    type: Literal["function"]
    function: FunctionDef


class StreamOptions(BaseModel):
    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    # fields that change nothing here (user, metadata, store, parallel_tool_calls, ...) pass
    model_config = ConfigDict(extra="ignore")
    model: str
    messages: list[Message] = Field(min_length=1)
    tools: list[ToolDef] | None = None
    tool_choice: Any = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    seed: int | None = None
    n: int = Field(1, ge=1, le=MAX_CHOICES)
    stop: str | list[str] | None = None
    stream: bool = False
    stream_options: StreamOptions | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    response_format: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _served(self) -> ChatCompletionRequest:
        if self.tool_choice not in (None, "auto", "none"):
            raise ValueError("tool_choice: only 'auto' and 'none' are served (the policy "
                             "samples freely; a call cannot be forced)")
        if self.logprobs or self.top_logprobs:
            raise ValueError("logprobs are not served")
        if self.presence_penalty or self.frequency_penalty:
            raise ValueError("presence_penalty and frequency_penalty are not served")
        if self.response_format and self.response_format.get("type", "text") != "text":
            raise ValueError("response_format: only 'text' is served")
        return self

    @property
    def offers_tools(self) -> bool:
        return bool(self.tools) and self.tool_choice != "none"

    @property
    def reply_limit(self) -> int | None:
        return self.max_completion_tokens or self.max_tokens


class ResponseMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str | None
    tool_calls: list[ToolCall] | None = None


class Choice(BaseModel):
    index: int
    message: ResponseMessage
    finish_reason: Literal["stop", "length", "tool_calls"]
    logprobs: None = None


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "agent-world"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class RequestError(AgentWorldError):
    """A request the policy cannot answer as asked (400)."""


# -- the policy -------------------------------------------------------------------------------
def model_dir(ref: str) -> Path:
    """The directory save_pretrained wrote for a policy reference (a whole model, or a LoRA
    adapter): the directory itself, or a training checkpoint (`checkpoints/step-N`) holding it
    as `model/`."""
    path = Path(ref).expanduser()
    for candidate in (path, path / "model"):
        if (candidate / "config.json").is_file() or (candidate / ADAPTER_CONFIG).is_file():
            return candidate
    if not path.exists():
        raise AgentWorldError(f"no policy at {ref!r}: give a directory written by "
                              "save_pretrained (what `agent-world train` and `evolve` write as "
                              "checkpoints), smollm2 or tiny")
    raise AgentWorldError(f"{ref!r} is not a policy directory: no config.json in it or in its "
                          "model/ (give what save_pretrained wrote, e.g. a checkpoint's model/)")


@dataclass
class ServedPolicy:
    """A loaded policy and how it was trained to be prompted (compact tool listing, reply and
    conversation token limits: the checkpoint's `agent_world_policy.json`)."""

    model: Any
    tokenizer: Any
    name: str
    compact_tools: bool = True
    max_new_tokens: int = 128
    max_total_tokens: int = 4096
    # one generation at a time: the model is CPU/GPU-bound anyway, and `seed` seeds torch's
    # global generator, which a concurrent request would draw from
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    created: int = field(default_factory=lambda: int(time.time()))

    # -- request -> the conversation the policy sees --------------------------------------------
    def conversation(self, request: ChatCompletionRequest) -> list[dict[str, str]]:
        """The request's messages laid out as a rollout lays out an episode."""
        tools = request.offers_tools
        messages = list(request.messages)
        system = []
        while messages and messages[0].role in ("system", "developer"):
            system.append(_text(messages.pop(0)))
        if tools:
            # the tool listing first, exactly as in training (the prefix the policy knows);
            # the client's own instructions after it
            views = [t.function.model_dump() for t in request.tools or []]
            system.insert(0, tools_prompt(views, compact=self.compact_tools))
        out = [{"role": "system", "content": "\n\n".join(system)}] if system else []
        for m in messages:
            role = "system" if m.role == "developer" else m.role
            if m.role == "assistant":
                out.append({"role": "assistant", "content": _assistant_text(m, tools)})
            else:
                out.append({"role": role, "content": _text(m)})
        return out

    def complete(self, request: ChatCompletionRequest) -> ChatCompletion:
        conversation = self.conversation(request)
        temperature = 1.0 if request.temperature is None else request.temperature
        top_p = 1.0 if request.top_p is None else request.top_p
        # the rollouts' own sampler: a fresh HFPolicy per request (its settings are per
        # instance; the model and tokenizer are shared), `n` choices in one decoding batch
        policy = HFPolicy(self.model, self.tokenizer, name=self.name,
                          max_total_tokens=self.max_total_tokens, temperature=temperature,
                          top_p=top_p, compact_tools=self.compact_tools)
        prompt_tokens = len(policy.encode(policy.render(conversation, True)))
        room = self.max_total_tokens - prompt_tokens
        limit = request.reply_limit
        if limit is None:
            limit = min(self.max_new_tokens, room)
        if limit < 1 or limit > room:
            raise RequestError(
                f"This model's maximum context length is {self.max_total_tokens} tokens: the "
                f"messages take {prompt_tokens} and the reply may take {limit or 0}; shorten "
                "the conversation or lower max_tokens")
        policy.max_new_tokens = limit
        states = [EpisodeState(task=None, tools=[], messages=list(conversation))  # type: ignore[arg-type]
                  for _ in range(request.n)]  # a token policy reads only the messages
        with self.lock:
            if request.seed is not None:
                torch.manual_seed(request.seed)
            replies = policy.act(states)
        choices = []
        completion_tokens = 0
        for i, (state, text) in enumerate(zip(states, replies, strict=True)):
            assert state.trace is not None
            generated = sum(state.trace.mask)
            completion_tokens += generated
            # a reply cut by the limit ends in the end-of-turn token the policy did not write
            # (as does one that ended at its closing tag)
            tagged = text.endswith(STOP_STRINGS)
            text, stopped = _stopped(text, request.stop)
            cut = state.trace.mask[-1] == 0 and not (tagged or stopped)
            choices.append(_choice(i, text, request.offers_tools, cut))
        return ChatCompletion(
            id=f"chatcmpl-{uuid.uuid4().hex}", created=int(time.time()), model=self.name,
            choices=choices, usage=Usage(prompt_tokens=prompt_tokens,
                                         completion_tokens=completion_tokens,
                                         total_tokens=prompt_tokens + completion_tokens))


def _text(message: Message) -> str:
    content = message.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if any(p.type != "text" for p in content):
        kinds = sorted({p.type for p in content if p.type != "text"})
        raise RequestError(f"{message.role} message: only text content is served, not "
                           f"{', '.join(kinds)}")
    return "".join(p.text or "" for p in content)


def _assistant_text(message: Message, tools: bool) -> str:
    """An assistant turn as the policy writes it: its calls as `<tool_call>` text, a final
    answer (when tools are in play) inside `<answer>`."""
    text = _text(message).strip()
    if message.tool_calls:
        calls = []
        for call in message.tool_calls:
            try:
                arguments = json.loads(call.function.arguments or "{}")
            except ValueError as exc:
                raise RequestError(f"assistant tool call {call.function.name!r}: arguments "
                                   f"are not JSON ({exc})") from None
            if not isinstance(arguments, dict):
                raise RequestError(f"assistant tool call {call.function.name!r}: arguments "
                                   "must be a JSON object")
            calls.append(format_call(call.function.name, arguments))
        return "\n".join(([text] if text else []) + calls)
    return format_answer(text) if tools else text


def _stopped(text: str, stop: str | list[str] | None) -> tuple[str, bool]:
    """`text` up to the first stop sequence (the reply is generated whole, then cut), and
    whether one was found."""
    found = False
    for s in [stop] if isinstance(stop, str) else stop or []:
        if s and s in text:
            text, found = text[:text.index(s)], True
    return text, found


def _choice(index: int, text: str, tools: bool, cut: bool) -> Choice:
    finish: Literal["stop", "length"] = "length" if cut else "stop"
    if not tools:
        return Choice(index=index, message=ResponseMessage(content=text), finish_reason=finish)
    parsed = parse_reply(text)
    if parsed.kind == "call":
        before = text[:text.find("<tool_call>")].strip()
        call = ToolCall(id=f"call_{uuid.uuid4().hex[:24]}", function=FunctionCall(
            name=parsed.name or "",
            arguments=json.dumps(parsed.arguments, ensure_ascii=False)))
        return Choice(index=index, message=ResponseMessage(content=before or None,
                                                           tool_calls=[call]),
                      finish_reason="tool_calls")
    if parsed.kind == "answer":
        answer = parsed.answer
        content = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        return Choice(index=index, message=ResponseMessage(content=content),
                      finish_reason=finish)
    # a call the policy could not write: no call to hand over, so its words as they are
    return Choice(index=index, message=ResponseMessage(content=text), finish_reason=finish)


def load_served(ref: str, device: str = "auto", name: str | None = None,
                base: str | None = None) -> ServedPolicy:
    """The policy `ref` names: a save_pretrained directory (or a checkpoint holding one as
    model/), "smollm2", or "tiny" (random and untrained: a smoke test of the endpoint), on
    `device` (auto: the GPU when torch sees one). A LoRA adapter directory is merged into its
    base model (`lm.adapter_base`: `base`, a training run's base/, or the adapter config's)."""
    if ref == "tiny":
        model, tok = load_lm("tiny", corpus=[SYSTEM_TEMPLATE, COMPACT_TEMPLATE])
        policy = HFPolicy(model.eval(), tok, name="tiny")
    elif ref == "smollm2":
        policy = load_policy("smollm2")  # type: ignore[assignment]
    else:
        path = model_dir(ref)
        if base and not (path / ADAPTER_CONFIG).is_file():
            raise AgentWorldError(f"--base is for a LoRA adapter; {path} holds a whole model")
        try:
            policy = load_policy(str(path), base=base)  # type: ignore[assignment]
        except (OSError, ValueError) as exc:  # missing or broken weights, settings not JSON
            raise AgentWorldError(f"cannot load the policy in {path}: {exc}") from None
    assert isinstance(policy, HFPolicy)
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        model = policy.model.to(torch.device(device))
    except (RuntimeError, AssertionError) as exc:  # no such device / torch built without it
        raise AgentWorldError(f"cannot put the policy on device {device!r}: {exc}") from None
    return ServedPolicy(model, policy.tokenizer, name=name or ref,
                        compact_tools=policy.compact_tools,
                        max_new_tokens=policy.max_new_tokens,
                        max_total_tokens=policy.max_total_tokens)


# -- HTTP -------------------------------------------------------------------------------------
def _error(status: int, message: str, param: str | None = None) -> JSONResponse:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return JSONResponse({"error": {"message": message, "type": kind, "param": param,
                                   "code": None}}, status_code=status)


def _chunks(done: ChatCompletion, usage: bool) -> Iterator[str]:
    """A completion as server-sent events. The reply is generated whole before the first
    event: a tool call can only be told from an answer once the text is complete."""
    def event(choices: list[dict[str, Any]], **extra: Any) -> str:
        body = {"id": done.id, "object": "chat.completion.chunk", "created": done.created,
                "model": done.model, "choices": choices, **extra}
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    for c in done.choices:
        delta: dict[str, Any] = {"role": "assistant", "content": c.message.content}
        if c.message.tool_calls:
            delta["tool_calls"] = [{"index": k, **call.model_dump()}
                                   for k, call in enumerate(c.message.tool_calls)]
        yield event([{"index": c.index, "delta": delta, "finish_reason": None}])
        yield event([{"index": c.index, "delta": {}, "finish_reason": c.finish_reason}])
    if usage:
        yield event([], usage=done.usage.model_dump())
    yield "data: [DONE]\n\n"


def create_app(served: ServedPolicy, token: str | None = None) -> Any:
    """The ASGI app: /v1/models and /v1/chat/completions, behind the bearer token if one is
    given."""
    app = FastAPI(title=f"agent-world policy {served.name}", docs_url=None, redoc_url=None)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for e in exc.errors():
            where = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
            problems.append(f"{where}: {e.get('msg')}" if where else str(e.get("msg")))
        return _error(400, "invalid request: " + "; ".join(problems))

    @app.exception_handler(HTTPException)
    async def _http(_: Request, exc: HTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(RequestError)
    async def _request(_: Request, exc: RequestError) -> JSONResponse:
        return _error(400, str(exc))

    @app.get("/v1/models")
    def models() -> ModelList:
        return ModelList(data=[ModelCard(id=served.name, created=served.created)])

    @app.post("/v1/chat/completions", response_model=None)
    def chat_completions(request: ChatCompletionRequest) -> Any:
        if request.model != served.name:
            raise HTTPException(404, f"model {request.model!r} is not served here; this "
                                     f"server serves {served.name!r} (GET /v1/models)")
        done = served.complete(request)
        if request.stream:
            include = request.stream_options is not None and request.stream_options.include_usage
            return StreamingResponse(_chunks(done, include), media_type="text/event-stream")
        return done

    return BearerAuth(app, token) if token else app


def serve(served: ServedPolicy, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
          token: str | None = None) -> None:
    """Serve until stopped (uvicorn handles SIGINT/SIGTERM)."""
    print(f"serving {served.name} at http://{host}:{port}/v1 (OpenAI chat completions)",
          file=sys.stderr, flush=True)
    uvicorn.run(create_app(served, token), host=host, port=port, log_level="warning")


__all__ = ["DEFAULT_PORT", "ChatCompletion", "ChatCompletionRequest", "RequestError",
           "ServedPolicy", "create_app", "load_served", "model_dir", "serve"]
