"""Curated real-world values: IANA time zones with their standard offsets, ISO 4217 currencies,
ISO 3166 countries and ISO 639-1 languages, exposed as `CURATED` (the columns, rows and
description of each reference entity) and `CURATED_TABLES` (table name -> entity), plus the
small value pools the row generator draws from (branch prefixes, MIME types, medical
specialties, book subjects, tag words, colours).
"""

from __future__ import annotations

from typing import Any

from agent_world.mining.offline.naming import plural
from agent_world.mining.semantics.zones import zone_offsets

TIME_ZONES = [
    ("America/New_York", "-05:00", True), ("America/Chicago", "-06:00", True),
    ("America/Denver", "-07:00", True), ("America/Phoenix", "-07:00", False),
    ("America/Los_Angeles", "-08:00", True), ("America/Anchorage", "-09:00", True),
    ("Pacific/Honolulu", "-10:00", False), ("America/Toronto", "-05:00", True),
    ("America/Mexico_City", "-06:00", False), ("America/Bogota", "-05:00", False),
    ("America/Sao_Paulo", "-03:00", False), ("America/Argentina/Buenos_Aires", "-03:00", False),
    ("Europe/London", "+00:00", True), ("Europe/Dublin", "+00:00", True),
    ("Europe/Lisbon", "+00:00", True), ("Europe/Paris", "+01:00", True),
    ("Europe/Berlin", "+01:00", True), ("Europe/Madrid", "+01:00", True),
    ("Europe/Rome", "+01:00", True), ("Europe/Warsaw", "+01:00", True),
    ("Europe/Athens", "+02:00", True), ("Europe/Istanbul", "+03:00", False),
    ("Europe/Moscow", "+03:00", False), ("Africa/Cairo", "+02:00", True),
    ("Africa/Lagos", "+01:00", False), ("Africa/Johannesburg", "+02:00", False),
    ("Africa/Nairobi", "+03:00", False), ("Asia/Dubai", "+04:00", False),
    ("Asia/Karachi", "+05:00", False), ("Asia/Kolkata", "+05:30", False),
    ("Asia/Kathmandu", "+05:45", False), ("Asia/Dhaka", "+06:00", False),
    ("Asia/Bangkok", "+07:00", False), ("Asia/Shanghai", "+08:00", False),
    ("Asia/Singapore", "+08:00", False), ("Asia/Tokyo", "+09:00", False),
    ("Asia/Seoul", "+09:00", False), ("Australia/Adelaide", "+09:30", True),
    ("Australia/Sydney", "+10:00", True), ("Pacific/Auckland", "+12:00", True),
    ("Pacific/Chatham", "+12:45", True), ("UTC", "+00:00", False),
]


# offsets and DST observance come from zoneinfo where the machine has tzdata
TIME_ZONES = [(n, *(zone_offsets(n) if zone_offsets(n)[0] else (o, d)))
              for n, o, d in TIME_ZONES]
CURRENCIES = [
    ("USD", "US Dollar", "$", 2), ("EUR", "Euro", "€", 2),
    ("GBP", "Pound Sterling", "£", 2), ("JPY", "Yen", "¥", 0),
    ("CHF", "Swiss Franc", "CHF", 2), ("CAD", "Canadian Dollar", "$", 2),
    ("AUD", "Australian Dollar", "$", 2), ("CNY", "Yuan Renminbi", "¥", 2),
    ("INR", "Indian Rupee", "₹", 2), ("BRL", "Brazilian Real", "R$", 2),
    ("MXN", "Mexican Peso", "$", 2), ("KRW", "Won", "₩", 0),
    ("SEK", "Swedish Krona", "kr", 2), ("NOK", "Norwegian Krone", "kr", 2),
    ("ZAR", "Rand", "R", 2), ("SGD", "Singapore Dollar", "$", 2),
    ("HKD", "Hong Kong Dollar", "$", 2), ("NZD", "New Zealand Dollar", "$", 2),
    ("KWD", "Kuwaiti Dinar", "KD", 3), ("BHD", "Bahraini Dinar", "BD", 3),
]
COUNTRIES = [
    ("US", "United States", "Americas"), ("CA", "Canada", "Americas"),
    ("MX", "Mexico", "Americas"), ("BR", "Brazil", "Americas"),
    ("AR", "Argentina", "Americas"), ("GB", "United Kingdom", "Europe"),
    ("IE", "Ireland", "Europe"), ("FR", "France", "Europe"),
    ("DE", "Germany", "Europe"), ("ES", "Spain", "Europe"), ("IT", "Italy", "Europe"),
    ("NL", "Netherlands", "Europe"), ("PL", "Poland", "Europe"),
    ("SE", "Sweden", "Europe"), ("TR", "Türkiye", "Asia"), ("EG", "Egypt", "Africa"),
    ("NG", "Nigeria", "Africa"), ("KE", "Kenya", "Africa"),
    ("ZA", "South Africa", "Africa"), ("AE", "United Arab Emirates", "Asia"),
    ("IN", "India", "Asia"), ("CN", "China", "Asia"), ("JP", "Japan", "Asia"),
    ("KR", "South Korea", "Asia"), ("SG", "Singapore", "Asia"),
    ("AU", "Australia", "Oceania"), ("NZ", "New Zealand", "Oceania"),
]
LANGUAGES = [
    ("en", "English"), ("es", "Spanish"), ("fr", "French"), ("de", "German"),
    ("it", "Italian"), ("pt", "Portuguese"), ("nl", "Dutch"), ("pl", "Polish"),
    ("sv", "Swedish"), ("tr", "Turkish"), ("ru", "Russian"), ("ar", "Arabic"),
    ("hi", "Hindi"), ("bn", "Bengali"), ("zh", "Chinese"), ("ja", "Japanese"),
    ("ko", "Korean"), ("sw", "Swahili"), ("el", "Greek"), ("he", "Hebrew"),
]

