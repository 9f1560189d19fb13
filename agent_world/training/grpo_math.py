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

__all__ = ["group_advantages", "grpo_loss", "grpo_token_losses",
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


def token_logprobs(model: Any, ids: torch.Tensor, attention: torch.Tensor,
                   mask: torch.Tensor | None = None, share_prefix: bool = False,
                   temperature: float = 1.0) -> torch.Tensor:
    """log π(ids[:, t] | ids[:, :t]) for t >= 1: shape [B, T-1]. `temperature`: the policy
    samples from softmax(logits / temperature), so its ratio and KL use those log-probs.

    With `mask` ([B, T-1], 1 at policy tokens), only the columns where some row has a policy
    token are computed (the rest hold 0): prompts and observations need hidden states but no
    logits, the logits are the largest tensor of the pass ([B, T, vocab]) and the vocabulary
    projection a fifth of a small model's compute. With `share_prefix`, rows whose tokens
    before the first policy column are equal (the attempts of one task share their prompt) run
    that prefix once and continue from its key/value cache, in the forward and the backward
    pass alike; the values equal the plain pass up to float rounding.
    """
    n, width = ids.shape
    cols = torch.arange(width - 1, device=ids.device)
    if mask is not None:
        # an all-zero mask keeps one column, so a loss over it still has a graph
        cols = mask.any(0).nonzero().view(-1) if bool(mask.any()) else cols[-1:]
    start = int(cols[0])
    keep = cols - start
    if share_prefix and start > 0 and bool(attention[:, :start].all()):
        prefix, inverse = torch.unique(ids[:, :start], dim=0, return_inverse=True)
        if prefix.size(0) < n:
            cache = output_cache(model(input_ids=prefix, attention_mask=torch.ones_like(prefix),
                                       use_cache=True, logits_to_keep=1))
            cache.batch_select_indices(inverse)
            positions = torch.arange(start, width, device=ids.device).expand(n, -1)
            logits = model(input_ids=ids[:, start:], attention_mask=attention,
                           position_ids=positions, use_cache=True, logits_to_keep=keep,
                           **{cache_kwarg(model): cache}).logits
            return _placed(_picked_logprobs(logits, ids[:, cols + 1], temperature), cols, width)
    logits = model(input_ids=ids, attention_mask=attention, logits_to_keep=cols).logits
    return _placed(_picked_logprobs(logits, ids[:, cols + 1], temperature), cols, width)


def _picked_logprobs(logits: torch.Tensor, targets: torch.Tensor,
                     temperature: float = 1.0) -> torch.Tensor:
    logits = logits.float()  # bf16 logits: the softmax in fp32
    if temperature != 1.0:
        logits = logits / temperature
    return -F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1),
                            reduction="none").view(targets.shape)


def _placed(values: torch.Tensor, cols: torch.Tensor, width: int) -> torch.Tensor:
    """`values` of columns `cols` in a [B, width-1] tensor of zeros (differentiably)."""
    if cols.numel() == width - 1:
        return values
    return values.new_zeros(values.size(0), width - 1).index_copy(1, cols, values)


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
