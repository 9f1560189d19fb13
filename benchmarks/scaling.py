"""Environment scaling: held-out pass rate after training on 1, 2, 4, ... environments at a fixed
number of GRPO steps (the paper's environment-scaling curve, at this machine's scale).

    python benchmarks/scaling.py [--counts 1,2,4,16] [--steps 6] [--home DIR] [--json out.json]

Prepares one arena with the evolve graph's first stages (mine the embedded default, build,
held-out split, synthesize), evaluates the starting policy on the held-out tasks, then for each
count n trains a fresh copy of that policy for `--steps` steps on the tasks of the first n
training environments only and evaluates it on the same held-out tasks. Counts above the number
of training environments available are reported as such, not faked. One table from one run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.evolution.eval_store import record_evaluation  # noqa: E402
from agent_world.evolution.heldout import split_environments  # noqa: E402
from agent_world.graphs import (
    mine_graph,  # noqa: E402
    stages,  # noqa: E402
)
from agent_world.graphs.runner import invoke  # noqa: E402
from agent_world.tasks.model import Task  # noqa: E402


def _tasks(cat: Catalog, ids: list[str]) -> list[Task]:
    rows = {r["id"]: r["payload"] for r in cat.list_tasks()}
    return [Task.model_validate(rows[i]) for i in ids]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", default="1,2,4,16", help="training environment counts")
    parser.add_argument("--steps", type=int, default=6, help="GRPO steps per count")
    parser.add_argument("--tasks-per-env", type=int, default=6)
    parser.add_argument("--heldout-tasks", type=int, default=6)
    parser.add_argument("--policy", default="", help="starting policy (default: the default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--home", type=Path, help="arena home (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="aw-scaling-"))
    console = Console()

    t0 = time.perf_counter()
    mined = invoke(mine_graph.build_graph(), {"iterations": 1, "seed": args.seed},
                   thread_id="scaling-mine", home=home)
    names = [r["env"] for r in mined.get("results", []) if r.get("status") == "mined"]
    built = stages.build_environments(names, home=home, seed=args.seed)
    cat = Catalog.open(home)
    train_envs, heldout_envs = split_environments(cat, built, 0.34, args.seed)
    heldout = _tasks(cat, stages.synthesize_tasks(heldout_envs, home, args.heldout_tasks,
                                                  args.seed + 1, tag="heldout"))
    per_env = {e: _tasks(cat, stages.synthesize_tasks([e], home, args.tasks_per_env, args.seed,
                                                      tag="initial")) for e in train_envs}
    policy = args.policy or stages.default_policy()
    prep_s = time.perf_counter() - t0

    def evaluate(ref: str, label: str) -> float:
        trajs = stages.run_policy(ref, heldout, home, seed=args.seed)
        return record_evaluation(cat, f"scaling/{label}", heldout, trajs, label=label,
                                 policy=ref).pass_rate

    rows = [{"envs": 0, "tasks": 0, "pass_rate": evaluate(policy, "base"), "seconds": 0.0,
             "note": "starting policy"}]
    for n in [int(c) for c in args.counts.split(",") if c.strip()]:
        if n > len(train_envs):
            rows.append({"envs": n, "tasks": 0, "pass_rate": None, "seconds": 0.0,
                         "note": f"only {len(train_envs)} training environments available"})
            continue
        tasks = [t for e in train_envs[:n] for t in per_env[e]]
        t1 = time.perf_counter()
        # the policy's own warm start first (a base model learns the call format on the n
        # environments' gold solutions), then the same number of GRPO steps for every count
        result = stages.train_policy(policy, tasks, home / "scaling" / f"envs-{n}", args.steps,
                                     seed=args.seed, home=home, warm_start_steps=None)
        rows.append({"envs": n, "tasks": len(tasks),
                     "pass_rate": evaluate(result.checkpoint, f"envs-{n}"),
                     "seconds": time.perf_counter() - t1, "note": ""})

    table = Table(title=f"Environment scaling: {args.steps} GRPO steps, {len(heldout)} held-out "
                        f"tasks on {', '.join(heldout_envs)} (prep {prep_s:.0f}s)")
    for col in ("training envs", "training tasks", "held-out pass rate", "vs. start",
                "train+eval (s)", "note"):
        table.add_column(col, justify="left" if col == "note" else "right")
    base = rows[0]["pass_rate"]
    for r in rows:
        rate = r["pass_rate"]
        table.add_row(str(r["envs"]), str(r["tasks"]), "-" if rate is None else f"{rate:.0%}",
                      "-" if rate is None else f"{rate - base:+.0%}", f"{r['seconds']:.0f}",
                      r["note"])
    console.print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
