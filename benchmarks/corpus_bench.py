"""The harvested corpus through the pipeline: harvest → mine → build → synthesize.

    python benchmarks/corpus_bench.py [--sample 20] [--seed 0] [--iterations 3] [--per-env 5]
                                      [--executors pool,ray] [--harvest CACHE] [--json out.json]
                                      [--keep]

Harvest: the shipped corpus's index (servers harvested / tried); with `--harvest CACHE` the
shipped list is harvested again into a temporary folder from the installs in CACHE (what is not
installed there is installed: network), and its wall time is measured. Then a seeded sample of
`--sample` corpus servers (0: all) is mined (`mine --corpus-sample`), every mined environment
built and `--per-env` tasks synthesized for each (the stage graphs, fanning out one branch per
source or environment), all in a temporary home. `--executors` runs that once per executor,
each in its own home, one after the other: `pool` (a local process pool, one worker per core:
the default), `ray` (a local Ray cluster started here, one CPU per core) or `serial` (in this
process). Prints one table with a column per executor: servers harvested / tried, sources
mined / read (target ≥ 95 %), tables named after a tool call ('alert_policy_creates'),
text cells that are one random word, environments built, validated tools per environment, tools
whose act reads badly in a request, records named wrong, summaries over an identifier, tasks
synthesized, wall per stage, themes and tasks per minute, and peak resident memory: this
process's over the benchmark so far, and that of the processes it runs on during that run
(its descendants' summed, sampled: pool workers, or Ray's daemons and workers).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from env_bench_phases import PeakSampler  # noqa: E402
from faker.providers.lorem.en_US import Provider as LoremWords  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world import stop  # noqa: E402
from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.graphs import mine_graph  # noqa: E402
from agent_world.graphs.build_graph import build_environments  # noqa: E402
from agent_world.graphs.runner import invoke  # noqa: E402
from agent_world.graphs.synthesize_graph import synthesize_tasks  # noqa: E402
from agent_world.mining.offline.column_semantics import (  # noqa: E402
    DOCUMENT_NOUNS,
    column_semantic,
)
from agent_world.mining.offline.naming import singular, singular_word, snake, tokens  # noqa: E402
from agent_world.mining.offline.prose import is_chat  # noqa: E402
from agent_world.mining.offline.vocabulary import QUALITY_WORDS, WHERE_WORDS  # noqa: E402
from agent_world.mining.sources import mcp_harvest as hv  # noqa: E402
from agent_world.mining.sources.harvest_corpus import corpus_index, corpus_sources  # noqa: E402
from agent_world.scaleout import cores  # noqa: E402
from agent_world.synthesis.action_phrases import action_phrase  # noqa: E402
from agent_world.tasks.flaws import FLAWS, chain_flaws  # noqa: E402
from agent_world.tasks.words import split_words, tool_entity  # noqa: E402

# the run settings (stage graph context) of each executor
EXECUTORS: dict[str, dict[str, object]] = {
    "pool": {}, "ray": {"ray_address": "local"}, "serial": {"workers": 1}}


def _own_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def lone_word_share(specs: list) -> tuple[int, int, int]:
    """Text cells of the mined databases (keys and enums aside) that are one dictionary word
    of Faker's lorem list (what a column of no known kind gets), those of them in columns of
    no known kind (the rest are a known kind's own words: 'production', 'main', 'green'),
    and all such cells."""
    words = set(LoremWords.word_list)
    lone = unknown = total = 0
    for spec in specs:
        for table in spec.tables:
            cols = [c for c in table.columns if c.type == "text" and not c.primary_key
                    and not c.foreign_key and not c.enum]
            kinds = {c.name: column_semantic(table.name, c) for c in cols}
            for row in spec.rows.get(table.name, []):
                for c in cols:
                    if isinstance(row.get(c.name), str):
                        total += 1
                        if row[c.name] in words:
                            lone += 1
                            unknown += kinds[c.name] == "word"
    return lone, unknown, total


# an office title ('Q3 budget review', 'Roadmap for Aimee', 'Sales weekly backlog', 'Mobile
# proposal v2'): a document's name, read as noise on a flight or a subnet
_OFFICE_TITLE = re.compile(r"^(?:Q[1-4] |[A-Z]\w+ weekly )|\b(?:notes|review)$| for [A-Z][a-z]+$|"
                           r" v\d$")


def filler_values(specs: list) -> tuple[int, int, int]:
    """Name cells of records that are no document (`DOCUMENT_NOUNS`) holding an
    office title, all name cells, and numbers at a type's own limits (|n| ≥ 2^31 in a column
    that is no id, size or time: zod's ±9007199254740991 taken as a range)."""
    titled = names = huge = 0
    for spec in specs:
        for table in spec.tables:
            noun = singular(table.name).split("_")[-1]
            nums = [c.name for c in table.columns if c.type in ("integer", "real")
                    and not c.primary_key and not c.foreign_key
                    and not re.search(r"(?:^|_)(?:id|ids|bytes|size|ms|ns|timestamp|epoch)$",
                                      c.name)]
            for row in spec.rows.get(table.name, []):
                name = row.get("name")
                if isinstance(name, str):
                    names += 1
                    titled += bool(_OFFICE_TITLE.search(name)) and noun not in DOCUMENT_NOUNS
                huge += sum(isinstance(row.get(c), int | float) and not isinstance(row.get(c),
                                                                                   bool)
                            and abs(row[c]) >= 2**31 for c in nums)
    return titled, names, huge


# verbs no entity is named by: a table holding one was named after a tool call
# ('alert_policy_creates' for alert-policy-create)
CALL_WORDS = {"get", "list", "create", "update", "delete", "set", "add", "remove", "edit",
              "upsert", "fetch", "read", "start", "stop"}


def call_named_tables(specs: list) -> tuple[int, int]:
    """Tables of the mined databases named after a tool call (a CALL_WORDS word in the
    name), and all tables."""
    names = [t.name for spec in specs for t in spec.tables]
    return sum(bool(CALL_WORDS & set(n.split("_"))) for n in names), len(names)


# words that say where or how well a tool acts, never what a record is ('header_nears' of
# insert_header_near_text, 'footnote_robusts' of add_footnote_robust)
MANNER_WORDS = WHERE_WORDS | QUALITY_WORDS


def manner_named_tables(specs: list) -> int:
    """Tables of the mined databases named for where or how well a tool acts."""
    return sum(bool(MANNER_WORDS & {singular_word(w) for w in t.name.split("_")})
               for spec in specs for t in spec.tables)


def status_flaws(specs: list) -> tuple[int, int, int]:
    """Status columns of one state, status columns with an 'available' state (mostly what a
    tool can reach: "List all available workspaces"), and all status columns."""
    enums = [list(c.enum or []) for spec in specs for t in spec.tables for c in t.columns
             if c.name in ("status", "state") and c.enum]
    return (sum(len(set(e)) == 1 for e in enums),
            sum(bool({"available", "unavailable"} & set(e)) for e in enums), len(enums))


def constant_columns(specs: list) -> tuple[int, int]:
    """Free-text columns (no enum, no link) of tables of 5+ rows whose every row holds one
    value (a description's example copied into each: every sitemap's feedpath
    'http://www.example.com/sitemap.xml'), and all such columns."""
    same = total = 0
    for spec in specs:
        for t in spec.tables:
            for c in t.columns:
                if c.type != "text" or c.enum or c.foreign_key or c.primary_key:
                    continue
                values = [r.get(c.name) for r in spec.rows.get(t.name, [])
                          if r.get(c.name) is not None]
                if len(values) >= 5:
                    total += 1
                    same += len({str(v) for v in values}) == 1
    return same, total


# the records whose text is a chat message (a message, a comment)
_SAID_IN = re.compile(r"messag|comment|repl|note|post|mail|chat|thread|review|feedback|update|"
                      r"stor(?:y|ies)|sms|conversation|draft|activit|notification")


def chat_columns(specs: list) -> tuple[int, int]:
    """Text columns (5+ values) most of whose values are chat messages ('Thanks Ann, I'll
    follow up Tuesday.'), of records that are no message, comment or note (a search result's
    snippet, a command's stdout, a stylesheet), and all chat columns."""
    outside = chat = 0
    for spec in specs:
        for t in spec.tables:
            for c in t.columns:
                values = [v for r in spec.rows.get(t.name, []) if isinstance(v := r.get(c.name),
                                                                             str)]
                if c.type != "text" or len(values) < 5:
                    continue
                if sum(is_chat(v) for v in values) * 2 > len(values):
                    chat += 1
                    outside += not _SAID_IN.search(f"{t.name} {c.name}")
    return outside, chat


def shared_people(specs: list) -> tuple[int, int]:
    """Person names, emails and addresses that appear in two or more environments, and all
    of them (distinct per environment): every source's rows had been drawn from one seed, so
    a fifth of the names recurred across services."""
    seen: dict[str, set[str]] = {}
    for spec in specs:
        for t in spec.tables:
            for c in t.columns:
                if c.type == "text" and column_semantic(t.name, c) in (
                        "person_name", "email", "address"):
                    for r in spec.rows.get(t.name, []):
                        if isinstance(v := r.get(c.name), str):
                            seen.setdefault(v, set()).add(spec.name)
    return sum(len(envs) > 1 for envs in seen.values()), len(seen)


# a tool whose arguments are a record's fields when it writes one ('create_issue(title, body)')
_WRITE_WORDS = {"create", "add", "new", "insert", "update", "set", "edit", "patch", "put",
                "upsert", "save", "register", "modify", "post", "write", "book", "schedule"}
_META = {"id", "created_at", "updated_at", "status"}


def one_call_tables(specs: list) -> int:
    """Tables of the mined databases that hold one source tool's calls, not records: at
    least 2 columns besides the key, links and timestamps, 3 in 4 of them that tool's
    arguments, where the tool writes no record of its own (no create or update word in its
    name, no `action` selector) and names none of the table's by id ('searches' of
    airbnb_search(location, checkin, adults), 'hovers' of browser_hover(element, ref)). Only sources read from a
    tool-list file can be told (the corpus)."""
    found = 0
    for spec in specs:
        ref = Path(str(spec.provenance.source_ref or ""))
        if ref.suffix != ".json" or not ref.is_file():
            continue
        tools = json.loads(ref.read_text()).get("tools") or []
        calls = [args for t in tools if not _WRITE_WORDS & set(tokens(t["name"]))
                 # a command router (an `action` selector) writes its records as a create does
                 and not {"action", "operation"} & (args := {
                     snake(a) for a in (t.get("inputSchema") or {}).get("properties") or {}})]
        for table in spec.tables:
            cols = {c.name for c in table.columns if not c.foreign_key} - _META
            key = f"{singular(table.name)}_id"
            found += len(cols) >= 2 and any(
                key not in args and 4 * len(cols & args) >= 3 * len(cols) for args in calls)
    return found


# what a request's act must not be: a second sentence ("by its ID. You can ..."), a run-on
# ("CLI.Retrieve"), a leading condition, a command router's blurb, a paragraph
_BAD_ACT = re.compile(r"[a-z0-9][.!?] [A-Za-z]|[a-z]\.[A-Z]|^(?:if|when) | [-–] [Cc]ommands\b")


def act_flaws(specs: list) -> tuple[int, int, int, int]:
    """Tools of the built environments whose act, as a request says it (`action_phrase`),
    reads badly (`_BAD_ACT`) or runs over 16 words; records named by a table read back wrong
    ('akse' for the tool `aks` acting on `akses`); summary tools over an identifier column
    (`summarize_forms_page_id`); and all tools."""
    bad = wrong = ids = total = 0
    for spec in specs:
        for tool in spec.tools:
            total += 1
            act = action_phrase(spec, tool.name)
            bad += bool(_BAD_ACT.search(act)) or len(act.split()) > 16
            last = (tool_entity(spec, tool.name).split() or [""])[-1]
            wrong += last.endswith("e") and last[:-1] in split_words(tool.name)
            ids += tool.name.startswith("summarize_") and bool(re.search(r"_(id|idx|uid)$",
                                                                          tool.name))
    return bad, wrong, ids, total


def task_flaws(home: Path) -> dict[str, int]:
    """How many synthesized tasks have each of the chain flaws no gate's check sees
    (`agent_world.tasks.flaws`)."""
    counts = dict.fromkeys(FLAWS, 0)
    with Catalog.open(home) as cat:
        specs: dict[str, object] = {}
        for row in cat.list_tasks():
            fp = row["env_fingerprint"]
            if fp not in specs:
                specs[fp] = cat.find_env(fp)
            if specs[fp] is not None and row["kind"] == "graph":
                for flaw in chain_flaws(row["payload"], specs[fp]):
                    counts[flaw] += 1
    return counts


def _pipeline(refs: list, args: argparse.Namespace, context: dict[str, object]
              ) -> dict[str, object]:
    """`_stages` with the peak memory of the processes it runs on."""
    # the workers' memory: the descendants' summed RSS, sampled (the kernel's own children
    # peak counts only processes that have exited and been waited for)
    with PeakSampler(interval_s=0.5, with_root=False) as workers:
        out = _stages(refs, args, context)
    out["peak_mb"], out["children_peak_mb"] = _own_peak_mb(), workers.peak / 2**20
    return out


def _stages(refs: list, args: argparse.Namespace, context: dict[str, object]
            ) -> dict[str, object]:
    """Mine, build and synthesize `refs` in a fresh home with the stage graphs, run by the
    executor `context` asks for; the figures of that run."""
    home = Path(tempfile.mkdtemp(prefix="corpus-bench-"))
    try:  # an arena home of the whole corpus is over 100 MB: gone with its figures
        return _stages_in(home, refs, args, context)
    finally:
        if args.keep:  # to read what the figures count: `agent-world tasks list --home ...`
            print(f"arena home kept: {home}", file=sys.stderr)
        else:
            shutil.rmtree(home, ignore_errors=True)


def _stages_in(home: Path, refs: list, args: argparse.Namespace,
               context: dict[str, object]) -> dict[str, object]:
    out: dict[str, object] = {}
    t0 = time.perf_counter()
    values = invoke(mine_graph.build_graph(), {"sources": [r.spec for r in refs],
                                               "iterations": args.iterations,
                                               "seed": args.seed}, home=home,
                    context={"home": str(home), **context})
    out["mine_s"] = time.perf_counter() - t0
    results = values.get("results") or []
    out.update(sources=len(refs), mined=sum(r["status"] == "mined" for r in results),
               mine_failures={r["source"]: r["error"] for r in results
                              if r["status"] != "mined"})
    with Catalog.open(home) as cat:
        specs = [cat.get_env(e.name) for e in cat.list_envs()]
    out["lone_words"], out["unknown_words"], out["text_cells"] = lone_word_share(specs)
    out["call_tables"], out["tables"] = call_named_tables(specs)
    out["one_call_tables"] = one_call_tables(specs)
    out["manner_tables"] = manner_named_tables(specs)
    out["titled_names"], out["names"], out["huge_numbers"] = filler_values(specs)
    out["one_state"], out["available_states"], out["statuses"] = status_flaws(specs)
    out["constant_columns"], out["text_columns"] = constant_columns(specs)
    out["chat_outside"], out["chat_columns"] = chat_columns(specs)
    out["shared_people"], out["people"] = shared_people(specs)
    t0 = time.perf_counter()
    built = build_environments([], home=home, context={"home": str(home), **context})
    out["build_s"] = time.perf_counter() - t0
    with Catalog.open(home) as cat:
        built_specs = [cat.get_env(name) for name in built]
        rejected = [e.payload.get("category") for e in cat.ledger(stage="build")]
    out["ignoring"] = sum(c == "ignores_argument" for c in rejected)
    tools = [len(spec.tools) for spec in built_specs]
    out.update(built=len(built), tools_per_env=sum(tools) / max(1, len(tools)))
    out["bad_acts"], out["wrong_records"], out["id_summaries"], out["tools"] = \
        act_flaws(built_specs)
    t0 = time.perf_counter()
    tasks = synthesize_tasks(built, home=home, per_env=args.per_env, seed=args.seed,
                             context={"home": str(home), **context})
    out["synth_s"] = time.perf_counter() - t0
    out["tasks"] = len(tasks)
    out["task_flaws"] = task_flaws(home)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int, default=20, help="corpus servers mined (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=3, help="complexification iterations")
    parser.add_argument("--per-env", type=int, default=5, help="tasks asked per environment")
    parser.add_argument("--harvest", type=Path, metavar="CACHE",
                        help="harvest the shipped list again from the installs in CACHE")
    parser.add_argument("--executors", type=lambda v: v.split(","), default=["pool"],
                        help="comma-separated, each run in turn: pool, ray, serial")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--keep", action="store_true",
                        help="keep each executor's arena home (its path goes to stderr)")
    args = parser.parse_args(argv)
    unknown = [e for e in args.executors if e not in EXECUTORS]
    if unknown:
        parser.error(f"--executors: unknown {', '.join(unknown)} (pool, ray, serial)")
    console = Console()
    figures: dict[str, object] = {
        "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} CPUs"}

    index = corpus_index()
    harvested, failed = len(index["servers"]), len(index["failed"])
    figures.update(harvested=harvested, tried=harvested + failed)
    if args.harvest:
        entries = hv.load_packages(hv.SHIPPED_PACKAGES)
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="corpus-bench-") as out:
            results = hv.harvest(entries, out=Path(out) / "corpus", cache=args.harvest)
        figures["harvest_s"] = time.perf_counter() - t0
        figures["harvest_rerun"] = sum(r.status == "harvested" for r in results)

    refs = corpus_sources(args.sample or None, args.seed)
    runs = {name: _pipeline(refs, args, EXECUTORS[name]) for name in args.executors}
    figures["runs"] = runs
    table = Table(title=f"Corpus through the pipeline: {len(refs)} of {harvested} servers "
                        f"(seed {args.seed}), {args.iterations} iterations, "
                        f"{args.per_env} tasks asked per environment, {cores()} cores")
    table.add_column("figure")
    for name in runs:
        table.add_column(name, justify="right")
    table.add_column("target", justify="right")

    def row(label: str, show: object, target: str = "") -> None:
        table.add_row(label, *[show(r) for r in runs.values()], target)  # type: ignore[operator]

    table.add_row("servers harvested / tried", *[f"{harvested} / {harvested + failed}"] * len(runs),
                  "")
    row("sources mined / read", lambda r: f"{r['mined']} / {r['sources']} "
                                          f"({100 * r['mined'] / max(1, r['sources']):.0f} %)",
        "≥ 95 %")
    row("tables named after a tool call", lambda r: f"{r['call_tables']} / {r['tables']} "
        f"({100 * r['call_tables'] / max(1, r['tables']):.1f} %)")
    row("tables named for where or how a tool acts ('header_nears')",
        lambda r: f"{r['manner_tables']} / {r['tables']}")
    row("status columns of one state / with an 'available' state",
        lambda r: f"{r['one_state']} / {r['available_states']} of {r['statuses']}")
    row("free-text columns with one value in every row (5+ rows)",
        lambda r: f"{r['constant_columns']} / {r['text_columns']}")
    row("chat-message columns of records that are no message / all chat columns",
        lambda r: f"{r['chat_outside']} / {r['chat_columns']}")
    row("person names, emails, addresses in 2+ environments / all",
        lambda r: f"{r['shared_people']} / {r['people']}")
    row("tables holding one tool's calls", lambda r: f"{r['one_call_tables']} / {r['tables']} "
        f"({100 * r['one_call_tables'] / max(1, r['tables']):.1f} %)")
    row("text cells that are one random word", lambda r: f"{r['lone_words']} / "
        f"{r['text_cells']} ({100 * r['lone_words'] / max(1, r['text_cells']):.1f} %)")
    row("… of them in columns of no known kind", lambda r: f"{r['unknown_words']} "
        f"({100 * r['unknown_words'] / max(1, r['text_cells']):.1f} %)")
    row("records no document named by an office title ('Sales weekly backlog' for a flight)",
        lambda r: f"{r['titled_names']} / {r['names']} name cells")
    row("numbers at a type's own limit (|n| ≥ 2^31, no id or size)",
        lambda r: str(r["huge_numbers"]))
    row("environments built", lambda r: str(r["built"]))
    row("validated tools per environment", lambda r: f"{r['tools_per_env']:.1f}")
    row("tools rejected: never read an argument their source requires",
        lambda r: str(r.get("ignoring", "–")))
    row("tools whose act reads badly (2 sentences, a condition, a blurb, > 16 words)",
        lambda r: f"{r['bad_acts']} / {r['tools']}")
    row("records named by a table read back wrong ('akse') / summaries over an id",
        lambda r: f"{r['wrong_records']} / {r['id_summaries']}")
    row("tasks synthesized", lambda r: str(r["tasks"]))
    for flaw in FLAWS:  # chain flaws no gate's check sees (agent_world.tasks.flaws)
        row(f"… {flaw.replace('_', ' ')}",
            lambda r, flaw=flaw: str(r.get("task_flaws", {}).get(flaw, "–")), "0")
    if args.harvest:
        table.add_row("wall: harvest (from the install cache)",
                      *[f"{figures['harvest_s']:.0f} s"] * len(runs), "")
    row("wall: mine", lambda r: f"{r['mine_s']:.0f} s")
    row("wall: build", lambda r: f"{r['build_s']:.0f} s")
    row("wall: synthesize", lambda r: f"{r['synth_s']:.0f} s")
    row("wall: in all", lambda r: f"{r['mine_s'] + r['build_s'] + r['synth_s']:.0f} s",
        "≤ 60 min")
    row("themes per minute (mine)", lambda r: f"{60 * r['mined'] / r['mine_s']:.1f}")
    row("tasks per minute (synthesize)",
        lambda r: f"{60 * r['tasks'] / max(r['synth_s'], 1e-9):.1f}", "≥ 60")
    row("peak memory: this process (so far) / its workers",
        lambda r: f"{r['peak_mb']:.0f} / {r['children_peak_mb']:.0f} MB")
    console.print(table)
    for name, r in runs.items():
        for source, error in r["mine_failures"].items():
            console.print(f"[red]{name}: mine failed[/] {source}: {error.splitlines()[0]}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str))
    return 0


if __name__ == "__main__":
    stop.handle_sigterm()  # a killed run closes its pool (and the workers' sandboxes)
    raise SystemExit(main())
