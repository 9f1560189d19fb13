"""Where things live: the arena home directory (catalog, templates, checkpoints)."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "AGENT_WORLD_HOME"
DEFAULT_HOME = Path("~/.agent_world")


def resolve_home(home: str | Path | None = None) -> Path:
    """Explicit argument, else $AGENT_WORLD_HOME, else ~/.agent_world; created if missing."""
    from agent_world.errors import AgentWorldError

    chosen = home or os.environ.get(HOME_ENV) or DEFAULT_HOME
    path = Path(chosen).expanduser().resolve()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AgentWorldError(f"arena home {str(path)!r} cannot be used: "
                              f"{exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise AgentWorldError(f"arena home {str(path)!r} is not writable")
    return path


def catalog_url(home: Path) -> str:
    """$AGENT_WORLD_CATALOG_URL (any SQLAlchemy URL, e.g. Postgres) or a SQLite file in home."""
    return os.environ.get("AGENT_WORLD_CATALOG_URL") or f"sqlite:///{home / 'catalog.sqlite'}"
