"""Agent-World arena: a self-evolving training arena for tool-using LLM agents.

The names below are the embedding API (`from agent_world import open_episode, ...`). They are
imported on first use, so `import agent_world` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agent_world.version import __version__

# public name -> (module, attribute)
_EXPORTS: dict[str, tuple[str, str]] = {
    # environments
    "EnvSpec": ("agent_world.envs.spec", "EnvSpec"),
    "EnvRuntime": ("agent_world.envs.episode", "EnvRuntime"),
    "Episode": ("agent_world.envs.episode", "Episode"),
    "open_episode": ("agent_world.envs.episode", "open_episode"),
    "load_example": ("agent_world.envs.examples", "load_example"),
    "Catalog": ("agent_world.envs.catalog", "Catalog"),
    "tool": ("agent_world.envs.toolkit", "tool"),
    "build_env": ("agent_world.envs.authoring", "build_env"),
    # tasks and agents
    "Task": ("agent_world.tasks.model", "Task"),
    "Trajectory": ("agent_world.tasks.model", "Trajectory"),
    "synthesize_tasks": ("agent_world.graphs.synthesize_graph", "synthesize_tasks"),
    "run_attempt": ("agent_world.rollout.react_attempt", "run_attempt"),
    "BaselineChatModel": ("agent_world.rollout.baseline_agent", "BaselineChatModel"),
    # training
    "load_policy": ("agent_world.training.api", "load_policy"),
    "default_policy": ("agent_world.training.api", "default_policy"),
    "evaluate": ("agent_world.training.api", "evaluate"),
    "train": ("agent_world.training.api", "train"),
    # self-evolution
    "EvolveContext": ("agent_world.graphs.evolve_schema", "EvolveContext"),
    "evolve_round": ("agent_world.graphs.evolve_graph", "evolve_round"),
}

__all__ = [  # literal, so linters see the re-exports; the test checks it matches
    "__version__", "EnvSpec", "EnvRuntime", "Episode", "open_episode", "load_example", "Catalog",
    "tool", "build_env", "Task", "Trajectory", "synthesize_tasks", "run_attempt",
    "BaselineChatModel", "load_policy", "default_policy", "evaluate", "train", "EvolveContext",
    "evolve_round",
]

if TYPE_CHECKING:  # for type checkers and IDEs; at runtime `__getattr__` imports lazily
    from agent_world.envs.authoring import build_env
    from agent_world.envs.catalog import Catalog
    from agent_world.envs.episode import EnvRuntime, Episode, open_episode
    from agent_world.envs.examples import load_example
    from agent_world.envs.spec import EnvSpec
    from agent_world.envs.toolkit import tool
    from agent_world.graphs.evolve_graph import evolve_round
    from agent_world.graphs.evolve_schema import EvolveContext
    from agent_world.graphs.synthesize_graph import synthesize_tasks
    from agent_world.rollout.baseline_agent import BaselineChatModel
    from agent_world.rollout.react_attempt import run_attempt
    from agent_world.tasks.model import Task, Trajectory
    from agent_world.training.api import default_policy, evaluate, load_policy, train


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'agent_world' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
