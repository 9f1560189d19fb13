"""`train(..., warm_start_steps=N)`: a fresh run fine-tunes on the tasks' gold solutions first."""

from __future__ import annotations

import pytest

from agent_world.training import api, sft
from agent_world.training.drills import drill_tasks
from agent_world.training.grpo import GRPOConfig


def test_warm_start_fits_gold_solutions_before_grpo(tmp_path, runtime, monkeypatch):
    tasks = drill_tasks("cancel", limit=3, runtime=runtime)
    losses: list[list[float]] = []
    real = sft.sft

    def recording(*args, **kwargs):
        losses.append(real(*args, **kwargs))
        return losses[-1]

    monkeypatch.setattr(sft, "sft", recording)
    config = GRPOConfig(tasks_per_step=1, group_size=2, max_turns=2, max_new_tokens=8,
                        device="cpu")
    out = api.train("tiny", tasks, tmp_path / "run", steps=1, config=config,
                    warm_start_steps=12)
    assert out.checkpoint.is_dir() and len(out.curve) == 1
    assert len(losses) == 1 and len(losses[0]) == 12
    assert out.warm_start == losses[0]  # reported with the run (the round record, the report)
    first, last = losses[0][:3], losses[0][-3:]
    assert sum(last) < sum(first)  # the gold conversations were actually fitted
    # a resumed run does not warm-start again
    api.train("tiny", tasks, tmp_path / "run", steps=2, config=config, warm_start_steps=12)
    assert len(losses) == 1
    # the checkpoint says how the policy was prompted: evaluation loads it the same way
    policy = api.load_policy(str(out.checkpoint))
    # its reply limit never below MIN_NEW_TOKENS (training's 8 is a cost limit, not the model's)
    assert policy.compact_tools is True and policy.max_new_tokens == api.MIN_NEW_TOKENS
    # loaded to attempt known tasks (evaluation), it may write their longest gold reply and a
    # margin: a reply past that is no correct call, and a batch decodes to its longest reply
    sized = api.load_policy(str(out.checkpoint), tasks)
    assert sized.max_new_tokens == api.reply_limit(sized.tokenizer, tasks, api.TASK_REPLY_FLOOR)
    assert api.TASK_REPLY_FLOOR <= sized.max_new_tokens < api.MIN_NEW_TOKENS
    # its token budget is the model's context up to MIN_TOTAL_TOKENS, never below training's
    assert policy.max_total_tokens == min(policy.model.config.max_position_embeddings,
                                          max(api.MIN_TOTAL_TOKENS, config.max_total_tokens))
    # a later round starts from that checkpoint: the model's default warm start is its shorter
    # continued one (the call format is learned); a base model gets the full one
    sizes = api.TrainingSizes(5, 3e-3, None, {}, warm_start_steps_continued=2)
    monkeypatch.setattr(api, "training_sizes", lambda model, device="auto": sizes)
    api.train(str(out.checkpoint), tasks, tmp_path / "round-2", steps=1, config=config,
              warm_start_steps=None)
    api.train("tiny", tasks, tmp_path / "fresh", steps=1, config=config, warm_start_steps=None)
    assert [len(x) for x in losses[1:]] == [2, 5]


def test_micro_batches_take_the_same_step_as_the_whole_batch(runtime):
    import torch

    from agent_world.rollout.engine import spec_index
    from agent_world.training.lm import tiny_model, tiny_tokenizer

    tasks = drill_tasks("cancel", limit=4, runtime=runtime)
    specs = spec_index(tasks)
    tok = tiny_tokenizer([t.instruction for t in tasks] * 4, vocab_size=300)
    traces = sft.gold_traces(tiny_model(tok), tok, tasks, specs, compact=True)
    assert len({len(t.ids) for t in traces}) > 1  # padding differs between the two ways
    runs = []
    for micro in (None, 1, 3):
        model = tiny_model(tok, seed=3)
        losses = sft.sft(model, tok, tasks, specs, steps=3, batch_size=4, lr=1e-2,
                         traces=traces, micro_batch=micro, device="cpu")
        runs.append((losses, [p.detach().clone() for p in model.parameters()]))
    (whole, w_params), *others = runs
    for losses, params in others:
        assert losses == [pytest.approx(x, rel=1e-4) for x in whole]
        assert all(torch.allclose(a, b, atol=1e-4) for a, b in zip(params, w_params,
                                                                   strict=True))


