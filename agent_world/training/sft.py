"""Supervised warm start on gold solutions: the task's chain replayed in an episode, written
in the policy's own tool-call format and tokenized exactly as a rollout would be (the same
`HFPolicy` trace building), loss on the policy's tokens only.

Gold conversations never go wrong, so a policy warm-started on them alone answers as soon as a
call fails: held-out attempts of SmolLM2 mostly ended with one wrong call, its error, and a
guessed answer. `recovery` gives that fraction of the conversations one detour — a wrong call
the engine refuses before any tool code runs (another tool of the list, a dropped required
argument, a name that is not in the list), its real error, then the gold call — with the wrong
call masked out of the loss: the policy learns to read an error and correct itself, not to
make the mistake.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

import torch

from agent_world import stop
from agent_world.envs.arguments import CompiledArguments, argument_problem
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError
from agent_world.rollout.engine import observation_text, observe_call
from agent_world.rollout.policy import EpisodeState, TokenTrace
from agent_world.rollout.toolcall import format_call, gold_replies, system_prompt, tool_views
from agent_world.tasks.model import Task
from agent_world.training.grpo import pick_device
from agent_world.training.grpo_math import token_logprobs
from agent_world.training.lm import autocast, cpu_threads, release_memory, resolve_precision
from agent_world.training.policies import HFPolicy

# a wrong name the policy might write: the gold name with another verb
_VERBS = ("get", "list", "find", "search", "create", "update", "delete", "set")
REFUSED_KINDS = frozenset({"invalid_arguments", "unknown_tool"})  # refused before tool code


def detours(task: Task, spec: EnvSpec, call: Any) -> list[tuple[str, dict[str, Any]]]:
    """Wrong calls in place of gold `call` (visible name, arguments) that the engine refuses
    before running any tool code, so the episode's state stays as the gold chain needs it:
    another listed tool whose schema the gold arguments fail, the gold tool without one of its
    required arguments, and names that are not in the list."""
    tools = {t.name: t for t in spec.tools}
    real_of = task.tool_view or {name: name for name in tools}
    visible = {real: vis for vis, real in real_of.items()}
    out: list[tuple[str, dict[str, Any]]] = []
    for vis, real in real_of.items():
        if real != call.tool and real in tools and argument_problem(
                CompiledArguments(tools[real].arguments_schema), call.arguments) is not None:
            out.append((vis, dict(call.arguments)))
    for name in tools[call.tool].parameters.get("required", []):
        if name in call.arguments:
            out.append((visible.get(call.tool, call.tool),
                        {k: v for k, v in call.arguments.items() if k != name}))
    # under an obscured name, the real one is a guess its description invites
    verb, _, noun = call.tool.partition("_")
    guesses = [call.tool] + [f"{v}_{noun}" for v in _VERBS if noun and v != verb]
    out += [(g, dict(call.arguments)) for g in guesses if g not in real_of][:2]
    return out


def gold_messages(task: Task, spec: EnvSpec, runtime: EnvRuntime,
                  compact: bool = False, detour: int | None = None,
                  rng: random.Random | None = None) -> list[dict[str, Any]]:
    """The conversation of the gold solution: calls (by visible name), observations, answer.
    `detour`: before that gold call, one wrong call (`detours`, picked with `rng`) and its
    error; the wrong call's message carries `"train": False` (kept out of the loss)."""
    replies = gold_replies(task)
    messages = [{"role": "system", "content": system_prompt(task, spec, compact=compact)},
                {"role": "user", "content": task.instruction}]
    with runtime.open(spec, seed=task.seed) as ep:
        for i, (call, reply) in enumerate(zip(task.chain, replies, strict=False)):
            if i == detour:
                options = detours(task, spec, call)
                if options:
                    name, arguments = (rng or random.Random(0)).choice(options)
                    # as a rollout would see it: a name outside the list is refused unrun
                    step = observe_call(ep, task, [v["name"] for v in tool_views(task, spec)],
                                        name, arguments)
                    if step.error_kind in REFUSED_KINDS:  # refused: the state is untouched
                        messages.append({"role": "assistant", "train": False,
                                         "content": format_call(name, arguments)})
                        messages.append({"role": "tool", "content": observation_text(step, task)})
            seen = next((v for v, r in task.tool_view.items() if r == call.tool), call.tool)
            step = observe_call(ep, task, [seen], seen, call.arguments)
            messages.append({"role": "assistant", "content": reply})
            messages.append({"role": "tool", "content": observation_text(step, task)})
    messages.append({"role": "assistant", "content": replies[-1]})
    return messages


