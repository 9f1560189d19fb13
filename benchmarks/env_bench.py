"""Environment-engine benchmark: reset / step latency, concurrency, memory, and a contrast with
one web-server process per environment instance.

    .venv/bin/python benchmarks/env_bench.py            # full run (about a minute on 2 cores)
    .venv/bin/python benchmarks/env_bench.py --quick    # smoke run (well under 30 s)
    .venv/bin/python benchmarks/env_bench.py --json out.json

Everything is measured in one run against a benchmark EnvSpec built here in code: 10 tables,
1,000 seed rows (generated with random.Random(0)), foreign keys between tables, one read tool
(`get_item`, one product row by primary key) and one write tool (`restock`). The script prints
one Rich table; `--json PATH` also writes the raw figures.

Memory is reported as RSS summed over the process tree (this process + its worker children),
sampled in a background thread. Episode databases are files in the runtime's working directory,
which is /dev/shm (RAM-backed) where available: that RAM is not in any process's RSS, so the
table reports it separately and the per-episode memory figure includes it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a plain script from anywhere
    sys.path.insert(0, str(ROOT))
if str(ROOT / "benchmarks") not in sys.path:  # the large environment lives next to this file
    sys.path.insert(0, str(ROOT / "benchmarks"))

from agent_world.envs import EnvRuntime, EnvSpec  # noqa: E402

# Concurrency defaults, picked on a 2-core machine by stepping 1,024 open episodes (read + write
# each, 3 repeats) for workers in {1, 2, 3} x threads in {1, 2, 4, 8, 16}. Best steps/s seen:
#   workers=1: ~2,300-2,600 whatever the threads (one worker is the bottleneck)
#   workers=2: 1 thread ~1,900 | 2 threads ~3,600 | 4 threads ~3,500 | 8 ~3,400 | 16 ~3,500
#   workers=3: no better than 2 (~3,000-3,600) and 50 MiB more RSS
# The pool lends a worker to one caller for a whole request, so threads beyond the worker count
# mostly wait; a couple of extra threads keep a worker busy while another thread does argument
# validation and Observation building in this process. workers=2, threads=4 it is (2 and 8 are
# within run-to-run noise of it).
DEFAULT_WORKERS = 2
DEFAULT_THREADS = 4

TARGET_RESET_P50_MS = 5.0
TARGET_STEP_P50_MS = 2.0
TARGET_RSS_BYTES = 4 * 1024**3
TARGET_LARGE_RATIO = 3.0  # large env: engine step p50 / same tool code in-process
TARGET_LARGE_P95_MS = 1.0
TARGET_LARGE_RESET_P50_MS = 0.3

ROW_COUNTS = {  # 1,000 seed rows over 10 tables
    "categories": 20, "suppliers": 30, "warehouses": 10, "customers": 150, "products": 150,
    "inventory": 150, "orders": 150, "order_items": 200, "payments": 90, "reviews": 50,
}


# ---------------------------------------------------------------------------------------------
# The benchmark environment
# ---------------------------------------------------------------------------------------------

def _col(name: str, type_: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **kw}


def _pk() -> dict[str, Any]:
    return _col("id", "integer", primary_key=True, nullable=False)


def _fk(name: str, target: str, nullable: bool = False) -> dict[str, Any]:
    return _col(name, "integer", foreign_key=target, nullable=nullable)


TABLES: list[dict[str, Any]] = [
    {"name": "categories", "columns": [
        _pk(), _col("name", "text", nullable=False, unique=True),
        _fk("parent_id", "categories.id", nullable=True)]},
    {"name": "suppliers", "columns": [
        _pk(), _col("name", "text", nullable=False), _col("country", "text"),
        _col("email", "text", unique=True), _col("rating", "real")]},
    {"name": "warehouses", "columns": [
        _pk(), _col("code", "text", nullable=False, unique=True), _col("city", "text"),
        _col("capacity", "integer")]},
    {"name": "customers", "columns": [
        _pk(), _col("name", "text", nullable=False), _col("email", "text", unique=True),
        _col("city", "text"), _col("tier", "text", enum=["bronze", "silver", "gold"]),
        _col("created_at", "datetime")]},
    {"name": "products", "columns": [
        _pk(), _col("sku", "text", nullable=False, unique=True),
        _col("name", "text", nullable=False), _fk("category_id", "categories.id"),
        _fk("supplier_id", "suppliers.id"), _col("price", "real", nullable=False),
        _col("active", "boolean", default=True), _col("attributes", "json")]},
    {"name": "inventory", "unique_together": [["product_id", "warehouse_id"]], "columns": [
        _pk(), _fk("product_id", "products.id"), _fk("warehouse_id", "warehouses.id"),
        _col("quantity", "integer", nullable=False, default=0), _col("updated_at", "datetime")]},
    {"name": "orders", "columns": [
        _pk(), _fk("customer_id", "customers.id"),
        _col("status", "text", nullable=False,
             enum=["pending", "paid", "shipped", "delivered", "cancelled"]),
        _col("placed_at", "datetime"), _col("total", "real")]},
    {"name": "order_items", "columns": [
        _pk(), _fk("order_id", "orders.id"), _fk("product_id", "products.id"),
        _col("quantity", "integer", nullable=False), _col("unit_price", "real")]},
    {"name": "payments", "columns": [
        _pk(), _fk("order_id", "orders.id"),
        _col("method", "text", enum=["card", "paypal", "transfer"]),
        _col("amount", "real", nullable=False), _col("paid_on", "date")]},
    {"name": "reviews", "columns": [
        _pk(), _fk("product_id", "products.id"), _fk("customer_id", "customers.id"),
        _col("rating", "integer", nullable=False), _col("body", "text"),
        _col("created_at", "datetime")]},
]

GET_ITEM_SOURCE = textwrap.dedent("""\
    def get_item(ctx, id):
        row = ctx.one("SELECT * FROM products WHERE id = ?", (id,))
        if row is None:
            raise ToolError(f"no item with id {id}")
        return row
    """)

RESTOCK_SOURCE = textwrap.dedent("""\
    def restock(ctx, id, quantity):
        cur = ctx.execute(
            "UPDATE inventory SET quantity = quantity + ?, updated_at = ? WHERE id = ?",
            (quantity, ctx.now(), id))
        if cur.rowcount == 0:
            raise ToolError(f"no inventory record {id}")
        return ctx.one("SELECT id, product_id, warehouse_id, quantity, updated_at "
                       "FROM inventory WHERE id = ?", (id,))
    """)

_WORDS = ("alpha bolt cable delta ember flux garnet harbor iris jade kilo lumen mesa nova onyx "
          "pixel quartz ridge sierra tundra ultra vivid willow xenon yarrow zephyr").split()
_CITIES = ["Lyon", "Osaka", "Austin", "Porto", "Leeds", "Pune", "Quito", "Perth", "Graz", "Cork"]
_FIRST = ["Ana", "Ben", "Chloe", "Dev", "Elif", "Femi", "Goran", "Hana", "Ivo", "Jun", "Kai", "Lea"]
_LAST = ["Ito", "Okafor", "Silva", "Novak", "Berg", "Khan", "Moreau", "Reyes", "Larsen", "Adeyemi"]


def build_rows(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    n = ROW_COUNTS
    t0 = datetime(2025, 1, 1, 8, 0, 0)

    def stamp(days: int = 365) -> str:
        return (t0 + timedelta(minutes=rng.randrange(days * 24 * 60))).isoformat(timespec="seconds")

    def words(k: int) -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(k))

    rows: dict[str, list[dict[str, Any]]] = {}
    rows["categories"] = [
        {"id": i, "name": f"{_WORDS[(i - 1) % len(_WORDS)].title()} {i}",
         "parent_id": None if i <= 5 else rng.randint(1, 5)}
        for i in range(1, n["categories"] + 1)]
    rows["suppliers"] = [
        {"id": i, "name": f"{words(2).title()} Ltd", "country": rng.choice(["FR", "JP", "US", "PT"]),
         "email": f"sales{i}@supplier{i}.example", "rating": round(rng.uniform(2.5, 5.0), 1)}
        for i in range(1, n["suppliers"] + 1)]
    rows["warehouses"] = [
        {"id": i, "code": f"WH{i:02d}", "city": _CITIES[i - 1], "capacity": rng.randrange(1000, 50000, 500)}
        for i in range(1, n["warehouses"] + 1)]
    rows["customers"] = [
        {"id": i, "name": f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
         "email": f"customer{i}@mail.example", "city": rng.choice(_CITIES),
         "tier": rng.choice(["bronze", "bronze", "silver", "gold"]), "created_at": stamp()}
        for i in range(1, n["customers"] + 1)]
    rows["products"] = [
        {"id": i, "sku": f"SKU-{i:05d}", "name": words(3).title(),
         "category_id": rng.randint(1, n["categories"]), "supplier_id": rng.randint(1, n["suppliers"]),
         "price": round(rng.uniform(2, 500), 2), "active": rng.random() > 0.1,
         "attributes": {"color": rng.choice(["red", "blue", "black", "white"]),
                        "weight_g": rng.randint(50, 5000)}}
        for i in range(1, n["products"] + 1)]
    pairs = rng.sample([(p, w) for p in range(1, n["products"] + 1)
                        for w in range(1, n["warehouses"] + 1)], n["inventory"])
    rows["inventory"] = [
        {"id": i, "product_id": p, "warehouse_id": w, "quantity": rng.randint(0, 400),
         "updated_at": stamp()}
        for i, (p, w) in enumerate(pairs, start=1)]
    rows["orders"] = [
        {"id": i, "customer_id": rng.randint(1, n["customers"]),
         "status": rng.choice(["pending", "paid", "shipped", "delivered", "cancelled"]),
         "placed_at": stamp(), "total": 0.0}
        for i in range(1, n["orders"] + 1)]
    prices = {p["id"]: p["price"] for p in rows["products"]}
    items = []
    for i in range(1, n["order_items"] + 1):
        # every order gets an item first, then the rest land on random orders
        order = i if i <= n["orders"] else rng.randint(1, n["orders"])
        product = rng.randint(1, n["products"])
        items.append({"id": i, "order_id": order, "product_id": product,
                      "quantity": rng.randint(1, 5), "unit_price": prices[product]})
    rows["order_items"] = items
    totals: dict[int, float] = {}
    for it in items:
        totals[it["order_id"]] = totals.get(it["order_id"], 0.0) + it["quantity"] * it["unit_price"]
    for o in rows["orders"]:
        o["total"] = round(totals.get(o["id"], 0.0), 2)
    paid = rng.sample(range(1, n["orders"] + 1), n["payments"])
    rows["payments"] = [
        {"id": i, "order_id": o, "method": rng.choice(["card", "paypal", "transfer"]),
         "amount": rows["orders"][o - 1]["total"],
         "paid_on": (date(2025, 1, 1) + timedelta(days=rng.randrange(365))).isoformat()}
        for i, o in enumerate(paid, start=1)]
    rows["reviews"] = [
        {"id": i, "product_id": rng.randint(1, n["products"]),
         "customer_id": rng.randint(1, n["customers"]), "rating": rng.randint(1, 5),
         "body": words(rng.randint(4, 12)).capitalize() + ".", "created_at": stamp()}
        for i in range(1, n["reviews"] + 1)]
    return rows


def build_spec() -> EnvSpec:
    rows = build_rows(random.Random(0))
    assert sum(len(r) for r in rows.values()) == 1000 and len(TABLES) == 10
    return EnvSpec.from_dict({
        "name": "bench_store",
        "theme": {"name": "Benchmark store", "description": "Catalog, stock and orders.",
                  "taxonomy": {"l1": "Benchmarks", "l2": "Engine", "l3": "bench_store"}},
        "tables": TABLES,
        "rows": rows,
        "tools": [
            {"name": "get_item", "description": "One product (item) by its id.",
             "parameters": {"type": "object", "additionalProperties": False, "required": ["id"],
                            "properties": {"id": {"type": "integer", "minimum": 1}}},
             "source": GET_ITEM_SOURCE, "mutates": False},
            {"name": "restock", "description": "Add stock to an inventory record.",
             "parameters": {"type": "object", "additionalProperties": False,
                            "required": ["id", "quantity"],
                            "properties": {"id": {"type": "integer", "minimum": 1},
                                           "quantity": {"type": "integer", "minimum": 1}}},
             "source": RESTOCK_SOURCE, "mutates": True},
        ],
        "provenance": {"created_by": "benchmarks/env_bench.py"},
    }, origin="env_bench")


# ---------------------------------------------------------------------------------------------
# Measuring helpers
# ---------------------------------------------------------------------------------------------

def pct(samples: list[float], q: float) -> float:
    """Percentile with linear interpolation (q in 0..100)."""
    xs = sorted(samples)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def tree_rss(root: psutil.Process) -> int:
    """RSS of a process and all its descendants (pages shared between them count twice)."""
    total = 0
    for p in [root, *root.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return total


class PeakSampler:
    """Samples the process tree's RSS in a background thread; `peak` is the largest seen."""

    def __init__(self, interval_s: float = 0.25):
        self.interval_s = interval_s
        self.root = psutil.Process()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, tree_rss(self.root))
            if self._stop.wait(self.interval_s):
                return

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, tree_rss(self.root))


