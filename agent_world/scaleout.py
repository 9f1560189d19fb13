"""Where the per-source and per-environment work of mine, build and synthesize runs: in this
process, on a local process pool, or as Ray tasks on a cluster.

The stage graphs fan out one branch per source or environment (LangGraph `Send`: threads of
one process). A branch hands its pure part, plain picklable data in (source strings, specs,
catalog rows) and a result out, to the run's executor and waits for it; the branch itself,
in the main process, then writes the result to the catalog, which stays the one writer
(workers never open it). What a branch writes is keyed by content (an environment version by
its fingerprint, a theme by its source's content, a task by its content id), so the catalog
and the stages' outputs are the same for a seed whichever executor ran them and in whatever
order the branches finished; `synthesize_tasks` returns task ids in a canonical order.

What runs where (a role "has a model" when a chat model is configured for it or injected):

* mine: reading a source and mining it (`graphs.mine.mine_job`) on a worker, unless the miner
  has a model; the ledger notes, the name claim and the theme are written here.
* build: designing (and repairing, LLM designer only) here; validating a design in the sandbox
  and finishing the built spec (`graphs.build.validate_job`, `finish_job`) on a worker, each
  worker keeping its own warm sandbox.
* synthesize: one environment's candidate, gate and verifier loop (`graphs.synthesize.
  synthesize_job`) on a worker against a snapshot of the catalog rows it reads (the
  environment's tasks, the run's ledger); the tasks and ledger entries it would have written
  come back and are written here in the order it made them. With a synthesizer or verifier
  model it runs here. A branch on a worker writes at its end: a run killed meanwhile redoes
  that environment on resume (its attempts are seeded, so it draws the same tasks).
* evaluation (held-out rollouts of the policy) stays in process: one torch policy is loaded
  per evaluation and its episodes share it.

Models and their clients do not pickle, and a run's choice of model lives in this process's
context (`agent_world.models.models_for`), hence LLM-backed steps stay here.

Executors (`executor(workers, ray_address)`): `ray_address` set: Ray tasks (`ray.init(address=
...)` once per process; "local" starts a local cluster; an already initialised Ray is used
as it is); else `workers` processes (None: $AGENT_WORLD_WORKERS, else the cores this process
may use), a `concurrent.futures.ProcessPoolExecutor` kept for every later run of the process,
so its workers' sandboxes are started once; 1: in this process, no pool. Its workers come from
a fork server that imported the job modules once (`JOB_MODULES`): forking this process, which
runs threads and holds SQLite connections, would be unsafe, and spawning each worker would
import them once per worker.

A worker that dies (a crash, a kill, out of memory) fails only the branch it ran, with an error
naming the source or environment; the other branches and what they wrote stay. A dead process
breaks a `ProcessPoolExecutor` for every job in flight, so those jobs are run again, each alone
in a fresh process, before any is declared failed (the jobs are deterministic); Ray reports the
dead worker's own task only, and its tasks are never retried.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from agent_world import models, stop
from agent_world.errors import AgentWorldError

T = TypeVar("T")

WORKERS_ENV = "AGENT_WORLD_WORKERS"  # the default of `workers` (else the cores)


class ScaleoutError(AgentWorldError):
    """An executor could not be set up, or a worker died while it ran a job."""


class JobFailed(AgentWorldError):
    """A job raised on a worker; the message is the reason the branch records, as it would
    have read in process."""


def workers_field() -> Any:
    """The `workers` field of a stage graph's context schema, described for Studio."""
    return field(default=None, metadata={
        "description": "Processes for the per-source/per-environment work: empty: "
                       "$AGENT_WORLD_WORKERS, else one per core; 1: in the graph's own process. "
                       "Ignored with ray_address."})


def ray_field() -> Any:
    """The `ray_address` field of a stage graph's context schema, described for Studio."""
    return field(default=None, metadata={
        "description": "Run the per-source/per-environment work as Ray tasks on this cluster "
                       "(\"auto\", \"ray://HOST:10001\", or \"local\" to start one here); needs "
                       "the `scale` extra."})


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def has_model(*roles: str) -> bool:
    """Whether any of `roles` has a chat model (configured or injected): its steps run in
    process (see the module docstring)."""
    return any(role in models._overrides or models.model_name(role) != models.OFFLINE  # type: ignore[arg-type]
               for role in roles)


