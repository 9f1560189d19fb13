"""Training benchmark: environment-side rollout throughput, GRPO step split, and the embedded
trainer's policy tokens/s against TRL's GRPOTrainer (same model, tasks, group size, lengths).

    python benchmarks/train_bench.py                       # CPU, tiny model
    python benchmarks/train_bench.py --device cuda --size 0.5b   # GPU, ~0.5B model from config

Sections:
1. rollouts: 1,024 concurrent episodes driven by a scripted policy that answers instantly
   (three tool calls and an answer each): tool steps/s of the environment side alone, next
   to the engine's own ceiling (the same calls stepped straight on the episodes, no rollout
   code) and the seconds spent opening episodes and scoring them.
2. GRPO step: generation / reward / update seconds of the embedded trainer.
3. tokens/s: embedded GRPO vs trl.GRPOTrainer, single-turn (the tool call is the completion,
   rewarded by the same arena check), policy tokens generated and trained per second. Both run
   in this process with the same torch thread count, model weights, tasks, group size, batch,
   fixed completion length (min = max new tokens), temperature 1 / top-p 1 / no top-k, β and ε;
   `--warmup` steps of each are not measured, `--steps` are. Split per trainer: generation
   (embedded: sampling + tool step; TRL: `generate`), reward (the arena check; TRL's also opens
   the episode and runs the call), update (reference log-probs, forward, backward, optimizer).
   On a shared machine the absolute figures move with the load (printed next to them); the
   ratio, measured in one run, is the figure, and CPU seconds of this process (torch runs on
   one thread here; tool workers are separate processes for both trainers) are steadier than
   wall seconds when other jobs share the cores. `--plain` adds the embedded trainer with
   prompt-prefix sharing off (what the sharing is worth).
"""

from __future__ import annotations

import argparse
import os
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
            "wall_s": total, "open_s": marks[0] - start, "score_s": start + total - marks[-1],
            "passed": passed, "engine_steps_per_s": bench_engine(picked, specs, threads, workers)}


def bench_engine(tasks, specs, threads: int, workers: int) -> float:
    """The same three tool calls per episode stepped straight on the episodes (no policy, no
    parsing, no trajectories): the engine's own ceiling for section 1's loop."""
    from concurrent.futures import ThreadPoolExecutor

    with EnvRuntime(workers=workers) as runtime:
        episodes = [runtime.open(specs[t.env_fingerprint], seed=t.seed) for t in tasks]
        args = [{"reservation_id": t.chain[0].arguments["reservation_id"]} for t in tasks]
        start = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            for tool in ("get_reservation", "cancel_reservation", "get_reservation"):
                list(pool.map(lambda ea, tool=tool: ea[0].step(tool, ea[1]),
                              zip(episodes, args, strict=True)))
        elapsed = time.perf_counter() - start
        for ep in episodes:
            ep.close()
    return 3 * len(tasks) / elapsed


def make_model(tasks, specs, size: str, device: str):
    corpus = [system_prompt(t, specs[t.env_fingerprint], compact=True) + t.instruction
              for t in tasks] + [format_call("cancel_reservation", {"reservation_id": "ABC123"})]
    tok = tiny_tokenizer(corpus, vocab_size=512)
    return sized_model(tok, size=size, seed=0).to(device), tok


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def bench_grpo(tasks, specs, size, device, steps, group, new_tokens, warmup=1,
               share_prefix=True) -> dict:
    model, tok = make_model(tasks, specs, size, device)
    trainer = GRPOTrainer(model, tok, tasks, specs, GRPOConfig(
        tasks_per_step=4, group_size=group, max_turns=1, max_new_tokens=new_tokens,
        min_new_tokens=new_tokens, compact_tools=True, kl_coef=0.04, lr=1e-5, device=device,
        minibatch_size=4 * group, temperature=1.0, share_prefix=share_prefix))
    for _ in range(warmup):  # allocations, worker start
        trainer.step()
    cpu = time.process_time()
    stats = [trainer.step() for _ in range(steps)]
    cpu = time.process_time() - cpu
    gen = sum(s.generation_s for s in stats)
    rew = sum(s.reward_s for s in stats)
    upd = sum(s.update_s for s in stats)
    tokens = sum(s.policy_tokens for s in stats)
    return {"generation_s": gen / steps, "reward_s": rew / steps, "update_s": upd / steps,
            "step_s": (gen + rew + upd) / steps, "tokens": tokens,
            "tokens_per_s": tokens / (gen + rew + upd), "tokens_per_cpu_s": tokens / cpu,
            "load": load()}


