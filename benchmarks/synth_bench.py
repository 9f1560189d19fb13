"""Task synthesis throughput on the offline path: tasks per minute, verifier runs per second.

    python benchmarks/synth_bench.py [--per-env 10] [--env airline --env ecommerce] [--json F]

Synthesizes `--per-env` tasks for each environment (default: the bundled examples) in a fresh
catalog, with the full pipeline: tool graph, walks, ground truth, trust gates, the 5-run ReAct
verifier (heuristic baseline agent). Prints one table: per environment the candidates, the
rejections per gate, kept tasks, tasks per minute, verifier runs per second and the share of
time the verifier takes — all from this one run. `CPU s` is this process's own CPU time (tool
workers and sandboxed scripts not included), steadier than wall time on a shared machine.
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

from agent_world.agents.task_synthesis import SynthesisConfig, synthesize_env  # noqa: E402
from agent_world.envs import EnvRuntime, example_names, load_example  # noqa: E402
from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.tasks.gates import GATES  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-env", type=int, default=10)
    parser.add_argument("--env", action="append", help="example or catalog environment")
    parser.add_argument("--home", type=Path, help="arena home to read environments from")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="synth-bench-"))
    cat = Catalog.open(home)
    names = args.env or example_names()
    rows = []
    with EnvRuntime() as runtime:
        for name in names:
            spec = load_example(name) if name in example_names() else cat.get_env(name)
            wall, cpu = time.perf_counter(), time.process_time()
            stats = synthesize_env(spec, SynthesisConfig(per_env=args.per_env), cat, runtime,
                                   run_id=f"bench-{int(time.time())}")
            stats["wall_s"] = time.perf_counter() - wall
            stats["cpu_s"] = time.process_time() - cpu
            rows.append(stats)

    gates = [*GATES, "verifier"]
    table = Table(title=f"Offline task synthesis, {args.per_env} tasks per environment")
    cols = ["environment", "candidates", *[f"✗ {g}" for g in gates], "kept", "levels",
            "tasks/min", "verifier runs/s", "verifier share", "wall s", "CPU s"]
    for col in cols:
        table.add_column(col, justify="left" if col in ("environment", "levels") else "right")
    for r in rows:
        vr = r["verifier_runs"] / r["verifier_seconds"] if r["verifier_seconds"] else 0.0
        table.add_row(r["env"], str(r["candidates"]), *[str(r["rejected"].get(g, 0)) for g in gates],
                      str(r["kept"]), " ".join(f"L{k}:{v}" for k, v in r["levels"].items()),
                      f"{60 * r['kept'] / r['wall_s']:.1f}", f"{vr:.1f}",
                      f"{r['verifier_seconds'] / r['wall_s']:.0%}", f"{r['wall_s']:.1f}",
                      f"{r['cpu_s']:.1f}")
    total_kept = sum(r["kept"] for r in rows)
    total_wall = sum(r["wall_s"] for r in rows)
    runs = sum(r["verifier_runs"] for r in rows)
    vsec = sum(r["verifier_seconds"] for r in rows)
    table.add_row("all", str(sum(r["candidates"] for r in rows)),
                  *[str(sum(r["rejected"].get(g, 0) for r in rows)) for g in gates],
                  str(total_kept), "", f"{60 * total_kept / total_wall:.1f}",
                  f"{runs / vsec if vsec else 0:.1f}", f"{vsec / total_wall:.0%}",
                  f"{total_wall:.1f}", f"{sum(r['cpu_s'] for r in rows):.1f}")
    Console().print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
