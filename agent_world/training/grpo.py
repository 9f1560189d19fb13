"""Embedded GRPO (PyTorch, CPU or CUDA): the trainer, its step loop and checkpoints. The
numerics (group-normalised advantages, clipped ratio, k3 KL to a frozen reference, token-level
mean over policy tokens) are in `grpo_math`, the batches in `grpo_batch`.

    trainer = GRPOTrainer(model, tokenizer, tasks, specs, GRPOConfig(group_size=4), out_dir=d)
    for stats in trainer.train(50): print(stats.step, stats.reward_mean)
    trainer = GRPOTrainer.resume(d, tasks, specs)   # the same next step as without the stop

One step: sample `tasks_per_step` tasks (seeded by the step number), run `group_size` attempts
of each in fresh episodes (`rollout.run_rollouts`), score them (`reward.score`), drop
environment faults, batch them with their group advantages (`grpo_batch.make_batch`) and
minimise the GRPO loss (`grpo_math`), gradients clipped to norm 1.0.
"""

from __future__ import annotations

import contextlib
import copy
import json
import random
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from agent_world import stop
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError
from agent_world.rollout.engine import Rollout, RolloutConfig, run_rollouts
from agent_world.rollout.reward import score
from agent_world.tasks.model import Task
from agent_world.training.grpo_batch import Batch, behaviour, make_batch
from agent_world.training.grpo_math import grpo_token_losses, token_logprobs
from agent_world.training.lm import (
    autocast,
    cpu_threads,
    deepspeed_on_cpu,
    quiet_progress_bars,
    resolve_precision,
)
from agent_world.training.policies import HFPolicy, write_policy_settings

# transformers loads only when a run resumes from a checkpoint (a trainer is handed its model),
# peft only for LoRA (an optional package)


@dataclass
class GRPOConfig:
    tasks_per_step: int = 4
    group_size: int = 4
    lr: float = 1e-5
    # the learning rate rises linearly over the first steps: Adam's first updates move every
    # weight by about lr whatever the gradient's size, and one noisy batch then undid a warm
    # start's output format (malformed calls 0.3 -> 0.7 within 4 steps at lr 2e-3)
    warmup_steps: int = 0
    clip_eps: float = 0.2
    kl_coef: float = 0.04
    max_grad_norm: float = 1.0
    # sequences whose advantage is 0 (every attempt of their task scored the same) carry no
    # policy-gradient signal, only the KL term: True leaves them out of the update, which on a
    # CPU is most of a step's time early in training, when whole batches fail alike
    skip_flat: bool = False
    updates_per_batch: int = 1  # optimisation passes over one batch of rollouts
    minibatch_size: int = 8  # sequences per forward pass (memory), gradients accumulated
    # a group's shared prompt runs once: one prefill when sampling, one forward in the update
    share_prefix: bool = True
    max_turns: int = 4
    max_new_tokens: int = 64
    min_new_tokens: int = 0  # > 0: fixed-length turns (throughput benchmarks)
    max_total_tokens: int = 2048  # prompt + turns; a longer conversation stops (gave up)
    temperature: float = 1.0
    compact_tools: bool = True  # the compact tool listing small models train with
    lora: bool = False
    lora_rank: int = 8
    seed: int = 0
    checkpoint_every: int = 0  # 0: only at the end of train()
    device: str = "auto"
    # "bf16": forward passes autocast to bfloat16, weights and optimizer stay fp32;
    # "auto": bf16 on a CUDA card that has it, fp32 elsewhere (`lm.resolve_precision`)
    precision: str = "auto"
    # the first `new_tasks` tasks (a round's new ones) are each drawn once, in a seeded order,
    # before steps draw from all tasks; the evolve loop leaves it at 0: drawn first, random
    # re-synthesis caught up with the targeted one over three seeds (docs/ablation.md)
    new_tasks: int = 0


