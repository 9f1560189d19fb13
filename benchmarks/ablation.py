"""Does diagnosis-targeted re-synthesis help? Arms of the self-evolution loop with equal
budgets, over several seeds: held-out pass rate per arm and round, mean ± sd, and a plot.

    python benchmarks/ablation.py [--seeds 0,1,2] [--rounds 2] [--arms warm,grpo,targeted,random,spread]
                                  [--root DIR] [--out docs/ablation] [-- EVOLVE ARGS]

| arm | each round trains on | GRPO |
|---|---|---|
| `warm` | the round's mix, supervised warm start only | 0 steps |
| `grpo` | no new tasks: as many replayed earlier tasks instead (`--resynthesis none`) | yes |
| `targeted` | the diagnosis' targeted tasks + replay (the loop, the default) | yes |
| `random` | as many new tasks on as many randomly drawn training environments, no guidelines (`--resynthesis random`) + replay | yes |
| `spread` | as many targeted tasks, the guidelines on every training environment (`--targeted-envs 6 --targeted-tasks 3`) + replay | yes |

Budgets are equal: every arm runs the same warm-start and (but `warm`) GRPO steps per round on a
mix of the same size; only where the tasks come from differs (round 1 of `warm`/`grpo` trains on
the initial tasks alone, as there is nothing earlier to replay in their place). A seed fixes the
environments, split, initial and held-out tasks, so arms of one seed differ by the arm alone.
Each (arm, seed) runs `agent-world evolve` in its own arena home under `--root`, one after
another (each uses every core); runs resume, so a stopped benchmark continues where it was.
Arguments after `--` go to every run (e.g. `-- --policy tiny --heldout-tasks 6`).

Besides mean ± sd per arm and round (and the mean held-out reward after the last round), the
arms are compared task by task after the last round (the arms of a seed share their held-out
tasks): tasks both pass, tasks only one passes, and an exact two-sided sign test on the latter;
the mean reward difference, the tasks where each arm's reward is higher, and the sign test on
those (the reward moves on the tasks no arm passes).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.evolution.rounds import RoundRecord, wilson  # noqa: E402
from benchmarks.evolve_seeds import THREAD, rounds_of  # noqa: E402  (the runs' records)

ARMS: dict[str, list[str]] = {
    "warm": ["--resynthesis", "none", "--train-steps", "0"],
    "grpo": ["--resynthesis", "none"],
    "targeted": ["--resynthesis", "targeted"],
    "random": ["--resynthesis", "random"],
    # the guidelines on every training environment, the same 18 tasks: 6 × 3 instead of 3 × 6
    "spread": ["--resynthesis", "targeted", "--targeted-envs", "6", "--targeted-tasks", "3"],
}


def run(arm: str, seed: int, home: Path, rounds: int, extra: list[str],
        console: Console) -> float:
    """Run (or finish) one arm for one seed; wall seconds (0: already done)."""
    if len(rounds_of(home)) >= rounds:
        return 0.0
    start = time.perf_counter()
    # `evolve --resume` finishes an interrupted invocation (its own goal, not a new one);
    # `--rounds N` without it runs N rounds more: an earlier run of fewer rounds is resumed
    # first, then extended (passing --resume alone had left a one-round run at one round)
    resume = [["--resume"]] if (home / "checkpoints.sqlite").exists() else []
    for more in [*resume, None]:
        left = rounds - len(rounds_of(home))
        if more is None and left <= 0:
            break
        cmd = ["agent-world", "--home", str(home), "evolve", "--rounds", str(max(left, 0)),
               "--seed", str(seed), "--report", str(home / "report.html"), *extra,
               *ARMS[arm], *(more or [])]
        console.print(f"[bold]{arm}[/], seed {seed}: {' '.join(cmd)}")
        subprocess.run(cmd, check=True, env=os.environ.copy(), stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _curve(records: list[RoundRecord]) -> list[tuple[int, int]]:
    """(passes, attempts) at baseline and after each round."""
    if not records:
        return []
    points = [records[0].before] + [r.after for r in records]
    return [(int(p.get("passes", 0)), int(p.get("attempts", 0))) for p in points]


def _spread(rates: list[float]) -> str:
    if not rates:
        return "-"
    mean = statistics.fmean(rates)
    sd = statistics.stdev(rates) if len(rates) > 1 else 0.0
    return f"{100 * mean:.1f} ± {100 * sd:.1f} %"


def task_scores(home: Path, round_no: int) -> dict[str, tuple[bool, float]]:
    """Task id -> (passed, reward), in the held-out evaluation after round `round_no` ({}: not
    run)."""
    if not (home / "catalog.sqlite").exists():
        return {}
    with Catalog.open(home) as cat:
        return {a["task_id"]: (bool(a["passed"]), float(a["reward"]))
                for a in cat.evaluation_attempts(f"{THREAD}/r{round_no}/after")}


def mean_reward(home: Path, round_no: int) -> float | None:
    scores = task_scores(home, round_no)
    return statistics.fmean(r for _, r in scores.values()) if scores else None


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test on the discordant pairs (ties dropped)."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def paired(root: Path, arms: list[str], seeds: list[int], round_no: int
           ) -> list[dict[str, Any]]:
    """Per pair of arms, over every seed's held-out tasks after `round_no` (the arms of a seed
    share the held-out set, so each task is a pair): tasks, both passed, only a, only b and
    the sign test on those; the mean reward difference a - b, the tasks where a's reward is
    higher and where b's is, and the sign test on those. Pairing takes out the tasks' own
    difficulty, which rates over a few dozen tasks cannot; the reward also moves on the
    tasks neither arm passes (a right call with a wrong argument scores above no call)."""
    out = []
    for a, b in itertools.combinations(arms, 2):
        n = both = only_a = only_b = higher_a = higher_b = 0
        diffs: list[float] = []
        for seed in seeds:
            pa = task_scores(root / f"{a}-seed{seed}", round_no)
            pb = task_scores(root / f"{b}-seed{seed}", round_no)
            for task in pa.keys() & pb.keys():
                (ok_a, ra), (ok_b, rb) = pa[task], pb[task]
                n += 1
                both += ok_a and ok_b
                only_a += ok_a and not ok_b
                only_b += ok_b and not ok_a
                diffs.append(ra - rb)
                higher_a += ra > rb + 1e-9
                higher_b += rb > ra + 1e-9
        if n:
            out.append({"a": a, "b": b, "tasks": n, "both": both, "only_a": only_a,
                        "only_b": only_b, "p": sign_test(only_a, only_b),
                        "reward_diff": statistics.fmean(diffs), "higher_a": higher_a,
                        "higher_b": higher_b, "p_reward": sign_test(higher_a, higher_b)})
    return out


def plot(results: dict[str, dict[int, list[tuple[int, int]]]], rounds: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for i, (arm, by_seed) in enumerate(results.items()):
        xs, means, sds = [], [], []
        for k in range(rounds + 1):
            rates = [c[k][0] / c[k][1] for c in by_seed.values() if len(c) > k and c[k][1]]
            if rates:
                xs.append(k + (i - 1.5) * 0.06)
                means.append(statistics.fmean(rates))
                sds.append(statistics.stdev(rates) if len(rates) > 1 else 0.0)
        if xs:
            ax.errorbar(xs, means, yerr=sds, marker="o", capsize=4,
                        label=f"{arm} ({len(by_seed)} seeds)")
    ax.set_xticks(range(rounds + 1), ["baseline"] + [f"round {k}" for k in range(1, rounds + 1)])
    ax.set_ylim(-0.02, 1.0)
    ax.set_ylabel("held-out pass rate (mean ± sd over seeds)")
    ax.set_title("Ablation: where each round's training tasks come from")
    ax.grid(alpha=0.3)
    ax.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def main() -> int:
    argv = sys.argv[1:]
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--root", type=Path, default=Path("ablation-runs"))
    parser.add_argument("--out", type=Path, default=Path("docs/ablation"),
                        help="where the plot (.png) and results (.json) go")
    parser.add_argument("--only-report", action="store_true",
                        help="read what has run, run nothing")
    args = parser.parse_args(argv)
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = [a for a in arms if a not in ARMS]
    if unknown:
        parser.error(f"unknown arm(s) {unknown}; choose from {', '.join(ARMS)}")
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    console = Console(stderr=True)
    walls: dict[str, float] = {}
    # seeds outermost: a stopped benchmark has every arm of the first seeds
    for seed in seeds:
        for arm in arms:
            home = args.root / f"{arm}-seed{seed}"
            if not args.only_report:
                walls[f"{arm}/{seed}"] = run(arm, seed, home, args.rounds, extra, console)
    results: dict[str, dict[int, list[tuple[int, int]]]] = {}
    for arm in arms:
        results[arm] = {}
        for seed in seeds:
            curve = _curve(rounds_of(args.root / f"{arm}-seed{seed}"))
            if curve:
                results[arm][seed] = curve
    table = Table(title="Held-out pass rate per arm and round (mean ± sd over seeds)")
    table.add_column("arm")
    table.add_column("seeds", justify="right")
    for k in range(args.rounds + 1):
        table.add_column("baseline" if k == 0 else f"after round {k}", justify="right")
    table.add_column("per seed, last round (95% CI)")
    table.add_column("mean reward, last round", justify="right")
    rewards: dict[str, dict[int, float]] = {}
    for arm, by_seed in results.items():
        cells = []
        for k in range(args.rounds + 1):
            rates = [c[k][0] / c[k][1] for c in by_seed.values() if len(c) > k and c[k][1]]
            cells.append(_spread(rates))
        last = "; ".join(
            f"s{s}: {c[-1][0]}/{c[-1][1]} ({wilson(*c[-1])[0]:.0%}–{wilson(*c[-1])[1]:.0%})"
            for s, c in by_seed.items() if c[-1][1])
        rewards[arm] = {s: r for s in by_seed
                        if (r := mean_reward(args.root / f"{arm}-seed{s}", args.rounds))
                        is not None}
        spread = [*rewards[arm].values()]
        reward = f"{statistics.fmean(spread):+.3f} ± " \
            f"{statistics.stdev(spread) if len(spread) > 1 else 0.0:.3f}" if spread else "-"
        table.add_row(arm, str(len(by_seed)), *cells, last, reward)
    Console().print(table)
    pairs = paired(args.root, arms, seeds, args.rounds)
    if pairs:
        ptable = Table(title=f"Paired per held-out task, after round {args.rounds} (all seeds; "
                             "exact sign tests on the tasks one arm passes alone and on the "
                             "tasks one arm scores higher)")
        for c in ("arm a", "arm b", "tasks", "both pass", "only a", "only b", "p",
                  "reward a - b", "higher a", "higher b", "p (reward)"):
            ptable.add_column(c, justify="left" if c.startswith("arm") else "right")
        for r in pairs:
            ptable.add_row(r["a"], r["b"], str(r["tasks"]), str(r["both"]), str(r["only_a"]),
                           str(r["only_b"]), f"{r['p']:.2f}", f"{r['reward_diff']:+.3f}",
                           str(r["higher_a"]), str(r["higher_b"]), f"{r['p_reward']:.2f}")
        Console().print(ptable)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    plot(results, args.rounds, args.out.with_suffix(".png"))
    args.out.with_suffix(".json").write_text(json.dumps(
        {"arms": {a: {str(s): c for s, c in r.items()} for a, r in results.items()},
         "mean_reward": {a: {str(s): r for s, r in by.items()} for a, by in rewards.items()},
         "paired": pairs,
         "walls_s": walls, "rounds": args.rounds, "extra": extra}, indent=1))
    console.print(f"plot: {args.out.with_suffix('.png')}; results: "
                  f"{args.out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
