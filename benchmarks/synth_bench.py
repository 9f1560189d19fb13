"""Task synthesis throughput and yield on the offline path, per environment.

    python benchmarks/synth_bench.py [--per-env 10] [--env airline --env ecommerce] [--json F]
    python benchmarks/synth_bench.py --mined [--per-env 10]     # the default mine, built

Synthesizes `--per-env` tasks for each environment in a fresh catalog with the full pipeline:
tool graph, walks, ground truth, trust gates, the 5-run ReAct verifier (heuristic baseline
agent). Environments: the bundled examples by default; `--env` names examples or catalog
environments (`--home`); `--mined` mines the default sources and builds them (`agent-world
mine` + `agent-world build`) into a temporary home first and synthesizes for every built one.

Prints two tables from this one run. Yield: per environment the candidates, walks that gave no
candidate (`none`), rejections per gate, kept tasks, per level (L1-L5) and per kind (`w` =
programmatic tasks that write). Speed: tasks per minute, verifier runs per second, the verifier's share of the
time, wall and CPU seconds (`CPU s` is this process's own CPU time, tool workers and sandboxed
scripts not included; steadier than wall time on a shared machine).
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

from agent_world.envs import EnvRuntime, example_names, load_example  # noqa: E402
from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.synthesis.gates import GATES  # noqa: E402
from agent_world.synthesis.loop import SynthesisConfig, synthesize_env  # noqa: E402


def mine_and_build(home: Path) -> list[str]:
    """The default mine (embedded sources, 3 complexification iterations), built; the names
    of the built environments."""
    from agent_world.graphs import mine_graph
    from agent_world.graphs.build_graph import build_environments
    from agent_world.graphs.runner import invoke

    invoke(mine_graph.build_graph(), {"sources": [], "iterations": 3, "seed": 0}, home=home)
    return sorted(build_environments([], home=home))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-env", type=int, default=10)
    parser.add_argument("--env", action="append", help="example or catalog environment")
    parser.add_argument("--mined", action="store_true",
                        help="mine + build the default sources into a temporary home first")
    parser.add_argument("--home", type=Path, help="arena home to read environments from")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="synth-bench-"))
    console = Console(width=max(Console().width, 130))  # the yield table is wide
    names = list(args.env or [])
    setup_s = 0.0
    if args.mined:
        t0 = time.perf_counter()
        with console.status("mining and building the default sources"):
            names += mine_and_build(home)
        setup_s = time.perf_counter() - t0
    names = names or example_names()
    cat = Catalog.open(home)
    rows = []
    with EnvRuntime() as runtime:
        for name in names:
            spec = load_example(name) if name in example_names() and not cat.has_env(name) \
                else cat.get_env(name)
            wall, cpu = time.perf_counter(), time.process_time()
            with console.status(f"synthesizing {name}"):
                stats = synthesize_env(spec, SynthesisConfig(per_env=args.per_env), cat, runtime,
                                       run_id=f"bench-{int(time.time())}")
            stats["wall_s"] = time.perf_counter() - wall
            stats["cpu_s"] = time.process_time() - cpu
            rows.append(stats)

    gates = [*GATES, "verifier"]
    short = {"artefacts": "✗artef", "answer_from_state": "✗answer", "solvable": "✗solv",
             "initial_state_fails": "✗init", "gold_replay": "✗gold", "known_wrong": "✗wrong",
             "no_shortcut": "✗short", "verifier": "✗verif"}
    yield_table = Table(title=f"Task synthesis yield, {args.per_env} tasks asked per environment"
                        + (f" (mine + build: {setup_s:.0f} s)" if args.mined else ""))
    levels = ["1", "2", "3", "4", "5"]
    for col in ["env", "cand", "none", *[short[g] for g in gates], "kept",
                *[f"L{lv}" for lv in levels], "graph", "prog", "w"]:
        yield_table.add_column(col, justify="left" if col == "env" else "right")
    for r in rows:
        yield_table.add_row(
            r["env"], str(r["candidates"]), str(r["no_candidate"]),
            *[str(r["rejected"].get(g, 0)) for g in gates], str(r["kept"]),
            *[str(r["levels"].get(lv, 0)) for lv in levels],
            str(r["kinds"].get("graph", 0)), str(r["kinds"].get("programmatic", 0)),
            str(r.get("writing_programs", 0)))
    yield_table.add_row("all", str(sum(r["candidates"] for r in rows)),
                        str(sum(r["no_candidate"] for r in rows)),
                        *[str(sum(r["rejected"].get(g, 0) for r in rows)) for g in gates],
                        str(sum(r["kept"] for r in rows)),
                        *[str(sum(r["levels"].get(lv, 0) for r in rows)) for lv in levels],
                        str(sum(r["kinds"].get("graph", 0) for r in rows)),
                        str(sum(r["kinds"].get("programmatic", 0) for r in rows)),
                        str(sum(r.get("writing_programs", 0) for r in rows)))
    console.print(yield_table)

    speed = Table(title="Task synthesis speed (offline)")
    for col in ["env", "tasks/min", "verifier runs/s", "verifier share", "wall s", "CPU s"]:
        speed.add_column(col, justify="left" if col == "env" else "right")
    for r in rows:
        vr = r["verifier_runs"] / r["verifier_seconds"] if r["verifier_seconds"] else 0.0
        speed.add_row(r["env"], f"{60 * r['kept'] / r['wall_s']:.1f}", f"{vr:.1f}",
                      f"{r['verifier_seconds'] / r['wall_s']:.0%}", f"{r['wall_s']:.1f}",
                      f"{r['cpu_s']:.1f}")
    total_kept = sum(r["kept"] for r in rows)
    total_wall = sum(r["wall_s"] for r in rows)
    runs = sum(r["verifier_runs"] for r in rows)
    vsec = sum(r["verifier_seconds"] for r in rows)
    speed.add_row("all", f"{60 * total_kept / total_wall:.1f}",
                  f"{runs / vsec if vsec else 0:.1f}", f"{vsec / total_wall:.0%}",
                  f"{total_wall:.1f}", f"{sum(r['cpu_s'] for r in rows):.1f}")
    console.print(speed)
    reasons: dict[str, int] = {}
    for r in rows:
        for why, n in (r.get("no_candidate_reasons") or {}).items():
            reasons[why] = reasons.get(why, 0) + n
    if reasons:
        console.print("walks without a candidate: " + "; ".join(
            f"{why} ×{n}" for why, n in sorted(reasons.items(), key=lambda kv: -kv[1])))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
