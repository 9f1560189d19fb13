"""Mining throughput on the offline path: themes per minute, and where the time goes.

    python benchmarks/mine_bench.py [--rounds 3] [--iterations 3] [--json out.json]

Reads the embedded default sources (real MCP servers as subprocesses + the bundled OpenAPI spec
and PRD), then mines every document `--rounds` times with different seeds (each a full theme:
questions, evidence, draft, k validated complexification iterations, the semantic gate). Prints
two tables: per default source the read time, the synthesis time, the source tools the database
covers and the semantic violations left in the stored database, with overall themes per minute;
then the same fidelity figures for the sources in domains the miner was not written for
(every file of `tests/fixtures/sources/unseen/`: OpenAPI specs, PRDs, MCP tool lists, among them
the official memory server's), with the share of declared types, enums and uniqueness kept. All figures come
from this one run.
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

from agent_world.mining.llm_miner import mine_theme  # noqa: E402
from agent_world.mining.semantics.checker import check_semantics  # noqa: E402
from agent_world.mining.semantics.violations import summarize  # noqa: E402
from agent_world.mining.sources import default_sources, read_source  # noqa: E402

UNSEEN = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sources" / "unseen"


def fidelity(spec) -> dict:
    """Coverage, violations (re-checked here, not taken from the spec) and declared typing."""
    cov = spec.provenance.stats["tool_coverage"]
    declared = spec.provenance.stats["declared_fidelity"]
    return {"covered": cov["covered"], "tools": cov["total"], "coverage": cov["ratio"],
            "violations": summarize(check_semantics(spec)),
            "declared_checks": declared["checks"], "declared_kept": declared["kept"],
            "declared_ratio": declared["ratio"]}


def _violations(v: dict) -> str:
    total = sum(v.values())
    return "0" if not total else f"{total} (" + ", ".join(
        f"{k} {n}" for k, n in v.items() if n) + ")"


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
        cpu = []
        for r in range(args.rounds):
            t1, c1 = time.perf_counter(), time.process_time()
            last = mine_theme(doc, iterations=args.iterations, seed=r)
            synth.append(time.perf_counter() - t1)
            cpu.append(time.process_time() - c1)
        stats = last.spec.stats()
        rows.append({"source": ref.name, "kind": ref.kind, "read_s": read_s,
                     "synth_s": synth, "cpu_s": cpu, "tables": stats["tables"], "rows": stats["rows"],
                     "foreign_keys": stats["foreign_keys"], **fidelity(last.spec)})

    table = Table(title=f"Offline mining: {len(rows)} sources x {args.rounds} rounds, "
                        f"{args.iterations} complexification iterations")
    for col in ("source", "kind", "read (s)", "synthesis p50 (s)", "tables", "rows", "FKs",
                "tools covered", "violations"):
        table.add_column(col, justify="left" if col in ("source", "kind") else "right")
    for r in rows:
        table.add_row(r["source"], r["kind"], f"{r['read_s']:.2f}",
                      f"{statistics.median(r['synth_s']):.2f}", str(r["tables"]), str(r["rows"]),
                      str(r["foreign_keys"]),
                      f"{r['covered']}/{r['tools']} ({r['coverage']:.0%})",
                      _violations(r["violations"]))
    read_total = sum(r["read_s"] for r in rows)
    synth_total = sum(sum(r["synth_s"]) for r in rows)
    themes = len(rows) * args.rounds
    # end to end: each source read once per theme mined from it
    e2e = read_total * args.rounds + synth_total
    table.add_section()
    cpu_total = sum(sum(r["cpu_s"]) for r in rows)
    table.add_row("themes / minute", "synthesis only", "", f"{themes / synth_total * 60:.0f}")
    table.add_row("themes / CPU-minute", "synthesis only", "", f"{themes / cpu_total * 60:.0f}")
    table.add_row("themes / minute", "read + synthesis", "", f"{themes / e2e * 60:.0f}")
    table.add_row("time split", "read : synthesis", "",
                  f"{read_total * args.rounds / e2e:.0%} : {synth_total / e2e:.0%}")
    Console().print(table)

    unseen = []
    for path in sorted(UNSEEN.iterdir()):
        doc = read_source(f"file:{path}")
        mined = mine_theme(doc, iterations=args.iterations, seed=0)
        unseen.append({"source": doc.name, "kind": doc.kind, **fidelity(mined.spec)})
    t2 = Table(title="Sources in domains the miner was not written for")
    for col in ("source", "kind", "declared type/enum/unique kept", "tools covered",
                "violations"):
        t2.add_column(col, justify="left" if col in ("source", "kind") else "right")
    for r in unseen:
        t2.add_row(r["source"], r["kind"],
                   f"{r['declared_kept']}/{r['declared_checks']} ({r['declared_ratio']:.0%})",
                   f"{r['covered']}/{r['tools']} ({r['coverage']:.0%})",
                   _violations(r["violations"]))
    Console().print(t2)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "unseen": unseen, "themes": themes,
                                         "themes_per_minute_synthesis": themes / synth_total * 60,
                                         "themes_per_cpu_minute": themes / cpu_total * 60,
                                         "themes_per_minute_end_to_end": themes / e2e * 60},
                                        indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
