"""GRPO numerics against hand-computed values, masking, checkpoint resume, LoRA."""

from __future__ import annotations

import copy
import inspect
import math

import pytest
import torch

from agent_world.errors import AgentWorldError
from agent_world.training.grpo import GRPOConfig, GRPOTrainer
from agent_world.training.grpo_math import (
    group_advantages,
    grpo_loss,
    grpo_token_losses,
    token_logprobs,
)


def test_group_advantages_hand_values():
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.5, 0.5, 0.3])
    groups = torch.tensor([0, 0, 0, 0, 1, 1, 2])
    adv = group_advantages(rewards, groups)
    # group 0: mean 0.5, unbiased std sqrt(4 * 0.25 / 3) = 0.57735
    s = math.sqrt(1 / 3)
    assert adv[:4].tolist() == pytest.approx([0.5 / s, -0.5 / s, -0.5 / s, 0.5 / s], rel=1e-6)
    assert adv[4:].tolist() == [0.0, 0.0, 0.0]  # equal rewards; a group of one


def test_equal_rewards_that_floats_cannot_average_exactly_give_no_advantage():
    # the float mean of eight -0.1s is one rounding step off: the plain formula gave +0.83
    for value in (-0.1, -0.2, -0.3, 0.9):
        rewards = torch.full((8,), value)
        assert group_advantages(rewards, torch.zeros(8, dtype=torch.long)).tolist() == [0.0] * 8
    adv = group_advantages(torch.tensor([-0.1, -0.1, 0.9, -0.1]), torch.zeros(4, dtype=torch.long))
    assert adv.tolist() == pytest.approx([-0.5, -0.5, 1.5, -0.5], rel=1e-5)


def test_clipped_surrogate_and_k3_hand_values():
    old = torch.zeros(1, 3)
    logp = torch.log(torch.tensor([[1.5, 0.5, 1.1]]))
    ref = logp + torch.log(torch.tensor([[2.0, 1.0, 0.5]]))  # ref/π = 2, 1, 0.5
    loss, kl, clipped = grpo_token_losses(logp, old, ref, torch.tensor([1.0]), 0.2, 0.0)
    # A > 0: min(ρA, clip(ρ)A) -> 1.2 (clipped), 0.5 (ρ below 0.8: the unclipped min), 1.1
    assert loss[0].tolist() == pytest.approx([-1.2, -0.5, -1.1], rel=1e-6)
    assert clipped[0].tolist() == [1.0, 1.0, 0.0]
    assert kl[0].tolist() == pytest.approx(
        [2 - math.log(2) - 1, 0.0, 0.5 - math.log(0.5) - 1], rel=1e-6)
    neg, _, _ = grpo_token_losses(logp, old, None, torch.tensor([-1.0]), 0.2, 0.0)
    # A < 0: min(-ρ, -clip(ρ)) -> -1.5, -0.8, -1.1; loss is the negation
    assert neg[0].tolist() == pytest.approx([1.5, 0.8, 1.1], rel=1e-6)
    with_kl, _, _ = grpo_token_losses(logp, old, ref, torch.tensor([1.0]), 0.2, 0.1)
    assert with_kl[0, 0].item() == pytest.approx(-1.2 + 0.1 * (1 - math.log(2)), rel=1e-6)


def test_loss_is_a_token_level_mean_over_policy_tokens():
    old = torch.zeros(2, 3)
    logp = torch.log(torch.tensor([[1.0, 1.1, 9.0], [0.9, 9.0, 9.0]]))
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])  # 9.0: masked observation tokens
    adv = torch.tensor([2.0, -1.0])
    loss = grpo_loss(logp, old, None, adv, mask, clip_eps=0.2)
    # per token: -2*1.0, -2*1.1, -(-1 * 0.9) -> mean over 3 policy tokens (not per sequence)
    assert loss.item() == pytest.approx((-2.0 - 2.2 + 0.9) / 3, rel=1e-6)


