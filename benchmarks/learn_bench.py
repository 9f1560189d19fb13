"""Learning check: a policy's mean reward on held-out arena tasks before and during GRPO.

    python benchmarks/learn_bench.py                    # tiny random model, CPU, 200 steps
    python benchmarks/learn_bench.py --policy smollm2 --steps 10 --sft-steps 20 --group 4 \
        --eval-every 5                                 # SmolLM2 short run (~30 min, 1 core)

Tasks: the switchboard drill (16 tasks, "Turn on/off the ROOM light.", checked on the final
state). The policy is warm-started by supervised fine-tuning on the gold solutions of one part
of them (`learning_split`); GRPO then trains on the other part and the reward is measured on
that part, which the warm start never saw. Prints the curve as a table and saves a plot.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch

from agent_world.training.learning import learning_run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--policy", default="tiny", help="tiny | smollm2")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--sft-steps", type=int, default=100)
    ap.add_argument("--group", type=int, default=32,
                    help="attempts per held-out task and step (16 stalls near 0.78: one task "
                         "never gets a successful attempt)")
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kl", type=float, default=0.1, help="KL coefficient")
    ap.add_argument("--eval-every", type=int, default=10)
    ap.add_argument("--eval-attempts", type=int, default=8,
                    help="sampled attempts per held-out task at each evaluation")
    ap.add_argument("--updates-per-batch", type=int, default=2,
                    help="optimisation passes over each batch (later ones clipped)")
    ap.add_argument("--warmup", type=int, default=10, help="learning-rate warm-up steps")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--both", type=int, default=3,
                    help="rooms whose two actions are both in the warm start (more: fewer "
                         "held-out tasks per GRPO step)")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch CPU threads (1: a shared machine; more threads than free "
                         "cores makes every op many times slower)")
    ap.add_argument("--out", default="benchmarks/results")
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"learning_{args.policy}"
    curve: list[dict] = []

    def on_step(point: dict) -> None:
        print(f"step {point['step']:>4}  reward {point['reward']:+.3f}  "
              f"held-out eval {point.get('eval', float('nan')):+.3f}  "
              f"calls {point.get('call_rate', float('nan')):.2f}  "
              f"malformed {point.get('malformed_rate', float('nan')):.2f}  "
              f"({(time.perf_counter() - started) / 60:.1f} min)", flush=True)
        curve.append(point)
        save(curve, out, name, args)  # a long run leaves its curve so far

    learning_run(args.policy, steps=args.steps, sft_steps=args.sft_steps,
                 group_size=args.group, lr=args.lr, device=args.device, seed=args.seed,
                 eval_every=args.eval_every, temperature=args.temperature, both=args.both,
                 kl_coef=args.kl, updates_per_batch=args.updates_per_batch,
                 warmup_steps=args.warmup,
                 eval_attempts=args.eval_attempts, on_step=on_step)
    print_curve(curve, args.eval_every)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    evals = [p for p in curve if "eval" in p]
    print(f"\n{'policy':>8} {'steps':>6} {'temperature':>12} {'reward before':>14} "
          f"{'reward after':>13} {'minutes':>8}")
    minutes = (time.perf_counter() - started) / 60
    print(f"{args.policy:>8} {len(curve) - 1:>6} {args.temperature:>12g} "
          f"{evals[0]['eval']:>14.3f} {evals[-1]['eval']:>13.3f} {minutes:>8.1f}")
    if "eval_t1" in evals[-1]:  # the same checkpoints sampled at temperature 1
        print(f"{args.policy:>8} {len(curve) - 1:>6} {1:>12g} {evals[0]['eval_t1']:>14.3f} "
              f"{evals[-1]['eval_t1']:>13.3f}")
    print(f"\n{'held-out task':<32} {'before':>7} {'after':>7}")
    for instruction, after in evals[-1].get("eval_tasks", {}).items():
        print(f"{instruction:<32} {evals[0]['eval_tasks'][instruction]:>7.3f} {after:>7.3f}")
    print(f"plot: {out / f'{name}.png'}")


def print_curve(curve: list[dict], every: int) -> None:
    """The curve as a table: held-out reward at each evaluation, and the training batches
    since the previous one (mean reward, attempts with a call / a malformed call, entropy
    estimate, KL to the reference, groups with no signal)."""
    print(f"\n{'step':>5} {'held-out':>9} {'batch':>7} {'calls':>6} {'malformed':>10} "
          f"{'-logp/tok':>10} {'KL':>6} {'flat groups':>12}")
    evals = [p for p in curve if "eval" in p]
    prev = 0
    for p in evals:
        window = [q for q in curve[prev:p["step"]] if "loss" in q] or [p]
        prev = p["step"]

        def mean(key: str, window: list[dict] = window) -> float:
            vals = [q[key] for q in window if key in q]
            return sum(vals) / len(vals) if vals else float("nan")

        print(f"{p['step']:>5} {p['eval']:>9.3f} {mean('reward'):>7.3f} "
              f"{mean('call_rate'):>6.2f} {mean('malformed_rate'):>10.2f} "
              f"{mean('neg_logp'):>10.3f} {mean('kl'):>6.3f} {mean('flat_groups'):>12.2f}")


def save(curve: list[dict], out: Path, name: str, args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    (out / f"{name}.json").write_text(json.dumps(curve, indent=1))
    fig, ax = plt.subplots(figsize=(6, 3.5))
    trained = [p for p in curve if "loss" in p]  # points with a GRPO step
    ax.plot([p["step"] for p in trained], [p["reward"] for p in trained], label="batch reward")
    evals = [p for p in curve if "eval" in p]
    ax.plot([p["step"] for p in evals], [p["eval"] for p in evals], "o-",
            label=f"held-out tasks ({args.eval_attempts} sampled attempts each)")
    ax.set_xlabel("GRPO step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("mean reward")
    ax.set_ylim(-0.35, 1.05)
    ax.set_title(f"GRPO, {args.policy} policy, switchboard drill\n"
                 f"group {args.group}, warm start {args.sft_steps} steps, "
                 f"lr {args.lr or 'default'}, KL {args.kl}, T {args.temperature}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / f"{name}.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
