"""Pools a generated value is drawn from where a column names a kind of thing rather than a
value of a known kind: categories by the word that names them, states by the record, spans,
data types, weekdays, API paths, and the '<area>-<noun>' names of config entries and records
that are no document."""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from agent_world.mining.offline.naming import singular
from agent_world.mining.offline.reference_data import SLUG_HEADS

# what a column named for a kind of thing holds, by the word that names it: a unit is no
# 'premium', a source no 'internal' (the generic tiers are left for type, kind and category)
_CATEGORY_POOLS = {
    "role": ["admin", "member", "viewer", "owner", "editor"],
    "unit": ["count", "percent", "seconds", "milliseconds", "bytes"],
    "channel": ["email", "sms", "push", "web", "slack"],
    "source": ["web", "api", "import", "mobile", "email"],
    "method": ["email", "sms", "api", "manual", "webhook"],
    "action": ["created", "updated", "deleted", "archived", "restored"],
    "genre": ["fiction", "mystery", "science", "history", "biography"],
}
_TIERS = ["standard", "premium", "basic", "internal", "external"]


# the states a record's status column takes (no enum declared), by what the record is: a
# paper is never 'running' nor a contact 'completed' (the run states are a job's)
_STATUS_POOLS = [
    (frozenset({"job", "run", "build", "deployment", "deploy", "pipeline", "execution",
                "migration", "backup", "scan", "crawl", "training", "import", "export", "sync",
                "operation", "batch", "restore", "transfer", "upload", "render", "evaluation",
                "experiment", "workflow"}),
     (["succeeded", "running", "queued", "failed", "cancelled"], [40, 25, 15, 10, 10])),
    (frozenset({"issue", "ticket", "bug", "task", "todo", "incident", "story", "epic",
                "subtask", "card", "alert", "case", "problem"}),
     (["open", "in_progress", "resolved", "closed"], [35, 25, 20, 20])),
    (frozenset({"post", "article", "page", "document", "doc", "paper", "note", "draft",
                "template", "campaign", "form", "survey", "release", "listing", "comment",
                "video", "report", "proposal", "snippet", "blog", "newsletter"}),
     (["published", "draft", "archived"], [55, 30, 15])),
    (frozenset({"order", "booking", "reservation", "appointment"}),
     (["pending", "confirmed", "completed", "cancelled"], [20, 30, 40, 10])),
    (frozenset({"payment", "invoice", "refund", "charge", "transaction", "billing", "payout"}),
     (["paid", "pending", "failed", "refunded"], [55, 25, 10, 10])),
    (frozenset({"fulfillment", "shipment", "delivery", "shipping"}),
     (["fulfilled", "unfulfilled", "partially_fulfilled"], [50, 35, 15])),
]
_STATUSES = (["active", "inactive", "pending", "archived"], [60, 15, 15, 10])


def status_pool(table: str, column: str = "status") -> tuple[list[str], list[int]]:
    """(states, weights) of a status column of `table`: by what the column names first (an
    order's `payment_status` is a payment's), else by the kind of record the table's last
    word names ('backup_jobs' are runs, 'alert_rules' records, whatever they are about)."""
    for word in (column.removesuffix("status").rstrip("_").split("_")[-1],
                 singular(table).split("_")[-1]):
        found = next((pool for kinds, pool in _STATUS_POOLS if word in kinds), None)
        if found is not None:
            return found
    return _STATUSES


# tables only a code host keeps: its branches are git's, whatever table holds them
CODE_HOST_TABLES = frozenset({"repository", "repo", "commit", "pull_request",
                              "merge_request", "pipeline"})
# the types a value, a field or a column holds ('value_type': 'number', never 'premium')
_DATA_TYPES = ["string", "number", "boolean", "integer", "date"]
_TYPED = {"value", "data", "field", "column", "attribute", "variable", "param", "parameter",
          "property", "return"}
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MATH_EXPRESSIONS = ["(120 - 45) / 3", "17 * 23", "2 ** 10", "sqrt(144) + 7", "3.5 * (4 + 6)",
                    "250 * 0.15", "(1200 + 350) / 12", "98 % 7"]
JS_EXPRESSIONS = ["document.title", "navigator.userAgent", "Date.now()", "window.innerWidth",
                  "store.getState().auth.user", "Platform.OS", "global.__DEV__"]
