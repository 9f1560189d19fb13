"""Batched decoding (`training.decoding`): the replies `generate` writes, with each row leaving
the batch when its reply ends and taking its key/value columns along."""

from __future__ import annotations

import torch

from agent_world.training.decoding import decode, pick
from agent_world.training.lm import tiny_model, tiny_tokenizer


def _model():
    tok = tiny_tokenizer(["reserve a flight to Paris", "<answer>yes</answer>",
                          '<tool_call>{"name": "x"}</tool_call>'] * 20, vocab_size=200)
    return tiny_model(tok, seed=3), tok


def _batch(tok, texts):
    seqs = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    width = max(len(s) for s in seqs)
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    ids = torch.tensor([[pad] * (width - len(s)) + s for s in seqs])
    attn = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in seqs])
    return ids, attn, width


def test_greedy_replies_are_generates_and_rows_leave_when_they_end():
    model, tok = _model()
    ids, attn, width = _batch(tok, ["reserve a flight", "to Paris", "reserve a flight to Paris"])
    eos = tok.eos_token_id if tok.eos_token_id is not None else 0
    with torch.no_grad():
        want = model.generate(input_ids=ids, attention_mask=attn, max_new_tokens=7,
                              do_sample=False, pad_token_id=eos, eos_token_id=None)
    rows: list[int] = []  # rows in each forward pass
    hook = model.get_input_embeddings().register_forward_hook(
        lambda _m, args, _out: rows.append(args[0].size(0)))
    try:
        with torch.no_grad():
            got = decode(model, ids, attn, None, max_new=7, eos_id=-1,
                         stopped=lambda toks: False)
            # the first row "ends" after 2 tokens: the batch goes on without it
            early = decode(model, ids, attn, None, max_new=7, eos_id=-1,
                           stopped=lambda toks: len(toks) == 2 and toks == got[0].tokens[:2])
    finally:
        hook.remove()
    assert [d.tokens for d in got] == want[:, width:].tolist()
    assert early[0].tokens == got[0].tokens[:2]
    assert [d.tokens for d in early[1:]] == [d.tokens for d in got[1:]]
    assert rows[:7] == [3] * 7 and rows[7:9] == [3, 3] and rows[9:] == [2] * 5
    # a row's own columns: its left padding, its prompt and every reply token but the last
    for d in got:
        assert all(k.size(0) == 1 and k.size(2) == width + len(d.tokens) - 1
                   for k, _ in d.layers)


def test_decoding_continues_from_a_cache_and_bars_the_end_before_min_new():
    model, tok = _model()
    ids, attn, width = _batch(tok, ["reserve a flight to Paris", "a flight"])
    with torch.no_grad():
        whole = decode(model, ids, attn, None, max_new=5, eos_id=-1, stopped=lambda t: False)
        out = model(input_ids=ids[:, :-1], attention_mask=attn[:, :-1],
                    position_ids=(attn[:, :-1].cumsum(-1) - 1).clamp(min=0), use_cache=True)
        cached = decode(model, ids, attn, out.past_key_values, max_new=5, eos_id=-1,
                        stopped=lambda t: False)
        first = whole[0].tokens[0]  # as if it were the end-of-turn token: barred for 3 tokens
        barred = decode(model, ids[:1], attn[:1], None, max_new=5, eos_id=first,
                        stopped=lambda t: True, min_new=3)
    assert [d.tokens for d in cached] == [d.tokens for d in whole]
    assert barred[0].tokens[0] != first and len(barred[0].tokens) >= 3


def test_pick_samples_within_the_nucleus():
    logits = torch.tensor([[4.0, 3.9, -5.0, -5.0]] * 200)
    assert pick(logits, 0.0, 1.0).tolist() == [0] * 200
    torch.manual_seed(0)
    drawn = set(pick(logits, 1.0, 0.5).tolist())
    assert drawn <= {0, 1} and 0 in drawn
    assert set(pick(logits, 1.0, 0.01).tolist()) == {0}
