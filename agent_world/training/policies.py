"""A local Hugging Face model as a policy the rollout engine drives (`rollout.policy.Policy`):
`HFPolicy` samples batches and keeps each episode's token trace for GRPO. Chat models (an
OpenAI-compatible endpoint such as vLLM, the heuristic baseline) are `rollout.chat_policy`'s.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import DynamicCache

from agent_world.rollout.policy import EpisodeState, TokenTrace
from agent_world.training.decoding import decode
from agent_world.training.lm import (
    autocast,
    cache_kwarg,
    cpu_threads,
    output_cache,
    resolve_precision,
)


@dataclass
class CarriedCache:
    """Key/value states an episode's next turn starts from: columns `offset` to `offset +
    length` of row `row` of a decoding batch's cache hold its trace's first `length` tokens."""

    state: weakref.ref  # the episode the row belongs to (ids of dead objects are reused)
    layers: list[tuple[Any, Any]]  # (keys, values) per layer, shared by the batch's rows
    row: int
    offset: int
    length: int


class HFPolicy:
    """A causal LM from transformers, sampling in batches (left padding). Rows that begin
    alike, such as the attempts of one task or tasks listing the same tools on their first
    turn, prefill what they share once (`share_prefixes`); a later turn
    starts from the key/value cache of the episode's previous turn and prefills only what was
    appended since (the reply's last token and the observation), not the whole conversation
    again. `forget()` drops those caches (the rollout engine calls it when its rollouts end).

    Observations are appended as the chat template renders them, so the trace equals what the
    model would see in one conversation, without re-tokenizing what it generated.
    """

    def __init__(self, model: Any, tokenizer: Any, name: str = "hf", max_new_tokens: int = 96,
                 max_total_tokens: int = 2048, temperature: float = 1.0, top_p: float = 1.0,
                 batch_size: int = 64, min_new_tokens: int = 0, compact_tools: bool = True,
                 share_prefill: bool = True, precision: str = "fp32"):
        self.model, self.tokenizer, self.name = model, tokenizer, name
        # small models see the compact tool listing (`toolcall.system_prompt`)
        self.compact_tools = compact_tools
        self.share_prefill = share_prefill  # one prefill per shared prefix (see act)
        # "bf16" (or "auto" on a CUDA card with bf16): passes autocast (`lm.resolve_precision`)
        self.precision = resolve_precision(precision, model)
        self.min_new_tokens = min_new_tokens  # > 0: fixed-length turns (benchmarks)
        self.max_new_tokens, self.max_total_tokens = max_new_tokens, max_total_tokens
        self.temperature, self.top_p, self.batch_size = temperature, top_p, batch_size
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.eos_text = tokenizer.eos_token
        self.eos_id = tokenizer.convert_tokens_to_ids(self.eos_text)
        self._carried: dict[int, CarriedCache] = {}  # id(state) -> its previous turn's cache

    def _stopped(self, tokens: list[int]) -> bool:
        """Whether a reply has written one of STOP_STRINGS (asked after every token, so the
        newest few tokens hold it)."""
        tail = self.tokenizer.decode(tokens[-STOP_TAIL:], skip_special_tokens=True)
        return any(stop in tail for stop in STOP_STRINGS)

    def forget(self) -> None:
        """Drop the caches kept for the episodes' next turns."""
        self._carried = {}

    # -- conversation -> tokens ---------------------------------------------------------------
    def render(self, messages: list[dict[str, Any]], generation: bool) -> str:
        plain = [{"role": m["role"], "content": m["content"]} for m in messages]
        return self.tokenizer.apply_chat_template(plain, tokenize=False,
                                                  add_generation_prompt=generation)

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def sync(self, state: EpisodeState) -> None:
        """Append the messages the trace lacks (prompt or observations), masked out."""
        if state.trace is None:
            state.trace = TokenTrace()
            state.trace.extend(self.encode(self.render(state.messages, True)), policy=False)
        else:
            done = self.render(state.messages[:state.trace.synced], False)
            full = self.render(state.messages, True)
            # the trace stops at the end-of-turn token; the template may add text after it
            gap = done[done.rfind(self.eos_text) + len(self.eos_text):]
            state.trace.extend(self.encode(gap + full[len(done):]), policy=False)
        state.trace.synced = len(state.messages)

    # -- sampling -----------------------------------------------------------------------------
    def share_prefixes(self, states: list[EpisodeState]) -> None:
        """Compute once the first tokens that rows without a cache share, and start each of
        those rows from it: the attempts of one task share their whole prompt, tasks that list
        the same tools their listing (tasks with a tool view of their own share less: the
        default's held-out tasks about the chat template's opening). Rows sorted by their
        tokens sit next to the rows they share most
        with; a row joins its neighbours' group while their common prefix stays at least
        `MIN_SHARED` tokens and half the group's, so one environment's rows are not cut back
        to the chat template's opening they share with another's."""
        groups: list[tuple[list[int], list[EpisodeState]]] = []
        fresh = [s for s in states if id(s) not in self._carried]
        for s in sorted(fresh, key=lambda s: s.trace.ids):  # type: ignore[union-attr]
            ids = s.trace.ids[:-1]  # type: ignore[union-attr]
            if groups:
                head, members = groups[-1]
                n = common_length(head, ids)
                if n >= max(MIN_SHARED, len(head) // 2):
                    groups[-1] = (head[:n], members + [s])
                    continue
            groups.append((ids, [s]))
        device = next(self.model.parameters()).device
        for head, members in groups:
            if len(members) < 2:
                continue
            with torch.inference_mode():
                out = self.model(input_ids=torch.tensor([head], device=device), use_cache=True,
                                 logits_to_keep=1)
            layers = [(layer.keys, layer.values) for layer in output_cache(out).layers]
            for s in members:
                self._carried[id(s)] = CarriedCache(weakref.ref(s), layers, 0, 0, len(head))

    def act(self, states: list[EpisodeState]) -> list[str]:
        with cpu_threads(self.model), autocast(self.precision, self.model):
            return self._act(states)

    def carried_cache(self, states: list[EpisodeState], width: int, short: int = 0) -> Any:
        """A cache for a batch of `states` (their traces but the last `short` tokens)
        left-padded to `width`, built from the caches kept for them, or None when no row has
        one. All rows share one cache length: the widest row of new tokens sets it, and rows
        with less new text re-run part of what they had cached. Pad columns hold zeros (the
        attention mask hides them)."""
        entries = [self._carried.pop(id(s), None) for s in states]
        first = next((e for e in entries if e is not None), None)
        lengths = [len(s.trace.ids) - short for s in states]  # type: ignore[union-attr]
        known = [e.length if e is not None else 0 for e in entries]
        columns = width - max(n - k for n, k in zip(lengths, known, strict=True))
        if first is None or columns < 1:
            return None
        layers = []
        for layer in range(len(first.layers)):
            pair = []
            for part in range(2):
                like = first.layers[layer][part]
                out = like.new_zeros(len(states), like.size(1), columns, like.size(3))
                for b, (e, n) in enumerate(zip(entries, lengths, strict=True)):
                    used = columns - (width - n)  # this row's cached tokens left of the input
                    if e is not None and used > 0:
                        src = e.layers[layer][part]
                        out[b, :, columns - used:] = src[e.row, :, e.offset:e.offset + used]
                pair.append(out)
            layers.append(tuple(pair))
        return DynamicCache(layers, config=self.model.config)

    def prefill(self, states: list[EpisodeState]) -> None:
        """Cache every row's trace but its last token, in batches of rows with as much new
        text (`by_length` of the uncached counts), when one batch would re-run much more than
        that: the decoding batch then starts from these caches and prefills one token a row.
        Prefilling and decoding want different batches: on a CPU a decoding step costs about
        as much for 1 row as for 40 (the weights are read once a step), so few wide decoding
        batches are cheap (rows leave them as they end, `decoding.decode`); a batch
        prefills its widest row's new tokens in every row, so prefill batches are narrow."""
        new = {i: len(s.trace.ids) - 1 - (e.length if (e := self._carried.get(id(s))) else 0)  # type: ignore[union-attr]
               for i, s in enumerate(states)}
        groups = by_length(list(range(len(states))), {i: max(1, n) for i, n in new.items()})
        if len(groups) < 2:
            return  # one batch wastes little: `generate` prefills it
        device = next(self.model.parameters()).device
        pad = self.tokenizer.pad_token_id
        for group in groups:
            rows = [states[i] for i in group if new[i] > 0]
            if not rows:
                continue
            seqs = [r.trace.ids[:-1] for r in rows]  # type: ignore[union-attr]
            width = max(len(q) for q in seqs)
            ids = torch.tensor([[pad] * (width - len(q)) + q for q in seqs], device=device)
            attn = torch.tensor([[0] * (width - len(q)) + [1] * len(q) for q in seqs],
                                device=device)
            positions = (attn.cumsum(-1) - 1).masked_fill(attn == 0, 0)
            with torch.inference_mode():
                cache = self.carried_cache(rows, width, short=1)
                done = cache.get_seq_length() if cache is not None else 0
                out = self.model(input_ids=ids[:, done:], attention_mask=attn,
                                 position_ids=positions[:, done:], use_cache=True,
                                 logits_to_keep=1, **{cache_kwarg(self.model): cache})
            layers = [(layer.keys, layer.values) for layer in output_cache(out).layers]
            for b, (r, q) in enumerate(zip(rows, seqs, strict=True)):
                self._carried[id(r)] = CarriedCache(weakref.ref(r), layers, b, width - len(q),
                                                    len(q))

    def _act(self, states: list[EpisodeState]) -> list[str]:
        replies = [""] * len(states)
        live = []
        for i, s in enumerate(states):
            self.sync(s)
            assert s.trace is not None
            if len(s.trace.ids) + self.max_new_tokens > self.max_total_tokens:
                s.out_of_budget = True
            else:
                live.append(i)
        # a cache is kept only for the episodes that go on, and only if it is theirs
        self._carried = {id(states[i]): e for i in live
                         if (e := self._carried.get(id(states[i]))) is not None
                         and e.state() is states[i]}
        if self.share_prefill:
            self.share_prefixes([states[i] for i in live])
        device = next(self.model.parameters()).device
        lengths = {i: len(states[i].trace.ids) for i in live}  # type: ignore[union-attr]
        chunks = [part for start in range(0, len(live), self.batch_size)
                  for part in by_length(live[start:start + self.batch_size], lengths,
                                        DECODE_RATIO)]
        for chunk in chunks:
            self.prefill([states[i] for i in chunk])
            seqs = [states[i].trace.ids for i in chunk]  # type: ignore[union-attr]
            width = max(len(s) for s in seqs)
            pad = self.tokenizer.pad_token_id
            ids = torch.tensor([[pad] * (width - len(s)) + s for s in seqs], device=device)
            attn = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in seqs],
                                device=device)
            with torch.inference_mode():
                cache = self.carried_cache([states[i] for i in chunk], width)
                decoded = decode(self.model, ids, attn, cache, max_new=self.max_new_tokens,
                                 eos_id=self.eos_id, stopped=self._stopped,
                                 temperature=self.temperature, top_p=self.top_p,
                                 min_new=self.min_new_tokens)
            del cache
            for d, i in zip(decoded, chunk, strict=True):
                gen = d.tokens
                text = self.tokenizer.decode([t for t in gen if t != self.eos_id],
                                             skip_special_tokens=True)
                trace = states[i].trace
                assert trace is not None
                if d.layers is not None:  # every token up to the reply's last is in its cache
                    self._carried[id(states[i])] = CarriedCache(
                        weakref.ref(states[i]), d.layers, 0, width - len(trace.ids),
                        len(trace.ids) + len(gen) - 1)
                trace.extend(gen, policy=True)
                if not gen or gen[-1] != self.eos_id:  # cut by the length limit: close the turn
                    trace.extend([self.eos_id], policy=False)
                trace.synced += 1  # the assistant message the rollout appends next
                replies[i] = text
        return replies


# a reply ends with its closing tag: past it, a small policy went on writing `<answer>` after
# `<answer>` to the token limit (round 2 of the main job: its evaluation took twice round 1's)
# (or opening it twice: nothing well-formed follows, the rest was `<answer>` to the limit)
STOP_STRINGS = ("</answer>", "</tool_call>", "<answer><answer>")
STOP_TAIL = 16  # tokens a reply's stop check decodes: each stop string is shorter than this


# a decoding batch is padded to its longest row: one held-out attempt that read a ~3,500-token
# listing made 23 rows of ~600 tokens decode at its width (that evaluation took 6.7 min; split,
# 166 s with the same replies). A row longer than this many times its batch's shortest decodes
# with rows of its own length.
PAD_RATIO = 2.0


# a decoding batch holds rows up to this many times its shortest row's length: past it, one
# long row's width makes every row's attention and cache that wide
DECODE_RATIO = 4.0


def by_length(rows: list[int], lengths: dict[int, int], ratio: float = PAD_RATIO
              ) -> list[list[int]]:
    """`rows` as batches: one batch, as given, unless its longest row is more than `ratio` ×
    its shortest; then groups of rows within `ratio` of their group's shortest, each in the
    given order (sampling draws per row in batch order: batches that need no split stay
    exactly as they were)."""
    if not rows:
        return []
    if max(lengths[i] for i in rows) <= ratio * min(lengths[i] for i in rows):
        return [rows]
    groups: list[list[int]] = []
    for i in sorted(rows, key=lambda r: lengths[r]):
        if not groups or lengths[i] > ratio * lengths[groups[-1][0]]:
            groups.append([])
        groups[-1].append(i)
    order = {r: n for n, r in enumerate(rows)}
    return [sorted(g, key=order.__getitem__) for g in groups]


# shorter common prefixes are not worth a forward pass of their own (the chat template's
# opening, a system prompt's first words)
MIN_SHARED = 32


def common_length(a: list[int], b: list[int]) -> int:
    """How many first tokens `a` and `b` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


POLICY_SETTINGS = "agent_world_policy.json"  # next to a trained model's weights


def write_policy_settings(model_dir: str | Path, **settings: Any) -> None:
    """Record how a trained model was prompted and sampled (tool listing, token limits), so
    whoever loads the checkpoint evaluates it the way it was trained."""
    Path(model_dir, POLICY_SETTINGS).write_text(json.dumps(settings, indent=1))


def read_policy_settings(model_dir: str | Path) -> dict[str, Any]:
    path = Path(model_dir, POLICY_SETTINGS)
    return json.loads(path.read_text()) if path.is_file() else {}


__all__ = ["POLICY_SETTINGS", "HFPolicy", "by_length", "read_policy_settings",
           "write_policy_settings"]
