"""Batched decoding that drops each row from the batch as soon as its reply ends.

`transformers`' `generate` runs every row of a batch until its last row stops: finished rows
keep going through the model as padding. On a CPU a decoding step's cost grows with the rows
in it, and a held-out evaluation's replies are short beside its longest (48 attempts: most
calls end within 40 tokens while one reply runs to the limit), so most of that work was padding.
Here a row leaves the batch (`DynamicCache.batch_select_indices`) on the step its reply ends,
taking its own key/value columns with it for the episode's next turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from transformers.cache_utils import DynamicLayer

from agent_world.training.lm import cache_kwarg, output_cache


@dataclass
class Decoded:
    """One row's reply tokens (ending with the end-of-turn token when it ended so) and its
    key/value states, per layer `(keys, values)` of shape (1, heads, columns, dim), holding
    every token up to the reply's last (None when the cache cannot be carried on)."""

    tokens: list[int]
    layers: list[tuple[Any, Any]] | None


class RoomyLayer(DynamicLayer):
    """A cache layer with spare columns for the tokens still to come. `DynamicLayer` appends
    by concatenation, a copy of every cached column at every decoding step: 47 % of a
    16-row SmolLM2 decoding step on a CPU (600 cached columns). Here a step writes its column
    in place; `keys` / `values` are views of the filled columns."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, room: int):
        super().__init__()
        self.device, self.is_initialized, self.room = keys.device, True, room
        self.filled = 0
        self._key_buf = self._value_buf = keys[:, :, :0]
        self.update(keys, values)

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any,
               **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        start, end = self.filled, self.filled + key_states.size(-2)
        if end > self._key_buf.size(-2):  # out of room: one copy into a larger buffer
            self._key_buf = self._grown(self._key_buf, key_states, end + self.room)
            self._value_buf = self._grown(self._value_buf, value_states, end + self.room)
        self._key_buf[:, :, start:end] = key_states
        self._value_buf[:, :, start:end] = value_states
        self.filled = end
        self._views()
        return self.keys, self.values

    def _grown(self, buf: torch.Tensor, like: torch.Tensor, width: int) -> torch.Tensor:
        rows, heads, _, dim = like.shape
        out = like.new_empty(rows, heads, width, dim)
        out[:, :, :self.filled] = buf[:, :, :self.filled]
        return out

    def _views(self) -> None:
        self.keys = self._key_buf[:, :, :self.filled]
        self.values = self._value_buf[:, :, :self.filled]

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        self._key_buf, self._value_buf = self._key_buf[indices], self._value_buf[indices]
        self._views()


def with_room(cache: Any, room: int) -> Any:
    """`cache` with each full-attention layer moved into a `RoomyLayer` with `room` spare
    columns (sliding-window layers, which drop columns, stay as they are)."""
    layers = getattr(cache, "layers", None)
    if not layers:
        return cache
    for i, layer in enumerate(layers):
        if type(layer) is DynamicLayer and layer.is_initialized and layer.keys.numel():
            layers[i] = RoomyLayer(layer.keys, layer.values, room)
    return cache


def pick(logits: torch.Tensor, temperature: float, top_p: float) -> torch.Tensor:
    """The next token per row: greedy at temperature 0, else sampled from the tempered
    distribution cut to its top-p nucleus."""
    if temperature <= 0:
        return logits.argmax(-1)
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    if top_p < 1.0:
        ordered, order = probs.sort(dim=-1, descending=True)
        cut = ordered.cumsum(-1) - ordered > top_p  # tokens wholly past the nucleus
        ordered = ordered.masked_fill(cut, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, order, ordered)
    return torch.multinomial(probs, 1).squeeze(-1)


def decode(model: Any, ids: torch.Tensor, attn: torch.Tensor, cache: Any, *, max_new: int,
           eos_id: int, stopped: Callable[[list[int]], bool], temperature: float = 0.0,
           top_p: float = 1.0, min_new: int = 0) -> list[Decoded]:
    """Replies to the left-padded rows `ids` (mask `attn`), continuing from `cache` (its
    columns hold the first columns of `ids`; None: none). A row ends at `eos_id`, when
    `stopped(its tokens)` says so, or after `max_new` tokens; with `min_new`, not before
    (the end-of-turn token is barred until then and `stopped` is not asked)."""
    rows = ids.size(0)
    done = cache.get_seq_length() if cache is not None else 0
    positions = (attn.long().cumsum(-1) - 1).clamp(min=0)
    out = model(input_ids=ids[:, done:], attention_mask=attn, position_ids=positions[:, done:],
                use_cache=True, logits_to_keep=1, **{cache_kwarg(model): cache})
    cache, logits = with_room(output_cache(out), max_new), out.logits[:, -1, :]
    final = getattr(cache, "layers", [])
    # carried on only where every layer keeps all its columns (not sliding windows; not the
    # per-layer lists of transformers releases before cache layers)
    carry = bool(final) and not any(getattr(layer, "is_sliding", True) for layer in final)
    live = list(range(rows))
    tokens: list[list[int]] = [[] for _ in range(rows)]
    result: list[Decoded | None] = [None] * rows
    nxt = positions[:, -1]
    while live:
        if min_new and len(tokens[live[0]]) < min_new:
            logits[:, eos_id] = float("-inf")
        chosen = pick(logits, temperature, top_p).tolist()
        keep = []
        for j, (row, tok) in enumerate(zip(live, chosen, strict=True)):
            tokens[row].append(tok)
            n = len(tokens[row])
            ended = n >= max_new or (n >= min_new and (tok == eos_id or (
                not min_new and stopped(tokens[row]))))
            if not ended:
                keep.append(j)
                continue
            layers = [(layer.keys[j:j + 1].clone(), layer.values[j:j + 1].clone())
                      for layer in cache.layers] if carry else None
            result[row] = Decoded(tokens[row], layers)
        if not keep:
            break
        if len(keep) < len(live):
            index = torch.tensor(keep, device=ids.device)
            cache.batch_select_indices(index)
            attn, nxt = attn[index], nxt[index]
            chosen = [chosen[j] for j in keep]
            live = [live[j] for j in keep]
        attn = torch.cat([attn, attn.new_ones(len(live), 1)], dim=1)
        nxt = nxt + 1
        out = model(input_ids=torch.tensor(chosen, device=ids.device).unsqueeze(1),
                    attention_mask=attn, position_ids=nxt.unsqueeze(1), use_cache=True,
                    **{cache_kwarg(model): cache})
        cache, logits = output_cache(out), out.logits[:, -1, :]
    return [r for r in result if r is not None]


__all__ = ["Decoded", "decode", "pick"]
