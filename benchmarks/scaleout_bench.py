"""Wall time per stage of mine → build → synthesize on the default sources, in process, on a
2-process pool and on a 2-worker local Ray cluster (`agent_world.scaleout`).

    PYTHONPATH=. python benchmarks/scaleout_bench.py [--executors inproc,pool,ray]
        [--iterations 3] [--per-env 10] [--workers 2]

Each executor runs the three stages in its own scratch home in this one process, the way
`agent-world evolve` runs them; "start" is what the executor costs before its first job (Ray:
`ray.init`; a pool spawns its workers on its first jobs, so mine carries that). The last
column checks that every executor left the same environments (fingerprints) and tasks.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world import scaleout, stop  # noqa: E402
from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.graphs import mine_graph  # noqa: E402
from agent_world.graphs.build_graph import BuildContext, build_environments  # noqa: E402
from agent_world.graphs.runner import invoke  # noqa: E402
from agent_world.graphs.synthesize_graph import synthesize_tasks  # noqa: E402


def run(scale: dict[str, Any], iterations: int, per_env: int) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="aw-scaleout-"))
    seconds: dict[str, float] = {}
    t = time.perf_counter()
    mined = invoke(mine_graph.build_graph(), {"sources": [], "iterations": iterations,
                                              "seed": 0},
                   home=home, context=mine_graph.MineContext(**scale))
    envs = sorted(r["env"] for r in mined["results"] if r["status"] == "mined")
    seconds["mine"] = time.perf_counter() - t
    t = time.perf_counter()
    built = build_environments(envs, home=home, context=BuildContext(**scale))
    seconds["build"] = time.perf_counter() - t
    t = time.perf_counter()
    tasks = synthesize_tasks(sorted(built), home, per_env=per_env, seed=0, context=scale)
    seconds["synthesize"] = time.perf_counter() - t
    cat = Catalog.open(home)
    try:
        fps = [(e, cat.get_env(e).fingerprint) for e in sorted(built)]
    finally:
        cat.close()
    digest = hashlib.sha256(repr((fps, tasks)).encode()).hexdigest()[:12]
    return {"seconds": seconds, "envs": len(built), "tasks": len(tasks), "digest": digest}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--executors", default="inproc,pool,ray")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--per-env", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    table = Table(title=f"Stage wall time (s), default sources, iterations {args.iterations}, "
                        f"{args.per_env} tasks per environment; {os.cpu_count()} cores")
    for col in ("executor", "start", "mine", "build", "synthesize", "total", "envs", "tasks",
                "catalog digest"):
        table.add_column(col, justify="left" if col in ("executor", "catalog digest")
                         else "right")
    for name in args.executors.split(","):
        start = 0.0
        if name == "inproc":
            scale: dict[str, Any] = {"workers": 1}
        elif name == "pool":
            scale = {"workers": args.workers}
        elif name == "ray":
            import ray  # the scale extra; only this row needs it

            t = time.perf_counter()
            ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
            scaleout.executor(ray_address="local")
            start = time.perf_counter() - t
            scale = {"ray_address": "local"}
        else:
            raise SystemExit(f"error: unknown executor {name!r} (inproc, pool, ray)")
        out = run(scale, args.iterations, args.per_env)
        s = out["seconds"]
        label = {"inproc": "in process", "pool": f"{args.workers}-process pool",
                 "ray": f"{args.workers}-worker local Ray"}[name]
        table.add_row(label, f"{start:.1f}", f"{s['mine']:.1f}", f"{s['build']:.1f}",
                      f"{s['synthesize']:.1f}", f"{start + sum(s.values()):.1f}",
                      str(out["envs"]), str(out["tasks"]), out["digest"])
    Console().print(table)


if __name__ == "__main__":
    stop.handle_sigterm()  # a killed run closes its pool (and the workers' sandboxes)
    main()