class Executor(Protocol):
    name: str
    remote: bool  # jobs run in other processes (their arguments and results are pickled)

    def run(self, label: str, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on a worker; its result. `label` names the job in errors ("source
        mcp:..."); a job that raised is a `JobFailed`, a dead worker a `ScaleoutError`."""
        ...


def _reason(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, AgentWorldError) else \
        f"internal error: {type(exc).__name__}: {exc}"


def _call(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    """What a worker runs: (True, result) or (False, the reason it raised). The reason, not the
    exception: not every exception pickles, and Ray wraps them in its own."""
    try:
        return True, fn(*args)
    except Exception as exc:
        return False, _reason(exc)


def _unwrap(outcome: tuple[bool, Any]) -> Any:
    ok, value = outcome
    if not ok:
        raise JobFailed(value)
    return value


@dataclass
class InProcess:
    """Jobs run in the calling thread; exceptions propagate as they are."""

    name: str = "in-process"
    remote: bool = False

    def run(self, label: str, fn: Callable[..., T], *args: Any) -> T:
        return fn(*args)


# what the pool's workers run; the fork server imports them once and forks workers from it
JOB_MODULES = ["agent_world.graphs.mine_graph", "agent_world.graphs.build_graph",
               "agent_world.graphs.synthesize_graph"]


def _forkserver() -> Any:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(JOB_MODULES)
    return ctx


class ProcessPool:
    """A local `ProcessPoolExecutor` (workers from a fork server) shared by the branches of
    every run."""

    remote = True

    def __init__(self, workers: int):
        self.workers = workers
        self.name = f"{workers} processes"
        self._lock = threading.Lock()
        self._pool = self._start(workers)

    @staticmethod
    def _start(workers: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(workers, mp_context=_forkserver())

    def run(self, label: str, fn: Callable[..., T], *args: Any) -> T:
        pool = self._pool
        try:
            return _unwrap(pool.submit(_call, fn, args).result())
        except BrokenProcessPool:
            pass
        with self._lock:  # the first branch to see the broken pool replaces it
            if self._pool is pool:
                pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._start(self.workers)
        # any job in flight saw the pool break: run this one alone to learn whether it is the
        # one that kills its worker
        alone = self._start(1)
        try:
            return _unwrap(alone.submit(_call, fn, args).result())
        except BrokenProcessPool:
            raise ScaleoutError(f"{label}: its worker process died (crashed or was killed) "
                                "while running it, also when run again alone") from None
        finally:
            alone.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class RayTasks:
    """Jobs as Ray tasks (never retried: a crash is reported, not repeated)."""

    remote = True

    def __init__(self, address: str):
        try:
            self._ray = importlib.import_module("ray")
        except ImportError:
            raise ScaleoutError("--ray needs Ray: pip install 'agent-world[scale]'") from None
        if not self._ray.is_initialized():
            try:
                if address == "local":
                    self._ray.init(address="local", include_dashboard=False)
                else:
                    self._ray.init(address=address)
            except Exception as exc:  # no cluster there, a version mismatch, a bad address
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ScaleoutError(f"cannot connect to Ray at {address!r}: {first}") from None
        self.name = f"Ray at {address}"
        self._task = self._ray.remote(max_retries=0, num_cpus=1)(_call)

    def run(self, label: str, fn: Callable[..., T], *args: Any) -> T:
        ref = self._task.remote(fn, args)
        try:
            return _unwrap(self._ray.get(ref))
        except self._ray.exceptions.RayError as exc:  # the worker or its node died
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ScaleoutError(f"{label}: its Ray worker died while running it: {first}") \
                from None


_executors: dict[tuple[int | None, str | None], Executor] = {}
_executors_lock = threading.Lock()


def executor(workers: int | None = None, ray_address: str | None = None) -> Executor:
    """The executor for a run's settings; one per setting and process, reused by later runs
    (see the module docstring). A bad setting is a `ScaleoutError`."""
    if workers is None and os.environ.get(WORKERS_ENV):
        text = os.environ[WORKERS_ENV]
        if not text.strip().isdigit():
            raise ScaleoutError(f"{WORKERS_ENV}: a number of processes, got {text!r}")
        workers = int(text)
    if workers is not None and workers < 1:
        raise ScaleoutError(f"workers must be at least 1, got {workers}")
    key = (None, ray_address) if ray_address else (workers or cores(), None)
    with _executors_lock:
        found = _executors.get(key)
        if found is None:
            if ray_address:
                found = RayTasks(ray_address)
            elif key[0] == 1:
                found = InProcess()
            else:
                pool = ProcessPool(key[0])
                stop.at_exit(pool.close)
                found = pool
            _executors[key] = found
        return found


def for_context(ctx: Any) -> Executor:
    """The executor a graph run's context asks for (`workers`, `ray_address`)."""
    get = ctx.get if isinstance(ctx, dict) else lambda k: getattr(ctx, k, None)
    return executor(get("workers"), get("ray_address") or None)


__all__ = ["Executor", "InProcess", "JobFailed", "ProcessPool", "RayTasks", "ScaleoutError",
           "WORKERS_ENV", "cores", "executor", "for_context", "has_model", "ray_field", "workers_field"]
