"""Supervised warm start on gold solutions: the task's chain replayed in an episode, written
in the policy's own tool-call format and tokenized exactly as a rollout would be (the same
`HFPolicy` trace building), loss on the policy's tokens only.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

import torch

from agent_world import stop
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError
from agent_world.tasks.model import Task
from agent_world.training.grpo import pick_device, token_logprobs
from agent_world.training.lm import cpu_threads, release_memory
from agent_world.training.policies import EpisodeState, HFPolicy, TokenTrace
from agent_world.training.rollout import observation_text
from agent_world.training.toolcall import format_answer, format_call, system_prompt, tool_views


def gold_messages(task: Task, spec: EnvSpec, runtime: EnvRuntime,
                  compact: bool = False) -> list[dict[str, Any]]:
    """The conversation of the gold solution: calls (by visible name), observations, answer."""
    from agent_world.tasks.model import Step

    visible = {real: vis for vis, real in task.tool_view.items()}
    messages = [{"role": "system", "content": system_prompt(task, spec, compact=compact)},
                {"role": "user", "content": task.instruction}]
    with runtime.open(spec, seed=task.seed) as ep:
        for call in task.chain:
            obs = ep.step(call.tool, call.arguments)
            step = Step(ok=obs.ok, result=obs.result, error_kind=obs.error.kind if obs.error
                        else None, error_message=obs.error.message if obs.error else None)
            messages.append({"role": "assistant",
                             "content": format_call(visible.get(call.tool, call.tool),
                                                    call.arguments)})
            messages.append({"role": "tool", "content": observation_text(step)})
    answer = task.reference_answer if task.reference_answer is not None else "done"
    messages.append({"role": "assistant", "content": format_answer(answer)})
    return messages


def gold_trace(policy: HFPolicy, task: Task, spec: EnvSpec,
               messages: list[dict[str, Any]]) -> TokenTrace:
    """Token ids + policy mask of a gold conversation, built like a rollout's trace."""
    state = EpisodeState(task=task, tools=tool_views(task, spec), messages=messages[:2])
    for m in messages[2:]:
        if m["role"] == "assistant":
            policy.sync(state)
            assert state.trace is not None
            state.trace.extend(policy.encode(m["content"]) + [policy.eos_id], policy=True)
            state.trace.synced += 1
        state.messages.append(m)
    assert state.trace is not None
    return state.trace


def gold_traces(model: Any, tokenizer: Any, tasks: list[Task], specs: Mapping[str, EnvSpec],
                compact: bool = False) -> list[TokenTrace]:
    policy = HFPolicy(model, tokenizer)
    with EnvRuntime() as runtime:
        return [gold_trace(policy, t, specs[t.env_fingerprint],
                           gold_messages(t, specs[t.env_fingerprint], runtime, compact))
                for t in tasks]


def sft(model: Any, tokenizer: Any, tasks: list[Task], specs: Mapping[str, EnvSpec],
        steps: int = 100, batch_size: int = 8, lr: float = 1e-3, seed: int = 0,
        compact: bool = False, device: str = "auto",
        on_step: Callable[[int, float], None] | None = None,
        traces: list[TokenTrace] | None = None,
        max_tokens: int | None = None, micro_batch: int | None = None) -> list[float]:
    """Fine-tune on the gold conversations of `tasks` (or ready `traces`); returns the loss
    per step. `max_tokens`: conversations longer than the policy's token budget are left out
    (a rollout could never reproduce them, and one 7k-token conversation padded a batch of
    four into ten times the work). `micro_batch`: conversations per forward pass, gradients
    accumulated to the same step as the whole batch (None: the whole batch at once)."""
    dev = pick_device(device)
    model.to(dev).train()
    if traces is None:
        traces = gold_traces(model, tokenizer, tasks, specs, compact)
    if max_tokens is not None:
        fitting = [t for t in traces if len(t.ids) <= max_tokens]
        if not fitting:
            raise AgentWorldError(f"no gold conversation fits in {max_tokens} tokens "
                                  f"(shortest: {min(len(t.ids) for t in traces)})")
        traces = fitting
    with cpu_threads(model):
        return _fit(model, tokenizer, traces, steps, batch_size, lr, seed, dev, on_step,
                    micro_batch or batch_size)


def _fit(model: Any, tokenizer: Any, traces: list[TokenTrace], steps: int, batch_size: int,
         lr: float, seed: int, dev: torch.device,
         on_step: Callable[[int, float], None] | None, micro_batch: int) -> list[float]:
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    rng = random.Random(seed)
    losses = []
    for step in range(steps):
        stop.check()
        chunk = rng.sample(traces, min(batch_size, len(traces)))
        # the loss is the mean over the batch's policy tokens, whatever the micro-batches
        tokens = max(1, sum(sum(t.mask[1:]) for t in chunk))
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for i in range(0, len(chunk), micro_batch):
            loss = -_token_logp_sum(model, tokenizer, chunk[i:i + micro_batch], dev) / tokens
            loss.backward()
            total += loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(total)
        if on_step:
            on_step(step, losses[-1])
    del opt
    release_memory()
    model.eval()
    return losses


def _token_logp_sum(model: Any, tokenizer: Any, chunk: list[TokenTrace],
                    dev: torch.device) -> torch.Tensor:
    """Sum of log π over the policy tokens of `chunk` (padded to its longest conversation)."""
    width = max(len(t.ids) for t in chunk)
    pad = tokenizer.pad_token_id
    ids = torch.tensor([t.ids + [pad] * (width - len(t.ids)) for t in chunk], device=dev)
    attn = torch.tensor([[1] * len(t.ids) + [0] * (width - len(t.ids)) for t in chunk],
                        device=dev)
    mask = torch.tensor([t.mask[1:] + [0] * (width - len(t.ids)) for t in chunk],
                        dtype=torch.float32, device=dev)
    return (token_logprobs(model, ids, attn) * mask).sum()


__all__ = ["gold_messages", "gold_trace", "gold_traces", "sft"]
