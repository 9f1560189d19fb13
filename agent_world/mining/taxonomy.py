"""Theme taxonomy: L1 category / L2 sub-category / L3 server, tree building and deduplication.

`classify` places a source document or a Theme on a three-level path. Offline it scores keyword
rules: each L2 label of the ~20 L1 categories (modelled on the Agent-World paper's environment
taxonomy) has a keyword list, matched on whole words with plurals folded; the evidence is
weighted by where it occurs (the server's name most, then its title, its tool names and, least,
its descriptions, the last two saturating so that incidental words stay small), the L1 with the
most evidence wins with its best L2; with too little evidence the path is
"Uncategorized / General". L3 is always the server/source name. With a chat model
configured for the "miner" role, the model picks L1/L2 from the same label list (structured JSON),
and an answer outside the list falls back to the keyword rules.

`build_taxonomy` groups themes into a tree (L1 -> L2 -> [L3 theme names]);
`merge_near_duplicates` merges themes whose normalised names are equal or whose tool-name and
name/description token sets are near-identical (Jaccard similarity), e.g. two time servers with
the same tools, and reports the merged pairs.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from agent_world.envs.spec import TaxonomyPath, Theme
from agent_world.mining.sources.base import SourceDocument
from agent_world.models import chat_model

log = logging.getLogger(__name__)

UNCATEGORIZED = ("Uncategorized", "General")

# L1 -> L2 -> keywords (lower-case words or multi-word phrases; plurals are folded, so the
# singular is enough). Product names count as evidence: a server named after a product is
# about that product's domain.
CATEGORIES: dict[str, dict[str, list[str]]] = {
    "Productivity & Time": {
        "Time & Timezones": ["time", "timezone", "clock", "utc", "iana", "dst",
                             "convert_time", "current_time"],
        "Calendar & Scheduling": ["calendar", "event", "schedule", "meeting", "availability",
                                  "attendee", "invite", "freebusy"],
        "Task Management": ["todo", "task", "kanban", "checklist", "sprint", "board", "project",
                            "asana", "trello", "todoist", "omnifocus", "monday", "card"],
        "Notes & Reminders": ["note", "reminder", "notebook", "memo", "obsidian"],
    },
    "Developer Tools & Version Control": {
        "Version Control": ["git", "github", "gitlab", "bitbucket", "commit", "branch",
                            "repository", "repo", "merge", "diff", "checkout", "pull request",
                            "merge request", "rebase", "cherry pick"],
        "CI/CD & Builds": ["pipeline", "build", "ci", "circleci", "workflow", "release",
                           "artifact", "monorepo"],
        "Issue Tracking": ["issue", "bug", "ticket", "jira", "backlog", "story"],
        "Code Analysis": ["lint", "linter", "eslint", "code review", "static analysis", "ast",
                          "refactor", "compiler", "code", "codebase", "lsp", "language server",
                          "symbol", "diagnostic", "definition", "code quality", "sonarqube",
                          "codacy", "dead code", "knip"],
        "Coding Assistants": ["codex", "claude code", "code assist", "coding", "copilot",
                              "code generation", "edit file", "run code", "code runner"],
        "APIs, SDKs & Docs": ["api", "openapi", "oas", "swagger", "sdk", "graphql", "endpoint",
                              "postman", "apidog", "apifox", "documentation", "docs", "framework",
                              "npm", "package", "dependency", "library id", "mock"],
        "UI Frameworks & Components": ["component", "ui", "react", "vue", "vuetify", "angular",
                                       "kendo", "svelte", "tailwind", "tailwindcss", "css",
                                       "shadcn", "mui", "heroui", "frontend", "directive",
                                       "design system", "nx"],
        "Testing & Debugging": ["test", "testing", "debug", "debugger", "simulator",
                                "emulator", "flaky", "qa", "e2e", "feature flag", "launchdarkly",
                                "mobile app", "ios", "android", "expo", "tauri", "react native",
                                "accessibility", "browserstack", "spec", "lighthouse",
                                "web vital"],
    },
    "System & Cloud Infrastructure": {
        "Cloud Platforms": ["aws", "gcp", "gcloud", "google cloud", "azure", "cloud", "bucket",
                            "s3", "lambda", "instance", "region", "cloudformation", "iam",
                            "digitalocean", "droplet", "terraform", "infrastructure", "iac",
                            "cdk", "pricing", "cloudbase", "serverless", "cloudflare", "kv"],
        "Hosting & Deployment": ["hosting", "deploy", "deployment", "domain", "dns", "website",
                                 "static site", "vercel", "netlify", "hostinger", "coolify",
                                 "dokploy", "vps", "ssl", "server resource"],
        "Containers & Orchestration": ["docker", "container", "kubernetes", "k8s", "kubectl",
                                       "pod", "cluster", "helm", "argocd", "eks", "gke", "aks",
                                       "manifest", "namespace", "gitops"],
        "File Systems": ["filesystem", "file system", "directory", "read_file", "write_file",
                         "folder", "file", "path"],
        "Monitoring & Logging": ["monitoring", "monitor", "metric", "alert", "log", "logging",
                                 "uptime", "incident", "observability", "datadog", "grafana",
                                 "prometheus", "cloudwatch", "trace", "sentry", "rollbar",
                                 "error tracking", "exception", "occurrence", "crash"],
        "Shell & Processes": ["shell", "terminal", "command", "process", "ssh", "desktop",
                              "computer use", "run_command"],
    },
    "Data & Databases": {
        "SQL Databases": ["sql", "sqlite", "postgres", "postgresql", "postgrest", "pg", "mysql",
                          "query", "table", "schema", "database", "db", "supabase",
                          "clickhouse", "redshift", "airtable", "record", "column"],
        "Spreadsheets": ["spreadsheet", "sheet", "excel", "csv", "cell", "workbook",
                         "worksheet"],
        "Analytics & Warehouses": ["analytics", "warehouse", "bigquery", "snowflake",
                                   "dashboard", "dataset", "metabase", "google analytics",
                                   "report", "dimension", "clarity", "session recording"],
        "NoSQL & Vector Stores": ["mongodb", "mongo", "redis", "vector", "embedding",
                                  "elasticsearch", "opensearch", "document store", "nosql",
                                  "cosmos", "cosmosdb", "neo4j", "cypher", "graph database",
                                  "pinecone", "index", "shard", "mapping", "memcached", "cache",
                                  "collection", "aggregate"],
    },
    "Web & Search": {
        "Web Search": ["search engine", "web search", "brave", "google search", "bing", "serp",
                       "search results", "duckduckgo", "ddg", "serper", "searxng", "tavily",
                       "exa", "perplexity", "jina"],
        "Web Fetching & Scraping": ["fetch", "url", "scrape", "scraping", "html", "webpage",
                                    "web page", "crawl", "robots", "firecrawl", "extract"],
        "Browser Automation": ["browser", "playwright", "puppeteer", "selenium", "click",
                               "navigate", "screenshot", "hover", "fill form", "chrome",
                               "firefox", "tab"],
    },
    "Knowledge & Memory": {
        "Knowledge Graphs": ["knowledge graph", "entity", "relation", "observation",
                             "ontology", "triple"],
        "Memory Stores": ["memory", "remember", "recall", "memory bank"],
        "Wikis & Documentation": ["wiki", "wikipedia", "confluence", "notion",
                                  "knowledge base", "article", "encyclopedia"],
    },
    "Document & Design": {
        "Documents & PDFs": ["pdf", "document", "docx", "word", "ocr", "template", "markdown",
                             "markitdown", "convert to markdown"],
        "Design & Graphics": ["design", "figma", "canvas", "svg", "graphic", "layer", "sketch",
                              "illustration", "icon", "diagram", "drawio", "mermaid",
                              "flowchart", "shape", "mastergo", "dsl", "chart",
                              "visualization"],
        "Presentations": ["slide", "presentation", "powerpoint", "deck"],
    },
    "Communication & Messaging": {
        "Email": ["email", "mail", "inbox", "gmail", "smtp", "imap", "draft", "resend"],
        "Chat & Messaging": ["slack", "chat", "message", "channel", "discord", "telegram",
                             "whatsapp", "sms", "chatwork", "teams", "line bot", "room",
                             "broadcast"],
        "Video & Voice": ["zoom", "video call", "voice", "call", "webinar"],
    },
    "Social Media & Community": {
        "Social Networks": ["twitter", "tweet", "post", "follower", "like", "social",
                            "instagram", "linkedin", "mastodon", "bluesky"],
        "Forums & Communities": ["forum", "reddit", "subreddit", "community", "thread",
                                 "upvote", "discourse", "topic"],
    },
    "Travel & Transportation": {
        "Flights & Hotels": ["flight", "airline", "airport", "hotel", "booking", "reservation",
                             "itinerary", "trip", "airbnb", "accommodation", "travel",
                             "attraction", "flightradar", "variflight"],
        "Maps & Navigation": ["map", "geocode", "geocoding", "direction", "route", "location",
                              "place", "distance", "mapbox", "amap", "waypoint", "geo"],
        "Ride & Transit": ["ride", "taxi", "uber", "transit", "train", "bus", "vehicle",
                           "driver"],
    },
    "E-commerce & Retail": {
        "Online Stores": ["shop", "store", "product", "catalog", "shopify", "cart",
                          "checkout cart", "sku"],
        "Orders & Inventory": ["order", "inventory", "stock", "warehouse", "shipment",
                               "shipping", "fulfillment"],
        "Marketplaces & Reviews": ["marketplace", "seller", "review", "rating", "coupon"],
    },
    "Health & Medical": {
        "Clinics & Appointments": ["clinic", "patient", "doctor", "appointment", "physician",
                                   "hospital"],
        "Medical Records": ["medical", "prescription", "diagnosis", "medication", "ehr", "fhir",
                            "lab result"],
        "Fitness & Wellness": ["fitness", "workout", "exercise", "nutrition", "sleep", "steps",
                               "wellness", "meditation", "routine", "hevy"],
    },
    "Finance & Payments": {
        "Payments": ["payment", "stripe", "invoice", "refund", "charge", "checkout session",
                     "billing", "subscription"],
        "Banking & Accounting": ["bank", "account", "transaction", "ledger", "accounting",
                                 "expense", "budget", "xero", "credit note", "journal",
                                 "quickbooks"],
        "Trading & Crypto": ["stock", "trading", "crypto", "bitcoin", "wallet", "exchange rate",
                             "portfolio", "currency", "ccxt", "ticker", "orderbook", "ohlcv",
                             "exchange"],
    },
    "Business & CRM": {
        "CRM & Sales": ["crm", "lead", "deal", "salesforce", "hubspot", "attio",
                        "pipeline stage", "contact", "customer", "company"],
        "HR & Recruiting": ["employee", "hr", "payroll", "candidate", "recruiting", "job",
                            "leave"],
        "Customer Support": ["support", "helpdesk", "zendesk", "support ticket", "sla"],
    },
    "Education": {
        "Courses & Learning": ["course", "lesson", "student", "teacher", "enrollment", "quiz",
                               "grade", "classroom", "learning", "workshop", "tutorial"],
        "Research & Papers": ["paper", "arxiv", "citation", "research", "scholar", "journal",
                              "pubmed", "zotero", "abstract", "literature", "mesh"],
        "Language Learning": ["vocabulary", "flashcard", "translation", "dictionary"],
        "Libraries & Reading": ["library", "librarian", "lending", "book", "isbn", "loan",
                                "borrow", "catalogue"],
    },
    "Entertainment & Events": {
        "Events & Ticketing": ["ticket", "concert", "venue", "festival", "ticketing", "seat"],
        "Music & Video": ["music", "song", "playlist", "spotify", "album", "movie", "video",
                          "youtube", "podcast", "transcript"],
        "Games": ["game", "player", "steam", "chess", "score", "roblox"],
    },
    "Media & Content": {
        "News": ["news", "headline", "rss", "feed"],
        "Images & Video Generation": ["image", "photo", "generate image", "thumbnail",
                                      "transcode"],
        "Blogs & CMS": ["blog", "cms", "wordpress", "publish", "content management"],
    },
    "AI & Machine Learning": {
        "Models & Inference": ["model", "inference", "llm", "prompt", "completion",
                               "huggingface", "openai", "deepseek", "gemini", "ai", "zai",
                               "replicate", "prediction", "vision", "fim"],
        "Agents & Reasoning": ["agent", "sequential thinking", "reasoning", "plan", "thought",
                               "brainstorm"],
    },
    "Security & Identity": {
        "Authentication & Access": ["auth", "login", "oauth", "password", "sso",
                                    "permission", "role", "token"],
        "Secrets & Vulnerabilities": ["secret", "vault", "vulnerability", "cve", "scan",
                                      "security"],
    },
    "Smart Home & IoT": {
        "Devices & Automation": ["device", "iot", "sensor", "thermostat", "light",
                                 "home assistant", "smart home"],
        "Energy": ["energy", "solar", "battery", "electricity", "meter"],
    },
    "Weather & Environment": {
        "Weather": ["weather", "forecast", "temperature", "rain", "wind", "climate",
                    "meteo", "air quality"],
        "Earth & Space": ["earthquake", "satellite", "nasa", "astronomy", "elevation"],
    },
    "Food & Lifestyle": {
        "Recipes & Restaurants": ["recipe", "ingredient", "restaurant", "menu", "meal", "food",
                                  "cooking", "cook"],
        "Real Estate & Home": ["property", "listing", "rent", "tenant", "lease", "real estate"],
    },
}
L1_LABELS: tuple[str, ...] = tuple(CATEGORIES)

# Evidence weights: the server's own name says most about its domain, then its title/summary,
# then its tool names, then the free-text descriptions (which mention incidental words).
_W_NAME, _W_NAME_PART, _W_ABOUT, _W_TOOLS, _W_DESCS = 6.0, 3.0, 2.0, 3.0, 1.0
# Below this the evidence is only incidental description words: say "Uncategorized".
_MIN_SCORE = 2.0


def _norm_words(text: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def _stem(word: str) -> str:
    """Fold plurals so that "tasks" matches "task" (kept short words such as "news" intact)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _tokens(text: str) -> str:
    return " " + " ".join(_stem(w) for w in _norm_words(text)) + " "