def gold_trace(policy: HFPolicy, task: Task, spec: EnvSpec,
               messages: list[dict[str, Any]]) -> TokenTrace:
    """Token ids + policy mask of a gold conversation, built like a rollout's trace."""
    state = EpisodeState(task=task, tools=tool_views(task, spec), messages=messages[:2])
    for m in messages[2:]:
        if m["role"] == "assistant":
            policy.sync(state)
            assert state.trace is not None
            state.trace.extend(policy.encode(m["content"]) + [policy.eos_id],
                               policy=m.get("train", True))
            state.trace.synced += 1
        state.messages.append({k: v for k, v in m.items() if k != "train"})
    assert state.trace is not None
    return state.trace


def gold_traces(model: Any, tokenizer: Any, tasks: list[Task], specs: Mapping[str, EnvSpec],
                compact: bool = False, detour: bool = False,
                seed: int = 0) -> list[TokenTrace]:
    """One trace per task; `detour`: each with one wrong call at a seeded random gold call."""
    policy = HFPolicy(model, tokenizer)
    rng = random.Random(seed)
    with EnvRuntime() as runtime:
        return [gold_trace(policy, t, specs[t.env_fingerprint], gold_messages(
            t, specs[t.env_fingerprint], runtime, compact,
            detour=rng.randrange(len(t.chain)) if detour and t.chain else None, rng=rng))
            for t in tasks]


def sft(model: Any, tokenizer: Any, tasks: list[Task], specs: Mapping[str, EnvSpec],
        steps: int = 100, batch_size: int = 8, lr: float = 1e-3, seed: int = 0,
        compact: bool = False, device: str = "auto",
        on_step: Callable[[int, float], None] | None = None,
        traces: list[TokenTrace] | None = None,
        max_tokens: int | None = None, micro_batch: int | None = None,
        recovery: float = 0.0, precision: str = "auto") -> list[float]:
    """Fine-tune on the gold conversations of `tasks` (or ready `traces`); returns the loss
    per step. `max_tokens`: conversations longer than the policy's token budget are left out
    (a rollout could never reproduce them, and one 7k-token conversation padded a batch of
    four into ten times the work). `micro_batch`: conversations per forward pass, gradients
    accumulated to the same step as the whole batch (None: the whole batch at once).
    `recovery`: the fraction of conversations given a detour (module docstring); each such
    task is also kept without one, so the plain gold path stays as common as before.
    `precision`: as GRPOConfig's (`lm.resolve_precision`)."""
    dev = pick_device(device)
    model.to(dev).train()
    if traces is None:
        traces = gold_traces(model, tokenizer, tasks, specs, compact)
        if recovery > 0:
            picked = sorted(random.Random(seed).sample(range(len(tasks)),
                                                       round(recovery * len(tasks))))
            detoured = gold_traces(model, tokenizer, [tasks[i] for i in picked], specs,
                                   compact, detour=True, seed=seed)
            traces += [d for i, d in zip(picked, detoured, strict=True)
                       if d.ids != traces[i].ids]  # no refusable wrong call: nothing to add
    if max_tokens is not None:
        fitting = [t for t in traces if len(t.ids) <= max_tokens]
        if not fitting:
            raise AgentWorldError(f"no gold conversation fits in {max_tokens} tokens "
                                  f"(shortest: {min(len(t.ids) for t in traces)})")
        traces = fitting
    with cpu_threads(model):
        return _fit(model, tokenizer, traces, steps, batch_size, lr, seed, dev, on_step,
                    micro_batch or batch_size, resolve_precision(precision, model))


def _fit(model: Any, tokenizer: Any, traces: list[TokenTrace], steps: int, batch_size: int,
         lr: float, seed: int, dev: torch.device,
         on_step: Callable[[int, float], None] | None, micro_batch: int,
         precision: str) -> list[float]:
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
            with autocast(precision, model):  # one context per pass (`lm.autocast`)
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
    # logits only where the policy wrote: not for the prompt (system prompt, tool listing)
    # nor the observations
    return (token_logprobs(model, ids, attn, mask) * mask).sum()


__all__ = ["REFUSED_KINDS", "detours", "gold_messages", "gold_trace", "gold_traces", "sft"]
