"""Difficulty: features of a task, its level (1-5) and recipes that aim at a requested mix.

The level counts reasoning, not cosmetics. Each call of the gold chain is a step, and so is
each thing the agent must work out beyond calling: an aggregation over a list (count, total,
extreme), a condition on an observed value (do the write only if the status is pending), a
join (a call whose inputs come from more than one earlier call):

    steps = chain_length + aggregation + condition + join
    level = 1, 2, 3 for 1, 2, 3 steps; 4 for 4-5 steps; 5 for 6 or more
    levels 4 and 5 need at least 3 distinct tools (else the level is 3)

Obscured tool names and distractor tools are recorded beside the level (`obscured`,
`distractors`) and reported apart: they make a task harder to read, not to reason about.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from agent_world.tasks.model import Difficulty

MANY_DISTRACTORS = 8
# the odds of opaque names and of many distractors in a recipe no guideline sets
BASE_ODDS = 0.2
GUIDED_ODDS = 0.6  # ... and in one whose guidelines ask for them without a failure shape
MAX_CHAIN = 6
# the chain length a recipe aims at per level (the walk may end earlier)
CHAIN_FOR_LEVEL = {1: (1, 1), 2: (2, 2), 3: (3, 3), 4: (4, 5), 5: (5, MAX_CHAIN)}
CONDITION_SHARE = 0.5  # share of level 4-5 graph recipes that branch on an observed value


def level_of(chain_length: int, branching: int = 0, aggregation: bool = False,
             distractors: int = 0, obscured: bool = False, distinct_tools: int | None = None,
             condition: bool = False) -> int:
    """The level of a task's features (see the module docstring); `distractors` and
    `obscured` are accepted for callers that pass every feature and do not count."""
    steps = max(chain_length, 1) + int(aggregation) + int(condition) + int(branching > 0)
    level = 1 if steps <= 1 else 2 if steps == 2 else 3 if steps == 3 else \
        4 if steps <= 5 else 5
    tools = chain_length if distinct_tools is None else distinct_tools
    if level >= 4 and tools < 3:
        level = 3
    return level


def difficulty(chain_length: int, branching: int = 0, aggregation: bool = False,
               distractors: int = 0, obscured: bool = False, distinct_tools: int = 1,
               condition: bool = False) -> Difficulty:
    return Difficulty(chain_length=chain_length, branching=branching, aggregation=aggregation,
                      distractors=distractors, obscured=obscured,
                      distinct_tools=distinct_tools, condition=condition,
                      level=level_of(chain_length, branching, aggregation,
                                     distinct_tools=distinct_tools, condition=condition))


@dataclass
class Recipe:
    """How to build a candidate aimed at a level (the achieved level is computed after):
    the chain length to walk, whether to branch on an observed value, and the cosmetic
    features (opaque names, many distractors), drawn apart from the level."""

    length: int
    obscured: bool
    many_distractors: bool
    condition: bool = False


def recipe_for(level: int, rng: random.Random, max_length: int = MAX_CHAIN,
               obscured: float = BASE_ODDS, distractors: float = BASE_ODDS) -> Recipe:
    """A random way to reach `level`: a chain length for it, a condition on an observed
    value for a share of level 4-5 recipes; opaque names and many distractors drawn on
    their own, at the odds `obscured` / `distractors` (guidelines set them)."""
    low, high = CHAIN_FOR_LEVEL.get(level, CHAIN_FOR_LEVEL[5])
    condition = level >= 4 and rng.random() < CONDITION_SHARE
    # with a condition, the walk is the reads before it: the conditional write is one more
    # call, the condition one more step
    length = min(max_length, rng.randint(low, high) - int(condition))
    return Recipe(length=max(1, length), obscured=rng.random() < obscured,
                  many_distractors=rng.random() < distractors, condition=condition)


def level_quotas(total: int, levels: list[int]) -> dict[int, int]:
    """Split `total` tasks as evenly as possible over the requested levels."""
    levels = sorted(set(levels)) or [1, 2, 3, 4, 5]
    base, extra = divmod(total, len(levels))
    return {lv: base + (1 if i < extra else 0) for i, lv in enumerate(levels)}


__all__ = ["BASE_ODDS", "CHAIN_FOR_LEVEL", "GUIDED_ODDS", "MANY_DISTRACTORS", "MAX_CHAIN", "Recipe",
           "difficulty", "level_of", "level_quotas", "recipe_for"]