# ---- trainer -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def setup(runtime):
    from agent_world.rollout.engine import spec_index
    from agent_world.training.drills import drill_tasks

    tasks = drill_tasks("cancel", limit=4, runtime=runtime)
    return tasks, spec_index(tasks)


def _tiny(tasks):
    from agent_world.training.lm import tiny_model, tiny_tokenizer

    tok = tiny_tokenizer([t.instruction for t in tasks] + ['<tool_call>{"name":'], 300)
    return tiny_model(tok, seed=1, hidden=32), tok


def _config(**kw):
    base = dict(tasks_per_step=2, group_size=3, lr=1e-2, max_turns=2, max_new_tokens=10,
                kl_coef=0.1, compact_tools=True, seed=3, device="cpu")
    base.update(kw)
    return GRPOConfig(**base)


def _forced_rewards(task, traj, ep):
    # varied rewards so every group has non-zero advantages (the update must move weights)
    traj.reward = (len(traj.steps[0].text) % 5) / 4 if traj.steps else 0.0
    traj.reward_components = {"check": traj.reward}


def test_resume_gives_the_same_next_step(tmp_path, setup, runtime):
    tasks, specs = setup
    model, tok = _tiny(tasks)
    straight = GRPOTrainer(model, tok, tasks, specs, _config(), out_dir=tmp_path / "a",
                           reward=_forced_rewards, runtime=runtime)
    first = straight.step()
    assert first.policy_tokens > 0 and first.grad_norm > 0
    straight.save()
    second = straight.step()

    resumed = GRPOTrainer.resume(tmp_path / "a", tasks, specs, reward=_forced_rewards,
                                 runtime=runtime)
    assert resumed.step_no == 1
    again = resumed.step()
    assert again.reward_mean == second.reward_mean and again.policy_tokens == second.policy_tokens
    assert again.loss == pytest.approx(second.loss, rel=1e-5, abs=1e-7)
    for (n, a), (_, b) in zip(straight.model.named_parameters(),
                              resumed.model.named_parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-6), n

    # a finished run pruned: the policy stays loadable, resuming says why it cannot
    freed = GRPOTrainer.prune(tmp_path / "a")
    assert freed > 0 and not (tmp_path / "a" / "reference").exists()
    ckpt = GRPOTrainer.latest(tmp_path / "a")
    assert ckpt is not None and not (ckpt / "optimizer.pt").exists()
    assert (ckpt / "model" / "config.json").exists()
    with pytest.raises(AgentWorldError, match="pruned"):
        GRPOTrainer.resume(tmp_path / "a", tasks, specs, runtime=runtime)


def test_sequences_train_up_to_their_last_policy_token(setup, runtime):
    # an episode the token budget ended carries the observation that overran it: the update
    # must not run the model over it (no policy token's log-probability depends on it)
    from agent_world.training.grpo_batch import make_batch, trained_length
    from agent_world.training.grpo_math import token_logprobs

    tasks, specs = setup
    model, tok = _tiny(tasks)
    trainer = GRPOTrainer(model, tok, tasks, specs, _config(), reward=_forced_rewards,
                          runtime=runtime)
    rollouts, _, _ = trainer.rollouts(tasks[:2])
    trace = rollouts[0].state.trace
    assert trace is not None and trace.mask[-1] == 0  # ends with its observation already
    n = trained_length(trace.mask)
    assert trace.mask[n - 1] == 1 and 1 not in trace.mask[n:]
    trace.extend([tok.pad_token_id + 1] * 400, policy=False)  # a listing past the budget
    batch = make_batch(rollouts, tok.pad_token_id)
    assert batch is not None
    assert batch.ids.size(1) == max(trained_length(r.state.trace.mask) for r in rollouts)
    assert batch.ids.size(1) < len(trace.ids) - 400
    assert int(batch.attention[0].sum()) == n and batch.ids[0, :n].tolist() == trace.ids[:n]
    # the policy tokens' log-probabilities: as over the whole conversation
    with torch.no_grad():
        whole = torch.tensor([trace.ids])
        full = token_logprobs(model, whole, torch.ones_like(whole))[0, :n - 1]
        cut = token_logprobs(model, batch.ids[:1, :n], batch.attention[:1, :n])[0]
    policy = batch.mask[0, :n - 1] > 0
    assert int(policy.sum()) == sum(trace.mask)
    assert torch.allclose(full[policy], cut[policy], atol=1e-5)


