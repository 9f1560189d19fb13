"""The environment engine: EnvSpec, episodes over isolated databases, the tool worker.

Names are imported lazily: the tool worker (`python -m agent_world.envs.worker`) must start
without pulling in SQLAlchemy, Pydantic and jsonschema (10x faster start, a third of the memory).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "StateDiff": "database", "TableDiff": "database",
    "AGENT_FAULTS": "episode", "ENV_FAULTS": "episode", "EnvRuntime": "episode",
    "Episode": "episode", "EpisodeClosed": "episode", "Observation": "episode",
    "ObservationError": "episode",
    "default_runtime": "episode", "open_episode": "episode",
    "ColumnSpec": "table_spec", "EnvSpec": "spec", "Provenance": "spec",
    "TableSpec": "table_spec",
    "TaxonomyPath": "spec", "Theme": "spec", "ToolExpectation": "spec", "ToolSpec": "spec",
    "ToolTest": "spec", "ToolError": "tool_context", "Row": "tool_sql",
    "load_example": "examples", "example_names": "examples",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_world.envs' has no attribute {name!r}")
    return getattr(importlib.import_module(f"agent_world.envs.{module}"), name)
