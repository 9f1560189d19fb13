"""The technical kinds of value a service's tool arguments take — ETags, connection strings,
ARNs, ports, globs, CSS selectors, environment variables, recurrence rules, weather variables
— told from a column's name, table and description (`service_kind`), and one value of each
(`service_value`).

Over the shipped corpus a quarter of the mined text cells were one random dictionary word, and
nine in ten of those were columns of no known kind: a Gmail recipient 'improve', an ETag
'sport', a MongoDB connection string 'speak', a branch 'really', a working directory 'window'.
A value of the kind the service expects is one its users would pass."""

from __future__ import annotations

import base64
import random
import re

from faker import Faker

from agent_world.mining.offline.naming import singular, unnumbered, with_article
from agent_world.mining.offline.prose import prose, prose_kind
from agent_world.mining.offline.reference_data import (
    BRANCH_PREFIXES,
    CLOUD_REGIONS,
    CODE_TOPICS,
    SLUG_HEADS,
)
from agent_world.mining.offline.setting_values import setting_value
from agent_world.mining.offline.web_pages import site_url

# column names whose kind holds wherever they occur
_EXACT: dict[str, str] = {
    **dict.fromkeys(("cc", "bcc", "recipient", "recipients", "sender", "reply_to", "to_email",
                     "from_email", "attendee", "attendees", "account", "accounts"), "email"),
    **dict.fromkeys(("e_tag", "etag", "if_match", "if_none_match"), "etag"),
    **dict.fromkeys(("connection_string", "connection_uri", "dsn", "database_url",
                     "mongo_uri", "mongodb_uri"), "connection_string"),
    **dict.fromkeys(("cwd", "project_root", "root", "workdir", "work_dir", "root_path"),
                    "dir_path"),
    **dict.fromkeys(("glob", "file_pattern", "name_pattern", "path_pattern"), "glob"),
    **dict.fromkeys(("ns", "nameserver", "name_server", "nameservers"), "nameserver"),
    **dict.fromkeys(("ids", "node_i_ds", "id_list"), "id_list"),
    **dict.fromkeys(("order_direction", "sort_order", "sort_direction", "direction"),
                    "sort_direction"),
    **dict.fromkeys(("permission", "permissions", "access_level"), "permission"),
    "subtitle": "title",
    **dict.fromkeys(("env", "env_vars", "environment_variables", "build_args"), "env_vars"),
    **dict.fromkeys(("emoji", "emojis", "reaction", "icon_emoji"), "emoji"),
    **dict.fromkeys(("format", "formats", "export_format", "output_format", "file_format"),
                    "file_format"),
    **dict.fromkeys(("intent", "goal", "objective", "task"), "request_phrase"),
    **dict.fromkeys(("field", "field_name", "column", "column_name", "attribute",
                     "compare_attribute", "sort_by", "order_by", "sort_field", "group_by"),
                    "field_ref"),
    "collection": "collection", "index": "index", "index_pattern": "index",
    **dict.fromkeys(("output_filename", "output_file", "new_filename", "save_as"), "file_name"),
    **dict.fromkeys(("image_data", "image_base64", "base64", "file_content_base64"), "base64"),
    **dict.fromkeys(("warning", "error_message", "hint", "notice", "instruction", "step"),
                    "sentence"),
    **dict.fromkeys(("dependency", "dependent", "pmid"), "text_id"),
    "calendars_to_check": "email", "column_values": "json_text",
    **dict.fromkeys(("commit", "commit_sha", "sha1"), "sha"),
    "result": "outcome", "response_status": "response_status", "prefix": "prefix",
    "schedule_text": "schedule_text",
    "container": "container", "symbol": "market_symbol",
    **dict.fromkeys(("mention", "mentioned", "mentions"), "person_name"),
    **dict.fromkeys(("database_user", "db_user", "user"), "username"),
    **dict.fromkeys(("workspace", "service", "app", "application", "bucket", "cluster", "site",
                     "stack"), "slug_name"),
    **dict.fromkeys(("cursor", "next_cursor", "continuation", "after", "before"), "cursor"),
    **dict.fromkeys(("metric", "metrics"), "metric"),
    **dict.fromkeys(("dimension", "dimensions", "group_by_dimension"), "dimension"),
    **dict.fromkeys(("pull_request", "pr"), "number_text"),
    **dict.fromkeys(("issue", "issue_key", "ticket"), "issue_key"),
    **dict.fromkeys(("arg", "args"), "cli_arg"),
    **dict.fromkeys(("param", "params"), "query_param"),
    **dict.fromkeys(("recurrence", "rrule"), "rrule"),
    **dict.fromkeys(("tenant", "tenant_name"), "tenant"),
    **dict.fromkeys(("avatar", "icon", "thumbnail"), "url"),
    "dockerfile": "dockerfile", "docker_build_stage": "build_stage", "build_stage": "build_stage",
    "time_format": "time_format", "date_format": "date_format", "importance": "importance",
    "severity": "severity", "operator": "operator", "markdown": "markdown", "html": "html",
    **dict.fromkeys(("html_notes", "html_text", "comment_html", "html_body", "body_html",
                     "html_content", "raw_html"), "html"),
    "element": "ui_element", "selector": "css_selector", "css_selector": "css_selector",
    "model": "model", "topic": "topic",
    "data": "json_text", "metadata": "json_text", "json": "json_text", "payload": "json_text",
}
# the variables a weather service's hourly / daily / current / 15-minutely lists name
_WEATHER = {
    "hourly": ["temperature_2m", "relative_humidity_2m", "precipitation", "wind_speed_10m",
               "cloud_cover", "pm2_5", "wave_height"],
    "daily": ["temperature_2m_max", "temperature_2m_min", "precipitation_sum", "sunrise",
              "sunset", "uv_index_max", "wind_speed_10m_max"],
    "current": ["temperature_2m", "apparent_temperature", "is_day", "precipitation",
                "weather_code", "wind_direction_10m"],
    "minutely_15": ["temperature_2m", "precipitation", "lightning_potential",
                    "shortwave_radiation"],
}
_NOT_GIT = re.compile(r"librar|bank|store|office|clinic|hospital|hotel|school|shop")
_COORDINATES = re.compile(r"经纬度|经度|latitude|longitude|coordinates|\blng\b|\blat\b", re.I)