# keyword needles (" word " / " two words "), precomputed once, deduplicated per L2
_NEEDLES: list[tuple[str, str, tuple[str, ...]]] = [
    (l1, l2, tuple(dict.fromkeys(_tokens(kw) for kw in kws)))
    for l1, subs in CATEGORIES.items() for l2, kws in subs.items()
]


def _theme_fields(item: SourceDocument | Theme) -> tuple[str, list[str], list[str], str]:
    """(name, tool names, descriptions, title/description text) of a doc or a theme."""
    if isinstance(item, SourceDocument):
        tools = [t.name for t in item.tools]
        descs = [t.description for t in item.tools] + list(item.features)
        descs += [f"{e.name} {' '.join(e.fields)} {e.description}" for e in item.entities]
        return item.name, tools, descs, f"{item.title} {item.description}"
    tools, descs = [], []
    for raw in item.raw_descriptions:
        head, sep, rest = raw.partition(":")
        if sep and re.fullmatch(r"[A-Za-z_][\w./{}-]{0,80}|(GET|POST|PUT|PATCH|DELETE) /\S*",
                                head.strip()):
            tools.append(head.strip())
            descs.append(rest)
        else:
            descs.append(raw)
    return item.name, tools, descs, item.description


class _Group:
    """Tool names or descriptions of one theme, indexed by word for fast keyword look-up."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = [_tokens(t) for t in texts if t.strip()]
        self.word_count: dict[str, int] = {}
        for t in self.texts:
            for w in set(t.split()):
                self.word_count[w] = self.word_count.get(w, 0) + 1
        self.saturation = math.sqrt(len(self.texts)) if self.texts else 1.0

    def share(self, needle: str) -> float:
        """How many texts carry the keyword, saturating at sqrt(n) of them so that one
        incidental mention among forty tools counts little."""
        word = needle.strip()
        if " " in word:
            hits = sum(needle in t for t in self.texts)
        else:
            hits = self.word_count.get(word, 0)
        return min(1.0, hits / self.saturation)


def _score(item: SourceDocument | Theme) -> list[tuple[float, str, str]]:
    """(score, L1, L2) of every L2 with evidence, best first."""
    name, tools, descs, about = _theme_fields(item)
    name_text, about_text = _tokens(name), _tokens(about)
    # compound names ("hugeicons", "cloudwatch"): a keyword that begins or ends a name word
    name_words = [w for w in name_text.split() if len(w) > 4]
    tool_group, desc_group = _Group(tools), _Group(descs)
    scored = []
    for l1, l2, needles in _NEEDLES:
        s = 0.0
        for needle in needles:
            bonus = 1.5 if needle.count(" ") > 2 else 1.0  # phrases are more specific
            if needle in name_text:
                e = _W_NAME
            else:
                word = needle.strip()
                part = bonus == 1.0 and len(word) >= 4 and any(
                    w != word and (w.startswith(word) or w.endswith(word)) for w in name_words)
                e = _W_NAME_PART if part else 0.0
            e += _W_ABOUT * (needle in about_text)
            e += _W_TOOLS * tool_group.share(needle)
            e += _W_DESCS * desc_group.share(needle)
            s += e * bonus
        if s > 0:
            scored.append((s, l1, l2))
    scored.sort(key=lambda x: -x[0])
    return scored


def classify_offline(item: SourceDocument | Theme) -> TaxonomyPath:
    """Keyword placement: the L1 with the most evidence over its L2s, its best L2; too little
    evidence (a few incidental description words) gives "Uncategorized / General"."""
    scored = _score(item)
    l3 = item.name
    totals: dict[str, float] = {}
    for s, l1, _ in scored:
        totals[l1] = totals.get(l1, 0.0) + s
    if not scored or max(totals.values()) < _MIN_SCORE:
        return TaxonomyPath(l1=UNCATEGORIZED[0], l2=UNCATEGORIZED[1], l3=l3)
    l1 = max(totals, key=lambda k: totals[k])  # ties: the earlier category, deterministically
    l2 = next(l2 for _, c, l2 in scored if c == l1)
    return TaxonomyPath(l1=l1, l2=l2, l3=l3)


class TaxonomyChoice(BaseModel):
    """What the LLM answers when it classifies a theme."""

    l1: str = Field(description="one of the L1 categories listed")
    l2: str = Field(description="one of that category's L2 labels, or a short new label")
    reason: str = ""


def _llm_classify(model: Any, item: SourceDocument | Theme) -> TaxonomyPath | None:
    name, tools, descs, about = _theme_fields(item)
    labels = "\n".join(f"- {l1}: {', '.join(subs)}" for l1, subs in CATEGORIES.items())
    prompt = (
        "Classify this tool ecosystem into the taxonomy below. Answer only with JSON "
        '{"l1": ..., "l2": ..., "reason": ...}; l1 must be one of the listed categories.\n\n'
        f"Categories (L1: L2 labels):\n{labels}\n\nName: {name}\nAbout: {about}\n"
        f"Tools: {', '.join(tools[:40])}\nDescriptions:\n" + "\n".join(d[:200] for d in descs[:20])
    )
    try:
        msg = model.invoke(prompt)
        text = msg.content if isinstance(msg.content, str) else json.dumps(msg.content)
        start, end = text.find("{"), text.rfind("}")
        choice = TaxonomyChoice.model_validate_json(text[start:end + 1])
    except Exception as exc:  # any model or parse failure: keyword rules decide
        log.info("taxonomy: LLM classification failed for %s (%s); using keyword rules",
                 name, exc)
        return None
    if choice.l1 not in CATEGORIES or not choice.l2.strip():
        return None
    return TaxonomyPath(l1=choice.l1, l2=choice.l2.strip()[:60], l3=name)


def classify(doc_or_theme: SourceDocument | Theme, *, use_llm: bool = True) -> TaxonomyPath:
    """L1/L2/L3 path of a source document or a theme (LLM when configured, else keywords)."""
    if use_llm:
        model = chat_model("miner")
        if model is not None:
            path = _llm_classify(model, doc_or_theme)
            if path is not None:
                return path
    return classify_offline(doc_or_theme)


# ============================================================================================
# Tree
# ============================================================================================


class Taxonomy(BaseModel):
    """Themes grouped L1 -> L2 -> [theme names (L3)]."""

    tree: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    themes: list[Theme] = Field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {l1: sum(len(v) for v in subs.values()) for l1, subs in self.tree.items()}

    def paths(self) -> list[tuple[str, str, str]]:
        return [(l1, l2, l3) for l1, subs in self.tree.items() for l2, names in subs.items()
                for l3 in names]

    def theme(self, name: str) -> Theme:
        for t in self.themes:
            if t.name == name:
                return t
        raise KeyError(name)

    def render(self) -> str:
        lines = []
        for l1, subs in self.tree.items():
            lines.append(f"{l1} ({sum(len(v) for v in subs.values())})")
            for l2, names in subs.items():
                lines.append(f"  {l2}: {', '.join(names)}")
        return "\n".join(lines)


def build_taxonomy(themes: Iterable[Theme], *, reclassify: bool = False) -> Taxonomy:
    """Group themes into the L1 -> L2 -> L3 tree. A theme still 'Uncategorized' (or every
    theme, with reclassify=True) is classified first; L3 is the theme name."""
    placed: list[Theme] = []
    tree: dict[str, dict[str, list[str]]] = {}
    for theme in themes:
        t = theme.model_copy(deep=True)
        if reclassify or t.taxonomy.l1 == UNCATEGORIZED[0]:
            t.taxonomy = classify(t)
        t.taxonomy = TaxonomyPath(l1=t.taxonomy.l1, l2=t.taxonomy.l2, l3=t.name)
        placed.append(t)
        names = tree.setdefault(t.taxonomy.l1, {}).setdefault(t.taxonomy.l2, [])
        if t.name not in names:
            names.append(t.name)
    order = {l1: i for i, l1 in enumerate((*L1_LABELS, UNCATEGORIZED[0]))}
    tree = {l1: dict(sorted(subs.items())) for l1, subs in
            sorted(tree.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))}
    for subs in tree.values():
        for l2 in subs:
            subs[l2] = sorted(subs[l2])
    return Taxonomy(tree=tree, themes=placed)


# ============================================================================================
# Near-duplicate merging
# ============================================================================================

_NAME_NOISE = {"mcp", "server", "servers", "api", "service", "tool", "tools", "the", "official",
               "py", "python", "js", "node", "ts", "v1", "v2", "app", "openapi", "spec", "prd"}
_STOP = {"a", "an", "the", "and", "or", "of", "to", "for", "in", "on", "with", "by", "is",
         "are", "be", "this", "that", "it", "its", "from", "as", "at", "use", "get", "list"}


def normalized_name(name: str) -> str:
    return "".join(w for w in _norm_words(name) if w not in _NAME_NOISE) or name.lower()


def _signature(theme: Theme) -> tuple[set[str], set[str]]:
    name, tools, descs, about = _theme_fields(theme)
    tool_set = {t.lower() for t in tools}
    words = {w for w in _norm_words(f"{name} {about}") if w not in _STOP and w not in
             _NAME_NOISE and len(w) > 2}
    return tool_set, words


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def similarity(a: Theme, b: Theme) -> float:
    """1.0 for equal normalised names; else Jaccard of tool names (weight 0.75) and of
    name/description words (0.25) when both have tools, else of the words alone."""
    if normalized_name(a.name) == normalized_name(b.name):
        return 1.0
    ta, wa = _signature(a)
    tb, wb = _signature(b)
    if ta and tb:
        return 0.75 * _jaccard(ta, tb) + 0.25 * _jaccard(wa, wb)
    return _jaccard(wa | ta, wb | tb)


def merge_near_duplicates(themes: Iterable[Theme], threshold: float = 0.7
                          ) -> tuple[list[Theme], list[tuple[str, str, float]]]:
    """Keep the first of each group of near-duplicate themes (similarity >= threshold).

    The kept theme absorbs the merged one's raw descriptions (deduplicated) and, when its own
    is empty, its description. Returns (kept themes, [(kept name, merged name, similarity)]);
    `len(merged_pairs)` is how many themes were merged away. Inputs are not modified.
    """
    kept: list[Theme] = []
    merged: list[tuple[str, str, float]] = []
    for theme in themes:
        best, best_sim = None, 0.0
        for k in kept:
            sim = similarity(k, theme)
            if sim > best_sim:
                best, best_sim = k, sim
        if best is not None and best_sim >= threshold:
            best.raw_descriptions = list(dict.fromkeys([*best.raw_descriptions,
                                                        *theme.raw_descriptions]))
            if not best.description:
                best.description = theme.description
            merged.append((best.name, theme.name, round(best_sim, 3)))
            continue
        kept.append(theme.model_copy(deep=True))
    if merged:
        log.info("taxonomy: merged %d near-duplicate theme(s)", len(merged))
    return kept, merged
