"""What every graph reads from its run's configuration: the arena home and the chat models.

A graph's context schema (what LangGraph Studio shows as its configuration) may name

* `home`: the arena home (catalog, checkpoints, artefacts); else the `home` of the run's
  `configurable` (what `agent_world.graphs.runner` sets), else `$AGENT_WORLD_HOME`, else
  `~/.agent_world`;
* `<role>_model` (pipeline graphs: `miner_model`, `designer_model`, ...) or `model` (an agent's
  own graph, for its `ROLE`): an `init_chat_model` string or "offline"; empty keeps the role's
  configured model (`AGENT_WORLD_MODEL_<ROLE>`, `AGENT_WORLD_MODEL`, else offline).

A node that reads its settings takes `runtime: Runtime[XContext]` (LangGraph passes it) and
reads them with `checked_context(runtime, XContext)`, the one way: the context as an `XContext`
instance whether the run gave a dict (a LangGraph server, `invoke(..., context={...})`), an
instance or nothing (the defaults), every value checked against its declared type. A server
builds the context from what a client sent without checking types, so a wrong value would
otherwise surface deep inside a stage; here it is one `ContextError` naming the field.

`arena_home(config)` resolves the home inside a node; `with_models(node)` wraps a node so that
`agent_world.models.chat_model(role)` returns the models the run's context names, for that
run only (other runs on the same server keep theirs). Every context schema is an
`ArenaContext` (its `home`); `setting`, `home_field` and `model_field` declare a context field
with the description Studio shows.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Self, TypeVar

from annotated_types import Ge
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime, get_runtime
from pydantic import TypeAdapter, ValidationError

from agent_world import scaleout
from agent_world.config import resolve_home
from agent_world.errors import ContextError
from agent_world.models import ROLES, models_for

T = TypeVar("T")


def run_context() -> Any:
    """The current run's context object (None outside a graph run or without one), for the
    wrappers that see no node's `runtime` (`arena_home`, `with_models`); a node reads its
    settings with `checked_context`."""
    try:
        return get_runtime().context
    except (RuntimeError, KeyError):
        return None


def setting(default: Any, description: str) -> Any:
    """A context schema's field with its default (a list: a fresh copy per instance) and the
    description Studio shows."""
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default),
                                 metadata={"description": description})
    return dataclasses.field(default=default, metadata={"description": description})


def home_field() -> Any:
    """The `home` field of a context schema (a dataclass), described for Studio."""
    return dataclasses.field(default=None, metadata={
        "description": "Arena home (catalog, checkpoints); default $AGENT_WORLD_HOME, else "
                       "~/.agent_world."})


@dataclasses.dataclass
class ArenaContext:
    """What every graph's context holds: where the arena lives (each graph adds its settings)."""

    home: str | None = home_field()

    @classmethod
    def of(cls, runtime: Runtime[Any] | None) -> Self:
        """The run's context as this schema, checked (`checked_context`)."""
        return checked_context(runtime, cls)


@dataclasses.dataclass
class ScaledContext(ArenaContext):
    """A stage graph's context: the arena, and where its per-source / per-environment work
    runs (`agent_world.scaleout`)."""

    workers: Annotated[int, Ge(1)] | None = scaleout.workers_field()
    ray_address: str | None = scaleout.ray_field()


def model_field(role: str) -> Any:
    """The `<role>_model` field of a pipeline graph's context schema, described for Studio."""
    return dataclasses.field(default="", metadata={
        "description": f"The {role}'s chat model, \"provider:model\" or \"offline\"; empty: "
                       "the configured one (AGENT_WORLD_MODEL_<ROLE>, AGENT_WORLD_MODEL)."})


@functools.cache
def _adapter(schema: type[Any]) -> TypeAdapter[Any]:
    return TypeAdapter(schema)


def checked_context(runtime: Runtime[Any] | None, schema: type[T]) -> T:
    """The run's context (`runtime.context`; None or no runtime: the defaults) as a `schema`
    instance, every value checked against its declared type (numbers given as numeric text are
    taken; keys the schema lacks are ignored); a wrong one is a `ContextError` naming the field
    and the value, raised before the node does any work."""
    ctx = getattr(runtime, "context", None)
    if dataclasses.is_dataclass(ctx) and not isinstance(ctx, type):
        raw = {f.name: getattr(ctx, f.name) for f in dataclasses.fields(ctx)}
    elif ctx is None or isinstance(ctx, Mapping):
        raw = dict(ctx or {})
    else:
        raise ContextError(f"context: expected a {schema.__name__} or a mapping of its "
                           f"fields, got {type(ctx).__name__}")
    try:
        return _adapter(schema).validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        got = repr(first.get("input"))
        got = got if len(got) <= 80 else got[:77] + "..."
        raise ContextError(f"context.{where}: {first['msg']} (got {got})") from None


def _field(ctx: Any, name: str) -> Any:
    return ctx.get(name) if isinstance(ctx, dict) else getattr(ctx, name, None)


def arena_home(config: RunnableConfig | None = None) -> Path:
    """The run's arena home (see the module docstring); created if missing."""
    home = _field(run_context(), "home") or ((config or {}).get("configurable") or {}).get("home")
    return resolve_home(home)


def context_models(ctx: Any) -> dict[str, str]:
    """role → model name chosen by a context: its `<role>_model` fields and, for an agent's
    context, `model` for the context's `ROLE`."""
    if ctx is None:
        return {}
    chosen = {role: _field(ctx, f"{role}_model") for role in ROLES}
    role = getattr(ctx, "ROLE", None)
    if role and _field(ctx, "model"):
        chosen[role] = _field(ctx, "model")
    return {r: str(m) for r, m in chosen.items() if m}


def with_models(node: Callable[..., Any]) -> Callable[..., Any]:
    """`node` run with the chat models its run's context names (signature kept: LangGraph
    still passes `config` / `runtime` to it)."""

    @functools.wraps(node)
    def run(*args: Any, **kwargs: Any) -> Any:
        with models_for(**context_models(run_context())):
            return node(*args, **kwargs)

    return run


__all__ = ["ArenaContext", "ScaledContext", "arena_home", "checked_context", "context_models", "home_field", "model_field",
           "run_context", "setting", "with_models"]
