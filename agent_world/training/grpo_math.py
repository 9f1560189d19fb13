"""The GRPO numerics: pure functions, unit-tested against hand-computed values.

Within each group (the attempts at one task) the advantage is A = (r - mean) / (std + 1e-9)
(`group_advantages`), and the loss is

    loss = sum_t mask_t * ( -min(ρ_t A, clip(ρ_t, 1-ε, 1+ε) A) + β k3_t ) / sum_t mask_t
    ρ_t = exp(logπ_t - logπ_old_t),  k3_t = exp(logπ_ref_t - logπ_t) - (logπ_ref_t - logπ_t) - 1

summed over every sequence of the batch (token-level mean; mask = tokens the policy generated,
prompt and tool observations excluded): `grpo_token_losses` per token, `grpo_loss` its mean.
`token_logprobs` gives the log π_t the ratio and the KL are taken of.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from agent_world.training.lm import cache_kwarg, output_cache

__all__ = ["first_policy_column", "group_advantages", "grpo_loss", "grpo_token_losses",
           "token_logprobs"]

FLAT_TOLERANCE = 1e-6  # rewards closer than this (relative) count as equal


def group_advantages(rewards: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """(r - mean) / (std + 1e-9) within each group (std: unbiased, as torch.std); a group of
    one, or of equal rewards, gets advantage 0.

    Equal rewards are tested, not left to the formula: the float mean of eight -0.1 rewards
    is off by one rounding step, std is then of that size too, and (r - mean) / (std + 1e-9)
    came out +0.83 for every attempt, pushing up whatever a group that all failed alike did
    (all -0.2: +0.88; all -0.3: -0.91)."""
    adv = torch.zeros_like(rewards, dtype=torch.float32)
    for g in torch.unique(groups):
        idx = groups == g
        r = rewards[idx].float()
        if r.numel() > 1 and float(r.max() - r.min()) > FLAT_TOLERANCE * max(
                1.0, float(r.abs().max())):
            adv[idx] = (r - r.mean()) / (r.std() + 1e-9)
    return adv


def token_logprobs(model: Any, ids: torch.Tensor, attention: torch.Tensor, start: int = 0,
                   share_prefix: bool = False, temperature: float = 1.0) -> torch.Tensor:
    """log π(ids[:, t] | ids[:, :t]) for t >= 1: shape [B, T-1]. `temperature`: the policy
    samples from softmax(logits / temperature), so its ratio and KL use those log-probs.

    Only columns from `start` on are computed (the rest hold 0): a prompt needs hidden states
    but no logits, and the logits are the largest tensor of the pass ([B, T, vocab]). With
    `share_prefix`, rows whose first `start` tokens are equal (the attempts of one task share
    their prompt) run that prefix once and continue from its key/value cache, in the forward
    and the backward pass alike; the values equal the plain pass up to float rounding.
    """
    n, width = ids.shape
    start = max(0, min(start, width - 1))
    if share_prefix and start > 0 and bool(attention[:, :start].all()):
        prefix, inverse = torch.unique(ids[:, :start], dim=0, return_inverse=True)
        if prefix.size(0) < n:
            cache = output_cache(model(input_ids=prefix, attention_mask=torch.ones_like(prefix),
                                       use_cache=True))
            cache.batch_select_indices(inverse)
            positions = torch.arange(start, width, device=ids.device).expand(n, -1)
            logits = model(input_ids=ids[:, start:], attention_mask=attention,
                           position_ids=positions, use_cache=True,
                           **{cache_kwarg(model): cache}).logits[:, :-1]
            return _pad_left(_picked_logprobs(logits, ids[:, start + 1:], temperature), start)
    kwargs = {"logits_to_keep": width - start} if start > 0 else {}
    logits = model(input_ids=ids, attention_mask=attention, **kwargs).logits[:, :-1]
    return _pad_left(_picked_logprobs(logits, ids[:, start + 1:], temperature), start)


def _picked_logprobs(logits: torch.Tensor, targets: torch.Tensor,
                     temperature: float = 1.0) -> torch.Tensor:
    logits = logits.float()  # bf16 logits: the softmax in fp32
    if temperature != 1.0:
        logits = logits / temperature
    return -F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1),
                            reduction="none").view(targets.shape)


def _pad_left(values: torch.Tensor, start: int) -> torch.Tensor:
    if start == 0:
        return values
    return torch.cat([values.new_zeros(values.size(0), start), values], dim=1)


def first_policy_column(mask: torch.Tensor) -> int:
    """The first column of a [B, T-1] policy mask where any row has a policy token (rows
    without one do not count); 0 for an all-zero mask."""
    cols = mask.any(0).nonzero()
    return int(cols[0]) if cols.numel() else 0


def grpo_token_losses(logp: torch.Tensor, old_logp: torch.Tensor, ref_logp: torch.Tensor | None,
                      advantages: torch.Tensor, clip_eps: float = 0.2,
                      kl_coef: float = 0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-token loss, k3 KL and whether the ratio was clipped; shapes [B, T]."""
    a = advantages.view(-1, 1)
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps)
    loss = -torch.minimum(ratio * a, clipped * a)
    kl = torch.zeros_like(logp)
    if ref_logp is not None:
        d = ref_logp - logp
        kl = torch.exp(d) - d - 1
        loss = loss + kl_coef * kl
    return loss, kl, (ratio != clipped).float()


def grpo_loss(logp: torch.Tensor, old_logp: torch.Tensor, ref_logp: torch.Tensor | None,
              advantages: torch.Tensor, mask: torch.Tensor, clip_eps: float = 0.2,
              kl_coef: float = 0.0) -> torch.Tensor:
    """Token-level mean of the GRPO loss over the masked (policy) tokens of the batch."""
    loss, _, _ = grpo_token_losses(logp, old_logp, ref_logp, advantages, clip_eps, kl_coef)
    return (loss * mask).sum() / mask.sum().clamp(min=1)
