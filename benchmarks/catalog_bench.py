"""Catalog concurrency soak: N processes x M mixed writes on one fresh catalog, then an audit.

    python benchmarks/catalog_bench.py                    # 8 x 50 on SQLite and PostgreSQL
    python benchmarks/catalog_bench.py --procs 4 --writes 20 --backends sqlite

Every process opens the catalog at the same moment (a fresh home: the schema is created under
the race) and cycles through three kinds of write:

* import - `put_env` of one of three variants of one environment name (every process writes the
  same three fingerprints, so versions race);
* mine   - a run opened, a mined environment and its theme stored (theme keys shared between
  processes), a ledger line, the run closed;
* task   - `put_task` of an id unique to the write plus one id every process writes.

The audit then counts failures (exceptions in a writer), lost writes (a task, run or ledger line
missing; a run not `done`) and duplicates (a fingerprint with more than one version of a name,
more theme rows than theme keys). PostgreSQL runs on the `pgserver` wheel (local binaries).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import queue
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a plain script from anywhere
    sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.envs.spec import EnvSpec  # noqa: E402

NOTES = ROOT / "tests" / "fixtures" / "notes_env.json"
SHARED_THEMES = 4  # mined theme names every process writes


def _variant(base: EnvSpec, name: str, k: int) -> EnvSpec:
    raw = json.loads(base.to_json())
    raw["name"] = name
    raw["rows"]["users"] = [*raw["rows"]["users"], {"id": 100 + k, "name": f"user {k}"}]
    return EnvSpec.from_dict(raw)


def _writer(url: str, proc: int, writes: int, barrier: Any, out: Any) -> None:
    base = EnvSpec.load(NOTES)
    imports = [_variant(base, "shared", k) for k in range(3)]
    failures: list[str] = []
    done = {"import": 0, "mine": 0, "task": 0}
    barrier.wait()
    start = time.perf_counter()
    cat = None
    try:
        cat = Catalog(url)
        for i in range(writes):
            op = ("import", "mine", "task")[i % 3]
            try:
                if op == "import":
                    cat.put_env(imports[(proc + i) % 3], stage="manual")
                elif op == "mine":
                    k = (proc + i) % SHARED_THEMES
                    run = cat.start_run("mine", run_id=f"p{proc}-w{i}")
                    spec = _variant(base, f"mined_{k}", 10 + k)
                    theme = spec.theme.model_copy(update={"name": f"theme {k}",
                                                          "source_ref": f"bench:{k}"})
                    spec = spec.model_copy(update={"theme": theme})
                    cat.put_env(spec, stage="mined")
                    cat.put_theme(theme, env_name=spec.name, payload={"by": proc})
                    cat.record("mine", f"p{proc}-w{i}", "bench line", run_id=run)
                    cat.finish_run(run, "done", {"themes": 1})
                else:
                    cat.put_task(f"p{proc}-w{i}", base.fingerprint, "graph", {"i": i})
                    cat.put_task("shared-task", base.fingerprint, "graph", {"by": proc})
                done[op] += 1
            except Exception as exc:  # noqa: BLE001 - counted, the soak goes on
                failures.append(f"p{proc} {op} #{i}: {type(exc).__name__}: {exc}")
    except Exception:  # noqa: BLE001 - opening failed: every write counts as failed
        failures.append(f"p{proc} open: {traceback.format_exc(limit=1)}")
    finally:
        if cat is not None:
            cat.close()
    out.put({"proc": proc, "failures": failures, "done": done,
             "seconds": time.perf_counter() - start})


def soak(url: str, procs: int = 8, writes: int = 50) -> dict[str, Any]:
    """Run the soak on `url` (a fresh catalog) and audit it. Returns the figures."""
    ctx = mp.get_context("spawn")  # no inherited engine or connection in the children
    barrier, out = ctx.Barrier(procs), ctx.Queue()
    workers = [ctx.Process(target=_writer, args=(url, p, writes, barrier, out))
               for p in range(procs)]
    for w in workers:
        w.start()
    reports: list[dict[str, Any]] = []
    while len(reports) < procs:
        try:
            reports.append(out.get(timeout=1))
        except queue.Empty:
            if not any(w.is_alive() for w in workers) and out.empty():
                raise RuntimeError("a writer process died without reporting") from None
    for w in workers:
        w.join()
    failures = [f for r in reports for f in r["failures"]]
    wall = max(r["seconds"] for r in reports)
    ok_writes = sum(sum(r["done"].values()) for r in reports)

    cat = Catalog(url)
    try:
        expected_tasks = {f"p{p}-w{i}" for p in range(procs) for i in range(writes)
                          if i % 3 == 2} | {"shared-task"}
        expected_runs = {f"p{p}-w{i}" for p in range(procs) for i in range(writes) if i % 3 == 1}
        tasks = {t["id"] for t in cat.list_tasks()}
        runs = {r: run["status"] for r in expected_runs if (run := cat.get_run(r))}
        ledger = [e for e in cat.ledger(stage="mine") if e.reason == "bench line"]
        lost = len(expected_tasks - tasks) + len(expected_runs - set(runs))
        lost += sum(1 for r in expected_runs if runs.get(r) not in (None, "done"))
        lost += len(expected_runs) - len(ledger)
        duplicated = 0
        names = ["shared", *(f"mined_{k}" for k in range(SHARED_THEMES))]
        for name in names:
            if not cat.has_env(name):
                continue
            fps = [fp for _, fp, _ in cat.versions(name)]
            duplicated += len(fps) - len(set(fps))
        themes = cat.list_themes(include_merged=True)
        duplicated += len(themes) - len({(t["name"], t["source_ref"]) for t in themes})
        envs = len(cat.list_envs())
    finally:
        cat.close()
    return {"procs": procs, "writes": procs * writes, "ok": ok_writes, "failures": failures,
            "lost": lost, "duplicated": duplicated, "envs": envs, "seconds": wall,
            "writes_per_s": ok_writes / wall if wall else 0.0}


def _postgres(tmp: Path) -> tuple[str, Any]:
    import pgserver

    server = pgserver.get_server(tmp / "pg", cleanup_mode="stop")
    server.psql("DROP DATABASE IF EXISTS bench;")
    server.psql("CREATE DATABASE bench;")
    host = server.get_uri().split("host=")[1]
    return f"postgresql+psycopg://postgres@/bench?host={host}", server


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--procs", type=int, default=8)
    parser.add_argument("--writes", type=int, default=50, help="writes per process")
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    console = Console()
    table = Table(title=f"Catalog soak: {args.procs} processes x {args.writes} mixed writes")
    for col in ("backend", "writes", "ok", "failures", "lost", "dupes", "envs", "s",
                "writes/s"):
        table.add_column(col, justify="left" if col == "backend" else "right")
    bad = False
    with tempfile.TemporaryDirectory(prefix="aw-catalog-bench-") as tmp:
        for backend in args.backends.split(","):
            server = None
            if backend == "sqlite":
                url = f"sqlite:///{Path(tmp) / 'catalog.sqlite'}"
            elif backend == "postgres":
                url, server = _postgres(Path(tmp))
            else:
                parser.error(f"unknown backend {backend!r}")
            try:
                r = soak(url, args.procs, args.writes)
            finally:
                if server is not None:
                    server.cleanup()
            bad |= bool(r["failures"] or r["lost"] or r["duplicated"])
            table.add_row(backend, str(r["writes"]), str(r["ok"]), str(len(r["failures"])),
                          str(r["lost"]), str(r["duplicated"]), str(r["envs"]),
                          f"{r['seconds']:.1f}", f"{r['writes_per_s']:.0f}")
            for f in r["failures"][:5]:
                console.print(f"[red]{backend}[/] {f}", markup=False)
    console.print(table)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
