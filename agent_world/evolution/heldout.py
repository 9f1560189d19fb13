"""The held-out split: environments the policy never trains on, fixed once assigned.

`split_environments` assigns new environments deterministically (a hash of name and seed, so the
same arena gives the same split on every machine) and keeps every earlier assignment: an
environment that was held out stays held out, whatever joins later. At least one environment is
held out and at least one trains whenever there are two or more.
"""

from __future__ import annotations

import hashlib
from typing import Any

from agent_world.errors import AgentWorldError


def _rank(name: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}\x00{name}".encode()).hexdigest()


def split_environments(catalog: Any, env_names: list[str], fraction: float = 0.34,
                       seed: int = 0) -> tuple[list[str], list[str]]:
    """(train, heldout) names among `env_names`; new ones are assigned and stored."""
    if not 0 < fraction < 1:
        raise AgentWorldError(f"held-out fraction must be between 0 and 1, not {fraction}")
    names = sorted(set(env_names))
    known = catalog.splits()
    new = [n for n in names if n not in known]
    if new:
        held_known = sum(1 for n in names if known.get(n) == "heldout")
        want = max(1, round(fraction * len(names))) if len(names) > 1 else 0
        want = min(want, len(names) - 1)
        take = max(0, want - held_known)
        order = sorted(new, key=lambda n: _rank(n, seed))
        assignment = {n: ("heldout" if i < take else "train") for i, n in enumerate(order)}
        if not any(known.get(n) == "train" for n in names) and take >= len(new) and new:
            assignment[order[-1]] = "train"  # never hold out everything
        known = catalog.assign_split(assignment)
    train = [n for n in names if known.get(n) == "train"]
    heldout = [n for n in names if known.get(n) == "heldout"]
    return train, heldout


__all__ = ["split_environments"]