def test_warm_start_computes_logits_only_where_the_policy_wrote(runtime):
    import torch

    from agent_world.rollout.engine import spec_index
    from agent_world.training.grpo_math import token_logprobs
    from agent_world.training.lm import tiny_model, tiny_tokenizer

    tasks = drill_tasks("cancel", limit=3, runtime=runtime)
    specs = spec_index(tasks)
    tok = tiny_tokenizer([t.instruction for t in tasks] * 4, vocab_size=300)
    model = tiny_model(tok, seed=3)
    traces = sft.gold_traces(model, tok, tasks, specs, compact=True)
    widths = []
    hook = model.get_output_embeddings().register_forward_hook(
        lambda mod, inp, out: widths.append(out.size(1)))
    got = sft._token_logp_sum(model, tok, traces, torch.device("cpu"))
    hook.remove()
    width = max(len(t.ids) for t in traces)
    ids = torch.tensor([t.ids + [0] * (width - len(t.ids)) for t in traces])
    attn = torch.tensor([[1] * len(t.ids) + [0] * (width - len(t.ids)) for t in traces])
    mask = torch.tensor([t.mask[1:] + [0] * (width - len(t.ids)) for t in traces])
    # one logit column per column where some row's next token is the policy's: none for the
    # prompt (system prompt, tool listing) nor the observations between the calls
    written = int(mask.any(0).sum())
    assert widths == [written] and written < width - min(t.mask.index(1) for t in traces)
    assert float(got) == pytest.approx(float((token_logprobs(model, ids, attn) * mask).sum()),
                                       rel=1e-5)


def test_warm_start_leaves_out_conversations_over_the_token_budget(runtime):
    from agent_world.errors import AgentWorldError
    from agent_world.rollout.engine import spec_index
    from agent_world.training.lm import tiny_model, tiny_tokenizer

    tasks = drill_tasks("cancel", limit=3, runtime=runtime)
    specs = spec_index(tasks)
    tok = tiny_tokenizer([t.instruction for t in tasks] * 4, vocab_size=300)
    model = tiny_model(tok)
    traces = sft.gold_traces(model, tok, tasks, specs, compact=True)
    lengths = sorted(len(t.ids) for t in traces)
    with pytest.raises(AgentWorldError, match="fits in"):
        sft.sft(model, tok, tasks, specs, steps=1, traces=traces, max_tokens=lengths[0] - 1)
    seen: list[int] = []
    real = sft._fit
    sft._fit = lambda m, t, kept, *a: seen.append(len(kept)) or real(m, t, kept, *a)
    try:
        sft.sft(model, tok, tasks, specs, steps=1, traces=traces, max_tokens=lengths[-1] - 1)
    finally:
        sft._fit = real
    assert seen == [sum(n <= lengths[-1] - 1 for n in lengths)]


def test_a_stop_request_ends_training_between_steps(tmp_path, runtime):
    """SIGTERM sets `stop.requested` (the CLI's handler); a stage in a graph's worker thread
    never sees the signal itself, so GRPO and supervised steps check the request."""
    import threading

    import pytest

    from agent_world import stop
    from agent_world.rollout.engine import spec_index
    from agent_world.training.grpo import GRPOTrainer
    from agent_world.training.lm import tiny_model, tiny_tokenizer

    tasks = drill_tasks("cancel", limit=2, runtime=runtime)
    specs = spec_index(tasks)
    tok = tiny_tokenizer([t.instruction for t in tasks] * 4, vocab_size=300)
    trainer = GRPOTrainer(tiny_model(tok), tok, tasks, specs, GRPOConfig(
        tasks_per_step=1, group_size=2, max_turns=1, max_new_tokens=4, device="cpu"),
        runtime=runtime)
    trainer.train(1)
    stop.requested.set()
    try:
        with pytest.raises(stop.StopRequested):
            worker = [None]

            def run() -> None:
                try:
                    trainer.train(3)
                except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                    worker[0] = exc

            t = threading.Thread(target=run)
            t.start()
            t.join(60)
            raise worker[0]  # type: ignore[misc]
        assert trainer.step_no == 1  # stopped before the next step
        with pytest.raises(stop.StopRequested):
            sft.sft(trainer.model, tok, tasks, specs, steps=3, device="cpu")
    finally:
        stop.requested.clear()


