"""Training: the embedded GRPO trainer, the supervised warm start, policies, the OpenRLHF bridge.

The Python API (`agent_world.training.api`) is what the CLI and the evolve graph call. Its names
are imported on first use: `rollout.engine` imports `training.policies`, and an eager import of
the API here (which imports the engine) would run in a circle."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["TrainResult", "default_policy", "evaluate", "load_policy", "pass_rates", "train"]

if TYPE_CHECKING:
    from agent_world.training.api import (
        TrainResult,
        default_policy,
        evaluate,
        load_policy,
        pass_rates,
        train,
    )


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("agent_world.training.api"), name)
    raise AttributeError(f"module 'agent_world.training' has no attribute {name!r}")
