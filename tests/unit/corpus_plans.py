"""The tool plans of one shipped corpus server, mined offline with no complexification."""

from __future__ import annotations

import warnings
from typing import Any

from agent_world.design.offline.source_plans import plan_tools
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources


def corpus_plans(server: str) -> tuple[Any, dict[str, Any], dict[str, str]]:
    """(spec, source tool -> its plan, source tool -> why it is not built)."""
    ref = next(r for r in corpus_sources() if r.name == server)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = mine_theme(read_source(ref.spec), iterations=0, seed=0).spec
    plans, unbuilt = plan_tools(spec)
    return spec, {p.source_tool: p for p in plans if p.source_tool}, unbuilt
