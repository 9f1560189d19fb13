"""Training benchmark: environment-side rollout throughput, GRPO step split, and the embedded
trainer's policy tokens/s against TRL's GRPOTrainer (same model, tasks, group size, lengths).

    python benchmarks/train_bench.py                       # CPU, tiny model
    python benchmarks/train_bench.py --device cuda --size 0.5b   # GPU, ~0.5B model from config

Sections:
1. rollouts: 1,024 concurrent episodes driven by a scripted policy that answers instantly
   (three tool calls and an answer each): tool steps/s of the environment side alone.
2. GRPO step: generation / reward / update seconds of the embedded trainer.
3. tokens/s: embedded GRPO vs trl.GRPOTrainer, single-turn (the tool call is the completion,
   rewarded by the same arena check), policy tokens generated and trained per second.
"""

from __future__ import annotations

import argparse
import time

import torch

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.examples import load_example
from agent_world.training.drills import drill_tasks
from agent_world.training.grpo import GRPOConfig, GRPOTrainer
from agent_world.training.lm import sized_model, tiny_tokenizer
from agent_world.training.policies import EpisodeState
from agent_world.training.rollout import RolloutConfig, run_rollouts, spec_index
from agent_world.training.toolcall import format_answer, format_call, system_prompt


class InstantPolicy:
    """Replies at once: look the reservation up, cancel it, look again, answer."""

    name = "instant"

    def act(self, states: list[EpisodeState]) -> list[str]:
        out = []
        for s in states:
            rid = s.task.chain[0].arguments["reservation_id"]
            turn = sum(m["role"] == "assistant" for m in s.messages)
            out.append([format_call("get_reservation", {"reservation_id": rid}),
                        format_call("cancel_reservation", {"reservation_id": rid}),
                        format_call("get_reservation", {"reservation_id": rid}),
                        format_answer("cancelled")][turn])
        return out


def bench_rollouts(tasks, specs, episodes: int, threads: int, workers: int) -> dict:
    picked = [tasks[i % len(tasks)] for i in range(episodes)]  # one episode each
    marks: list[float] = []
    with EnvRuntime(workers=workers) as runtime:
        start = time.perf_counter()
        rollouts = run_rollouts(InstantPolicy(), picked, specs,
                                RolloutConfig(max_turns=4, step_threads=threads),
                                runtime=runtime,
                                on_turn=lambda turn, live: marks.append(time.perf_counter()))
        total = time.perf_counter() - start
    steps = sum(1 for r in rollouts for s in r.trajectory.steps if s.tool)
    loop = marks[-1] - marks[0]  # turns 0..2: the three tool-calling turns
    passed = sum(r.trajectory.reward >= 1 for r in rollouts)
    return {"episodes": len(rollouts), "tool_steps": steps,
            "steps_per_s": steps / loop if loop > 0 else float("nan"),
            "wall_s": total, "passed": passed}


def make_model(tasks, specs, size: str, device: str):
    corpus = [system_prompt(t, specs[t.env_fingerprint], compact=True) + t.instruction
              for t in tasks] + [format_call("cancel_reservation", {"reservation_id": "ABC123"})]
    tok = tiny_tokenizer(corpus, vocab_size=512)
    return sized_model(tok, size=size, seed=0).to(device), tok


def bench_grpo(tasks, specs, size, device, steps, group, new_tokens) -> dict:
    model, tok = make_model(tasks, specs, size, device)
    trainer = GRPOTrainer(model, tok, tasks, specs, GRPOConfig(
        tasks_per_step=4, group_size=group, max_turns=1, max_new_tokens=new_tokens,
        min_new_tokens=new_tokens, compact_tools=True, kl_coef=0.04, lr=1e-5, device=device,
        minibatch_size=16))
    trainer.step()  # warm-up (allocations, worker start)
    stats = [trainer.step() for _ in range(steps)]
    gen = sum(s.generation_s for s in stats)
    rew = sum(s.reward_s for s in stats)
    upd = sum(s.update_s for s in stats)
    tokens = sum(s.policy_tokens for s in stats)
    return {"generation_s": gen / steps, "reward_s": rew / steps, "update_s": upd / steps,
            "tokens": tokens, "tokens_per_s": tokens / (gen + rew + upd)}