def test_skip_flat_leaves_zero_advantage_sequences_out_of_the_update(tmp_path, setup,
                                                                      runtime):
    tasks, specs = setup

    def one_flat_group(task, traj, ep):  # the first task's attempts all score the same
        _forced_rewards(task, traj, ep)
        if task.id == tasks[0].id:
            traj.reward = 0.5

    def flat(task, traj, ep):
        traj.reward, traj.reward_components = 0.25, {"check": 0.25}

    config = _config(skip_flat=True, tasks_per_step=2)
    model, tok = _tiny(tasks)
    trainer = GRPOTrainer(model, tok, tasks[:2], specs, config, out_dir=tmp_path / "s",
                          reward=one_flat_group, runtime=runtime)
    seen = []
    real = trainer.update
    trainer.update = lambda batch: seen.append(batch) or real(batch)
    stats = trainer.step()
    assert len(seen) == 1 and bool((seen[0].advantages != 0).all())
    assert 0 < seen[0].ids.size(0) <= config.group_size  # the varied group only
    assert stats.flat_groups == 0.5 and stats.policy_tokens == int(seen[0].mask.sum())
    # a batch with no signal at all runs no update
    trainer.reward = flat
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    stats = trainer.step()
    assert len(seen) == 1 and stats.policy_tokens == 0 and stats.flat_groups == 1.0
    assert all(torch.equal(p, before[n]) for n, p in trainer.model.named_parameters())
    # without skip_flat the same flat batch is trained on (KL term only)
    plain = GRPOTrainer(*_tiny(tasks), tasks[:2], specs, _config(tasks_per_step=2),
                        out_dir=tmp_path / "p", reward=flat, runtime=runtime)
    assert plain.step().policy_tokens > 0


def test_lora_trains_only_the_adapter(tmp_path, setup, runtime):
    pytest.importorskip("peft", reason="LoRA is optional: peft not installed")
    tasks, specs = setup
    model, tok = _tiny(tasks)
    trainer = GRPOTrainer(model, tok, tasks, specs, _config(lora=True, lora_rank=4),
                          out_dir=tmp_path / "l", reward=_forced_rewards, runtime=runtime)
    # the wrapper passes a key/value cache under the keyword the wrapped model takes (its own
    # forward only has **kwargs): the prefix sharing of the update and of sampling reach it
    from agent_world.training.lm import cache_kwarg
    assert cache_kwarg(trainer.model) == cache_kwarg(trainer.model.get_base_model())
    assert cache_kwarg(trainer.model) in inspect.signature(
        trainer.model.get_base_model().forward).parameters
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    stats = trainer.step()
    assert stats.policy_tokens > 0
    changed = {n for n, p in trainer.model.named_parameters() if not torch.equal(p, before[n])}
    assert changed and all("lora_" in n for n in changed)
    trainer.save()
    resumed = GRPOTrainer.resume(tmp_path / "l", tasks, specs, reward=_forced_rewards,
                                 runtime=runtime)
    for (n, a), (_, b) in zip(trainer.model.named_parameters(),
                              resumed.model.named_parameters(), strict=True):
        assert torch.equal(a, b), n


