"""What `env_bench.py` measures, phase by phase: reset, step, open + step, concurrent episodes
and the large environment against the same tool code in-process; and the measuring helpers
(percentiles, process-tree RSS sampled in a background thread, allocated file sizes)."""

from __future__ import annotations

import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psutil
from large_env import InProcess

from agent_world.envs import EnvRuntime, EnvSpec

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


def tree_rss(root: psutil.Process, with_root: bool = True) -> int:
    """RSS of a process and all its descendants (pages shared between them count twice);
    `with_root=False`: of the descendants alone (the workers a process runs on)."""
    total = 0
    for p in [root, *root.children(recursive=True)][0 if with_root else 1:]:
        try:
            total += p.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return total


class PeakSampler:
    """Samples the process tree's RSS in a background thread; `peak` is the largest seen."""

    def __init__(self, interval_s: float = 0.25, with_root: bool = True):
        self.interval_s = interval_s
        self.with_root = with_root
        self.root = psutil.Process()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, tree_rss(self.root, self.with_root))
            if self._stop.wait(self.interval_s):
                return

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, tree_rss(self.root, self.with_root))


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


def load_average() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def mib(b: float) -> str:
    return f"{b / 1024**2:,.1f} MiB"
