"""GRPO batches: the rollouts that can train as padded sequences with their policy-token masks
and group advantages, and what a batch's attempts did (`StepStats`' diagnostic fields)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from agent_world.rollout.engine import Rollout
from agent_world.training.grpo_math import group_advantages

__all__ = ["Batch", "make_batch", "trained_length"]


@dataclass
class Batch:
    ids: torch.Tensor  # [B, T] right-padded
    attention: torch.Tensor  # [B, T]
    mask: torch.Tensor  # [B, T-1]: 1 where ids[:, 1:] is a policy token
    advantages: torch.Tensor  # [B]
    rewards: torch.Tensor  # [B]
    groups: torch.Tensor | None = None  # [B]: the task index of each sequence

    def select(self, index: slice | torch.Tensor) -> Batch:
        """The sequences at `index` (a slice or a bool [B] mask; at least one), their shared
        right padding trimmed."""
        width = int(self.attention[index].sum(1).max())
        return Batch(self.ids[index, :width], self.attention[index, :width],
                     self.mask[index, :width - 1], self.advantages[index], self.rewards[index],
                     None if self.groups is None else self.groups[index])

    def slices(self, size: int) -> Iterator[tuple[slice, Batch]]:
        for start in range(0, self.ids.size(0), size):
            s = slice(start, start + size)
            yield s, self.select(s)


def trained_length(mask: list[int]) -> int:
    """Tokens of a trace up to its last policy token. What follows is context for nothing:
    attention is causal, so no policy token's log-probability depends on it. An episode cut
    by the token budget ends with the observation that overran it: tool listings made four
    GRPO sequences 4,400 tokens wide for 247 policy tokens, and that update took 138 s on a
    CPU instead of 5 (with the same loss)."""
    return len(mask) - mask[::-1].index(1) if 1 in mask else 0


def make_batch(rollouts: list[Rollout], pad_id: int) -> Batch | None:
    """Sequences (each up to its last policy token; see `trained_length`), masks and group
    advantages of the rollouts that can train (no env fault, at least one policy token)."""
    usable = [r for r in rollouts if not r.trajectory.env_fault and r.state.trace is not None
              and sum(r.state.trace.mask) > 0]
    if not usable:
        return None
    lengths = [trained_length(r.state.trace.mask) for r in usable]  # type: ignore[union-attr]
    width = max(lengths)
    ids, attn, mask = [], [], []
    for r, n in zip(usable, lengths, strict=True):
        t = r.state.trace
        assert t is not None
        ids.append(t.ids[:n] + [pad_id] * (width - n))
        attn.append([1] * n + [0] * (width - n))
        mask.append(t.mask[1:n] + [0] * (width - n))
    rewards = torch.tensor([r.trajectory.reward for r in usable], dtype=torch.float32)
    groups = torch.tensor([r.group for r in usable])
    return Batch(torch.tensor(ids), torch.tensor(attn), torch.tensor(mask, dtype=torch.float32),
                 group_advantages(rewards, groups), rewards, groups)


def behaviour(trajectories: list[Any], batch: Batch | None) -> dict[str, float]:
    """What the attempts did (call / malformed / answer rates) and the batch's signal (share
    of groups with equal rewards, mean |advantage|): StepStats' diagnostic fields."""
    n = len(trajectories) or 1

    def share(pred: Callable[[Any], bool]) -> float:
        return sum(1 for t in trajectories if pred(t)) / n

    out = {"call_rate": share(lambda t: any(
               s.tool is not None and s.error_kind not in ("malformed_tool_call", "unknown_tool")
               for s in t.steps)),
           "malformed_rate": share(lambda t: any(s.error_kind == "malformed_tool_call"
                                                 for s in t.steps)),
           "answer_rate": share(lambda t: t.finished),
           "flat_groups": 0.0, "adv_abs": 0.0}
    if batch is not None and batch.groups is not None and batch.rewards.numel():
        flat = [bool(batch.rewards[batch.groups == g].unique().numel() == 1)
                for g in torch.unique(batch.groups)]
        out["flat_groups"] = sum(flat) / len(flat)
        out["adv_abs"] = float(batch.advantages.abs().mean())
    return out