# ---- log-probs fast paths --------------------------------------------------------------------
def test_shared_prefix_and_policy_column_logits_equal_the_plain_pass():
    from agent_world.training.grpo_math import token_logprobs
    from agent_world.training.lm import tiny_model, tiny_tokenizer

    tok = tiny_tokenizer(["turn the kitchen light on please", "cancel reservation ABC"], 300)
    model = tiny_model(tok, seed=2, hidden=32)
    gen = torch.Generator().manual_seed(0)
    prompt_a = torch.randint(3, len(tok), (9,), generator=gen)
    prompt_b = torch.randint(3, len(tok), (9,), generator=gen)
    rows, attn = [], []
    for i, prompt in enumerate([prompt_a] * 3 + [prompt_b] * 2):
        n = 4 + i  # right padding: completions of different lengths
        tail = torch.randint(3, len(tok), (n,), generator=gen)
        pad = torch.full((8 - n,), tok.pad_token_id)
        rows.append(torch.cat([prompt, tail, pad]))
        attn.append(torch.tensor([1] * (9 + n) + [0] * (8 - n)))
    ids, attention = torch.stack(rows), torch.stack(attn)
    mask = torch.zeros(ids.size(0), ids.size(1) - 1)
    mask[:, 8:] = attention[:, 9:].float()  # policy tokens: everything after the prompt
    mask[:, 10] = 0  # but an observation's token in the middle
    policy = mask.any(0)
    assert policy.nonzero()[0] == 8

    plain = token_logprobs(model, ids, attention)
    late = token_logprobs(model, ids, attention, mask)
    shared = token_logprobs(model, ids, attention, mask, share_prefix=True)
    for got in (late, shared):
        assert torch.allclose(got[:, policy], plain[:, policy], atol=1e-5)
        assert torch.all(got[:, ~policy] == 0)  # no logits for the prompt nor observation
    # a policy sampling at temperature T: log softmax(logits / T) of the taken tokens
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=attention).logits[:, :-1]
        by_hand = torch.log_softmax(logits / 0.5, -1).gather(-1, ids[:, 1:, None])[..., 0]
        tempered = token_logprobs(model, ids, attention, mask, share_prefix=True,
                                  temperature=0.5)
    assert torch.allclose(tempered[:, policy], by_hand[:, policy], atol=1e-5)

    def grads(values):
        model.zero_grad()
        (values * mask).sum().backward()
        return [p.grad.clone() for p in model.parameters()]

    for a, b in zip(grads(token_logprobs(model, ids, attention)),
                    grads(token_logprobs(model, ids, attention, mask, share_prefix=True)),
                    strict=True):
        assert torch.allclose(a, b, atol=1e-5)


def test_bf16_autocast_step_trains_fp32_weights(setup, runtime):
    # the CUDA default (precision="auto" there), exercised on CPU autocast
    from agent_world.errors import AgentWorldError

    tasks, specs = setup
    model, tok = _tiny(tasks)
    with pytest.raises(AgentWorldError, match="precision"):
        GRPOTrainer(model, tok, tasks, specs, _config(precision="fp8"), runtime=runtime)
    trainer = GRPOTrainer(model, tok, tasks, specs, _config(precision="bf16"),
                          reward=_forced_rewards, runtime=runtime)
    assert GRPOTrainer(model, tok, tasks, specs, _config(), runtime=runtime).precision == "fp32"
    stats = trainer.step()
    assert stats.policy_tokens > 0 and stats.grad_norm > 0 and math.isfinite(stats.loss)
    assert all(p.dtype == torch.float32 for p in trainer.model.parameters())
    # the trainer computes with the weights it has now: an autocast context held across an
    # optimizer step keeps the bf16 casts of the weights from its first forward pass
    # (autocast's cache), and every later pass computes with the weights before the step
    ids = torch.tensor([tok(tasks[0].instruction)["input_ids"]])
    fresh = copy.deepcopy(trainer.model)  # new tensors: nothing cached for them
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = token_logprobs(fresh, ids, torch.ones_like(ids))
    assert torch.equal(trainer._logprobs(trainer.model, ids, torch.ones_like(ids), None), expected)


