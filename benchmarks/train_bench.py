"""Training benchmark: environment-side rollout throughput, GRPO step split, and the embedded
trainer's policy tokens/s against TRL's GRPOTrainer (same model, tasks, group size, lengths).

    python benchmarks/train_bench.py                       # CPU, tiny model
    python benchmarks/train_bench.py --device cuda --size 0.5b   # GPU, ~0.5B model from config

Sections:
1. rollouts: 1,024 concurrent episodes driven by a scripted policy that answers instantly
   (each task's gold calls, then its answer): tool steps/s of the environment side alone in
   the steady state training sees (the second batch on one runtime, whose closed episodes the
   first batch left for reuse), next to the first (cold) batch, the engine's own ceiling (the
   same calls stepped straight on the episodes, no rollout code, also a second batch) and the
   seconds spent opening episodes and scoring them. Two task sets: the
   airline cancel drill (get_reservation, cancel_reservation, get_reservation) and the mix
   the arena trains on (the training environments' tasks of a home built by
   `agent-world evolve --policy tiny`, or `--home DIR`).
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
from agent_world.rollout.engine import RolloutConfig, each, run_rollouts, spec_index
from agent_world.rollout.policy import EpisodeState
from agent_world.rollout.toolcall import format_answer, format_call, system_prompt
from agent_world.training.drills import drill_tasks
from agent_world.training.grpo import GRPOConfig, GRPOTrainer
from agent_world.training.lm import sized_model, tiny_tokenizer


class ScriptedPolicy:
    """Replies at once with each task's gold calls in order, then its answer: the fastest
    policy there is, so section 1 measures the environment side alone."""

    name = "scripted"

    def __init__(self, scripts: dict[str, list[tuple[str, dict]]]):
        self.scripts = scripts  # task id -> [(visible tool name, arguments), ...]

    def act(self, states: list[EpisodeState]) -> list[str]:
        out = []
        for s in states:
            script = self.scripts[s.task.id]
            turn = sum(m["role"] == "assistant" for m in s.messages)
            if turn < len(script):
                out.append(format_call(*script[turn]))
            else:
                answer = s.task.reference_answer
                out.append(format_answer("done" if answer is None else answer))
        return out


def airline_scripts(tasks) -> dict[str, list[tuple[str, dict]]]:
    """The airline cancel drill: look the reservation up, cancel it, look again."""
    out = {}
    for t in tasks:
        rid = {"reservation_id": t.chain[0].arguments["reservation_id"]}
        out[t.id] = [("get_reservation", rid), ("cancel_reservation", rid),
                     ("get_reservation", rid)]
    return out


def gold_scripts(tasks, specs) -> dict[str, list[tuple[str, dict]]]:
    """Each task's gold calls: its chain, or the calls its gold solution makes (programmatic
    tasks; run once here, recorded), under the names the task shows the agent."""
    from agent_world.tasks.scripts import ScriptError, run_solution

    out = {}
    with EnvRuntime(workers=1) as runtime:
        for t in tasks:
            visible = {real: vis for vis, real in t.tool_view.items()}
            calls = [(c.tool, c.arguments) for c in t.chain]
            if t.kind == "programmatic" and t.solution:
                calls = []
                with runtime.open(specs[t.env_fingerprint], seed=t.seed) as ep:
                    def call(tool, arguments, ep=ep, calls=calls):
                        calls.append((tool, arguments))
                        obs = ep.step(tool, arguments)
                        return ({"ok": True, "result": obs.result} if obs.ok else
                                {"ok": False, "kind": obs.error.kind,
                                 "message": obs.error.message})
                    try:
                        run_solution(t.solution, call)
                    except ScriptError:
                        pass  # the calls it made before failing are still its calls
            out[t.id] = [(visible.get(tool, tool), args) for tool, args in calls]
    return out


def rollout_batch(runtime: EnvRuntime, tasks, specs, scripts, threads: int) -> dict:
    """One batch of rollouts on `runtime`: tool steps/s of the turn loop (opening and scoring
    apart, timed on their own)."""
    turns = max(len(scripts[t.id]) for t in tasks)
    marks: list[float] = []
    start = time.perf_counter()
    rollouts = run_rollouts(ScriptedPolicy(scripts), tasks, specs,
                            RolloutConfig(max_turns=turns + 1, step_threads=threads),
                            runtime=runtime,
                            on_turn=lambda turn, live: marks.append(time.perf_counter()))
    total = time.perf_counter() - start
    steps = sum(1 for r in rollouts for s in r.trajectory.steps if s.tool)
    loop = marks[turns] - marks[0] if len(marks) > turns else marks[-1] - marks[0]
    return {"episodes": len(rollouts), "tool_steps": steps,
            "steps_per_s": steps / loop if loop > 0 else float("nan"),
            "wall_s": total, "open_s": marks[0] - start,
            "score_s": start + total - marks[min(turns, len(marks) - 1)],
            "passed": sum(r.trajectory.reward >= 1 for r in rollouts)}


def bench_rollouts(tasks, specs, scripts, episodes: int, threads: int, workers: int) -> dict:
    """A first batch on a new runtime (cold: every episode a new file and connection), then
    the next batch on the same runtime, as training runs them (steady: the closed episodes of
    the first batch reused, see `EnvRuntime(keep_closed=...)`)."""
    picked = [tasks[i % len(tasks)] for i in range(episodes)]  # one episode each
    with EnvRuntime(workers=workers) as runtime:
        cold = rollout_batch(runtime, picked, specs, scripts, threads)
        steady = rollout_batch(runtime, picked, specs, scripts, threads)
    return {**steady, "cold": cold, "load": load(),
            "engine_steps_per_s": bench_engine(picked, specs, scripts, threads, workers),
            "engine_no_turns_steps_per_s": bench_engine(picked, specs, scripts, threads, workers,
                                                        take_turns=False)}


def bench_engine(tasks, specs, scripts, threads: int, workers: int,
                 take_turns: bool | None = None) -> float:
    """The same calls per episode stepped straight on the episodes, turn by turn (no policy,
    no parsing, no trajectories): the engine's own ceiling for section 1's loop, measured as
    the rollouts are, on the second batch of episodes of one runtime (`take_turns=False`:
    stepping threads not taking turns, see EnvRuntime). Threads take calls as the rollouts'
    do (`rollout.each`)."""
    from concurrent.futures import ThreadPoolExecutor

    calls = [[(t.real_tool(name) or name, args) for name, args in scripts[t.id]] for t in tasks]
    steps = sum(len(c) for c in calls)
    with EnvRuntime(workers=workers, take_turns=take_turns) as runtime, \
            ThreadPoolExecutor(threads) as pool:
        for _ in range(2):  # the first batch warms the runtime up; the second one counts
            episodes = [runtime.open(specs[t.env_fingerprint], seed=t.seed) for t in tasks]
            start = time.perf_counter()
            for turn in range(max(len(c) for c in calls)):
                live = [(ep, c[turn]) for ep, c in zip(episodes, calls, strict=True)
                        if turn < len(c)]
                each(pool, threads, lambda item: item[0].step(*item[1]), live)
            elapsed = time.perf_counter() - start
            for ep in episodes:
                ep.close()
    return steps / elapsed


def arena_tasks(home: str | None) -> tuple[list, dict, str]:
    """The tasks the arena trains on: those of the training environments in an arena home
    (`--home`), or, without one, of a home built here by `agent-world evolve --policy tiny`
    (mined, built, split, synthesized and trained as the main job does, ~1-2 minutes)."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from agent_world.envs.catalog import Catalog
    from agent_world.tasks.model import Task

    if home is None:
        home = tempfile.mkdtemp(prefix="aw-train-bench-")
        print(f"building an arena in {home} (agent-world evolve --policy tiny) ...", flush=True)
        subprocess.run([sys.executable, "-m", "agent_world.cli", "evolve", "--policy", "tiny",
                        "--home", home], check=True, stdout=subprocess.DEVNULL)
    cat = Catalog.open(Path(home))
    try:
        splits = cat.splits()
        tasks = [Task.model_validate(r["payload"]) for r in cat.list_tasks()]
        tasks = [t for t in tasks if splits.get(t.env_name, "train") == "train"]
        specs = {}
        for t in tasks:
            if t.env_fingerprint not in specs:
                specs[t.env_fingerprint] = cat.find_env(t.env_fingerprint)
    finally:
        cat.close()
    tasks = [t for t in tasks if specs.get(t.env_fingerprint) is not None]
    return tasks, specs, home


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

    from agent_world.rollout.engine import observe_reply
    from agent_world.rollout.reward import score
    from agent_world.tasks.model import Trajectory

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
    ap.add_argument("--skip-arena", action="store_true",
                    help="section 1: the airline drill only (no pipeline-built task mix)")
    ap.add_argument("--home", default=None,
                    help="section 1: an arena home whose training tasks make the second row "
                         "(default: build one with `agent-world evolve --policy tiny`)")
    ap.add_argument("--skip-trl", action="store_true")
    ap.add_argument("--skip-grpo", action="store_true", help="section 1 only")
    args = ap.parse_args()
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)

    spec = load_example("airline")
    tasks = drill_tasks("cancel", spec=spec)
    specs = spec_index(tasks, [spec])

    if not args.skip_rollouts:
        rows = [("airline cancel drill", bench_rollouts(
            tasks, specs, airline_scripts(tasks), args.episodes, args.threads, args.workers))]
        if not args.skip_arena:
            mix, mix_specs, home = arena_tasks(args.home)
            scripts = gold_scripts(mix, mix_specs)
            mix = [t for t in mix if scripts[t.id]]
            kinds = sorted({t.kind for t in mix})
            label = (f"arena mix: {len(mix)} tasks, {len(mix_specs)} envs "
                     f"({'/'.join(kinds)})")
            print(f"arena tasks from {home}")
            rows.append((label, bench_rollouts(mix, mix_specs, scripts, args.episodes,
                                               args.threads, args.workers)))
        print("\n1. rollouts (scripted policy replaying each task's gold calls at once: the "
              "environment side). steady: the second batch on one runtime, as training runs "
              "them (episodes of the first reused); cold: the first batch (new episodes); "
              "engine only: the same calls stepped straight on episodes (second batch too)")
        print(f"{'task set':<44} {'episodes':>8} {'tool steps':>10} {'cold st/s':>9} "
              f"{'steps/s':>8} {'steady/cold':>11} {'engine only':>11} {'rollout/engine':>14} "
              f"{'no turns':>8} {'turns/none':>10} {'open s':>11} {'score s':>7} "
              f"{'passed':>6}  load average after")
        for label, r in rows:
            nt = r["engine_no_turns_steps_per_s"]
            cold = r["cold"]
            print(f"{label:<44} {r['episodes']:>8} {r['tool_steps']:>10} "
                  f"{cold['steps_per_s']:>9.0f} {r['steps_per_s']:>8.0f} "
                  f"{r['steps_per_s'] / cold['steps_per_s']:>11.2f} "
                  f"{r['engine_steps_per_s']:>11.0f} "
                  f"{r['steps_per_s'] / r['engine_steps_per_s']:>14.2f} {nt:>8.0f} "
                  f"{r['engine_steps_per_s'] / nt:>10.2f} "
                  f"{cold['open_s']:>5.2f}/{r['open_s']:<5.2f} "
                  f"{r['score_s']:>7.2f} {r['passed']:>6}  {r['load']}")
        print("(steps/s: the steady batch's turn loop, opening and scoring apart; open s: cold/"
              "steady batch; no turns: the engine-only loop with stepping threads not taking "
              "turns, EnvRuntime(take_turns=False))")

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
