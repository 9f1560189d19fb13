"""Training: the embedded GRPO trainer, the supervised warm start, policies, the OpenRLHF bridge.

The Python API (`agent_world.training.api`) is what the CLI and the evolve graph call."""

from agent_world.training.api import (
    TrainResult,
    default_policy,
    evaluate,
    load_policy,
    pass_rates,
    train,
)

__all__ = ["TrainResult", "default_policy", "evaluate", "load_policy", "pass_rates", "train"]