def bench_trl(tasks, specs, size, device, steps, group, new_tokens, warmup=1) -> dict | None:
    try:
        from datasets import Dataset
        from transformers import TrainerCallback
        from trl import GRPOConfig as TRLConfig
        from trl import GRPOTrainer as TRLTrainer
    except ImportError as exc:
        print(f"(TRL not installed: {exc}; pip install -e '.[bench]')")
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
    # per optimizer step: [generation s, reward s, step s, policy tokens, CPU s]
    marks: list[list[float]] = []

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

    class Timed(TRLTrainer):
        def _generate(self, prompts):
            t = time.perf_counter()
            out = super()._generate(prompts)
            marks[-1][0] += time.perf_counter() - t
            return out

        def _calculate_rewards(self, *args, **kwargs):
            t = time.perf_counter()
            out = super()._calculate_rewards(*args, **kwargs)
            marks[-1][1] += time.perf_counter() - t
            return out

        def _generate_and_score_completions(self, inputs):
            out = super()._generate_and_score_completions(inputs)
            marks[-1][3] += int(out["completion_mask"].sum())
            return out

    class Clock(TrainerCallback):
        def on_step_begin(self, *a, **k):
            marks.append([0.0, 0.0, time.perf_counter(), 0, time.process_time()])

        def on_step_end(self, *a, **k):
            marks[-1][2] = time.perf_counter() - marks[-1][2]
            marks[-1][4] = time.process_time() - marks[-1][4]

    args = TRLConfig(output_dir=tempfile.mkdtemp(prefix="trl-bench-"),
                     per_device_train_batch_size=4 * group, num_generations=group,
                     max_completion_length=new_tokens, beta=0.04, epsilon=0.2,
                     learning_rate=1e-5, max_steps=warmup + steps, logging_steps=1000,
                     save_strategy="no", report_to="none", use_cpu=device == "cpu",
                     bf16=device != "cpu",  # as the embedded trainer's precision="auto" temperature=1.0, top_p=1.0, top_k=0,
                     loss_type="dapo", seed=0, dataloader_num_workers=0,
                     generation_kwargs={"min_new_tokens": new_tokens},
                     disable_tqdm=True)
    trainer = Timed(model=saved, processing_class=tok, reward_funcs=arena_reward,
                    args=args, train_dataset=Dataset.from_list(rows * 64))
    trainer.add_callback(Clock())
    trainer.train()
    runtime.close()
    measured = marks[warmup:]
    gen = sum(m[0] for m in measured)
    rew = sum(m[1] for m in measured)
    total = sum(m[2] for m in measured)
    tokens = sum(m[3] for m in measured)
    n = len(measured)
    return {"generation_s": gen / n, "reward_s": rew / n, "update_s": (total - gen - rew) / n,
            "step_s": total / n, "tokens": tokens, "tokens_per_s": tokens / total,
            "tokens_per_cpu_s": tokens / sum(m[4] for m in measured), "load": load()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=4, help="tool-stepping threads (section 1)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--size", default="tiny", help="tiny | small | 0.5b (from config)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--warmup", type=int, default=2, help="unmeasured steps per trainer")
    ap.add_argument("--steps", type=int, default=5, help="measured steps per trainer")
    ap.add_argument("--group", type=int, default=8)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="torch CPU threads for both trainers (0: torch's default); on a "
                         "shared machine more threads than free cores slow every op down")
    ap.add_argument("--plain", action="store_true",
                    help="also time the embedded trainer without prompt-prefix sharing")
    ap.add_argument("--skip-rollouts", action="store_true")
    ap.add_argument("--skip-trl", action="store_true")
    ap.add_argument("--skip-grpo", action="store_true", help="section 1 only")
    args = ap.parse_args()
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)

    spec = load_example("airline")
    tasks = drill_tasks("cancel", spec=spec)
    specs = spec_index(tasks, [spec])

    if not args.skip_rollouts:
        r = bench_rollouts(tasks, specs, args.episodes, args.threads, args.workers)
        print("\n1. rollouts (scripted instant policy, environment side; engine only: the same "
              "calls stepped straight on episodes)")
        print(f"{'episodes':>9} {'tool steps':>11} {'steps/s':>9} {'engine only':>12} "
              f"{'rollout/engine':>15} {'open s':>7} {'score s':>8} {'wall s':>8} {'passed':>7}"
              f"  load average")
        print(f"{r['episodes']:>9} {r['tool_steps']:>11} {r['steps_per_s']:>9.0f} "
              f"{r['engine_steps_per_s']:>12.0f} "
              f"{r['steps_per_s'] / r['engine_steps_per_s']:>15.2f} {r['open_s']:>7.2f} "
              f"{r['score_s']:>8.2f} {r['wall_s']:>8.2f} {r['passed']:>7}  {load()}")

    if args.skip_grpo:
        return
    run = (args.size, args.device, args.steps, args.group, args.new_tokens, args.warmup)
    g = bench_grpo(tasks, specs, *run)
    plain = bench_grpo(tasks, specs, *run, share_prefix=False) if args.plain else None
    t = None if args.skip_trl else bench_trl(tasks, specs, *run)
    print(f"\n2./3. GRPO step, {args.size} model on {args.device}, 4 tasks x {args.group}, "
          f"{args.new_tokens} new tokens, {torch.get_num_threads()} torch thread(s), "
          f"{args.warmup} warm-up + {args.steps} measured steps each")
    print(f"{'trainer':>9} {'generation s':>13} {'reward s':>9} {'update s':>9} {'step s':>7} "
          f"{'tokens':>7} {'tokens/s':>9} {'tokens/CPU-s':>13}  load average after")
    for name, x in (("embedded", g), ("unshared", plain), ("TRL", t)):
        if x:
            print(f"{name:>9} {x['generation_s']:>13.2f} {x['reward_s']:>9.2f} "
                  f"{x['update_s']:>9.2f} {x['step_s']:>7.2f} {x['tokens']:>7} "
                  f"{x['tokens_per_s']:>9.0f} {x['tokens_per_cpu_s']:>13.0f}  {x['load']}")
    for key, what in (("tokens_per_s", "policy tokens/s (wall)"),
                      ("tokens_per_cpu_s", "policy tokens per CPU-second of this process")):
        ratio = f"{g[key] / t[key]:.2f}x" if t else "- (TRL skipped)"
        print(f"{what}, embedded / TRL: {ratio}"
              + (f"; embedded / unshared: {g[key] / plain[key]:.2f}x" if plain else ""))


if __name__ == "__main__":
    main()
