"""The `airline` example environment: the parts `build_env` reads off this module.

All data comes from a fixed-seed random.Random and hand-written lists, never from the current
time, so the built EnvSpec is identical on every run and every machine.

A handful of "anchor" customers and reservations are written by hand (Maria Gonzalez's
reservation MGX7Q2, the basic-fare BSC4LK, ...): the tool tests, the README tour and the
benchmarks refer to them. Everything else is generated around them.
"""

from __future__ import annotations

# build_env lists tools.py's @tool functions, then those of these modules, in this order
from . import tools_bookings, tools_passengers
from .data import build_data
from .reference import CLOCK_START
from .schema import TABLES
from .tests import build_tests

THEME = {
    "name": "Northwind Airlines reservations",
    "description": (
        "Customer-service back office of Northwind Airlines (IATA code NW), a US carrier with "
        "hubs in Chicago O'Hare, San Francisco and New York JFK. Agents search flights, book, "
        "change and cancel reservations under fare-class rules (basic / economy / business), "
        "add checked bags, assign seats, check passengers in and redeem loyalty miles for "
        "upgrades."),
    "taxonomy": {"l1": "Travel & Transportation", "l2": "Flight Booking", "l3": "airline"},
    "source_kind": "manual",
    # where the example was first written; kept so its fingerprint and catalog theme stay put
    "source_ref": "scripts/examples/airline",
}

# what build_env reads (the tool modules: for their @tool functions)
__all__ = ["CLOCK_START", "TABLES", "THEME", "build_data", "build_tests",
           "tools_bookings", "tools_passengers"]
