"""Difficulty: features of a task, its level (1-5) and recipes that aim at a requested mix.

    score = (chain_length - 1) + branching + aggregation + obscured + (distractors >= 8)
    level = min(5, 1 + score)

So a single lookup with its own tool names among few distractors is level 1; a three-call
chain, or a two-call chain behind opaque tool names, is level 3; long, branching, aggregating
chains behind opaque names among many distractors are level 5.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from agent_world.tasks.model import Difficulty

MANY_DISTRACTORS = 8


def level_of(chain_length: int, branching: int = 0, aggregation: bool = False,
             distractors: int = 0, obscured: bool = False) -> int:
    score = (max(chain_length, 1) - 1) + branching + int(aggregation) + int(obscured) \
        + int(distractors >= MANY_DISTRACTORS)
    return max(1, min(5, 1 + score))


def difficulty(chain_length: int, branching: int = 0, aggregation: bool = False,
               distractors: int = 0, obscured: bool = False) -> Difficulty:
    return Difficulty(chain_length=chain_length, branching=branching, aggregation=aggregation,
                      distractors=distractors, obscured=obscured,
                      level=level_of(chain_length, branching, aggregation, distractors, obscured))


@dataclass
class Recipe:
    """How to build a candidate aimed at a level (the achieved level is computed after)."""

    length: int
    obscured: bool
    many_distractors: bool


def recipe_for(level: int, rng: random.Random, max_length: int = 5, obscured: bool = False,
               distractors: bool = False) -> Recipe:
    """A random way to reach `level` from chain length, opaque names and distractors;
    `obscured` / `distractors` favour recipes with that feature (guidelines ask for it)."""
    options = []
    for length in range(1, max_length + 1):
        for obscured in (False, True):
            for many in (False, True):
                if level_of(length, 0, False, MANY_DISTRACTORS if many else 0, obscured) == level:
                    options.append(Recipe(length, obscured, many))
    if not options:
        return Recipe(max_length, True, True)
    # favour longer chains over cosmetic features: the chain is the substance
    weights = [(1.0 + r.length) * (4 if obscured and r.obscured else 1)
               * (4 if distractors and r.many_distractors else 1) for r in options]
    return rng.choices(options, weights=weights)[0]


def level_quotas(total: int, levels: list[int]) -> dict[int, int]:
    """Split `total` tasks as evenly as possible over the requested levels."""
    levels = sorted(set(levels)) or [1, 2, 3, 4, 5]
    base, extra = divmod(total, len(levels))
    return {lv: base + (1 if i < extra else 0) for i, lv in enumerate(levels)}


__all__ = ["MANY_DISTRACTORS", "Recipe", "difficulty", "level_of", "level_quotas", "recipe_for"]