def exact_kind(name: str) -> str | None:
    """The kind a column of this name holds wherever it occurs ('response_status': an RSVP),
    if its name alone says it."""
    return _EXACT.get(unnumbered(name.lower()))


def service_kind(table: str, name: str, description: str) -> str | None:
    """The technical kind of a text column, or None when it is none of them."""
    n, d = unnumbered(name.lower()), description.lower()
    words = set(n.split("_"))
    if n in ("to", "from") and re.search(r"mail|message|draft|inbox", table):
        return "email"
    if n in _WEATHER and re.search(r"weather|forecast|air_quality|marine|archive|climate",
                                   table):
        return "weather_variable"
    if n in ("origin", "destination", "location", "coordinates") and _COORDINATES.search(d):
        return "coordinates"
    if "branch" in words and not _NOT_GIT.search(f"{table} {d}"):
        return "git_branch"
    if (n in ("device", "device_name", "device_model") or n.endswith("_device")) and \
            re.search(r"mobile|phone|tablet|emulator|simulator|real device|test_device|"
                      r"browser_?stack|appium", f"{table} {d}"):
        return "device_model"  # a test device ('Device name for mobile'), no hostname
    if n == "context":  # a kubeconfig context, a page's continuation, or neither
        return "kube_context" if "kube" in d else "cursor" if re.search(
            r"page|cursor|continu|翻页", d) else None
    if n == "pattern":  # a search's regular expression, a file glob, or neither (a shading's)
        return "regex" if re.search(r"regex|regular expression|grep|search", f"{d} {table}") \
            else "glob" if re.search(r"file|glob|path|wildcard", f"{d} {table}") else None
    if (n == "range" or n.endswith("_range")) and re.search(r"sheet|excel|cell|border", table):
        return "cell_ref"
    if n in ("origin", "destination"):
        return "file_path" if re.search(r"file|path|folder", f"{table} {d}") else "place"
    if n == "image" and re.search(r"container|deploy|docker|kube|service|database",
                                  f"{table} {d}"):
        return "docker_image"
    if n == "function" and re.search(r"javascript|=>|\bjs\b", d):
        return "javascript"
    if n == "query_string" and re.search(r"\blogs?\b|cloudwatch|insights|cls", d):
        return "log_query"
    if n.endswith("_namespace"):
        return "namespace"
    if n == "repository" or n.endswith("_repository"):
        return "repository"
    if n in ("include", "exclude") and re.search(r"file|path|glob|pattern", f"{d} {table}"):
        return "glob"
    if n == "component" and re.search(r"component|\bui\b|react", f"{table} {d}"):
        return "ui_component"
    if n == "group" and re.search(r"chart|series|data", table):
        return "group_label"
    if "base64" in d or "base64" in words:  # Excel's content_base64: not a sentence
        return "base64"
    if n in _EXACT:
        return _EXACT[n]
    if n.endswith(("_owner", "_username")):
        return "username"
    if "arn" in words:
        return "arn"
    if words & {"memory", "mem"} and not words & {"count", "usage", "percent"}:
        return "memory_size"
    if "cpu" in words and not words & {"count", "usage", "percent"}:
        return "cpu_amount"
    if words & {"port"} or n.endswith("_port"):
        return "port"
    if n.endswith("_pattern") or "glob" in d or "wildcard" in d:
        return "glob"
    if "connection string" in d:
        return "connection_string"
    if "css selector" in d:
        return "css_selector"
    if re.search(r"\ba1 (?:notation|range)\b", d):
        return "cell_ref"
    if n.endswith(("_identifier", "_gid")) or re.search(r"\b(?:identifier|gid)\b", d):
        return "text_id"
    return None


