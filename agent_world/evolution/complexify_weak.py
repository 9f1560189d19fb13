"""Database complexification of weak training environments, as a diagnosis asks for it.

One more complexification iteration of the miner (`agent_world.mining.complexify_step.complexify`: more
tables and relations, skew, edge cases, more rows) on the environment's latest version; the new
version is kept only if every tool test of the environment still passes on it, else the reason
goes to the ledger and the environment stays as it was. The new version's provenance carries
`tag` (e.g. "evolve crash/round-2"): a resumed round finds it and does not complexify twice.
"""

from __future__ import annotations

from typing import Any

from agent_world.envs import testing
from agent_world.errors import AgentWorldError
from agent_world.mining.complexify_step import complexify


def complexify_environments(catalog: Any, names: list[str], tag: str, seed: int = 0,
                            run_id: str | None = None) -> dict[str, str]:
    """Complexify each environment once; env name → "complexified" or the reason it was not."""
    out: dict[str, str] = {}
    for name in names:
        spec = catalog.get_env(name)
        if tag in spec.provenance.notes:
            out[name] = "complexified"
            continue
        stage = next((e.stage for e in catalog.list_envs() if e.name == name), "built")
        done = len(spec.provenance.stats.get("iterations") or [])
        try:
            new = complexify(spec, iteration=done + 1, seed=seed)
            failures = testing.verify_spec(new)  # looked up on each call (tests replace it)
        except AgentWorldError as exc:
            failures = [str(exc)]
        if failures:
            reason = f"complexification kept out: {failures[0]}"
            catalog.record("evolve", name, reason, run_id=run_id)
            out[name] = reason
            continue
        prov = new.provenance.model_copy(update={"notes": [*new.provenance.notes, tag]})
        catalog.put_env(new.model_copy(update={"provenance": prov}), stage=stage)
        out[name] = "complexified"
    return out


__all__ = ["complexify_environments"]
