"""The harvested corpus through the pipeline: harvest → mine → build → synthesize.

    python benchmarks/corpus_bench.py [--sample 20] [--seed 0] [--iterations 3] [--per-env 5]
                                      [--harvest CACHE] [--json out.json]

Harvest: the shipped corpus's index (servers harvested / tried); with `--harvest CACHE` the
shipped list is harvested again into a temporary folder from the installs in CACHE (what is not
installed there is installed: network), and its wall time is measured. Then a seeded sample of
`--sample` corpus servers (0: all) is mined (`mine --corpus-sample`), every mined environment
built and `--per-env` tasks synthesized for each, all in a temporary home. Prints one table:
servers harvested / tried, sources mined / read (target ≥ 95 %), environments built, validated
tools per environment, tasks synthesized, wall per stage, themes and tasks per minute, and the
peak resident memory of this process and of its children.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world.envs import EnvRuntime  # noqa: E402
from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.graphs import mine_graph  # noqa: E402
from agent_world.graphs.build_graph import build_environments  # noqa: E402
from agent_world.graphs.runner import invoke  # noqa: E402
from agent_world.mining.sources import mcp_harvest as hv  # noqa: E402
from agent_world.mining.sources.harvest_corpus import corpus_index, corpus_sources  # noqa: E402
from agent_world.synthesis.loop import SynthesisConfig, synthesize_env  # noqa: E402


def _peak_mb() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, children


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int, default=20, help="corpus servers mined (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=3, help="complexification iterations")
    parser.add_argument("--per-env", type=int, default=5, help="tasks asked per environment")
    parser.add_argument("--harvest", type=Path, metavar="CACHE",
                        help="harvest the shipped list again from the installs in CACHE")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    console = Console()
    home = Path(tempfile.mkdtemp(prefix="corpus-bench-"))
    figures: dict[str, object] = {
        "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} CPUs"}

    index = corpus_index()
    harvested, failed = len(index["servers"]), len(index["failed"])
    figures.update(harvested=harvested, tried=harvested + failed)
    if args.harvest:
        entries = hv.load_packages(hv.SHIPPED_PACKAGES)
        t0 = time.perf_counter()
        results = hv.harvest(entries, out=home / "corpus", cache=args.harvest)
        figures["harvest_s"] = time.perf_counter() - t0
        figures["harvest_rerun"] = sum(r.status == "harvested" for r in results)

    refs = corpus_sources(args.sample or None, args.seed)
    t0 = time.perf_counter()
    values = invoke(mine_graph.build_graph(), {"sources": [r.spec for r in refs],
                                               "iterations": args.iterations,
                                               "seed": args.seed}, home=home)
    figures["mine_s"] = time.perf_counter() - t0
    results = values.get("results") or []
    mined = [r for r in results if r["status"] == "mined"]
    figures.update(sources=len(refs), mined=len(mined),
                   mine_failures={r["source"]: r["error"] for r in results
                                  if r["status"] != "mined"})

    t0 = time.perf_counter()
    built = build_environments([], home=home)
    figures["build_s"] = time.perf_counter() - t0
    cat = Catalog.open(home)
    tools = [len(cat.get_env(name).tools) for name in built]
    figures.update(built=len(built), tools_per_env=sum(tools) / max(1, len(tools)))

    t0 = time.perf_counter()
    kept = 0
    with EnvRuntime() as runtime:
        for name in built:
            stats = synthesize_env(cat.get_env(name), SynthesisConfig(per_env=args.per_env), cat,
                                   runtime, run_id="corpus-bench")
            kept += stats["kept"]
    figures["synth_s"] = time.perf_counter() - t0
    figures["tasks"] = kept
    figures["peak_mb"], figures["children_peak_mb"] = _peak_mb()

    table = Table(title=f"Corpus through the pipeline: {len(refs)} of {harvested} servers "
                        f"(seed {args.seed}), {args.iterations} iterations, "
                        f"{args.per_env} tasks asked per environment")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("target", justify="right")
    rows = [
        ("servers harvested / tried", f"{harvested} / {harvested + failed}", ""),
        ("sources mined / read", f"{len(mined)} / {len(refs)} "
                                 f"({100 * len(mined) / max(1, len(refs)):.0f} %)", "≥ 95 %"),
        ("environments built", str(len(built)), ""),
        ("validated tools per environment", f"{figures['tools_per_env']:.1f}", ""),
        ("tasks synthesized", str(kept), ""),
    ]
    if args.harvest:
        rows.append(("wall: harvest (from the install cache)", f"{figures['harvest_s']:.0f} s",
                     ""))
    rows += [
        ("wall: mine", f"{figures['mine_s']:.0f} s", ""),
        ("wall: build", f"{figures['build_s']:.0f} s", ""),
        ("wall: synthesize", f"{figures['synth_s']:.0f} s", ""),
        ("themes per minute (mine)", f"{60 * len(mined) / figures['mine_s']:.1f}", ""),
        ("tasks per minute (synthesize)", f"{60 * kept / max(figures['synth_s'], 1e-9):.1f}",
         ""),
        ("peak memory: this process / its children",
         f"{figures['peak_mb']:.0f} / {figures['children_peak_mb']:.0f} MB", ""),
    ]
    for r in rows:
        table.add_row(*r)
    console.print(table)
    for source, error in figures["mine_failures"].items():  # type: ignore[union-attr]
        console.print(f"[red]mine failed[/] {source}: {error.splitlines()[0]}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