# the kinds whose values are drawn from a service's own vocabulary, evenly
_CHOICES: dict[str, list[str]] = {
    # Firecrawl's monitors' schedule_text had been 'Looks good to me, approved.'
    "schedule_text": ["every day at 09:00", "every 15 minutes", "every Monday at 08:00",
                      "every hour", "on the 1st of every month at 06:00", "every 6 hours"],

    "dockerfile": ["Dockerfile", "Dockerfile", "docker/Dockerfile.prod",
                   "services/api/Dockerfile", "Dockerfile.dev"],
    "build_stage": ["builder", "production", "runtime", "build", "release"],
    "glob": ["*.py", "src/**/*.ts", "*.md", "**/*.json", "test_*.py", "*.log", "docs/**",
             "*.{js,jsx}"],
    "emoji": ["👍", "🎉", "❤️", "🚀", "👀", "✅", "😂", "🔥", "🙏", "💡"],
    "file_format": ["json", "csv", "pdf", "png", "svg", "markdown", "html"],
    "time_format": ["HH:mm", "h:mm tt", "HH:mm:ss"],
    "date_format": ["yyyy-MM-dd", "MM/dd/yyyy", "dd.MM.yyyy"],
    "operator": ["equals", "not_equals", "contains", "greater_than", "less_than", "is_empty",
                 "any_of"],
    "ui_element": ["Sign in button", "Search box", "Email address field", "Submit button",
                   "Next page link", "Accept cookies button", "Main menu", "Password field",
                   "Add to cart button", "Close dialog button"],
    "css_selector": ["#login-form button[type=submit]", "input[name=q]", ".nav a.active",
                     "#main h1", "button.primary", "[data-testid=save]", "form input#email",
                     "table.results tr:first-child"],
    "model": ["gpt-4o-mini", "llama-3.1-8b-instruct", "mistral-7b-instruct", "claude-3-haiku",
              "bge-base-en-v1.5", "text-embedding-3-small", "qwen2.5-7b-instruct"],
    "topic": ["graph neural networks", "release planning", "on-call handover",
              "diffusion models", "quarterly budget", "customer feedback",
              "reinforcement learning", "incident review", "product launch"],
    "ui_component": ["Button", "Modal", "Navbar", "Card", "Table", "Tabs", "Tooltip", "Dropdown",
                     "Input", "Avatar"],
    "group_label": ["Group A", "Group B", "Control", "Treatment", "North", "South"],
    "collection": ["users", "orders", "events", "products", "sessions", "invoices"],
    "kube_context": ["kind-dev", "minikube", "prod-eu-west-1", "staging", "docker-desktop"],
    "regex": ["TODO|FIXME", r"def \w+\(", "error", r"import\s+os", "^class ", r"\bfetch\(",
              "console\\.log"],
    "sort_direction": ["asc", "desc"],
    "dimension": ["InstanceId", "country", "deviceCategory", "FunctionName", "region",
                  "pagePath", "LoadBalancer"],
    "cli_arg": ["--verbose", "--format=json", "--limit=10", "--all-namespaces",
                "--project=demo-project", "-n default", "--dry-run", "--region=us-east1"],
    "rrule": ["RRULE:FREQ=WEEKLY;BYDAY=MO", "RRULE:FREQ=DAILY;COUNT=10",
              "RRULE:FREQ=MONTHLY;BYMONTHDAY=1", "RRULE:FREQ=WEEKLY;BYDAY=TU,TH",
              "RRULE:FREQ=YEARLY"],
    "cloud_region": CLOUD_REGIONS["aws"],  # a row factory's are its provider's (cloud_regions)
    "memory_size": ["256m", "512m", "1g", "2g", "4g"],
    "device_model": ["iPhone 15 Pro", "Samsung Galaxy S23", "Google Pixel 8", "iPad Air 5",
                     "iPhone 13", "OnePlus 11", "Samsung Galaxy Tab S9"],
    "cpu_amount": ["0.25", "0.5", "1", "2"],
    "port": ["80", "443", "3000", "5432", "6379", "8000", "8080", "9000", "27017"],
    "prefix": ["app/", "assets/", "logs/2026/", "uploads/", "backups/", "config:"],
    "container": ["web", "api", "worker", "nginx", "sidecar", "db"],
    "market_symbol": ["BTC/USDT", "ETH/USDT", "SOL/USDT", "BTC/USD", "ETH/BTC"],
    "javascript": ["() => document.title", "() => window.location.href",
                   "(el) => el.textContent", "() => document.querySelectorAll('a').length"],
    "log_query": ["fields @timestamp, @message | filter @message like /ERROR/ | limit 20",
                  "stats count(*) by bin(5m)", "fields @message | sort @timestamp desc"],
}
# ... and those drawn with the weights a service's records have (most tasks are normal)
_WEIGHTED: dict[str, tuple[list[str], list[int]]] = {
    "importance": (["normal", "high", "low"], [6, 3, 1]),
    "severity": (["low", "medium", "high", "critical"], [3, 4, 2, 1]),
    "permission": (["read", "write", "admin"], [5, 3, 1]),
    "outcome": (["success", "failed", "skipped", "partial"], [6, 2, 1, 1]),
    "response_status": (["accepted", "needsAction", "tentative", "declined"], [5, 3, 1, 1]),
}
# a service's metrics, by what the table or description says the service is
_METRICS = [
    (r"measure|sonar|quality", ["coverage", "bugs", "code_smells", "ncloc", "vulnerabilities"]),
    (r"alarm|cloudwatch|aws|lambda", ["CPUUtilization", "Latency", "RequestCount", "Errors",
                                      "Duration"]),
    (r"prometheus|promql", ["http_requests_total", "node_cpu_seconds_total", "up",
                            "process_resident_memory_bytes"]),
    (r"", ["activeUsers", "sessions", "screenPageViews", "conversions", "bounceRate"]),
]
_CHANNEL_TEAMS = ["design", "sales", "eng", "support", "ops", "product", "data"]
_CHANNEL_TOPICS = ["team", "reviews", "alerts", "standup", "launch", "help", "random"]
_TEST_ENDS = ["flow", "api", "page", "retry", "timeout", "login", "export"]


