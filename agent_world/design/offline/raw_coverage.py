"""A coverage map for a mined spec that has none (a theme mined before coverage maps were
stored): each raw 'name: description' tool line mapped to the table its name's nouns point at.
"""

from __future__ import annotations

from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import plural, singular, tokens


def fallback_coverage(spec: EnvSpec) -> dict[str, Any]:
    """A coverage map from the theme's raw tool descriptions when the mined spec has none:
    each 'name: description' line mapped to the table its name's nouns point at."""
    tables = {t.name for t in spec.tables}
    tools: dict[str, Any] = {}
    for line in spec.theme.raw_descriptions:
        name, _, desc = line.partition(":")
        name = name.strip()
        if not name.isidentifier():
            continue
        table = None
        for w in reversed(tokens(name)):
            for cand in (plural(w), w, plural(singular(w))):
                if cand in tables:
                    table = cand
                    break
            if table:
                break
        tools[name] = {"table": table, "read_only": None, "description": desc.strip(),
                       "arguments": {}, "covered": table is not None,
                       "missing": [] if table else ["no table holds what the tool acts on"]}
    return {"tools": tools}


__all__ = ["fallback_coverage"]
