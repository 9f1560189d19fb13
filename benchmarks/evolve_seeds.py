"""Seed spread of the main job: `agent-world evolve` once per seed, each in its own arena home,
then the held-out pass rate per round and the targeted error class's failures, per seed and as
mean ± standard deviation.

    python benchmarks/evolve_seeds.py [--seeds 0,1,2] [--rounds 2] [--root DIR] [-- EVOLVE ARGS]

One seeded run of the main job says little on its own: a seed fixes the environments, the
held-out split and the tasks (two runs of one seed side by side gave bit-identical checkpoints),
and another seed draws other ones, so whether round 2 adds to round 1 is a question about the
spread across seeds, which this prints. Arguments after `--` go to every `agent-world evolve`
call (e.g. `-- --policy tiny` for a two-minute plumbing check per seed).
Runs are sequential (each uses every core) and resume: a seed whose home already holds the
rounds asked for is read, not run again.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.evolution.rounds import RoundRecord  # noqa: E402

THREAD = "evolve"  # the CLI's default thread


def rounds_of(home: Path) -> list[RoundRecord]:
    """The finished rounds recorded in `home`'s catalog, in order."""
    if not (home / "catalog.sqlite").exists():
        return []
    cat = Catalog.open(home)
    try:
        records = [RoundRecord.model_validate(r["record"]) for r in cat.list_rounds(THREAD)]
    finally:
        cat.close()
    return sorted((r for r in records if r.status == "done"), key=lambda r: r.round)


def run_seed(seed: int, home: Path, rounds: int, extra: list[str], console: Console) -> float:
    """Run (or finish) the main job for `seed` in `home`: wall seconds, 0 when already done."""
    if len(rounds_of(home)) >= rounds:
        console.print(f"seed {seed}: {rounds} round(s) already in {home}")
        return 0.0
    cmd = ["agent-world", "--home", str(home), "evolve", "--rounds", str(rounds),
           "--seed", str(seed), *extra]
    if rounds_of(home):
        cmd.append("--resume")
    console.print(f"seed {seed}: {' '.join(cmd)}")
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=os.environ.copy())
    return time.perf_counter() - start


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f} %"


def _spread(values: list[float]) -> str:
    if not values:
        return "-"
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{100 * mean:.1f} ± {100 * sd:.1f} %"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--root", type=Path, help="one home per seed under it (default: temp)")
    parser.add_argument("evolve_args", nargs=argparse.REMAINDER,
                        help="after --: arguments for every agent-world evolve call")
    args = parser.parse_args()
    extra = [a for a in args.evolve_args if a != "--"]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    root = args.root or Path(tempfile.mkdtemp(prefix="aw-evolve-seeds-"))
    console = Console()

    walls: dict[int, float] = {}
    records: dict[int, list[RoundRecord]] = {}
    for seed in seeds:
        home = root / f"seed-{seed}"
        walls[seed] = run_seed(seed, home, args.rounds, extra, console)
        records[seed] = rounds_of(home)[:args.rounds]

    table = Table(title=f"Main job per seed ({len(seeds)} seed(s), {args.rounds} round(s); "
                        f"load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())} "
                        "at the end)")
    table.add_column("seed", justify="right")
    table.add_column("baseline", justify="right")
    for r in range(1, args.rounds + 1):
        table.add_column(f"after round {r}", justify="right")
        table.add_column(f"round {r} targeted class", justify="left")
    table.add_column("wall", justify="right")
    for seed in seeds:
        recs = records[seed]
        cells = [str(seed), _pct(recs[0].before.get("pass_rate")) if recs else "-"]
        for r in range(args.rounds):
            if r < len(recs):
                row = recs[r].row()
                cells += [_pct(row["after"]),
                          f"{row['target_error']} {row['target_before']} → {row['target_after']}"]
            else:
                cells += ["-", "-"]
        cells.append(f"{walls[seed] / 60:.1f} min" if walls[seed] else "(earlier run)")
        table.add_row(*cells)
    done = [recs for recs in records.values() if len(recs) >= args.rounds]
    summary = ["mean ± sd", _spread([recs[0].before.get("pass_rate") or 0.0 for recs in done])]
    for r in range(args.rounds):
        drops = sum(1 for recs in done
                    if recs[r].row()["target_after"] < recs[r].row()["target_before"])
        summary += [_spread([recs[r].after.get("pass_rate") or 0.0 for recs in done]),
                    f"dropped in {drops}/{len(done)}"]
    rising = sum(1 for recs in done if all(
        (recs[r].after.get("pass_rate") or 0.0) >= (recs[r].before.get("pass_rate") or 0.0)
        for r in range(args.rounds)))
    summary.append(f"never fell: {rising}/{len(done)}")
    table.add_row(*summary)
    console.print(table)
    console.print(f"homes under {root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