def git_branch(r: random.Random, trunk_share: float) -> str:
    """A git branch: the trunk ('main', 'develop') `trunk_share` of the time, else a topic
    branch ('release/inventory-login')."""
    return r.choice(["main", "develop"]) if r.random() < trunk_share else \
        f"{r.choice(BRANCH_PREFIXES)}/{r.choice(SLUG_HEADS)}-{r.choice(CODE_TOPICS)}"


def service_value(kind: str, r: random.Random, f: Faker, table: str, name: str,
                  description: str, fields: list[str], tables: list[str]) -> str:
    """One value of a technical kind; `fields` are the columns of the column's table, `tables`
    the database's tables (a field or collection a row names is one that exists)."""
    d = description.lower()
    if kind in _CHOICES:
        return r.choice(_CHOICES[kind])
    if kind in _WEIGHTED:
        values, weights = _WEIGHTED[kind]
        return r.choices(values, weights=weights)[0]
    if kind == "nameserver":  # Hostinger's ns1..ns4 ("First name server") had been 'provide'
        number = name[-1] if name[-1:].isdigit() else r.choice("12")
        return f"ns{number}.{r.choice(['dns-parking.com', 'digitalocean.com', 'hostinger.com'])}"
    if kind == "setting_value":
        return setting_value(table, r, f, name)
    if kind == "etag":
        return r.choice(['W/"', '"']) + f"{r.getrandbits(64):016x}" + '"'
    if kind == "connection_string":
        user, db = f.user_name(), r.choice(["app", "analytics", "shop", "inventory"])
        host = r.choice(["localhost", "db.internal", f"{f.domain_word()}.example.net"])
        if "mongo" in f"{d} {table}":
            return f"mongodb://{user}:***@{host}:27017/{db}"
        if "mysql" in f"{d} {table}":
            return f"mysql://{user}:***@{host}:3306/{db}"
        return f"postgresql://{user}:***@{host}:5432/{db}"
    if kind == "env_vars":
        level = r.choice(["info", "debug", "warn"])
        pairs = [f"NODE_ENV={r.choice(['production', 'staging'])}",
                 f"PORT={r.choice([3000, 8000, 8080])}", f"LOG_LEVEL={level}",
                 f"DATABASE_URL=postgresql://{f.user_name()}@db:5432/app",
                 f"API_BASE_URL=https://api.{f.domain_name()}",
                 f"TZ={r.choice(['UTC', 'Europe/Berlin'])}"]
        return "\n".join(r.sample(pairs, k=r.randint(1, 3)))
    if kind == "markdown":
        return f"# {prose('title', r, f)}\n\n{prose('description', r, f)}\n\n" \
               f"- {prose('message', r, f)}\n- {prose('message', r, f)}"
    if kind == "url":  # a page of a site, an image's file on it
        return site_url(f, r, name)
    if kind == "record_description":
        return prose("record_description", r, f)
    if kind == "html":  # the text its record holds, as HTML (a project status's 'At risk: ...')
        return f"<p>{prose(prose_kind('text', table), r, f)}</p>"
    if kind == "request_phrase":
        # what a user asks the service for, of the table's kind: "list the datadog resources",
        # "update a quota resource" (never "update the datadogs": a router's table is no noun)
        verb = r.choice(["list", "show", "check", "create", "update", "describe", "delete"])
        kind_words = singular(table).replace("_", " ")
        return f"{verb} the {kind_words} resources" if verb in ("list", "show", "check") else \
            f"{verb} {with_article(kind_words + ' resource')}"
    if kind == "field_ref":
        named = [c for c in fields if c not in ("id", name) and not c.endswith("_id")]
        return r.choice(named or fields or ["name"])
    if kind == "index":
        return r.choice(["products", "orders-v2", f"logs-2026.{r.randint(1, 11):02d}",
                         "customers", "logs-*" if "pattern" in name else "articles"])
    if kind == "id_list":
        return ",".join(f"{r.getrandbits(48):012x}" for _ in range(r.randint(1, 3)))
    if kind == "base64":
        return base64.b64encode(bytes(r.getrandbits(8) for _ in range(18))).decode()
    if kind == "cursor":
        return base64.urlsafe_b64encode(f"offset:{r.randint(1, 500)}".encode()).decode()
    if kind == "metric":
        return r.choice(next(m for rx, m in _METRICS if re.search(rx, f"{table} {d}")))
    if kind == "number_text":
        return str(r.randint(1, 480))
    if kind == "issue_key":
        return f"{r.choice(['PROJ', 'OPS', 'WEB', 'API', 'QA'])}-{r.randint(1, 999)}"
    if kind == "query_param":
        return r.choice([str(r.randint(1, 200)), "active", f.user_name(), "2026-01-01", "true"])
    if kind == "tenant":
        return f"{f.domain_word()}.onmicrosoft.com" if r.random() < 0.5 else f.uuid4()
    if kind == "coordinates":
        return f"{r.uniform(73.5, 134.8):.6f},{r.uniform(18.2, 53.5):.6f}" \
            if re.search(r"经", description) else \
            f"{r.uniform(-60, 70):.6f},{r.uniform(-170, 170):.6f}"
    if kind == "weather_variable":
        return r.choice(_WEATHER[name.lower()])
    if kind == "json_text":
        return r.choice([f'{{"id": {r.randint(1, 999)}, "status": "{r.choice(["ok", "done"])}"}}',
                         f'{{"name": "{f.first_name()}", "enabled": true}}',
                         f'{{"count": {r.randint(0, 50)}, "items": []}}',
                         f'{{"query": "{r.choice(SLUG_HEADS)}", "limit": '
                         f'{r.choice([10, 20, 50])}}}'])
    if kind == "git_branch":
        return git_branch(r, 0.3)
    if kind == "arn":
        service = "logs" if "log" in f"{name} {table}" else r.choice(["lambda", "s3", "sns"])
        return f"arn:aws:{service}:us-east-1:{r.randint(10**11, 10**12 - 1)}:" \
               f"{f.domain_word()}-{r.randint(1, 99)}"
    if kind == "channel_name":
        return f"{r.choice(_CHANNEL_TEAMS)}-{r.choice(_CHANNEL_TOPICS)}"
    if kind == "test_name":
        return f"test_{r.choice(SLUG_HEADS)}_{r.choice(_TEST_ENDS)}"
    if kind == "repository":
        return f"{f.user_name()}/{r.choice(['api-server', 'web-app', 'infra', 'docs', 'cli'])}"
    raise ValueError(f"no value for the kind {kind!r}")


# the kinds `service_kind` names that rows already make (`RowValues.value`)
ROW_KINDS = frozenset({"email", "dir_path", "file_name", "sentence", "person_name", "username",
                       "slug_name", "cell_ref", "text_id", "title", "sha", "place",
                       "file_path", "docker_image", "namespace"})
# the kinds `service_value` makes
SERVICE_KINDS = frozenset(set(_EXACT.values()) | {
    "weather_variable", "coordinates", "git_branch", "arn", "memory_size", "cpu_amount",
    "port", "glob", "connection_string", "css_selector", "base64", "kube_context", "cursor",
    "regex", "ui_component", "group_label", "cloud_region", "channel_name", "test_name",
    "javascript", "log_query", "repository", "device_model", "setting_value",
    "record_description", "url"}) - ROW_KINDS

__all__ = ["ROW_KINDS", "SERVICE_KINDS", "exact_kind", "git_branch", "service_kind",
           "service_value"]
