"""Invariant audit of mined environments: do the seed rows agree across tables, and is every
source mined?

    python benchmarks/invariant_audit.py [--iterations 3] [--seed 0] [--json out.json]

Mines the embedded default sources (real MCP servers as subprocesses + the bundled OpenAPI spec
and PRD) and every source in `tests/fixtures/sources/unseen/` (domains the miner was not
written for), with the offline strategy, no build. Prints one table: per environment, the
cross-table invariants its spec declares (``provenance.stats["invariants"]``: held states
coupled to live records, capacities, fields set only in their state, time zones of the row's
country), the invariant violations in its stored seed rows, checked twice (on the spec's rows
and on the template database built from them, with `invariant_violations`, the check a tool
test or a random walk runs after writes), the invariant violations the semantic gate repaired
on the way, the schema changes made to keep to the source (declared enums and types taken,
columns dropped) and the other semantic violations left; then sources mined of sources given.
A source that fails is a row with its error. All figures come from this one run.
(`benchmarks/semantic_audit.py` audits the built tools: contracts, random walks, mutants.)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world.envs.database import build_template  # noqa: E402
from agent_world.errors import AgentWorldError  # noqa: E402
from agent_world.mining.llm_miner import mine_theme  # noqa: E402
from agent_world.mining.semantics.checker import check_semantics  # noqa: E402
from agent_world.mining.semantics.invariants import (  # noqa: E402
    invariant_violations,
    spec_invariants,
)
from agent_world.mining.sources import default_sources, read_source  # noqa: E402

UNSEEN = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sources" / "unseen"
_REPAIRED = re.compile(r"repaired (\d+) invariant violation")


def audit(spec) -> dict:
    """Invariant figures of one mined spec (re-checked here, not taken from the spec)."""
    invariants = spec_invariants(spec)
    found = check_semantics(spec)
    with tempfile.TemporaryDirectory(prefix="aw-audit-") as tmp:
        db = Path(tmp) / "template.sqlite"
        build_template(spec, db)
        in_db = invariant_violations(spec, db)
    repaired = sum(int(m.group(1)) for n in spec.provenance.notes
                   for m in [_REPAIRED.search(n)] if m)
    return {"env": spec.name, "tables": len(spec.tables), "rows": spec.row_count(),
            "invariants": len(invariants),
            "kinds": sorted({i["kind"] for i in invariants}),
            "violations_rows": sum(v.rule == "invariant" for v in found),
            "violations_db": len(in_db), "repaired_by_gate": repaired,
            "schema_repairs": list(spec.provenance.stats.get("schema_repairs") or []),
            "other_violations": sum(v.rule != "invariant" for v in found)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=3, help="complexification iterations")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args()

    given = [("default", ref, ref.name) for ref in default_sources()]
    given += [("unseen", f"file:{p}", p.name) for p in sorted(UNSEEN.iterdir()) if p.is_file()]
    results = []
    for group, ref, label in given:
        try:
            mined = mine_theme(read_source(ref), iterations=args.iterations, seed=args.seed)
            results.append({"group": group, "source": label, "status": "mined",
                            **audit(mined.spec)})
        except AgentWorldError as exc:
            results.append({"group": group, "source": label, "status": "failed",
                            "error": str(exc).splitlines()[0][:160]})

    table = Table(title=f"Invariant audit: {args.iterations} complexification iterations, "
                        f"seed {args.seed}")
    for col in ("source", "set", "invariants", "violations (rows / db)", "repaired by gate",
                "schema kept to source", "other violations"):
        table.add_column(col, justify="left" if col in ("source", "set") else "right")
    for r in results:
        if r["status"] != "mined":
            table.add_row(r["source"], r["group"], "-", f"failed: {r['error']}", "", "", "")
            continue
        table.add_row(r["source"], r["group"],
                      f"{r['invariants']} ({', '.join(r['kinds']) or '-'})",
                      f"{r['violations_rows']} / {r['violations_db']}",
                      str(r["repaired_by_gate"]), str(len(r["schema_repairs"])),
                      str(r["other_violations"]))
    mined = sum(r["status"] == "mined" for r in results)
    table.add_section()
    table.add_row("sources mined", "", "", f"{mined} of {len(results)} "
                                           f"({mined / len(results):.0%})", "", "", "")
    Console(width=150).print(table)
    if args.json:
        args.json.write_text(json.dumps({"results": results, "mined": mined,
                                         "given": len(results)}, indent=2))
    return 0 if mined == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