CURATED: dict[str, dict[str, Any]] = {
    "timezone": {
        "columns": [("name", "text", True), ("utc_offset", "text", False),
                    ("observes_dst", "boolean", False), ("region", "text", False)],
        "rows": [{"name": n, "utc_offset": o, "observes_dst": d,
                  "region": n.split("/")[0] if "/" in n else "Etc"} for n, o, d in TIME_ZONES],
        "description": "IANA time zones with their standard UTC offsets",
    },
    "currency": {
        "columns": [("code", "text", True), ("name", "text", False), ("symbol", "text", False),
                    ("decimals", "integer", False)],
        "rows": [{"code": c, "name": n, "symbol": s, "decimals": d}
                 for c, n, s, d in CURRENCIES],
        "description": "ISO 4217 currencies",
    },
    "country": {
        "columns": [("code", "text", True), ("name", "text", False), ("region", "text", False)],
        "rows": [{"code": c, "name": n, "region": r} for c, n, r in COUNTRIES],
        "description": "ISO 3166 countries",
    },
    "language": {
        "columns": [("code", "text", True), ("name", "text", False)],
        "rows": [{"code": c, "name": n} for c, n in LANGUAGES],
        "description": "ISO 639-1 languages",
    },
}
CURATED_TABLES = {plural(k): k for k in CURATED}


# value pools the row generator draws from
BRANCH_PREFIXES = ("feature", "fix", "chore", "release", "hotfix", "docs")
MIME_TYPES = [
    ("pdf", "application/pdf"), ("png", "image/png"), ("jpg", "image/jpeg"),
    ("csv", "text/csv"), ("txt", "text/plain"),
    ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
]
SPECIALTIES = [
    "Cardiology", "Dermatology", "Pediatrics", "Neurology", "Oncology",
    "Orthopedics", "Psychiatry", "Radiology", "General Practice", "Ophthalmology",
]
TAG_WORDS = [
    "urgent", "backlog", "customer", "internal", "bug", "feature", "follow-up",
    "billing", "vip", "q1", "q2", "blocked", "docs", "security", "design", "research",
    "legal", "onboarding", "migration", "priority", "later", "archive", "team",
    "personal", "review",
]
# the BISAC subject headings' main categories (Book Industry Study Group), as catalogues use
BOOK_SUBJECTS = [
    "Biography & Autobiography", "Business & Economics", "Computers", "Cooking", "Fiction",
    "Juvenile Fiction", "Juvenile Nonfiction", "History", "Health & Fitness", "Mathematics",
    "Medical", "Nature", "Philosophy", "Poetry", "Political Science", "Psychology",
    "Religion", "Science", "Self-Help", "Social Science", "Sports & Recreation", "Travel",
    "Art", "Music", "Drama", "Language Arts & Disciplines", "Law", "Education",
    "True Crime", "Comics & Graphic Novels",
]
# what office documents, clusters and shells hold, as their users name them
SHEET_NAMES = ["Sheet1", "Sheet2", "Summary", "Data", "Q1", "Q2", "Q3", "Q4", "Budget",
               "Sales", "Inventory", "Expenses", "Forecast", "Raw data", "Pivot", "2025"]
FONT_NAMES = ["Calibri", "Arial", "Times New Roman", "Helvetica", "Georgia", "Verdana",
              "Cambria", "Garamond", "Courier New", "Segoe UI"]