def test_training_sizes_follow_the_model_and_the_device():
    from agent_world.training.lm import SMALL_MODEL_PARAMS, tiny_model, tiny_tokenizer

    tok = tiny_tokenizer(["call the tool and answer"], vocab_size=300)
    tiny = api.training_sizes(tiny_model(tok), "cpu")
    assert tiny.warm_start_steps == 32 and tiny.warm_start_lr == 3e-3 and not tiny.grpo
    big = tiny_model(tok, hidden=512, layers=8, heads=8, mlp=2048)
    assert sum(p.numel() for p in big.parameters()) > SMALL_MODEL_PARAMS
    on_cpu = api.training_sizes(big, "cpu")
    # a pretrained-size model on a CPU: a short warm start on short conversations, small batches
    assert on_cpu.warm_start_steps < tiny.warm_start_steps
    # from a trained checkpoint (a later evolve round) none on a CPU (they undid round 1's
    # gain); a random model keeps its own
    assert on_cpu.warm_steps(True) == 0 < on_cpu.warm_steps(False) == on_cpu.warm_start_steps
    assert tiny.warm_steps(True) == tiny.warm_steps(False) == 32
    assert on_cpu.warm_start_lr < tiny.warm_start_lr and on_cpu.warm_start_max_tokens
    config = GRPOConfig(**on_cpu.grpo)
    assert config.tasks_per_step * config.group_size < GRPOConfig().tasks_per_step * \
        GRPOConfig().group_size
    assert config.skip_flat and not GRPOConfig().skip_flat  # CPU time only where it has signal