# the file types a column's name says its files are ('yaml_path', 'image_file', 'app_path')
NAMED_FILE_TYPES = {
    "yaml": ["yaml", "yml"], "yml": ["yml"], "json": ["json"], "csv": ["csv"], "pdf": ["pdf"],
    "image": ["png", "jpg"], "photo": ["jpg"], "screenshot": ["png"], "video": ["mp4", "mov"],
    "audio": ["mp3", "wav"], "app": ["app", "apk", "ipa"], "apk": ["apk"], "markdown": ["md"],
    "html": ["html"], "xml": ["xml"], "log": ["log"], "zip": ["zip"], "docx": ["docx"],
    "xlsx": ["xlsx"], "svg": ["svg"], "manifest": ["yaml", "json"],
    # Hostinger's archivePath: "Supported formats: zip, tar, tar.gz, tgz" (it drew .odp, .tiff)
    "archive": ["zip", "zip", "tar.gz", "tgz"],
    # Hostinger's sql_path ("Path to the SQL dump file") held '.pdf' files
    "sql": ["sql", "sql.gz"], "dump": ["sql", "sql.gz"]}
# tables whose records are such files: a path in Word's `document_xmls` is still the .docx
MEDIA_FILE_WORDS = frozenset({"image", "photo", "screenshot", "video", "audio", "yaml", "yml",
                              "app", "apk", "zip", "svg", "manifest"})
API_PATHS = ["/users", "/orders?status=eq.open", "/products?select=id,name", "/api/v1/items",
             "/rest/v1/customers", "/invoices?limit=10", "/api/v2/projects/42/tasks"]
# small programs as people paste them into a runner: Luau for Roblox Studio, Python elsewhere
LUA_SNIPPETS = ['print("Hello from Studio")', "workspace.Baseplate.Anchored = true",
                'local part = Instance.new("Part"); part.Parent = workspace',
                "game.Lighting.ClockTime = 14", "return #workspace:GetChildren()",
                'print(game:GetService("Players").MaxPlayers)']
CODE_SNIPPETS = ['print("hello, world")', "print(sum(range(1, 101)))",
                 "import math; print(math.sqrt(2))", "print(sorted([3, 1, 2]))",
                 "print(len('tool-use'))", "for i in range(3): print(i * i)"]
# what a link says on the page: a few words, no sentence
ANCHOR_TEXTS = ["Read more", "Pricing", "Contact us", "Documentation", "About", "Sign in",
                "Download", "Blog", "Careers", "Privacy policy", "Learn more", "Get started",
                "Support", "Terms of service", "Release notes", "API reference", "Status",
                "Community", "Changelog", "Features", "Customers", "Press", "Events",
                "Security"]
# the path prefixes a proxy routes to a service by
ROUTE_PATHS = ["/", "/api", "/api/v1", "/app", "/admin", "/auth", "/health", "/static", "/v2",
               "/webhooks"]


def category_pool(name: str) -> list[str]:
    words = name.lower().split("_")
    if words[-1] in ("type", "kind") and _TYPED & set(words[:-1]):
        return _DATA_TYPES
    return next((_CATEGORY_POOLS[w] for w in reversed(words) if w in _CATEGORY_POOLS), _TIERS)


# column names that name no thing: a value for them is no '<area>-<noun>'
_NO_THING = {"only", "where", "default", "listen", "match", "exclude", "include", "if", "when",
             "since", "until", "before", "after", "all", "any", "none", "raw", "new", "old",
             "current", "next", "previous", "other", "custom", "extra", "own", "same", "show",
             "by", "as", "to", "from", "of", "for", "with", "per", "not"}


# how often or over how long, as a service's settings say it
_SPANS = {w: ["hourly", "daily", "weekly", "monthly"] for w in ("frequency", "schedule",
                                                                "cadence")} | {
    w: ["1m", "5m", "15m", "1h", "24h"] for w in ("period", "interval", "window", "retention")}
# amounts and places, no thing of the service ('billing-weight' reads as nothing)
_MEASURES = {"weight", "index", "size", "level", "count", "limit", "threshold", "ratio", "rate",
             "score", "priority", "order", "offset", "depth", "width", "height", "length",
             "timeout", "delay", "position", "amount", "total", "number"}


def _name_words(column: str) -> list[str]:
    return [w for w in singular(column).lower().split("_") if w]


