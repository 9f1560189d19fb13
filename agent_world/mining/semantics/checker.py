"""The entry point of the semantic checks: `check_semantics` runs every rule over a spec's
rows."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.mining.semantics.invariants import _check_invariants, spec_invariants
from agent_world.mining.semantics.lifecycle_rule import _check_lifecycle
from agent_world.mining.semantics.routes import _check_routes
from agent_world.mining.semantics.times import _check_times
from agent_world.mining.semantics.values import _check_values
from agent_world.mining.semantics.violations import Violation


def check_semantics(spec: EnvSpec, hints: dict[str, dict[str, dict[str, Any]]] | None = None
                    ) -> list[Violation]:
    """Every semantic violation in the spec's rows (empty: the database means what it says)."""
    if hints is None:
        hints = spec.provenance.stats.get("field_hints") or {}
    index: dict[str, dict[Any, dict[str, Any]]] = defaultdict(dict)
    for t in spec.tables:
        pk = t.primary_key
        if len(pk) != 1:
            continue
        index[t.name] = {r.get(pk[0]): r for r in spec.rows.get(t.name, [])}
    return [*_check_values(spec, hints), *_check_routes(spec, index),
            *_check_times(spec, index), *_check_lifecycle(spec),
            *_check_invariants({t.name: t for t in spec.tables}, spec.rows,
                               spec_invariants(spec))]
