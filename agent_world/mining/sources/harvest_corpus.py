"""The shipped corpus: tool lists harvested from real MCP servers (``agent-world harvest``),
one JSON document per service in ``agent_world/data/corpus/``, listed with their provenance in
its ``index.json``. Mining it needs no installs and no network."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

from agent_world.errors import SourceError
from agent_world.mining.sources import SourceRef

__all__ = ["CORPUS_DIR", "corpus_index", "corpus_sources"]

CORPUS_DIR = Path(__file__).resolve().parents[2] / "data" / "corpus"


def corpus_index(corpus: str | os.PathLike[str] = CORPUS_DIR) -> dict[str, Any]:
    """The corpus's ``index.json``: ``servers`` (service, file, registry, package, version,
    license, harvested_at, tool_count, ...) and ``failed``."""
    path = Path(corpus) / "index.json"
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SourceError(f"corpus index {str(path)!r} cannot be read "
                          f"({exc.strerror or exc}); run `agent-world harvest` to make one") from exc
    except json.JSONDecodeError as exc:
        raise SourceError(f"corpus index {str(path)!r} is not JSON ({exc})") from exc
    if not isinstance(index, dict) or not isinstance(index.get("servers"), list):
        raise SourceError(f"corpus index {str(path)!r} has no 'servers' list")
    return index


def corpus_sources(sample: int | None = None, seed: int = 0,
                   corpus: str | os.PathLike[str] = CORPUS_DIR) -> list[SourceRef]:
    """Tool-list sources of the corpus, by service name; `sample`: a seeded random subset of
    that many (the same `seed` gives the same subset)."""
    folder = Path(corpus).resolve()
    rows = sorted(corpus_index(folder)["servers"], key=lambda r: str(r.get("service")))
    refs = [SourceRef(kind="tool-list", reference=str(folder / str(r["file"])),
                      name=str(r["service"])) for r in rows]
    if sample is None:
        return refs
    if not 1 <= sample <= len(refs):
        raise SourceError(f"corpus sample {sample}: the corpus holds {len(refs)} servers; "
                          f"ask for 1 to {len(refs)}")
    picked = random.Random(seed).sample(range(len(refs)), sample)
    return [refs[i] for i in sorted(picked)]