FONT_SIZES = [8, 9, 10, 11, 12, 14, 16, 18, 20, 24, 28, 36, 48]
STYLE_NAMES = ["Normal", "Heading 1", "Heading 2", "Heading 3", "Title", "Subtitle", "Quote",
               "List Bullet", "List Number", "Caption", "Intense Quote", "No Spacing"]
FILE_STEMS = ["budget", "report", "invoice", "inventory", "roster", "sales", "forecast",
              "minutes", "proposal", "notes", "contract", "timesheet", "summary", "plan",
              "expenses", "schedule", "pricing", "survey", "handbook", "release-notes"]
FOLDERS = ["Documents", "Reports", "Finance", "Projects", "Shared", "Archive", "Downloads",
           "Marketing", "HR", "Engineering"]
NAMESPACES = ["default", "kube-system", "production", "staging", "monitoring", "ingress-nginx",
              "dev", "payments", "data", "observability"]
COMMANDS = ["ls -la", "git status", "npm test", "python -m pytest -q", "df -h", "uptime",
            "docker ps", "make build", "kubectl get pods", "tail -n 50 app.log",
            "systemctl status nginx", "du -sh *", "pip list", "cat README.md"]
PLATFORMS = ["ios", "android", "windows", "macos", "linux", "web"]
DEPLOY_ENVIRONMENTS = ["production", "staging", "development", "test", "preview"]
DOCKER_IMAGES = ["nginx:1.27", "postgres:16", "redis:7-alpine", "node:20-slim",
                 "python:3.12-slim", "grafana/grafana:11.0.0", "mysql:8.4", "busybox:1.36"]
DATABASE_NAMES = ["analytics", "app_production", "sales", "inventory", "users", "warehouse",
                  "billing", "reporting", "crm", "events"]
# the parts of the names engineers give services, jobs, indexes and clusters ("billing-worker")
SLUG_HEADS = ["api", "web", "auth", "billing", "orders", "search", "payments", "data", "ml",
              "frontend", "backend", "metrics", "logs", "cache", "gateway", "users",
              "notifications", "inventory", "reports", "checkout", "analytics", "media", "docs",
              "admin", "mobile", "events", "email", "catalog", "sync", "import"]
SLUG_TAILS = ["service", "worker", "gateway", "db", "cache", "prod", "staging", "v2", "job",
              "api", "queue", "pipeline", "app", "cron", "store", "bot", "index", "monitor"]
# what a code base's modules and a branch's work are about ("src/billing_utils.py",
# "fix/billing-retry")
CODE_TOPICS = ["retry", "timeout", "pagination", "login", "cache", "export", "search", "parser",
               "logging", "config", "webhooks", "dark-mode", "rate-limit", "upload"]
MODULE_KINDS = ["utils", "api", "models", "config", "cli", "views", "handlers", "client",
                "service", "schema"]
# the records of a technical service that engineers name by a slug, not a title
TECH_NOUNS = frozenset({
    "repository", "repo", "project", "package", "service", "bucket", "app", "application",
    "database", "node", "key", "index", "policy", "snapshot", "image", "instance", "model",
    "deployment", "schema", "cluster", "function", "environment", "collection", "metric",
    "context", "queue", "job", "pipeline", "workflow", "webhook", "secret", "volume",
    "namespace", "stream", "alarm", "stack", "worker", "server", "release", "pod", "container",
    "connection", "profile", "trigger", "monitor", "dataset", "runner", "site", "rollout",
    "chart", "kubectl", "helm", "docker", "k8s"})
COLORS = ["red", "orange", "yellow", "green", "teal", "blue", "indigo", "purple", "pink",
          "gray"]

# each provider's regions as its API spells them (the most used first)
CLOUD_REGIONS: dict[str, list[str]] = {
    "aws": ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-1",
            "us-east-2", "ap-northeast-1"],
    "gcp": ["us-central1", "us-east1", "europe-west1", "europe-west4", "asia-east1",
            "us-west1", "asia-northeast1"],
    "azure": ["eastus", "westeurope", "westus2", "northeurope", "southeastasia", "uksouth"],
    "digitalocean": ["nyc3", "sfo3", "ams3", "fra1", "lon1", "sgp1", "nyc1"],
    "tencent": ["ap-guangzhou", "ap-shanghai", "ap-beijing", "ap-singapore", "ap-hongkong"],
    "alibaba": ["cn-hangzhou", "cn-shanghai", "cn-beijing", "cn-shenzhen", "ap-southeast-1"],
}
