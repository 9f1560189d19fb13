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
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from agent_world.errors import AgentWorldError

Role = Literal["miner", "designer", "synthesizer", "verifier", "diagnoser", "judge", "policy"]
ROLES: tuple[str, ...] = ("miner", "designer", "synthesizer", "verifier", "diagnoser", "judge",
                          "policy")
OFFLINE = "offline"

# Models injected by code (tests pin behaviour with fake chat models; apps embed their own).
_overrides: dict[str, Any] = {}
# Model names chosen for one run (a graph's configuration in Studio): per thread or task, so
# two runs on one server never see each other's choice.
_scoped: ContextVar[dict[str, str] | None] = ContextVar("agent_world_models", default=None)


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
        return _overrides[role]
    name = model_name(role)
    if name == OFFLINE:
        return None
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(name)
    except Exception as exc:  # unknown provider, missing integration package, bad name
        raise AgentWorldError(f"cannot create chat model {name!r} for role {role!r}: {exc}") from exc
