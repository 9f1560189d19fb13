"""Tool plans over the shipped corpus, read as a researcher reads them: what each source tool
became, and the plans that do not do what their source says.

    python benchmarks/plan_audit.py [--sample 0] [--seed 0] [--workers 2] [--json out.json]

Every corpus server (or a seeded `--sample`) is mined with no complexification
(`mine_theme(..., iterations=0)`, offline) and planned (`plan_tools`); nothing is built. One
table:

* source tools: in the corpus / planned, and the plans by kind (get, list, contract, create,
  update, set_status, delete);
* source tools left unplanned: no plan implements them (a create whose NOT NULL column no
  argument fills, such as a comment that had to name both a story and an epic);
* creates of a source tool its description calls a read ("Retrieves index mapping",
  "Analyze video content"): an insert per call is not what the tool does;
* creates that take a required id they then ignore (an update or an assignment planned as an
  insert);
* plans that do not take an argument their source takes (a listing's page and page size
  replaced by the arena's `limit`), names compared without case or punctuation;
* reads of a table that neither the tool's name nor its description names (a server's
  get_config listing files): what they return is not what they say;
* edits that write where their record is (Chatwork's update_room_message(room_id, ...) moving
  the message into `room_id`): a required reference or id beside the key is written, in a
  tool whose name says no move.

No timing is asserted; the wall time is printed beside the table.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_world.design.offline.source_acts import names_its_table  # noqa: E402
from agent_world.design.offline.source_plans import plan_tools  # noqa: E402
from agent_world.mining.llm_miner import mine_theme  # noqa: E402
from agent_world.mining.offline.naming import snake, tool_identifier  # noqa: E402
from agent_world.mining.sources import read_source  # noqa: E402
from agent_world.mining.sources.harvest_corpus import corpus_sources  # noqa: E402

# a source description that opens with a read: the tool returns what exists
_READ_SAID = re.compile(
    r"^\s*(?:lists?|gets?|shows?|analy[sz]es?|search(?:es)?|finds?|retrieves?|checks?|reads?|"
    r"fetch(?:es)?|returns?|views?|describes?|inspects?|query|counts?|validates?|previews?|"
    r"compares?|explains?|summari[sz]es?|extracts?|maps?|crawls?|scans?|detects?|looks?)\b",
    re.I)


_MOVES = {"move", "transfer", "assign", "reassign", "relocate"}
_PLACE = re.compile(r"^(?:file_)?path$|(?:^|_)(?:id|iid|uuid)$")


def _bare(name: str) -> str:
    # certificate-list's `auth-method` is served as auth_method, a keyword `sql` as sql_
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _audit(ref: Any) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = mine_theme(read_source(ref), iterations=0, seed=0).spec
    coverage = (spec.provenance.stats or {}).get("tool_coverage") or {}
    tools = coverage.get("tools") or {}
    plans, skipped = plan_tools(spec)
    said = {tool_identifier(name): entry for name, entry in tools.items()}
    row: dict[str, Any] = {"server": ref.name, "source_tools": len(tools), "kinds": Counter(),
                           "unplanned": 0, "read_creates": [], "ignored_ids": [],
                           "lost_arguments": [], "unnamed_reads": [], "moving_edits": []}
    for plan in plans:
        if not plan.source_tool:
            continue
        row["kinds"][plan.kind] += 1
        entry = said.get(plan.source_tool) or {}
        desc = str(entry.get("description") or "")
        if plan.kind == "create" and _READ_SAID.match(desc):
            row["read_creates"].append(plan.name)
        if plan.kind == "create" and any(
                p.role == "ignore" and p.required and snake(p.name).endswith(("_id", "_ids"))
                for p in plan.params):
            row["ignored_ids"].append(plan.name)
        taken = {_bare(p.name) for p in plan.params}
        if any(_bare(arg) not in taken for arg in entry.get("arguments") or {}):
            row["lost_arguments"].append(plan.name)
        if plan.kind in ("get", "list") and not names_its_table(plan.source_tool, desc,
                                                                plan.table):
            row["unnamed_reads"].append(plan.name)
        if plan.kind == "update" and plan.param("key") is not None and not _MOVES & set(
                snake(plan.source_tool).split("_")) and any(
                p.required and (p.role == "ref" or p.role == "set" and _PLACE.search(snake(p.name)))
                for p in plan.params):
            row["moving_edits"].append(plan.name)
    row["unplanned"] = sum(1 for why in skipped.values() if why.startswith("no implementable"))
    row["kinds"] = dict(row["kinds"])
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sample", type=int, default=0, help="corpus servers (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None, help="write every row here")
    args = ap.parse_args(argv)
    refs = corpus_sources(args.sample or None, seed=args.seed)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(_audit, refs, chunksize=4))
    wall = time.perf_counter() - t0
    kinds: Counter[str] = Counter()
    for r in rows:
        kinds.update(r["kinds"])
    planned = sum(kinds.values())
    total = sum(r["source_tools"] for r in rows)
    table = [
        ("servers", f"{len(rows)}"),
        ("source tools planned / in the corpus", f"{planned:,} / {total:,}"),
        ("plans by kind", ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))),
        ("source tools left unplanned (no implementable plan)",
         f"{sum(r['unplanned'] for r in rows)}"),
        ("creates of a tool described as a read",
         f"{sum(len(r['read_creates']) for r in rows)}"),
        ("creates ignoring a required id", f"{sum(len(r['ignored_ids']) for r in rows)}"),
        ("plans missing an argument their source takes",
         f"{sum(len(r['lost_arguments']) for r in rows)}"),
        ("reads of a table their name and description do not name",
         f"{sum(len(r['unnamed_reads']) for r in rows)}"),
        ("edits writing where their record is (a reference or id beside the key)",
         f"{sum(len(r['moving_edits']) for r in rows)}"),
        ("wall", f"{wall:.0f} s ({args.workers} workers)"),
    ]
    width = max(len(k) for k, _ in table)
    for k, v in table:
        print(f"{k:<{width}}  {v}")
    for key, title in (("read_creates", "creates described as reads"),
                       ("ignored_ids", "creates ignoring a required id"),
                       ("lost_arguments", "plans missing a source argument"),
                       ("unnamed_reads", "reads of a table they do not name"),
                       ("moving_edits", "edits writing where their record is")):
        named = [f"{r['server']}/{n}" for r in rows for n in r[key]]
        if named:
            print(f"\n{title}: {', '.join(named)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
