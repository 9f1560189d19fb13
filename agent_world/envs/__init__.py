"""The environment engine: EnvSpec, episodes over isolated databases, the tool worker."""

from agent_world.envs.database import StateDiff, TableDiff
from agent_world.envs.episode import (
    AGENT_FAULTS,
    ENV_FAULTS,
    EnvRuntime,
    Episode,
    Observation,
    ObservationError,
    default_runtime,
    open_episode,
)
from agent_world.envs.spec import (
    ColumnSpec,
    EnvSpec,
    Provenance,
    TableSpec,
    TaxonomyPath,
    Theme,
    ToolExpectation,
    ToolSpec,
    ToolTest,
)

__all__ = [
    "AGENT_FAULTS", "ENV_FAULTS", "ColumnSpec", "EnvRuntime", "EnvSpec", "Episode",
    "Observation", "ObservationError", "Provenance", "StateDiff", "TableDiff", "TableSpec",
    "TaxonomyPath", "Theme", "ToolExpectation", "ToolSpec", "ToolTest", "default_runtime",
    "open_episode",
]
