"""Where things live: the arena home directory (catalog, templates, checkpoints)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from agent_world.errors import AgentWorldError

HOME_ENV = "AGENT_WORLD_HOME"
DEFAULT_HOME = Path("~/.agent_world")
CATALOG_FILE = "catalog.sqlite"

# Directories of arena data this process uses (homes, catalog folders, runtime work dirs):
# every sandbox started afterwards hides them (agent_world.sandbox.isolation).
_protected: set[Path] = set()
_protected_lock = threading.Lock()


def protect(path: str | Path) -> None:
    """Keep `path` (a directory of arena data: its catalog holds every task's gold answer)
    out of sight of sandboxed code, wherever it lies and however it was chosen."""
    resolved = Path(path).expanduser().resolve()
    with _protected_lock:
        _protected.add(resolved)


def protected_paths() -> list[Path]:
    """The directories `protect` recorded, $AGENT_WORLD_HOME and ~/.agent_world."""
    env = os.environ.get(HOME_ENV)
    out = [Path(p).expanduser().resolve() for p in (env, DEFAULT_HOME) if p]
    with _protected_lock:
        out += sorted(_protected)
    return list(dict.fromkeys(out))


def resolve_home(home: str | Path | None = None) -> Path:
    """Explicit argument, else $AGENT_WORLD_HOME, else ~/.agent_world; created if missing and,
    from now on, hidden from every sandbox this process starts."""
    chosen = home or os.environ.get(HOME_ENV) or DEFAULT_HOME
    path = Path(chosen).expanduser().resolve()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AgentWorldError(f"arena home {str(path)!r} cannot be used: "
                              f"{exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise AgentWorldError(f"arena home {str(path)!r} is not writable")
    protect(path)
    return path


def catalog_url(home: Path) -> str:
    """$AGENT_WORLD_CATALOG_URL (any SQLAlchemy URL, e.g. Postgres) or a SQLite file in home."""
    return os.environ.get("AGENT_WORLD_CATALOG_URL") or f"sqlite:///{home / CATALOG_FILE}"
