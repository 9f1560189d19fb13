"""Tool tests whose expectations come from the seed rows, not from running the tool.

For each plan the expected result or state change is computed here in plain Python over the
spec's seed rows (filters, counts, sums, the row a key names, the row a create inserts),
independently of the SQL the renderer writes. Every tool gets positive cases and refusals
(unknown id, final status, still-referenced record, taken unique value), and every write test
states its exact database change (`ToolExpectation.changes`). The tests are written by
read_expectations.py and write_expectations.py (plain plan kinds), contract_expectations.py
and compute_expectations.py (plans rendered from a contract).
"""

from __future__ import annotations

from typing import Any

from agent_world.design.offline.compute_expectations import ComputeTests
from agent_world.design.offline.plans import ToolPlan
from agent_world.design.offline.seed_rows import Test
from agent_world.design.offline.write_expectations import Designer
from agent_world.envs.spec import EnvSpec


def design_tests(spec: EnvSpec, plans: list[ToolPlan]) -> list[dict[str, Any]]:
    """Every plan's tests, named uniquely, with expectations from the seed rows."""
    designer = Designer(spec)
    tests: list[dict[str, Any]] = []
    for plan in plans:
        # a contract plan's tests come from its contract, the others' from their kind
        made = _contract_tests(designer, plan) if plan.kind == "contract" else designer.tests(plan)
        for t in made:
            t["expect"] = {k: v for k, v in t["expect"].items() if v is not None}
            tests.append(t)
    return tests


def _contract_tests(designer: Designer, plan: ToolPlan) -> list[Test]:
    c = plan.contract
    assert c is not None
    t = ComputeTests(designer, plan)
    if c.computation is not None:
        return getattr(t, f"compute_{c.computation}")()
    if c.verb == "read_one":
        return t.read_one_tests()
    if c.verb in ("list", "search"):
        return t.list_tests()
    if c.verb == "create":
        return t.create_tests()
    return t.write_tests()


__all__ = ["design_tests"]