def bench_trl(tasks, specs, size, device, steps, group, new_tokens) -> dict | None:
    try:
        from datasets import Dataset
        from trl import GRPOConfig as TRLConfig
        from trl import GRPOTrainer as TRLTrainer
    except ImportError as exc:
        print(f"(TRL not installed: {exc})")
        return None
    import tempfile

    from agent_world.tasks.model import Trajectory
    from agent_world.training.reward import score
    from agent_world.training.rollout import observe_reply

    model, tok = make_model(tasks, specs, size, device)
    saved = tempfile.mkdtemp(prefix="trl-bench-model-")
    model.save_pretrained(saved)  # TRL builds its reference model from a path
    tok.save_pretrained(saved)
    by_prompt = {}
    rows = []
    for t in tasks:
        msgs = [{"role": "system", "content": system_prompt(t, specs[t.env_fingerprint],
                                                            compact=True)},
                {"role": "user", "content": t.instruction}]
        key = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        by_prompt[key] = t
        rows.append({"prompt": key})
    runtime = EnvRuntime(workers=2)

    def arena_reward(prompts, completions, **_):
        out = []
        for p, c in zip(prompts, completions, strict=True):
            task = by_prompt[p]
            with runtime.open(specs[task.env_fingerprint], seed=task.seed) as ep:
                step = observe_reply(ep, task, list(task.tool_view), c)
                traj = Trajectory(task_id=task.id, steps=[step], finished=True)
                score(task, traj, ep)
            out.append(traj.reward)
        return out

    tokens = [0]

    class Count(TRLTrainer):
        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            tokens[0] += int(out["completion_mask"].sum())
            return out

    args = TRLConfig(output_dir="/tmp/trl-bench", per_device_train_batch_size=4 * group,
                     num_generations=group, max_completion_length=new_tokens,
                     beta=0.04, epsilon=0.2, learning_rate=1e-5, max_steps=steps + 1,
                     logging_steps=1000, save_strategy="no", report_to="none",
                     use_cpu=device == "cpu", bf16=False, temperature=1.0,
                     loss_type="dapo", seed=0, dataloader_num_workers=0,
                     generation_kwargs={"min_new_tokens": new_tokens})
    trainer = Count(model=saved, processing_class=tok, reward_funcs=arena_reward,
                    args=args, train_dataset=Dataset.from_list(rows * 64))
    times: list[float] = []

    from transformers import TrainerCallback

    class Clock(TrainerCallback):
        def on_step_begin(self, *a, **k):
            times.append(time.perf_counter())

        def on_step_end(self, *a, **k):
            times.append(time.perf_counter())

    trainer.add_callback(Clock())
    trainer.train()
    runtime.close()
    measured = sum(times[i + 1] - times[i] for i in range(2, len(times) - 1, 2))  # skip warm-up
    per_step = tokens[0] / (steps + 1)
    return {"tokens": per_step * steps, "tokens_per_s": per_step * steps / measured}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--size", default="tiny", help="tiny | small | 0.5b (from config)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--skip-trl", action="store_true")
    args = ap.parse_args()
    if args.device == "cpu":
        torch.set_num_threads(max(1, torch.get_num_threads()))

    spec = load_example("airline")
    tasks = drill_tasks("cancel", spec=spec)
    specs = spec_index(tasks, [spec])

    r = bench_rollouts(tasks, specs, args.episodes, args.threads, args.workers)
    print("\n1. rollouts (scripted instant policy, environment side)")
    print(f"{'episodes':>9} {'tool steps':>11} {'steps/s':>9} {'wall s':>8} {'passed':>7}")
    print(f"{r['episodes']:>9} {r['tool_steps']:>11} {r['steps_per_s']:>9.0f} "
          f"{r['wall_s']:>8.2f} {r['passed']:>7}")

    g = bench_grpo(tasks, specs, args.size, args.device, args.steps, args.group,
                   args.new_tokens)
    print(f"\n2. GRPO step ({args.size} model, {args.device}, 4 tasks x {args.group}, "
          f"{args.new_tokens} new tokens)")
    print(f"{'generation s':>13} {'reward s':>9} {'update s':>9} {'tokens/s':>9}")
    print(f"{g['generation_s']:>13.2f} {g['reward_s']:>9.2f} {g['update_s']:>9.2f} "
          f"{g['tokens_per_s']:>9.0f}")

    t = None if args.skip_trl else bench_trl(tasks, specs, args.size, args.device, args.steps,
                                             args.group, args.new_tokens)
    print("\n3. policy tokens/s, same model/tasks/group/lengths")
    print(f"{'embedded':>9} {'TRL':>9} {'ratio':>7}")
    if t:
        print(f"{g['tokens_per_s']:>9.0f} {t['tokens_per_s']:>9.0f} "
              f"{g['tokens_per_s'] / t['tokens_per_s']:>6.2f}x")
    else:
        print(f"{g['tokens_per_s']:>9.0f} {'-':>9} {'-':>7}")


if __name__ == "__main__":
    main()
