"""The `ecommerce` example environment: the parts `build_env` reads off this module.

All data comes from a fixed-seed random.Random and hand-written lists, never from the current
time, so the built EnvSpec is identical on every run and every machine. Seeded orders are priced
with the same `_order_totals` / `_return_refund` helpers the tools use.

Anchor records written by hand (Sarah Mitchell's pending order ORD-3F9A2C71, her delivered
order ORD-8D41E0B5, ...) are what the tool tests, the README tour and the benchmarks use.
"""

from __future__ import annotations

# build_env lists tools.py's @tool functions, then those of this module
from . import tools_orders
from .data import build_data
from .reference import CLOCK_START
from .schema import TABLES
from .tests import build_tests

THEME = {
    "name": "Brightcart online store",
    "description": (
        "Customer-support console of Brightcart, a US online retailer of electronics, home "
        "and kitchen goods, books, outdoor gear and skincare. Agents search the catalog, "
        "check stock, place and cancel orders, apply coupons, change shipping addresses and "
        "handle returns under the store's shipping, tax, coupon and 30-day return policies."),
    "taxonomy": {"l1": "Shopping & E-commerce", "l2": "Online Retail", "l3": "ecommerce"},
    "source_kind": "manual",
    # where the example was first written; kept so its fingerprint and catalog theme stay put
    "source_ref": "scripts/examples/ecommerce",
}

# what build_env reads (the tool module: for its @tool functions)
__all__ = ["CLOCK_START", "TABLES", "THEME", "build_data", "build_tests", "tools_orders"]
