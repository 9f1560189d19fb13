"""How a role gets its chat model — the one place LLM backends are chosen.

Roles: miner, designer, synthesizer, verifier, diagnoser, judge, policy.

Selection, first match wins:
  a graph run's configuration   `model` / `<role>_model` (applied with `models_for`)
  AGENT_WORLD_MODEL_<ROLE>   e.g. AGENT_WORLD_MODEL_MINER="openai:gpt-4.1-mini"
  AGENT_WORLD_MODEL          one model for every role
  (neither)                  "offline"

A value is any `langchain.chat_models.init_chat_model` string ("provider:model"); an
OpenAI-compatible server such as vLLM works with "openai:MODEL" plus OPENAI_BASE_URL. "offline"
selects the built-in backend: each agent then runs its documented offline strategy (schema- and
type-driven generation, templates) through the same graph, validation and gates as the LLM path.

Plain chat models (no tool calling, no structured output): a model whose server refuses a
request carrying tools or a response format is switched to the agents' JSON/text protocol the
first time it happens (`use_plain_chat`, logged once per model); AGENT_WORLD_PLAIN_CHAT (roles,
comma-separated, or "all") declares it up front for a server that silently drops tools.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from agent_world.errors import AgentWorldError

Role = Literal["miner", "designer", "synthesizer", "verifier", "diagnoser", "judge", "policy"]
ROLES: tuple[str, ...] = ("miner", "designer", "synthesizer", "verifier", "diagnoser", "judge",
                          "policy")
OFFLINE = "offline"
PLAIN_ENV = "AGENT_WORLD_PLAIN_CHAT"

log = logging.getLogger(__name__)

# Models injected by code (tests pin behaviour with fake chat models; apps embed their own).
_overrides: dict[str, Any] = {}
# Model names chosen for one run (a graph's configuration in Studio): per thread or task, so
# two runs on one server never see each other's choice.
_scoped: ContextVar[dict[str, str] | None] = ContextVar("agent_world_models", default=None)
# Models known to have no tool calling, by (class, model name, endpoint): chat_model() makes a
# new client per call, so the knowledge has to outlive the instance.
_plain: set[tuple[str, str, str]] = set()
_plain_lock = threading.Lock()


def model_name(role: Role) -> str:
    if role not in ROLES:
        raise AgentWorldError(f"unknown model role {role!r}; roles: {', '.join(ROLES)}")
    return ((_scoped.get() or {}).get(role) or os.environ.get(f"AGENT_WORLD_MODEL_{role.upper()}")
            or os.environ.get("AGENT_WORLD_MODEL") or OFFLINE)


def set_chat_model(role: Role, model: Any | None) -> None:
    """Use `model` (a LangChain chat model) for `role`; None removes the override."""
    if model is None:
        _overrides.pop(role, None)
    else:
        _overrides[role] = model


@contextmanager
def models_for(**names: str | None) -> Iterator[None]:
    """Within the block (this thread or task only), `chat_model(role)` uses the model named
    for `role` (an `init_chat_model` string or "offline"); empty names keep the configured
    one. Graphs apply their configuration's `model` this way."""
    for role in names:
        model_name(role)  # type: ignore[arg-type]  # unknown roles are an error
    token = _scoped.set({**(_scoped.get() or {}), **{r: n for r, n in names.items() if n}})
    try:
        yield
    finally:
        _scoped.reset(token)


def chat_model(role: Role) -> Any | None:
    """The chat model for `role`, or None when the offline backend is selected."""
    if role in _overrides:
        model = _overrides[role]
    else:
        name = model_name(role)
        if name == OFFLINE:
            return None
        # imported here: langchain.chat_models doubles the import time of everything that
        # imports this module (~0.5 s), and the offline backend never needs it
        from langchain.chat_models import init_chat_model

        try:
            model = init_chat_model(name)
        except Exception as exc:  # unknown provider, missing integration package, bad name
            raise AgentWorldError(f"cannot create chat model {name!r} for role {role!r}: "
                                  f"{exc}") from exc
    declare_plain(role, model)
    return model


def declare_plain(role: Role, model: Any) -> None:
    """Mark `model` plain (`use_plain_chat`) when AGENT_WORLD_PLAIN_CHAT names `role` or "all";
    for models made outside `chat_model` (a policy given as provider:model)."""
    declared = {r.strip() for r in os.environ.get(PLAIN_ENV, "").split(",") if r.strip()}
    if unknown := sorted(declared - {*ROLES, "all"}):
        raise AgentWorldError(f"{PLAIN_ENV}: unknown role(s) {', '.join(unknown)}; roles: "
                              f"{', '.join(ROLES)} or all")
    if role in declared or "all" in declared:
        use_plain_chat(model, f"{PLAIN_ENV} names the {role} role")


def _model_key(model: Any) -> tuple[str, str, str]:
    name = next((v for a in ("model_name", "model", "model_id")
                 if isinstance(v := getattr(model, a, None), str) and v), f"id:{id(model)}")
    base = next((str(v) for a in ("openai_api_base", "base_url", "anthropic_api_url")
                 if (v := getattr(model, a, None))), "")
    for attr in ("root_client", "_client") if not base else ():  # endpoint from the environment
        client = getattr(model, attr, None)
        url = getattr(client, "base_url", None) or getattr(getattr(client, "_client", None),
                                                           "base_url", None)
        if url:
            base = str(url)
            break
    return type(model).__name__, name, base


def plain_chat(model: Any) -> bool:
    """Whether `model` is known to have no tool calling (agents then use text/JSON)."""
    return _model_key(model) in _plain


def use_plain_chat(model: Any, reason: str) -> None:
    """From now on every agent talks to `model` through the JSON/text protocol; the switch is
    logged once per model (class, name, endpoint)."""
    key = _model_key(model)
    with _plain_lock:
        if key in _plain:
            return
        _plain.add(key)
    log.warning("chat model %s (%s): %s; the agents use the JSON/text protocol with it",
                key[1], key[2] or key[0], reason)
