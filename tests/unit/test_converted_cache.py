"""A converted model is kept once and read back the same (lm.converted_cache)."""

from __future__ import annotations

import os

import torch

from agent_world.training import lm


def _tiny():
    tok = lm.tiny_tokenizer(["book a flight to Paris", "<tool_call>{}</tool_call>"])
    return lm.tiny_model(tok, seed=5), tok


def _source(tmp_path, monkeypatch):
    """A source file, a converter that counts its calls, the calls; the cache in tmp_path."""
    monkeypatch.setenv("AGENT_WORLD_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "model.gguf"
    source.write_bytes(b"weights")
    calls = []

    def convert():
        calls.append(1)
        return _tiny()

    return source, convert, calls


def test_converts_once_then_reads_the_same_model(tmp_path, monkeypatch):
    source, convert, calls = _source(tmp_path, monkeypatch)

    model, tok = lm.converted_cache(source, convert)
    again, tok2 = lm.converted_cache(source, convert)
    assert len(calls) == 1  # the second load read the kept copy
    kept = list((tmp_path / "cache").iterdir())
    assert len(kept) == 1 and not kept[0].name.startswith(".")  # no temporary folder left
    a, b = model.state_dict(), again.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    text = "book a flight to Paris"
    assert tok(text)["input_ids"] == tok2(text)["input_ids"]
    ids = torch.tensor([tok(text)["input_ids"]])
    with torch.inference_mode():
        assert torch.equal(model.eval()(ids).logits, again.eval()(ids).logits)


def test_a_changed_source_or_a_damaged_copy_is_converted_again(tmp_path, monkeypatch, capsys):
    source, convert, calls = _source(tmp_path, monkeypatch)

    lm.converted_cache(source, convert)
    source.write_bytes(b"other weights")  # a new release of the file: another key
    lm.converted_cache(source, convert)
    assert len(calls) == 2
    newest = max((tmp_path / "cache").iterdir(), key=os.path.getmtime)
    (newest / "config.json").write_text("{not json")
    model, _ = lm.converted_cache(source, convert)
    assert len(calls) == 3 and model is not None
    assert "did not load" in capsys.readouterr().err
    lm.converted_cache(source, convert)  # the copy written after the damage is whole
    assert len(calls) == 3