def named_value(column: str, description: str | None, r: random.Random) -> str | None:
    """A text column no rule knows, named by a noun ('forwarding_rule', 'dataset'): a value
    named for what it is in an area of the service ('billing-forwarding-rule'), as a config
    entry is; a lone dictionary word ('dolor') read as noise in every task that quotes it.
    None where the name is no noun ('only', 'show_as'). A column its source says holds JSON
    (Monday's settings, a JSON schema) holds an empty object or list, as the source writes it."""
    if re.search(r"\bjson\b", description or "", re.I):
        return "[]" if re.search(r"\barray\b", description or "", re.I) else "{}"
    words = _name_words(column)
    if words and words[-1] in _SPANS:
        return r.choice(_SPANS[words[-1]])
    if (not words or words[-1] in _MEASURES or not all(w.isalpha() for w in words) or len(words[-1]) < 3
            or set(words) & _NO_THING or words[-1].endswith(("ed", "ly"))):
        return None
    noun = words[-2:]  # an area apart from the thing: 'sync-sync-option' says 'sync' twice
    return f"{r.choice([h for h in SLUG_HEADS if singular(h) not in noun])}-{'-'.join(noun)}"


def is_named_value(column: str, value: object) -> bool:
    """Whether `value` is one `named_value` makes for `column` ('sync-calculation' of
    Excel's calculation): a stand-in that says nothing of the record, which no request names
    a record by ("the workbook whose calculation is 'sync-calculation'") nor asks for."""
    noun = _name_words(column)[-2:]
    head, _, rest = str(value).partition("-")
    return bool(noun) and head in SLUG_HEADS and rest == "-".join(noun)


T = TypeVar("T")


@functools.cache
def _shuffled(pool: tuple[Any, ...], key: str) -> tuple[Any, ...]:
    return tuple(random.Random(key).sample(pool, len(pool)))


def in_turn(pool: Sequence[T], row_id: Any, r: random.Random, order: str | None = None) -> T:
    """Item `row_id` (from 1, wrapping) of `pool`, shuffled first by `order` (a table's own
    order, the same in every run): a table's records take the pool's values in turn, distinct
    until it runs out (two 'Webhooks' pages made 'the doc named Webhooks' ambiguous); a record
    with no integer id a random one."""
    seq = _shuffled(tuple(pool), order) if order is not None else pool
    if isinstance(row_id, int) and not isinstance(row_id, bool) and row_id > 0:
        return seq[(row_id - 1) % len(seq)]
    return r.choice(seq)


# the names records of these kinds have where they are named by their kind's own conventions
# (HubSpot's properties had been 'admin-property', Selenium's cookies 'orders-cookie')
_KIND_NAMES = {
    "property": ["name", "status", "type", "size", "color", "email", "owner", "priority",
                 "enabled", "created_at"],
    "column": ["id", "email", "created_at", "status", "amount", "customer_id", "updated_at",
               "name", "country", "total"],
    "field": ["title", "status", "priority", "due_date", "assignee", "description", "labels",
              "estimate", "sprint", "component"],
    "attribute": ["class", "href", "id", "aria-label", "data-testid", "src", "type",
                  "placeholder", "role", "value"],
    "parameter": ["limit", "offset", "sort", "query", "page", "fields", "include", "since"],
    "variable": ["DATABASE_URL", "API_KEY", "NODE_ENV", "PORT", "LOG_LEVEL", "REDIS_URL",
                 "SENTRY_DSN", "TZ"],
    "role": ["Owner", "Admin", "Editor", "Viewer", "Contributor", "Billing admin", "Reader",
             "Guest"],
    "cookie": ["session_id", "_ga", "csrftoken", "cart_id", "locale", "theme", "_gid",
               "consent"],
    "header": ["Content-Type", "Authorization", "Accept", "User-Agent", "Cache-Control",
               "X-Request-Id", "Accept-Language", "If-None-Match"],
}
_KIND_NAMES["param"] = _KIND_NAMES["parameter"]


def record_name(table: str, r: random.Random, row_id: Any = None) -> str:
    """A name for a record that is no document: its kind's own names where it has them
    ('Content-Type' for a header, 'csrftoken' for a cookie, in turn by `row_id`), else an
    area of the service and what it is ('checkout-screenshot', 'billing-subnet')."""
    noun = next((w for w in reversed(singular(table).split("_")) if w.isalpha() and len(w) > 2),
                "item")
    if noun in _KIND_NAMES:
        return in_turn(_KIND_NAMES[noun], row_id, r, order=table)
    return f"{r.choice(SLUG_HEADS)}-{noun}"
