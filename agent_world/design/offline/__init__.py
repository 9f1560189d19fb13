"""The tool designer's offline strategy: plan tools from the schema, the coverage map and the
field hints, render them in toolkit form, and write tests whose expectations come from the seed
rows (see contracts.py, plans.py, render.py and expectations.py: each names the modules it
draws on)."""

from __future__ import annotations

from agent_world.design.offline.expectations import design_tests
from agent_world.design.offline.plans import ToolPlan
from agent_world.design.offline.render import render_module
from agent_world.design.offline.source_plans import plan_tools
from agent_world.envs.spec import EnvSpec


def design_offline(spec: EnvSpec, max_tools: int = 40
                   ) -> tuple[str, list[dict], dict[str, str], list[ToolPlan]]:
    """(toolkit module source, tests, source tools not implemented -> why, plans)."""
    plans, skipped = plan_tools(spec, max_tools=max_tools)
    return render_module(spec, plans), design_tests(spec, plans), skipped, plans


__all__ = ["design_offline"]