def test_precision_resolves_auto_and_takes_the_environment_override(monkeypatch):
    from agent_world.errors import AgentWorldError
    from agent_world.training.lm import autocast, resolve_precision

    model = torch.nn.Linear(4, 4)  # on the CPU: "auto" is fp32 there
    monkeypatch.delenv("AGENT_WORLD_PRECISION", raising=False)
    assert resolve_precision("auto", model) == "fp32"
    assert resolve_precision("bf16", model) == "bf16"
    monkeypatch.setenv("AGENT_WORLD_PRECISION", "bf16")
    assert resolve_precision("auto", model) == "bf16"
    assert resolve_precision("fp32", model) == "fp32"  # an explicit setting wins
    with autocast("bf16", model):
        assert model(torch.ones(1, 4)).dtype == torch.bfloat16
    assert model(torch.ones(1, 4)).dtype == torch.float32
    monkeypatch.setenv("AGENT_WORLD_PRECISION", "fp16")
    with pytest.raises(AgentWorldError, match="precision 'fp16'"):
        resolve_precision("auto", model)


def test_a_save_killed_while_writing_the_reference_leaves_none(tmp_path, setup, runtime):
    """The frozen reference is written once, by the first save; later saves skip it and
    resuming loads it. A save cut short mid-reference must leave no half of one (it used to
    leave config.json without weights: every later save skipped it, resuming failed)."""
    tasks, specs = setup
    model, tok = _tiny(tasks)
    trainer = GRPOTrainer(model, tok, tasks, specs, _config(), out_dir=tmp_path / "run",
                          reward=_forced_rewards, runtime=runtime)
    trainer.step()
    whole = trainer.reference.save_pretrained

    def cut_short(directory, **kw):
        directory.mkdir(parents=True, exist_ok=True)
        trainer.reference.config.to_json_file(directory / "config.json")
        raise KeyboardInterrupt("killed while writing the weights")

    trainer.reference.save_pretrained = cut_short
    with pytest.raises(KeyboardInterrupt):
        trainer.save()
    assert not (tmp_path / "run" / "reference").exists()
    assert GRPOTrainer.latest(tmp_path / "run") is None  # that checkpoint never counted

    trainer.reference.save_pretrained = whole
    ckpt = trainer.save()
    assert ckpt == GRPOTrainer.latest(tmp_path / "run")
    assert not (tmp_path / "run" / "reference.partial").exists()
    resumed = GRPOTrainer.resume(tmp_path / "run", tasks, specs, reward=_forced_rewards,
                                 runtime=runtime)
    for (n, a), (_, b) in zip(trainer.reference.named_parameters(),
                              resumed.reference.named_parameters(), strict=True):
        assert torch.equal(a, b), n


def test_new_tasks_are_drawn_first_each_once_then_draws_cover_all_tasks():
    from types import SimpleNamespace

    tasks = [f"new{i}" for i in range(5)] + [f"old{i}" for i in range(20)]
    host = SimpleNamespace(tasks=tasks, config=GRPOConfig(tasks_per_step=2, seed=3, new_tasks=5))
    steps = [GRPOTrainer.sample_tasks(host, s) for s in range(6)]
    assert all(len(s) == 2 and len(set(s)) == 2 for s in steps)
    # steps 0-1 hold four new tasks; step 2 the fifth beside an earlier task
    assert all(t.startswith("new") for s in steps[:2] for t in s)
    assert sorted({*steps[0], *steps[1], steps[2][0]}) == tasks[:5]
    assert steps[2][1] in tasks and steps[2][1] != steps[2][0]
    assert steps == [GRPOTrainer.sample_tasks(host, s) for s in range(6)]  # seeded: resumable
    # without new tasks every step draws from all of them
    plain = SimpleNamespace(tasks=tasks, config=GRPOConfig(tasks_per_step=2, seed=3))
    drawn = {t for s in range(40) for t in GRPOTrainer.sample_tasks(plain, s)}
    assert len(drawn) > 15 and any(t.startswith("old") for t in drawn)