def test_cpu_threads_one_for_small_models_every_core_for_larger(monkeypatch):
    import os

    import pytest
    import torch

    from agent_world.training.lm import cpu_thread_count, cpu_threads, tiny_model, tiny_tokenizer

    tok = tiny_tokenizer(["call the tool and answer"], vocab_size=300)
    small, big = tiny_model(tok), tiny_model(tok, hidden=512, layers=8, heads=8, mlp=2048)
    monkeypatch.delenv("AGENT_WORLD_CPU_THREADS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert cpu_thread_count(small) == 1 and cpu_thread_count(big) == 16
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert cpu_thread_count(big) == 2
    # a machine shared with other work: the user caps the threads
    monkeypatch.setenv("AGENT_WORLD_CPU_THREADS", "1")
    assert cpu_thread_count(big) == 1 and cpu_thread_count(small) == 1
    before = torch.get_num_threads()
    with cpu_threads(big):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    monkeypatch.setenv("AGENT_WORLD_CPU_THREADS", "two")
    with pytest.raises(ValueError, match="AGENT_WORLD_CPU_THREADS"):
        cpu_thread_count(big)


def test_recovery_detours_add_a_refused_wrong_call_before_the_unchanged_gold_path(runtime):
    import random

    from agent_world.rollout.engine import observe_call, spec_index
    from agent_world.rollout.toolcall import tool_views
    from agent_world.training.lm import tiny_model, tiny_tokenizer

    plain_tasks = drill_tasks("cancel", limit=3, runtime=runtime)
    specs = spec_index(plain_tasks)
    # the same tasks under obscured names: the real name is then a wrong guess too
    obscured = [t.model_copy(update={"tool_view": {f"tool_{i}": real for i, real in
                                                   enumerate(t.tool_view.values())}})
                for t in plain_tasks]
    for task in plain_tasks + obscured:
        spec = specs[task.env_fingerprint]
        visible = [v["name"] for v in tool_views(task, spec)]
        plain = sft.gold_messages(task, spec, runtime, compact=True)
        for i, call in enumerate(task.chain):
            gold = (next(v for v, r in task.tool_view.items() if r == call.tool),
                    call.arguments)
            options = sft.detours(task, spec, call)
            assert options and gold not in options
            assert len({name for name, _ in options}) > 1  # more than one kind of mistake
            for name, args in options:  # every detour is refused and leaves the state as is
                with runtime.open(spec, seed=task.seed) as ep:
                    before = ep.state_hash()
                    step = observe_call(ep, task, visible, name, args)
                    assert step.error_kind in sft.REFUSED_KINDS, (name, args, step)
                    assert ep.state_hash() == before
            detoured = sft.gold_messages(task, spec, runtime, compact=True, detour=i,
                                         rng=random.Random(i))
            wrong = [k for k, m in enumerate(detoured) if m.get("train") is False]
            assert len(wrong) == 1
            k = wrong[0]
            assert detoured[k + 1]["role"] == "tool"
            assert detoured[k + 1]["content"].startswith(("Error (invalid_arguments)",
                                                          "Error (unknown_tool)"))
            assert detoured[:k] + detoured[k + 2:] == plain  # the gold path is untouched
    # in token traces the wrong call is context, not a target
    tok = tiny_tokenizer([t.instruction for t in plain_tasks] * 4, vocab_size=300)
    model = tiny_model(tok)
    plain = sft.gold_traces(model, tok, plain_tasks, specs, compact=True)
    detoured = sft.gold_traces(model, tok, plain_tasks, specs, compact=True, detour=True)
    for p, d in zip(plain, detoured, strict=True):
        assert len(d.ids) > len(p.ids) and sum(d.mask) == sum(p.mask)


def test_recovery_adds_detoured_copies_to_the_warm_start(runtime, monkeypatch):
    from agent_world.rollout.engine import spec_index
    from agent_world.training.lm import tiny_model, tiny_tokenizer

    tasks = drill_tasks("cancel", limit=4, runtime=runtime)
    specs = spec_index(tasks)
    tok = tiny_tokenizer([t.instruction for t in tasks] * 4, vocab_size=300)
    seen: list[int] = []
    real = sft._fit
    monkeypatch.setattr(sft, "_fit", lambda m, t, kept, *a: seen.append(len(kept))
                        or real(m, t, kept, *a))
    for recovery in (0.0, 0.5, 1.0):
        sft.sft(tiny_model(tok), tok, tasks, specs, steps=1, recovery=recovery, device="cpu")
    assert seen == [4, 6, 8]
    # a pretrained-size model gets recovery detours; the tiny random one cannot read errors
    big = tiny_model(tok, hidden=512, layers=8, heads=8, mlp=2048)
    assert api.training_sizes(big, "cpu").warm_start_recovery > 0
    assert api.training_sizes(tiny_model(tok), "cpu").warm_start_recovery == 0


def test_reply_limits_cover_gold_replies(tmp_path, runtime):
    from agent_world.rollout.toolcall import format_answer, format_call, gold_replies
    from agent_world.tasks.model import ToolCall
    from agent_world.training.lm import tiny_tokenizer
    from agent_world.training.policies import write_policy_settings

    task = drill_tasks("cancel", limit=1, runtime=runtime)[0]
    assert gold_replies(task) == [format_call(c.tool, c.arguments) for c in task.chain] + [
        format_answer(task.reference_answer if task.reference_answer is not None else "done")]
    tok = tiny_tokenizer([task.instruction], vocab_size=300)

    def tokens(text: str) -> int:
        return len(tok(text, add_special_tokens=False)["input_ids"])

    short = api.reply_limit(tok, [task], 64)
    assert short == max(64, min(api.MAX_REPLY_TOKENS,
                                max(map(tokens, gold_replies(task))) + api.REPLY_MARGIN))
    # a call carrying a long value (a sha and a path) raises the limit past it
    sha = "55d157caaec9d647139bf75c372847c20fa45582"
    call = task.chain[0].model_copy(update={"arguments": {"ref": sha, "path": "/srv/git/a/b" * 4}})
    long_task = task.model_copy(update={"chain": [call, *task.chain[1:]]})
    longest = tokens(format_call(call.tool, call.arguments))
    assert longest > 64
    assert api.reply_limit(tok, [task, long_task], 64) == min(api.MAX_REPLY_TOKENS,
                                                              longest + api.REPLY_MARGIN)
    huge = task.model_copy(update={"chain": [ToolCall(tool=call.tool,
                                                      arguments={"q": sha * 40})]})
    assert api.reply_limit(tok, [huge], 64) == api.MAX_REPLY_TOKENS  # bounded
    # a trained limit above the floor is kept by whoever loads the checkpoint
    config = GRPOConfig(tasks_per_step=1, group_size=2, max_turns=1, max_new_tokens=8,
                        device="cpu")
    out = api.train("tiny", [task], tmp_path / "run", steps=1, config=config)
    write_policy_settings(out.checkpoint, compact_tools=True, max_new_tokens=200,
                          max_total_tokens=2048)
    assert api.load_policy(str(out.checkpoint)).max_new_tokens == 200


def test_training_sizes_its_replies_to_the_gold_ones(tmp_path, runtime):
    import json

    from transformers import AutoTokenizer

    from agent_world.training.policies import POLICY_SETTINGS

    task = drill_tasks("cancel", limit=1, runtime=runtime)[0]
    call = task.chain[0].model_copy(
        update={"arguments": {**task.chain[0].arguments, "note": "refund " * 60}})
    long_task = task.model_copy(update={"chain": [call, *task.chain[1:]]})
    out = api.train("tiny", [long_task], tmp_path / "run", steps=1, warm_start_steps=0)
    settings = json.loads((out.checkpoint / POLICY_SETTINGS).read_text())
    tok = AutoTokenizer.from_pretrained(out.checkpoint)
    assert settings["max_new_tokens"] == api.reply_limit(tok, [long_task], 64) > 64
