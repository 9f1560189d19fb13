"""Where things live: the arena home directory (catalog, templates, checkpoints)."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "AGENT_WORLD_HOME"
DEFAULT_HOME = Path("~/.agent_world")


def resolve_home(home: str | Path | None = None) -> Path:
    """Explicit argument, else $AGENT_WORLD_HOME, else ~/.agent_world; created if missing."""
    chosen = home or os.environ.get(HOME_ENV) or DEFAULT_HOME
    path = Path(chosen).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def catalog_url(home: Path) -> str:
    """$AGENT_WORLD_CATALOG_URL (any SQLAlchemy URL, e.g. Postgres) or a SQLite file in home."""
    return os.environ.get("AGENT_WORLD_CATALOG_URL") or f"sqlite:///{home / 'catalog.sqlite'}"
