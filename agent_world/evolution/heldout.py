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
                       seed: int = 0, groups: dict[str, str] | None = None
                       ) -> tuple[list[str], list[str]]:
    """(train, heldout) names among `env_names`; new ones are assigned and stored. With
    `groups` (environment -> its category, "L1 / L2"), whole categories are held out: no
    environment of a held-out category is trained on, so evaluation is out of distribution."""
    if not 0 < fraction < 1:
        raise AgentWorldError(f"held-out fraction must be between 0 and 1, not {fraction}")
    names = sorted(set(env_names))
    known = catalog.splits()
    new = [n for n in names if n not in known]
    if new and groups is not None:
        known = catalog.assign_split(_by_group(names, known, groups, fraction, seed))
    elif new:
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


def _by_group(names: list[str], known: dict[str, str], groups: dict[str, str],
              fraction: float, seed: int) -> dict[str, str]:
    """New environments' assignments when whole categories are held out: a category already
    split keeps its side; new categories are held out (in hash order) until the held-out
    environments reach `fraction`, never every category."""
    group = {n: groups.get(n) or n for n in names}
    side = {group[n]: known[n] for n in names if n in known}
    members: dict[str, list[str]] = {}
    for n in names:
        members.setdefault(group[n], []).append(n)
    if len(members) < 2:
        raise AgentWorldError("holding out whole categories needs environments of two or more "
                              f"categories; these are all {next(iter(members), '?')!r}")
    want = max(1, round(fraction * len(names)))
    held = sum(len(members[g]) for g, sd in side.items() if sd == "heldout")
    for g in sorted((g for g in members if g not in side), key=lambda g: _rank(g, seed)):
        if held < want and sum(sd == "train" for sd in side.values()) + \
                sum(1 for x in members if x not in side and x != g) > 0:
            side[g] = "heldout"
            held += len(members[g])
        else:
            side[g] = "train"
    return {n: side[group[n]] for n in names if n not in known}


def fill_quota(by_env: dict[str, list[str]], per_env: int) -> list[str]:
    """`per_env` task ids of each environment, in all `per_env` × environments where the
    synthesized ones allow: an environment with fewer (a small tool set: 6 of 8 on excel)
    leaves its shortfall to the others' spares, one at a time in environment order. Ids keep
    the order given per environment."""
    chosen = {env: list(ids[:per_env]) for env, ids in by_env.items()}
    spare = {env: list(ids[per_env:]) for env, ids in by_env.items()}
    short = per_env * len(by_env) - sum(len(ids) for ids in chosen.values())
    while short > 0 and any(spare.values()):
        for env in by_env:
            if short > 0 and spare[env]:
                chosen[env].append(spare[env].pop(0))
                short -= 1
    return [i for env in by_env for i in chosen[env]]


__all__ = ["fill_quota", "split_environments"]