def dir_bytes(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_blocks * 512  # allocated, not apparent, size
        except OSError:
            pass
    return total


def check(ok_obs: Any) -> None:
    if not ok_obs.ok:
        raise RuntimeError(f"benchmark step failed: {ok_obs.error}")


# ---------------------------------------------------------------------------------------------
# Engine phases
# ---------------------------------------------------------------------------------------------

def bench_cold_open(runtime: EnvRuntime, spec: EnvSpec) -> dict[str, float]:
    """First open of a spec (template build) and first step (worker compiles the tools)."""
    t0 = time.perf_counter()
    ep = runtime.open(spec, seed=0)
    t1 = time.perf_counter()
    check(ep.step("get_item", {"id": 1}))
    t2 = time.perf_counter()
    ep.close()
    # warm every worker so later phases never pay a tool compile
    with ThreadPoolExecutor(runtime.pool.size) as ex:
        eps = [runtime.open(spec, seed=i) for i in range(runtime.pool.size * 2)]
        for _ in ex.map(lambda e: e.step("get_item", {"id": 2}), eps):
            pass
        for e in eps:
            e.close()
    return {"first_open_ms": (t1 - t0) * 1e3, "first_step_ms": (t2 - t1) * 1e3}


def bench_reset(runtime: EnvRuntime, spec: EnvSpec, n: int) -> dict[str, Any]:
    ep = runtime.open(spec, seed=1)
    try:
        samples = []
        for i in range(n):
            if i % 10 == 0:  # a dirty episode now and then: reset must bring it back
                check(ep.step("restock", {"id": 1 + i % 150, "quantity": 1}))
            t = time.perf_counter()
            ep.reset()
            samples.append((time.perf_counter() - t) * 1e3)
        assert ep.diff().empty, "reset did not restore the seed state"
    finally:
        ep.close()
    return {"n": n, "p50_ms": pct(samples, 50), "p95_ms": pct(samples, 95),
            "mean_ms": sum(samples) / n, "template_bytes": ep.template.stat().st_size}


def bench_step(runtime: EnvRuntime, spec: EnvSpec, n: int) -> dict[str, Any]:
    ep = runtime.open(spec, seed=2)
    rng = random.Random(1)
    try:
        for _ in range(50):  # warm-up
            check(ep.step("get_item", {"id": rng.randint(1, 150)}))
        samples = []
        t_all = time.perf_counter()
        for _ in range(n):
            args = {"id": rng.randint(1, 150)}
            t = time.perf_counter()
            obs = ep.step("get_item", args)
            samples.append((time.perf_counter() - t) * 1e3)
            check(obs)
        wall = time.perf_counter() - t_all
    finally:
        ep.close()
    return {"n": n, "p50_ms": pct(samples, 50), "p95_ms": pct(samples, 95),
            "mean_ms": sum(samples) / n, "steps_per_s": n / wall}


def bench_open_plus_step(runtime: EnvRuntime, spec: EnvSpec, n: int) -> dict[str, Any]:
    """What the contrast compares against: a new episode (open = template copy + new
    connection) + one step; then the same with the closed episodes reused (what a runtime
    does by default, see `EnvRuntime(keep_closed=...)`)."""
    out: dict[str, Any] = {"n": n}
    kept = runtime.keep_closed
    for label, keep in (("", 0), ("reused_", kept)):
        runtime.keep_closed = keep
        samples = []
        for i in range(n):
            t = time.perf_counter()
            ep = runtime.open(spec, seed=100 + i)
            check(ep.step("get_item", {"id": 1 + i % 150}))
            samples.append((time.perf_counter() - t) * 1e3)
            ep.close()
        out[f"{label}p50_ms"], out[f"{label}mean_ms"] = pct(samples, 50), sum(samples) / n
    runtime.keep_closed = kept
    return out


def bench_concurrency(runtime: EnvRuntime, spec: EnvSpec, level: int, threads: int,
                      target_steps: int, pin: int | None = None) -> dict[str, Any]:
    """Open `level` episodes at once, then step every one (read + write per round, enough rounds
    that each level does about `target_steps` steps), spread over a thread pool (`pin`: its
    threads pinned to that CPU, as an application may pin its stepping threads)."""
    rounds = max(1, target_steps // (2 * level))
    workdir = runtime.workdir
    baseline = tree_rss(psutil.Process())
    with PeakSampler() as sampler:
        t0 = time.perf_counter()
        episodes = [runtime.open(spec, seed=1000 + i) for i in range(level)]
        t_open = time.perf_counter() - t0

        def work(idx: int) -> int:
            ep = episodes[idx]
            for r in range(rounds):
                check(ep.step("get_item", {"id": 1 + (idx + r) % 150}))
                check(ep.step("restock", {"id": 1 + (idx * 7 + r) % 150, "quantity": 1 + r % 5}))
            return 2 * rounds

        t1 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=min(threads, level), initializer=(
                None if pin is None else lambda: os.sched_setaffinity(0, {pin}))) as ex:
            steps = sum(ex.map(work, range(level)))
        t_step = time.perf_counter() - t1
        # every episode is open and has been stepped: measure what the set costs right now
        files = dir_bytes(workdir / "episodes")
        wrote = sum(1 for ep in episodes[: min(level, 32)] if not ep.diff().empty)
    for ep in episodes:
        ep.close()
    assert wrote == min(level, 32), "a write step left no trace in its episode"
    return {"episodes": level, "threads": min(threads, level), "rounds": rounds, "steps": steps,
            "open_s": t_open, "step_s": t_step, "steps_per_s": steps / t_step,
            "peak_tree_rss_bytes": sampler.peak, "baseline_tree_rss_bytes": baseline,
            "episode_files_bytes": files}


# ---------------------------------------------------------------------------------------------
# A realistic large environment (benchmarks/large_env.py), against the same tool code in-process
# ---------------------------------------------------------------------------------------------

def bench_large(spec: EnvSpec, sandbox: bool, n: int, gap_s: float) -> dict[str, Any]:
    """Alternate a 4-query read tool and a 5-statement write tool with `gap_s` sleeps between
    steps (as an agent steps), through the engine and through `InProcess` on the same calls;
    then resets after one write each."""
    from large_env import InProcess

    rng = random.Random(7)
    calls = []
    for i in range(n):
        if i % 2:
            calls.append(("book", {"customer_id": rng.randint(1, 6000),
                                   "flight_id": rng.randint(1, 9000), "passengers": 1}))
        else:
            calls.append(("reservation_details", {"reservation_id": rng.randint(1, 8000)}))
    with EnvRuntime(sandbox=sandbox) as runtime:
        ep = runtime.open(spec, seed=0)
        baseline = InProcess(spec, ep.template, runtime.workdir)
        for tool, args in calls[:20]:  # warm-up: compiled tools, warm caches
            check(ep.step(tool, args))
            baseline.step(tool, args)
        ep.reset()
        engine, inproc = [], []
        for tool, args in calls:
            time.sleep(gap_s)
            t = time.perf_counter()
            obs = ep.step(tool, args)
            engine.append((time.perf_counter() - t) * 1e3)
            check(obs)
            time.sleep(gap_s)
            t = time.perf_counter()
            baseline.step(tool, args)
            inproc.append((time.perf_counter() - t) * 1e3)
        ep.reset()
        tight = []  # the same calls back to back: what idle gaps add shows in the ratio
        for tool, args in calls:
            t = time.perf_counter()
            obs = ep.step(tool, args)
            tight.append((time.perf_counter() - t) * 1e3)
            check(obs)
        ep.reset()
        resets, clean = [], []
        for i in range(max(50, n // 2)):
            check(ep.step("book", {"customer_id": 1 + i, "flight_id": 1 + i, "passengers": 1}))
            t = time.perf_counter()
            ep.reset()
            resets.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            ep.reset()
            clean.append((time.perf_counter() - t) * 1e3)
        assert ep.diff().empty, "reset did not restore the seed state"
        size = ep.template.stat().st_size
        baseline.close()
        ep.close()
    return {"sandbox": sandbox, "n": n, "gap_ms": gap_s * 1e3, "db_bytes": size,
            "tables": len(spec.tables), "rows": spec.row_count(),
            "engine_p50_ms": pct(engine, 50), "engine_p95_ms": pct(engine, 95),
            "inprocess_p50_ms": pct(inproc, 50), "inprocess_p95_ms": pct(inproc, 95),
            "ratio_p50": pct(engine, 50) / pct(inproc, 50),
            "engine_tight_p50_ms": pct(tight, 50),
            "reset_p50_ms": pct(resets, 50), "reset_p95_ms": pct(resets, 95),
            "clean_reset_p50_ms": pct(clean, 50)}


# ---------------------------------------------------------------------------------------------
# The figures of the engine and sandbox targets, every mode in one run: sandboxed, unsandboxed
# and the same tool code on an in-process SQLite connection (sandbox_bench.py prints them too)
# ---------------------------------------------------------------------------------------------

MODES = {"sandboxed": True, "unsandboxed": False}
TARGET_SANDBOX_RATIO = 1.5  # sandboxed / unsandboxed, reset and step p50
TARGET_STEPS_PER_S = 3000.0  # 1,024 concurrent episodes, sandboxed
NO_TURNS = "sandboxed, no turns"
NO_SPIN = "sandboxed, workers sleep at once"
PINNED = "sandboxed, stepping threads on one core"


def bench_paired(spec: EnvSpec, workers: int, n_reset: int, n_step: int) -> dict[str, Any]:
    """Read steps, write steps and resets of the benchmark environment, sandboxed, unsandboxed
    and in-process taking turns call by call (so load that comes and goes hits all three
    alike): p50 per mode."""
    from large_env import InProcess

    runtimes = {mode: EnvRuntime(workers=workers, sandbox=sandbox)
                for mode, sandbox in MODES.items()}
    try:
        eps = {mode: rt.open(spec, seed=2) for mode, rt in runtimes.items()}
        rt = runtimes["unsandboxed"]
        base = InProcess(spec, rt.prepare(spec), rt.workdir)
        steppers = {**{m: ep.step for m, ep in eps.items()}, "inprocess": base.step}
        samples: dict[str, dict[str, list[float]]] = {m: {"read": [], "write": [], "reset": []}
                                                      for m in steppers}
        calls = {"read": ("get_item", lambda i: {"id": 1 + i % 150}),
                 "write": ("restock", lambda i: {"id": 1 + i % 150, "quantity": 1})}
        for kind, (tool, args) in calls.items():
            for i in range(-50, n_step):  # the first 50: warm-up
                for mode, step in steppers.items():
                    t = time.perf_counter()
                    out = step(tool, args(i))
                    took = (time.perf_counter() - t) * 1e3
                    if mode != "inprocess":
                        check(out)
                    if i >= 0:
                        samples[mode][kind].append(took)
        for i in range(n_reset):
            for mode, ep in eps.items():
                if i % 10 == 0:  # a dirty episode now and then: reset must bring it back
                    check(ep.step("restock", {"id": 1 + i % 150, "quantity": 1}))
                t = time.perf_counter()
                ep.reset()
                samples[mode]["reset"].append((time.perf_counter() - t) * 1e3)
        for ep in eps.values():
            assert ep.diff().empty, "reset did not restore the seed state"
            ep.close()
        base.close()
    finally:
        for rt in runtimes.values():
            rt.close()
    return {mode: {f"{kind}_p50_ms": pct(xs, 50) for kind, xs in kinds.items() if xs}
            for mode, kinds in samples.items()}


def engine_figures(spec: EnvSpec, large_spec: EnvSpec | None, *, workers: int, threads: int,
                   rounds: int, n_reset: int, n_step: int, target_steps: int,
                   n_large: int) -> dict[str, Any]:
    """Reset, read and write steps in both modes and in-process taking turns call by call;
    1,024 concurrent episodes in both modes in interleaved rounds (medians over rounds); the
    large environment in both modes against its in-process baseline."""
    import statistics

    res: dict[str, Any] = bench_paired(spec, workers, n_reset, n_step)
    # sandboxed without turns: stepping threads contending for the interpreter lock freely
    # (what EnvRuntime(take_turns=False) does; see agent_world.envs.pool.Turns)
    variants = {**{m: {"sandbox": sb} for m, sb in MODES.items()},
                NO_TURNS: {"sandbox": True, "take_turns": False},
                # workers that sleep as soon as they sent a frame (worker.InputWaiter)
                NO_SPIN: {"sandbox": True, "worker_spin_us": 0}}
    # the stepping threads pinned to one core (the workers keep every CPU): the application's
    # lever on machines where waking a thread on another core is slow (docs/environments.md)
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    one_core = min(cpus, default=None)
    if len(cpus) > 1:
        variants[PINNED] = {"sandbox": True}
    conc: dict[str, list[dict[str, Any]]] = {m: [] for m in variants}
    for _ in range(rounds):
        for mode, kwargs in variants.items():
            with EnvRuntime(workers=workers, **kwargs) as rt:
                bench_cold_open(rt, spec)
                conc[mode].append(bench_concurrency(rt, spec, 1024, threads, target_steps,
                                                    one_core if mode == PINNED else None))
    for mode, runs in conc.items():
        res.setdefault(mode, {})
        res[mode]["conc_steps_per_s"] = statistics.median(r["steps_per_s"] for r in runs)
        res[mode]["conc_bytes"] = statistics.median(
            r["peak_tree_rss_bytes"] + r["episode_files_bytes"] for r in runs)
    res["rounds"] = rounds
    if large_spec is not None:
        res["large"] = {mode: bench_large(large_spec, sandbox, n_large, 0.02)
                        for mode, sandbox in MODES.items()}
    return res


def render_figures(res: dict[str, Any], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for col in ("Figure", "Sandboxed", "Unsandboxed", "In-process SQLite",
                "Sandboxed / unsandboxed", "Target", "Met?"):
        table.add_column(col, justify="left" if col == "Figure" else "right")
    sb, un, ip = res["sandboxed"], res["unsandboxed"], res["inprocess"]

    def met(ok: bool) -> str:
        return "[green]yes[/]" if ok else "[red]NO[/]"

    def ratio_row(label: str, key: str, ip_key: str | None, fmt: str = "{:.3f} ms") -> None:
        r = sb[key] / un[key]
        table.add_row(label, fmt.format(sb[key]), fmt.format(un[key]),
                      fmt.format(ip[ip_key]) if ip_key else "", f"{r:.2f}x",
                      f"<= {TARGET_SANDBOX_RATIO:g}x", met(r <= TARGET_SANDBOX_RATIO))

    ratio_row("Reset p50 (after a write every 10th)", "reset_p50_ms", None, "{:.4f} ms")
    ratio_row("Step p50, read tool (1 statement)", "read_p50_ms", "read_p50_ms")
    ratio_row("Step p50, write tool (2 statements)", "write_p50_ms", "write_p50_ms")
    table.add_row("1,024 episodes: steps/s (read + write)", f"{sb['conc_steps_per_s']:,.0f}",
                  f"{un['conc_steps_per_s']:,.0f}", "",
                  f"{sb['conc_steps_per_s'] / un['conc_steps_per_s']:.2f}x",
                  f">= {TARGET_STEPS_PER_S:,.0f}",
                  met(sb["conc_steps_per_s"] >= TARGET_STEPS_PER_S))
    # the default against a variant that turns one of its mechanisms off
    for mode, label, ratio in ((NO_TURNS, "threads not taking turns", "turns / none"),
                               (NO_SPIN, "workers sleeping at once (worker_spin_us=0)",
                                "spin / none")):
        off = res.get(mode)
        if off:
            gain = sb["conc_steps_per_s"] / off["conc_steps_per_s"]
            table.add_row(f"1,024 episodes: steps/s, {label}", f"{off['conc_steps_per_s']:,.0f}",
                          "", "", f"{ratio} {gain:.2f}x", "", "")
    pinned = res.get(PINNED)
    if pinned:
        table.add_row("1,024 episodes: steps/s, stepping threads pinned to one core",
                      f"{pinned['conc_steps_per_s']:,.0f}", "", "",
                      f"pinned / not {pinned['conc_steps_per_s'] / sb['conc_steps_per_s']:.2f}x",
                      f">= {TARGET_STEPS_PER_S:,.0f}",
                      met(pinned["conc_steps_per_s"] >= TARGET_STEPS_PER_S))
    table.add_row("1,024 episodes: RSS + episode files", mib(sb["conc_bytes"]),
                  mib(un["conc_bytes"]), "", "", f"<= {mib(TARGET_RSS_BYTES)}",
                  met(sb["conc_bytes"] <= TARGET_RSS_BYTES))
    large = res.get("large")
    if large:
        ls, lu = large["sandboxed"], large["unsandboxed"]
        base = (ls["inprocess_p50_ms"] + lu["inprocess_p50_ms"]) / 2
        table.add_row("Large env step p50, 20 ms gaps (x in-process)",
                      f"{ls['engine_p50_ms']:.3f} ms ({ls['ratio_p50']:.1f}x)",
                      f"{lu['engine_p50_ms']:.3f} ms ({lu['ratio_p50']:.1f}x)",
                      f"{base:.3f} ms", f"{ls['engine_p50_ms'] / lu['engine_p50_ms']:.2f}x",
                      f"<= {TARGET_LARGE_RATIO:g}x in-process",
                      met(ls["ratio_p50"] <= TARGET_LARGE_RATIO))
        table.add_row("Large env step p95, 20 ms gaps", f"{ls['engine_p95_ms']:.3f} ms",
                      f"{lu['engine_p95_ms']:.3f} ms",
                      f"{(ls['inprocess_p95_ms'] + lu['inprocess_p95_ms']) / 2:.3f} ms", "",
                      f"<= {TARGET_LARGE_P95_MS:g} ms",
                      met(ls["engine_p95_ms"] <= TARGET_LARGE_P95_MS))
        table.add_row("Large env step p50, back to back", f"{ls['engine_tight_p50_ms']:.3f} ms",
                      f"{lu['engine_tight_p50_ms']:.3f} ms", "",
                      f"{ls['engine_tight_p50_ms'] / lu['engine_tight_p50_ms']:.2f}x", "", "")
        table.add_row("Large env reset p50 (after one write)", f"{ls['reset_p50_ms']:.3f} ms",
                      f"{lu['reset_p50_ms']:.3f} ms", "",
                      f"{ls['reset_p50_ms'] / lu['reset_p50_ms']:.2f}x",
                      f"<= {TARGET_LARGE_RESET_P50_MS:g} ms",
                      met(ls["reset_p50_ms"] <= TARGET_LARGE_RESET_P50_MS))
    Console(width=None if sys.stdout.isatty() else 170).print(table)


def figure_targets(res: dict[str, Any]) -> dict[str, dict[str, Any]]:
    sb, un = res["sandboxed"], res["unsandboxed"]
    out = {f"sandboxed_{k}_ratio": {"target": TARGET_SANDBOX_RATIO, "value": sb[k] / un[k],
                                    "met": sb[k] / un[k] <= TARGET_SANDBOX_RATIO}
           for k in ("reset_p50_ms", "read_p50_ms", "write_p50_ms")}
    out["sandboxed_1024_steps_per_s"] = {
        "target": TARGET_STEPS_PER_S, "value": sb["conc_steps_per_s"],
        "met": sb["conc_steps_per_s"] >= TARGET_STEPS_PER_S}
    out["sandboxed_1024_bytes"] = {"target": TARGET_RSS_BYTES, "value": sb["conc_bytes"],
                                   "met": sb["conc_bytes"] <= TARGET_RSS_BYTES}
    return out


def figures_title(res: dict[str, Any], workers: int, threads: int, load_start: str,
                  load_end: str) -> str:
    return (f"Engine figures, sandboxed vs unsandboxed vs in-process (steps and resets taking "
            f"turns; 1,024 episodes: medians of {res['rounds']} interleaved round(s); "
            f"workers={workers}, threads={threads}, "
            f"{os.cpu_count()} CPUs; load average {load_start} at the start, {load_end} at "
            "the end)")


def load_average() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


# ---------------------------------------------------------------------------------------------
# Contrast: one FastAPI/uvicorn process per environment instance
# ---------------------------------------------------------------------------------------------

SERVER_APP = textwrap.dedent('''\
    """One environment instance as its own web server: own SQLite copy, GET /items/{id}."""
    import socket
    import sqlite3
    import sys

    import uvicorn
    from fastapi import FastAPI, HTTPException

    source, target, fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
    src = sqlite3.connect(source)
    db = sqlite3.connect(target, check_same_thread=False)
    src.backup(db)  # this instance's own copy of the benchmark database
    src.close()
    db.row_factory = sqlite3.Row
    app = FastAPI()


    @app.get("/items/{item_id}")
    async def get_item(item_id: int):
        row = db.execute("SELECT * FROM products WHERE id = ?", (item_id,)).fetchone()
        if row is None:
            raise HTTPException(404, f"no item with id {item_id}")
        return dict(row)


    # The parent bound 127.0.0.1:0 and listens; the socket is inherited (no port race).
    sock = socket.socket(fileno=fd)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])
    ''')


def bench_servers(template: Path, n: int) -> dict[str, Any]:
    import httpx

    tmp = Path(tempfile.mkdtemp(prefix="agent-world-bench-servers-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        app = tmp / "instance_app.py"
        app.write_text(SERVER_APP)
        source = tmp / "benchmark.sqlite"
        shutil.copyfile(template, source)
        first_answer_s: list[float] = []
        with httpx.Client(timeout=httpx.Timeout(60.0)) as client:
            for i in range(n):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                try:
                    sock.bind(("127.0.0.1", 0))
                    sock.listen(64)
                    port = sock.getsockname()[1]
                    t0 = time.perf_counter()
                    proc = subprocess.Popen(
                        [sys.executable, str(app), str(source), str(tmp / f"instance{i}.sqlite"),
                         str(sock.fileno())],
                        pass_fds=(sock.fileno(),), cwd=tmp, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                    procs.append(proc)
                finally:
                    sock.close()  # the child holds the listening socket now
                # The kernel queues the connection until the server accepts: this call waits
                # for start-up, then is served (a poll loop would only add its sleep interval).
                try:
                    r = client.get(f"http://127.0.0.1:{port}/items/{1 + i}")
                except httpx.HTTPError as exc:
                    err = proc.stderr.read().decode(errors="replace") if proc.poll() is not None else ""
                    raise RuntimeError(f"server instance {i} did not answer: {exc}\n{err}") from exc
                first_answer_s.append(time.perf_counter() - t0)
                if r.status_code != 200 or r.json().get("id") != 1 + i:
                    raise RuntimeError(f"server instance {i} answered {r.status_code}: {r.text[:200]}")
        rss = []
        for proc in procs:  # all n instances are up, each has served one request
            p = psutil.Process(proc.pid)
            rss.append(sum(q.memory_info().rss for q in [p, *p.children(recursive=True)]))
        return {"instances": n, "first_answer_s": first_answer_s,
                "mean_first_answer_ms": sum(first_answer_s) / n * 1e3,
                "rss_per_instance_bytes": rss, "mean_rss_bytes": sum(rss) / n,
                "db_bytes_per_instance": (tmp / "instance0.sqlite").stat().st_size}
    finally:
        for proc in procs:  # every server this run started, by its own pid
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stderr:
                proc.stderr.close()
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------

def mib(b: float) -> str:
    return f"{b / 1024**2:,.1f} MiB"


def render(res: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    cfg = res["config"]
    table = Table(title=(f"agent_world env engine: {cfg['spec_tables']} tables, "
                         f"{cfg['spec_rows']:,} rows; workers={cfg['workers']}, "
                         f"threads={cfg['threads']}, {cfg['cpus']} CPUs"
                         + (" [--quick]" if cfg["quick"] else "")))
    table.add_column("Metric")
    table.add_column("Value", justify="right")
    table.add_column("Target", justify="right")
    table.add_column("Met?", justify="center")
    table.add_column("Detail")

    def met(ok: bool) -> str:
        return "[green]yes[/]" if ok else "[red]NO[/]"

    c = res["cold"]
    table.add_row("First open + first step (cold)",
                  f"{c['first_open_ms']:.1f} + {c['first_step_ms']:.1f} ms", "", "",
                  "template build; worker compiles the tools")
    r = res["reset"]
    table.add_row("Reset p50", f"{r['p50_ms']:.3f} ms", f"<= {TARGET_RESET_P50_MS:g} ms",
                  met(r["p50_ms"] <= TARGET_RESET_P50_MS),
                  f"n={r['n']:,}; template {r['template_bytes'] / 1024:.0f} KiB")
    table.add_row("Reset p95", f"{r['p95_ms']:.3f} ms", "", "", "")
    s = res["step"]
    table.add_row("Step p50 (get_item via worker)", f"{s['p50_ms']:.3f} ms",
                  f"<= {TARGET_STEP_P50_MS:g} ms", met(s["p50_ms"] <= TARGET_STEP_P50_MS),
                  f"n={s['n']:,}; one episode, {s['steps_per_s']:,.0f} steps/s")
    table.add_row("Step p95 (get_item via worker)", f"{s['p95_ms']:.3f} ms", "", "", "")
    for lv in res["concurrency"]:
        table.add_row(f"Concurrent: {lv['episodes']:,} open episode(s)",
                      f"{lv['steps_per_s']:,.0f} steps/s", "", "",
                      f"{lv['steps']:,} steps (read+write x{lv['rounds']} each), "
                      f"{lv['threads']} thread(s); opened in {lv['open_s'] * 1e3:,.0f} ms")
    big = res["concurrency"][-1]
    peak = big["peak_tree_rss_bytes"]
    table.add_row(f"Peak RSS, {big['episodes']:,} episodes (process tree)", mib(peak),
                  f"<= {mib(TARGET_RSS_BYTES)}", met(peak <= TARGET_RSS_BYTES),
                  f"this process + {cfg['workers']} workers; baseline "
                  f"{mib(big['baseline_tree_rss_bytes'])}")
    table.add_row(f"Episode DB files, {big['episodes']:,} episodes", mib(big["episode_files_bytes"]),
                  "", "", f"under {cfg['workdir_fs']}: RAM-backed if tmpfs, and in no RSS")
    total = peak + big["episode_files_bytes"]
    table.add_row(f"RSS + episode files, {big['episodes']:,} episodes", mib(total),
                  f"<= {mib(TARGET_RSS_BYTES)}", met(total <= TARGET_RSS_BYTES), "")
    o = res["open_step"]
    table.add_row("open_episode + 1 step (warm, new file)", f"{o['mean_ms']:.2f} ms", "", "",
                  f"mean of {o['n']}; p50 {o['p50_ms']:.2f} ms")
    table.add_row("open_episode + 1 step (closed one reused)", f"{o['reused_mean_ms']:.2f} ms",
                  "", "", f"mean of {o['n']}; p50 {o['reused_p50_ms']:.2f} ms")
    table.add_row("Memory per episode", f"{res['per_episode_bytes'] / 1024:,.0f} KiB", "", "",
                  "(peak RSS - baseline + DB files) / episodes; all-in (workers and this "
                  f"process included) {res['all_in_per_episode_bytes'] / 1024:,.0f} KiB")
    w = res["servers"]
    table.add_row(f"Web server per instance: first answer ({w['instances']} inst.)",
                  f"{w['mean_first_answer_ms']:,.0f} ms", "", "",
                  "FastAPI+uvicorn process start + own SQLite copy + 1 GET, mean")
    table.add_row("Web server per instance: RSS", mib(w["mean_rss_bytes"]), "", "",
                  "mean per instance process")
    table.add_row("Ratio: time to first answer", f"{res['ratio_time']:,.0f}x", "", "",
                  "web server / (open_episode + 1 step)")
    table.add_row("Ratio: memory per instance", f"{res['ratio_memory']:,.0f}x", "", "",
                  "web server RSS / memory per episode")
    table.add_row("Benchmark wall time", f"{res['wall_s']:.1f} s", "", "", "")
    # a pipe or a log gets a wide table too (Rich assumes 80 columns when not on a terminal)
    Console(width=None if sys.stdout.isatty() else 160).print(table)


def render_large(res: dict[str, Any]) -> None:
    """The large-environment rows only (--large-only)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"agent_world env engine: large environment, {res['config']['cpus']} CPUs")
    for col in ("Mode", "Step p50", "In-process p50", "Ratio", "Step p95", "In-process p95",
                "No-gap p50", "Reset p50", "Reset p95", "Clean reset p50"):
        table.add_column(col, justify="left" if col == "Mode" else "right")
    for lg in res["large"]:
        table.add_row("sandboxed" if lg["sandbox"] else "no sandbox",
                      f"{lg['engine_p50_ms']:.3f} ms", f"{lg['inprocess_p50_ms']:.3f} ms",
                      f"{lg['ratio_p50']:.1f}x", f"{lg['engine_p95_ms']:.3f} ms",
                      f"{lg['inprocess_p95_ms']:.3f} ms", f"{lg['engine_tight_p50_ms']:.3f} ms",
                      f"{lg['reset_p50_ms']:.3f} ms", f"{lg['reset_p95_ms']:.3f} ms",
                      f"{lg['clean_reset_p50_ms']:.3f} ms")
    lg = res["large"][0]
    Console(width=None if sys.stdout.isatty() else 160).print(table)
    print(f"load average {res['load_start']} at the start, {res['load_end']} at the end")
    print(f"{lg['tables']} tables, {lg['rows']:,} rows, {mib(lg['db_bytes'])}; {lg['n']} steps "
          f"each way, {lg['gap_ms']:.0f} ms between steps; targets: ratio <= "
          f"{TARGET_LARGE_RATIO:g}x, p95 <= {TARGET_LARGE_P95_MS:g} ms, reset p50 <= "
          f"{TARGET_LARGE_RESET_P50_MS:g} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run with smaller counts")
    ap.add_argument("--json", metavar="PATH", help="also write the raw figures as JSON here")
    ap.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="tool worker processes")
    ap.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="stepping threads")
    ap.add_argument("--servers", type=int, default=None,
                    help="web-server instances in the contrast (default 8, 3 with --quick)")
    ap.add_argument("--large-only", action="store_true",
                    help="only the large-environment case (both sandbox modes)")
    args = ap.parse_args(argv)

    q = args.quick
    n_reset = 500 if q else 2000
    n_step = 1000 if q else 5000
    n_open_step = 100 if q else 300
    levels = [1, 64, 1024]
    target_steps = 2048 if q else 8192
    n_servers = args.servers if args.servers is not None else (3 if q else 8)

    started = time.perf_counter()
    spec = build_spec()
    res: dict[str, Any] = {"load_start": load_average()}
    from large_env import build_spec as build_large_spec

    large_spec = build_large_spec()
    n_large = 200 if q else 600

    def large_targets(large: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {f"large_{'sandboxed' if lg['sandbox'] else 'unsandboxed'}_{key}": {
                "target": target, "value": lg[key], "met": lg[key] <= target}
                for lg in large
                for key, target in (("ratio_p50", TARGET_LARGE_RATIO),
                                    ("engine_p95_ms", TARGET_LARGE_P95_MS),
                                    ("reset_p50_ms", TARGET_LARGE_RESET_P50_MS))}

    if args.large_only:
        res["large"] = [bench_large(large_spec, sandbox, n_large, 0.02)
                        for sandbox in (False, True)]
        res["config"] = {"quick": q, "workers": 1, "threads": 1, "cpus": os.cpu_count(),
                         "spec_tables": len(large_spec.tables),
                         "spec_rows": large_spec.row_count()}
        res["targets"] = large_targets(res["large"])
        res["wall_s"] = time.perf_counter() - started
        res["load_end"] = load_average()
        render_large(res)
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=2))
        return 0 if all(t["met"] for t in res["targets"].values()) else 1
    with EnvRuntime(workers=args.workers) as runtime:
        mounts = [m for m in psutil.disk_partitions(all=True)
                  if str(runtime.workdir).startswith(m.mountpoint.rstrip("/") + "/")]
        mount = max(mounts, key=lambda m: len(m.mountpoint), default=None)
        fs = f"{mount.mountpoint} ({mount.fstype})" if mount else str(runtime.workdir)
        res["config"] = {
            "quick": q, "workers": args.workers, "threads": args.threads, "levels": levels,
            "cpus": os.cpu_count(), "python": platform.python_version(),
            "spec_tables": len(spec.tables), "spec_rows": spec.row_count(),
            "spec_fingerprint": spec.fingerprint, "workdir_fs": fs,
        }
        res["cold"] = bench_cold_open(runtime, spec)
        res["reset"] = bench_reset(runtime, spec, n_reset)
        res["step"] = bench_step(runtime, spec, n_step)
        res["concurrency"] = [bench_concurrency(runtime, spec, lv, args.threads, target_steps)
                              for lv in levels]
        res["open_step"] = bench_open_plus_step(runtime, spec, n_open_step)
        template = runtime.prepare(spec)
        big = res["concurrency"][-1]
        res["per_episode_bytes"] = (
            max(0, big["peak_tree_rss_bytes"] - big["baseline_tree_rss_bytes"])
            + big["episode_files_bytes"]) / big["episodes"]
        res["all_in_per_episode_bytes"] = (
            big["peak_tree_rss_bytes"] + big["episode_files_bytes"]) / big["episodes"]
        res["servers"] = bench_servers(template, n_servers)
    res["figures"] = engine_figures(
        spec, large_spec, workers=args.workers, threads=args.threads, rounds=1 if q else 2,
        n_reset=n_reset // 2, n_step=n_step // 2, target_steps=target_steps, n_large=n_large)
    res["load_end"] = load_average()
    res["ratio_time"] = res["servers"]["mean_first_answer_ms"] / res["open_step"]["mean_ms"]
    res["ratio_memory"] = res["servers"]["mean_rss_bytes"] / res["per_episode_bytes"]
    res["targets"] = {
        "reset_p50_ms": {"target": TARGET_RESET_P50_MS, "value": res["reset"]["p50_ms"],
                         "met": res["reset"]["p50_ms"] <= TARGET_RESET_P50_MS},
        "step_p50_ms": {"target": TARGET_STEP_P50_MS, "value": res["step"]["p50_ms"],
                        "met": res["step"]["p50_ms"] <= TARGET_STEP_P50_MS},
        "rss_1024_bytes": {"target": TARGET_RSS_BYTES, "value": big["peak_tree_rss_bytes"],
                           "met": big["peak_tree_rss_bytes"] <= TARGET_RSS_BYTES},
        **figure_targets(res["figures"]),
        **large_targets(list(res["figures"]["large"].values())),
    }
    res["wall_s"] = time.perf_counter() - started
    render(res)
    render_figures(res["figures"], figures_title(res["figures"], args.workers, args.threads,
                                                 res["load_start"], res["load_end"]))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return 0 if all(t["met"] for t in res["targets"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