@dataclass
class StepStats:
    step: int
    reward_mean: float
    pass_rate: float
    loss: float
    kl: float
    clip_frac: float
    grad_norm: float
    rollouts: int
    dropped_env_faults: int
    policy_tokens: int
    generation_s: float
    reward_s: float
    update_s: float
    components: dict[str, float] = field(default_factory=dict)
    # what the policy did and how much signal the batch carried (diagnosing a stalled run)
    call_rate: float = 0.0  # attempts with at least one well-formed call of a visible tool
    malformed_rate: float = 0.0  # attempts with at least one malformed tool call
    answer_rate: float = 0.0  # attempts that ended with an answer
    neg_logp: float = 0.0  # mean -log π of the sampled policy tokens (entropy estimate)
    flat_groups: float = 0.0  # groups whose rewards are all equal (advantage 0: no signal)
    adv_abs: float = 0.0  # mean |advantage| over the batch's sequences


# ---- the trainer -----------------------------------------------------------------------------
def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


class GRPOTrainer:
    def __init__(self, model: Any, tokenizer: Any, tasks: list[Task],
                 specs: Mapping[str, EnvSpec], config: GRPOConfig | None = None,
                 out_dir: str | Path | None = None, reference: Any = None,
                 reward: Callable[..., None] | None = None, runtime: EnvRuntime | None = None):
        if not tasks:
            raise AgentWorldError("GRPO needs at least one task")
        self.config = config or GRPOConfig()
        self.device = pick_device(self.config.device)
        deepspeed_on_cpu()  # checkpoints import DeepSpeed (see the helper)
        self.tokenizer, self.tasks, self.specs = tokenizer, tasks, specs
        self.out_dir = Path(out_dir) if out_dir else None
        self.reward = reward
        # episodes run in the given runtime, else in one the trainer starts on its first step
        # and keeps (workers and environment templates outlive a step); close() ends it
        self.runtime = runtime
        self._own_runtime = False
        self.step_no = 0
        self.curve: list[dict[str, Any]] = []
        model = model.to(self.device)
        if self.config.lora and not hasattr(model, "disable_adapter"):
            if self.out_dir is not None:  # resume rebuilds the adapter over this base
                model.save_pretrained(self.out_dir / "base")
            model = _with_lora(model, self.config.lora_rank)
        self.model = model
        # reference: the frozen policy at the start (LoRA: the base with the adapter disabled)
        self.reference = None
        if self.config.kl_coef > 0 and not self.config.lora:
            self.reference = (reference or copy.deepcopy(model)).to(self.device).eval()
            for p in self.reference.parameters():
                p.requires_grad_(False)
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=self.config.lr, weight_decay=0.0)
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.precision = resolve_precision(self.config.precision, self.model)

    def autocast(self) -> contextlib.AbstractContextManager[Any]:
        """The context forward passes run in (generation and the update)."""
        return autocast(self.precision, self.model)

    def env_runtime(self) -> EnvRuntime:
        if self.runtime is None:
            self.runtime, self._own_runtime = EnvRuntime(workers=2), True
        return self.runtime

    def close(self) -> None:
        """End the runtime the trainer started (a given one stays open)."""
        if self._own_runtime and self.runtime is not None:
            self.runtime.close()
            self.runtime, self._own_runtime = None, False

    def __enter__(self) -> GRPOTrainer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- one step -----------------------------------------------------------------------------
    def sample_tasks(self, step: int) -> list[Task]:
        """Step `step`'s tasks: the new tasks in a seeded order while some are undrawn (the
        rest of a step filled from the others), then a seeded draw from all tasks."""
        c = self.config
        k = min(c.tasks_per_step, len(self.tasks))
        new = self.tasks[:min(c.new_tasks, len(self.tasks))]
        order = random.Random(c.seed * 1_000_003 - 1).sample(new, len(new))
        first = order[step * k:(step + 1) * k]
        rng = random.Random(c.seed * 1_000_003 + step)
        if not first:
            return rng.sample(self.tasks, k)
        rest = [t for t in self.tasks if all(t is not f for f in first)]
        return first + rng.sample(rest, k - len(first))

    def policy(self) -> HFPolicy:
        c = self.config
        return HFPolicy(self.model, self.tokenizer, name="grpo", max_new_tokens=c.max_new_tokens,
                        max_total_tokens=c.max_total_tokens, temperature=c.temperature,
                        min_new_tokens=c.min_new_tokens, compact_tools=c.compact_tools,
                        share_prefill=c.share_prefix, precision=self.precision)

    def rollouts(self, tasks: list[Task]) -> tuple[list[Rollout], float, float]:
        """Rollouts with their generation and reward seconds."""
        reward_fn = self.reward or score
        span = [float("inf"), 0.0]  # first start, last end: episodes are scored in parallel
        lock = threading.Lock()

        def timed(task: Task, traj: Any, ep: Any) -> None:
            t = time.perf_counter()
            reward_fn(task, traj, ep)
            with lock:
                span[0], span[1] = min(span[0], t), max(span[1], time.perf_counter())

        c = self.config
        start = time.perf_counter()
        self.model.eval()
        out = run_rollouts(self.policy(), tasks, self.specs, RolloutConfig(
            max_turns=c.max_turns, group_size=c.group_size,
            compact_tools=c.compact_tools), reward=timed, runtime=self.env_runtime())
        reward_s = max(0.0, span[1] - span[0])
        return out, time.perf_counter() - start - reward_s, reward_s

    def step(self) -> StepStats:
        with cpu_threads(self.model):
            return self._step()

    def _step(self) -> StepStats:
        c = self.config
        torch.manual_seed(c.seed * 1_000_003 + self.step_no)
        rollouts, gen_s, reward_s = self.rollouts(self.sample_tasks(self.step_no))
        start = time.perf_counter()
        batch = make_batch(rollouts, self.tokenizer.pad_token_id)
        stats = {"loss": 0.0, "kl": 0.0, "clip": 0.0, "grad": 0.0, "neg_logp": 0.0}
        tokens = 0
        signal = batch
        if batch is not None and c.skip_flat:
            keep = batch.advantages != 0
            signal = batch.select(keep) if bool(keep.any()) else None
        if signal is not None:
            stats, tokens = self.update(signal)
        update_s = time.perf_counter() - start
        kept = [r.trajectory for r in rollouts if not r.trajectory.env_fault]
        comps: dict[str, float] = {}
        for t in kept:
            for k, v in t.reward_components.items():
                comps[k] = comps.get(k, 0.0) + v / len(kept)
        result = StepStats(
            step=self.step_no,
            reward_mean=sum(t.reward for t in kept) / len(kept) if kept else 0.0,
            # the check's verdict (extra calls lower a passing score); a custom reward
            # function reports a check score only
            pass_rate=(sum(1 for t in kept if t.reward_components.get(
                "check.passed", t.reward_components.get("check", 0)) >= 1)
                       / len(kept)) if kept else 0.0,
            loss=stats["loss"], kl=stats["kl"], clip_frac=stats["clip"], grad_norm=stats["grad"],
            rollouts=len(rollouts), dropped_env_faults=len(rollouts) - len(kept),
            policy_tokens=tokens, generation_s=gen_s, reward_s=reward_s, update_s=update_s,
            components=comps, neg_logp=stats["neg_logp"], **behaviour(kept, batch))
        self.step_no += 1
        self.curve.append(asdict(result))
        return result

    def learning_rate(self, step: int) -> float:
        c = self.config
        return c.lr * min(1.0, (step + 1) / c.warmup_steps) if c.warmup_steps > 0 else c.lr

    def update(self, batch: Batch) -> tuple[dict[str, float], int]:
        c = self.config
        for group in self.optimizer.param_groups:
            group["lr"] = self.learning_rate(self.step_no)
        self.model.train()
        total = float(batch.mask.sum().clamp(min=1))
        parts = [(mb.ids.to(self.device), mb.attention.to(self.device), mb.mask.to(self.device),
                  mb.advantages.to(self.device)) for _, mb in batch.slices(c.minibatch_size)]
        olds: list[torch.Tensor | None] = []
        refs: list[torch.Tensor | None] = []
        with torch.no_grad():
            for ids, attn, mask, _ in parts:
                olds.append(self._logprobs(self.model, ids, attn, mask)
                            if c.updates_per_batch > 1 else None)
                refs.append(self._ref_logprobs(ids, attn, mask))
        zero = torch.zeros((), device=self.device)
        loss_sum, kl_sum, clip_sum = zero.clone(), zero.clone(), zero.clone()
        nll_sum = zero.clone()
        norm = zero
        for _ in range(c.updates_per_batch):
            self.optimizer.zero_grad(set_to_none=True)
            for (ids, attn, mask, adv), old, ref in zip(parts, olds, refs, strict=True):
                logp = self._logprobs(self.model, ids, attn, mask)
                old_lp = old if old is not None else logp.detach()
                loss_t, kl_t, clip_t = grpo_token_losses(logp, old_lp, ref, adv, c.clip_eps,
                                                         c.kl_coef)
                loss = (loss_t * mask).sum() / total
                loss.backward()
                # accumulated on the device: one host sync per step, not per minibatch
                loss_sum += loss.detach()
                kl_sum += (kl_t.detach() * mask).sum() / total
                clip_sum += (clip_t * mask).sum() / total
                nll_sum -= (logp.detach() * mask).sum() / total
            params = [p for p in self.model.parameters() if p.requires_grad]
            norm = torch.nn.utils.clip_grad_norm_(params, c.max_grad_norm)
            self.optimizer.step()
        k = c.updates_per_batch
        agg = {"loss": float(loss_sum) / k, "kl": float(kl_sum) / k, "clip": float(clip_sum) / k,
               "grad": float(norm), "neg_logp": float(nll_sum) / k}
        return agg, int(batch.mask.sum())

    def _logprobs(self, model: Any, ids: torch.Tensor, attn: torch.Tensor,
                  mask: torch.Tensor | None) -> torch.Tensor:
        """Log-probs of `ids`, computed at the policy columns of `mask` (None: all)."""
        with self.autocast():
            return token_logprobs(model, ids, attn, mask,
                                  share_prefix=self.config.share_prefix,
                                  temperature=self.config.temperature or 1.0)

    def _ref_logprobs(self, ids: torch.Tensor, attn: torch.Tensor,
                      mask: torch.Tensor | None = None) -> torch.Tensor | None:
        if self.config.kl_coef <= 0:
            return None
        if self.config.lora:
            with self.model.disable_adapter():
                return self._logprobs(self.model, ids, attn, mask)
        assert self.reference is not None
        return self._logprobs(self.reference, ids, attn, mask)

    def train(self, steps: int,
              on_step: Callable[[StepStats], None] | None = None) -> list[StepStats]:
        """Run until `steps` steps are done in total (a resumed trainer continues)."""
        out = []
        while self.step_no < steps:
            stop.check()
            stats = self.step()
            out.append(stats)
            if on_step:
                on_step(stats)
            every = self.config.checkpoint_every
            if self.out_dir and every and self.step_no % every == 0:
                self.save()
        if self.out_dir:
            self.save()
        return out

    # -- checkpoints --------------------------------------------------------------------------
    def save(self, path: str | Path | None = None) -> Path:
        """Policy (or LoRA adapter), optimizer, step and curve; the reference is kept once."""
        if path is None:
            if self.out_dir is None:
                raise AgentWorldError("no output directory for checkpoints")
            path = self.out_dir / "checkpoints" / f"step-{self.step_no:06d}"
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        with quiet_progress_bars():
            self.model.save_pretrained(path / "model")
            self.tokenizer.save_pretrained(path / "model")
        write_policy_settings(path / "model", compact_tools=self.config.compact_tools,
                              max_new_tokens=self.config.max_new_tokens,
                              max_total_tokens=self.config.max_total_tokens)
        torch.save(self.optimizer.state_dict(), path / "optimizer.pt")
        if self.reference is not None and self.out_dir is not None:
            ref_dir = self.out_dir / "reference"
            if not ref_dir.is_dir():
                # whole or not at all: later saves skip a reference that is there, and resuming
                # loads it, so a save killed midway must not leave half of one behind
                partial = self.out_dir / "reference.partial"
                shutil.rmtree(partial, ignore_errors=True)
                with quiet_progress_bars():
                    self.reference.save_pretrained(partial)
                partial.rename(ref_dir)
        # last, and whole: a checkpoint counts (`latest`) once its trainer.json is there
        meta = path / "trainer.json.partial"
        meta.write_text(json.dumps(
            {"step": self.step_no, "config": asdict(self.config), "curve": self.curve},
            indent=1))
        meta.replace(path / "trainer.json")
        return path

    @staticmethod
    def prune(out_dir: str | Path) -> int:
        """Remove what only resuming the run in `out_dir` needs — optimizer states and the
        frozen reference (for SmolLM2 ~1 GB and ~0.5 GB beside a 0.5 GB policy) — once it is
        finished; every checkpoint's policy stays loadable. Returns the bytes freed."""
        out = Path(out_dir)
        optimizers = list(out.glob("checkpoints/step-*/optimizer.pt"))
        references = [out / "reference", out / "reference.partial"]  # (one cut short)
        files = optimizers + [p for r in references for p in r.rglob("*") if p.is_file()]
        freed = sum(p.stat().st_size for p in files)
        for p in optimizers:
            p.unlink(missing_ok=True)
        for r in references:
            shutil.rmtree(r, ignore_errors=True)
        return freed

    @staticmethod
    def latest(out_dir: str | Path) -> Path | None:
        found = sorted((Path(out_dir) / "checkpoints").glob("step-*"))
        found = [p for p in found if (p / "trainer.json").exists()]
        return found[-1] if found else None

    @classmethod
    def resume(cls, out_dir: str | Path, tasks: list[Task], specs: Mapping[str, EnvSpec],
               checkpoint: str | Path | None = None, **kwargs: Any) -> GRPOTrainer:
        ckpt = Path(checkpoint) if checkpoint else cls.latest(out_dir)
        if ckpt is None:
            raise AgentWorldError(f"no checkpoint in {out_dir}")
        meta = json.loads((ckpt / "trainer.json").read_text())
        config = GRPOConfig(**meta["config"])
        if not (ckpt / "optimizer.pt").exists():
            raise AgentWorldError(f"{ckpt} was pruned when its run finished (no optimizer "
                                  "state): train on from its policy, `<checkpoint>/model`, in "
                                  "a new output directory")
        with quiet_progress_bars():
            tok = AutoTokenizer.from_pretrained(ckpt / "model")
            if config.lora:
                from peft import PeftModel

                base = AutoModelForCausalLM.from_pretrained(Path(out_dir) / "base")
                model = PeftModel.from_pretrained(base, ckpt / "model", is_trainable=True)
            else:
                model = AutoModelForCausalLM.from_pretrained(ckpt / "model")
            reference = None
            if config.kl_coef > 0 and not config.lora:
                reference = AutoModelForCausalLM.from_pretrained(Path(out_dir) / "reference")
        trainer = cls(model, tok, tasks, specs, config, out_dir=out_dir, reference=reference,
                      **kwargs)
        trainer.optimizer.load_state_dict(torch.load(ckpt / "optimizer.pt"))
        trainer.step_no, trainer.curve = meta["step"], meta["curve"]
        return trainer


def _with_lora(model: Any, rank: int) -> Any:
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError as exc:
        raise AgentWorldError("LoRA needs the peft package (pip install peft)") from exc
    names = {n.rsplit(".", 1)[-1] for n, _ in model.named_modules()}
    targets = [n for n in ("q_proj", "k_proj", "v_proj", "o_proj") if n in names] or ["c_attn"]
    return get_peft_model(model, LoraConfig(r=rank, lora_alpha=2 * rank, target_modules=targets,
                                            lora_dropout=0.0, task_type="CAUSAL_LM"))


__all__ = ["GRPOConfig", "GRPOTrainer", "StepStats"]
