"""Mining throughput on the offline path: themes per minute, and where the time goes.

    python benchmarks/mine_bench.py [--rounds 3] [--iterations 3] [--json out.json]

Reads the embedded default sources (real MCP servers as subprocesses + the bundled OpenAPI spec
and PRD), then mines every document `--rounds` times with different seeds (each a full theme:
questions, evidence, draft, k validated complexification iterations). Prints one table: per
source the read time and the synthesis time, and overall themes per minute with the split
between source reading and database synthesis. All figures come from this one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world.agents.miner import mine_theme  # noqa: E402
from agent_world.tools.sources import default_sources, read_source  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="themes mined per source")
    parser.add_argument("--iterations", type=int, default=3, help="complexification iterations")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args()

    rows = []
    for ref in default_sources():
        t0 = time.perf_counter()
        doc = read_source(ref)
        read_s = time.perf_counter() - t0
        synth = []
        last = None
        for r in range(args.rounds):
            t1 = time.perf_counter()
            last = mine_theme(doc, iterations=args.iterations, seed=r)
            synth.append(time.perf_counter() - t1)
        stats = last.spec.stats()
        rows.append({"source": ref.name, "kind": ref.kind, "read_s": read_s,
                     "synth_s": synth, "tables": stats["tables"], "rows": stats["rows"],
                     "foreign_keys": stats["foreign_keys"]})

    table = Table(title=f"Offline mining: {len(rows)} sources x {args.rounds} rounds, "
                        f"{args.iterations} complexification iterations")
    for col in ("source", "kind", "read (s)", "synthesis p50 (s)", "tables", "rows", "FKs"):
        table.add_column(col, justify="left" if col in ("source", "kind") else "right")
    for r in rows:
        table.add_row(r["source"], r["kind"], f"{r['read_s']:.2f}",
                      f"{statistics.median(r['synth_s']):.2f}", str(r["tables"]), str(r["rows"]),
                      str(r["foreign_keys"]))
    read_total = sum(r["read_s"] for r in rows)
    synth_total = sum(sum(r["synth_s"]) for r in rows)
    themes = len(rows) * args.rounds
    # end to end: each source read once per theme mined from it
    e2e = read_total * args.rounds + synth_total
    table.add_section()
    table.add_row("themes / minute", "synthesis only", "", f"{themes / synth_total * 60:.0f}",
                  "", "", "")
    table.add_row("themes / minute", "read + synthesis", "", f"{themes / e2e * 60:.0f}", "", "",
                  "")
    table.add_row("time split", "read : synthesis", "",
                  f"{read_total * args.rounds / e2e:.0%} : {synth_total / e2e:.0%}", "", "", "")
    Console().print(table)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "themes": themes,
                                         "themes_per_minute_synthesis": themes / synth_total * 60,
                                         "themes_per_minute_end_to_end": themes / e2e * 60},
                                        indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
