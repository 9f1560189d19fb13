"""What a record's bare `value` (or a `..._value`) holds, by what the record is: a header's value
is a header value, an environment variable's a setting, a cookie's a token, a cell's a cell's,
a contact phone number's a phone number, a filter's compare value a cell's, a property's a
property's. About 45 such columns (Cloudflare's KV pairs and env vars,
Postman's headers, CloudWatch's dimensions, Selenium's cookies, Google Contacts' phone
numbers) had held chat messages ('Thanks Jessica, I'll follow up Tuesday.')."""

from __future__ import annotations

import random
from collections.abc import Callable

from faker import Faker

from agent_world.mining.offline.naming import singular

_HEADERS = ["application/json", "no-cache", "gzip, deflate, br", "Bearer eyJhbGciOiJIUzI1NiJ9",
            "text/html; charset=utf-8", "max-age=3600", "keep-alive", "en-US,en;q=0.9"]
_SETTINGS = ["true", "false", "3600", "info", "production", "eu-west-1", "8080", "utf-8", "30s",
             "v2", "enabled", "/var/log/app.log", "postgres://db:5432/app", "debug", "100",
             "UTC", "staging", "0.25"]
_CELLS = ["42", "Approved", "2026-01-15", "Q3", "1200.50", "Pending", "Yes", "North America",
          "17%", "No"]
_OPTIONS = ["small", "medium", "large", "us", "de", "monthly", "yearly", "option-2", "express"]
_ATTRIBUTES = ["submit", "btn btn-primary", "email", "true", "/checkout", "nav-main", "_blank",
               "Search", "off"]
# a property's value as a UI or a game engine holds it
_PROPERTIES = ["true", "false", "0.5", "16px", "#1f2937", "hidden", "Vector3.new(0, 5, 0)",
               "Enum.Material.Plastic", "center"]
_DIMENSIONS = ["i-0a1b2c3d4e5f67890", "prod-api", "eu-west-1a", "orders-worker", "db-primary",
               "checkout-lambda", "web-alb"]
# the table's words that say what its values are, most telling first, and a value of each
_BY_WORD: tuple[tuple[frozenset[str], Callable[[random.Random, Faker], str]], ...] = (
    (frozenset({"email"}), lambda r, f: f.email()),
    (frozenset({"phone"}), lambda r, f: f.phone_number()),
    (frozenset({"url", "link"}), lambda r, f: f.url()),
    (frozenset({"header", "headers"}), lambda r, f: r.choice(_HEADERS)),
    (frozenset({"cookie"}), lambda r, f: f"{r.getrandbits(96):024x}"),
    (frozenset({"dimension"}), lambda r, f: r.choice(_DIMENSIONS)),
    (frozenset({"cell", "spreadsheet", "validation", "range", "sheet", "compare", "filter",
                "custom", "answer"}), lambda r, f: r.choice(_CELLS)),
    (frozenset({"property"}), lambda r, f: r.choice(_PROPERTIES)),
    (frozenset({"option", "select"}), lambda r, f: r.choice(_OPTIONS)),
    (frozenset({"attribute", "element", "frame"}), lambda r, f: r.choice(_ATTRIBUTES)))


def setting_value(table: str, r: random.Random, f: Faker, column: str = "value") -> str:
    """One `value` (or `compare_value`, `property_value`, ...) of a record of `table`: a short
    value of the record's kind, or of what the column says it compares or sets; never
    prose."""
    words = set(singular(table).split("_")) | set(column.split("_")) - {"value"}
    make = next((make for said, make in _BY_WORD if words & said), None)
    # else an env var's, a KV pair's, a property's: a setting
    return make(r, f) if make else r.choice(_SETTINGS)


__all__ = ["setting_value"]
