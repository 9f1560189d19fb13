"""The tool designer's offline strategy: plan tools from the schema, the coverage map and the
field hints, render them in toolkit form, and write tests whose expectations come from the seed
rows (see contracts.py, plans.py, render.py and expectations.py: each names the modules it
draws on)."""

from __future__ import annotations

from agent_world.design.offline.expectations import design_tests
from agent_world.design.offline.plans import ToolPlan
from agent_world.design.offline.render import render_module, render_tool
from agent_world.design.offline.source_plans import plan_tools
from agent_world.envs.spec import EnvSpec


def design_offline(spec: EnvSpec, max_tools: int = 40
                   ) -> tuple[str, list[dict], dict[str, str], list[ToolPlan]]:
    """(toolkit module source, tests, source tools not implemented -> why, plans). A tool
    whose rendered code does not compile is left out with the reason, so it cannot take the
    module, and every other tool with it, down."""
    plans, skipped = plan_tools(spec, max_tools=max_tools)
    kept = []
    for plan in plans:
        try:
            compile(render_tool(spec, plan), plan.name, "exec")
        except SyntaxError as exc:
            skipped[plan.source_tool or plan.name] = \
                f"its rendered code does not compile: {exc.msg} (line {exc.lineno})"
            continue
        kept.append(plan)
    return render_module(spec, kept), design_tests(spec, kept), skipped, kept


__all__ = ["design_offline"]
